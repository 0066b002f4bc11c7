// End to end, as root: a real Prometheus (Debian's /usr/bin/prometheus, its own temporary config and
// data directory, on loopback ports) scrapes the sidecar's GET /metrics, once with a bearer token
// (scope system) and once with ?token= (scope read-only). Two peers come up through real WireGuard
// tunnels from network namespaces; requests go through the real custom Caddy to a peer's web server.
// PromQL through Prometheus' HTTP API must then give the number of online peers and the route's
// request count; the proxy apply histogram and Caddy's metrics are there too. The same /metrics
// through the admin domain (Caddy, HTTPS) leaves no token in Caddy's access log.
//   node --import tsx --test test/e2e/metrics-prometheus.test.ts
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { apiToken } from '../../sidecar/test/lib/server.js';
import { accessLogFile } from '../../sidecar/src/proxy/fragments/access-log.js';
import { skipReason, type Network } from '../lib/netns.js';
import { waitFor } from '../lib/wait.js';
import { freePort } from '../lib/ports.js';
import { CADDY, startE2e, tunnelPeers } from '../lib/e2e-server.js';

const PROMETHEUS = '/usr/bin/prometheus';
const reason =
  skipReason(['wireguard-go', 'wg', 'ping', 'curl']) ??
  (fs.existsSync(CADDY) ? null : `no ${CADDY}: build it with bash scripts/build-caddy.sh`) ??
  (fs.existsSync(PROMETHEUS) ? null : `no ${PROMETHEUS}: apt-get install prometheus`);

async function curl(n: Network, url: string, extra: string[] = []): Promise<{ status: number; body: string } | null> {
  const u = new URL(url);
  const port = u.port || (u.protocol === 'https:' ? '443' : '80');
  const r = await n.exec(null, 'curl', ['-s', '-k', '--max-time', '3', '--resolve', `${u.hostname}:${port}:127.0.0.1`, '-w', '\n%{http_code}', ...extra, url], {
    timeoutMs: 8000,
  });
  if (r.code !== 0) return null;
  const i = r.stdout.lastIndexOf('\n');
  return { status: Number(r.stdout.slice(i + 1)), body: r.stdout.slice(0, i) };
}

