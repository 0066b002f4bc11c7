// Route protection settings through the routes API (no-proxy mode: every write renders the Caddy
// configuration inside its transaction): the combination rules of per-route authentication
// (basic auth needs HTTPS, basic auth excludes route auth and the IP filter, route auth only on HTTP),
// IP rule normalization, ACL peers that must exist; refused writes change nothing; accepted ones
// reach the rendered configuration in the protection order.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, apiToken, bearer, type TestServer, apiCall } from './lib/server.js';
import type { ProxyService } from '../src/proxy/service.js';
import { at, hostMap, objAt, objsAt } from '../../test/lib/json.js';
import type { Row } from './lib/rows.js';

let s: TestServer;
let auth: Record<string, string>;
let peerA: number;
let peerB: number;

const proxy = () => s.deps.proxy as ProxyService;
const call = apiCall(
  () => s,
  () => auth,
);
const rowOf = async (id: number) => ((await s.deps.db.models.Route.findByPk(id, { raw: true })) as Row<'Route'> | null)!;

before(async () => {
  s = await startTestServer({ GATEHOUSE_RATE_LIMIT_ADMIN: '100000' });
  auth = bearer(await apiToken(s));
  peerA = (await call('/peers', 'POST', { name: 'prot-a' })).data.peer.id;
  peerB = (await call('/peers', 'POST', { name: 'prot-b' })).data.peer.id;
});
after(async () => s.close());

test('refused protection settings: 400 with fields and a reason, nothing written, nothing rendered', async () => {
  const base = { domain: 'p.example.com', peer_id: peerA, target_port: 80 };
  const bad: [Record<string, unknown>, string, RegExp?][] = [
    [{ ...base, basic_auth_user: 'bob', basic_auth_password: 'pw' }, 'https_enabled', /HTTPS/],
    [
      { ...base, https_enabled: true, basic_auth_user: 'bob', basic_auth_password: 'pw', ip_filter_enabled: true, ip_filter_rules: ['10.0.0.0/8'] },
      'ip_filter_enabled',
      /IP filter/,
    ],
    [{ ...base, ip_filter_enabled: true, ip_filter_rules: ['10.0.0.1', 'not-an-ip'] }, 'ip_filter_rules.1'],
    [{ ...base, ip_filter_enabled: true, ip_filter_rules: [{ value: '10.0.0.0/33' }] }, 'ip_filter_rules.0'],
    [{ ...base, ip_filter_enabled: true, ip_filter_rules: ['fe80::1%eth0'] }, 'ip_filter_rules.0'],
    [{ ...base, ip_filter_enabled: true, ip_filter_rules: [42] }, 'ip_filter_rules.0'],
    [{ ...base, ip_filter_enabled: true, ip_filter_rules: 'x'.repeat(10) }, 'ip_filter_rules'],
    [{ ...base, acl_enabled: true, acl_peer_ids: [peerA, 987654] }, 'acl_peer_ids', /987654/],
    [{ ...base, acl_enabled: true, acl_peer_ids: ['me'] }, 'acl_peer_ids.0'],
    [{ ...base, rate_limit_enabled: true, rate_limit_window: '1w' }, 'rate_limit_window'],
  ];
  const count = await s.deps.db.models.Route.count();
  const loads = proxy().loads;
  for (const [body, field, reason] of bad) {
    const r = await call('/routes', 'POST', body);
    assert.ok([400, 422].includes(r.status), `${JSON.stringify(body)} → ${r.status} ${JSON.stringify(r.data)}`);
    assert.ok(
      r.data.fields && Object.keys(r.data.fields).some((k) => k === field || k.startsWith(`${field}.`)),
      `${JSON.stringify(body)}: expected fields.${field}, got ${JSON.stringify(r.data.fields)}`,
    );
    if (reason) assert.match(r.data.fields[field], reason);
  }
  assert.equal(await s.deps.db.models.Route.count(), count, 'nothing was written');
  assert.equal(proxy().loads, loads, 'nothing was rendered');
});

test('IP rules are normalized (strings or {value, note}), stored as strings and rendered into Caddy', async () => {
  const r = await call('/routes', 'POST', {
    domain: 'ipf.example.com',
    peer_id: peerA,
    target_port: 80,
    ip_filter_enabled: true,
    ip_filter_mode: 'blacklist',
    ip_filter_rules: [' 203.0.113.9/24 ', { value: '2001:DB8:0:0::1', note: 'office' }, '203.0.113.0/24', '::ffff:198.51.100.7', '192.0.2.1/32'],
  });
  assert.equal(r.status, 201, JSON.stringify(r.data));
  const want = ['203.0.113.0/24', '2001:db8::1', '198.51.100.7', '192.0.2.1'];
  assert.deepEqual(r.data.route.ip_filter_rules, want);
  assert.deepEqual(JSON.parse((await rowOf(r.data.route.id)).ip_filter_rules!), want);
  const entry = objsAt(hostMap(await proxy().render()), 'ipf.example.com', 'routes');
  assert.deepEqual(entry[0].match, [{ remote_ip: { ranges: want } }]);
  assert.equal(at(entry[0], 'handle', 0, 'status_code'), 403);
});

