// Route auth's method oidc against a real OpenID Provider (npm oidc-provider in its own process:
// lib/oidc-idp.ts): the configuration's rules (bad input 400 with fields and nothing changed, an
// unknown or disabled provider 422, the allow-list required, by role), the login page's button, the
// sign-in on the route's host (a group or a verified address let in; verify passes X-Auth-User,
// -Email, -Groups), the refusals (an address or group not on the lists and an unverified address:
// 403 page saying why; a tampered state, a replayed code, a callback in another browser: 422), the
// checked rd, logout, the route's TOTP as second factor, and the provider's route redirect URIs;
// the flows in the database (the verifier sealed, pruned when expired) and, on PostgreSQL, a flow
// started on one node and finished on another node of the same database.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import path from 'node:path';
import speakeasy from 'speakeasy';
import { startTestServer, apiToken, bearer, login, type ReqInit, type TestServer } from './lib/server.js';
import { startIdp, throughIdp, ProviderJar, type Idp } from './lib/oidc-idp.js';
import { Browser, codeFromMail, createRoute, startSmtp } from './route-auth-helpers.js';
import { SESSION_DURATIONS } from '../src/route-auth/schema.js';
import type { RouteAuthService } from '../src/route-auth/service.js';
import { FLOW_MAX_AGE_MS } from '../src/oidc/service.js';
import { findRowByPk } from '../src/db/define.js';
import { MasterKey } from '../src/util/crypto.js';

const DOMAIN = `oidc-app-${process.pid}.test`;
const CALLBACK = `https://${DOMAIN}/route-auth/oidc/callback`;
const H24 = SESSION_DURATIONS['24h'];
let s: TestServer;
let idp: Idp;
let h: Record<string, string>;
let providerId: number;
let route: { id: number; domain: string };

const api = <T = never, P extends string = string, M extends string = 'GET'>(p: P, init: ReqInit<[T] extends [never] ? M : string> = {}, headers = h) =>
  s.req<T, `/api/v1${P}`, M>(`/api/v1${p}`, { ...init, headers: { accept: 'application/json', ...headers } });
const auth = (json?: unknown, headers = h, id = route.id) => api(`/routes/${id}/auth`, json === undefined ? {} : { method: 'POST', json }, headers);
const svc = () => s.deps.routeAuth as RouteAuthService;
const OIDC = { method: 'oidc', email: 'owner@example.test', session_max_age: H24 };
const pgOnly = { skip: process.env.TEST_DATABASE_URL ? false : 'PostgreSQL only (TEST_DATABASE_URL)' };

/** Start at the route's login, through the provider as `user`; the callback URL the provider sends back (not visited). */
async function toCallback(b: Browser, user: string, rd = `https://${DOMAIN}/app/page?x=1`): Promise<URL> {
  const start = await b.get(`/route-auth/oidc/start?rd=${encodeURIComponent(rd)}`);
  assert.equal(start.status, 302, start.body);
  const to = new URL(start.headers.location!);
  assert.equal(to.origin, idp.issuer, 'to the provider');
  assert.equal(to.searchParams.get('redirect_uri'), CALLBACK, "the callback on the route's host");
  assert.equal(to.searchParams.get('code_challenge_method'), 'S256');
  assert.ok(to.searchParams.get('state') && to.searchParams.get('nonce'));
  assert.ok(b.cookies.has(`gh_ra_${route.id}_o`), 'the flow is bound to this browser');
  const back = await throughIdp(idp, new ProviderJar(), to.href, user);
  assert.equal(`${back.origin}${back.pathname}`, CALLBACK);
  return back;
}

const visit = (b: Browser, u: URL) => b.get(`${u.pathname}${u.search}`);

before(async () => {
  s = await startTestServer({ GATEHOUSE_RATE_LIMIT_LOGIN: '100000', GATEHOUSE_RATE_LIMIT_ADMIN: '100000' });
  idp = await startIdp({
    clients: [{ client_id: 'gh-routes', client_secret: 'route-client-secret-81f2', redirect_uris: [CALLBACK] }],
    users: {
      alice: { email: 'alice@example.test', email_verified: true, groups: ['ops', 'dev'] },
      bob: { email: 'bob@example.test', email_verified: true, groups: ['staff'] },
      eve: { email: 'eve@example.test', email_verified: true, groups: ['guests'] },
      mallory: { email: 'bob2@example.test', email_verified: false, groups: [] },
    },
  });
  h = bearer(await apiToken(s));
  const p = await api('/auth/oidc/providers', {
    method: 'POST',
    json: {
      name: 'Corp ID',
      issuer: idp.issuer,
      client_id: 'gh-routes',
      client_secret: 'route-client-secret-81f2',
      scopes: ['openid', 'profile', 'email', 'groups'],
      allow_private: true,
    },
  });
  assert.equal(p.status, 201, JSON.stringify(p.data));
  providerId = p.data.provider.id;
  route = await createRoute(s, { domain: DOMAIN });
});
after(async () => {
  await idp?.close();
  await s?.close();
});

