// Route auth for the route's users (routes.user_ids, the users allowed on the route): each user
// signs in with their own Gatehouse username (or email) and password, gets their own session and
// their own second factor (email code to their address, or their own TOTP on the route); verify
// names them (X-Auth-User); a user not in user_ids is refused; removing a user from user_ids,
// deleting the user or changing their password ends their access; lockout is per user.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import speakeasy from 'speakeasy';
import { QueryTypes } from 'sequelize';
import { startTestServer, apiToken, bearer, type TestServer } from './lib/server.js';
import { Browser, codeFromMail, createRoute, startSmtp, type SmtpSink } from './route-auth-helpers.js';
import { manualClock } from '../src/util/clock.js';
import { SESSION_DURATIONS } from '../src/route-auth/schema.js';
import type { RouteAuthUser } from './lib/protocol.js';

let s: TestServer;
let h: Record<string, string>;
let smtp: SmtpSink;
const clock = manualClock(Math.floor(Date.now() / 30_000) * 30_000 + 5_000);
const H1 = SESSION_DURATIONS['1h'];
const OWNER_PW = 'correct horse battery';
const users: Record<string, { id: number; password: string; email: string | null }> = {};
let seq = 0;

async function createUser(name: string, email: string | null): Promise<{ id: number; password: string; email: string | null }> {
  const password = `pw-of-${name}-${'x'.repeat(12)}`;
  const res = await s.req('/api/v1/users', { method: 'POST', headers: h, json: { username: name, email, password, role: 'user' } });
  assert.equal(res.status, 201, JSON.stringify(res.data));
  return { id: res.data.user.id, password, email };
}

before(async () => {
  s = await startTestServer({ GATEHOUSE_RATE_LIMIT_ADMIN: '100000', GATEHOUSE_RATE_LIMIT_LOGIN: '100000' }, { clock });
  h = bearer(await apiToken(s));
  smtp = await startSmtp();
  const put = await s.req('/api/v1/smtp', {
    method: 'PUT',
    headers: h,
    json: { host: '127.0.0.1', port: smtp.port, secure: false, from: 'Gatehouse <gatehouse@example.test>' },
  });
  assert.equal(put.status, 200, JSON.stringify(put.data));
  users.alice = await createUser('alice', 'alice@example.test');
  users.bob = await createUser('bob', 'bob@example.test');
  users.carol = await createUser('carol', 'carol@example.test'); // never on a route's user_ids
  users.dave = await createUser('dave', null);
});
after(async () => {
  await smtp.close();
  await s.close();
});

/** A route with route auth whose user_ids are `ids`. */
async function protectedRoute(body: Record<string, unknown>, ids: number[]) {
  const r = await createRoute(s, { domain: `users${++seq}-${process.pid}.test`, user_ids: JSON.stringify(ids) });
  const res = await s.req(`/api/v1/routes/${r.id}/auth`, { method: 'POST', headers: h, json: { session_max_age: H1, email: 'owner@example.test', ...body } });
  assert.equal(res.status, 200, JSON.stringify(res.data));
  return r;
}

const login = (b: Browser, name: string, password: string) => b.submit('password', { email: name, password });
const totpAt = (secret: string, steps: number) => speakeasy.totp({ secret, encoding: 'base32', time: Math.floor(clock() / 1000) + steps * 30 });

async function setUserIds(routeId: number, ids: number[]) {
  await s.deps.db.models.Route.update({ user_ids: JSON.stringify(ids) }, { where: { id: routeId } });
}

