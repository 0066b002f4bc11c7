// Several backends through the REAL bin/caddy (loopback like route-resilience-caddy.test.ts: two
// peers with addresses in 127.78.<n>.0/24, a backend on each peer's address; no tunnel, the e2e
// suite has none for this yet): round robin alternates; ip_hash and cookie keep a client on one
// backend; a backend whose server stops leaves the rotation within one health-check interval and
// no 5xx follows, its state turns down (route_backend_down) and back up (route_backend_up) when
// it returns; the backend sees the request headers, the client the response headers; zstd and
// gzip bodies. Skipped without bin/caddy.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import zlib from 'node:zlib';
import { startTestServer, apiToken, bearer, type TestServer } from './lib/server.js';
import { freePort } from '../../test/lib/ports.js';
import { CADDY, managedCaddyEnv } from '../../test/lib/caddy-env.js';
import { waitFor } from '../../test/lib/wait.js';

const skip = fs.existsSync(CADDY) ? false : `no ${CADDY}: build it with bash scripts/build-caddy.sh`;

let s: TestServer;
let auth: Record<string, string>;
let httpPort: number;
const peers: { id: number; addr: string }[] = [];
const call = (p: string, method = 'GET', json?: unknown) => s.req(`/api/v1${p}`, { method, headers: auth, ...(json !== undefined ? { json } : {}) });

/** A backend on a peer's address that answers its name and the headers it got (JSON); stop()/start() on the same port. */
class Backend {
  srv: http.Server | null = null;
  port = 0;
  constructor(
    readonly name: string,
    readonly addr: string,
  ) {}
  async start(): Promise<void> {
    const srv = http.createServer((req, res) => {
      res.setHeader('content-type', 'application/json');
      res.setHeader('server', 'node-backend');
      res.end(JSON.stringify({ name: this.name, headers: req.headers, pad: 'x'.repeat(2000) }));
    });
    await new Promise<void>((r) => srv.listen(this.port, this.addr, () => r()));
    this.port = (srv.address() as net.AddressInfo).port;
    this.srv = srv;
  }
  async stop(): Promise<void> {
    const srv = this.srv;
    this.srv = null;
    if (!srv) return;
    srv.closeAllConnections();
    await new Promise<void>((r) => srv.close(() => r()));
  }
}
const backends: Backend[] = [];