test('bad input: 400 with fields, 422 for an unknown or disabled provider or no allow-list; nothing changed', async () => {
  const disabled = await api('/auth/oidc/providers', {
    method: 'POST',
    json: { name: 'Off', issuer: 'https://off.example.test', client_id: 'x', enabled: false },
  });
  assert.equal(disabled.status, 201);
  const before = await svc().models.RouteAuth.count();
  const cases: [unknown, number, string][] = [
    [{ ...OIDC, oidc_provider_id: 'one', allowed_groups: ['ops'] }, 400, 'oidc_provider_id'],
    [{ ...OIDC, oidc_provider_id: providerId, allowed_emails: ['not-an-address'] }, 400, 'allowed_emails'],
    [{ ...OIDC, oidc_provider_id: providerId, allowed_groups: [''] }, 400, 'allowed_groups'],
    [{ ...OIDC, oidc_provider_id: providerId, allowed_groups: 'ops' }, 400, 'allowed_groups'],
    [{ ...OIDC, method: 'saml', oidc_provider_id: providerId, allowed_groups: ['ops'] }, 400, 'method'],
    [{ ...OIDC, allowed_groups: ['ops'] }, 422, 'oidc_provider_id'],
    [{ ...OIDC, oidc_provider_id: providerId }, 422, 'allowed_emails'],
    [{ ...OIDC, oidc_provider_id: providerId, allowed_emails: [], allowed_groups: [] }, 422, 'allowed_emails'],
    [{ ...OIDC, oidc_provider_id: 987654, allowed_groups: ['ops'] }, 422, 'oidc_provider_id'],
    [{ ...OIDC, oidc_provider_id: disabled.data.provider.id, allowed_groups: ['ops'] }, 422, 'oidc_provider_id'],
    [{ ...OIDC, oidc_provider_id: providerId, allowed_groups: ['ops'], two_factor_enabled: true }, 422, 'two_factor_method'],
  ];
  for (const [body, status, field] of cases) {
    const r = await auth(body);
    assert.equal(r.status, status, `${JSON.stringify(body)} → ${r.status} ${JSON.stringify(r.data)}`);
    // a list's entry is named with its index (allowed_emails.0)
    const named = Object.keys(r.data.fields ?? {}).some((k) => k === field || k.startsWith(`${field}.`));
    assert.ok(named, `${JSON.stringify(body)}: fields.${field} in ${JSON.stringify(r.data.fields)}`);
  }
  assert.equal(await svc().models.RouteAuth.count(), before);
  assert.equal((await auth()).data.route_auth, null);
  assert.equal((await api(`/auth/oidc/providers/${disabled.data.provider.id}`, { method: 'DELETE' })).status, 200);
});

test('by role: operators configure method oidc, viewers read only; the provider names the redirect URI and cannot be deleted while in use', async () => {
  const heads: Record<string, Record<string, string>> = {};
  for (const role of ['operator', 'viewer'] as const) {
    await s.deps.users.create({ username: `ra-${role}`, password: 'role-password-123', role });
    const c = await login(s, { username: `ra-${role}`, password: 'role-password-123' });
    heads[role] = { cookie: c.cookie, 'x-csrf-token': c.csrf };
  }
  const body = { ...OIDC, oidc_provider_id: providerId, allowed_emails: ['Bob@Example.test'], allowed_groups: ['ops'] };
  const denied = await auth(body, heads.viewer);
  assert.equal(denied.status, 403);
  assert.equal((await auth(undefined, heads.viewer)).data.route_auth, null);
  const saved = await auth(body, heads.operator);
  assert.equal(saved.status, 200, JSON.stringify(saved.data));
  const ra = saved.data.route_auth;
  assert.equal(ra.method, 'oidc');
  assert.equal(ra.oidc_provider_id, providerId);
  assert.deepEqual(ra.allowed_emails, ['bob@example.test']);
  assert.deepEqual(ra.allowed_groups, ['ops']);
  assert.equal((await auth(undefined, heads.viewer)).data.route_auth.method, 'oidc', 'a viewer reads it');

  const p = await api(`/auth/oidc/providers/${providerId}`);
  assert.deepEqual(p.data.provider.route_redirect_uris, [CALLBACK]);
  const del = await api(`/auth/oidc/providers/${providerId}`, { method: 'DELETE' });
  assert.equal(del.status, 409);
  assert.match(del.data.error!, new RegExp(DOMAIN));
  assert.equal((await api(`/auth/oidc/providers/${providerId}`)).status, 200, 'still there');
});

