// Passkeys of admin-UI accounts (auth/second-factor.ts) through the API, with a software
// authenticator (test/lib/software-passkey.ts: a real P-256 key, WebAuthn structures as specified):
// the owner's endpoints are for a signed-in session only (tokens 403) and touch only the owner's
// passkeys; bad bodies are 400 with fields and change nothing; a passkey registers against the
// configured admin origin (another origin, a spent challenge, a registered key are refused); it is
// the second step after the password (counted toward the lockout when it fails), or the whole
// sign-in (user verification required); it meets the policy; an admin's reset removes it; without
// an admin origin passkeys are refused with a clear error.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, apiToken, bearer, login, ADMIN, type TestServer } from './lib/server.js';
import { softwarePasskey, type SoftwarePasskey } from './lib/software-passkey.js';
import { arr, arrAt, at } from '../../test/lib/json.js';
import { findRows } from '../src/db/define.js';
import type { UserPasskeyRow } from '../src/db/models.js';

const ORIGIN = 'https://gate.example.test';
let s: TestServer;
let full: Record<string, string>;
const OPS = { username: 'pk-ops', password: 'pk-ops-password-1' };
const OTHER = { username: 'pk-other', password: 'pk-other-password-1' };
let opsId = 0;
const json = { accept: 'application/json' };

before(async () => {
  s = await startTestServer({ GATEHOUSE_RATE_LIMIT_ADMIN: '100000', GATEHOUSE_RATE_LIMIT_LOGIN: '100000', GATEHOUSE_ADMIN_ORIGIN: ORIGIN });
  full = bearer(await apiToken(s));
  for (const u of [OPS, OTHER]) {
    const r = await s.req('/api/v1/users', { method: 'POST', headers: full, json: { ...u, role: 'operator' } });
    assert.equal(r.status, 201, JSON.stringify(r.data));
    if (u === OPS) opsId = r.data.user.id;
  }
});
after(async () => s.close());

const cookieOf = (r: Response) =>
  r.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
type Session = { cookie: string; csrf: string };
const headersOf = (sess: Session) => ({ cookie: sess.cookie, 'x-csrf-token': sess.csrf, ...json });
const passkeyRows = (userId: number) => findRows<UserPasskeyRow>(s.deps.db.models.UserPasskey, { where: { user_id: userId } });

/** Adds a software passkey to the session's account; the answer of POST /settings/second-factor/passkeys. */
async function addPasskey(sess: Session, password: string, key: SoftwarePasskey, name = 'key') {
  const h = headersOf(sess);
  const opts = await s.req('/api/v1/settings/second-factor/passkeys/options', { method: 'POST', headers: h, json: { current: password } });
  assert.equal(opts.status, 200, JSON.stringify(opts.data));
  return s.req('/api/v1/settings/second-factor/passkeys', { method: 'POST', headers: h, json: { name, credential: key.register(opts.data.options, ORIGIN) } });
}

const opsKey = softwarePasskey();
const otherKey = softwarePasskey();
let opsSess: Session;
let otherSess: Session;
let opsPasskeyId = 0;
let otherPasskeyId = 0;

test('the owner endpoints are for a signed-in session only: an API token gets 403 on each', async () => {
  const calls: [string, string, unknown][] = [
    ['GET', '/api/v1/settings/second-factor/passkeys', undefined],
    ['POST', '/api/v1/settings/second-factor/passkeys/options', { current: ADMIN.password }],
    ['POST', '/api/v1/settings/second-factor/passkeys', { name: 'x', credential: {} }],
    ['PUT', '/api/v1/settings/second-factor/passkeys/1', { name: 'x' }],
    ['DELETE', '/api/v1/settings/second-factor/passkeys/1', { current: ADMIN.password }],
  ];
  for (const [method, path, body] of calls) {
    const r = await s.req(path, { method, headers: { ...full, ...json }, json: body });
    assert.equal(r.status, 403, `${method} ${path}: ${JSON.stringify(r.data)}`);
  }
});

