// OpenID Connect providers and the admin sign-in through them, against a real OpenID Provider
// (npm oidc-provider in its own process on loopback: lib/oidc-idp.ts) with four people in two
// groups: the full code flow through the sidecar's own endpoints with a cookie jar per site (the
// mapped role lands signed in, at `next`; an open redirect in `next` goes to /), the refusals with
// their pages (nobody matched, a tampered state, a replayed code, an unverified e-mail address), the
// link by a verified e-mail address and the password switched off for linked accounts (not the
// break-glass admin), the second-factor policy after the provider, the discovery test's findings,
// the client secret (sealed, never in an answer), CRUD by role and token scope, and bad input.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, login, apiToken, bearer, ADMIN, type ReqInit, type TestServer } from './lib/server.js';
import { ProviderJar, startIdp, type Idp } from './lib/oidc-idp.js';
import type { Row } from './lib/rows.js';
import { objAt } from '../../test/lib/json.js';
import { findRows } from '../src/db/define.js';

const CLIENT_ID = 'gatehouse';
const CLIENT_SECRET = 'oidc-client-secret-3f1c9a7d2b';
const CAROL_PASSWORD = 'carol-password-123';
let s: TestServer;
let idp: Idp;
let other: http.Server;
let adminH: Record<string, string>;
let providerId: number;

/** One request of a browser (no redirect followed): the jar sends and keeps cookies. */
async function visit(jar: ProviderJar, url: string, init: RequestInit = {}): Promise<Response & { text: string }> {
  const headers = new Headers(init.headers);
  const cookie = jar.header();
  if (cookie) headers.set('cookie', cookie);
  if (!headers.has('accept')) headers.set('accept', 'text/html');
  const res = await fetch(url, { ...init, headers, redirect: 'manual' });
  jar.take(res);
  return Object.assign(res, { text: await res.text() });
}

interface Browser {
  sidecar: ProviderJar;
  provider: ProviderJar;
}
const browser = (): Browser => ({ sidecar: new ProviderJar(), provider: new ProviderJar() });

/**
 * From "Sign in with …" to the provider's answer: the start, the provider's login form (its
 * development interaction, posted with `login` as the user), and the redirect back; returns the
 * callback URL the provider sends the browser to (not yet visited).
 */
async function throughProvider(b: Browser, user: string, next?: string, id = providerId): Promise<URL> {
  const start = await visit(b.sidecar, `${s.url}/auth/oidc/${id}/start${next === undefined ? '' : `?next=${encodeURIComponent(next)}`}`);
  assert.equal(start.status, 302, start.text);
  let url = new URL(start.headers.get('location')!);
  assert.equal(url.origin, idp.issuer, 'to the provider');
  assert.equal(url.searchParams.get('code_challenge_method'), 'S256');
  assert.ok(url.searchParams.get('state') && url.searchParams.get('nonce') && url.searchParams.get('code_challenge'));
  for (let hop = 0; hop < 10; hop++) {
    if (url.origin !== idp.issuer) return url;
    let res = await visit(b.provider, url.href);
    if (res.status === 200 && res.text.includes('name="login"')) {
      const action = /action="([^"]+)"/.exec(res.text)![1];
      res = await visit(b.provider, new URL(action, url).href, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ prompt: 'login', login: user, password: 'any' }).toString(),
      });
    }
    assert.ok([302, 303].includes(res.status), `provider step ${url.pathname}: ${res.status} ${res.text.slice(0, 300)}`);
    url = new URL(res.headers.get('location')!, url);
  }
  throw new Error('the provider never sent the browser back');
}

/** The whole sign-in: through the provider and the callback; the callback's answer. */
async function signIn(b: Browser, user: string, next?: string) {
  const cb = await throughProvider(b, user, next);
  assert.equal(`${cb.origin}${cb.pathname}`, `${s.url}/auth/oidc/callback`);
  return { cb, res: await visit(b.sidecar, cb.href) };
}

async function whoAmI(b: Browser) {
  const r = await s.req('/api/v1/session', { headers: { cookie: b.sidecar.header(), accept: 'application/json' } });
  return r.status === 200 && r.data.kind === 'session' ? r.data.user : null;
}

