// Route auth end to end against the sidecar itself, the way Caddy talks to it: the forward-auth
// subrequest GET /route-auth/verify (X-Route-Domain, X-Forwarded-*), and the login pages under
// /route-auth/* with the protected domain's Host. Email codes come from a real SMTP server on
// loopback; TOTP codes are computed from the secret.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import speakeasy from 'speakeasy';
import { startTestServer, apiToken, bearer, type TestServer } from './lib/server.js';
import { Browser, codeFromMail, createRoute, rawRequest, startSmtp, type SmtpSink } from './route-auth-helpers.js';
import { manualClock } from '../src/util/clock.js';
import { SESSION_DURATIONS } from '../src/route-auth/schema.js';
import type { RouteAuthService } from '../src/route-auth/service.js';

let s: TestServer;
let h: Record<string, string>;
let smtp: SmtpSink;
const clock = manualClock(Math.floor(Date.now() / 30_000) * 30_000 + 5_000);
const H1 = SESSION_DURATIONS['1h'];
const PASSWORD = 'correct horse battery';

before(async () => {
  s = await startTestServer({ GATEHOUSE_RATE_LIMIT_ADMIN: '100000', GATEHOUSE_RATE_LIMIT_LOGIN: '100000' }, { clock });
  h = bearer(await apiToken(s));
  smtp = await startSmtp({ user: 'mailer', password: 'smtp-secret' });
  const put = await s.req('/api/v1/smtp', {
    method: 'PUT',
    headers: h,
    json: { host: '127.0.0.1', port: smtp.port, secure: false, user: 'mailer', password: 'smtp-secret', from: 'Gatehouse <gatehouse@example.test>' },
  });
  assert.equal(put.status, 200);
});
after(async () => {
  await smtp.close();
  await s.close();
});

const svc = () => s.deps.routeAuth as RouteAuthService;

async function protectedRoute(body: Record<string, unknown>, route: Record<string, unknown> = {}) {
  const r = await createRoute(s, route);
  const res = await s.req(`/api/v1/routes/${r.id}/auth`, { method: 'POST', headers: h, json: { session_max_age: H1, email: 'owner@example.test', ...body } });
  assert.equal(res.status, 200, JSON.stringify(res.data));
  return r;
}

async function passwordLogin(b: Browser, email = 'owner@example.test', password = PASSWORD, rd?: string) {
  return b.submit('password', { email, password }, rd);
}

async function activateTotp(routeId: number): Promise<string> {
  const setup = await s.req(`/api/v1/routes/${routeId}/auth/totp-setup`, { method: 'POST', headers: h });
  assert.equal(setup.status, 200);
  const secret = setup.data.secret as string;
  const v = await s.req(`/api/v1/routes/${routeId}/auth/totp-verify`, { method: 'POST', headers: h, json: { token: totpAt(secret, 0) } });
  assert.equal(v.status, 200, JSON.stringify(v.data));
  return secret;
}

/** The TOTP code `steps` 30-second steps from the (manual) now. */
const totpAt = (secret: string, steps: number) => speakeasy.totp({ secret, encoding: 'base32', time: Math.floor(clock() / 1000) + steps * 30 });

test('verify without a session: 302 to the login page with the original URL kept', async () => {
  const r = await protectedRoute({ method: 'email_password', password: PASSWORD });
  const b = new Browser(s, r.domain);
  const v = await b.verify('/docs/page?x=1&y=2');
  assert.equal(v.status, 302);
  const loc = new URL(v.headers.location!);
  assert.equal(loc.origin, `https://${r.domain}`);
  assert.equal(loc.pathname, '/route-auth/login');
  assert.equal(loc.searchParams.get('rd'), `https://${r.domain}/docs/page?x=1&y=2`);
  assert.equal(v.headers['x-auth-email'], undefined);
  // plain http route: http:// in both
  const plain = new Browser(s, r.domain, { proto: 'http' });
  const p = await plain.verify('/a');
  assert.equal(new URL(p.headers.location!).protocol, 'http:');
  assert.equal(new URL(p.headers.location!).searchParams.get('rd'), `http://${r.domain}/a`);
  // a scheme-relative original URI does not become an off-site return target
  const odd = await b.verify('//evil.test/x');
  assert.equal(new URL(odd.headers.location!).searchParams.get('rd'), `https://${r.domain}/`);
  // a domain without route auth: refused (fail closed), never 2xx
  const unknown = await new Browser(s, 'nothing-here.test').verify('/');
  assert.equal(unknown.status, 302);
  // a made-up cookie
  b.cookies.set(`gh_ra_${r.id}`, { value: 'x'.repeat(43), path: '/', attrs: '' });
  assert.equal((await b.verify('/')).status, 302);
});

