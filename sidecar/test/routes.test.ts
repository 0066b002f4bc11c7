// Routes API against a real sidecar (SQLite or TEST_DATABASE_URL) in the no-proxy mode
// (GATEHOUSE_MANAGE_CADDY=false): every write renders the full Caddy configuration inside its
// transaction and records the hash, but there is no Caddy to load into. The Caddy side is covered
// by proxy-caddy.test.ts and test/e2e/routes.test.ts.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import dns from 'node:dns';
import { startTestServer, apiToken, bearer, type TestServer, apiCall } from './lib/server.js';
import { localDns } from './lib/local-dns.js';
import type { ProxyService } from '../src/proxy/service.js';
import { proxyConfigHash } from '../src/proxy/apply.js';
import type { RoutesService } from '../src/routes/service.js';
import { waitFor } from '../../test/lib/wait.js';
import type { Route } from './lib/protocol.js';
import { arrAt, hostMap, objAt, objsAt } from '../../test/lib/json.js';
import type { Row } from './lib/rows.js';

let s: TestServer;
let auth: Record<string, string>;
let peerA: number;
let peerB: number;
let gateway: number;
let groupId: number;

const proxy = () => s.deps.proxy as ProxyService;
const call = apiCall(
  () => s,
  () => auth,
);
const routeCount = async () => s.deps.db.models.Route.count();

before(async () => {
  s = await startTestServer({
    GATEHOUSE_RATE_LIMIT_ADMIN: '100000',
    GATEHOUSE_HTTP_PORT: '8080',
    GATEHOUSE_HTTPS_PORT: '8443',
    GATEHOUSE_CADDY_ADMIN: '127.0.0.1:2999',
    GATEHOUSE_WG_PORT: '51999',
    GATEHOUSE_PUBLIC_IP: '203.0.113.7',
  });
  auth = bearer(await apiToken(s));
  const g = await call('/peer-groups', 'POST', { name: 'Home', color: '#00ff00' });
  assert.equal(g.status, 201, JSON.stringify(g.data));
  groupId = g.data.group.id;
  const a = await call('/peers', 'POST', { name: 'laptop', group_id: groupId });
  assert.equal(a.status, 201, JSON.stringify(a.data));
  peerA = a.data.peer.id;
  peerB = (await call('/peers', 'POST', { name: 'server' })).data.peer.id;
  gateway = (await call('/peers', 'POST', { name: 'home-gw', is_gateway: true, api_port: 9876 })).data.peer.id;
});
after(async () => s.close());

test('create an HTTP route: 201, API field names and types, rendered into the proxy configuration', async () => {
  const loads = proxy().loads;
  const r = await call('/routes', 'POST', { domain: 'App.Example.com.', peer_id: peerA, target_port: 8080, https_enabled: true, compress_enabled: 1 });
  assert.equal(r.status, 201, JSON.stringify(r.data));
  const route = r.data.route;
  assert.equal(route.domain, 'app.example.com');
  assert.equal(route.route_type, 'http');
  assert.equal(route.target_kind, 'peer');
  assert.equal(route.target_port, '8080');
  assert.equal(route.https_enabled, true);
  assert.equal(route.compress_enabled, true);
  assert.equal(route.backend_https, false);
  assert.equal(route.enabled, true);
  assert.deepEqual(route.acl_peer_ids, []);
  assert.deepEqual(route.ip_filter_rules, []);
  assert.deepEqual(route.mirror_targets, []);
  assert.deepEqual(route.user_ids, []);
  assert.equal(route.bot_blocker_config, null);
  assert.equal(route.basic_auth_password, null);
  assert.equal('basic_auth_password_hash' in route, false);
  assert.equal(proxy().loads, loads + 1);
  // The hash recorded is the hash of what the database now renders to.
  const cfg = await proxy().render();
  assert.equal(proxy().status().config_hash, proxyConfigHash(cfg));
  const tlsHosts = hostMap(cfg, 'gatehouse_https');
  const peer = (await call(`/peers/${peerA}`)).data.peer;
  // encode, then the shared reverse_proxy (vars + invoke) to the peer's tunnel address
  assert.deepEqual(arrAt(tlsHosts, 'app.example.com', 'routes', 0, 'handle'), [
    { handler: 'encode', encodings: { gzip: {}, zstd: {} }, prefer: ['zstd', 'gzip'] },
    { handler: 'vars', gatehouse_upstream: `${peer.address.split('/')[0]}:8080` },
    { handler: 'invoke', name: 'gatehouse_proxy' },
  ]);

  const got = await call(`/routes/${route.id}`);
  assert.equal(got.status, 200);
  assert.deepEqual(got.data.route, route);
  assert.equal((await call('/routes/987654')).status, 404);
});