const api = <T = never, P extends string = string, M extends string = 'GET'>(p: P, init: ReqInit<[T] extends [never] ? M : string> = {}, h = adminH) =>
  s.req<T, `/api/v1${P}`, M>(`/api/v1${p}`, {
    ...init,
    headers: { accept: 'application/json', ...h, ...(init.headers as Record<string, string> | undefined) },
  });

const count = async () => s.deps.db.models.OidcProvider.count();

before(async () => {
  s = await startTestServer({ GATEHOUSE_RATE_LIMIT_LOGIN: '100000', GATEHOUSE_RATE_LIMIT_ADMIN: '100000' });
  idp = await startIdp({
    clients: [{ client_id: CLIENT_ID, client_secret: CLIENT_SECRET, redirect_uris: [`${s.url}/auth/oidc/callback`] }],
    users: {
      alice: { email: 'alice@example.test', email_verified: true, groups: ['ops'] },
      bob: { email: 'bob@example.test', email_verified: true, groups: ['staff'] },
      carol: { email: 'carol@example.test', email_verified: true, groups: ['staff'] },
      dave: { email: 'dave@example.test', email_verified: false, groups: ['ops'] },
    },
  });
  // a server that answers the discovery path with a page, not JSON
  other = http.createServer((_req, res) => res.end('<html>no</html>'));
  await new Promise<void>((r) => other.listen(0, '127.0.0.1', r));
  adminH = bearer(await apiToken(s));
  await s.deps.users.create({ username: 'carol', email: 'Carol@example.test', password: CAROL_PASSWORD, role: 'viewer' });
  await s.deps.users.create({ username: 'dave-local', email: 'dave@example.test', password: 'dave-password-123', role: 'viewer' });
  const r = await api('/auth/oidc/providers', {
    method: 'POST',
    json: {
      name: 'Test IdP',
      issuer: idp.issuer,
      client_id: CLIENT_ID,
      client_secret: CLIENT_SECRET,
      scopes: ['openid', 'profile', 'email', 'groups'],
      jit_create: true,
      allow_private: true,
      role_mappings: [
        { match: { group: 'ops' }, role: 'operator' },
        { match: { email: 'carol@example.test' }, role: 'viewer' },
      ],
    },
  });
  assert.equal(r.status, 201, JSON.stringify(r.data));
  providerId = r.data.provider.id;
});

after(async () => {
  await idp?.close();
  await new Promise((r) => other?.close(r));
  await s?.close();
});

test('the sign-in page offers "Sign in with <name>" per enabled provider, in English and German, carrying next', async () => {
  const en = await s.req<string>('/login?next=%2Fpeers', { headers: { 'accept-language': 'en' } });
  assert.match(en.data, new RegExp(`<a class="sso" href="/auth/oidc/${providerId}/start\\?next=%2Fpeers">Sign in with Test IdP</a>`));
  const de = await s.req<string>('/login', { headers: { 'accept-language': 'de' } });
  assert.match(de.data, /Mit Test IdP anmelden/);
  const off = await api('/auth/oidc/providers', {
    method: 'POST',
    json: { name: 'Hidden', issuer: 'https://id.example.test', client_id: 'x', enabled: false },
  });
  assert.equal(off.status, 201, JSON.stringify(off.data));
  assert.doesNotMatch((await s.req<string>('/login')).data, /Hidden/, 'a disabled provider has no button');
  const started = await visit(new ProviderJar(), `${s.url}/auth/oidc/${off.data.provider.id}/start`);
  assert.equal(started.status, 404);
  assert.match(started.text, /does not exist any more or is disabled/);
  await api(`/auth/oidc/providers/${off.data.provider.id}`, { method: 'DELETE' });
});

