// Walks every registered endpoint (read from the server's own endpoint list, so endpoints added
// later are covered automatically) and checks who may call it.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, login, apiToken, bearer, type TestServer } from './lib/server.js';
import { fullPath, scopeForPath, SCOPES, type Endpoint, type Scope } from '../src/http/registry.js';

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
  s = await startTestServer({ GATEHOUSE_RATE_LIMIT_ADMIN: '100000', GATEHOUSE_RATE_LIMIT_CLIENT: '100000', GATEHOUSE_RATE_LIMIT_LOGIN: '100000' });
  session = await login(s);
  for (const sc of [...SCOPES, 'full-access']) tokens.set(sc, await apiToken(s, [sc]));
});
after(async () => s.close());

const call = (e: Endpoint, headers: Record<string, string>) =>
  s.req(concrete(e), { method: e.method, headers: { accept: 'application/json', ...headers }, ...(e.method === 'GET' ? {} : { json: {} }) });

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
      assert.match(r.data.error, /CSRF/, label);
    } else if (required !== 'any' && required !== null && !e.adminRole) {
      const r = await call(e, bearer(tokens.get('read-only')!));
      assert.ok(r.status !== 401 && r.status !== 403, `${label} with read-only: ${r.status}`);
    }
    if (required !== null && required !== 'any' && !e.adminRole) {
      const r = await call(e, bearer(tokens.get(required)!));
      assert.ok(r.status !== 401 && r.status !== 403, `${label} with its own scope ${required}: ${r.status} ${JSON.stringify(r.data)}`);
    }
    const full = await call(e, bearer(tokens.get('full-access')!));
    assert.ok(full.status !== 401 && full.status !== 403, `${label} with full-access: ${full.status} ${JSON.stringify(full.data)}`);
    const withCsrf = await call(e, { cookie: session.cookie, 'x-csrf-token': session.csrf });
    assert.ok(withCsrf.status !== 401 && withCsrf.status !== 403, `${label} with session and CSRF: ${withCsrf.status} ${JSON.stringify(withCsrf.data)}`);
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