test('IDN domains are stored in punycode; wildcards are one leading label', async () => {
  const r = await call('/routes', 'POST', { domain: 'Bücher.example.com', peer_id: peerA, target_port: '80' });
  assert.equal(r.status, 201, JSON.stringify(r.data));
  assert.equal(r.data.route.domain, 'xn--bcher-kva.example.com');
  const dup = await call('/routes', 'POST', { domain: 'xn--bcher-kva.example.com', peer_id: peerB, target_port: '81' });
  assert.equal(dup.status, 409);
  const w = await call('/routes', 'POST', { domain: '*.Apps.example.com', peer_id: peerB, target_port: '3000', https_enabled: true });
  assert.equal(w.status, 201, JSON.stringify(w.data));
  assert.equal(w.data.route.domain, '*.apps.example.com');
  const cfg = await proxy().render();
  assert.ok(arrAt(cfg, 'apps', 'tls', 'certificates', 'automate').includes('*.apps.example.com'));
});

test('bad input: 400 with fields, nothing written, nothing loaded', async () => {
  const before = await routeCount();
  const loads = proxy().loads;
  const bad: [unknown, string][] = [
    [{ peer_id: peerA, target_port: 80 }, 'domain'],
    [{ domain: 'http://x.example.com', peer_id: peerA, target_port: 80 }, 'domain'],
    [{ domain: 'a..example.com', peer_id: peerA, target_port: 80 }, 'domain'],
    [{ domain: 'localhost', peer_id: peerA, target_port: 80 }, 'domain'],
    [{ domain: '*.*.example.com', peer_id: peerA, target_port: 80 }, 'domain'],
    [{ domain: 'a.*.example.com', peer_id: peerA, target_port: 80 }, 'domain'],
    [{ domain: '10.0.0.1', peer_id: peerA, target_port: 80 }, 'domain'],
    [{ domain: 'x.example.com:8080', peer_id: peerA, target_port: 80 }, 'domain'],
    [{ domain: '-bad.example.com', peer_id: peerA, target_port: 80 }, 'domain'],
    [{ domain: 'x.example.com', peer_id: peerA, target_port: 0 }, 'target_port'],
    [{ domain: 'x.example.com', peer_id: peerA, target_port: 65536 }, 'target_port'],
    [{ domain: 'x.example.com', peer_id: peerA, target_port: 'eighty' }, 'target_port'],
    [{ domain: 'x.example.com', peer_id: peerA }, 'target_port'],
    [{ domain: 'x.example.com', target_port: 80 }, 'peer_id'],
    [{ domain: 'x.example.com', peer_id: 987654, target_port: 80 }, 'peer_id'],
    [{ domain: 'x.example.com', peer_id: -1, target_port: 80 }, 'peer_id'],
    [{ domain: 'x.example.com', route_type: 'ftp', peer_id: peerA, target_port: 80 }, 'route_type'],
    [{ domain: 'x.example.com', target_kind: 'vpn', peer_id: peerA, target_port: 80 }, 'target_kind'],
    [{ domain: 'x.example.com', peer_id: peerA, target_port: 80, https_enabled: 'yes' }, 'https_enabled'],
    [{ domain: 'x.example.com', peer_id: peerA, target_port: 80, l4_listen_port: 2222 }, 'l4_listen_port'],
    [{ domain: 'x.example.com', route_type: 'l4', peer_id: peerA, target_port: 22, l4_protocol: 'tcp' }, 'l4_listen_port'],
    [{ domain: 'x.example.com', route_type: 'l4', peer_id: peerA, target_port: 22, l4_listen_port: 2222 }, 'l4_protocol'],
    [
      { domain: 'x.example.com', route_type: 'l4', peer_id: peerA, target_port: 53, l4_protocol: 'udp', l4_listen_port: 5353, l4_tls_mode: 'passthrough' },
      'l4_tls_mode',
    ],
    [{ domain: 'x.example.com', route_type: 'l4', peer_id: peerA, target_port: 22, l4_protocol: 'sctp', l4_listen_port: 2222 }, 'l4_protocol'],
    [
      { domain: 'x.example.com', route_type: 'l4', peer_id: peerA, target_port: 22, l4_protocol: 'tcp', l4_listen_port: 2222, https_enabled: true },
      'https_enabled',
    ],
    [{ domain: 'x.example.com', target_kind: 'gateway', target_peer_id: peerA, target_lan_host: '192.168.1.10', target_lan_port: 80 }, 'target_peer_id'],
    [{ domain: 'x.example.com', target_kind: 'gateway', target_peer_id: gateway, target_lan_port: 80 }, 'target_lan_host'],
    [{ domain: 'x.example.com', target_kind: 'gateway', target_peer_id: gateway, target_lan_host: 'bad host!', target_lan_port: 80 }, 'target_lan_host'],
    [
      { domain: 'x.example.com', target_kind: 'gateway', target_peer_id: gateway, target_lan_host: '192.168.1.10', target_lan_port: 80, wol_enabled: true },
      'wol_mac',
    ],
    [
      { domain: 'x.example.com', target_kind: 'gateway', target_peer_id: gateway, target_lan_host: '192.168.1.10', target_lan_port: 80, wol_mac: 'zz:zz' },
      'wol_mac',
    ],
    [{ domain: 'x.example.com', peer_id: peerA, target_port: 80, target_lan_host: '192.168.1.10' }, 'target_lan_host'],
    [{ domain: 'x.example.com', peer_id: peerA, target_port: 80, ip_filter_enabled: true, ip_filter_rules: ['300.1.1.1'] }, 'ip_filter_rules.0'],
    [{ domain: 'x.example.com', peer_id: peerA, target_port: 80, ip_filter_enabled: true, ip_filter_rules: [] }, 'ip_filter_rules'],
    [{ domain: 'x.example.com', peer_id: peerA, target_port: 80, ip_filter_mode: 'greylist' }, 'ip_filter_mode'],
    [{ domain: 'x.example.com', peer_id: peerA, target_port: 80, acl_enabled: true, acl_peer_ids: [987654] }, 'acl_peer_ids'],
    [{ domain: 'x.example.com', peer_id: peerA, target_port: 80, acl_enabled: true }, 'acl_peer_ids'],
    [{ domain: 'x.example.com', peer_id: peerA, target_port: 80, rate_limit_window: 'fortnight' }, 'rate_limit_window'],
    [{ domain: 'x.example.com', peer_id: peerA, target_port: 80, rate_limit_requests: 0 }, 'rate_limit_requests'],
    [{ domain: 'x.example.com', peer_id: peerA, target_port: 80, retry_count: 11 }, 'retry_count'],
    [{ domain: 'x.example.com', peer_id: peerA, target_port: 80, retry_status_codes: '502;503' }, 'retry_status_codes'],
    [{ domain: 'x.example.com', peer_id: peerA, target_port: 80, circuit_breaker_timeout: 0 }, 'circuit_breaker_timeout'],
    [{ domain: 'x.example.com', peer_id: peerA, target_port: 80, mirror_enabled: true }, 'mirror_targets'],
    [{ domain: 'x.example.com', peer_id: peerA, target_port: 80, mirror_targets: ['not a target'] }, 'mirror_targets.0'],
    [{ domain: 'x.example.com', peer_id: peerA, target_port: 80, bot_blocker_config: [1, 2] }, 'bot_blocker_config'],
    [{ domain: 'x.example.com', peer_id: peerA, target_port: 80, basic_auth_user: 'bob' }, 'basic_auth_password'],
    [{ domain: 'x.example.com', peer_id: peerA, target_port: 80, basic_auth_user: 'a:b', basic_auth_password: 'pw' }, 'basic_auth_user'],
    [{ domain: 'x.example.com', peer_id: peerA, target_port: 80, basic_auth_password: 'pw' }, 'basic_auth_user'],
    [{ domain: 'x.example.com', peer_id: peerA, target_port: 80, user_ids: [987654] }, 'user_ids'],
    [{ domain: 'x.example.com', peer_id: peerA, target_port: 80, description: 'x'.repeat(501) }, 'description'],
  ];
  for (const [body, field] of bad) {
    const r = await call('/routes', 'POST', body);
    assert.ok([400, 422].includes(r.status), `${JSON.stringify(body)} → ${r.status} ${JSON.stringify(r.data)}`);
    assert.equal(r.data.ok, false);
    assert.ok(r.data.fields && field in r.data.fields, `${JSON.stringify(body)}: expected fields.${field}, got ${JSON.stringify(r.data.fields)}`);
  }
  const existing = (await call('/routes?limit=1')).data.routes[0];
  for (const [body, field] of [
    [{}, '_'],
    [{ target_port: 99999 }, 'target_port'],
    [{ domain: '' }, 'domain'],
    [{ route_type: 'l4' }, 'l4_protocol'],
  ] as [unknown, string][]) {
    const r = await call(`/routes/${existing.id}`, 'PUT', body);
    assert.ok([400, 422].includes(r.status), JSON.stringify(body));
    assert.ok(field in r.data.fields!, `${JSON.stringify(body)}: ${JSON.stringify(r.data.fields)}`);
  }
  for (const [p, body] of [
    ['/routes/batch', { action: 'explode', ids: [1] }],
    ['/routes/batch', { action: 'delete', ids: [] }],
    ['/routes/check-dns', { domain: 'no spaces.example.com' }],
  ] as const) {
    const r = await call(p, 'POST', body);
    assert.equal(r.status, 400, `${p} ${JSON.stringify(body)}`);
    assert.ok(r.data.fields, p);
  }
  for (const q of ['limit=0', 'offset=-1', 'type=ftp']) {
    const r = await call(`/routes?${q}`);
    assert.equal(r.status, 400, q);
    assert.ok(r.data.fields, q);
  }
  assert.equal((await call('/routes/peers?peer_type=robot')).status, 400);
  assert.deepEqual((await call(`/routes/${existing.id}`)).data.route, existing, 'the route is unchanged');
  assert.equal(await routeCount(), before, 'nothing was written');
  assert.equal(proxy().loads, loads, 'nothing was rendered for a refused write');
});