test('the mapped role lands signed in at next; the account is created just in time and linked', async () => {
  const b = browser();
  const { res } = await signIn(b, 'alice', '/peers?tab=all');
  assert.equal(res.status, 302, res.text);
  assert.equal(res.headers.get('location'), '/peers?tab=all');
  assert.deepEqual(await whoAmI(b), { ...(await whoAmI(b))!, username: 'alice', role: 'operator' });
  const link = (await s.deps.db.models.OidcIdentity.findOne({ where: { provider_id: providerId, subject: 'alice' }, raw: true })) as Row<'OidcIdentity'> | null;
  assert.ok(link, 'linked to the subject');
  // a second sign-in finds the same account through its link
  const again = browser();
  assert.equal((await signIn(again, 'alice')).res.headers.get('location'), '/');
  assert.equal((await whoAmI(again))?.username, 'alice');
  assert.equal(await s.deps.db.models.User.count({ where: { username: 'alice' } }), 1);
  const rows = (await api('/logs/activity?limit=50')).data.entries as { code: string }[];
  assert.ok(rows.some((e) => e.code === 'oidc.account_created'));
});

test('an open redirect in next is refused: the sign-in ends at /', async () => {
  for (const next of ['//evil.example.test/x', 'https://evil.example.test/', '/\\evil.example.test']) {
    const { res } = await signIn(browser(), 'alice', next);
    assert.equal(res.status, 302);
    assert.equal(res.headers.get('location'), '/', next);
  }
});

test('nobody matched: refused with a page that says why and names the groups seen', async () => {
  const b = browser();
  const { res } = await signIn(b, 'bob');
  assert.equal(res.status, 403);
  assert.match(res.text, /data-reason="no_mapping"/);
  assert.match(res.text, /matches none of the groups or e-mail addresses/);
  assert.match(res.text, /groups: staff/);
  assert.equal(await whoAmI(b), null);
  assert.equal(await s.deps.db.models.User.count({ where: { username: 'bob' } }), 0, 'no account for someone refused');
});

test('a tampered state is refused, and the real answer still works once', async () => {
  const b = browser();
  const cb = await throughProvider(b, 'alice');
  const tampered = new URL(cb);
  tampered.searchParams.set('state', `${cb.searchParams.get('state')}x`);
  const bad = await visit(b.sidecar, tampered.href);
  assert.equal(bad.status, 422);
  assert.match(bad.text, /data-reason="state_invalid"/);
  assert.match(bad.text, /tampered or replayed/);
  assert.equal(await whoAmI(b), null);
  // the same answer in another browser (no flow of this state in its session): refused too
  const elsewhere = await visit(new ProviderJar(), cb.href);
  assert.equal(elsewhere.status, 422);
  assert.match(elsewhere.text, /data-reason="state_invalid"/);
  assert.equal((await visit(b.sidecar, cb.href)).status, 302);
  assert.equal((await whoAmI(b))?.username, 'alice');
});

test("the flow's PKCE verifier is sealed in the session row, and a verifier that does not open is refused", async () => {
  const b = browser();
  const cb = await throughProvider(b, 'alice');
  const state = cb.searchParams.get('state')!;
  const { Session } = s.deps.db.models;
  const row = (await findRows(Session, {})).find((r) => String(r.data).includes(state));
  assert.ok(row, 'the session row holding the flow');
  const data = JSON.parse(String(row.data)) as { oidcFlows: { state: string; verifier: string }[] };
  const flow = data.oidcFlows.find((f) => f.state === state)!;
  assert.match(flow.verifier, /^v1:/, 'sealed');
  assert.throws(() => s.deps.crypto.open(flow.verifier), 'not sealed with the master key itself (a key derived from it)');
  // a verifier sealed under another key (here the master key itself): the flow counts as none
  flow.verifier = s.deps.crypto.seal('a-verifier-that-does-not-belong-here-0123456789');
  await Session.update({ data: JSON.stringify(data) }, { where: { sid: row.sid } });
  const refused = await visit(b.sidecar, cb.href);
  assert.equal(refused.status, 422);
  assert.match(refused.text, /data-reason="state_invalid"/);
  assert.equal(await whoAmI(b), null);
});