test('route users sign in with their own credentials; each gets their own session; verify names them; others are refused', async () => {
  const r = await protectedRoute({ method: 'email_password', password: OWNER_PW }, [users.alice.id, users.bob.id, users.dave.id]);
  const page = await new Browser(s, r.domain).get('/route-auth/login');
  assert.match(page.body, /<label for="email">Email or username<\/label><input id="email" name="email" type="text"/);

  const a = new Browser(s, r.domain);
  assert.equal((await login(a, 'alice', users.alice.password)).status, 303);
  const b = new Browser(s, r.domain);
  assert.equal((await login(b, 'BOB@example.test', users.bob.password)).status, 303, 'a user may type their email');
  assert.ok(a.session(r.id) && b.session(r.id) && a.session(r.id) !== b.session(r.id), 'one session each');

  const va = await a.verify('/');
  assert.equal(va.status, 204);
  assert.equal(va.headers['x-auth-user'], 'alice');
  assert.equal(va.headers['x-auth-email'], 'alice@example.test');
  assert.equal(va.headers['x-auth-method'], 'email_password');
  const vb = await b.verify('/');
  assert.equal(vb.headers['x-auth-user'], 'bob');
  assert.equal(vb.headers['x-auth-email'], 'bob@example.test');
  // a user without an email address: X-Auth-User only
  const d = new Browser(s, r.domain);
  assert.equal((await login(d, 'dave', users.dave.password)).status, 303);
  const vd = await d.verify('/');
  assert.equal(vd.headers['x-auth-user'], 'dave');
  assert.equal(vd.headers['x-auth-email'], undefined);

  // the configured account still signs in
  const o = new Browser(s, r.domain);
  assert.equal((await login(o, 'owner@example.test', OWNER_PW)).status, 303);
  assert.equal((await o.verify('/')).headers['x-auth-user'], 'owner@example.test');

  // one user's password is not another's; a Gatehouse user not in user_ids is refused
  assert.equal((await login(new Browser(s, r.domain), 'alice', users.bob.password)).status, 401);
  const c = new Browser(s, r.domain);
  const refused = await login(c, 'carol', users.carol.password);
  assert.equal(refused.status, 401);
  assert.equal(c.session(r.id), undefined);
  assert.equal((await c.verify('/')).status, 302);

  // the session table names whose session it is
  const rows = (await s.deps.db.sequelize.query('SELECT user_id, subject FROM route_auth_sessions WHERE route_id = ? AND stage = ? ORDER BY user_id', {
    replacements: [r.id, 'active'],
    type: QueryTypes.SELECT,
  })) as { user_id: number | null; subject: string }[];
  assert.deepEqual(
    rows.map((x) => [x.user_id === null ? null : Number(x.user_id), x.subject]).sort(),
    [
      [null, 'owner@example.test'],
      [users.alice.id, 'alice'],
      [users.bob.id, 'bob'],
      [users.dave.id, 'dave'],
    ].sort(),
  );

  // logout ends that user's session only
  const lp = await a.get('/route-auth/logout');
  assert.equal((await a.post('/route-auth/logout', { _csrf: Browser.csrf(lp.body) })).status, 303);
  assert.equal((await a.verify('/')).status, 302);
  assert.equal((await b.verify('/')).status, 204);

  // the route's auth configuration lists its users
  const cfg = await s.req(`/api/v1/routes/${r.id}/auth`, { headers: h });
  assert.deepEqual(
    cfg.data.route_auth!.users.map((u: RouteAuthUser) => u.username),
    ['alice', 'bob', 'dave'],
  );
});

test('removing a user from user_ids, deleting the user or changing their password ends their access', async () => {
  const erin = await createUser('erin', 'erin@example.test');
  const frank = await createUser('frank', 'frank@example.test');
  const r = await protectedRoute({ method: 'email_password', password: OWNER_PW }, [users.alice.id, users.bob.id, erin.id, frank.id]);
  const a = new Browser(s, r.domain);
  const b = new Browser(s, r.domain);
  const e = new Browser(s, r.domain);
  const f = new Browser(s, r.domain);
  assert.equal((await login(a, 'alice', users.alice.password)).status, 303);
  assert.equal((await login(b, 'bob', users.bob.password)).status, 303);
  assert.equal((await login(e, 'erin', erin.password)).status, 303);
  assert.equal((await login(f, 'frank', frank.password)).status, 303);
  for (const x of [a, b, e, f]) assert.equal((await x.verify('/')).status, 204);

  await setUserIds(r.id, [users.bob.id, erin.id, frank.id]);
  assert.equal((await a.verify('/')).status, 302, 'alice is no longer a user of the route');
  assert.equal((await login(new Browser(s, r.domain), 'alice', users.alice.password)).status, 401);
  assert.equal((await b.verify('/')).status, 204);

  const del = await s.req(`/api/v1/users/${erin.id}`, { method: 'DELETE', headers: h });
  assert.equal(del.status, 200, JSON.stringify(del.data));
  assert.equal((await e.verify('/')).status, 302, 'a deleted user has no session');

  const pw = await s.req(`/api/v1/users/${frank.id}`, { method: 'PUT', headers: h, json: { password: 'a-brand-new-password-1' } });
  assert.equal(pw.status, 200, JSON.stringify(pw.data));
  // the session row is gone too (not only the cache), by the time the API answered
  assert.equal(
    await s.deps.db.sequelize
      .query('SELECT COUNT(*) AS n FROM route_auth_sessions WHERE user_id = ?', { replacements: [frank.id], plain: true })
      .then((x) => Number((x as { n: number | string } | null)!.n)),
    0,
  );
  assert.equal((await f.verify('/')).status, 302, "a new password ends the user's sessions");
  assert.equal((await login(new Browser(s, r.domain), 'frank', 'a-brand-new-password-1')).status, 303);
  assert.equal((await b.verify('/')).status, 204, 'other users keep their sessions');
  // an admin's password reset ends them too
  const reset = await s.req(`/api/v1/users/${users.bob.id}/reset-password`, { method: 'POST', headers: h });
  assert.equal(reset.status, 200, JSON.stringify(reset.data));
  assert.equal((await b.verify('/')).status, 302, "a reset password ends the user's sessions");
  users.bob.password = reset.data.password;
});

