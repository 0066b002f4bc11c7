// The second factor of admin-UI accounts (auth/second-factor.ts) through the API and the sign-in
// forms, on a manual clock: enrolment under Profile (wrong code refused, recovery codes once), the
// sign-in's second step for JSON clients and browsers (each TOTP step taken once, a recovery code
// spent once, wrong codes counted toward the lockout, a stale password step refused), the policy
// that forces enrolment at the next sign-in, the owner's removal (refused under the policy), an
// admin's reset, and the CLI's reset-second-factor.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { startTestServer, apiToken, bearer, login, ADMIN, type TestServer } from './lib/server.js';
import { manualClock } from '../src/util/clock.js';
import { totpCode } from '../src/util/totp.js';
import { PENDING_SIGN_IN_MS } from '../src/auth/pending.js';
import { findRow } from '../src/db/define.js';
import type { UserTotpRow } from '../src/db/models.js';
import { str } from '../../test/lib/json.js';

const clock = manualClock(Math.floor(Date.now() / 30_000) * 30_000 + 5_000);
let s: TestServer;
let full: Record<string, string>;
const OPS = { username: 'ops', password: 'ops-password-123' };
let opsId = 0;
const json = { accept: 'application/json' };
const html = { accept: 'text/html' };

before(async () => {
  s = await startTestServer({ GATEHOUSE_RATE_LIMIT_ADMIN: '100000', GATEHOUSE_RATE_LIMIT_LOGIN: '100000' }, { clock });
  full = bearer(await apiToken(s));
  const u = await s.req('/api/v1/users', { method: 'POST', headers: full, json: { ...OPS, role: 'operator' } });
  assert.equal(u.status, 201, JSON.stringify(u.data));
  opsId = u.data.user.id;
});
after(async () => s.close());

const cookieOf = (r: Response) =>
  r.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
