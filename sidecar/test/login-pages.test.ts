// The admin sign-in side of the web UI: the login page's `next` target (and open-redirect
// attempts), the lockout message with how long the lock lasts, and the forced change of a generated
// password (GET/POST /password, the flag in GET /api/v1/session, the password file removed).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { startTestServer, login, ADMIN, type TestServer } from './lib/server.js';
import { manualClock } from '../src/util/clock.js';
import { INITIAL_PASSWORD_FILE } from '../src/users/service.js';
import { safeNext } from '../src/auth/next.js';
import { LAST_USER_COOKIE, LOCKED_COOKIE } from '../src/auth/next.js';

const clock = manualClock(Date.UTC(2026, 10, 24, 9, 0, 0));
let s: TestServer;
before(async () => {
  s = await startTestServer({ GATEHOUSE_RATE_LIMIT_LOGIN: '1000' }, { clock });
});
after(async () => s.close());

const html = { accept: 'text/html' };
const formLogin = (fields: Record<string, string>, headers: Record<string, string> = {}) =>
  s.req('/login', { method: 'POST', body: new URLSearchParams(fields), headers: { ...html, ...headers } });
const cookiesOf = (res: Response) =>
  res.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
/** The value of the login form's hidden `next` field. */
const hiddenNext = (body: string) => /<input type="hidden" name="next" value="([^"]*)">/.exec(body)![1];

const OPEN_REDIRECTS = [
  '//evil.example/',
  '/\\evil.example/',
  '/\\/evil.example',
  '\\\\evil.example',
  'https://evil.example/',
  'http:evil.example',
  'javascript:alert(1)',
  '/\t/evil.example',
  '/\n/evil.example',
  ' //evil.example',
  '///evil.example',
  'evil.example',
  '',
];

test('safeNext keeps same-origin paths and turns everything else into /', () => {
  for (const ok of ['/', '/peers', '/peers?q=x&sort=name', '/routes/3#auth', '/a/%2F%2Fb', '/api-docs']) assert.equal(safeNext(ok), ok);
  for (const bad of OPEN_REDIRECTS) assert.equal(safeNext(bad), '/', JSON.stringify(bad));
  assert.equal(safeNext(undefined), '/');
  assert.equal(safeNext(['/peers']), '/');
  assert.equal(safeNext('/' + 'a'.repeat(3000)), '/');
});

test('next is carried from GET /login?next= through the form to the redirect after signing in', async () => {
  const page = await s.req<string>('/login?next=/peers%3Fq%3Dx', { headers: html });
  assert.equal(page.status, 200);
  assert.equal(hiddenNext(page.data), '/peers?q=x');
  const ok = await formLogin({ username: ADMIN.username, password: ADMIN.password, next: hiddenNext(page.data) });
  assert.equal(ok.status, 302);
  assert.equal(ok.headers.get('location'), '/peers?q=x');
  // already signed in: GET /login goes straight on to the target
  const again = await s.req('/login?next=/routes%3Ftype%3Dl4', { headers: { ...html, cookie: cookiesOf(ok) } });
  assert.equal(again.status, 302);
  assert.equal(again.headers.get('location'), '/routes?type=l4');
  // a failed attempt keeps the target for the next try
  const bad = await formLogin({ username: ADMIN.username, password: 'wrong', next: '/peers?q=x' });
  assert.equal(bad.headers.get('location'), '/login?error=invalid&next=%2Fpeers%3Fq%3Dx');
  const retry = await s.req<string>(bad.headers.get('location')!, { headers: html });
  assert.equal(hiddenNext(retry.data), '/peers?q=x');
  assert.match(retry.data, /Invalid username or password/);
  await s.deps.lockout.unlock('admin', ADMIN.username);
});

