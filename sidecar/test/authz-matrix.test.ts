// Walks every registered endpoint (read from the server's own endpoint list, so endpoints added
// later are covered automatically) and checks who may call it.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { FINGERPRINT_HEADER } from '../src/http/auth.js';
import { startTestServer, login, apiToken, bearer, ADMIN, type TestServer } from './lib/server.js';
import { testLicenceKey } from './lib/licence.js';
import { SERVED_OUTSIDE_REGISTRY } from '../src/http/served-paths.js';
import { fullPath, leastRole, ROLES, roleAtLeast, scopeForPath, SCOPES, type Endpoint, type Role, type Scope } from '../src/http/registry.js';
import { openApiDocument } from './lib/openapi.js';
import { str } from '../../test/lib/json.js';
import type { Refusal } from './lib/api-types.js';

let s: TestServer;
let session: { cookie: string; csrf: string };
const tokens = new Map<string, string>();

/** A concrete path: ids that do not exist, so successful authorization hits a 404 or 400, not data. */
function concrete(e: Endpoint): string {
  return fullPath(e).replace(/:([A-Za-z_]+)/g, (_m, n: string) => (n === 'id' || /id$/i.test(n) ? '987654' : 'no-such-thing'));
}

/** A scope that does not cover the endpoint. */
function wrongScope(e: Endpoint): Scope {
  const required = e.scope !== undefined ? e.scope : scopeForPath(e.path);
  const candidates = SCOPES.filter((sc) => sc !== 'full-access' && sc !== 'read-only' && sc !== required);
  return candidates.find((c) => c !== 'client' && c !== 'gateway') ?? 'client';
}

before(async () => {
  s = await startTestServer({
    GATEHOUSE_RATE_LIMIT_ADMIN: '100000',
    GATEHOUSE_RATE_LIMIT_CLIENT: '100000',
    GATEHOUSE_RATE_LIMIT_HOSTNAME: '100000',
    GATEHOUSE_RATE_LIMIT_LOGIN: '100000',
  });
  session = await login(s);
  for (const sc of [...SCOPES, 'full-access']) tokens.set(sc, await apiToken(s, [sc]));
});
after(async () => s.close());

/** An endpoint at a concrete path (known at run time): read as a refusal's fields, what these checks read. */
const call = (e: Endpoint, headers: Record<string, string>) =>
  s.req<Refusal>(concrete(e), { method: e.method, headers: { accept: 'application/json', ...headers }, ...(e.method === 'GET' ? {} : { json: {} }) });

test('every admin endpoint: 401 without credentials, 401 with a gateway token, 403 with a wrong scope, 403 without CSRF, allowed with full access', async () => {
  const admin = s.endpoints.filter((e) => e.auth === 'admin');
  assert.ok(admin.length >= 20, `expected many admin endpoints, got ${admin.length}`);
  for (const e of admin) {
    const label = `${e.method} ${fullPath(e)}`;
    const anon = await call(e, {});
    assert.equal(anon.status, 401, `${label} without credentials: ${anon.status}`);
    assert.equal(anon.data.ok, false, label);
    const gw = await call(e, bearer('gthgw_' + 'x'.repeat(43)));
    assert.equal(gw.status, 401, `${label} with a gateway token: ${gw.status}`);
    const bogus = await call(e, bearer('gth_' + 'y'.repeat(43)));
    assert.equal(bogus.status, 401, `${label} with an unknown token: ${bogus.status}`);
    const required = e.scope !== undefined ? e.scope : scopeForPath(e.path);
    if (required !== 'any') {
      const wrong = wrongScope(e);
      const r = await call(e, bearer(tokens.get(wrong)!));
      assert.equal(r.status, 403, `${label} with scope ${wrong}: ${r.status} ${JSON.stringify(r.data)}`);
    }
    if (e.method !== 'GET') {
      const r = await call(e, { cookie: session.cookie });
      assert.equal(r.status, 403, `${label} with a session but no CSRF token: ${r.status}`);
      assert.match(r.data.error!, /CSRF/, label);
    } else if (required !== 'any' && required !== null && !e.adminRole && !e.secrets && !e.sessionOnly) {
      const r = await call(e, bearer(tokens.get('read-only')!));
      assert.ok(r.status !== 401 && r.status !== 403, `${label} with read-only: ${r.status}`);
    }
    if (required !== null && required !== 'any' && !e.adminRole && !e.secrets && !e.sessionOnly) {
      const r = await call(e, bearer(tokens.get(required)!));
      assert.ok(r.status !== 401 && r.status !== 403, `${label} with its own scope ${required}: ${r.status} ${JSON.stringify(r.data)}`);
    }
    const full = await call(e, bearer(tokens.get('full-access')!));
    if (e.sessionOnly) assert.equal(full.status, 403, `${label} (sessions only) with full-access: ${full.status}`);
    else assert.ok(full.status !== 401 && full.status !== 403, `${label} with full-access: ${full.status} ${JSON.stringify(full.data)}`);
    const withCsrf = await call(e, { cookie: session.cookie, 'x-csrf-token': session.csrf });
    assert.ok(withCsrf.status !== 401 && withCsrf.status !== 403, `${label} with session and CSRF: ${withCsrf.status} ${JSON.stringify(withCsrf.data)}`);
  }
});