test('a replayed code is refused: in the same browser (the state was used) and with a fresh state (the provider refuses the code)', async () => {
  const b = browser();
  const { cb, res } = await signIn(b, 'alice');
  assert.equal(res.status, 302);
  const replay = await visit(new ProviderJar(), cb.href);
  assert.equal(replay.status, 422);
  assert.match(replay.text, /data-reason="state_invalid"/);
  const again = await visit(b.sidecar, cb.href);
  assert.equal(again.status, 422, 'the used state is gone from the session');
  // a fresh sign-in's state with the old code: the code exchange is refused by the provider
  const fresh = browser();
  const start = await visit(fresh.sidecar, `${s.url}/auth/oidc/${providerId}/start`);
  const state = new URL(start.headers.get('location')!).searchParams.get('state')!;
  const forged = new URL(cb);
  forged.searchParams.set('state', state);
  const refused = await visit(fresh.sidecar, forged.href);
  assert.equal(refused.status, 400);
  assert.match(refused.text, /data-reason="exchange_failed"/);
  assert.equal(await whoAmI(fresh), null);
});

test('an existing account is linked by its verified e-mail address only; the password can be switched off for linked accounts, never for the break-glass admin', async () => {
  const d = browser();
  const dave = await signIn(d, 'dave');
  assert.equal(dave.res.status, 403);
  assert.match(dave.res.text, /data-reason="email_unverified"/);
  assert.equal(await s.deps.db.models.OidcIdentity.count({ where: { subject: 'dave' } }), 0);

  const b = browser();
  const { res } = await signIn(b, 'carol');
  assert.equal(res.status, 302, res.text);
  assert.equal((await whoAmI(b))?.username, 'carol', 'the existing account, matched by e-mail without regard to case');
  const pw = () => s.req('/login', { method: 'POST', json: { username: 'carol', password: CAROL_PASSWORD }, headers: { accept: 'application/json' } });
  assert.equal((await pw()).status, 200, 'passwords allowed by default');
  assert.equal((await api(`/auth/oidc/providers/${providerId}`, { method: 'PUT', json: { allow_password_for_sso_users: false } })).status, 200);
  const off = await pw();
  assert.equal(off.status, 401);
  assert.equal(off.data.code, 'oidc.password_off');
  // the break-glass admin keeps the password even when linked
  const admin = (await s.deps.db.models.User.findOne({ where: { username: ADMIN.username }, raw: true })) as Row<'User'> | null;
  await s.deps.db.models.OidcIdentity.create({
    provider_id: providerId,
    subject: 'admin-sub',
    user_id: admin!.id,
    created_at: Date.now(),
    last_login_at: null,
  });
  assert.equal((await login(s)).cookie.length > 0, true);
  await s.deps.db.models.OidcIdentity.destroy({ where: { subject: 'admin-sub' } });
  await api(`/auth/oidc/providers/${providerId}`, { method: 'PUT', json: { allow_password_for_sso_users: true } });
});

test('the second-factor policy applies after the provider as after a password', async () => {
  const set = (v: boolean) => api('/settings/security', { method: 'PUT', json: { second_factor: { required: v } } });
  const on = await set(true);
  assert.equal(on.status, 200, JSON.stringify(on.data));
  try {
    const b = browser();
    const { res } = await signIn(b, 'alice', '/routes');
    assert.equal(res.status, 302);
    assert.equal(res.headers.get('location'), '/login/enrol?next=%2Froutes');
    assert.equal(await whoAmI(b), null, 'not signed in before the second factor');
    const page = await visit(b.sidecar, `${s.url}/login/enrol?next=%2Froutes`);
    assert.equal(page.status, 200, 'the enrolment step of this sign-in');
  } finally {
    await set(false);
  }
});