test('email_password: login page, wrong password, right password, session cookie, identity headers', async () => {
  const r = await protectedRoute({ method: 'email_password', password: PASSWORD });
  const b = new Browser(s, r.domain);
  const rd = `https://${r.domain}/docs/page?x=1`;
  const page = await b.get(`/route-auth/login?rd=${encodeURIComponent(rd)}`);
  assert.equal(page.status, 200);
  assert.match(page.headers['content-type']!, /text\/html/);
  assert.match(page.body, /<html lang="en">/);
  assert.match(page.body, /<label for="email">Email address<\/label><input id="email" name="email" type="email"/);
  assert.match(page.body, /<label for="password">Password<\/label>/);
  assert.doesNotMatch(page.body, /(src|href)="https?:/, 'no external resources');
  const csp = page.headers['content-security-policy'] as string;
  assert.match(csp, /default-src 'none'/);
  assert.match(csp, /form-action 'self'/);
  assert.match(csp, /frame-ancestors 'none'/);
  assert.equal(page.headers['x-frame-options'], 'DENY');
  const css = await b.get('/route-auth/assets/login.css');
  assert.equal(css.status, 200);
  assert.match(css.headers['content-type']!, /text\/css/);

  const wrong = await b.post('/route-auth/login', {
    _csrf: Browser.csrf(page.body),
    rd,
    step: 'password',
    email: 'owner@example.test',
    password: 'wrong password',
  });
  assert.equal(wrong.status, 401);
  assert.match(wrong.body, /role="alert"[^>]*>The sign-in details are not correct/);
  assert.equal(b.session(r.id), undefined);
  // the address typed is kept (the focus on the password), never the password
  assert.match(wrong.body, /<input id="email" name="email" type="email" autocomplete="username" required value="owner@example.test"/);
  assert.match(wrong.body, /<input id="password" name="password" type="password" autocomplete="current-password" required autofocus/);
  assert.doesNotMatch(wrong.body, /wrong password/);

  const ok = await passwordLogin(b, 'Owner@Example.test', PASSWORD, rd);
  assert.equal(ok.status, 303);
  assert.equal(ok.headers.location, rd);
  const cookie = (ok.headers['set-cookie'] ?? []).find((c) => c.startsWith(`gh_ra_${r.id}=`))!;
  assert.ok(cookie, 'session cookie set');
  assert.match(cookie, /; Path=\/;/);
  assert.match(cookie, /httponly/i);
  assert.match(cookie, /samesite=lax/i);
  assert.match(cookie, /; secure/i);
  assert.match(cookie, /max-age=3600/i);
  // only a hash of the cookie value is stored
  const token = b.session(r.id)!;
  assert.equal(await svc().models.RouteAuthSession.count({ where: { id: token } }), 0);

  const v = await b.verify('/docs/page?x=1', { 'x-auth-email': 'intruder@evil.test', 'x-auth-method': 'forged' });
  assert.ok(v.status === 204 || v.status === 200);
  assert.equal(v.headers['x-auth-email'], 'owner@example.test');
  assert.equal(v.headers['x-auth-method'], 'email_password');
  // without a session, visitor-sent identity headers are not echoed
  const anon = await new Browser(s, r.domain).verify('/', { 'x-auth-email': 'intruder@evil.test' });
  assert.equal(anon.status, 302);
  assert.equal(anon.headers['x-auth-email'], undefined);
  // signed in: the login page sends the visitor on
  const again = await b.get(`/route-auth/login?rd=${encodeURIComponent(rd)}`);
  assert.equal(again.status, 302);
  assert.equal(again.headers.location, rd);
  // a plain-HTTP visit gets a cookie without Secure
  const plain = new Browser(s, r.domain, { proto: 'http' });
  const pr = await passwordLogin(plain, undefined, undefined, `http://${r.domain}/`);
  assert.equal(pr.status, 303);
  assert.doesNotMatch(
    (pr.headers['set-cookie'] ?? []).find((c) => c.startsWith(`gh_ra_${r.id}=`))!,
    /secure/i,
  );
});

test('the cookie of one route does not open another route', async () => {
  const a = await protectedRoute({ method: 'email_password', password: PASSWORD });
  const c = await protectedRoute({ method: 'email_password', password: PASSWORD });
  const b = new Browser(s, a.domain);
  assert.equal((await passwordLogin(b)).status, 303);
  const other = new Browser(s, c.domain);
  other.cookies.set(`gh_ra_${c.id}`, { value: b.session(a.id)!, path: '/', attrs: '' });
  assert.equal((await other.verify('/')).status, 302);
});

test('German page by Accept-Language', async () => {
  const r = await protectedRoute({
    method: 'email_password',
    password: PASSWORD,
    title: 'Team-Wiki',
    description: 'Interner Bereich',
    primary_color: '#aa3300',
    bg_color: '#101820',
  });
  const b = new Browser(s, r.domain, { lang: 'de-DE,de;q=0.9,en;q=0.5' });
  const page = await b.get('/route-auth/login');
  assert.match(page.body, /<html lang="de">/);
  assert.match(page.body, /E-Mail-Adresse/);
  assert.match(page.body, /<h1>Team-Wiki<\/h1>/);
  assert.match(page.body, /Interner Bereich/);
  const nonce = /'nonce-([^']+)'/.exec(page.headers['content-security-policy'] as string)![1];
  assert.match(page.body, new RegExp(`<style nonce="${nonce.replace(/[+/=]/g, '\\$&')}">:root\\{--primary:#aa3300;--bg:#101820\\}`));
  const wrong = await b.post('/route-auth/login', {
    _csrf: Browser.csrf(page.body),
    rd: '/',
    step: 'password',
    email: 'x@example.test',
    password: 'nope-nope',
  });
  assert.match(wrong.body, /Die Anmeldedaten sind nicht korrekt/);
});