test('duplicate domain and port collisions: 409, nothing written', async () => {
  const before = await routeCount();
  const r = await call('/routes', 'POST', { domain: 'APP.example.com', peer_id: peerB, target_port: 9000 });
  assert.equal(r.status, 409);
  assert.match(r.data.error!, /already used by route/);
  assert.equal(r.data.fields, undefined);

  const ssh = await call('/routes', 'POST', {
    domain: 'ssh.example.com',
    route_type: 'l4',
    l4_protocol: 'tcp',
    l4_listen_port: 2222,
    peer_id: peerA,
    target_port: 22,
  });
  assert.equal(ssh.status, 201, JSON.stringify(ssh.data));
  assert.equal(ssh.data.route.l4_tls_mode, 'none');
  const clash = await call('/routes', 'POST', {
    domain: 'other.example.com',
    route_type: 'l4',
    l4_protocol: 'tcp',
    l4_listen_port: 2222,
    peer_id: peerB,
    target_port: 22,
  });
  assert.equal(clash.status, 409);
  assert.match(clash.data.error!, /2222\/tcp is already used by route/);
  // The same port over UDP is a different socket.
  const udp = await call('/routes', 'POST', {
    domain: 'ssh.example.com',
    route_type: 'l4',
    l4_protocol: 'udp',
    l4_listen_port: 2222,
    peer_id: peerB,
    target_port: 53,
  });
  assert.equal(udp.status, 201, JSON.stringify(udp.data));
  // An HTTP route may share its name with L4 routes.
  for (const [port, proto, re] of [
    [8080, 'tcp', /GATEHOUSE_HTTP_PORT/],
    [8443, 'udp', /GATEHOUSE_HTTPS_PORT/],
    [s.deps.config.port, 'tcp', /GATEHOUSE_PORT/],
    [2999, 'tcp', /GATEHOUSE_CADDY_ADMIN/],
    [51999, 'udp', /GATEHOUSE_WG_PORT/],
  ] as const) {
    const own = await call('/routes', 'POST', {
      domain: 'own.example.com',
      route_type: 'l4',
      l4_protocol: proto,
      l4_listen_port: port,
      peer_id: peerA,
      target_port: 1,
    });
    assert.equal(own.status, 409, `${port}/${proto}`);
    assert.match(own.data.error!, re);
  }
  // Moving another route onto a taken port is refused too.
  const moved = await call(`/routes/${udp.data.route.id}`, 'PUT', { l4_protocol: 'tcp' });
  assert.equal(moved.status, 409);
  assert.equal((await call(`/routes/${udp.data.route.id}`)).data.route.l4_protocol, 'udp');
  assert.equal(await routeCount(), before + 2);
});