test('the login page offers "Sign in with <provider>" (en, de)', async () => {
  const en = await new Browser(s, DOMAIN).get('/route-auth/login?rd=%2Fx');
  assert.equal(en.status, 200);
  assert.match(en.body, /<a class="button" href="\/route-auth\/oidc\/start\?rd=%2Fx"[^>]*>Sign in with Corp ID<\/a>/);
  assert.doesNotMatch(en.body, /name="password"/);
  const de = await new Browser(s, DOMAIN, { lang: 'de' }).get('/route-auth/login');
  assert.match(de.body, /Anmelden mit Corp ID/);
});

test('a member of an allowed group signs in; verify passes user, address and groups; logout ends it', async () => {
  const b = new Browser(s, DOMAIN);
  const res = await visit(b, await toCallback(b, 'alice'));
  assert.equal(res.status, 302, res.body);
  assert.equal(res.headers.location, `https://${DOMAIN}/app/page?x=1`);
  assert.ok(b.session(route.id), 'session cookie');
  assert.equal(b.cookies.has(`gh_ra_${route.id}_o`), false, 'the binding cookie is cleared');
  const cookieLine = (res.headers['set-cookie'] ?? []).find((c) => c.startsWith(`gh_ra_${route.id}=`))!;
  assert.match(cookieLine, /Path=\/; Max-Age=86400;.*HttpOnly; SameSite=Lax; Secure/);
  const v = await b.verify('/app/page');
  assert.equal(v.status, 204);
  assert.equal(v.headers['x-auth-user'], 'alice');
  assert.equal(v.headers['x-auth-email'], 'alice@example.test');
  assert.equal(v.headers['x-auth-groups'], 'ops,dev');
  assert.equal(v.headers['x-auth-method'], 'oidc');
  // logout: the route's session ends
  const page = await b.get('/route-auth/logout');
  const out = await b.post('/route-auth/logout', { _csrf: Browser.csrf(page.body) });
  assert.equal(out.status, 303);
  assert.equal((await b.verify('/')).status, 302);
});

test('an address on allowed_emails signs in (any case); an rd to another host goes to /', async () => {
  const b = new Browser(s, DOMAIN);
  const res = await visit(b, await toCallback(b, 'bob', 'https://evil.example.test/steal'));
  assert.equal(res.status, 302, res.body);
  assert.equal(res.headers.location, '/');
  const v = await b.verify('/');
  assert.equal(v.status, 204);
  assert.equal(v.headers['x-auth-email'], 'bob@example.test');
  assert.equal(v.headers['x-auth-groups'], 'staff');
});

test('refused: an address and groups not on the lists, an unverified address on them: 403 page saying why, no session', async () => {
  for (const [user, email] of [
    ['eve', 'eve@example.test'],
    ['mallory', 'bob2@example.test'],
  ]) {
    const rows = await s.deps.db.models.RouteAuthSession.count();
    const b = new Browser(s, DOMAIN);
    const res = await visit(b, await toCallback(b, user));
    assert.equal(res.status, 403, `${user}: ${res.body}`);
    assert.match(res.body, /not allowed on this site/);
    assert.ok(res.body.includes(email), 'the page shows the address the provider sent');
    assert.equal(b.session(route.id), undefined);
    assert.equal(await s.deps.db.models.RouteAuthSession.count(), rows, 'no session row');
  }
  // the unverified address is on the list only by case: bob2 is not, so add it and still refuse (not verified)
  const cur = (await auth()).data.route_auth;
  assert.equal(
    (await auth({ ...OIDC, oidc_provider_id: providerId, allowed_emails: [...cur.allowed_emails, 'bob2@example.test'], allowed_groups: ['ops'] })).status,
    200,
  );
  const b = new Browser(s, DOMAIN, { lang: 'de' });
  const res = await visit(b, await toCallback(b, 'mallory'));
  assert.equal(res.status, 403);
  assert.match(res.body, /nicht zugelassen/);
});