/** Whether a token with these scopes passes an admin endpoint, by the rules of docs/guides/authentication.md "API tokens" and "Security". */
function tokenPasses(e: Endpoint, scopes: Scope[]): boolean {
  if (e.sessionOnly) return false;
  if (scopes.includes('full-access')) return true;
  if (e.secrets) return false;
  const readOnly = e.method === 'GET' && scopes.includes('read-only');
  if (e.adminRole) return readOnly;
  const required = e.scope !== undefined ? e.scope : scopeForPath(e.path);
  if (required === 'any') return true;
  return readOnly || (required !== null && scopes.includes(required));
}

/** Passed authentication and authorization: anything but 401/403 (a licence gate's 403 names its feature and comes after). */
const passed = (r: { status: number; data: { feature?: unknown } | null }) => r.status !== 401 && (r.status !== 403 || typeof r.data?.feature === 'string');

test('the secrets column: every admin endpoint × every token scope and session role; an endpoint that discloses secrets passes only full-access tokens and admin sessions', async () => {
  const admin = s.endpoints.filter((e) => e.auth === 'admin');
  const marked = admin.filter((e) => e.secrets);
  // the endpoints this rule was made for stay marked
  for (const must of [
    'GET /settings/backup',
    'GET /peers/:id/config',
    'GET /peers/:id/qr',
    'POST /peers/:id/gateway-env/rotate',
    'POST /tokens',
    'POST /users/:id/reset-password',
    'POST /routes/:id/auth/totp-setup',
    'PUT /smtp',
    'POST /settings/autobackup',
  ]) {
    assert.ok(
      marked.some((e) => `${e.method} ${e.path}` === must),
      `${must} is marked as disclosing secrets`,
    );
  }
  // a secret passes only the operator (its own areas: peers and routes) and the admin, but for the
  // caller's own account's (self-service, sessions only: a new TOTP secret, recovery codes)
  for (const e of marked)
    assert.ok(
      leastRole(e) === 'admin' || leastRole(e) === 'operator' || (e.selfService && e.sessionOnly && leastRole(e) === 'user'),
      `${e.method} ${e.path}: least role ${leastRole(e)}`,
    );
  for (const e of marked.filter((x) => leastRole(x) === 'operator'))
    assert.match(fullPath(e), /^\/api\/v1\/(peers|routes|rdp|gateways|peer-groups|tags)(\/|$)/, `${e.method} ${e.path}`);
  const full = bearer(tokens.get('full-access')!);
  const sessions: [Role, { cookie: string; csrf: string }][] = [['admin', session]];
  for (const role of ROLES.filter((r) => r !== 'admin')) {
    const made = await s.req('/api/v1/users', {
      method: 'POST',
      json: { username: `column-${role}`, password: 'column-user-password', role },
      headers: full,
    });
    assert.equal(made.status, 201, JSON.stringify(made.data));
    sessions.push([role, await login(s, { username: `column-${role}`, password: 'column-user-password' })]);
  }
  let checked = 0;
  for (const e of admin) {
    const label = `${e.method} ${fullPath(e)}${e.secrets ? ' (discloses secrets)' : ''}`;
    const required = e.scope !== undefined ? e.scope : scopeForPath(e.path);
    for (const sc of SCOPES) {
      const r = await call(e, bearer(tokens.get(sc)!));
      const expect = tokenPasses(e, [sc]);
      // 'any' endpoints pass every credential to their handler, which may still refuse a scope (the event stream)
      if (required === 'any' && !e.secrets && !expect) continue;
      if (expect && !(required === 'any' && sc !== 'full-access')) assert.ok(passed(r), `${label} with a ${sc} token: ${r.status} ${JSON.stringify(r.data)}`);
      if (!expect) {
        assert.equal(r.status, 403, `${label} with a ${sc} token: ${r.status} ${JSON.stringify(r.data)}`);
        if (e.sessionOnly) assert.match(r.data.error!, /session only/, label);
        else if (e.secrets) assert.match(r.data.error!, /secrets/, label);
      }
      checked++;
    }
    for (const [role, sess] of sessions) {
      const r = await call(e, { cookie: sess.cookie, 'x-csrf-token': sess.csrf });
      if (roleAtLeast(role, leastRole(e))) assert.ok(passed(r), `${label} as a session of role ${role}: ${r.status} ${JSON.stringify(r.data)}`);
      else {
        assert.equal(r.status, 403, `${label} as a session of role ${role}: ${r.status} ${JSON.stringify(r.data)}`);
        if (e.secrets) assert.match(r.data.error!, /secrets/, label);
      }
      checked++;
    }
  }
  assert.ok(checked >= admin.length * (SCOPES.length + ROLES.length) * 0.9, `cells checked: ${checked}`);
  // the OpenAPI document shows the mark
  const doc = openApiDocument((await s.req('/api/v1/openapi.json', { headers: full })).data);
  for (const e of admin) {
    const op = doc.paths[fullPath(e).replace(/:([A-Za-z_]+)/g, '{$1}')][e.method.toLowerCase()];
    assert.equal(op['x-discloses-secrets'], e.secrets, `${e.method} ${e.path}: x-discloses-secrets`);
    assert.equal(op['x-least-role'], leastRole(e), `${e.method} ${e.path}: x-least-role`);
    assert.equal(op['x-session-only'], e.sessionOnly, `${e.method} ${e.path}: x-session-only`);
    if (e.secrets) {
      assert.match(str(op.description), /Discloses secrets/);
      assert.equal(
        op['x-required-scope'],
        e.sessionOnly
          ? `none: a signed-in session (${leastRole(e)} role or higher), no API token`
          : `full-access (${leastRole(e)} role or higher for sessions)`,
      );
    }
  }
});