test('logout ends this device only; it needs the CSRF token', async () => {
  const r = await protectedRoute({ method: 'email_password', password: PASSWORD });
  const one = new Browser(s, r.domain);
  const two = new Browser(s, r.domain, { ip: '203.0.113.77' });
  assert.equal((await passwordLogin(one)).status, 303);
  assert.equal((await passwordLogin(two)).status, 303);
  assert.equal((await one.verify('/')).status, 204);
  assert.equal((await two.verify('/')).status, 204);
  const noCsrf = await one.post('/route-auth/logout', {});
  assert.equal(noCsrf.status, 403);
  assert.equal((await one.verify('/')).status, 204, 'still signed in');
  const page = await one.get('/route-auth/logout');
  assert.equal(page.status, 200);
  const out = await one.post('/route-auth/logout', { _csrf: Browser.csrf(page.body) });
  assert.equal(out.status, 303);
  assert.equal(out.headers.location, '/route-auth/login?signed_out=1');
  assert.equal(one.session(r.id), undefined, 'cookie cleared');
  // the old cookie value is dead on the server too
  const replay = new Browser(s, r.domain);
  replay.cookies.set(`gh_ra_${r.id}`, { value: two.session(r.id)!, path: '/', attrs: '' });
  assert.equal((await one.verify('/')).status, 302);
  assert.equal((await two.verify('/')).status, 204, 'the other device keeps its session');
  assert.equal((await replay.verify('/')).status, 204);
  const signedOut = await one.get('/route-auth/login?signed_out=1');
  assert.match(signedOut.body, /You have been signed out/);
});

test('CSRF: login posts without the form token are refused', async () => {
  const r = await protectedRoute({ method: 'email_password', password: PASSWORD });
  const b = new Browser(s, r.domain);
  await b.get('/route-auth/login');
  const none = await b.post('/route-auth/login', { rd: '/', step: 'password', email: 'owner@example.test', password: PASSWORD });
  assert.equal(none.status, 403);
  const forged = await b.post('/route-auth/login', { _csrf: 'A'.repeat(32), rd: '/', step: 'password', email: 'owner@example.test', password: PASSWORD });
  assert.equal(forged.status, 403);
  const fresh = new Browser(s, r.domain); // no CSRF cookie at all
  const nocookie = await fresh.post('/route-auth/login', { _csrf: 'A'.repeat(32), rd: '/', step: 'password', email: 'owner@example.test', password: PASSWORD });
  assert.equal(nocookie.status, 403);
  assert.equal(b.session(r.id), undefined);
  assert.equal(fresh.session(r.id), undefined);
});