test('a real Prometheus scrapes /metrics: online peers and a route request count through PromQL', { skip: reason ?? false, timeout: 240_000 }, async (t) => {
  const adminDomain = 'gatehouse.metrics.test';
  const run = await startE2e(t, {
    prefix: 'metrics',
    iface: `ghm${process.pid % 1000}`,
    vpnOctet: 221,
    peers: [
      { name: 'peera', octet: 222 },
      { name: 'peerb', octet: 223 },
    ],
    // no licence: the community edition has prometheus_metrics (/metrics and Caddy's metrics on)
    proxyBind: '127.0.0.1',
    env: { GATEHOUSE_TLS: 'internal', GATEHOUSE_ADMIN_DOMAIN: adminDomain, GATEHOUSE_LICENCE_KEY: '' },
    // on its configured port: Caddy's admin domain proxies to it there
    start: { listen: true },
  });
  const { network, s, api, ports } = run;
  assert.equal((await api('/license')).data.license.status, 'community', 'a server without a licence');
  const peers = await tunnelPeers(run, ['metrics-peer-a', 'metrics-peer-b']);
  const peerIp = peers[0].address.split('/')[0];
  await network.startHttpServer(run.ns[0], peerIp, 8080, { name: 'metrics-web' });
  const domain = 'app.metrics.test';
  const route = await api('/routes', 'POST', { domain, peer_id: peers[0].id, target_port: 8080 });
  assert.equal(route.status, 201, JSON.stringify(route.data));
  const routeId = route.data.route.id as number;
  // the poller reads the interface: both peers have shaken hands
  await s.deps.wireguard.poll();

  // ---- Prometheus: two jobs on the same target, bearer token and ?token=
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-prometheus-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const systemToken = await apiToken(s, ['system']);
  const readOnlyToken = await apiToken(s, ['read-only']);
  fs.writeFileSync(path.join(dir, 'token'), systemToken, { mode: 0o600 });
  const promPort = await freePort('tcp');
  const target = `127.0.0.1:${s.port}`;
  fs.writeFileSync(
    path.join(dir, 'prometheus.yml'),
    [
      'global:',
      '  scrape_interval: 1s',
      '  scrape_timeout: 1s',
      'scrape_configs:',
      '  - job_name: gatehouse',
      '    metrics_path: /metrics',
      '    authorization:',
      '      type: Bearer',
      `      credentials_file: ${path.join(dir, 'token')}`,
      `    static_configs: [{ targets: ['${target}'] }]`,
      '  - job_name: gatehouse-query-token',
      '    metrics_path: /metrics',
      '    params:',
      `      token: ['${readOnlyToken}']`,
      `    static_configs: [{ targets: ['${target}'] }]`,
      '',
    ].join('\n'),
  );
  const prom = network.spawn(
    null,
    PROMETHEUS,
    [
      `--config.file=${path.join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${path.join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${promPort}`,
      '--storage.tsdb.retention.time=1h',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let promLog = '';
  prom.stderr?.on('data', (d: Buffer) => (promLog = (promLog + d.toString()).slice(-4000)));
  const query = async (q: string): Promise<{ metric: Record<string, string>; value: [number, string] }[]> => {
    const r = await fetch(`http://127.0.0.1:${promPort}/api/v1/query?query=${encodeURIComponent(q)}`);
    const j = (await r.json()) as { status: string; data: { result: { metric: Record<string, string>; value: [number, string] }[] } };
    assert.equal(j.status, 'success', JSON.stringify(j));
    return j.data.result;
  };
  const one = async (q: string): Promise<number | null> => {
    try {
      const r = await query(q);
      return r.length === 1 ? Number(r[0].value[1]) : null;
    } catch {
      return null;
    }
  };
  try {
    await waitFor(async () => (await one('up{job="gatehouse"}')) === 1 && (await one('up{job="gatehouse-query-token"}')) === 1, 30_000, {
      what: 'both scrapes up',
    });
  } catch (err) {
    const targets = await fetch(`http://127.0.0.1:${promPort}/api/v1/targets`)
      .then((r) => r.text())
      .catch((e) => String(e));
    throw new Error(`${String(err)}\ntargets: ${targets.slice(0, 1500)}\nprometheus: ${promLog.slice(-1500)}`);
  }

  // ---- online peers through PromQL
  await waitFor(async () => (await one('gatehouse_peers_online{job="gatehouse"}')) === 2, 15_000, { what: 'gatehouse_peers_online = 2' });
  assert.equal(await one('gatehouse_peers_online{job="gatehouse-query-token"}'), 2);
  assert.equal(await one('gatehouse_peers{job="gatehouse"}'), 2);
  assert.equal(await one('gatehouse_wireguard_up{job="gatehouse"}'), 1);
  assert.equal(await one('gatehouse_caddy_metrics_up{job="gatehouse"}'), 1);
  assert.ok((await one('gatehouse_proxy_apply_duration_seconds_count{job="gatehouse",result="ok"}'))! >= 1);

  // ---- traffic through Caddy and the tunnel: the route's request count
  const N = 7;
  for (let i = 0; i < N; i++) {
    const r = await curl(network, `http://${domain}:${ports.http}/n${i}`);
    assert.equal(r?.status, 200, JSON.stringify(r));
  }
  // an unknown host: Caddy's 404, counted for no route
  assert.equal((await curl(network, `http://unknown.metrics.test:${ports.http}/`))?.status, 404);
  const reqQ = `gatehouse_route_requests_total{job="gatehouse",route_id="${routeId}",domain="${domain}"}`;
  try {
    await waitFor(async () => (await one(reqQ)) === N, 15_000, { what: `${reqQ} = ${N}` });
  } catch (err) {
    const caddy = (await network.exec(null, 'curl', ['-s', `http://127.0.0.1:${ports.admin}/metrics`])).stdout;
    const cfg = (await network.exec(null, 'curl', ['-s', `http://127.0.0.1:${ports.admin}/config/apps/http`])).stdout;
    const ours = await s.deps.metrics.scrape();
    throw new Error(
      `${String(err)}\ncaddy: ${caddy
        .split('\n')
        .filter((l) => l.includes('caddy_http_request'))
        .slice(0, 12)
        .join('\n')}\ncfg: ${cfg.slice(0, 600)}\nours: ${ours
        .split('\n')
        .filter((l) => l.includes('route_'))
        .join('\n')}`,
    );
  }
  assert.equal(await one(`sum(gatehouse_route_requests_total{job="gatehouse"})`), N);
  assert.equal(await one(`sum(gatehouse_route_request_duration_seconds_count{job="gatehouse",route_id="${routeId}",code="200"})`), N);
  // bytes through the tunnel after the poller's next read
  await s.deps.wireguard.poll();
  await waitFor(async () => ((await one(`gatehouse_peer_receive_bytes_total{job="gatehouse",peer_id="${peers[0].id}"}`)) ?? 0) > 0, 15_000, {
    what: 'per-peer bytes',
  });

  // ---- /metrics through Caddy's admin domain with ?token=: served, and the token is not in the access log
  const viaCaddy = await curl(network, `https://${adminDomain}:${ports.https}/metrics?token=${encodeURIComponent(readOnlyToken)}`);
  assert.equal(viaCaddy?.status, 200);
  assert.match(viaCaddy!.body, /^gatehouse_peers_online 2$/m);
  const logFile = accessLogFile(s.dataDir);
  await waitFor(() => fs.existsSync(logFile) && fs.readFileSync(logFile, 'utf8').includes('/metrics?token=REDACTED'), 10_000, {
    what: 'the access-log line of /metrics',
  });
  const log = fs.readFileSync(logFile, 'utf8');
  assert.ok(!log.includes(readOnlyToken) && !log.includes(readOnlyToken.slice(4, 24)), 'the token is in the access log');
});