test('read-only tokens may not write anywhere', async () => {
  for (const e of s.endpoints.filter((x) => x.auth === 'admin' && x.method !== 'GET')) {
    const r = await call(e, bearer(tokens.get('read-only')!));
    assert.equal(r.status, 403, `${e.method} ${fullPath(e)} with read-only: ${r.status}`);
  }
});

test('a non-admin user: 403 on admin-role endpoints and writes, may read and edit their own profile', async () => {
  const t = tokens.get('full-access')!;
  const created = await s.req('/api/v1/users', { method: 'POST', json: { username: 'viewer', password: 'viewer-password', role: 'user' }, headers: bearer(t) });
  assert.equal(created.status, 201);
  const v = await login(s, { username: 'viewer', password: 'viewer-password' });
  const h = { cookie: v.cookie, 'x-csrf-token': v.csrf, accept: 'application/json' };
  assert.equal((await s.req('/api/v1/users', { headers: h })).status, 403);
  assert.equal((await s.req('/api/v1/users', { method: 'POST', json: { username: 'x', password: 'xxxxxxxxxx', role: 'admin' }, headers: h })).status, 403);
  assert.equal((await s.req('/api/v1/tokens', { headers: h })).status, 403);
  assert.equal((await s.req('/api/v1/logs/activity', { headers: h })).status, 200);
  assert.equal((await s.req('/api/v1/settings/default-theme', { method: 'PUT', json: { theme: 'pro' }, headers: h })).status, 403);
  const p = await s.req('/api/v1/settings/language', { method: 'POST', json: { language: 'de' }, headers: h });
  assert.equal(p.status, 200);
  assert.equal(p.data.profile.language, 'de');
});