test('five wrong passwords lock the login; the right one is refused until an admin unlocks', async () => {
  const r = await protectedRoute({ method: 'email_password', password: PASSWORD });
  const b = new Browser(s, r.domain);
  const statuses: number[] = [];
  for (let i = 0; i < 5; i++) statuses.push((await passwordLogin(b, 'owner@example.test', `wrong-${i}-password`)).status);
  assert.deepEqual(statuses, [401, 401, 401, 401, 423]);
  const refused = await passwordLogin(b);
  assert.equal(refused.status, 423);
  assert.match(refused.body, /Too many failed attempts/);
  assert.equal(b.session(r.id), undefined);
  // the lock is per route and address: another address on the same route is not locked
  const other = await passwordLogin(new Browser(s, r.domain), 'someone@example.test', 'whatever-pass');
  assert.equal(other.status, 401);
  const locked = await s.deps.lockout.locked('route_auth');
  assert.ok(locked.some((l) => l.identifier === `${r.id}:owner@example.test`));
  const un = await s.req('/api/v1/users/unlock', { method: 'POST', headers: h, json: { record_type: 'route_auth', username: `${r.id}:owner@example.test` } });
  assert.equal(un.status, 200);
  assert.equal(un.data.was_locked, true);
  assert.equal((await passwordLogin(b)).status, 303);
  assert.equal((await b.verify('/')).status, 204);
});

test('a lock expires after the lockout duration', async () => {
  const r = await protectedRoute({ method: 'email_password', password: PASSWORD });
  const b = new Browser(s, r.domain);
  for (let i = 0; i < 5; i++) await passwordLogin(b, 'owner@example.test', `wrong-${i}-password`);
  assert.equal((await passwordLogin(b)).status, 423);
  clock.advance(15 * 60_000 + 1000);
  assert.equal((await passwordLogin(b)).status, 303);
});

test('changing the password ends every session of the route; other updates keep them', async () => {
  const r = await protectedRoute({ method: 'email_password', password: PASSWORD });
  const b = new Browser(s, r.domain);
  assert.equal((await passwordLogin(b)).status, 303);
  const keep = await s.req(`/api/v1/routes/${r.id}/auth`, {
    method: 'POST',
    headers: h,
    json: { method: 'email_password', email: 'owner@example.test', session_max_age: H1, title: 'Renamed' },
  });
  assert.equal(keep.status, 200);
  assert.equal((await b.verify('/')).status, 204, 'a branding change keeps sessions');
  const change = await s.req(`/api/v1/routes/${r.id}/auth`, {
    method: 'POST',
    headers: h,
    json: { method: 'email_password', email: 'owner@example.test', session_max_age: H1, password: 'a brand new password' },
  });
  assert.equal(change.status, 200);
  assert.equal((await b.verify('/')).status, 302);
  assert.equal(await svc().models.RouteAuthSession.count({ where: { route_id: r.id } }), 0);
  assert.equal((await passwordLogin(b)).status, 401, 'old password no longer works');
  assert.equal((await passwordLogin(b, 'owner@example.test', 'a brand new password')).status, 303);
});

test('sessions expire after session_max_age', async () => {
  const r = await protectedRoute({ method: 'email_password', password: PASSWORD });
  const b = new Browser(s, r.domain);
  assert.equal((await passwordLogin(b)).status, 303);
  assert.equal((await b.verify('/')).status, 204);
  clock.advance(H1 - 1000);
  assert.equal((await b.verify('/')).status, 204);
  clock.advance(2000);
  assert.equal((await b.verify('/')).status, 302);
});

test('no open redirect after login', async () => {
  const r = await protectedRoute({ method: 'email_password', password: PASSWORD });
  const cases: [string, string][] = [
    [`https://${r.domain}/wiki?page=1#top`, `https://${r.domain}/wiki?page=1#top`],
    ['/relative/path?q=1', '/relative/path?q=1'],
    ['https://evil.test/', '/'],
    ['//evil.test/', '/'],
    ['/\\evil.test/', '/'],
    ['/\\/evil.test/', '/'],
    [`https://${r.domain}.evil.test/`, '/'],
    [`https://${r.domain}@evil.test/`, '/'],
    [`https://user:pw@${r.domain}/`, '/'],
    ['javascript:alert(1)', '/'],
    ['data:text/html,hi', '/'],
    ['http://evil.test\\@' + r.domain + '/', '/'],
    ['/ok\r\nLocation: https://evil.test', '/'],
  ];
  for (const [rd, expected] of cases) {
    const b = new Browser(s, r.domain);
    const res = await passwordLogin(b, undefined, undefined, rd);
    assert.equal(res.status, 303, rd);
    assert.equal(res.headers.location, expected, `rd=${JSON.stringify(rd)}`);
    // the page's hidden field is sanitized too
    const page = await new Browser(s, r.domain).get(`/route-auth/login?rd=${encodeURIComponent(rd)}`);
    assert.ok(page.body.includes(`name="rd" value="${expected.replace(/&/g, '&amp;')}"`), `page rd for ${JSON.stringify(rd)}`);
  }
});