test('lockout is per route user (record type route_auth, identifier <route>:user:<name>), whichever name they type', async () => {
  const r = await protectedRoute({ method: 'email_password', password: OWNER_PW }, [users.alice.id, users.bob.id]);
  const x = new Browser(s, r.domain);
  const statuses: number[] = [];
  for (let i = 0; i < 5; i++) statuses.push((await login(x, i % 2 ? 'alice' : 'alice@example.test', `wrong-${i}-password`)).status);
  assert.deepEqual(statuses, [401, 401, 401, 401, 423]);
  assert.equal((await login(new Browser(s, r.domain), 'alice', users.alice.password)).status, 423, 'locked even with her password');
  assert.equal((await login(new Browser(s, r.domain), 'bob', users.bob.password)).status, 303, 'bob is not locked');
  const locked = await s.deps.lockout.locked('route_auth');
  assert.ok(
    locked.some((l) => l.identifier === `${r.id}:user:alice`),
    JSON.stringify(locked),
  );
  const un = await s.req('/api/v1/users/unlock', { method: 'POST', headers: h, json: { record_type: 'route_auth', username: `${r.id}:user:alice` } });
  assert.equal(un.data.was_locked, true);
  assert.equal((await login(new Browser(s, r.domain), 'alice', users.alice.password)).status, 303);
});

test("two-factor TOTP per user: each user their own secret (set up with user_id); one user's code does not open another", async () => {
  const r = await protectedRoute({ method: 'email_password', password: OWNER_PW, two_factor_enabled: true, two_factor_method: 'totp' }, [
    users.alice.id,
    users.bob.id,
  ]);
  const notOnRoute = await s.req(`/api/v1/routes/${r.id}/auth/totp-setup`, { method: 'POST', headers: h, json: { user_id: users.carol.id } });
  assert.equal(notOnRoute.status, 422);
  assert.ok(notOnRoute.data.fields!.user_id);
  const secrets: Record<string, string> = {};
  for (const name of ['alice', 'bob']) {
    const setup = await s.req(`/api/v1/routes/${r.id}/auth/totp-setup`, { method: 'POST', headers: h, json: { user_id: users[name].id } });
    assert.equal(setup.status, 200, JSON.stringify(setup.data));
    assert.match(decodeURIComponent(setup.data.otpauth_url), new RegExp(`:${name}\\?`));
    secrets[name] = setup.data.secret;
    const v = await s.req(`/api/v1/routes/${r.id}/auth/totp-verify`, {
      method: 'POST',
      headers: h,
      json: { token: totpAt(secrets[name], 0), user_id: users[name].id },
    });
    assert.equal(v.status, 200, JSON.stringify(v.data));
  }
  assert.notEqual(secrets.alice, secrets.bob);
  const cfg = await s.req(`/api/v1/routes/${r.id}/auth`, { headers: h });
  assert.deepEqual(
    cfg.data.route_auth!.users.map((u: RouteAuthUser) => [u.username, u.totp_active]),
    [
      ['alice', true],
      ['bob', true],
    ],
  );
  assert.equal(cfg.data.route_auth!.totp_active, false, "the configured account's own TOTP is separate");
  clock.advance(30_000);

  const a = new Browser(s, r.domain);
  assert.equal((await login(a, 'alice', users.alice.password)).status, 303);
  assert.equal((await a.verify('/')).status, 302, 'the password alone is no session');
  assert.equal((await a.submit('code', { code: totpAt(secrets.bob, 0) })).status, 401, "bob's code does not sign alice in");
  assert.equal((await a.submit('code', { code: totpAt(secrets.alice, 0) })).status, 303);
  const va = await a.verify('/');
  assert.equal(va.headers['x-auth-user'], 'alice');
  assert.equal(va.headers['x-auth-method'], 'email_password+totp');

  const b = new Browser(s, r.domain);
  assert.equal((await login(b, 'bob', users.bob.password)).status, 303);
  assert.equal((await b.submit('code', { code: totpAt(secrets.bob, 0) })).status, 303, 'the same step is fine for another user');
  assert.equal((await b.verify('/')).headers['x-auth-user'], 'bob');
});