test('registration: the password is asked, bad bodies are 400 with fields and change nothing, a passkey of another origin is refused, the right one is added with recovery codes (first factor)', async () => {
  opsSess = await login(s, OPS);
  const h = headersOf(opsSess);
  const wrongPw = await s.req('/api/v1/settings/second-factor/passkeys/options', { method: 'POST', headers: h, json: { current: 'not-my-password' } });
  assert.equal(wrongPw.status, 422);
  assert.ok(wrongPw.data.fields!.current);
  const opts = await s.req('/api/v1/settings/second-factor/passkeys/options', { method: 'POST', headers: h, json: { current: OPS.password } });
  assert.equal(opts.status, 200, JSON.stringify(opts.data));
  assert.equal(at(opts.data.options, 'rp', 'id'), 'gate.example.test');
  assert.equal(at(opts.data.options, 'authenticatorSelection', 'residentKey'), 'required');
  // bad bodies: 400 naming the fields; nothing stored
  for (const body of [
    { credential: opsKey.register(opts.data.options, ORIGIN) },
    { name: 'x', credential: { id: 'not base64url!', rawId: 'x', type: 'public-key', response: {}, clientExtensionResults: {} } },
    { name: 'x\n', credential: opsKey.register(opts.data.options, ORIGIN), extra: 1 },
  ]) {
    const bad = await s.req('/api/v1/settings/second-factor/passkeys', { method: 'POST', headers: h, json: body });
    assert.equal(bad.status, 400, JSON.stringify(bad.data));
    assert.ok(Object.keys(bad.data.fields!).length > 0, JSON.stringify(bad.data));
  }
  const badName = await s.req('/api/v1/settings/second-factor/passkeys', {
    method: 'POST',
    headers: h,
    json: { name: '', credential: opsKey.register(opts.data.options, ORIGIN) },
  });
  assert.equal(badName.status, 400);
  assert.ok(badName.data.fields!.name);
  assert.equal((await passkeyRows(opsId)).length, 0, 'nothing stored');
  // a credential made for another origin does not verify
  const again = await s.req('/api/v1/settings/second-factor/passkeys/options', { method: 'POST', headers: h, json: { current: OPS.password } });
  const foreign = await s.req('/api/v1/settings/second-factor/passkeys', {
    method: 'POST',
    headers: h,
    json: { name: 'phish', credential: opsKey.register(again.data.options, 'https://evil.example.test') },
  });
  assert.equal(foreign.status, 422, JSON.stringify(foreign.data));
  assert.ok(foreign.data.fields!.credential);
  // the challenge was spent by that attempt
  const spent = await s.req('/api/v1/settings/second-factor/passkeys', {
    method: 'POST',
    headers: h,
    json: { name: 'k', credential: opsKey.register(again.data.options, ORIGIN) },
  });
  assert.equal(spent.status, 409);
  assert.equal(spent.data.code, 'passkey.no_challenge');
  assert.equal((await passkeyRows(opsId)).length, 0);

  const added = await addPasskey(opsSess, OPS.password, opsKey, 'YubiKey');
  assert.equal(added.status, 201, JSON.stringify(added.data));
  assert.equal(added.data.passkey.name, 'YubiKey');
  assert.deepEqual(added.data.passkey.transports, ['usb']);
  assert.equal(added.data.recovery_codes!.length, 10, 'the first second factor brings recovery codes');
  assert.equal(added.data.second_factor.passkeys, 1);
  assert.equal(added.data.second_factor.recovery_codes_left, 10);
  opsPasskeyId = added.data.passkey.id;
  // the same authenticator again: refused
  const dup = await addPasskey(opsSess, OPS.password, opsKey);
  assert.equal(dup.status, 409, JSON.stringify(dup.data));
  const list = await s.req('/api/v1/settings/second-factor/passkeys', { headers: h });
  assert.deepEqual(
    list.data.passkeys.map((p: { name: string }) => p.name),
    ['YubiKey'],
  );
  assert.ok(!JSON.stringify(list.data).includes((await passkeyRows(opsId))[0].public_key), 'no key material in the list');
  const log = await s.req('/api/v1/logs/activity?limit=50', { headers: full });
  assert.ok(log.data.entries.some((e) => e.code === 'second_factor.passkey_added'));
});