test('email_code: the code comes by mail, works once; unknown addresses get the same answer and no mail', async () => {
  const r = await protectedRoute({ method: 'email_code' });
  const b = new Browser(s, r.domain);
  const page = await b.get('/route-auth/login');
  assert.match(page.body, /name="step" value="send_code"/);
  const before = smtp.mails.length;
  const unknown = await new Browser(s, r.domain).submit('send_code', { email: 'stranger@example.test' });
  assert.equal(unknown.status, 303);
  const sent = await b.submit('send_code', { email: 'owner@example.test' });
  assert.equal(sent.status, 303);
  assert.equal(unknown.headers.location, sent.headers.location, 'same answer for any address');
  assert.match(sent.headers.location!, /notice=code_sent/);
  const mail = await smtp.waitFor(before + 1);
  await new Promise((res) => setTimeout(res, 200)); // not a condition: proves no second mail follows
  assert.equal(smtp.mails.length, before + 1, 'no mail for an unknown address');
  assert.deepEqual(mail.to, ['owner@example.test']);
  assert.equal(mail.user, 'mailer', 'authenticated with the sealed SMTP password');
  assert.match(mail.raw, /^From: Gatehouse <gatehouse@example.test>/m);
  const code = codeFromMail(mail);
  // the code form, then the code
  const form = await b.get(sent.headers.location!);
  assert.match(form.body, /autocomplete="one-time-code"/);
  assert.match(form.body, /If the address is registered, a code has been sent/);
  assert.equal((await b.verify('/')).status, 302, 'requesting a code is not a session');
  const wrong = await b.post('/route-auth/login', { _csrf: Browser.csrf(form.body), rd: '/', step: 'code', code: code === '000000' ? '111111' : '000000' });
  assert.equal(wrong.status, 401);
  assert.match(wrong.body, /autocomplete="one-time-code"/, 'the code form again');
  const ok = await b.post('/route-auth/login', { _csrf: Browser.csrf(form.body), rd: '/', step: 'code', code });
  assert.equal(ok.status, 303);
  const v = await b.verify('/');
  assert.equal(v.status, 204);
  assert.equal(v.headers['x-auth-method'], 'email_code');
  // single use: the same code cannot open a second device
  const second = new Browser(s, r.domain);
  await second.submit('send_code', { email: 'owner@example.test' }); // throttled: no new mail
  const reuse = await second.submit('code', { code });
  assert.equal(reuse.status, 401);
});

test('email_code: resend is throttled to one mail per minute; a new code replaces the old; codes expire after 10 minutes', async () => {
  const r = await protectedRoute({ method: 'email_code' });
  const b = new Browser(s, r.domain);
  const n0 = smtp.mails.length;
  await b.submit('send_code', { email: 'owner@example.test' });
  const first = codeFromMail(await smtp.waitFor(n0 + 1));
  const resend = await b.submit('resend', {});
  assert.equal(resend.status, 303);
  assert.match(resend.headers.location!, /notice=code_wait/);
  await new Promise((res) => setTimeout(res, 200)); // not a condition: proves no mail is sent
  assert.equal(smtp.mails.length, n0 + 1, 'throttled');
  clock.advance(61_000);
  const again = await b.submit('resend', {});
  assert.match(again.headers.location!, /notice=code_sent/);
  const second = codeFromMail(await smtp.waitFor(n0 + 2));
  if (second !== first) assert.equal((await b.submit('code', { code: first })).status, 401, 'the older code is void');
  clock.advance(10 * 60_000 + 1000);
  // the pending step (10 minutes) has expired as well: back to the start
  const late = await b.submit('code', { code: second });
  assert.equal(late.status, 400);
  assert.match(late.body, /took too long/);
  assert.equal((await b.verify('/')).status, 302);
});

test('email_code: five wrong tries burn the code', async () => {
  await s.deps.settings.set('security.lockout.max_attempts', 50);
  try {
    const r = await protectedRoute({ method: 'email_code' });
    const b = new Browser(s, r.domain);
    const n0 = smtp.mails.length;
    await b.submit('send_code', { email: 'owner@example.test' });
    const code = codeFromMail(await smtp.waitFor(n0 + 1));
    const wrongCode = code === '123456' ? '654321' : '123456';
    for (let i = 0; i < 5; i++) assert.equal((await b.submit('code', { code: wrongCode })).status, 401);
    assert.equal((await b.submit('code', { code })).status, 401, 'the right code is burnt after 5 tries');
  } finally {
    await s.deps.settings.set('security.lockout.max_attempts', 5);
  }
});