/** A session of a new account with this role, and a full-access token bound to that account. */
async function account(role: Role, name: string): Promise<{ id: number; h: Record<string, string>; token: string }> {
  const full = bearer(tokens.get('full-access')!);
  const made = await s.req('/api/v1/users', { method: 'POST', json: { username: name, password: 'role-test-password', role }, headers: full });
  assert.equal(made.status, 201, JSON.stringify(made.data));
  const v = await login(s, { username: name, password: 'role-test-password' });
  const t = await s.req('/api/v1/tokens', {
    method: 'POST',
    json: { name: `${name}-token`, scopes: ['full-access'], user_id: made.data.user.id },
    headers: full,
  });
  assert.equal(t.status, 201, JSON.stringify(t.data));
  return { id: made.data.user.id, h: { cookie: v.cookie, 'x-csrf-token': v.csrf, accept: 'application/json' }, token: t.data.token };
}

test('roles: an operator manages peers and routes (keys included) but no accounts, tokens or settings; a viewer reads everything it may see and writes nothing', async () => {
  const op = await account('operator', 'role-operator');
  const peer = await s.req('/api/v1/peers', { method: 'POST', json: { name: 'operator-peer' }, headers: op.h });
  assert.equal(peer.status, 201, JSON.stringify(peer.data));
  const cfg = await s.req(`/api/v1/peers/${peer.data.peer.id}/config`, { headers: op.h });
  assert.equal(cfg.status, 200, 'an operator downloads the configuration of a peer it manages');
  const route = await s.req('/api/v1/routes', {
    method: 'POST',
    json: { domain: 'operator.example.com', peer_id: peer.data.peer.id, target_port: 8080 },
    headers: op.h,
  });
  assert.equal(route.status, 201, JSON.stringify(route.data));
  const userAttempt = await s.req('/api/v1/users', { method: 'POST', json: { username: 'by-operator', password: 'xxxxxxxxxx', role: 'admin' }, headers: op.h });
  assert.equal(userAttempt.status, 403);
  assert.match(userAttempt.data.error!, /Admin role/);
  assert.equal((await s.req('/api/v1/tokens', { method: 'POST', json: { name: 'x', scopes: ['full-access'] }, headers: op.h })).status, 403);
  assert.equal((await s.req('/api/v1/settings/security', { method: 'PUT', json: {}, headers: op.h })).status, 403);
  assert.equal((await s.req('/api/v1/settings/backup', { headers: op.h })).status, 403, 'the backup (every secret) stays the admin’s');
  assert.equal((await s.req('/api/v1/users', { headers: op.h })).status, 200, 'an operator is at least a viewer');

  const vw = await account('viewer', 'role-viewer');
  assert.equal((await s.req('/api/v1/users', { headers: vw.h })).status, 200);
  assert.equal((await s.req('/api/v1/tokens', { headers: vw.h })).status, 200);
  assert.equal((await s.req('/api/v1/peers', { headers: vw.h })).status, 200);
  const w = await s.req(`/api/v1/peers/${peer.data.peer.id}`, { method: 'DELETE', headers: vw.h });
  assert.equal(w.status, 403);
  assert.match(w.data.error!, /may only read/);
  assert.equal((await s.req(`/api/v1/peers/${peer.data.peer.id}`, { headers: vw.h })).status, 200, 'the peer is still there');
  const made = await s.req('/api/v1/peers', { method: 'POST', json: { name: 'viewer-peer' }, headers: vw.h });
  assert.equal(made.status, 403, 'a new peer (its keys are secrets) is no viewer’s');
  const sec = await s.req<Refusal>(`/api/v1/peers/${peer.data.peer.id}/config`, { headers: vw.h });
  assert.equal(sec.status, 403);
  assert.match(sec.data.error!, /secrets/);
  assert.equal((await s.req(`/api/v1/routes/${route.data.route.id}`, { method: 'DELETE', headers: vw.h })).status, 403);
  assert.equal((await s.req(`/api/v1/routes/${route.data.route.id}`, { headers: vw.h })).status, 200, 'nothing changed');

  const us = await account('user', 'role-user');
  const users = await s.req('/api/v1/users', { headers: us.h });
  assert.equal(users.status, 403, 'a user does not see the accounts');
  assert.match(users.data.error!, /viewer role/);
});