test('partial update, type change clears the other type, toggle, delete', async () => {
  const c = await call('/routes', 'POST', { domain: 'edit.example.com', peer_id: peerA, target_port: 80, https_enabled: true, description: 'first' });
  const id = c.data.route.id;
  const u = await call(`/routes/${id}`, 'PUT', { target_port: '8081' });
  assert.equal(u.status, 200, JSON.stringify(u.data));
  assert.equal(u.data.route.target_port, '8081');
  assert.equal(u.data.route.description, 'first');
  assert.equal(u.data.route.https_enabled, true);

  const l4 = await call(`/routes/${id}`, 'PUT', { route_type: 'l4', l4_protocol: 'tcp', l4_listen_port: 2323 });
  assert.equal(l4.status, 200, JSON.stringify(l4.data));
  assert.equal(l4.data.route.https_enabled, false, 'HTTP-only settings are cleared when the type changes');
  assert.equal(l4.data.route.l4_tls_mode, 'none');
  const back = await call(`/routes/${id}`, 'PUT', { route_type: 'http' });
  assert.equal(back.data.route.l4_listen_port, null);
  assert.equal(back.data.route.l4_protocol, null);

  const gw = await call(`/routes/${id}`, 'PUT', {
    target_kind: 'gateway',
    target_peer_id: gateway,
    target_lan_host: '192.168.1.20',
    target_lan_port: 8080,
    wol_enabled: true,
    wol_mac: 'aa-bb-cc-dd-ee-ff',
  });
  assert.equal(gw.status, 200, JSON.stringify(gw.data));
  assert.equal(gw.data.route.peer_id, null);
  assert.equal(gw.data.route.target_port, null);
  assert.equal(gw.data.route.wol_mac, 'AA:BB:CC:DD:EE:FF');
  const t1 = await call(`/routes/${id}/toggle`, 'PUT');
  assert.equal(t1.status, 200);
  assert.equal(t1.data.enabled, false);
  const cfg = await proxy().render();
  assert.equal(hostMap(cfg)['edit.example.com'], undefined, 'a disabled route is not rendered');
  assert.equal((await call(`/routes/${id}/toggle`, 'PUT')).data.route.enabled, true);

  assert.equal((await call(`/routes/${id}`, 'DELETE')).status, 200);
  assert.equal((await call(`/routes/${id}`)).status, 404);
  assert.equal((await call(`/routes/${id}`, 'DELETE')).status, 404);
  assert.equal((await call(`/routes/${id}/toggle`, 'PUT')).status, 404);
  assert.equal((await call(`/routes/${id}`, 'PUT', { target_port: 1 })).status, 404);
});