test('a tampered state, a replayed code and a callback in another browser are refused (422)', async () => {
  const b = new Browser(s, DOMAIN);
  const cb = await toCallback(b, 'alice');
  const tampered = new URL(cb);
  tampered.searchParams.set('state', `${cb.searchParams.get('state')}x`);
  const t = await visit(b, tampered);
  assert.equal(t.status, 422);
  assert.match(t.body, /not started in this browser, or was already used/);
  assert.equal(b.session(route.id), undefined);

  // another browser with the right callback URL: no binding cookie
  const b2 = new Browser(s, DOMAIN);
  const cb2 = await toCallback(b2, 'alice');
  const thief = new Browser(s, DOMAIN);
  assert.equal((await visit(thief, cb2)).status, 422);
  assert.equal(thief.session(route.id), undefined);
  // the flow was spent by the attempt: the rightful browser starts again
  assert.equal((await visit(b2, cb2)).status, 422);

  const b3 = new Browser(s, DOMAIN);
  const cb3 = await toCallback(b3, 'alice');
  assert.equal((await visit(b3, cb3)).status, 302);
  const replay = new Browser(s, DOMAIN);
  replay.cookies = new Map(b3.cookies);
  replay.cookies.delete(`gh_ra_${route.id}`);
  assert.equal((await visit(replay, cb3)).status, 422, 'a replayed code is refused');
  assert.equal(replay.session(route.id), undefined);
});

test("with the route's TOTP as second factor: the code after the provider; a changed allow-list ends sessions", async () => {
  const body = { ...OIDC, oidc_provider_id: providerId, allowed_groups: ['ops'], two_factor_enabled: true, two_factor_method: 'totp' };
  const saved = await auth(body);
  assert.equal(saved.status, 200, JSON.stringify(saved.data));
  // TOTP not verified yet: the switch waits, visitors keep signing in without it
  assert.equal(saved.data.route_auth.pending_method, 'oidc');
  const setup = await api(`/routes/${route.id}/auth/totp-setup`, { method: 'POST', json: {} });
  const token = speakeasy.totp({ secret: setup.data.secret, encoding: 'base32', time: s.deps.clock() / 1000 });
  assert.equal((await api(`/routes/${route.id}/auth/totp-verify`, { method: 'POST', json: { token } })).status, 200);
  assert.equal((await auth()).data.route_auth.two_factor_method, 'totp');

  const b = new Browser(s, DOMAIN);
  const res = await visit(b, await toCallback(b, 'alice'));
  assert.equal(res.status, 302);
  assert.match(res.headers.location!, /^\/route-auth\/login\?rd=.*&notice=oidc_totp$/);
  assert.equal(b.session(route.id), undefined, 'no session before the code');
  const page = await b.get(res.headers.location!);
  assert.match(page.body, /authenticator app of this site/);
  const wrong = await b.post('/route-auth/login', { _csrf: Browser.csrf(page.body), rd: `https://${DOMAIN}/`, step: 'code', code: '000000' });
  assert.equal(wrong.status, 401);
  const code = speakeasy.totp({ secret: setup.data.secret, encoding: 'base32', time: s.deps.clock() / 1000 + 30 });
  const ok = await b.post('/route-auth/login', { _csrf: Browser.csrf(page.body), rd: `https://${DOMAIN}/`, step: 'code', code });
  assert.equal(ok.status, 303, ok.body);
  const v = await b.verify('/');
  assert.equal(v.status, 204);
  assert.equal(v.headers['x-auth-method'], 'oidc+totp');
  assert.equal(v.headers['x-auth-groups'], 'ops,dev');

  // who may sign in changed: the sessions end
  assert.equal((await auth({ ...body, allowed_groups: ['dev'] })).status, 200);
  assert.equal((await b.verify('/')).status, 302);
});