test('a token bound to a user never exceeds that user’s role, and follows a change of role at once', async () => {
  const full = bearer(tokens.get('full-access')!);
  const vw = await account('viewer', 'bound-viewer');
  const t = bearer(vw.token);
  assert.equal((await s.req('/api/v1/peers', { headers: t })).status, 200, 'a full-access token bound to a viewer reads');
  const write = await s.req('/api/v1/peers', { method: 'POST', json: { name: 'by-bound-token' }, headers: t });
  assert.equal(write.status, 403, 'and cannot write');
  assert.match(write.data.error!, /bound to a user whose role \(viewer\)/);
  assert.equal((await s.req('/api/v1/peers?q=by-bound-token', { headers: full })).data.peers.length, 0, 'nothing was made');
  assert.equal((await s.req('/api/v1/settings/backup', { headers: t })).status, 403);
  // promoted to operator: the same token writes in the operator's areas, still not accounts
  assert.equal((await s.req(`/api/v1/users/${vw.id}`, { method: 'PUT', json: { role: 'operator' }, headers: full })).status, 200);
  const made = await s.req('/api/v1/peers', { method: 'POST', json: { name: 'by-bound-token' }, headers: t });
  assert.equal(made.status, 201, JSON.stringify(made.data));
  assert.equal((await s.req('/api/v1/users', { method: 'POST', json: { username: 'nope', password: 'xxxxxxxxxx', role: 'user' }, headers: t })).status, 403);
  // demoted to user: reads only, not the accounts
  assert.equal((await s.req(`/api/v1/users/${vw.id}`, { method: 'PUT', json: { role: 'user' }, headers: full })).status, 200);
  assert.equal((await s.req('/api/v1/users', { headers: t })).status, 403);
  assert.equal((await s.req('/api/v1/peers', { headers: t })).status, 200);
  // the account deleted: the token passes nothing
  assert.equal((await s.req(`/api/v1/users/${vw.id}`, { method: 'DELETE', headers: full })).status, 200);
  const gone = await s.req('/api/v1/peers', { headers: t });
  assert.ok(gone.status === 401 || gone.status === 403, `a token of a deleted user: ${gone.status}`);
});

// ---- The gateway and client token kinds, and the public paths ----

/** A gateway peer made through the API: its id and its companion tokens. */
async function gateway(name: string): Promise<{ id: number; apiToken: string; pushToken: string }> {
  const r = await s.req('/api/v1/peers', { method: 'POST', json: { name, is_gateway: true, api_port: 8089 }, headers: bearer(tokens.get('full-access')!) });
  assert.equal(r.status, 201, JSON.stringify(r.data));
  return { id: r.data.peer.id, apiToken: r.data.gateway!.apiToken, pushToken: r.data.gateway!.pushToken };
}

/** A request an endpoint accepts in shape: gateway writes get a body of their own protocol. */
function gatewayBody(e: Endpoint): unknown {
  if (e.path === '/gateway/status') return { rx_bytes: 1, tx_bytes: 2, active_connections: 0 };
  if (e.path === '/gateway/heartbeat') {
    return {
      uptime_s: 5,
      http_proxy_healthy: true,
      api_healthy: true,
      dns_resolve_ok: true,
      overall_healthy: true,
      tcp_listeners: [],
      wg_handshake_age_s: 5,
      route_reachability: [],
      hostname: 'authz-gw',
      config_hash: null,
      telemetry: {
        gateway_version: '0.1.0',
        node_version: 'v20.0.0',
        wg_tools_version: 'wireguard-tools v1.0.20210914',
        cpu_cores: 2,
        cpu_load_avg: [0.1, 0.2, 0.3],
        mem_total: 8e9,
        mem_free: 4e9,
        mem_used: 4e9,
        disk: { total: 1e11, free: 5e10, used: 5e10 },
        os_platform: 'linux',
        os_release: '6.1.0',
        arch: 'x64',
        dns_resolvers: ['127.0.0.53'],
        default_gateway_ip: '127.0.0.1',
      },
    };
  }
  return {};
}