test('open-redirect attempts in next end at / (form post, page field, signed-in GET /login, failed login)', async () => {
  const { cookie } = await login(s);
  for (const evil of OPEN_REDIRECTS) {
    const res = await formLogin({ username: ADMIN.username, password: ADMIN.password, next: evil });
    if (/[\t\n]/.test(evil)) {
      // a control character in any text field is refused as bad input, before signing in
      assert.equal(res.status, 400, JSON.stringify(evil));
      assert.ok(res.data.fields!.next);
      assert.equal(res.headers.get('location'), null);
    } else {
      assert.equal(res.status, 302, JSON.stringify(evil));
      assert.equal(res.headers.get('location'), '/', `POST /login next=${JSON.stringify(evil)}`);
    }
    const q = `/login?next=${encodeURIComponent(evil)}`;
    const page = await s.req<string>(q, { headers: html });
    assert.equal(hiddenNext(page.data), '', `GET ${q} puts nothing in the form`);
    const signedIn = await s.req(q, { headers: { ...html, cookie } });
    assert.equal(signedIn.headers.get('location'), '/', `GET ${q} signed in`);
    const failed = await formLogin({ username: ADMIN.username, password: 'wrong', next: evil });
    if (res.status === 302) assert.equal(failed.headers.get('location'), '/login?error=invalid', `failed login with next=${JSON.stringify(evil)}`);
    await s.deps.lockout.unlock('admin', ADMIN.username);
  }
  // a JSON client still gets JSON, never a redirect
  const json = await s.req('/login', { method: 'POST', json: { ...ADMIN, next: '//evil.example/' }, headers: { accept: 'application/json' } });
  assert.equal(json.status, 200);
  assert.equal(json.headers.get('location'), null);
});

test('the lockout message after the lockout says how long the lock lasts (en and de)', async () => {
  const { cookie, csrf } = await login(s);
  assert.equal(
    (
      await s.req('/api/v1/users', {
        method: 'POST',
        json: { username: 'locky', password: 'locky-password', role: 'user' },
        headers: { cookie, 'x-csrf-token': csrf },
      })
    ).status,
    201,
  );
  for (let i = 0; i < 5; i++) assert.equal((await formLogin({ username: 'locky', password: 'wrong' })).headers.get('location'), '/login?error=invalid');
  clock.advance(3 * 60_000);
  const locked = await formLogin({ username: 'locky', password: 'locky-password', next: '/peers' });
  assert.equal(locked.status, 302);
  assert.equal(locked.headers.get('location'), '/login?error=locked&next=%2Fpeers');
  const set = locked.headers.getSetCookie().find((c) => c.startsWith(`${LOCKED_COOKIE}=`));
  assert.ok(set, 'the redirect carries the end of the lock');
  assert.match(set!, /path=\/login/i);
  assert.match(set!, /httponly/i);
  // 5th failure at t0, lock 15 minutes, now t0 + 3 min: 12 minutes left
  const page = await s.req<string>(locked.headers.get('location')!, { headers: { ...html, cookie: cookiesOf(locked) } });
  assert.equal(page.status, 200);
  assert.match(page.data, /role="alert">Too many failed attempts: this account is locked for a while\. Try again in 12 minutes\.</);
  assert.equal(hiddenNext(page.data), '/peers');
  const de = await s.req<string>('/login?error=locked', { headers: { accept: 'text/html', 'accept-language': 'de-DE,de;q=0.9', cookie: cookiesOf(locked) } });
  assert.match(de.data, /Zu viele Fehlversuche: dieses Konto ist vorübergehend gesperrt\. Erneut versuchen in 12 Minuten\./);
  // a forged (unsigned) cookie is not believed: the policy's duration is shown instead
  const forged = await s.req<string>('/login?error=locked', { headers: { ...html, cookie: `${LOCKED_COOKIE}=${clock() + 999 * 60_000}` } });
  assert.match(forged.data, /locked for a while\. A lock lasts up to 15 minutes\./);
  assert.doesNotMatch(forged.data, /999/);
  // once the lock has lifted the cookie says nothing more
  clock.advance(13 * 60_000);
  const later = await s.req<string>('/login?error=locked', { headers: { ...html, cookie: cookiesOf(locked) } });
  assert.match(later.data, /A lock lasts up to 15 minutes\./);
  assert.equal((await formLogin({ username: 'locky', password: 'locky-password' })).headers.get('location'), '/');
});