test('the client secret is sealed at rest and in no answer', async () => {
  const row = (await s.deps.db.models.OidcProvider.findByPk(providerId, { raw: true })) as Row<'OidcProvider'> | null;
  assert.ok(row && row.client_secret_enc && !row.client_secret_enc.includes(CLIENT_SECRET));
  assert.equal(s.deps.crypto.open(row.client_secret_enc), CLIENT_SECRET);
  const answers = [
    await api('/auth/oidc/providers'),
    await api(`/auth/oidc/providers/${providerId}`),
    await api(`/auth/oidc/providers/${providerId}`, { method: 'PUT', json: { scopes: ['openid', 'profile', 'email', 'groups'] } }),
    await api(`/auth/oidc/providers/${providerId}/test`, { method: 'POST' }),
  ];
  for (const a of answers) {
    assert.equal(a.status, 200);
    assert.ok(!JSON.stringify(a.data).includes(CLIENT_SECRET));
  }
  const p = objAt(answers[1].data, 'provider');
  assert.equal(p.client_secret_set, true);
  assert.equal(p.client_secret, undefined);
  assert.equal(p.redirect_uri, `${s.url}/auth/oidc/callback`);
  // an omitted or empty secret keeps it; null removes it
  await api(`/auth/oidc/providers/${providerId}`, { method: 'PUT', json: { client_secret: '' } });
  const kept = (await s.deps.db.models.OidcProvider.findByPk(providerId, { raw: true })) as Row<'OidcProvider'> | null;
  assert.equal(s.deps.crypto.open(kept!.client_secret_enc!), CLIENT_SECRET);
  const created = await api('/auth/oidc/providers', {
    method: 'POST',
    json: { name: 'Public', issuer: 'https://id.example.test', client_id: 'p', client_secret: 'x-secret' },
  });
  assert.equal(created.data.provider.client_secret_set, true);
  const removed = await api(`/auth/oidc/providers/${created.data.provider.id}`, { method: 'PUT', json: { client_secret: null } });
  assert.equal(removed.data.provider.client_secret_set, false);
  await api(`/auth/oidc/providers/${created.data.provider.id}`, { method: 'DELETE' });
});

test('the discovery test says what is wrong', async () => {
  const make = async (name: string, issuer: string, allow_private = true) => {
    const r = await api('/auth/oidc/providers', { method: 'POST', json: { name, issuer, client_id: 'x', allow_private } });
    assert.equal(r.status, 201, JSON.stringify(r.data));
    const t = await api(`/auth/oidc/providers/${r.data.provider.id}/test`, { method: 'POST' });
    assert.equal(t.status, 200);
    await api(`/auth/oidc/providers/${r.data.provider.id}`, { method: 'DELETE' });
    return t.data.result;
  };
  const good = (await api(`/auth/oidc/providers/${providerId}/test`, { method: 'POST' })).data.result;
  assert.equal(good.reachable, true, good.message);
  assert.equal(good.endpoints!.token_endpoint!.startsWith(idp.issuer), true);
  assert.equal((await make('t-mismatch', `http://localhost:${idp.port}`)).message_code.code, 'oidc.test.issuer_mismatch');
  assert.equal((await make('t-404', `${idp.issuer}/nothing-here`)).message_code.code, 'oidc.test.status');
  assert.equal((await make('t-html', `http://127.0.0.1:${(other.address() as AddressInfo).port}`)).message_code.code, 'oidc.test.not_json');
  const closed = http.createServer();
  await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
  const port = (closed.address() as AddressInfo).port;
  await new Promise((r) => closed.close(r));
  assert.equal((await make('t-down', `http://127.0.0.1:${port}`)).message_code.code, 'oidc.test.unreachable');
  // loopback without allow_private (the webhooks' rule): not allowed, and nothing more
  const np = await make('t-private', `https://127.0.0.1:${idp.port}`, false);
  assert.equal(np.message_code.code, 'oidc.test.not_allowed');
  assert.equal(np.reachable, false);
});