test("another account's passkeys are untouchable: rename and removal are 404 and change nothing; bad bodies are 400", async () => {
  otherSess = await login(s, OTHER);
  const added = await addPasskey(otherSess, OTHER.password, otherKey, 'Phone');
  assert.equal(added.status, 201, JSON.stringify(added.data));
  otherPasskeyId = added.data.passkey.id;
  const h = headersOf(opsSess);
  const rename = await s.req(`/api/v1/settings/second-factor/passkeys/${otherPasskeyId}`, { method: 'PUT', headers: h, json: { name: 'mine now' } });
  assert.equal(rename.status, 404);
  const remove = await s.req(`/api/v1/settings/second-factor/passkeys/${otherPasskeyId}`, { method: 'DELETE', headers: h, json: { current: OPS.password } });
  assert.equal(remove.status, 404);
  const others = await s.req('/api/v1/settings/second-factor/passkeys', { headers: headersOf(otherSess) });
  assert.deepEqual(
    others.data.passkeys.map((p: { name: string }) => p.name),
    ['Phone'],
  );
  // bad input: 400 with fields, nothing renamed
  for (const body of [{}, { name: '' }, { name: 'x'.repeat(65) }, { name: 'ok', extra: true }]) {
    const bad = await s.req(`/api/v1/settings/second-factor/passkeys/${opsPasskeyId}`, { method: 'PUT', headers: h, json: body });
    assert.equal(bad.status, 400, JSON.stringify(body));
    assert.ok(Object.keys(bad.data.fields!).length > 0);
  }
  const noPw = await s.req(`/api/v1/settings/second-factor/passkeys/${opsPasskeyId}`, { method: 'DELETE', headers: h, json: {} });
  assert.equal(noPw.status, 400);
  assert.ok(noPw.data.fields!.current);
  const ok = await s.req(`/api/v1/settings/second-factor/passkeys/${opsPasskeyId}`, { method: 'PUT', headers: h, json: { name: 'Blue key' } });
  assert.equal(ok.status, 200, JSON.stringify(ok.data));
  assert.equal(ok.data.passkey.name, 'Blue key');
  assert.equal((await passkeyRows(opsId))[0].name, 'Blue key');
});

/** The password step as a JSON client: the answer and its session cookie. */
async function passwordStep(user = OPS) {
  const r = await s.req('/login', { method: 'POST', json: user, headers: json });
  return { r, cookie: cookieOf(r) };
}

test('second step: after the password the account with a passkey is asked for it; it signs in, another key is refused and counted', async () => {
  const { r, cookie } = await passwordStep();
  assert.equal(r.status, 200, JSON.stringify(r.data));
  assert.deepEqual({ second_factor: r.data.second_factor, next_step: r.data.next_step }, { second_factor: 'passkey', next_step: '/login/second-factor' });
  // another account's passkey does not pass for this one
  const o1 = await s.req('/login/second-factor/passkey/options', { method: 'POST', headers: { cookie, ...json }, json: {} });
  assert.equal(o1.status, 200, JSON.stringify(o1.data));
  assert.deepEqual(
    arrAt(o1.data.options, 'allowCredentials').map((c) => at(c, 'id')),
    [opsKey.id],
  );
  const wrong = await s.req('/login/second-factor/passkey', {
    method: 'POST',
    headers: { cookie, ...json },
    json: { credential: otherKey.assert(o1.data.options, ORIGIN) },
  });
  assert.equal(wrong.status, 401, JSON.stringify(wrong.data));
  assert.ok(wrong.data.fields!.credential);
  const attempts = await s.deps.db.models.LoginAttempt.count({ where: { identifier: OPS.username, outcome: 'failure' } });
  assert.equal(attempts, 1, 'the failure counts toward the lockout');
  // the answer without asking for options again: the challenge was spent
  const replay = await s.req('/login/second-factor/passkey', {
    method: 'POST',
    headers: { cookie, ...json },
    json: { credential: opsKey.assert(o1.data.options, ORIGIN) },
  });
  assert.equal(replay.status, 409);
  const o2 = await s.req('/login/second-factor/passkey/options', { method: 'POST', headers: { cookie, ...json }, json: {} });
  const ok = await s.req('/login/second-factor/passkey', {
    method: 'POST',
    headers: { cookie, ...json },
    json: { credential: opsKey.assert(o2.data.options, ORIGIN), next: '/peers' },
  });
  assert.equal(ok.status, 200, JSON.stringify(ok.data));
  assert.equal(ok.data.user.username, OPS.username);
  const signedIn = cookieOf(ok);
  assert.ok(signedIn && signedIn !== cookie, 'a fresh session id');
  assert.equal((await s.req('/api/v1/session', { headers: { cookie: signedIn, ...json } })).data.user!.username, OPS.username);
  const row = (await passkeyRows(opsId))[0];
  assert.equal(Number(row.counter), opsKey.counter);
  assert.ok(row.last_used_at);
  // without a password step there is nothing to answer
  const none = await s.req('/login/second-factor/passkey/options', { method: 'POST', headers: json, json: {} });
  assert.equal(none.status, 401);
});