test('per-route settings are stored with defaults; basic-auth password is bcrypt-hashed and never returned', async () => {
  const r = await call('/routes', 'POST', {
    domain: 'settings.example.com',
    peer_id: peerA,
    target_port: 80,
    https_enabled: true,
    bot_blocker_enabled: true,
    bot_blocker_config: { custom_user_agents: ['evilbot'] },
    monitoring_enabled: true,
    ip_filter_enabled: true,
    ip_filter_rules: ['192.168.1.0/24', '2001:db8::1'],
    acl_enabled: true,
    acl_peer_ids: [peerA, peerB],
    rate_limit_enabled: true,
    retry_enabled: true,
    retry_status_codes: '503, 502,503',
    circuit_breaker_enabled: true,
    mirror_enabled: true,
    mirror_targets: ['10.8.0.9:80', { url: 'https://mirror.example.com/' }],
    debug_enabled: true,
  });
  assert.equal(r.status, 201, JSON.stringify(r.data));
  const route = r.data.route;
  assert.equal(route.bot_blocker_mode, 'block');
  assert.deepEqual(route.bot_blocker_config, { custom_user_agents: ['evilbot'] });
  assert.deepEqual(route.mirror_targets, [{ url: 'http://10.8.0.9' }, { url: 'https://mirror.example.com' }]);
  assert.equal(route.ip_filter_mode, 'whitelist');
  assert.deepEqual(route.ip_filter_rules, ['192.168.1.0/24', '2001:db8::1']);
  assert.deepEqual(route.acl_peer_ids, [peerA, peerB]);
  assert.equal(route.rate_limit_requests, 100);
  assert.equal(route.rate_limit_window, '1m');
  assert.equal(route.retry_count, 3);
  assert.equal(route.retry_status_codes, '503,502');
  assert.equal(route.circuit_breaker_threshold, 5);
  assert.equal(route.circuit_breaker_timeout, 30);
  assert.equal(route.cb_failure_count, 0);
  assert.equal(route.cb_opened_at, null);
  // Basic auth cannot be combined with the IP filter: switch it off in the same update.
  const ba = await call(`/routes/${route.id}`, 'PUT', { ip_filter_enabled: false, basic_auth_user: 'bob', basic_auth_password: 's3cret pw' });
  assert.equal(ba.status, 200, JSON.stringify(ba.data));
  assert.equal(ba.data.route.basic_auth_user, 'bob');
  assert.equal(ba.data.route.basic_auth_password, null);
  assert.equal(ba.data.route.basic_auth_password_set, true);
  const row = ((await s.deps.db.models.Route.findByPk(route.id, { raw: true })) as Row<'Route'> | null)!;
  assert.match(row.basic_auth_password_hash!, /^\$2[aby]\$12\$/);
  const bcrypt = (await import('bcrypt')).default;
  assert.ok(await bcrypt.compare('s3cret pw', row.basic_auth_password_hash!));
  const list = await call('/routes?limit=1000');
  assert.ok(!JSON.stringify(list.data).includes(row.basic_auth_password_hash!), 'the hash never appears in a response');

  // Updating other fields keeps the password; removing the user removes it.
  const u = await call(`/routes/${route.id}`, 'PUT', { debug_enabled: false, basic_auth_password: null });
  assert.equal(u.status, 422, 'a user without a password is refused');
  const keep = await call(`/routes/${route.id}`, 'PUT', { debug_enabled: false });
  assert.equal(keep.data.route.basic_auth_password_set, true);
  const off = await call(`/routes/${route.id}`, 'PUT', { basic_auth_user: null });
  assert.equal(off.data.route.basic_auth_password_set, false);
  assert.equal(((await s.deps.db.models.Route.findByPk(route.id, { raw: true })) as Row<'Route'> | null)!.basic_auth_password_hash, null);
});