const callGateway = (e: Endpoint, headers: Record<string, string>) =>
  s.req<Refusal>(fullPath(e), {
    method: e.method,
    headers: { accept: 'application/json', ...headers },
    ...(e.method === 'GET' ? {} : { json: gatewayBody(e) }),
  });

test("every gateway-companion endpoint refuses sessions, admin, client and gateway-scope API tokens, other gateways' stale tokens; answers its own gateway", async () => {
  const gwEndpoints = s.endpoints.filter((e) => e.auth === 'gateway');
  assert.ok(gwEndpoints.length >= 5, `the companion API: ${gwEndpoints.map((e) => e.path).join(', ')}`);
  const own = await gateway('authz-gw-own');
  const rotated = await gateway('authz-gw-rotated');
  const rot = await s.req(`/api/v1/peers/${rotated.id}/gateway-env/rotate`, { method: 'POST', headers: bearer(tokens.get('full-access')!) });
  assert.equal(rot.status, 200);
  const deleted = await gateway('authz-gw-deleted');
  assert.equal((await s.req(`/api/v1/peers/${deleted.id}`, { method: 'DELETE', headers: bearer(tokens.get('full-access')!) })).status, 200);
  const refused: [string, Record<string, string>][] = [
    ['no credentials', {}],
    ['an admin session with its CSRF token', { cookie: session.cookie, 'x-csrf-token': session.csrf }],
    ['a full-access API token', bearer(tokens.get('full-access')!)],
    ['an API token with scope gateway', bearer(tokens.get('gateway')!)],
    ['an API token with scope client', bearer(tokens.get('client')!)],
    ["a gateway's push token (the server's credential towards the companion)", bearer(own.pushToken)],
    ['the token of a gateway whose tokens were rotated', bearer(rotated.apiToken)],
    ['the token of a deleted gateway', bearer(deleted.apiToken)],
    ['an unknown gateway token', bearer('gthgw_' + 'z'.repeat(43))],
  ];
  for (const e of gwEndpoints) {
    const label = `${e.method} ${fullPath(e)}`;
    for (const [who, headers] of refused) {
      const r = await callGateway(e, headers);
      assert.equal(r.status, 401, `${label} with ${who}: ${r.status} ${JSON.stringify(r.data)}`);
      assert.equal(r.data.ok, false, label);
      assert.equal(typeof r.data.error, 'string', label);
    }
    const r = await callGateway(e, bearer(own.apiToken));
    assert.ok(r.status < 300 || r.status === 304, `${label} with its own gateway token: ${r.status} ${JSON.stringify(r.data)}`);
  }
});

test('a gateway token acts only as its own gateway: config, probe and check answer for the calling peer, never another', async () => {
  const a = await gateway('authz-gw-a');
  const b = await gateway('authz-gw-b');
  const full = bearer(tokens.get('full-access')!);
  const route = await s.req('/api/v1/routes', {
    method: 'POST',
    json: { domain: 'authz-gw-a.example.test', target_kind: 'gateway', target_peer_id: a.id, target_lan_host: '192.168.77.10', target_lan_port: 80 },
    headers: full,
  });
  assert.equal(route.status, 201, JSON.stringify(route.data));
  const ca = await s.req('/api/v1/gateway/config', { headers: bearer(a.apiToken) });
  const cb = await s.req('/api/v1/gateway/config', { headers: bearer(b.apiToken) });
  assert.equal(ca.data.peer_id, a.id);
  assert.equal(cb.data.peer_id, b.id);
  assert.ok(JSON.stringify(ca.data).includes('authz-gw-a.example.test'));
  assert.ok(!JSON.stringify(cb.data).includes('authz-gw-a.example.test'), "gateway B does not see gateway A's routes");
  assert.notEqual(ca.data.config_hash, cb.data.config_hash);
  // B asking with A's current hash is told its own (different) configuration changed
  assert.equal((await s.req(`/api/v1/gateway/config/check?hash=${ca.data.config_hash}`, { headers: bearer(b.apiToken) })).status, 200);
  const pb = await s.req('/api/v1/gateway/probe', { method: 'POST', json: { x: 1 }, headers: bearer(b.apiToken) });
  assert.equal(pb.data.peer_id, b.id);
});