test('the sign-in pages offer the passkey (with their own scripts only), and serve those scripts', async () => {
  const login = await s.req<string>('/login', { headers: { accept: 'text/html' } });
  assert.match(login.data, /id="passkey-button"[^>]*data-base="\/login\/passkey"/);
  assert.match(login.data, /<script src="\/login\/webauthn.js"><\/script><script src="\/login\/passkey.js"><\/script>/);
  assert.match(login.headers.get('content-security-policy') ?? '', /default-src 'none'.*script-src 'self'; connect-src 'self'/);
  const lib = await s.req<string>('/login/webauthn.js');
  assert.equal(lib.status, 200);
  assert.match(lib.headers.get('content-type') ?? '', /javascript/);
  assert.match(lib.data, /SimpleWebAuthnBrowser/);
  const own = await s.req<string>('/login/passkey.js');
  assert.match(own.data, /startAuthentication/);
  // the second step of a passkey-only account: the passkey and the recovery code, no app code
  const { cookie } = await passwordStep();
  const page = await s.req<string>('/login/second-factor', { headers: { cookie, accept: 'text/html' } });
  assert.equal(page.status, 200);
  assert.match(page.data, /data-base="\/login\/second-factor\/passkey"/);
  assert.match(page.data, /Recovery code/);
});

test('passwordless: any passkey of the server signs its account in when the user was verified; unknown, unverified or cloned (counter behind) ones are refused', async () => {
  const start = async () => {
    const o = await s.req('/login/passkey/options', { method: 'POST', headers: json, json: {} });
    assert.equal(o.status, 200, JSON.stringify(o.data));
    assert.equal(o.data.options.userVerification, 'required');
    assert.equal(arr(at(o.data.options, 'allowCredentials') ?? []).length, 0, 'discoverable: the browser offers what it holds');
    return { options: o.data.options, cookie: cookieOf(o) };
  };
  const bad = await s.req('/login/passkey', { method: 'POST', headers: json, json: { credential: { id: 'x' } } });
  assert.equal(bad.status, 400);
  assert.ok(Object.keys(bad.data.fields!).length > 0);
  const a = await start();
  const unknown = await s.req('/login/passkey', {
    method: 'POST',
    headers: { cookie: a.cookie, ...json },
    json: { credential: softwarePasskey().assert(a.options, ORIGIN) },
  });
  assert.equal(unknown.status, 401, JSON.stringify(unknown.data));
  const b = await start();
  const unverified = await s.req('/login/passkey', {
    method: 'POST',
    headers: { cookie: b.cookie, ...json },
    json: { credential: otherKey.assert(b.options, ORIGIN, { userVerified: false }) },
  });
  assert.equal(unverified.status, 401, 'user verification is required without a password');
  const c = await start();
  const ok = await s.req('/login/passkey', {
    method: 'POST',
    headers: { cookie: c.cookie, ...json },
    json: { credential: otherKey.assert(c.options, ORIGIN) },
  });
  assert.equal(ok.status, 200, JSON.stringify(ok.data));
  assert.equal(ok.data.user.username, OTHER.username);
  assert.equal((await s.req('/api/v1/session', { headers: { cookie: cookieOf(ok), ...json } })).data.user!.username, OTHER.username);
  // a counter that does not move on (a cloned authenticator): refused
  const d = await start();
  const cloned = await s.req('/login/passkey', {
    method: 'POST',
    headers: { cookie: d.cookie, ...json },
    json: { credential: otherKey.assert(d.options, ORIGIN, { counter: 1 }) },
  });
  assert.equal(cloned.status, 401);
});