test('list: total, limit, offset, type filter', async () => {
  const all = await call('/routes?limit=1000');
  assert.equal(all.status, 200);
  assert.equal(all.data.total, await routeCount());
  assert.equal(all.data.routes.length, all.data.total);
  const ids = all.data.routes.map((r: Route) => r.id);
  assert.deepEqual(
    ids,
    [...ids].sort((a: number, b: number) => a - b),
  );
  const page = await call('/routes?limit=2&offset=1');
  assert.deepEqual(
    page.data.routes.map((r: Route) => r.id),
    ids.slice(1, 3),
  );
  assert.equal(page.data.total, all.data.total);
  const l4 = await call('/routes?type=l4');
  assert.ok(l4.data.routes.length > 0);
  assert.ok(l4.data.routes.every((r: Route) => r.route_type === 'l4'));
  assert.equal(l4.data.total, all.data.routes.filter((r: Route) => r.route_type === 'l4').length);
  const alias = await s.req('/api/routes?type=http', { headers: auth });
  assert.equal(alias.status, 200);
  assert.ok(objsAt(alias.data, 'routes').every((r) => r.route_type === 'http'));
});

test('batch: per-id results, one load for the whole batch', async () => {
  const ids: number[] = [];
  for (let i = 0; i < 3; i++) ids.push((await call('/routes', 'POST', { domain: `batch${i}.example.com`, peer_id: peerB, target_port: 80 })).data.route.id);
  let loads = proxy().loads;
  const off = await call('/routes/batch', 'POST', { action: 'disable', ids: [...ids, 987654] });
  assert.equal(off.status, 200, JSON.stringify(off.data));
  assert.deepEqual(off.data.results, [
    ...ids.map((id) => ({ id, ok: true })),
    { id: 987654, ok: false, error: 'Route not found', code: 'resource.not_found', params: { what: 'Route' } },
  ]);
  assert.equal(off.data.succeeded, 3);
  assert.equal(off.data.failed, 1);
  assert.equal(proxy().loads, loads + 1);
  for (const id of ids) assert.equal((await call(`/routes/${id}`)).data.route.enabled, false);
  loads = proxy().loads;
  const on = await call('/routes/batch', 'POST', { action: 'enable', ids: ids.slice(0, 2) });
  assert.equal(on.data.succeeded, 2);
  assert.equal((await call(`/routes/${ids[0]}`)).data.route.enabled, true);
  assert.equal((await call(`/routes/${ids[2]}`)).data.route.enabled, false);
  const del = await call('/routes/batch', 'POST', { action: 'delete', ids });
  assert.equal(del.data.succeeded, 3);
  for (const id of ids) assert.equal((await call(`/routes/${id}`)).status, 404);
  assert.equal(proxy().loads, loads + 2);
});

test('concurrent writes coalesce into fewer loads, each request keeps its own outcome', async () => {
  const before = await routeCount();
  const loads = proxy().loads;
  const batches = proxy().batches;
  const bodies = Array.from({ length: 20 }, (_v, i) => ({ domain: `burst${i}.example.com`, peer_id: i % 2 ? peerA : peerB, target_port: 1000 + i }));
  // Two of them claim the same domain: exactly one of the pair wins.
  bodies.push({ domain: 'burst3.example.com', peer_id: peerA, target_port: 1 });
  const res = await Promise.all(bodies.map((b) => call('/routes', 'POST', b)));
  const created = res.filter((r) => r.status === 201);
  const conflicts = res.filter((r) => r.status === 409);
  assert.equal(created.length, 20, JSON.stringify(res.filter((r) => r.status !== 201).map((r) => r.data)));
  assert.equal(conflicts.length, 1);
  assert.equal(await routeCount(), before + 20);
  const usedLoads = proxy().loads - loads;
  if (process.env.TEST_VERBOSE) console.log(`20 concurrent creates: ${usedLoads} loads`);
  assert.ok(usedLoads < 20, `20 writes used ${usedLoads} loads`);
  assert.ok(proxy().batches - batches < 21);
  // The last load covered every write: what the database renders now is what was loaded.
  assert.equal(proxy().status().config_hash, proxyConfigHash(await proxy().render()));
  const hosts = hostMap(await proxy().render());
  for (let i = 0; i < 20; i++) assert.ok(hosts[`burst${i}.example.com`], `burst${i}`);
});

test('a route to a disabled peer renders as a 502 page; enabling the peer restores the proxy', async () => {
  const peer = (await call('/peers', 'POST', { name: 'sleepy' })).data.peer;
  const r = await call('/routes', 'POST', { domain: 'sleepy.example.com', peer_id: peer.id, target_port: 80 });
  assert.equal(r.status, 201);
  const loadsBefore = proxy().loads;
  assert.equal((await call(`/peers/${peer.id}/toggle`, 'PUT')).status, 200);
  await waitFor(() => proxy().loads !== loadsBefore, 2000, { intervalMs: 20, what: 'a proxy load after the toggle' });
  assert.ok(proxy().loads >= loadsBefore + 1, 'toggling a routed peer re-applies the proxy by itself');
  let h = objAt(hostMap(await proxy().render()), 'sleepy.example.com', 'routes', 0, 'handle', 0);
  assert.equal(h.handler, 'static_response');
  assert.equal(h.status_code, 502);
  await call(`/peers/${peer.id}/toggle`, 'PUT');
  h = objAt(hostMap(await proxy().render()), 'sleepy.example.com', 'routes', 0, 'handle', 0);
  assert.deepEqual(h, { handler: 'vars', gatehouse_upstream: `${peer.address.split('/')[0]}:80` });
  // Deleting a peer that routes point to is refused (peers feature policy).
  const del = await call(`/peers/${peer.id}`, 'DELETE');
  assert.equal(del.status, 409);
  assert.match(del.data.error!, /sleepy\.example\.com/);
});

