// Integration: the sidecar supervising the REAL bin/caddy (our custom build) on loopback ports.
// Skipped when bin/caddy is missing (build it with scripts/build-caddy.sh).
//
// Peer addresses: the test uses GATEHOUSE_WG_SUBNET=127.77.<n>.0/24 with GATEHOUSE_WG_MANAGE=false,
// so peers get addresses in 127.0.0.0/8, which Linux delivers on the loopback interface: backends
// listen on the peer's own address (127.77.n.2) and Caddy dials exactly what it would dial over the
// tunnel. No interface or namespace is created; no traffic leaves loopback. The real tunnel is
// covered by test/e2e/routes.test.ts.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { startTestServer, apiToken, bearer, type TestServer, apiCall } from './lib/server.js';
import { at } from '../../test/lib/json.js';
import { stripMarker, type ProxyService } from '../src/proxy/service.js';
import type { RoutesService } from '../src/routes/service.js';
import type { CaddySupervisor } from '../src/proxy/supervisor.js';
import { caddyPaths } from '../src/proxy/supervisor.js';
import { CaddyAdminClient } from '../src/proxy/admin-client.js';
import { configHash } from '@gatehouse/common/canonical.js';
import { proxyConfigHash } from '../src/proxy/apply.js';
import { freePort, tcpRoundTrip } from '../../test/lib/ports.js';
import { getWithHost, type GetResult } from '../../test/lib/http-get.js';
import { waitFor } from '../../test/lib/wait.js';
import { CADDY, managedCaddyEnv } from '../../test/lib/caddy-env.js';
import type { Route } from './lib/protocol.js';
import type { CaddyConfig } from '../src/proxy/caddy-json.js';

const skip = fs.existsSync(CADDY) ? false : `no ${CADDY}: build it with bash scripts/build-caddy.sh`;

/** GET through Caddy on 127.0.0.1 with a Host header; null when the connection fails. */
export function getVia(port: number, host: string, p = '/', timeoutMs = 3000): Promise<GetResult | null> {
  return getWithHost(port, host, { path: p, timeoutMs });
}

let s: TestServer;
let auth: Record<string, string>;
let ports: { http: number; https: number; admin: number };
let peerAddr: string;
let peerId: number;
/** when this file began: Caddy, started by the sidecar in before(), cannot have run longer */
const startedAt = Date.now();
const backends: net.Server[] = [];
const call = apiCall(
  () => s,
  () => auth,
);
const proxy = () => s.deps.proxy as ProxyService;
const supervisor = () => s.deps.caddySupervisor as CaddySupervisor;

async function backend(name: string, port = 0): Promise<number> {
  const srv = http.createServer((req, res) => {
    res.setHeader('content-type', 'text/plain');
    res.end(`${name} ${req.headers.host} ${req.url}`);
  });
  await new Promise<void>((r) => srv.listen(port, peerAddr, () => r()));
  backends.push(srv);
  return (srv.address() as net.AddressInfo).port;
}

before(async () => {
  if (skip) return;
  ports = { http: await freePort(), https: await freePort(), admin: await freePort() };
  const octet = 10 + (process.pid % 200);
  s = await startTestServer(
    {
      ...managedCaddyEnv(ports),
      GATEHOUSE_WG_SUBNET: `127.77.${octet}.0/24`,
      GATEHOUSE_RATE_LIMIT_ADMIN: '100000',
    },
    { startFeatures: true },
  );
  auth = bearer(await apiToken(s));
  const peer = await call('/peers', 'POST', { name: 'backend-host' });
  assert.equal(peer.status, 201, JSON.stringify(peer.data));
  peerId = peer.data.peer.id;
  peerAddr = peer.data.peer.address.split('/')[0];
  assert.match(peerAddr, /^127\.77\./);
});

after(async () => {
  if (skip) return;
  for (const b of backends) b.close();
  const pid = supervisor().status().pid;
  await s.close();
  if (pid) assert.equal(fs.existsSync(`/proc/${pid}`), false, 'Caddy is stopped with the sidecar');
});

