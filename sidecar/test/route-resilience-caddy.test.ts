// Integration with the REAL bin/caddy (loopback, like proxy-caddy.test.ts: peer addresses in
// 127.77.<n>.0/24, backends listen on the peer's address): circuit breaker opens after `threshold`
// failures (503 + Retry-After, backend untouched), its reports reach the sidecar and show in
// GET /routes/:id, reset closes it; bot user agent 403 and a browser passes; a backend answering
// 502 once is retried and the client sees 200; the mirror target receives copies; the access log
// is ingested and the route's trace lists the requests, and a roll of the access log under load
// (1 MB) loses no line. Skipped without bin/caddy.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { startTestServer, apiToken, bearer, type TestServer, apiCall } from './lib/server.js';
import type { AccessLogService } from '../src/resilience/access-log.js';
import { accessLogFile } from '../src/proxy/fragments/access-log.js';
import { freePort } from '../../test/lib/ports.js';
import { CADDY, managedCaddyEnv } from '../../test/lib/caddy-env.js';
import { waitFor } from '../../test/lib/wait.js';

const skip = fs.existsSync(CADDY) ? false : `no ${CADDY}: build it with bash scripts/build-caddy.sh`;
const BROWSER = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36';

let s: TestServer;
let auth: Record<string, string>;
let peerId: number;
let peerAddr: string;
let httpPort: number;
const servers: http.Server[] = [];
const call = apiCall(
  () => s,
  () => auth,
);

async function backend(handler: http.RequestListener): Promise<number> {
  const srv = http.createServer(handler);
  await new Promise<void>((r) => srv.listen(0, peerAddr, () => r()));
  servers.push(srv);
  return (srv.address() as net.AddressInfo).port;
}