test('a peer that expires: the next reconcile pass renders its routes unavailable (only a host change)', async () => {
  const peer = (await call('/peers', 'POST', { name: 'brief' })).data.peer;
  const r = await call('/routes', 'POST', { domain: 'brief.example.com', peer_id: peer.id, target_port: 80 });
  assert.equal(r.status, 201);
  const first = objAt(hostMap(proxy().state.config()), 'brief.example.com', 'routes', 0, 'handle', 0);
  assert.equal(first.handler, 'vars');
  await proxy().apply({ verify: true }); // a reconcile pass (a full rendering at most every 30 minutes)
  await s.deps.db.models.Peer.update({ expires_at: Date.now() + 50 }, { where: { id: peer.id } });
  await new Promise((res) => setTimeout(res, 100)); // not a condition: the expiry time has to pass
  const full = proxy().fullLoads;
  await proxy().apply({ verify: true });
  const h = objAt(hostMap(proxy().state.config()), 'brief.example.com', 'routes', 0, 'handle', 0);
  assert.equal(h.handler, 'static_response');
  assert.equal(h.status_code, 502);
  assert.equal(proxy().fullLoads, full, 'a host change, not a full load');
  await call(`/routes/${r.data.route.id}`, 'DELETE');
});

test('GET /routes/peers: online status, gateway flag, group; peer_type=gateway filters', async () => {
  const now = Date.now();
  await s.deps.db.models.Peer.update({ latest_handshake: now - 30_000 }, { where: { id: peerA } });
  await s.deps.db.models.Peer.update({ latest_handshake: now - 3_600_000 }, { where: { id: peerB } });
  const all = await call('/routes/peers');
  assert.equal(all.status, 200);
  const a = all.data.peers.find((p) => p.id === peerA);
  const b = all.data.peers.find((p) => p.id === peerB);
  const gw = all.data.peers.find((p) => p.id === gateway);
  assert.equal(a!.isOnline, true);
  assert.equal(b!.isOnline, false);
  assert.equal(a!.is_gateway, false);
  assert.deepEqual(a!.group, { id: groupId, name: 'Home', color: '#00ff00' });
  assert.equal(a!.group_id, groupId);
  assert.equal(gw!.is_gateway, true);
  assert.equal(gw!.peer_type, 'gateway');
  assert.equal(gw!.api_port, 9876);
  assert.match(a!.ip, /^\d+\.\d+\.\d+\.\d+$/);
  const only = await call('/routes/peers?peer_type=gateway');
  assert.deepEqual(
    only.data.peers.map((p) => p.id),
    [gateway],
  );
});

test('check-dns: A records against GATEHOUSE_PUBLIC_IP; lookup failure gives matches false and []', async () => {
  const server = await localDns({
    'good.example.com': ['203.0.113.7', '198.51.100.1'],
    'bad.example.com': ['198.51.100.1'],
    'gatehouse-dns-check.wild.example.com': ['203.0.113.7'],
    'xn--bcher-kva.example.com': ['203.0.113.7'],
  });
  const svc = s.deps.routes as RoutesService;
  const original = svc.resolver;
  const resolver = new dns.promises.Resolver({ timeout: 1000, tries: 1 });
  resolver.setServers([`127.0.0.1:${server.port}`]);
  svc.resolver = resolver;
  try {
    const good = await call('/routes/check-dns', 'POST', { domain: 'good.example.com' });
    assert.equal(good.status, 200, JSON.stringify(good.data));
    assert.deepEqual(good.data, {
      ok: true,
      domain: 'good.example.com',
      matches: true,
      resolvedIps: ['198.51.100.1', '203.0.113.7'],
      expectedIp: '203.0.113.7',
      expectedIpSource: 'env',
      publicHost: s.deps.publicHost.current().host,
    });
    const bad = await call('/routes/check-dns', 'POST', { domain: 'bad.example.com' });
    assert.equal(bad.data.matches, false);
    assert.deepEqual(bad.data.resolvedIps, ['198.51.100.1']);
    const missing = await call('/routes/check-dns', 'POST', { domain: 'nothing.example.com' });
    assert.equal(missing.status, 200);
    assert.equal(missing.data.matches, false);
    assert.deepEqual(missing.data.resolvedIps, []);
    const wild = await call('/routes/check-dns', 'POST', { domain: '*.wild.example.com' });
    assert.equal(wild.data.matches, true);
    const idn = await call('/routes/check-dns', 'POST', { domain: 'Bücher.example.com' });
    assert.equal(idn.data.domain, 'xn--bcher-kva.example.com');
    assert.equal(idn.data.matches, true);
  } finally {
    svc.resolver = original;
    server.close();
  }
});

