// End to end, as root: route resilience through the real custom Caddy (bin/caddy) and a real
// WireGuard tunnel. The sidecar runs in the host namespace with GATEHOUSE_WG_MANAGE=true and
// GATEHOUSE_MANAGE_CADDY=true, Caddy listening on the server's tunnel address; the backends run in
// a peer namespace behind that peer's WireGuard tunnel, so every request Caddy proxies and every
// uptime check crosses the tunnel. Backends are netns.ts HTTP servers steered through POST /__ctl
// (fail with a status, answer a queue of statuses, delay) and counting what reaches them.
// - circuit breaker: opens after `threshold` failures (then 503 + Retry-After, the backend is not
//   touched); the state is in GET /routes/:id; it survives a restart of Caddy (killed -9, restarted
//   by the supervisor) and of the whole sidecar (same data directory); a short-timeout route closes
//   by itself after `timeout` once the backend is healthy; reset closes the long one at once;
// - retry: a backend answering 502 once, then 200: the client sees 200 (GET); a POST is not retried;
// - mirroring: the mirror target receives a copy (method, path, body, X-Gatehouse-Mirror) while the
//   client gets the primary's answer, and a mirror that takes 3 s does not slow the primary;
// - bot blocker: an AI-crawler user agent and an exploit path get 403 (backend untouched), a
//   browser passes;
// - uptime monitoring on a 5 s schedule (PUT /settings/monitoring): a stopped backend is marked
//   down, a restarted one up, with activity events and the dashboard counts.
//   cd /work/main && node --import tsx --test test/e2e/resilience.test.ts
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { startTestServer, apiToken, bearer, type TestServer, apiCall } from '../../sidecar/test/lib/server.js';
import { createNetwork, skipReason, type Network, type Server } from '../lib/netns.js';
import { waitFor } from '../lib/wait.js';
import { CADDY, e2eServerEnv } from '../lib/e2e-server.js';
import type { ActivityEntry } from '../../sidecar/test/lib/protocol.js';

const reason = skipReason(['wireguard-go', 'wg', 'ping']) ?? (fs.existsSync(CADDY) ? null : `no ${CADDY}: build it with bash scripts/build-caddy.sh`);
const BROWSER = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36';

interface Res {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
  ms: number;
}

/** One request from the host namespace to addr:port (no keep-alive), with the time it took. */
function send(addr: string, port: number, host: string, p = '/', opts: { method?: string; body?: string; ua?: string; timeoutMs?: number } = {}): Promise<Res> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { host, 'user-agent': opts.ua ?? BROWSER };
    if (opts.body !== undefined) {
      headers['content-type'] = 'text/plain';
      headers['content-length'] = String(Buffer.byteLength(opts.body));
    }
    const req = http.request({ host: addr, port, path: p, method: opts.method ?? 'GET', headers, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body, ms: performance.now() - t0 }));
    });
    req.setTimeout(opts.timeoutMs ?? 15_000, () => req.destroy(new Error(`timeout ${opts.method ?? 'GET'} ${host}${p}`)));
    req.on('error', reject);
    req.end(opts.body);
  });
}

interface Ctl {
  status: number | null;
  delay_ms: number;
  queue: number[];
  hits: number;
  requests: { at: number; method: string; url: string; headers: Record<string, string>; body: string }[];
}

/** Steers / reads a netns.ts HTTP server (POST/GET /__ctl) from the host, through the tunnel. */
async function ctl(srv: Server, set?: Partial<Pick<Ctl, 'status' | 'delay_ms' | 'queue'>> & { reset?: boolean }, timeoutMs?: number): Promise<Ctl> {
  const r = await send(srv.host, srv.port, `${srv.host}:${srv.port}`, '/__ctl', { timeoutMs, ...(set ? { method: 'POST', body: JSON.stringify(set) } : {}) });
  assert.equal(r.status, 200, r.body);
  return JSON.parse(r.body) as Ctl;
}