/** A server whose first admin got a generated password; returns it with the password read from the file. */
async function generatedServer(): Promise<{ g: TestServer; file: string; password: string }> {
  const g = await startTestServer({ GATEHOUSE_ADMIN_PASSWORD: '', GATEHOUSE_RATE_LIMIT_LOGIN: '1000' });
  const file = path.join(g.dataDir, INITIAL_PASSWORD_FILE);
  const password = /password: (\S+)/.exec(fs.readFileSync(file, 'utf8'))![1];
  return { g, file, password };
}

test('first sign-in with the generated password: /password, change, file removed, flag cleared, the API reports it', async () => {
  const { g, file, password } = await generatedServer();
  try {
    const post = (p: string, fields: Record<string, string>, cookie: string) =>
      g.req(p, { method: 'POST', body: new URLSearchParams(fields), headers: { ...html, cookie } });
    const signIn = await g.req('/login', { method: 'POST', body: new URLSearchParams({ username: 'admin', password, next: '/peers?q=x' }), headers: html });
    assert.equal(signIn.status, 302);
    assert.equal(signIn.headers.get('location'), '/password?next=%2Fpeers%3Fq%3Dx', 'a generated password is changed first');
    const cookie = cookiesOf(signIn);
    const session = await g.req('/api/v1/session', { headers: { cookie } });
    assert.equal(session.data.must_change_password, true);
    assert.equal(session.data.user!.must_change_password, true);
    const csrf = session.data.csrfToken as string;
    // signed in but not yet changed: the UI's / and GET /login send to /password too
    const root = await g.req('/', { headers: { ...html, cookie } });
    assert.equal(root.status, 302);
    assert.equal(root.headers.get('location'), '/password');
    assert.equal((await g.req('/login?next=/routes', { headers: { ...html, cookie } })).headers.get('location'), '/password?next=%2Froutes');

    const page = await g.req<string>('/password?next=%2Fpeers%3Fq%3Dx', { headers: { ...html, cookie } });
    assert.equal(page.status, 200);
    assert.equal(
      page.headers.get('content-security-policy'),
      "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'",
    );
    assert.doesNotMatch(page.data, /<script/i);
    assert.match(page.data, /Your password was generated/);
    assert.match(page.data, new RegExp(`name="_csrf" value="${csrf}"`));
    assert.equal(hiddenNext(page.data), '/peers?q=x');

    // refused attempts change nothing and say why
    const base = { _csrf: csrf, next: '/peers?q=x', current: password, new_password: 'my-own-password', confirm: 'my-own-password' };
    for (const [fields, code] of [
      [{ current: 'wrong-password' }, 'current'],
      [{ new_password: 'short', confirm: 'short' }, 'policy'],
      [{ confirm: 'something-else' }, 'mismatch'],
      [{ new_password: password, confirm: password }, 'same'],
    ] as const) {
      const res = await post('/password', { ...base, ...fields }, cookie);
      assert.equal(res.status, 302);
      assert.equal(res.headers.get('location'), `/password?error=${code}&next=%2Fpeers%3Fq%3Dx`);
      const shown = await g.req<string>(res.headers.get('location')!, { headers: { ...html, cookie } });
      assert.match(shown.data, /class="err" role="alert">[^<]+</, code);
    }
    assert.equal((await post('/password', { ...base, _csrf: 'forged' }, cookie)).status, 403, 'CSRF');
    assert.ok(fs.existsSync(file), 'nothing changed yet');
    assert.equal((await g.req('/api/v1/session', { headers: { cookie } })).data.must_change_password, true);

    const done = await post('/password', base, cookie);
    assert.equal(done.status, 302);
    assert.equal(done.headers.get('location'), '/peers?q=x');
    assert.equal(fs.existsSync(file), false, 'the password file is removed');
    const after = await g.req('/api/v1/session', { headers: { cookie } });
    assert.equal(after.status, 200, 'the session it was changed from stays');
    assert.equal(after.data.must_change_password, false);
    assert.equal(after.data.user!.must_change_password, false);
    const oldPw = await g.req('/login', { method: 'POST', json: { username: 'admin', password }, headers: { accept: 'application/json' } });
    assert.equal(oldPw.status, 401);
    const newPw = await g.req('/login', {
      method: 'POST',
      body: new URLSearchParams({ username: 'admin', password: 'my-own-password', next: '/peers' }),
      headers: html,
    });
    assert.equal(newPw.headers.get('location'), '/peers', 'no detour any more');
    const ui = await g.req('/', { headers: { ...html, cookie: cookiesOf(newPw) } });
    assert.equal(ui.headers.get('location'), null, 'the UI is no longer redirected');
  } finally {
    await g.close();
  }
});