test('with an email code as second factor: mailed to the address the provider sent', async (t) => {
  const smtp = await startSmtp();
  t.after(() => smtp.close());
  assert.equal((await api('/smtp', { method: 'PUT', json: { host: '127.0.0.1', port: smtp.port, secure: false, from: 'gh@example.test' } })).status, 200);
  const saved = await auth({ ...OIDC, oidc_provider_id: providerId, allowed_groups: ['staff'], two_factor_enabled: true, two_factor_method: 'email_code' });
  assert.equal(saved.status, 200, JSON.stringify(saved.data));
  const b = new Browser(s, DOMAIN);
  const res = await visit(b, await toCallback(b, 'bob'));
  assert.equal(res.status, 302);
  assert.match(res.headers.location!, /&notice=code_sent$/);
  const mail = await smtp.waitFor(1);
  assert.deepEqual(mail.to, ['bob@example.test']);
  const page = await b.get(res.headers.location!);
  const ok = await b.post('/route-auth/login', { _csrf: Browser.csrf(page.body), rd: `https://${DOMAIN}/`, step: 'code', code: codeFromMail(mail) });
  assert.equal(ok.status, 303, ok.body);
  const v = await b.verify('/');
  assert.equal(v.status, 204);
  assert.equal(v.headers['x-auth-method'], 'oidc+email_code');
  assert.equal(v.headers['x-auth-user'], 'bob');
});

test('a started flow waits in the database (the verifier sealed under the derived key), single use; the prune job removes an expired one', async () => {
  assert.equal((await auth({ ...OIDC, oidc_provider_id: providerId, allowed_groups: ['ops'] })).status, 200);
  const flows = s.deps.db.models.RouteAuthOidcFlow;
  const b = new Browser(s, DOMAIN);
  const start = await b.get(`/route-auth/oidc/start?rd=${encodeURIComponent(`https://${DOMAIN}/`)}`);
  assert.equal(start.status, 302, start.body);
  const to = new URL(start.headers.location!);
  const row = await findRowByPk(flows, to.searchParams.get('state')!);
  assert.ok(row, 'the flow is a row under its state');
  assert.equal(row.nonce, to.searchParams.get('nonce'));
  assert.equal(
    row.binding_hash,
    crypto
      .createHash('sha256')
      .update(b.cookies.get(`gh_ra_${route.id}_o`)!.value)
      .digest('hex'),
    'only the cookie hash',
  );
  const verifier = MasterKey.fromBuffer(s.deps.crypto.derive('route-auth-oidc-flow')).open(row.verifier_enc);
  assert.equal(crypto.createHash('sha256').update(verifier).digest('base64url'), to.searchParams.get('code_challenge'), 'the sealed verifier is the PKCE one');
  assert.throws(() => s.deps.crypto.open(row.verifier_enc), 'not sealed with the master key itself');

  // past its maximum age the hourly prune deletes it, and its callback is refused
  await flows.update({ created_at: Date.now() - FLOW_MAX_AGE_MS - 1000 }, { where: { state: row.state } });
  await svc().prune();
  assert.equal(await flows.count({ where: { state: row.state } }), 0, 'pruned');
  const late = await visit(b, await throughIdp(idp, new ProviderJar(), to.href, 'alice'));
  assert.equal(late.status, 422);
  assert.equal(b.session(route.id), undefined);
});

test('PostgreSQL: a flow started on one node is finished on another node of the same database, once', pgOnly, async (t) => {
  assert.equal((await auth({ ...OIDC, oidc_provider_id: providerId, allowed_groups: ['ops'] })).status, 200);
  const other = await startTestServer({
    DATABASE_URL: s.databaseUrl!,
    GATEHOUSE_MASTER_KEY_FILE: path.join(s.dataDir, 'master.key'),
    GATEHOUSE_RATE_LIMIT_LOGIN: '100000',
  });
  t.after(() => other.close());
  const b = new Browser(s, DOMAIN);
  const cb = await toCallback(b, 'alice');
  const there = new Browser(other, DOMAIN);
  there.cookies = new Map(b.cookies);
  const res = await visit(there, cb);
  assert.equal(res.status, 302, res.body);
  assert.equal(res.headers.location, `https://${DOMAIN}/app/page?x=1`);
  assert.ok(there.session(route.id), 'signed in on the other node');
  const v = await there.verify('/');
  assert.equal(v.status, 204);
  assert.equal(v.headers['x-auth-user'], 'alice');
  // the flow is spent on every node: the same callback at the first node is refused
  const replay = new Browser(s, DOMAIN);
  replay.cookies = new Map(b.cookies);
  assert.equal((await visit(replay, cb)).status, 422);
  assert.equal(replay.session(route.id), undefined);
});