test('basic auth on an HTTPS route: saved, rendered after the rate limit; switching HTTPS off is refused', async () => {
  const r = await call('/routes', 'POST', {
    domain: 'basic.example.com',
    peer_id: peerA,
    target_port: 80,
    https_enabled: true,
    basic_auth_user: 'bob',
    basic_auth_password: 'right-pass',
    rate_limit_enabled: true,
    rate_limit_requests: 5,
    acl_enabled: true,
    acl_peer_ids: [peerB],
  });
  assert.equal(r.status, 201, JSON.stringify(r.data));
  const id = r.data.route.id;
  const entry = objsAt(hostMap(await proxy().render(), 'gatehouse_https'), 'basic.example.com', 'routes');
  assert.equal(at(entry[0], 'handle', 0, 'status_code'), 403, 'ACL first');
  const peerBAddr = (await call(`/peers/${peerB}`)).data.peer.address.split('/')[0];
  assert.deepEqual(at(entry[0], 'match', 0, 'not', 0, 'remote_ip', 'ranges'), [peerBAddr]);
  // after the ACL: the share-link page, the rate limit, the share-link forward auth (route-auth.ts
  // shareLinkRoutes), then the basic auth unless a share link let the request in
  assert.deepEqual(
    entry.slice(1, 5).map((r) => objAt(r, 'handle', 0).handler),
    ['reverse_proxy', 'rate_limit', 'reverse_proxy', 'authentication'],
  );
  assert.equal(at(entry[4], 'handle', 0, 'providers', 'http_basic', 'accounts', 0, 'password'), (await rowOf(id)).basic_auth_password_hash);

  const before = await rowOf(id);
  const loads = proxy().loads;
  for (const [body, field] of [
    [{ https_enabled: false }, 'https_enabled'],
    [{ ip_filter_enabled: true, ip_filter_rules: ['10.0.0.0/8'] }, 'ip_filter_enabled'],
    [{ acl_peer_ids: [987654] }, 'acl_peer_ids'],
  ] as const) {
    const u = await call(`/routes/${id}`, 'PUT', body);
    assert.ok([400, 422].includes(u.status), JSON.stringify(u.data));
    assert.ok(field in u.data.fields!, JSON.stringify(u.data.fields));
  }
  assert.deepEqual(await rowOf(id), before, 'the route is unchanged');
  assert.equal(proxy().loads, loads, 'nothing was rendered');
});

test('route auth and basic auth exclude each other; a route with route auth cannot become L4; route auth renders forward auth', async () => {
  const r = await call('/routes', 'POST', { domain: 'login.example.com', peer_id: peerA, target_port: 80, https_enabled: true, rate_limit_enabled: true });
  assert.equal(r.status, 201, JSON.stringify(r.data));
  const id = r.data.route.id;
  const a = await call(`/routes/${id}/auth`, 'POST', {
    method: 'email_password',
    email: 'user@example.com',
    password: 'long-enough-pw',
    session_max_age: 3_600_000,
  });
  assert.ok(a.status === 200 || a.status === 201, JSON.stringify(a.data));
  const entry = objsAt(hostMap(await proxy().render(), 'gatehouse_https'), 'login.example.com', 'routes');
  assert.deepEqual(entry[0].match, [
    {
      path: [
        '/route-auth/login',
        '/route-auth/logout',
        '/route-auth/assets/login.css',
        '/route-auth/branding/logo',
        '/route-auth/branding/bg-image',
        '/route-auth/share',
        '/route-auth/oidc/start',
        '/route-auth/oidc/callback',
      ],
    },
  ]);
  assert.equal(at(entry[1], 'handle', 0, 'rewrite', 'uri'), '/route-auth/verify');
  assert.equal(at(entry[1], 'handle', 1, 'handler'), 'rate_limit', 'rate limit after auth');

  const before = await rowOf(id);
  const loads = proxy().loads;
  const ba = await call(`/routes/${id}`, 'PUT', { basic_auth_user: 'bob', basic_auth_password: 'pw' });
  assert.ok([400, 422].includes(ba.status), JSON.stringify(ba.data));
  assert.match(ba.data.fields!.basic_auth_user, /route auth/);
  const l4 = await call(`/routes/${id}`, 'PUT', {
    route_type: 'l4',
    l4_protocol: 'tcp',
    l4_listen_port: 24444,
    https_enabled: false,
    rate_limit_enabled: false,
  });
  assert.equal(l4.status, 422, JSON.stringify(l4.data));
  assert.match(l4.data.fields!.route_type, /route auth/);
  assert.deepEqual(await rowOf(id), before, 'the route is unchanged');
  assert.equal(proxy().loads, loads, 'nothing was rendered');

  // Removing route auth re-renders without forward auth; basic auth is then accepted.
  assert.equal((await call(`/routes/${id}/auth`, 'DELETE')).status, 200);
  const plain = await proxy().render();
  assert.ok(!JSON.stringify(hostMap(plain, 'gatehouse_https')['login.example.com']).includes('/route-auth/verify'));
  const ok = await call(`/routes/${id}`, 'PUT', { basic_auth_user: 'bob', basic_auth_password: 'pw' });
  assert.equal(ok.status, 200, JSON.stringify(ok.data));
});