test('every admin endpoint refuses a real gateway token and a gateway push token with 401', async () => {
  const g = await gateway('authz-gw-admin');
  for (const e of s.endpoints.filter((x) => x.auth === 'admin')) {
    for (const t of [g.apiToken, g.pushToken]) {
      const r = await call(e, bearer(t));
      assert.equal(r.status, 401, `${e.method} ${fullPath(e)} with a gateway token: ${r.status}`);
    }
  }
});

test('the client token kind: a client-scope token is refused on every admin endpoint that is not open to any credential (403) and on the companion API (401); client endpoints, when any exist, refuse gateway tokens and admin sessions', async () => {
  const client = tokens.get('client')!;
  for (const e of s.endpoints.filter((x) => x.auth === 'admin')) {
    const required = e.scope !== undefined ? e.scope : scopeForPath(e.path);
    const r = await call(e, bearer(client));
    // open to any valid credential: not 401 (an endpoint may still refuse the scope itself, as the event stream does)
    if (required === 'any') assert.notEqual(r.status, 401, `${e.method} ${fullPath(e)} is open to any credential: ${r.status}`);
    else assert.equal(r.status, 403, `${e.method} ${fullPath(e)} with a client token: ${r.status}`);
  }
  // The desktop client API (auth 'client'). The first test called DELETE /license with full
  // access: the licence comes back so that licensed client endpoints (/client/rdp*) answer past their gate.
  const lic = await s.req('/api/v1/license/activate', {
    method: 'POST',
    json: { key: testLicenceKey({ plan: 'test-all', issued_at: '2000-01-01T00:00:00.000Z', expires_at: null }) },
    headers: bearer(tokens.get('full-access')!),
  });
  assert.equal(lic.status, 200, JSON.stringify(lic.data));
  const g = await gateway('authz-gw-client');
  for (const e of s.endpoints.filter((x) => x.auth === 'client')) {
    const label = `${e.method} ${fullPath(e)}`;
    assert.equal((await call(e, {})).status, 401, `${label} without credentials`);
    assert.equal((await call(e, bearer(g.apiToken))).status, 401, `${label} with a gateway token`);
    assert.equal((await call(e, { cookie: session.cookie, 'x-csrf-token': session.csrf })).status, 401, `${label} with an admin session`);
    assert.equal((await call(e, bearer(tokens.get('logs')!))).status, 403, `${label} with a token without scope client`);
    const ok = await call(e, bearer(client));
    assert.ok(ok.status !== 401 && ok.status !== 403, `${label} with a client token: ${ok.status} ${JSON.stringify(ok.data)}`);
  }
  // machine-fingerprint binding: a client token bound to one machine is refused from another on every client endpoint
  const clientEndpoints = s.endpoints.filter((x) => x.auth === 'client');
  if (clientEndpoints.length) {
    const bound = await apiToken(s, ['client']);
    const machineA = { ...bearer(bound), [FINGERPRINT_HEADER]: 'a'.repeat(64) };
    const machineB = { ...bearer(bound), [FINGERPRINT_HEADER]: 'b'.repeat(64) };
    const first = await call(clientEndpoints[0], machineA);
    assert.ok(first.status !== 401 && first.status !== 403, `first use binds: ${first.status}`);
    for (const e of clientEndpoints) {
      const label = `${e.method} ${fullPath(e)}`;
      assert.equal((await call(e, machineB)).status, 401, `${label} from another machine than the token is bound to`);
      assert.equal((await call(e, bearer(bound))).status, 401, `${label} without the fingerprint of the machine the token is bound to`);
      const again = await call(e, machineA);
      assert.ok(again.status !== 401 && again.status !== 403, `${label} from the bound machine: ${again.status}`);
    }
  }
});