test('CRUD by role and token scope: admin only for writes, viewers read; events and activity rows', async () => {
  const users: Record<string, Record<string, string>> = {};
  for (const role of ['operator', 'viewer', 'user'] as const) {
    await s.deps.users.create({ username: `crud-${role}`, password: 'role-password-123', role });
    const c = await login(s, { username: `crud-${role}`, password: 'role-password-123' });
    users[role] = { cookie: c.cookie, 'x-csrf-token': c.csrf };
  }
  const body = { name: 'By role', issuer: 'https://id.example.test', client_id: 'r' };
  for (const role of ['operator', 'viewer', 'user']) {
    const w = await api('/auth/oidc/providers', { method: 'POST', json: body }, users[role]);
    assert.equal(w.status, 403, role);
    assert.equal((await api(`/auth/oidc/providers/${providerId}`, { method: 'PUT', json: { name: 'x' } }, users[role])).status, 403);
    assert.equal((await api(`/auth/oidc/providers/${providerId}`, { method: 'DELETE' }, users[role])).status, 403);
    assert.equal((await api(`/auth/oidc/providers/${providerId}/test`, { method: 'POST' }, users[role])).status, 403);
  }
  assert.equal((await api('/auth/oidc/providers', {}, users.viewer)).status, 200, 'a viewer reads');
  assert.equal((await api('/auth/oidc/providers', {}, users.user)).status, 403);
  const scoped = bearer(await apiToken(s, ['settings']));
  assert.equal((await api('/auth/oidc/providers', { method: 'POST', json: body }, scoped)).status, 403, 'only full-access tokens');
  assert.equal((await api('/auth/oidc/providers', {}, bearer(await apiToken(s, ['read-only'])))).status, 200);

  const before = await count();
  const made = await api('/auth/oidc/providers', { method: 'POST', json: body });
  assert.equal(made.status, 201);
  const id = made.data.provider.id;
  assert.deepEqual(made.data.provider.scopes, ['openid', 'profile', 'email']);
  assert.equal(made.data.provider.username_claim, 'preferred_username');
  assert.equal((await api(`/auth/oidc/providers/${id}`, { method: 'PUT', json: { name: 'By role 2', enabled: false } })).data.provider.name, 'By role 2');
  assert.equal((await api(`/auth/oidc/providers/${id}`, { method: 'DELETE' })).data.deleted, true);
  assert.equal(await count(), before);
  assert.equal((await api(`/auth/oidc/providers/${id}`)).status, 404);
  const rows = (await api('/logs/activity?limit=20')).data.entries as { code: string }[];
  for (const code of ['oidc.provider_created', 'oidc.provider_updated', 'oidc.provider_deleted'])
    assert.ok(
      rows.some((e) => e.code === code),
      code,
    );
});

test('bad input: 400 naming every field, 422 for an http issuer without allow_private, 409 for a taken name; nothing changed', async () => {
  const before = await count();
  const stored = JSON.stringify(await s.deps.db.models.OidcProvider.findAll({ raw: true }));
  const bad = await api('/auth/oidc/providers', {
    method: 'POST',
    json: {
      name: 'Test IdP',
      issuer: 'ftp://id.example.test',
      client_id: '',
      scopes: ['profile'],
      username_claim: 'has space',
      enabled: 'yes',
      role_mappings: [
        { match: { group: 'a', email: 'a@example.test' }, role: 'admin' },
        { match: {}, role: 'root' },
      ],
      extra: 1,
    },
  });
  assert.equal(bad.status, 400, JSON.stringify(bad.data));
  for (const f of [
    'name',
    'issuer',
    'client_id',
    'scopes',
    'username_claim',
    'enabled',
    'role_mappings.0.match',
    'role_mappings.1.match',
    'role_mappings.1.role',
    'extra',
  ])
    assert.ok(bad.data.fields?.[f], `fields.${f}: ${JSON.stringify(bad.data.fields)}`);
  const http422 = await api('/auth/oidc/providers', { method: 'POST', json: { name: 'Plain', issuer: 'http://id.example.test', client_id: 'x' } });
  assert.equal(http422.status, 422);
  assert.ok(http422.data.fields!.issuer);
  const taken = await api('/auth/oidc/providers', { method: 'POST', json: { name: 'test idp', issuer: 'https://id.example.test', client_id: 'x' } });
  assert.equal(taken.status, 409);
  assert.ok(taken.data.fields!.name);
  const put = await api(`/auth/oidc/providers/${providerId}`, { method: 'PUT', json: { issuer: 'not a url', scopes: [], client_secret: 5, jit_create: 'no' } });
  assert.equal(put.status, 400);
  for (const f of ['issuer', 'scopes', 'client_secret', 'jit_create']) assert.ok(put.data.fields?.[f], f);
  assert.equal(await count(), before);
  assert.equal(JSON.stringify(await s.deps.db.models.OidcProvider.findAll({ raw: true })), stored, 'nothing changed');
});