test('GET /password signed out goes to the login page, which comes back to it', async () => {
  const res = await s.req('/password?next=%2Fpeers', { headers: html });
  assert.equal(res.status, 302);
  assert.equal(res.headers.get('location'), '/login?next=%2Fpassword%3Fnext%3D%252Fpeers');
  const unauth = await s.req('/password', { method: 'POST', body: new URLSearchParams({ current: 'x', new_password: 'y' }), headers: html });
  assert.equal(unauth.status, 302);
  assert.equal(unauth.headers.get('location'), '/login?next=%2Fpassword');
});

test('the JSON password change (PUT /api/v1/settings/password) also clears the flag and removes the file', async () => {
  const { g, file, password } = await generatedServer();
  try {
    const signIn = await g.req('/login', { method: 'POST', json: { username: 'admin', password }, headers: { accept: 'application/json' } });
    assert.equal(signIn.status, 200);
    assert.equal(signIn.data.must_change_password, true);
    const cookie = cookiesOf(signIn);
    const h = { cookie, 'x-csrf-token': signIn.data.csrfToken! };
    const same = await g.req('/api/v1/settings/password', { method: 'PUT', json: { current: password, next: password }, headers: h });
    assert.equal(same.status, 422);
    assert.ok(same.data.fields!.next);
    assert.ok(fs.existsSync(file));
    const ok = await g.req('/api/v1/settings/password', { method: 'PUT', json: { current: password, next: 'json-new-password' }, headers: h });
    assert.equal(ok.status, 200);
    assert.equal(fs.existsSync(file), false);
    assert.equal((await g.req('/api/v1/session', { headers: { cookie } })).data.must_change_password, false);
    assert.equal((await g.req('/api/v1/settings/profile', { headers: { cookie } })).data.profile.must_change_password, false);
  } finally {
    await g.close();
  }
});

test("a reset of the first admin's password (as the CLI does) removes the stale password file and sets the flag; another user's reset leaves the file", async () => {
  const { g, file, password } = await generatedServer();
  try {
    const admin = (await g.deps.users.list()).find((u) => u.username === 'admin')!;
    const other = await g.deps.users.create({ username: 'someone', password: 'someone-password', role: 'user' });
    await g.deps.users.resetPassword(other.id, undefined);
    assert.ok(fs.existsSync(file), 'the file names another user');
    assert.equal((await g.deps.users.get(other.id)).must_change_password, true);
    const fresh = await g.deps.users.resetPassword(admin.id, undefined);
    assert.notEqual(fresh, password);
    assert.equal(fs.existsSync(file), false, 'its password no longer works');
    assert.equal((await g.deps.users.get(admin.id)).must_change_password, true);
  } finally {
    await g.close();
  }
});