/** The password step, as a JSON client: the answer and the session cookie it set. */
async function passwordStep(user = OPS) {
  const r = await s.req('/login', { method: 'POST', json: user, headers: json });
  return { r, cookie: cookieOf(r) };
}
async function enrolOwn(sess: { cookie: string; csrf: string }, password: string): Promise<{ secret: string; codes: string[] }> {
  const h = { cookie: sess.cookie, 'x-csrf-token': sess.csrf, ...json };
  const setup = await s.req('/api/v1/settings/second-factor/totp', { method: 'POST', headers: h, json: { current: password } });
  assert.equal(setup.status, 200, JSON.stringify(setup.data));
  assert.match(setup.data.setup.qr_code, /^data:image\/png;base64,/);
  assert.match(setup.data.setup.otpauth_url, /^otpauth:\/\/totp\//);
  const on = await s.req('/api/v1/settings/second-factor/totp/verify', {
    method: 'POST',
    headers: h,
    json: { token: totpCode(setup.data.setup.secret, clock()) },
  });
  assert.equal(on.status, 200, JSON.stringify(on.data));
  return { secret: setup.data.setup.secret, codes: on.data.recovery_codes };
}

let secret = '';
let codes: string[] = [];

test('enrolment under Profile: the password is asked, a wrong code is refused with the field and changes nothing, the right one activates it with ten recovery codes', async () => {
  const sess = await login(s, OPS);
  const h = { cookie: sess.cookie, 'x-csrf-token': sess.csrf, ...json };
  const status0 = await s.req('/api/v1/settings/second-factor', { headers: h });
  assert.deepEqual(status0.data.second_factor, { totp_active: false, totp_setup_pending: false, passkeys: 0, recovery_codes_left: 0, required: false });
  const wrongPw = await s.req('/api/v1/settings/second-factor/totp', { method: 'POST', headers: h, json: { current: 'not-my-password' } });
  assert.equal(wrongPw.status, 422);
  assert.ok(wrongPw.data.fields!.current);
  const setup = await s.req('/api/v1/settings/second-factor/totp', { method: 'POST', headers: h, json: { current: OPS.password } });
  assert.equal(setup.status, 200);
  secret = setup.data.setup.secret;
  const bad = await s.req('/api/v1/settings/second-factor/totp/verify', { method: 'POST', headers: h, json: { token: 'abc' } });
  assert.equal(bad.status, 400);
  assert.ok(bad.data.fields!.token);
  const wrong = await s.req('/api/v1/settings/second-factor/totp/verify', {
    method: 'POST',
    headers: h,
    json: { token: totpCode(secret, clock() + 10 * 60_000) },
  });
  assert.equal(wrong.status, 422, JSON.stringify(wrong.data));
  assert.ok(wrong.data.fields!.token);
  assert.equal((await s.req('/api/v1/settings/second-factor', { headers: h })).data.second_factor.totp_active, false, 'nothing activated');
  const on = await s.req('/api/v1/settings/second-factor/totp/verify', { method: 'POST', headers: h, json: { token: totpCode(secret, clock()) } });
  assert.equal(on.status, 200, JSON.stringify(on.data));
  codes = on.data.recovery_codes;
  assert.equal(codes.length, 10);
  assert.equal(new Set(codes).size, 10);
  for (const c of codes) assert.match(c, /^[A-Z2-9]{4}-[A-Z2-9]{4}-[A-Z2-9]{4}-[A-Z2-9]{4}$/);
  assert.deepEqual(on.data.second_factor, { totp_active: true, totp_setup_pending: false, passkeys: 0, recovery_codes_left: 10, required: false });
  // the users list shows who has one; the database holds neither the secret nor a code in plain text
  const users = await s.req('/api/v1/users', { headers: full });
  assert.equal(users.data.users.find((u: { id: number }) => u.id === opsId)!.totp_active, true);
  const row = (await findRow<UserTotpRow>(s.deps.db.models.UserTotp, { where: { user_id: opsId } }))!;
  assert.ok(row.secret);
  assert.ok(!row.secret!.includes(secret));
  const hashes = JSON.stringify(await s.deps.db.models.UserRecoveryCode.findAll({ raw: true }));
  for (const c of codes) assert.ok(!hashes.includes(c) && !hashes.includes(c.replace(/-/g, '')));
});

test('sign-in, JSON client: the password step opens no session; the code does, once per 30-second step; a wrong code names the field', async () => {
  clock.advance(30_000);
  const { r, cookie } = await passwordStep();
  assert.equal(r.status, 200, JSON.stringify(r.data));
  assert.deepEqual({ second_factor: r.data.second_factor, next_step: r.data.next_step }, { second_factor: 'totp', next_step: '/login/second-factor' });
  assert.equal(r.data.user, undefined);
  assert.equal((await s.req('/api/v1/session', { headers: { cookie, ...json } })).status, 401, 'not signed in between the steps');
  const wrong = await s.req('/login/second-factor', { method: 'POST', headers: { cookie, ...json }, json: { code: '000000' } });
  assert.equal(wrong.status, 401);
  assert.ok(wrong.data.fields!.code);
  const code = totpCode(secret, clock());
  const ok = await s.req('/login/second-factor', { method: 'POST', headers: { cookie, ...json }, json: { code } });
  assert.equal(ok.status, 200, JSON.stringify(ok.data));
  assert.equal(ok.data.user.username, OPS.username);
  const signedIn = cookieOf(ok);
  assert.ok(signedIn && signedIn !== cookie, 'a fresh session id');
  assert.equal((await s.req('/api/v1/session', { headers: { cookie: signedIn, ...json } })).data.user!.username, OPS.username);
  // the same code again (another sign-in within the same step): refused
  const again = await passwordStep();
  const replay = await s.req('/login/second-factor', { method: 'POST', headers: { cookie: again.cookie, ...json }, json: { code } });
  assert.equal(replay.status, 401, 'a code is taken once');
});

test('sign-in with a recovery code (any case, without dashes): spent once, logged, and counted down', async () => {
  const { cookie } = await passwordStep();
  const typed = codes[0].toLowerCase().replace(/-/g, ' ');
  const ok = await s.req('/login/second-factor', { method: 'POST', headers: { cookie, ...json }, json: { code: typed } });
  assert.equal(ok.status, 200, JSON.stringify(ok.data));
  const again = await passwordStep();
  const spent = await s.req('/login/second-factor', { method: 'POST', headers: { cookie: again.cookie, ...json }, json: { code: codes[0] } });
  assert.equal(spent.status, 401, 'a recovery code works once');
  const sess = cookieOf(ok);
  const st = await s.req('/api/v1/settings/second-factor', { headers: { cookie: sess, ...json } });
  assert.equal(st.data.second_factor.recovery_codes_left, 9);
  const log = await s.req('/api/v1/logs/activity?limit=50', { headers: full });
  assert.ok(
    log.data.entries.some((e) => e.code === 'second_factor.recovery_code_used'),
    JSON.stringify(log.data.entries.map((e) => e.code)),
  );
});

test('browser forms: password → the second-factor page (next kept) → a wrong code back to it saying so → the right code on to next', async () => {
  clock.advance(30_000);
  const first = await s.req('/login', { method: 'POST', headers: html, body: new URLSearchParams({ ...OPS, next: '/peers?q=x' }), redirect: 'manual' });
  assert.equal(first.status, 302);
  assert.equal(first.headers.get('location'), '/login/second-factor?next=%2Fpeers%3Fq%3Dx');
  const cookie = cookieOf(first);
  const page = await s.req<string>('/login/second-factor?next=%2Fpeers%3Fq%3Dx', { headers: { cookie, ...html } });
  assert.equal(page.status, 200);
  assert.match(page.data, /name="code"/);
  assert.match(page.data, /autocomplete="one-time-code"/);
  assert.match(page.headers.get('content-security-policy') ?? '', /default-src 'none'/);
  const wrong = await s.req('/login/second-factor', {
    method: 'POST',
    headers: { cookie, ...html },
    body: new URLSearchParams({ code: '123456', next: '/peers?q=x' }),
    redirect: 'manual',
  });
  assert.equal(wrong.headers.get('location'), '/login/second-factor?error=invalid&next=%2Fpeers%3Fq%3Dx');
  assert.match((await s.req<string>('/login/second-factor?error=invalid', { headers: { cookie, ...html } })).data, /role="alert"/);
  const right = await s.req('/login/second-factor', {
    method: 'POST',
    headers: { cookie, ...html },
    body: new URLSearchParams({ code: totpCode(secret, clock()), next: '/peers?q=x' }),
    redirect: 'manual',
  });
  assert.equal(right.status, 302);
  assert.equal(right.headers.get('location'), '/peers?q=x');
  // without a password step the page sends the browser back to the sign-in page
  const none = await s.req('/login/second-factor', { headers: html, redirect: 'manual' });
  assert.equal(none.headers.get('location'), '/login?error=expired');
});

test('a password step older than 10 minutes is not enough: sign in again', async () => {
  clock.advance(30_000);
  const { cookie } = await passwordStep();
  clock.advance(PENDING_SIGN_IN_MS + 1000);
  const r = await s.req('/login/second-factor', { method: 'POST', headers: { cookie, ...json }, json: { code: totpCode(secret, clock()) } });
  assert.equal(r.status, 401);
  assert.equal(r.data.code, 'second_factor.sign_in_pending');
});

test('wrong codes count toward the lockout: locked after max_attempts, the right code is refused then, and the lock lifts', async () => {
  clock.advance(60_000);
  const policy = (await s.req('/api/v1/settings/security', { headers: full })).data.lockout;
  const { cookie } = await passwordStep();
  let last: { status: number; data: { code?: string } } | undefined;
  for (let i = 0; i < policy.max_attempts; i++) {
    last = await s.req('/login/second-factor', { method: 'POST', headers: { cookie, ...json }, json: { code: '000000' } });
  }
  assert.equal(last!.data.code, 'auth.account_locked', JSON.stringify(last!.data));
  const pw = await passwordStep();
  assert.equal(pw.r.data.code, 'auth.account_locked', 'the password step is locked too');
  clock.advance(policy.duration * 60_000 + 1000);
  const { cookie: c2 } = await passwordStep();
  const ok = await s.req('/login/second-factor', { method: 'POST', headers: { cookie: c2, ...json }, json: { code: totpCode(secret, clock()) } });
  assert.equal(ok.status, 200, JSON.stringify(ok.data));
});

test('the policy: an account without a second factor enrols at its next sign-in (JSON and browser), and may not remove it while the policy holds', async () => {
  const put = await s.req('/api/v1/settings/security', { method: 'PUT', headers: full, json: { second_factor: { required: true } } });
  assert.equal(put.status, 200, JSON.stringify(put.data));
  assert.deepEqual(put.data.second_factor, { required: true });
  const pending = await s.req('/login', { method: 'POST', json: ADMIN, headers: json });
  assert.equal(pending.data.second_factor, 'enrol');
  const cookie = cookieOf(pending);
  const setup = await s.req('/login/enrol', { method: 'POST', headers: { cookie, ...json }, json: {} });
  assert.equal(setup.status, 200, JSON.stringify(setup.data));
  const adminSecret = setup.data.setup!.secret;
  // the browser's enrolment page shows the same pending secret (reloading it changes nothing)
  const page = await s.req<string>('/login/enrol', { headers: { cookie, ...html } });
  assert.match(page.data, new RegExp(`<code id="totp-secret">${adminSecret}</code>`));
  assert.match(page.data, /<img src="data:image\/png;base64,/);
  const wrong = await s.req('/login/enrol', { method: 'POST', headers: { cookie, ...json }, json: { code: '000000' } });
  assert.equal(wrong.status, 422);
  const done = await s.req('/login/enrol', { method: 'POST', headers: { cookie, ...json }, json: { code: totpCode(adminSecret, clock()) } });
  assert.equal(done.status, 200, JSON.stringify(done.data));
  assert.equal(done.data.user!.username, ADMIN.username);
  assert.equal(done.data.recovery_codes!.length, 10);
  const h = { cookie: cookieOf(done), 'x-csrf-token': done.data.csrfToken!, ...json };
  const remove = await s.req('/api/v1/settings/second-factor/totp', { method: 'DELETE', headers: h, json: { current: ADMIN.password } });
  assert.equal(remove.status, 409);
  assert.equal(remove.data.code, 'second_factor.required_by_policy');
  // a browser's enrolment ends on the recovery-codes page, with the way on
  const created = await s.req('/api/v1/users', { method: 'POST', headers: full, json: { username: 'newbie', password: 'newbie-password-1', role: 'viewer' } });
  assert.equal(created.status, 201);
  const first = await s.req('/login', {
    method: 'POST',
    headers: html,
    body: new URLSearchParams({ username: 'newbie', password: 'newbie-password-1' }),
    redirect: 'manual',
  });
  assert.equal(first.headers.get('location'), '/login/enrol');
  const bc = cookieOf(first);
  const enrolPage = await s.req<string>('/login/enrol', { headers: { cookie: bc, ...html } });
  const newbieSecret = /<code id="totp-secret">([A-Z2-7]+)<\/code>/.exec(enrolPage.data)![1];
  const codesPage = await s.req('/login/enrol', {
    method: 'POST',
    headers: { cookie: bc, ...html },
    body: new URLSearchParams({ code: totpCode(newbieSecret, clock()) }),
  });
  assert.equal(codesPage.status, 200);
  assert.match(codesPage.headers.get('content-type') ?? '', /text\/html/);
  assert.equal([...str(codesPage.data).matchAll(/<li><code>[A-Z2-9-]{19}<\/code><\/li>/g)].length, 10);
  assert.match(codesPage.headers.get('cache-control') ?? '', /no-store/);
  assert.equal((await s.req('/api/v1/session', { headers: { cookie: cookieOf(codesPage), ...json } })).data.user!.username, 'newbie');
});

test("an admin's reset is the way back in: the user signs in with the password (and, under the policy, enrols anew)", async () => {
  const reset = await s.req(`/api/v1/users/${opsId}/second-factor`, { method: 'DELETE', headers: full });
  assert.equal(reset.status, 200);
  assert.equal(reset.data.reset, true);
  const under = await passwordStep();
  assert.equal(under.r.data.second_factor, 'enrol');
  await s.req('/api/v1/settings/security', { method: 'PUT', headers: full, json: { second_factor: { required: false } } });
  const free = await passwordStep();
  assert.equal(free.r.data.user!.username, OPS.username);
  const again = await s.req(`/api/v1/users/${opsId}/second-factor`, { method: 'DELETE', headers: full });
  assert.equal(again.data.reset, false);
  // the owner's own removal (policy off), with the password
  const sess = await login(s, OPS);
  const h = { cookie: sess.cookie, 'x-csrf-token': sess.csrf, ...json };
  await enrolOwn(sess, OPS.password);
  const bad = await s.req('/api/v1/settings/second-factor/totp', { method: 'DELETE', headers: h, json: { current: 'wrong-password' } });
  assert.equal(bad.status, 422);
  const gone = await s.req('/api/v1/settings/second-factor/totp', { method: 'DELETE', headers: h, json: { current: OPS.password } });
  assert.equal(gone.status, 200, JSON.stringify(gone.data));
  assert.equal(gone.data.second_factor.totp_active, false);
  assert.equal(gone.data.second_factor.recovery_codes_left, 0);
});

test('npm run cli -- reset-second-factor <user>', { skip: !!process.env.TEST_DATABASE_URL && 'the CLI test runs on SQLite' }, async () => {
  const sess = await login(s, OPS);
  await enrolOwn(sess, OPS.password);
  const out = execFileSync(process.execPath, ['--import', 'tsx', path.join(import.meta.dirname, '../src/cli.ts'), 'reset-second-factor', OPS.username], {
    env: { ...process.env, GATEHOUSE_DATA_DIR: s.dataDir },
    encoding: 'utf8',
  });
  assert.match(out, /second factor of ops removed/);
  assert.equal((await passwordStep()).r.data.user!.username, OPS.username);
  const log = await s.req('/api/v1/logs/activity?limit=20', { headers: full });
  assert.ok(log.data.entries.some((e) => e.code === 'second_factor.reset'));
});