test('Caddy runs under supervision with the admin API on loopback only', { skip }, async () => {
  const st = await call('/caddy/status');
  assert.equal(st.status, 200);
  assert.equal(st.data.running, true);
  assert.equal(typeof st.data.pid, 'number');
  assert.ok(
    Number.isInteger(st.data.uptime_s) && st.data.uptime_s! >= 0,
    `uptime_s is whole seconds while Caddy runs, got ${JSON.stringify(st.data.uptime_s)}`,
  );
  assert.ok(st.data.uptime_s! <= (Date.now() - startedAt) / 1000 + 1, `uptime_s ${st.data.uptime_s} is not longer than this test file has run`);
  assert.equal(st.data.admin_api, `127.0.0.1:${ports.admin}`);
  assert.equal(st.data.mode, 'caddy');
  const cmdline = fs.readFileSync(`/proc/${st.data.pid}/cmdline`, 'utf8').split('\0');
  assert.equal(cmdline[0], CADDY);
  // Caddy's files live under the data directory, not in a home directory.
  const env = fs.readFileSync(`/proc/${st.data.pid}/environ`, 'utf8').split('\0');
  assert.ok(env.includes(`XDG_DATA_HOME=${caddyPaths(s.dataDir).xdgData}`));
  const health = await s.req('/health');
  assert.equal(health.data.checks!.proxy.ok, true, JSON.stringify(health.data));
  // Unknown hosts get the default site (Gatehouse's 404 page: the host maps' fallback), never another route's backend.
  const r = await getVia(ports.http, 'nobody.test');
  assert.equal(r?.status, 404);
  assert.match(r!.body, /Page not found/);
});

test('a created route answers through Caddy as soon as POST /routes returns; toggle off → 404, on → 200', { skip }, async () => {
  const port = await backend('app');
  const c = await call('/routes', 'POST', { domain: 'app.test', peer_id: peerId, target_port: port });
  assert.equal(c.status, 201, JSON.stringify(c.data));
  const r = await getVia(ports.http, 'app.test', '/hello');
  assert.equal(r?.status, 200);
  assert.equal(r!.body, 'app app.test /hello');
  const id = c.data.route.id;
  assert.equal((await call(`/routes/${id}/toggle`, 'PUT')).data.enabled, false);
  assert.equal((await getVia(ports.http, 'app.test'))?.status, 404);
  assert.equal((await call(`/routes/${id}/toggle`, 'PUT')).data.enabled, true);
  assert.equal((await getVia(ports.http, 'app.test'))?.status, 200);
  // What Caddy runs is exactly what we rendered.
  const running = await new CaddyAdminClient(`127.0.0.1:${ports.admin}`).getConfig();
  assert.equal(configHash(stripMarker(running)), configHash(await proxy().render()));
  assert.equal(proxy().status().config_hash, proxyConfigHash(stripMarker(running) as CaddyConfig));
  // The marker object lets the reconcile loop check cheaply that Caddy still runs this config.
  const marker = (running as { admin: { config: Record<string, string> } }).admin.config['@id'];
  assert.match(marker, /^gatehouse-[0-9a-f]{40}$/);
  assert.equal(await new CaddyAdminClient(`127.0.0.1:${ports.admin}`).hasId(marker), true);
});

test('HTTPS route with the internal CA: served on the HTTPS port, HTTP redirects', { skip }, async () => {
  const port = await backend('secure');
  const c = await call('/routes', 'POST', { domain: 'secure.test', peer_id: peerId, target_port: port, https_enabled: true, compress_enabled: true });
  assert.equal(c.status, 201, JSON.stringify(c.data));
  const redirect = await getVia(ports.http, 'secure.test', '/x?y=1');
  assert.equal(redirect?.status, 308);
  assert.equal(redirect!.headers.location, `https://secure.test:${ports.https}/x?y=1`);
  const root = caddyPaths(s.dataDir).internalRootCert;
  const body = await waitFor(
    () =>
      new Promise<string | null>((resolve) => {
        if (!fs.existsSync(root)) return resolve(null);
        const req = https.request(
          {
            host: '127.0.0.1',
            port: ports.https,
            servername: 'secure.test',
            path: '/tls',
            headers: { host: 'secure.test' },
            ca: fs.readFileSync(root),
            agent: false,
          },
          (res) => {
            let b = '';
            res.on('data', (d) => (b += d));
            res.on('end', () => resolve(res.statusCode === 200 ? b : null));
          },
        );
        req.on('error', () => resolve(null));
        req.end();
      }),
    10_000,
    'the HTTPS route (certificate issued by the internal CA)',
  );
  assert.equal(body, 'secure secure.test /tls');
});