function get(host: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: httpPort, path: '/', agent: false, headers: { host, ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}
const nameOf = (r: { body: Buffer }) => (JSON.parse(r.body.toString('utf8')) as { name: string }).name;

before(async () => {
  if (skip) return;
  httpPort = await freePort();
  const octet = 10 + ((process.pid + 131) % 200);
  s = await startTestServer(
    {
      ...managedCaddyEnv({ http: httpPort, https: await freePort(), admin: await freePort() }),
      GATEHOUSE_WG_SUBNET: `127.78.${octet}.0/24`,
      GATEHOUSE_RATE_LIMIT_ADMIN: '100000',
      GATEHOUSE_PORT: String(await freePort()),
      GATEHOUSE_BIND: '127.0.0.1',
    },
    { startFeatures: true, listen: true },
  );
  auth = bearer(await apiToken(s));
  for (const name of ['web-a', 'web-b']) {
    const p = await call('/peers', 'POST', { name });
    assert.equal(p.status, 201, JSON.stringify(p.data));
    peers.push({ id: p.data.peer.id, addr: p.data.peer.address.split('/')[0] });
    const b = new Backend(name, peers.at(-1)!.addr);
    await b.start();
    backends.push(b);
  }
  await waitFor(async () => (await call('/caddy/status')).data.running === true, 30_000, 'Caddy');
});

after(async () => {
  if (skip) return;
  for (const b of backends) await b.stop();
  await s.close();
});

const both = () => backends.map((b, i) => ({ peer_id: peers[i].id, target_port: b.port }));

test('round robin alternates; ip_hash and cookie keep a client on one backend', { skip }, async () => {
  const r = await call('/routes', 'POST', { domain: 'rr.test', backends: both() });
  assert.equal(r.status, 201, JSON.stringify(r.data));
  const seq: string[] = [];
  for (let i = 0; i < 6; i++) {
    const x = await get('rr.test');
    assert.equal(x.status, 200);
    seq.push(nameOf(x));
  }
  for (let i = 1; i < seq.length; i++) assert.notEqual(seq[i], seq[i - 1], `alternates: ${seq.join(' ')}`);

  const h = await call('/routes', 'POST', { domain: 'hash.test', backends: both(), lb_policy: 'ip_hash' });
  assert.equal(h.status, 201, JSON.stringify(h.data));
  const hashed = new Set<string>();
  for (let i = 0; i < 6; i++) hashed.add(nameOf(await get('hash.test')));
  assert.equal(hashed.size, 1, `ip_hash: one backend for one client, got ${[...hashed].join(', ')}`);

  const c = await call('/routes', 'POST', { domain: 'sticky.test', backends: both(), lb_policy: 'cookie', lb_cookie_name: 'app_lb' });
  assert.equal(c.status, 201, JSON.stringify(c.data));
  const first = await get('sticky.test');
  const cookie = String(first.headers['set-cookie']?.[0] ?? '').split(';')[0];
  assert.match(cookie, /^app_lb=/);
  for (let i = 0; i < 6; i++) assert.equal(nameOf(await get('sticky.test', { cookie })), nameOf(first), 'the cookie keeps the client on its backend');
});

test('a stopped backend leaves the rotation within one health-check interval, no 5xx after; it comes back; states and events follow', { skip }, async () => {
  const events: { type: string; backend: string }[] = [];
  s.deps.events.on(['route_backend_down', 'route_backend_up'], (e) => {
    // reason: the bus hands the DomainEvent union; these two kinds carry backend
    events.push(e as unknown as { type: string; backend: string });
  });
  const r = await call('/routes', 'POST', { domain: 'hc.test', backends: both(), health_check: { path: '/', interval_s: 1, timeout_s: 1 } });
  assert.equal(r.status, 201, JSON.stringify(r.data));
  const id = r.data.route.id;
  await waitFor(async () => (await call(`/routes/${id}/backends`)).data.backends.every((b: { state: string }) => b.state === 'up'), 20_000, 'both backends up');

  await backends[1].stop();
  // detection: one interval (1 s) plus the check's own time; then every request goes to web-a
  await new Promise((res) => setTimeout(res, 2500)); // not a condition: the health-check interval must pass (detection), then no request may fail
  for (let i = 0; i < 10; i++) {
    const x = await get('hc.test');
    assert.equal(x.status, 200, 'no 5xx after detection');
    assert.equal(nameOf(x), 'web-a');
  }
  const dialB = `${peers[1].addr}:${backends[1].port}`;
  await waitFor(async () => (await call(`/routes/${id}/backends`)).data.backends[1].state === 'down', 20_000, 'web-b down in the route view');
  assert.ok(
    events.some((e) => e.type === 'route_backend_down' && e.backend === dialB),
    JSON.stringify(events),
  );

  await backends[1].start();
  await waitFor(
    async () => {
      const seen = new Set<string>();
      for (let i = 0; i < 4; i++) seen.add(nameOf(await get('hc.test')));
      return seen.size === 2;
    },
    10_000,
    'web-b back in the rotation',
  );
  await waitFor(async () => (await call(`/routes/${id}/backends`)).data.backends[1].state === 'up', 20_000, 'web-b up in the route view');
  assert.ok(
    events.some((e) => e.type === 'route_backend_up' && e.backend === dialB),
    JSON.stringify(events),
  );
});

test('headers: the backend sees the request headers, the client the response headers; zstd and gzip bodies', { skip }, async () => {
  const r = await call('/routes', 'POST', {
    domain: 'hdr.test',
    peer_id: peers[0].id,
    target_port: backends[0].port,
    request_headers: { set: { 'X-Client': '{client_ip}', 'X-Route': '{route_domain}#{route_id}' }, delete: ['X-Secret'] },
    response_headers: { set: { 'X-Served-Via': 'gatehouse' }, delete: ['Server'] },
    compression: ['zstd', 'gzip'],
  });
  assert.equal(r.status, 201, JSON.stringify(r.data));
  const id = r.data.route.id;
  const x = await get('hdr.test', { 'x-secret': 'hidden' });
  assert.equal(x.status, 200);
  const seen = (JSON.parse(x.body.toString('utf8')) as { headers: Record<string, string> }).headers;
  assert.equal(seen['x-client'], '127.0.0.1');
  assert.equal(seen['x-route'], `hdr.test#${id}`);
  assert.equal(seen['x-secret'], undefined);
  assert.equal(x.headers['x-served-via'], 'gatehouse');
  assert.equal(x.headers.server, undefined);

  const gz = await get('hdr.test', { 'accept-encoding': 'gzip' });
  assert.equal(gz.headers['content-encoding'], 'gzip');
  assert.equal(nameOf({ body: zlib.gunzipSync(gz.body) }), 'web-a');
  const zs = await get('hdr.test', { 'accept-encoding': 'zstd' });
  assert.equal(zs.headers['content-encoding'], 'zstd');
  // a zstd frame (RFC 8878: magic number 0xFD2FB528, little-endian)
  assert.deepEqual([...zs.body.subarray(0, 4)], [0x28, 0xb5, 0x2f, 0xfd]);
  assert.ok(zs.body.length < 1500, `compressed: ${zs.body.length} bytes`);
});