test(
  'npm run cli -- reset-admin-password sets the flag: the next sign-in goes to /password',
  { skip: process.env.TEST_DATABASE_URL ? 'uses the SQLite file of the test server' : false },
  async () => {
    const cli = path.resolve(import.meta.dirname, '..', 'src', 'cli.ts');
    const r = await promisify(execFile)(process.execPath, ['--import', 'tsx', cli, 'reset-admin-password', ADMIN.username], {
      env: { ...process.env, GATEHOUSE_DATA_DIR: s.dataDir },
    });
    const pw = /new password for admin: (\S+)/.exec(r.stdout)![1];
    const res = await formLogin({ username: ADMIN.username, password: pw, next: '/tokens' });
    assert.equal(res.headers.get('location'), '/password?next=%2Ftokens');
    const json = await s.req('/login', { method: 'POST', json: { username: ADMIN.username, password: pw }, headers: { accept: 'application/json' } });
    assert.equal(json.data.user!.must_change_password, true);
    // back to the shared password for the other tests
    const h = { cookie: cookiesOf(json), 'x-csrf-token': json.data.csrfToken! };
    assert.equal((await s.req('/api/v1/settings/password', { method: 'PUT', json: { current: pw, next: ADMIN.password }, headers: h })).status, 200);
    assert.equal((await s.req('/api/v1/session', { headers: { cookie: h.cookie } })).data.must_change_password, false);
  },
);

test('the password page renders the same (golden: en forced with an error, de voluntary), and escapes what it is given', async () => {
  const { renderPasswordPage } = await import('../src/web/password.js');
  const { assertGolden, goldenDir } = await import('./lib/golden.js');
  assertGolden(
    path.join(goldenDir('pages'), 'password-en-forced.html'),
    renderPasswordPage({ lang: 'en', forced: true, error: 'mismatch', csrf: 'csrf-token-1', next: '/peers?q=x&y="z"' }),
  );
  assertGolden(
    path.join(goldenDir('pages'), 'password-de.html'),
    renderPasswordPage({ lang: 'de', forced: false, csrf: 'csrf-token-2', next: '//evil.example/' }),
  );
  const unknown = renderPasswordPage({ lang: 'en', forced: false, error: '<script>', csrf: '"><x', next: '/' });
  assert.doesNotMatch(unknown, /<script|"><x/);
  assert.doesNotMatch(unknown, /role="alert"/, 'an unknown error code shows nothing');
});

test('the sign-in page renders the same (golden: en with the lockout message and a target, de plain with a refused target)', async () => {
  const { renderLoginPage } = await import('../src/web/index.js');
  const { assertGolden, goldenDir } = await import('./lib/golden.js');
  assertGolden(
    path.join(goldenDir('pages'), 'login-en-locked.html'),
    renderLoginPage({ lang: 'en', error: 'Too many failed attempts: this account is locked for a while. Try again in 12 minutes.', next: '/peers?q=x' }),
  );
  assertGolden(path.join(goldenDir('pages'), 'login-de.html'), renderLoginPage({ lang: 'de', next: '/\\evil.example' }));
});

test('a refused sign-in keeps the username in the form (a signed cookie; never the password); the focus goes to the password', async () => {
  const name = 'Kim <O"Neil> & co';
  const refused = await formLogin({ username: name, password: 'the wrong one' });
  assert.equal(refused.headers.get('location'), '/login?error=invalid');
  const set = refused.headers.getSetCookie().find((c) => c.startsWith(`${LAST_USER_COOKIE}=`));
  assert.ok(set, 'the redirect carries the name');
  assert.match(set!, /path=\/login/i);
  assert.match(set!, /httponly/i);
  assert.doesNotMatch(set!, /wrong/);
  const page = await s.req<string>('/login?error=invalid', { headers: { ...html, cookie: cookiesOf(refused) } });
  assert.match(page.data, /<input id="username" name="username" autocomplete="username" required value="Kim &lt;O&quot;Neil&gt; &amp; co">/);
  assert.match(page.data, /<input id="password" name="password" type="password" autocomplete="current-password" required autofocus>/);
  assert.doesNotMatch(page.data, /the wrong one/);
  // a forged (unsigned) cookie is not believed; without an error the form starts empty
  const forged = await s.req<string>('/login?error=invalid', { headers: { ...html, cookie: `${LAST_USER_COOKIE}=mallory` } });
  assert.doesNotMatch(forged.data, /mallory/);
  assert.match(forged.data, /name="username" autocomplete="username" required autofocus>/);
  const fresh = await s.req<string>('/login', { headers: { ...html, cookie: cookiesOf(refused) } });
  assert.match(fresh.data, /name="username" autocomplete="username" required autofocus>/);
});