test('totp: refused until activated; codes from the secret; each code once; ±1 step', async () => {
  const r = await protectedRoute({ method: 'totp' });
  const b = new Browser(s, r.domain);
  const page = await b.get('/route-auth/login');
  assert.match(page.body, /authenticator app/);
  assert.doesNotMatch(page.body, /name="password"/);
  const notReady = await b.submit('totp', { code: '123456' });
  assert.equal(notReady.status, 400);
  assert.match(notReady.body, /has not been set up/);
  const secret = await activateTotp(r.id);
  // the setup code (this step) was used: the next step's code is within the window
  const replayed = await b.submit('totp', { code: totpAt(secret, 0) });
  assert.equal(replayed.status, 401, 'the code used for activation cannot log in');
  const next = totpAt(secret, 1);
  const ok = await b.submit('totp', { code: next });
  assert.equal(ok.status, 303);
  const v = await b.verify('/');
  assert.equal(v.status, 204);
  assert.equal(v.headers['x-auth-method'], 'totp');
  const other = new Browser(s, r.domain);
  assert.equal((await other.submit('totp', { code: next })).status, 401, 'no replay on a second device');
  assert.equal((await other.submit('totp', { code: totpAt(secret, 5) })).status, 401, 'outside the ±1 step window');
  clock.advance(60_000);
  assert.equal((await other.submit('totp', { code: totpAt(secret, 0) })).status, 303);
  assert.equal((await b.verify('/')).status, 204, 'first device still signed in');
});

test('two-factor: password then TOTP; the first step alone is no session', async () => {
  const r = await protectedRoute({ method: 'email_password', password: PASSWORD, two_factor_enabled: true, two_factor_method: 'totp' });
  const secret = await activateTotp(r.id);
  clock.advance(30_000);
  const b = new Browser(s, r.domain);
  const wrongPw = await passwordLogin(b, 'owner@example.test', 'not the password');
  assert.equal(wrongPw.status, 401);
  const step1 = await passwordLogin(b);
  assert.equal(step1.status, 303);
  assert.match(step1.headers.location!, /^\/route-auth\/login\?rd=.*notice=enter_totp/);
  const pendingCookie = b.cookies.get(`gh_ra_${r.id}_p`);
  assert.ok(pendingCookie, 'pending cookie');
  assert.equal(pendingCookie.path, '/route-auth/');
  assert.equal(b.session(r.id), undefined);
  assert.equal((await b.verify('/')).status, 302, 'the first factor alone does not pass verify');
  // the pending cookie's value is not a session either
  const forged = new Browser(s, r.domain);
  forged.cookies.set(`gh_ra_${r.id}`, { value: pendingCookie.value, path: '/', attrs: '' });
  assert.equal((await forged.verify('/')).status, 302);
  const form = await b.get(step1.headers.location!);
  assert.match(form.body, /Password accepted/);
  assert.match(form.body, /name="step" value="code"/);
  const bad = await b.post('/route-auth/login', { _csrf: Browser.csrf(form.body), rd: '/', step: 'code', code: totpAt(secret, 10) });
  assert.equal(bad.status, 401);
  const ok = await b.post('/route-auth/login', { _csrf: Browser.csrf(form.body), rd: '/', step: 'code', code: totpAt(secret, 0) });
  assert.equal(ok.status, 303);
  assert.equal(b.cookies.get(`gh_ra_${r.id}_p`), undefined, 'pending cookie cleared');
  const v = await b.verify('/');
  assert.equal(v.status, 204);
  assert.equal(v.headers['x-auth-method'], 'email_password+totp');
  // a code step without the password step first
  const skip = new Browser(s, r.domain);
  const direct = await skip.submit('code', { code: totpAt(secret, 1) });
  assert.equal(direct.status, 400);
  assert.equal((await skip.verify('/')).status, 302);
});

test('two-factor: password then email code', async () => {
  const r = await protectedRoute({ method: 'email_password', password: PASSWORD, two_factor_enabled: true, two_factor_method: 'email_code' });
  const b = new Browser(s, r.domain);
  const n0 = smtp.mails.length;
  const step1 = await passwordLogin(b);
  assert.equal(step1.status, 303);
  assert.match(step1.headers.location!, /notice=code_sent/);
  const code = codeFromMail(await smtp.waitFor(n0 + 1));
  assert.equal((await b.verify('/')).status, 302);
  const ok = await b.submit('code', { code });
  assert.equal(ok.status, 303);
  const v = await b.verify('/');
  assert.equal(v.status, 204);
  assert.equal(v.headers['x-auth-method'], 'email_password+email_code');
  assert.equal(v.headers['x-auth-email'], 'owner@example.test');
});