test("two-factor email code goes to the user's own address; a user without one cannot finish", async () => {
  const r = await protectedRoute({ method: 'email_password', password: OWNER_PW, two_factor_enabled: true, two_factor_method: 'email_code' }, [
    users.alice.id,
    users.bob.id,
    users.dave.id,
  ]);
  const b = new Browser(s, r.domain);
  const n0 = smtp.mails.length;
  assert.equal((await login(b, 'bob', users.bob.password)).status, 303);
  const mail = await smtp.waitFor(n0 + 1);
  assert.deepEqual(mail.to, ['bob@example.test']);
  // alice cannot use bob's code
  const a = new Browser(s, r.domain);
  assert.equal((await login(a, 'alice', users.alice.password)).status, 303);
  const aliceMail = await smtp.waitFor(n0 + 2);
  assert.deepEqual(aliceMail.to, ['alice@example.test']);
  const bobCode = codeFromMail(mail);
  const aliceCode = codeFromMail(aliceMail);
  if (bobCode !== aliceCode) assert.equal((await a.submit('code', { code: bobCode })).status, 401);
  assert.equal((await b.submit('code', { code: bobCode })).status, 303);
  assert.equal((await b.verify('/')).headers['x-auth-user'], 'bob');
  assert.equal((await a.submit('code', { code: aliceCode })).status, 303);
  assert.equal((await a.verify('/')).headers['x-auth-user'], 'alice');
  const d = new Browser(s, r.domain);
  const none = await login(d, 'dave', users.dave.password);
  assert.equal(none.status, 400);
  assert.match(none.body, /no email address/);
  assert.equal(d.session(r.id), undefined);
});

test('method email_code and method totp for route users', async () => {
  const r = await protectedRoute({ method: 'email_code' }, [users.alice.id]);
  const a = new Browser(s, r.domain);
  const n0 = smtp.mails.length;
  assert.equal((await a.submit('send_code', { email: 'alice' })).status, 303, 'by username');
  const mail = await smtp.waitFor(n0 + 1);
  assert.deepEqual(mail.to, ['alice@example.test']);
  assert.equal((await a.submit('code', { code: codeFromMail(mail) })).status, 303);
  assert.equal((await a.verify('/')).headers['x-auth-user'], 'alice');
  // carol (not on the route) gets the same answer and no mail
  const c = new Browser(s, r.domain);
  assert.equal((await c.submit('send_code', { email: 'carol@example.test' })).status, 303);
  await new Promise((resolve) => setTimeout(resolve, 300)); // not a condition: proves no mail is sent to carol
  assert.equal(smtp.mails.length, n0 + 1);

  const t = await protectedRoute({ method: 'totp' }, [users.bob.id]);
  const page = await new Browser(s, t.domain).get('/route-auth/login');
  assert.match(page.body, /name="account"/);
  const setup = await s.req(`/api/v1/routes/${t.id}/auth/totp-setup`, { method: 'POST', headers: h, json: { user_id: users.bob.id } });
  const secret = setup.data.secret as string;
  assert.equal(
    (await s.req(`/api/v1/routes/${t.id}/auth/totp-verify`, { method: 'POST', headers: h, json: { token: totpAt(secret, 0), user_id: users.bob.id } })).status,
    200,
  );
  const b = new Browser(s, t.domain);
  assert.equal((await b.submit('totp', { account: 'carol', code: totpAt(secret, 1) })).status, 401, 'not a user of the route');
  assert.equal((await b.submit('totp', { code: totpAt(secret, 1) })).status, 400, 'the configured account has no TOTP yet');
  assert.equal((await b.submit('totp', { account: 'bob', code: totpAt(secret, 1) })).status, 303);
  const v = await b.verify('/');
  assert.equal(v.headers['x-auth-user'], 'bob');
  assert.equal(v.headers['x-auth-method'], 'totp');
});