test('caddy status and reload in the no-proxy mode', async () => {
  const st = await call('/caddy/status');
  assert.equal(st.status, 200);
  assert.equal(st.data.running, false);
  assert.equal(st.data.pid, null);
  assert.equal(st.data.admin_api, '127.0.0.1:2999');
  assert.equal(st.data.managed, false);
  assert.equal(st.data.mode, 'render-only');
  const r = await call('/caddy/reload', 'POST');
  assert.equal(r.status, 200);
  assert.equal(r.data.loaded, false);
  assert.equal(r.data.config_hash, proxyConfigHash(await proxy().render()));
});

test('an L4 route without TLS needs no domain; with passthrough or terminate it does (422 fields.domain: a rule the document cannot state; nothing written)', async () => {
  const before = await routeCount();
  const loads = proxy().loads;
  for (const tls of ['passthrough', 'terminate'] as const) {
    const r = await call('/routes', 'POST', { route_type: 'l4', peer_id: peerA, target_port: 22, l4_protocol: 'tcp', l4_listen_port: 2424, l4_tls_mode: tls });
    assert.equal(r.status, 422, `${tls}: ${JSON.stringify(r.data)}`);
    assert.ok(r.data.fields && 'domain' in r.data.fields, `${tls}: ${JSON.stringify(r.data.fields)}`);
  }
  const httpNoDomain = await call('/routes', 'POST', { peer_id: peerA, target_port: 80 });
  assert.equal(httpNoDomain.status, 422);
  assert.ok('domain' in httpNoDomain.data.fields!);
  assert.equal(await routeCount(), before, 'nothing was written');
  assert.equal(proxy().loads, loads, 'nothing was rendered');

  const ok = await call('/routes', 'POST', {
    route_type: 'l4',
    peer_id: peerA,
    target_port: 22,
    l4_protocol: 'tcp',
    l4_listen_port: 2424,
    l4_tls_mode: 'none',
  });
  assert.equal(ok.status, 201, JSON.stringify(ok.data));
  assert.equal(ok.data.route.domain, '');
  const udp = await call('/routes', 'POST', { route_type: 'l4', peer_id: peerA, target_port: 53, l4_protocol: 'udp', l4_listen_port: 5354 });
  assert.equal(udp.status, 201, JSON.stringify(udp.data));
  // Switching it to TLS needs a domain: refused with fields.domain, the route unchanged.
  const id = ok.data.route.id;
  const sw = await call(`/routes/${id}`, 'PUT', { l4_tls_mode: 'passthrough' });
  assert.ok([400, 422].includes(sw.status), JSON.stringify(sw.data));
  assert.ok('domain' in sw.data.fields!, JSON.stringify(sw.data.fields));
  assert.equal((await call(`/routes/${id}`)).data.route.l4_tls_mode, 'none');
  const named = await call(`/routes/${id}`, 'PUT', { l4_tls_mode: 'passthrough', domain: 'ssh.example.com' });
  assert.equal(named.status, 200, JSON.stringify(named.data));
  await call(`/routes/${id}`, 'DELETE');
  await call(`/routes/${udp.data.route.id}`, 'DELETE');
});

test('an empty create names every missing field in one answer: domain, peer and port (gateway: its three; L4: protocol and port), nothing written', async () => {
  const before = await routeCount();
  const cases: [Record<string, unknown>, number, string[]][] = [
    [{}, 422, ['domain', 'peer_id', 'target_port']],
    [{ domain: '', peer_id: null, target_port: null }, 400, ['domain', 'peer_id', 'target_port']],
    [{ domain: 'bad domain', target_port: 'x' }, 400, ['domain', 'peer_id', 'target_port']],
    [{ domain: 'all.example.com', target_kind: 'gateway' }, 422, ['target_lan_host', 'target_lan_port', 'target_peer_id']],
    [{ route_type: 'l4' }, 422, ['l4_listen_port', 'l4_protocol', 'peer_id', 'target_port']],
  ];
  for (const [body, status, fields] of cases) {
    const r = await call('/routes', 'POST', body);
    assert.equal(r.status, status, JSON.stringify([body, r.data]));
    assert.deepEqual(Object.keys(r.data.fields!).sort(), fields, JSON.stringify(body));
    assert.deepEqual(Object.keys(r.data.field_codes!).sort(), fields);
  }
  const port = await call('/routes', 'POST', { domain: 'x.example.com', peer_id: peerA, target_port: 'x' });
  assert.equal(port.data.fields!.target_port, 'must be a port from 1 to 65535', 'a port in words, not the pattern');
  assert.equal(await routeCount(), before);
});