test('two-factor: wrong second factors count toward the lockout; the password step does not reset it', async () => {
  const r = await protectedRoute({ method: 'email_password', password: PASSWORD, two_factor_enabled: true, two_factor_method: 'totp' });
  const secret = await activateTotp(r.id);
  const b = new Browser(s, r.domain);
  const statuses: number[] = [];
  for (let i = 0; i < 5; i++) {
    await passwordLogin(b);
    statuses.push((await b.submit('code', { code: totpAt(secret, 20 + i) })).status);
  }
  assert.deepEqual(statuses, [401, 401, 401, 401, 423]);
  clock.advance(30_000);
  assert.equal((await passwordLogin(b)).status, 423, 'locked even with the right password');
});

test('IP filter is enforced in verify and on the login pages for route-auth routes', async () => {
  const r = await protectedRoute(
    { method: 'email_password', password: PASSWORD },
    { ip_filter_enabled: true, ip_filter_mode: 'whitelist', ip_filter_rules: JSON.stringify(['203.0.113.0/24', '2001:db8::/32']) },
  );
  const inside = new Browser(s, r.domain, { ip: '203.0.113.9' });
  const outside = new Browser(s, r.domain, { ip: '198.51.100.1' });
  assert.equal((await passwordLogin(inside)).status, 303);
  assert.equal((await inside.verify('/')).status, 204);
  assert.equal((await new Browser(s, r.domain, { ip: '2001:db8::5' }).verify('/')).status, 302, 'allowed v6 address: login needed');
  const blocked = await outside.verify('/');
  assert.equal(blocked.status, 403);
  assert.equal((await outside.get('/route-auth/login')).status, 403);
  // the same session from a refused address
  outside.cookies.set(`gh_ra_${r.id}`, { value: inside.session(r.id)!, path: '/', attrs: '' });
  assert.equal((await outside.verify('/')).status, 403);
  // a change of the route row (through the model, as the routes service writes) is seen at once
  await s.deps.db.models.Route.update({ ip_filter_mode: 'blacklist', updated_at: clock() }, { where: { id: r.id } });
  assert.equal((await inside.verify('/')).status, 403);
  assert.equal((await outside.verify('/')).status, 204);
  await s.deps.db.models.Route.update({ ip_filter_enabled: false }, { where: { id: r.id } });
  assert.equal((await inside.verify('/')).status, 204);
});

test('verify answers hits from memory: no database reads', async () => {
  const r = await protectedRoute({ method: 'email_password', password: PASSWORD });
  const b = new Browser(s, r.domain);
  assert.equal((await passwordLogin(b)).status, 303);
  assert.equal((await b.verify('/')).status, 204);
  const view = svc().view;
  const before = { ...view.stats };
  const queries: string[] = [];
  // reason: Sequelize keeps its options on the instance (logging is read per query), its typings do not declare them
  const options = (s.deps.db.sequelize as unknown as { options: { logging: unknown } }).options;
  const orig = options.logging;
  options.logging = (sql: string) => void queries.push(sql);
  try {
    for (let i = 0; i < 50; i++) assert.equal((await b.verify(`/p/${i}`)).status, 204);
  } finally {
    options.logging = orig;
  }
  assert.deepEqual(view.stats, before);
  assert.deepEqual(queries, []);
});

test('wildcard routes: the login page resolves by Host, verify by X-Route-Domain, cookies per host', async () => {
  const r = await protectedRoute({ method: 'email_password', password: PASSWORD }, { domain: `*.wild-${process.pid}.test` });
  const host = `team.wild-${process.pid}.test`;
  const b = new Browser(s, host, { routeDomain: r.domain });
  const v = await b.verify('/x');
  assert.equal(v.status, 302);
  assert.equal(new URL(v.headers.location!).host, host);
  const pageByHost = await new Browser(s, host, { routeDomain: '' }).get('/route-auth/login');
  assert.equal(pageByHost.status, 200);
  assert.equal((await passwordLogin(b, undefined, undefined, `https://${host}/x`)).headers.location, `https://${host}/x`);
  assert.equal((await b.verify('/x')).status, 204);
});