function get(
  host: string,
  p = '/',
  headers: Record<string, string> = { 'user-agent': BROWSER },
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: httpPort, path: p, agent: false, headers: { host, ...headers } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

before(async () => {
  if (skip) return;
  httpPort = await freePort();
  const octet = 10 + ((process.pid + 97) % 200);
  s = await startTestServer(
    {
      ...managedCaddyEnv({ http: httpPort, https: await freePort(), admin: await freePort() }),
      GATEHOUSE_WG_SUBNET: `127.77.${octet}.0/24`,
      GATEHOUSE_RATE_LIMIT_ADMIN: '100000',
      GATEHOUSE_ACCESS_LOG_ROLL_MB: '1',
      // Caddy's breaker reports go to http://127.0.0.1:<GATEHOUSE_PORT>: listen there for real.
      GATEHOUSE_PORT: String(await freePort()),
      GATEHOUSE_BIND: '127.0.0.1',
    },
    { startFeatures: true, listen: true },
  );
  auth = bearer(await apiToken(s));
  const peer = await call('/peers', 'POST', { name: 'backend-host' });
  assert.equal(peer.status, 201, JSON.stringify(peer.data));
  peerId = peer.data.peer.id;
  peerAddr = peer.data.peer.address.split('/')[0];
  await waitFor(async () => (await call('/caddy/status')).data.running === true, 30_000, 'Caddy');
});

after(async () => {
  if (skip) return;
  for (const b of servers) b.close();
  await s.close();
});

test('circuit breaker: opens after threshold failures without touching the backend, state reported, reset closes', { skip }, async () => {
  let hits = 0;
  let failing = true;
  const port = await backend((_req, res) => {
    hits++;
    res.statusCode = failing ? 500 : 200;
    res.end(failing ? 'fail' : 'ok');
  });
  const r = await call('/routes', 'POST', {
    domain: 'cb.test',
    peer_id: peerId,
    target_port: port,
    circuit_breaker_enabled: true,
    circuit_breaker_threshold: 3,
    circuit_breaker_timeout: 600,
  });
  assert.equal(r.status, 201, JSON.stringify(r.data));
  const id = r.data.route.id;
  for (let i = 0; i < 3; i++) assert.equal((await get('cb.test')).status, 500);
  assert.equal(hits, 3);
  const open = await get('cb.test');
  assert.equal(open.status, 503);
  assert.ok(Number(open.headers['retry-after']) >= 1);
  assert.match(open.body, /circuit breaker open/);
  assert.equal(hits, 3, 'the backend is not touched while open');
  await waitFor(async () => (await call(`/routes/${id}`)).data.route.cb_opened_at !== null, 5000, 'the open report');
  const g = (await call(`/routes/${id}`)).data.route;
  assert.equal(g.cb_failure_count, 3);
  assert.ok(g.cb_opened_at! > Date.now() - 60_000);
  failing = false;
  const reset = await call(`/routes/${id}/circuit-breaker/reset`, 'POST', {});
  assert.equal(reset.status, 200, JSON.stringify(reset.data));
  assert.equal((await get('cb.test')).status, 200);
  assert.equal(hits, 4);
  const after = (await call(`/routes/${id}`)).data.route;
  assert.equal(after.cb_failure_count, 0);
  assert.equal(after.cb_opened_at, null);
});

test('bot blocker: a scanner user agent and an exploit path get 403, a browser passes', { skip }, async () => {
  let hits = 0;
  const port = await backend((_req, res) => {
    hits++;
    res.end('ok');
  });
  const r = await call('/routes', 'POST', {
    domain: 'bots.test',
    peer_id: peerId,
    target_port: port,
    bot_blocker_enabled: true,
    bot_blocker_config: { custom_user_agents: ['evilbot'] },
  });
  assert.equal(r.status, 201, JSON.stringify(r.data));
  assert.equal((await get('bots.test')).status, 200);
  assert.equal((await get('bots.test', '/', { 'user-agent': 'sqlmap/1.7.2#stable (https://sqlmap.org)' })).status, 403);
  assert.equal((await get('bots.test', '/', { 'user-agent': 'EvilBot/2' })).status, 403);
  assert.equal((await get('bots.test', '/.env')).status, 403);
  assert.equal(hits, 1);
});

test('retry: a backend that answers 502 once is retried, the client sees 200', { skip }, async () => {
  let n = 0;
  const port = await backend((_req, res) => {
    n++;
    res.statusCode = n % 2 === 1 ? 502 : 200;
    res.end(String(n));
  });
  const r = await call('/routes', 'POST', {
    domain: 'retry.test',
    peer_id: peerId,
    target_port: port,
    retry_enabled: true,
    retry_count: 2,
    retry_status_codes: '502',
  });
  assert.equal(r.status, 201, JSON.stringify(r.data));
  const res = await get('retry.test');
  assert.equal(res.status, 200);
  assert.equal(n, 2);
});

test('mirror: the target receives copies, the primary response is unchanged; access log and trace', { skip }, async () => {
  const copies: string[] = [];
  const mirrorPort = await backend((req, res) => {
    copies.push(`${req.method} ${req.url} ${req.headers['x-gatehouse-mirror']}`);
    res.end('mirror');
  });
  const port = await backend((_req, res) => res.end('primary'));
  const r = await call('/routes', 'POST', {
    domain: 'mirror.test',
    peer_id: peerId,
    target_port: port,
    mirror_enabled: true,
    mirror_targets: [{ peer_id: peerId, port: mirrorPort }],
    debug_enabled: true,
  });
  assert.equal(r.status, 201, JSON.stringify(r.data));
  const res = await get('mirror.test', '/copy-me?x=1');
  assert.equal(res.status, 200);
  assert.equal(res.body, 'primary');
  await waitFor(async () => copies.length > 0, 5000, 'the mirror copy');
  assert.deepEqual(copies, ['GET /copy-me?x=1 1']);
  await waitFor(async () => (await call(`/routes/${r.data.route.id}/trace`)).data.requests.length > 0, 10_000, 'the access log');
  const t = (await call(`/routes/${r.data.route.id}/trace`)).data.requests[0];
  assert.equal(t.uri, '/copy-me?x=1');
  assert.equal(t.status, 200);
  assert.equal(t.method, 'GET');
  assert.equal(t.upstream, `${peerAddr}:${port}`);
  assert.equal(typeof t.duration_ms, 'number');
});

test('access log: rolled under load, no line lost or counted twice; rolled files stay uncompressed', { skip }, async () => {
  const port = await backend((_req, res) => res.end('ok'));
  const r = await call('/routes', 'POST', { domain: 'rolled.test', peer_id: peerId, target_port: port });
  assert.equal(r.status, 201, JSON.stringify(r.data));
  await waitFor(async () => (await get('rolled.test')).status === 200, 10_000, 'the route');
  const routeId = r.data.route.id;
  const rows = async () =>
    Number(
      ((await s.deps.db.sequelize.query('SELECT COUNT(*) AS n FROM access_log WHERE route_id = ?', { replacements: [routeId], plain: true })) as {
        n: number | string;
      } | null)!.n,
    );
  const dir = path.dirname(accessLogFile(s.dataDir));
  const rolled = () => fs.readdirSync(dir).filter((f) => f.startsWith('access-'));
  const svc = s.deps.accessLog as AccessLogService;
  // The sidecar falls behind (its reader is stopped) while Caddy rolls the 1 MB file: the rest of
  // the rolled file must still be there to be read when it catches up.
  svc.stop();
  try {
    while ((await svc.poll()) > 0);
    const before = await rows();
    assert.deepEqual(rolled(), []);
    const n = 1500; // lines of ~1 KB (a long User-Agent): past the 1 MB roll size
    const ua = `${BROWSER} ${'x'.repeat(600)}`;
    let next = 0;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next < n) {
          next++;
          assert.equal((await get('rolled.test', '/', { 'user-agent': ua })).status, 200);
        }
      }),
    );
    await waitFor(async () => rolled().length > 0, 10_000, 'Caddy to roll the access log');
    await new Promise((res) => setTimeout(res, 1000)); // not a condition: time for a compression, were it on
    assert.ok(
      rolled().every((f) => f.endsWith('.log')),
      `rolled files: ${rolled().join(', ')}`,
    );
    await waitFor(
      async () => {
        await svc.poll();
        return (await rows()) - before >= n;
      },
      15_000,
      `${n} rows`,
    );
    while ((await svc.poll()) > 0);
    assert.equal((await rows()) - before, n);
  } finally {
    svc.start();
  }
});