test('an L4 TCP route proxies bytes to the peer', { skip }, async () => {
  const echo = net.createServer((sock) => sock.pipe(sock));
  await new Promise<void>((r) => echo.listen(0, peerAddr, () => r()));
  backends.push(echo);
  const listen = await freePort();
  const c = await call('/routes', 'POST', {
    domain: 'echo.test',
    route_type: 'l4',
    l4_protocol: 'tcp',
    l4_listen_port: listen,
    peer_id: peerId,
    target_port: (echo.address() as net.AddressInfo).port,
  });
  assert.equal(c.status, 201, JSON.stringify(c.data));
  assert.equal(await tcpRoundTrip('127.0.0.1', listen, 'ping over l4'), 'ping over l4');
  await call(`/routes/${c.data.route.id}/toggle`, 'PUT');
  assert.equal(await tcpRoundTrip('127.0.0.1', listen, 'x', 1000), null, 'nothing listens once the route is off');
});

test('Caddy rejecting the configuration: 502 with its message, the route is not saved, the old config keeps serving', { skip }, async () => {
  // Something else already listens on the port the new L4 route wants: Caddy cannot bind it.
  const squatter = net.createServer();
  await new Promise<void>((r) => squatter.listen(0, '127.0.0.1', () => r()));
  const taken = (squatter.address() as net.AddressInfo).port;
  try {
    const before = await s.deps.db.models.Route.count();
    const hashBefore = proxy().status().config_hash;
    const r = await call('/routes', 'POST', {
      domain: 'squat.test',
      route_type: 'l4',
      l4_protocol: 'tcp',
      l4_listen_port: taken,
      peer_id: peerId,
      target_port: 9,
    });
    assert.equal(r.status, 502, JSON.stringify(r.data));
    assert.match(r.data.error!, /^proxy rejected the configuration: .*address already in use/);
    assert.match(r.data.proxy_error!, /address already in use/, "Caddy's reason alone, for clients that word the lead-in themselves");
    assert.equal(r.data.error, `proxy rejected the configuration: ${r.data.proxy_error}`);
    assert.equal(await s.deps.db.models.Route.count(), before, 'the route was not saved');
    // the status says so as a coded category, Caddy's own words as its detail
    const st = await call('/caddy/status');
    assert.match(st.data.last_error!, /address already in use/);
    assert.deepEqual(st.data.last_error_code, {
      code: 'caddy.error.rejected',
      params: { status: st.data.last_error_code!.params!.status, detail: st.data.last_error },
    });
    assert.ok(Number(at(st.data.last_error_code, 'params', 'status')) >= 400, JSON.stringify(st.data.last_error_code));
    assert.equal(proxy().status().config_hash, hashBefore);
    assert.equal((await getVia(ports.http, 'app.test'))?.status, 200, 'the previous configuration still serves');
    const running = await new CaddyAdminClient(`127.0.0.1:${ports.admin}`).getConfig();
    assert.equal(proxyConfigHash(stripMarker(running) as CaddyConfig), hashBefore);
    // An update that Caddy rejects is rolled back the same way.
    const app = (await call('/routes?type=http')).data.routes.find((x: Route) => x.domain === 'app.test');
    const l4 = (await call('/routes?type=l4')).data.routes[0];
    const u = await call(`/routes/${l4.id}`, 'PUT', { l4_listen_port: taken, enabled: true });
    assert.equal(u.status, 502);
    assert.deepEqual((await call(`/routes/${l4.id}`)).data.route, l4);
    assert.ok(app);
  } finally {
    squatter.close();
  }
});

test('concurrent creates coalesce into fewer loads and all answer', { skip }, async () => {
  const port = await backend('burst');
  const loads = proxy().loads;
  const res = await Promise.all(
    Array.from({ length: 12 }, (_v, i) => call('/routes', 'POST', { domain: `burst${i}.test`, peer_id: peerId, target_port: port })),
  );
  assert.deepEqual(
    res.map((r) => r.status),
    Array(12).fill(201),
  );
  const used = proxy().loads - loads;
  assert.ok(used < 12, `12 creates used ${used} loads`);
  for (let i = 0; i < 12; i++) assert.equal((await getVia(ports.http, `burst${i}.test`))?.body, `burst burst${i}.test /`);
});

