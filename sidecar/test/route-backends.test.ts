// Several backends per HTTP route, load balancing, health checks, header operations and the
// compression list (routes/traffic.ts, proxy/fragments/lb.ts) through the routes API of a real
// sidecar in the no-proxy mode: what is stored and shown, what is refused (400 with fields, 422 for
// the cross-field rules; nothing written either way), and what the configuration renders, with the
// sticky cookie's secret (per route, never empty, the same after a restart). Through real Caddy and
// two peers behind their WireGuard tunnels: test/e2e/lb-tunnel.test.ts.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTestServer, apiToken, bearer, type TestServer, apiCall } from './lib/server.js';
import type { ProxyService } from '../src/proxy/service.js';
import { at, hostMap, objAt, objsAt } from '../../test/lib/json.js';
import { isProtectedHeader, PROTECTED_HEADERS } from '../src/routes/traffic.js';

let s: TestServer;
let auth: Record<string, string>;
let peerA: number;
let peerB: number;
let peerC: number;
let gateway: number;
let ipA: string;
let ipB: string;

const proxy = () => s.deps.proxy as ProxyService;
const call = apiCall(
  () => s,
  () => auth,
);
// reason: a raw row (findByPk raw: true) has the columns, not model instance properties
const routeRow = async (id: number) => (await s.deps.db.models.Route.findByPk(id, { raw: true })) as unknown as { backend_peer_ids: string | null } | null;

// our own data directory: the last test restarts the server on it
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-route-backends-'));
const ENV = { GATEHOUSE_RATE_LIMIT_ADMIN: '100000', GATEHOUSE_CADDY_ADMIN: '127.0.0.1:2998', GATEHOUSE_DATA_DIR: dataDir };