test('lockout: failing passkeys lock the account; a locked account is refused even with its right passkey', async () => {
  const policy = (await s.req('/api/v1/settings/security', { headers: full })).data.lockout;
  let last: { status: number; data: { code?: string } } | undefined;
  // the cloned attempt above failed once already since the last success
  for (let i = 1; i < policy.max_attempts; i++) {
    const o = await s.req('/login/passkey/options', { method: 'POST', headers: json, json: {} });
    last = await s.req('/login/passkey', {
      method: 'POST',
      headers: { cookie: cookieOf(o), ...json },
      json: { credential: otherKey.assert(o.data.options, ORIGIN, { userVerified: false }) },
    });
  }
  assert.equal(last!.data.code, 'auth.account_locked', JSON.stringify(last!.data));
  const o = await s.req('/login/passkey/options', { method: 'POST', headers: json, json: {} });
  const locked = await s.req('/login/passkey', {
    method: 'POST',
    headers: { cookie: cookieOf(o), ...json },
    json: { credential: otherKey.assert(o.data.options, ORIGIN) },
  });
  assert.equal(locked.data.code, 'auth.account_locked');
});

test('the policy: a passkey is a second factor (no enrolment asked); the last one may not be removed under it; an admin reset removes passkeys', async () => {
  const put = await s.req('/api/v1/settings/security', { method: 'PUT', headers: full, json: { second_factor: { required: true } } });
  assert.equal(put.status, 200, JSON.stringify(put.data));
  const { r } = await passwordStep();
  assert.equal(r.data.second_factor, 'passkey', 'a passkey meets the policy');
  const h = headersOf(opsSess);
  const last = await s.req(`/api/v1/settings/second-factor/passkeys/${opsPasskeyId}`, { method: 'DELETE', headers: h, json: { current: OPS.password } });
  assert.equal(last.status, 409, JSON.stringify(last.data));
  assert.equal(last.data.code, 'second_factor.last_factor_required');
  await s.req('/api/v1/settings/security', { method: 'PUT', headers: full, json: { second_factor: { required: false } } });
  const wrongPw = await s.req(`/api/v1/settings/second-factor/passkeys/${opsPasskeyId}`, { method: 'DELETE', headers: h, json: { current: 'nope-nope-nope' } });
  assert.equal(wrongPw.status, 422);
  const gone = await s.req(`/api/v1/settings/second-factor/passkeys/${opsPasskeyId}`, { method: 'DELETE', headers: h, json: { current: OPS.password } });
  assert.equal(gone.status, 200, JSON.stringify(gone.data));
  assert.equal(gone.data.second_factor.passkeys, 0);
  assert.equal(gone.data.second_factor.recovery_codes_left, 0, 'the last factor takes the recovery codes with it');
  assert.equal((await passwordStep()).r.data.user!.username, OPS.username, 'password alone again');
  const otherId = (await s.req('/api/v1/users', { headers: full })).data.users.find((u: { username: string }) => u.username === OTHER.username)!.id;
  const reset = await s.req(`/api/v1/users/${otherId}/second-factor`, { method: 'DELETE', headers: full });
  assert.equal(reset.data.reset, true);
  assert.equal((await passkeyRows(otherId)).length, 0);
  assert.equal(
    (await s.req(`/api/v1/settings/second-factor/passkeys/${otherPasskeyId}`, { method: 'PUT', headers: headersOf(otherSess), json: { name: 'x' } })).status,
    404,
  );
});