test('the same verify straight on node http (Running.fastPath) answers like the Koa one', async () => {
  const r = await protectedRoute({ method: 'email_password', password: PASSWORD });
  const b = new Browser(s, r.domain);
  assert.equal((await passwordLogin(b)).status, 303);
  const fast = s.fastPath;
  const srv = http.createServer((req, res) => {
    if (!fast(req, res)) {
      res.statusCode = 418;
      res.end();
    }
  });
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', () => resolve()));
  try {
    const port = (srv.address() as AddressInfo).port;
    const headers = b.headers('/', { 'x-forwarded-uri': '/w?x=1', 'x-auth-email': 'intruder@evil.test' });
    const ok = await rawRequest(port, 'GET', '/route-auth/verify', headers);
    assert.equal(ok.status, 204);
    assert.equal(ok.headers['x-auth-email'], 'owner@example.test');
    assert.equal(ok.headers['x-auth-method'], 'email_password');
    const { cookie: _c, ...anon } = headers;
    const no = await rawRequest(port, 'GET', '/route-auth/verify', anon);
    const koa = await new Browser(s, r.domain).verify('/w?x=1');
    assert.equal(no.status, 302);
    assert.equal(no.headers.location, koa.headers.location);
    assert.equal((await rawRequest(port, 'POST', '/route-auth/verify', headers)).status, 405);
    assert.equal((await rawRequest(port, 'GET', '/other', headers)).status, 418, 'other paths are left to the app');
  } finally {
    srv.close();
  }
});

test('switching the method to TOTP waits for totp-verify: the old method keeps working until then, TOTP after', async () => {
  const r = await protectedRoute({ method: 'email_password', password: PASSWORD });
  const before = new Browser(s, r.domain);
  assert.equal((await passwordLogin(before)).status, 303);
  assert.equal((await before.verify('/')).status, 204);

  const sw = await s.req(`/api/v1/routes/${r.id}/auth`, {
    method: 'POST',
    headers: h,
    json: { method: 'totp', email: 'owner@example.test', session_max_age: H1 },
  });
  assert.equal(sw.status, 200, JSON.stringify(sw.data));
  assert.equal(sw.data.route_auth.method, 'email_password', 'the method in force is still the password');
  assert.equal(sw.data.route_auth.pending_method, 'totp');
  // visitors keep signing in with the password: the session from before and a new one
  assert.equal((await before.verify('/')).status, 204, 'the session from before the switch still works');
  const during = new Browser(s, r.domain);
  assert.equal((await passwordLogin(during)).status, 303, 'the password still signs in while TOTP is not verified');
  const v = await during.verify('/');
  assert.equal(v.status, 204);
  assert.equal(v.headers['x-auth-method'], 'email_password');

  // a wrong code changes nothing
  const setup = await s.req(`/api/v1/routes/${r.id}/auth/totp-setup`, { method: 'POST', headers: h });
  assert.equal(setup.status, 200);
  const secret = setup.data.secret as string;
  const wrong = await s.req(`/api/v1/routes/${r.id}/auth/totp-verify`, { method: 'POST', headers: h, json: { token: totpAt(secret, 10) } });
  assert.equal(wrong.status, 422);
  assert.ok(wrong.data.fields!.token);
  const still = (await s.req(`/api/v1/routes/${r.id}/auth`, { headers: h })).data.route_auth;
  assert.equal(still!.method, 'email_password');
  assert.equal(still!.pending_method, 'totp');
  assert.equal((await during.verify('/')).status, 204);

  const ok = await s.req(`/api/v1/routes/${r.id}/auth/totp-verify`, { method: 'POST', headers: h, json: { token: totpAt(secret, 0) } });
  assert.equal(ok.status, 200, JSON.stringify(ok.data));
  assert.equal(ok.data.route_auth.method, 'totp');
  assert.equal(ok.data.route_auth.pending_method, null);
  assert.equal(ok.data.route_auth.totp_active, true);
  // TOTP applies now: the password sessions ended, the password no longer signs in, a TOTP code does
  assert.equal((await during.verify('/')).status, 302, 'the method changed: password sessions end');
  assert.equal((await before.verify('/')).status, 302);
  const pw = await passwordLogin(new Browser(s, r.domain));
  assert.notEqual(pw.status, 303, 'the password no longer signs in');
  const b = new Browser(s, r.domain);
  assert.equal((await b.submit('totp', { code: totpAt(secret, 1) })).status, 303);
  const tv = await b.verify('/');
  assert.equal(tv.status, 204);
  assert.equal(tv.headers['x-auth-method'], 'totp');

  // saving another method while a switch waits drops the pending switch
  const r2 = await protectedRoute({ method: 'email_password', password: PASSWORD });
  await s.req(`/api/v1/routes/${r2.id}/auth`, { method: 'POST', headers: h, json: { method: 'totp', email: 'owner@example.test', session_max_age: H1 } });
  const back = await s.req(`/api/v1/routes/${r2.id}/auth`, {
    method: 'POST',
    headers: h,
    json: { method: 'email_password', email: 'owner@example.test', session_max_age: H1 },
  });
  assert.equal(back.data.route_auth.method, 'email_password');
  assert.equal(back.data.route_auth.pending_method, null);
});