test('every public path answers without credentials, with a status it documents, and leaks nothing (no secret, no stack, no file path)', async () => {
  const full = bearer(tokens.get('full-access')!);
  // secrets that exist on the server, none of which a visitor may ever see
  const g = await gateway('authz-public-gw');
  const peer = await s.req('/api/v1/peers', { method: 'POST', json: { name: 'authz-public-peer' }, headers: full });
  const conf = await s.req(`/api/v1/peers/${peer.data.peer.id}/config`, { headers: full });
  const wgKeys = [...String(conf.data).matchAll(/(?:PrivateKey|PresharedKey) = (\S+)/g)].map((m) => m[1]);
  assert.equal(wgKeys.length, 2);
  const route = await s.req('/api/v1/routes', {
    method: 'POST',
    json: { domain: 'authz-public.example.test', peer_id: peer.data.peer.id, target_port: 8080 },
    headers: full,
  });
  const raPassword = 'route-auth-secret-pass-1';
  assert.equal(
    (
      await s.req(`/api/v1/routes/${route.data.route.id}/auth`, {
        method: 'POST',
        json: { method: 'email_password', email: 'owner@example.test', password: raPassword, session_max_age: 3_600_000 },
        headers: full,
      })
    ).status,
    200,
  );
  assert.equal(
    (
      await s.req('/api/v1/smtp', {
        method: 'PUT',
        json: { host: '127.0.0.1', port: 2525, from: 'gh@example.test', user: 'mailer', password: 'smtp-secret-pass-1' },
        headers: full,
      })
    ).status,
    200,
  );
  const sid = /gatehouse_sid=([^;]+)/.exec(session.cookie)?.[1];
  const secrets = [
    ADMIN.password,
    ...tokens.values(),
    g.apiToken,
    g.pushToken,
    ...wgKeys,
    raPassword,
    'smtp-secret-pass-1',
    session.csrf,
    ...(sid ? [sid] : []),
  ];

  const doc = openApiDocument((await s.req('/api/v1/openapi.json', { headers: full })).data);
  const publicOps: [string, string][] = [];
  for (const [p, ms] of Object.entries(doc.paths)) for (const [m, op] of Object.entries(ms)) if (!op.security?.length) publicOps.push([m.toUpperCase(), p]);
  // the registry's public endpoints and every path served outside it are all in the document or say why not
  for (const e of s.endpoints.filter((x) => x.auth === 'public'))
    assert.ok(
      publicOps.some(([m, p]) => m === e.method && p === e.path.replace(/:([A-Za-z_]+)/g, '{$1}')),
      `${e.method} ${e.path} is a documented public path`,
    );
  const outside = SERVED_OUTSIDE_REGISTRY.filter((x) => x.openapi !== true).map((x) => [x.method, x.path] as [string, string]);
  assert.ok(publicOps.length >= 15, `public operations: ${publicOps.length}`);

  for (const [method, p] of [...publicOps, ...outside]) {
    const path = p.replace(/\{[^}]+\}/g, 'index.js');
    for (const accept of ['application/json', 'text/html']) {
      const r = await s.req(path, {
        method,
        headers: { accept, 'x-route-domain': 'authz-public.example.test' },
        ...(method === 'GET' || method === 'HEAD' ? {} : { json: {} }),
      });
      const label = `${method} ${path} (${accept}): ${r.status}`;
      assert.ok(r.status < 500, label);
      const declared = doc.paths[p]?.[method.toLowerCase()]?.responses;
      if (declared) assert.ok(declared[String(r.status)], `${label} is a status the document declares (${Object.keys(declared).join(',')})`);
      const text =
        (typeof r.data === 'string' ? r.data : JSON.stringify(r.data)) +
        ' ' +
        [...r.headers.entries()]
          .filter(([k]) => k !== 'set-cookie')
          .map(([k, v]) => `${k}: ${v}`)
          .join('\n');
      for (const secret of secrets) assert.ok(!text.includes(secret), `${label} leaks a secret (${secret.slice(0, 6)}…)`);
      assert.ok(!text.includes(s.dataDir), `${label} leaks the data directory`);
      assert.ok(!/\n\s+at .+\(.+:\d+:\d+\)/.test(text) && !/node_modules|sidecar\/src/.test(text), `${label} leaks a stack trace or source path`);
      for (const c of r.headers.getSetCookie()) assert.ok(!secrets.some((x) => c.includes(x)), `${label} sets a cookie carrying a secret`);
    }
  }
});