before(async () => {
  s = await startTestServer(ENV);
  auth = bearer(await apiToken(s));
  const mk = async (name: string, extra = {}) => (await call('/peers', 'POST', { name, ...extra })).data.peer;
  const a = await mk('web-a');
  const b = await mk('web-b');
  peerA = a.id;
  peerB = b.id;
  ipA = a.address.split('/')[0];
  ipB = b.address.split('/')[0];
  peerC = (await mk('web-c')).id;
  gateway = (await mk('home-gw', { is_gateway: true, api_port: 9876 })).id;
});
after(async () => {
  await s.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

/** The handlers of the first route of a host's entry in the rendered configuration. */
const firstHandlers = async (domain: string) => objsAt(hostMap(await proxy().render()), domain, 'routes', 0, 'handle');

test('a route with two backends: the view lists both (the first is the target), Caddy gets both with the policy, checks and headers', async () => {
  const r = await call('/routes', 'POST', {
    domain: 'lb.example.com',
    backends: [
      { peer_id: peerA, target_port: 8080 },
      { target_kind: 'peer', peer_id: peerB, target_port: 8081, weight: 2 },
    ],
    health_check: { path: '/health', interval_s: 2 },
    request_headers: { set: { 'X-Client-IP': '{client_ip}', 'X-Route': '{route_domain}' }, delete: ['X-Debug'] },
    response_headers: { set: { 'X-Served-Via': 'gatehouse {route_id}' } },
    compression: ['gzip'],
  });
  assert.equal(r.status, 201, JSON.stringify(r.data));
  const route = r.data.route;
  assert.equal(route.peer_id, peerA);
  assert.equal(route.target_port, '8080');
  assert.deepEqual(route.backends, [
    { target_kind: 'peer', peer_id: peerA, target_host: null, target_port: 8080, weight: 1 },
    { target_kind: 'peer', peer_id: peerB, target_host: null, target_port: 8081, weight: 2 },
  ]);
  assert.equal(route.lb_policy, 'round_robin');
  assert.deepEqual(route.health_check, { path: '/health', interval_s: 2, timeout_s: 2, expect_status: 200 });
  assert.deepEqual(route.compression, ['gzip']);
  assert.equal(route.compress_enabled, true);
  assert.deepEqual(route.request_headers, { set: { 'X-Client-IP': '{client_ip}', 'X-Route': '{route_domain}' }, delete: ['X-Debug'] });

  const [encode, rp] = await firstHandlers('lb.example.com');
  assert.deepEqual(encode, { handler: 'encode', encodings: { gzip: {} }, prefer: ['gzip'] });
  assert.deepEqual(rp.upstreams, [{ dial: `${ipA}:8080` }, { dial: `${ipB}:8081` }]);
  assert.deepEqual(at(rp, 'load_balancing', 'selection_policy'), { policy: 'weighted_round_robin', weights: [1, 2] });
  assert.equal(at(rp, 'health_checks', 'active', 'uri'), '/health');
  assert.equal(at(rp, 'health_checks', 'active', 'interval'), '2s');
  assert.deepEqual(at(rp, 'headers', 'request', 'set'), { 'X-Client-IP': ['{http.vars.client_ip}'], 'X-Route': ['lb.example.com'] });
  assert.deepEqual(at(rp, 'headers', 'response', 'set'), { 'X-Served-Via': [`gatehouse ${route.id}`] });

  // the target fields alone replace the first backend; the others stay
  const u = await call(`/routes/${route.id}`, 'PUT', { peer_id: peerC, target_port: 9000 });
  assert.equal(u.status, 200, JSON.stringify(u.data));
  assert.deepEqual(
    u.data.route.backends.map((b: { peer_id: number; target_port: number }) => [b.peer_id, b.target_port]),
    [
      [peerC, 9000],
      [peerB, 8081],
    ],
  );
  // policy cookie with its name; compress_enabled false empties the list
  const c = await call(`/routes/${route.id}`, 'PUT', { lb_policy: 'cookie', lb_cookie_name: 'app_lb', compress_enabled: false });
  assert.equal(c.status, 200, JSON.stringify(c.data));
  assert.deepEqual(c.data.route.compression, []);
  const rp2 = (await firstHandlers('lb.example.com'))[0];
  const { secret, ...policy } = objAt(rp2, 'load_balancing', 'selection_policy');
  assert.deepEqual(policy, { policy: 'cookie', name: 'app_lb', fallback: { policy: 'round_robin' } });
  assert.match(String(secret), /^[0-9a-f]{64}$/, 'the cookie is signed with a secret (the last test checks it)');

  // a peer a backend names cannot be deleted
  const d = await call(`/peers/${peerB}`, 'DELETE');
  assert.equal(d.status, 409, JSON.stringify(d.data));
  // one backend is the single target again: backends [] in the view
  const one = await call(`/routes/${route.id}`, 'PUT', { backends: [{ peer_id: peerA, target_port: 8080 }] });
  assert.equal(one.status, 200, JSON.stringify(one.data));
  assert.deepEqual(one.data.route.backends, []);
  assert.equal(one.data.route.peer_id, peerA);
  assert.equal((await routeRow(route.id))?.backend_peer_ids, null);
});

test('a single-target route: backends [], round_robin, compression from compress_enabled', async () => {
  const r = await call('/routes', 'POST', { domain: 'single.example.com', peer_id: peerA, target_port: 80, compress_enabled: true });
  assert.equal(r.status, 201, JSON.stringify(r.data));
  assert.deepEqual(r.data.route.backends, []);
  assert.equal(r.data.route.lb_policy, 'round_robin');
  assert.deepEqual(r.data.route.compression, ['zstd', 'gzip']);
  assert.equal(r.data.route.health_check, null);
  assert.equal(r.data.route.request_headers, null);
});

test('protected headers are listed in one place: hop-by-hop, forwarding, route-auth identity, X-Gatehouse-*', () => {
  for (const h of ['Connection', 'Transfer-Encoding', 'Upgrade', 'Host', 'X-Forwarded-For', 'X-Real-IP', 'Forwarded', 'X-Auth-User', 'X-Gatehouse-Wol-Route'])
    assert.equal(isProtectedHeader(h), true, h);
  for (const h of ['X-Frame-Options', 'Cache-Control', 'X-Custom']) assert.equal(isProtectedHeader(h), false, h);
  assert.ok(Object.keys(PROTECTED_HEADERS).every((k) => k === k.toLowerCase()));
});

test('bad input: 400 with fields naming the header or placeholder, nothing written', async () => {
  const before = await s.deps.db.models.Route.count();
  const cases: [unknown, string, RegExp][] = [
    [{ request_headers: { set: { 'X-Forwarded-For': '1.2.3.4' } } }, 'request_headers.set.X-Forwarded-For', /X-Forwarded-For cannot be set/],
    [{ response_headers: { delete: ['transfer-encoding'] } }, 'response_headers.delete.0', /transfer-encoding cannot be set or deleted/],
    [{ request_headers: { set: { 'X-A': '{password}' } } }, 'request_headers.set.X-A', /unknown placeholder \{password\}/],
    [{ request_headers: { set: { 'Bad Name': 'x' } } }, 'request_headers.set.Bad Name', /header name/],
    [{ compression: ['br'] }, 'compression.0', /zstd and gzip/],
    [{ compression: ['gzip', 'gzip'] }, 'compression', /zstd and gzip/],
    [{ lb_policy: 'random' }, 'lb_policy', /round_robin/],
    [{ health_check: { path: 'health' } }, 'health_check.path', /starting with \//],
    [{ backends: [{ peer_id: peerA, target_port: 0 }] }, 'backends.0.target_port', /1 to 65535/],
  ];
  for (const [extra, field, re] of cases) {
    const r = await call('/routes', 'POST', { domain: 'bad.example.com', peer_id: peerA, target_port: 80, ...(extra as object) });
    // a set's header name is a key, whose pattern the document does not carry, and an encoding named twice: 422; the rest 400
    assert.equal(
      r.status,
      field === 'request_headers.set.Bad Name' || JSON.stringify(extra) === '{"compression":["gzip","gzip"]}' ? 422 : 400,
      `${JSON.stringify(extra)}: ${JSON.stringify(r.data)}`,
    );
    assert.ok(r.data.fields?.[field], `${field} in ${JSON.stringify(r.data.fields)}`);
    assert.match(String(r.data.fields[field]), re);
  }
  assert.equal(await s.deps.db.models.Route.count(), before);
});

test('cross-field rules: 422 with fields, nothing written', async () => {
  const before = await s.deps.db.models.Route.count();
  const two = [
    { peer_id: peerA, target_port: 80 },
    { peer_id: peerB, target_port: 80 },
  ];
  const cases: [unknown, string][] = [
    [{ peer_id: peerA, target_port: 80, backends: two, lb_policy: 'cookie' }, 'lb_cookie_name'],
    [{ backends: [two[0], { target_kind: 'gateway', peer_id: gateway, target_host: '192.168.1.5', target_port: 80 }] }, 'backends.1.target_kind'],
    [{ backends: [two[0], { peer_id: 99999, target_port: 80 }] }, 'backends.1.peer_id'],
    [{ backends: [two[0], two[0]] }, 'backends.1'],
    [{ peer_id: peerC, target_port: 80, backends: two }, 'backends'],
    [{ peer_id: peerA, target_port: 80, health_check: { interval_s: 2, timeout_s: 5 } }, 'health_check.timeout_s'],
    [{ route_type: 'l4', l4_protocol: 'tcp', l4_listen_port: 2222, peer_id: peerA, target_port: 22, backends: two }, 'backends'],
  ];
  for (const [body, field] of cases) {
    const r = await call('/routes', 'POST', { domain: 'rule.example.com', ...(body as object) });
    assert.equal(r.status, 422, `${JSON.stringify(body)}: ${JSON.stringify(r.data)}`);
    assert.ok(r.data.fields?.[field], `${field} in ${JSON.stringify(r.data.fields)}`);
  }
  assert.equal(await s.deps.db.models.Route.count(), before);
});

test('sticky cookie: each route its own secret, never empty, not in the API, the same after a restart on the same data', async () => {
  const two = [
    { peer_id: peerA, target_port: 80 },
    { peer_id: peerB, target_port: 81 },
  ];
  const ids: number[] = [];
  for (const domain of ['sticky-1.example.com', 'sticky-2.example.com']) {
    const r = await call('/routes', 'POST', { domain, backends: two, lb_policy: 'cookie', lb_cookie_name: 'sticky' });
    assert.equal(r.status, 201, JSON.stringify(r.data));
    ids.push(r.data.route.id);
  }
  const secrets = async () => {
    const out: string[] = [];
    for (const domain of ['sticky-1.example.com', 'sticky-2.example.com']) {
      const policy = objAt((await firstHandlers(domain))[0], 'load_balancing', 'selection_policy');
      assert.equal(policy.policy, 'cookie');
      out.push(String(policy.secret ?? ''));
    }
    return out;
  };
  const first = await secrets();
  // Caddy's cookie policy is an HMAC-SHA256 of the upstream's dial address under this secret: empty, anyone could compute it
  for (const x of first) assert.match(x, /^[0-9a-f]{64}$/, `a real secret, got ${JSON.stringify(x)}`);
  assert.notEqual(first[0], first[1], "a route's cookie does not select on another route");
  assert.deepEqual(await secrets(), first, 'the same at the next render');
  for (const id of ids) {
    const view = JSON.stringify((await call(`/routes/${id}`)).data);
    for (const x of first) assert.ok(!view.includes(x), 'the secret is not in the route view');
  }
  // a restart on the same data (directory and master key; on PostgreSQL the same database): the same
  // secrets, so stickiness survives it
  const databaseUrl = s.databaseUrl;
  await s.close();
  s = await startTestServer({ ...ENV, ...(process.env.TEST_DATABASE_URL && databaseUrl ? { DATABASE_URL: databaseUrl } : {}) });
  auth = bearer(await apiToken(s));
  assert.deepEqual(await secrets(), first, 'the same after a restart');
});