test('the enrolment the policy asks for takes a passkey: only after the password step, bad bodies are 400 with fields and change nothing, a foreign origin is refused, the passkey signs in with its recovery codes', async () => {
  const ENROL = { username: 'pk-enrol', password: 'pk-enrol-password-1' };
  const created = await s.req('/api/v1/users', { method: 'POST', headers: full, json: { ...ENROL, role: 'viewer' } });
  assert.equal(created.status, 201, JSON.stringify(created.data));
  const id = created.data.user.id as number;
  assert.equal((await s.req('/api/v1/settings/security', { method: 'PUT', headers: full, json: { second_factor: { required: true } } })).status, 200);
  try {
    // no password step: nothing to enrol
    assert.equal((await s.req('/login/enrol/passkey/options', { method: 'POST', headers: json, json: {} })).status, 401);
    const step = await s.req('/login', { method: 'POST', headers: json, json: ENROL });
    assert.equal(step.data.second_factor, 'enrol');
    const cookie = cookieOf(step);
    const page = await s.req<string>('/login/enrol', { headers: { cookie, accept: 'text/html' } });
    assert.match(page.data, /id="passkey-enrol-button"[^>]*data-base="\/login\/enrol\/passkey"/);
    assert.match(page.data, /<script src="\/login\/passkey-enrol.js"><\/script>/);
    assert.match(page.headers.get('content-security-policy') ?? '', /script-src 'self'; connect-src 'self'/);
    assert.match((await s.req<string>('/login/passkey-enrol.js')).data, /startRegistration/);
    const key = softwarePasskey();
    const opts = await s.req('/login/enrol/passkey/options', { method: 'POST', headers: { cookie, ...json }, json: {} });
    assert.equal(opts.status, 200, JSON.stringify(opts.data));
    const good = key.register(opts.data.options, ORIGIN);
    for (const [body, field] of [
      [{ credential: good }, 'name'],
      [{ name: '', credential: good }, 'name'],
      [{ name: 'x'.repeat(65), credential: good }, 'name'],
      [{ name: 'Key', credential: { ...good, type: 'password' } }, 'credential.type'],
      [{ name: 'Key', credential: good, extra: 1 }, 'extra'],
      [{ name: 'Key', credential: good, next: 5 }, 'next'],
    ] as const) {
      const bad = await s.req('/login/enrol/passkey', { method: 'POST', headers: { cookie, ...json }, json: body });
      assert.equal(bad.status, 400, JSON.stringify(bad.data));
      assert.ok(bad.data.fields?.[field], `${field}: ${JSON.stringify(bad.data.fields)}`);
    }
    assert.equal((await passkeyRows(id)).length, 0, 'nothing stored');
    const foreign = await s.req('/login/enrol/passkey', {
      method: 'POST',
      headers: { cookie, ...json },
      json: { name: 'Key', credential: key.register(opts.data.options, 'https://evil.example.test') },
    });
    assert.equal(foreign.status, 422, JSON.stringify(foreign.data));
    assert.equal((await passkeyRows(id)).length, 0);
    // the challenge was spent by the refusal: new options, the right origin
    const again = await s.req('/login/enrol/passkey/options', { method: 'POST', headers: { cookie, ...json }, json: {} });
    const ok = await s.req('/login/enrol/passkey', {
      method: 'POST',
      headers: { cookie, ...json },
      json: { name: 'Phone', credential: key.register(again.data.options, ORIGIN), next: '/peers' },
    });
    assert.equal(ok.status, 200, JSON.stringify(ok.data));
    assert.equal(ok.data.user.username, ENROL.username);
    assert.equal(ok.data.recovery_codes.length, 10);
    const signedIn = cookieOf(ok);
    assert.ok(signedIn && signedIn !== cookie, 'a fresh session id');
    assert.equal((await s.req('/api/v1/session', { headers: { cookie: signedIn, ...json } })).data.user!.username, ENROL.username);
    assert.deepEqual(
      (await passkeyRows(id)).map((r) => r.name),
      ['Phone'],
    );
    // the enrolled passkey is the second step of the next sign-in
    assert.equal((await s.req('/login', { method: 'POST', headers: json, json: ENROL })).data.second_factor, 'passkey');
  } finally {
    await s.req('/api/v1/settings/security', { method: 'PUT', headers: full, json: { second_factor: { required: false } } });
  }
});

test('without an admin origin, passkeys are refused with the setting to set', async () => {
  const bare = await startTestServer({ GATEHOUSE_RATE_LIMIT_LOGIN: '100000' });
  try {
    const sess = await login(bare);
    const r = await bare.req('/api/v1/settings/second-factor/passkeys/options', {
      method: 'POST',
      headers: { cookie: sess.cookie, 'x-csrf-token': sess.csrf, ...json },
      json: { current: ADMIN.password },
    });
    assert.equal(r.status, 409);
    assert.equal(r.data.code, 'passkey.no_origin');
    assert.match(r.data.error!, /GATEHOUSE_ADMIN_ORIGIN/);
    const p = await bare.req('/login/passkey/options', { method: 'POST', headers: json, json: {} });
    assert.equal(p.status, 409);
  } finally {
    await bare.close();
  }
});