test('route resilience through the real Caddy and a real WireGuard tunnel', { skip: reason ?? false, timeout: 300_000 }, async (t) => {
  const n = (process.pid % 200) + 20;
  const network: Network = await createNetwork({ prefix: 'resil' });
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-e2e-resilience-'));
  const running: { s?: TestServer } = {};
  t.after(async () => {
    await running.s?.close(); // stops Caddy (by PID) and takes the WireGuard interface down
    await network.cleanup();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });
  const nsA = await network.addNamespace('pa');
  const linkA = await network.link(null, nsA, `10.243.${n}.1/24`, `10.243.${n}.2/24`);
  // Caddy on the server's tunnel address; the same data directory across the sidecar restart
  const base = await e2eServerEnv({ iface: `ghs${process.pid % 1000}`, subnet: `10.244.${n}`, publicHost: linkA.addrA, proxyBind: 'serverIp' });
  const { ports, serverIp } = base;
  const env = { ...base.env, GATEHOUSE_DATA_DIR: dataDir };
  // listen: Caddy's breaker reports go to the sidecar at 127.0.0.1:GATEHOUSE_PORT
  const start = async () => (running.s = await startTestServer(env, { startFeatures: true, listen: true }));
  let s = await start();
  const h = bearer(await apiToken(s));
  const api = apiCall(
    () => s,
    () => h,
  );
  assert.equal((await s.req('/health')).data.checks!.proxy.ok, true);

  // ---- one peer (namespace A) with the backends behind its tunnel
  const peer = (await api('/peers', 'POST', { name: 'e2e-resilience' })).data.peer;
  await network.bringUpPeer(nsA, network.ifName('a'), (await api(`/peers/${peer.id}/config`)).data as string);
  await waitFor(async () => (await network.ping(nsA, serverIp, { count: 1, timeoutS: 1 })).ok, 20_000, { what: 'the tunnel' });
  const ipA = peer.address.split('/')[0];
  const app = await network.startHttpServer(nsA, ipA, 8080, { name: 'app' });
  const mirror = await network.startHttpServer(nsA, ipA, 8081, { name: 'mirror' });
  let mon = await network.startHttpServer(nsA, ipA, 8082, { name: 'monitored' });
  const visit = (domain: string, p = '/', opts: { method?: string; body?: string; ua?: string } = {}) => send(serverIp, ports.http, domain, p, opts);
  const route = async (body: Record<string, unknown>, port = 8080) => {
    const r = await api('/routes', 'POST', { peer_id: peer.id, target_port: port, ...body });
    assert.equal(r.status, 201, JSON.stringify(r.data));
    return r.data.route;
  };
  const cbState = async (id: number) => {
    const r = (await api(`/routes/${id}`)).data.route;
    return { count: r.cb_failure_count as number, opened: r.cb_opened_at as number | null };
  };

  const cb = await route({ domain: 'cb.test', circuit_breaker_enabled: true, circuit_breaker_threshold: 3, circuit_breaker_timeout: 600 });
  const cbt = await route({ domain: 'cbt.test', circuit_breaker_enabled: true, circuit_breaker_threshold: 2, circuit_breaker_timeout: 3 });
  const retry = await route({ domain: 'retry.test', retry_enabled: true, retry_count: 2, retry_status_codes: '502,503' });
  await route({ domain: 'mirror.test', mirror_enabled: true, mirror_targets: [{ peer_id: peer.id, port: 8081 }] });
  await route({ domain: 'plain.test' });
  await route({ domain: 'bots.test', bot_blocker_enabled: true, bot_blocker_mode: 'block' });
  const monitored = await route({ domain: 'mon.test', monitoring_enabled: true }, 8082);
  for (const d of ['cb.test', 'retry.test', 'plain.test', 'bots.test']) assert.equal((await visit(d)).status, 200, `${d} answers through Caddy and the tunnel`);

  await t.test('bot blocker: crawler and exploit path 403 without reaching the backend, a browser passes', async () => {
    const before = (await ctl(app)).hits;
    const bot = await visit('bots.test', '/', { ua: 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)' });
    assert.equal(bot.status, 403, bot.body);
    assert.equal((await visit('bots.test', '/.env')).status, 403, 'exploit path');
    assert.equal((await visit('bots.test', '/', { ua: 'sqlmap/1.7.2#stable (https://sqlmap.org)' })).status, 403);
    assert.equal((await ctl(app)).hits, before, 'blocked requests never reach the backend');
    const ok = await visit('bots.test', '/page');
    assert.equal(ok.status, 200);
    assert.equal(JSON.parse(ok.body).url, '/page');
    assert.equal((await ctl(app)).hits, before + 1);
  });

  await t.test('retry: 502 once then 200 is retried for GET; POST is not retried', async () => {
    await ctl(app, { queue: [502], reset: true });
    const r = await visit('retry.test', '/item');
    assert.equal(r.status, 200, r.body);
    const seen = await ctl(app);
    assert.equal(seen.hits, 2, 'one failed attempt and one retry');
    assert.deepEqual(
      seen.requests.map((x) => `${x.method} ${x.url}`),
      ['GET /item', 'GET /item'],
    );
    await ctl(app, { queue: [502], reset: true });
    assert.equal((await visit('retry.test', '/item', { method: 'POST', body: 'x=1' })).status, 502, 'a POST is never replayed');
    assert.equal((await ctl(app)).hits, 1);
  });

  await t.test('mirroring: the target gets a copy, the client the primary answer, a slow mirror does not slow the primary', async () => {
    await ctl(app, { reset: true });
    await ctl(mirror, { reset: true });
    const r = await visit('mirror.test', '/orders?id=7', { method: 'POST', body: '{"qty":3}' });
    assert.equal(r.status, 200, r.body);
    assert.equal(JSON.parse(r.body).server, 'app', 'the client gets the primary answer');
    await waitFor(async () => (await ctl(mirror)).hits === 1, 5000, { what: 'the mirrored copy' });
    const copy = (await ctl(mirror)).requests[0];
    assert.equal(copy.method, 'POST');
    assert.equal(copy.url, '/orders?id=7');
    assert.equal(copy.body, '{"qty":3}');
    assert.equal(copy.headers['x-gatehouse-mirror'], '1');
    assert.equal(copy.headers.host, 'mirror.test');

    // The mirror now takes 3 s per answer: primary latency stays that of a plain route.
    await ctl(mirror, { delay_ms: 3000, reset: true });
    const timed = async (domain: string) => {
      const ms: number[] = [];
      for (let i = 0; i < 8; i++) {
        const x = await visit(domain, `/slow-mirror-${i}`);
        assert.equal(x.status, 200);
        ms.push(x.ms);
      }
      return ms.sort((a, b) => a - b);
    };
    const plain = await timed('plain.test');
    const mirrored = await timed('mirror.test');
    t.diagnostic(
      `primary latency, ms (sorted): plain ${plain.map((x) => x.toFixed(1)).join(' ')}; with a 3 s mirror ${mirrored.map((x) => x.toFixed(1)).join(' ')}`,
    );
    assert.ok(mirrored.at(-1)! < 1000, `no primary request waited for the mirror (slowest ${mirrored.at(-1)!.toFixed(0)} ms)`);
    assert.ok(mirrored[3] < plain[3] + 100, `median ${mirrored[3].toFixed(1)} ms vs plain ${plain[3].toFixed(1)} ms`);
    await waitFor(async () => (await ctl(mirror)).hits === 8, 10_000, { what: 'the slow mirror receiving every copy' });
    await ctl(mirror, { delay_ms: 0 });
  });

  await t.test('circuit breaker: opens after threshold failures, 503 without touching the backend, state in GET /routes/:id', async () => {
    await ctl(app, { status: 500, reset: true });
    for (let i = 0; i < 3; i++) assert.equal((await visit('cb.test')).status, 500);
    for (let i = 0; i < 2; i++) assert.equal((await visit('cbt.test')).status, 500);
    assert.equal((await ctl(app)).hits, 5);
    for (const d of ['cb.test', 'cbt.test']) {
      const open = await visit(d);
      assert.equal(open.status, 503, `${d}: ${open.body}`);
      assert.ok(Number(open.headers['retry-after']) >= 1, 'Retry-After');
      assert.match(open.body, /circuit breaker open/i);
    }
    assert.equal((await ctl(app)).hits, 5, 'the backend is not touched while open');
    await waitFor(async () => (await cbState(cb.id)).opened !== null && (await cbState(cbt.id)).opened !== null, 5000, { what: 'the open reports' });
    const st = await cbState(cb.id);
    assert.equal(st.count, 3);
    assert.ok(st.opened! > Date.now() - 60_000 && st.opened! <= Date.now());
    const events = (await api('/logs/activity?source=routes&limit=100')).data.entries
      .filter((e: ActivityEntry) => e.event_type === 'circuit_breaker_open')
      .map((e: ActivityEntry) => e.details!.route_id);
    assert.deepEqual(events.sort(), [cb.id, cbt.id].sort());
  });

  await t.test('circuit breaker: after its timeout a healthy backend closes the breaker (half-open trial)', async () => {
    await ctl(app, { status: null, reset: true });
    const openedAt = (await cbState(cbt.id)).opened!;
    if (Date.now() < openedAt + 2500) assert.equal((await visit('cbt.test')).status, 503, 'still open before the timeout, although the backend is healthy');
    await new Promise((r) => setTimeout(r, Math.max(0, openedAt + 3100 - Date.now()))); // not a condition: the breaker's 3 s timeout passes
    const trial = await visit('cbt.test');
    assert.equal(trial.status, 200, trial.body);
    assert.equal((await visit('cbt.test')).status, 200);
    await waitFor(async () => (await cbState(cbt.id)).opened === null, 5000, { what: 'the closed report' });
    assert.equal((await cbState(cbt.id)).count, 0);
    const closed = (await api('/logs/activity?source=routes&limit=100')).data.entries.find((e: ActivityEntry) => e.event_type === 'circuit_breaker_closed');
    assert.equal(closed?.details?.route_id, cbt.id);
    assert.equal((await visit('cb.test')).status, 503, 'the other breaker (timeout 600 s) is still open');
  });

  await t.test('circuit breaker: the open state survives a restart of Caddy', async () => {
    const before = (await api('/caddy/status')).data;
    assert.equal(before.running, true);
    process.kill(before.pid!, 'SIGKILL');
    await waitFor(
      async () => {
        const st = (await api('/caddy/status')).data;
        return st.running && st.pid !== before.pid && st.loads > before.loads && st.last_error === null;
      },
      30_000,
      { what: 'the supervisor to restart Caddy and load the configuration' },
    );
    await waitFor(async () => (await visit('plain.test')).status === 200, 10_000, { what: 'Caddy answering again' });
    const hits = (await ctl(app)).hits;
    const r = await visit('cb.test');
    assert.equal(r.status, 503, `still open after the Caddy restart: ${r.body}`);
    assert.equal((await ctl(app)).hits, hits, 'the backend is not touched');
    assert.equal((await cbState(cb.id)).count, 3);
  });

  await t.test('circuit breaker: the open state survives a restart of the sidecar; reset closes it at once', async () => {
    const opened = (await cbState(cb.id)).opened;
    const t0 = Date.now();
    await s.close(); // Caddy and the WireGuard interface go down with it
    const t1 = Date.now();
    s = await start();
    assert.equal((await s.req('/health')).data.checks!.proxy.ok, true);
    const t2 = Date.now();
    // The new interface knows the peer's last endpoint (stored by the final poll at stop), so the
    // server's own traffic to the backend starts a handshake at once: no waiting for the peer to
    // give up on its old session (~15 s) or for its keepalive.
    await waitFor(async () => (await ctl(app, undefined, 1000).catch(() => null)) !== null, 5000, { intervalMs: 100, what: 'the tunnel after the restart' });
    const back = Date.now() - t2;
    t.diagnostic(`sidecar restart: stop ${t1 - t0} ms, start ${t2 - t1} ms, tunnel back ${back} ms after the start`);
    assert.ok(back < 5000);
    await waitFor(async () => (await visit('plain.test')).status === 200, 10_000, { what: 'Caddy answering again' });
    const hits = (await ctl(app)).hits;
    const r = await visit('cb.test');
    assert.equal(r.status, 503, `still open after the sidecar restart: ${r.body}`);
    assert.equal((await ctl(app)).hits, hits, 'the backend is not touched');
    assert.deepEqual(await cbState(cb.id), { count: 3, opened });

    const reset = await api(`/routes/${cb.id}/circuit-breaker/reset`, 'POST', {});
    assert.equal(reset.status, 200, JSON.stringify(reset.data));
    assert.equal((await visit('cb.test')).status, 200, 'closed at once');
    assert.equal((await ctl(app)).hits, hits + 1);
    assert.deepEqual(await cbState(cb.id), { count: 0, opened: null });
    assert.equal((await api(`/routes/${retry.id}/circuit-breaker/reset`, 'POST', {})).status, 409, 'no breaker on that route (the stored state refuses it)');
  });

  await t.test('uptime monitoring on a 5 s schedule: a stopped backend goes down, a restarted one up', async () => {
    const put = await api('/settings/monitoring', 'PUT', { interval_seconds: 5 });
    assert.equal(put.status, 200, JSON.stringify(put.data));
    const latest = async () =>
      (await api(`/routes/${monitored.id}/checks?limit=1`)).data.checks[0] as
        { up: boolean; status: number | null; response_ms: number | null; checked_at: string } | undefined;
    const t0 = Date.now();
    await waitFor(async () => (await latest())?.up === true, 15_000, { what: 'a scheduled check marking the backend up' });
    const firstAfter = Date.now() - t0;
    const up = (await latest())!;
    assert.equal(up.status, 200);
    assert.ok(
      typeof up.response_ms === 'number' && up.response_ms >= 0 && up.response_ms < 10_000,
      `an up check has its response time, got ${JSON.stringify(up.response_ms)}`,
    );
    const seenByBackend = (await ctl(mon)).requests.at(-1)!;
    assert.equal(seenByBackend.headers.host, 'mon.test', 'the check carries the route Host');
    assert.equal(seenByBackend.headers['x-forwarded-for'], undefined, 'straight to the backend, not through Caddy');

    await mon.stop();
    const stoppedAt = Date.now();
    await waitFor(async () => (await latest())?.up === false, 15_000, { what: 'a scheduled check marking the stopped backend down' });
    const downAfter = Date.now() - stoppedAt;
    const stats = (await api('/dashboard/stats')).data;
    assert.deepEqual(stats.monitoring, { total: 1, up: 0, down: 1 });

    mon = await network.startHttpServer(nsA, ipA, 8082, { name: 'monitored' });
    const restartedAt = Date.now();
    await waitFor(async () => (await latest())?.up === true, 15_000, { what: 'a scheduled check marking the restarted backend up' });
    const upAfter = Date.now() - restartedAt;
    assert.deepEqual((await api('/dashboard/stats')).data.monitoring, { total: 1, up: 1, down: 0 });
    const events = (await api('/logs/activity?source=monitoring&limit=20')).data.entries
      .filter((e: ActivityEntry) => e.details?.route_id === monitored.id)
      .map((e: ActivityEntry) => e.event_type);
    assert.deepEqual(events.slice(0, 2), ['route_up', 'route_down'], 'newest first: down when stopped, up when back');
    t.diagnostic(
      `monitoring: first check ${firstAfter} ms after the change; down seen ${downAfter} ms after the stop, up ${upAfter} ms after the restart (interval 5 s)`,
    );
    const now = await api(`/routes/${monitored.id}/check`, 'POST', {});
    assert.equal(now.status, 200);
    assert.equal(now.data.check.up, true);
  });
});