test('a batch in which one write makes Caddy fail: that write alone fails, the others are saved and live', { skip }, async () => {
  const squatter = net.createServer();
  await new Promise<void>((r) => squatter.listen(0, '127.0.0.1', () => r()));
  const taken = (squatter.address() as net.AddressInfo).port;
  const port = await backend('mix');
  try {
    // Hold the queue with a slow write so that the next three are batched together (the service
    // is called directly so that all three are queued while the first transaction runs).
    const routes = s.deps.routes as RoutesService;
    const calls = () => proxy().loads;
    const before = calls();
    const gate = proxy().transact(async () => new Promise((r) => setTimeout(r, 200))); // not a condition: a slow write that holds the queue
    const res = await Promise.allSettled([
      routes.create({ domain: 'mix1.test', peer_id: peerId, target_port: port }),
      routes.create({ domain: 'mixbad.test', route_type: 'l4', l4_protocol: 'tcp', l4_listen_port: taken, peer_id: peerId, target_port: 9 }),
      routes.create({ domain: 'mix2.test', peer_id: peerId, target_port: port }),
    ]);
    await gate;
    assert.deepEqual(
      res.map((r) => r.status),
      ['fulfilled', 'rejected', 'fulfilled'],
    );
    assert.match(String((res[1] as PromiseRejectedResult).reason.message), /^proxy rejected the configuration/);
    // the rejected batch of three (a full load: it has an L4 route) + each of the three retried
    // alone (two host changes, one full load); the gate changed nothing, so Caddy was not called
    assert.equal(calls() - before, 4);
    assert.equal((await getVia(ports.http, 'mix1.test'))?.status, 200);
    assert.equal((await getVia(ports.http, 'mix2.test'))?.status, 200);
    assert.equal(
      (await call('/routes?type=l4&limit=1000')).data.routes.some((r: Route) => r.domain === 'mixbad.test'),
      false,
    );
  } finally {
    squatter.close();
  }
});

test('drift (someone else loads a config) and a Caddy crash are repaired', { skip }, async () => {
  const admin = new CaddyAdminClient(`127.0.0.1:${ports.admin}`);
  await admin.load({ admin: { listen: `127.0.0.1:${ports.admin}`, config: { persist: false } } });
  assert.equal(await getVia(ports.http, 'app.test', '/', 500), null, 'the foreign config serves nothing');
  // One pass of the reconcile loop (it runs every 10 s) sees the difference and re-applies.
  const r = await proxy().apply({ verify: true });
  assert.equal(r.loaded, true);
  assert.equal((await getVia(ports.http, 'app.test'))?.status, 200);
  const again = await proxy().apply({ verify: true });
  assert.equal(again.loaded, false, 'nothing to do when Caddy runs what we rendered');
  // A path-level edit through the admin API keeps the marker; the periodic full comparison sees it.
  const patched = await new Promise<number>((resolve) => {
    const req = http.request(
      { host: '127.0.0.1', port: ports.admin, method: 'PATCH', path: '/config/apps/http/grace_period', headers: { 'content-type': 'application/json' } },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.end('"1s"');
  });
  assert.equal(patched, 200);
  let repaired = false;
  for (let i = 0; i < 6 && !repaired; i++) repaired = (await proxy().apply({ verify: true })).loaded;
  assert.ok(repaired, 'the edit is found within six reconcile passes (one minute)');
  const running = await admin.getConfig();
  assert.equal(configHash(stripMarker(running)), configHash(await proxy().render()));

  // Crash: the supervisor restarts Caddy (back-off 1 s) and pushes the full configuration.
  const pid = supervisor().status().pid!;
  process.kill(pid, 'SIGKILL');
  const back = await waitFor(async () => (await getVia(ports.http, 'app.test', '/', 500))?.status === 200, 15_000, 'Caddy to come back with the routes');
  assert.ok(back);
  const st = supervisor().status();
  assert.notEqual(st.pid, pid);
  assert.equal(st.restarts, 1);
});
