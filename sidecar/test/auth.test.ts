import { msg } from '@gatehouse/common/messages/index.js';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import bcrypt from 'bcrypt';
import crypto from 'node:crypto';
import { startTestServer, login, ADMIN, bearer, type TestServer } from './lib/server.js';
import { manualClock } from '../src/util/clock.js';
import { SESSION_COOKIE } from '../src/http/app.js';
import type { ActivityEntry, Locked, Token } from './lib/protocol.js';
import { asRows, type Row } from './lib/rows.js';
import type { Refusal } from './lib/api-types.js';
import { arr, at } from '../../test/lib/json.js';

const clock = manualClock(Date.UTC(2026, 10, 23, 12, 0, 0));
let s: TestServer;
before(async () => {
  s = await startTestServer({ GATEHOUSE_RATE_LIMIT_LOGIN: '1000' }, { clock });
});
after(async () => s.close());

const jsonLogin = (username: string, password: string, extra: Record<string, string> = {}) =>
  s.req('/login', { method: 'POST', json: { username, password }, headers: { accept: 'application/json', ...extra } });

test('login: JSON answers, form redirects, wrong password 401, bad input 400 with fields', async () => {
  const ok = await jsonLogin(ADMIN.username, ADMIN.password);
  assert.equal(ok.status, 200);
  assert.equal(ok.data.user!.username, 'admin');
  assert.ok(ok.data.csrfToken);
  const cookie = ok.headers.getSetCookie().find((c) => c.startsWith(`${SESSION_COOKIE}=`))!;
  assert.match(cookie, /httponly/i);
  assert.match(cookie, /samesite=lax/i);
  assert.doesNotMatch(cookie, /secure/i, 'plain HTTP: no Secure flag');
  const bad = await jsonLogin(ADMIN.username, 'wrong');
  assert.equal(bad.status, 401);
  assert.deepEqual(Object.keys(bad.data).sort(), ['code', 'error', 'ok']);
  const form = await s.req('/login', {
    method: 'POST',
    body: new URLSearchParams({ username: 'admin', password: ADMIN.password, next: '/dash' }),
    headers: { accept: 'text/html' },
  });
  assert.equal(form.status, 302);
  assert.equal(form.headers.get('location'), '/dash');
  const open = await s.req('/login', {
    method: 'POST',
    body: new URLSearchParams({ username: 'admin', password: ADMIN.password, next: '//evil.example/' }),
    headers: { accept: 'text/html' },
  });
  assert.equal(open.headers.get('location'), '/', 'no open redirect');
  const formBad = await s.req('/login', {
    method: 'POST',
    body: new URLSearchParams({ username: 'admin', password: 'nope' }),
    headers: { accept: 'text/html' },
  });
  assert.equal(formBad.status, 302);
  assert.equal(formBad.headers.get('location'), '/login?error=invalid');
  const empty = await jsonLogin('', '');
  assert.equal(empty.status, 400);
  assert.ok(empty.data.fields!.username && empty.data.fields!.password);
  // Secure flag when the request came over HTTPS through our Caddy
  const https = await jsonLogin(ADMIN.username, ADMIN.password, { 'x-forwarded-proto': 'https' });
  assert.match(https.headers.getSetCookie().join(';'), /secure/i);
  await s.deps.lockout.unlock('admin', 'admin');
});

test('session fixation: the session id changes at login; logout ends only that session', async () => {
  const a = await login(s);
  const sidA = a.cookie.match(new RegExp(`${SESSION_COOKIE}=([^;]+)`))![1];
  // Log in again while presenting the existing session cookie: a new id must be issued.
  const again = await s.req('/login', { method: 'POST', json: ADMIN, headers: { accept: 'application/json', cookie: a.cookie } });
  const sidB = again.headers
    .getSetCookie()
    .find((c) => c.startsWith(`${SESSION_COOKIE}=`))!
    .split(';')[0]
    .split('=')[1];
  assert.notEqual(sidA, sidB);
  assert.equal((await s.req('/api/v1/session', { headers: { cookie: a.cookie } })).status, 401, 'old session id is gone');
  const b = await login(s);
  const c = await login(s);
  const out = await s.req('/logout', { method: 'POST', headers: { cookie: b.cookie, accept: 'application/json', 'x-csrf-token': b.csrf } });
  assert.equal(out.status, 200);
  assert.equal((await s.req('/api/v1/session', { headers: { cookie: b.cookie } })).status, 401);
  assert.equal((await s.req('/api/v1/session', { headers: { cookie: c.cookie } })).status, 200, 'another device keeps its session');
});

test('lockout: 5 failures in 15 minutes lock, the right password is refused, expiry and manual unlock lift it', async () => {
  const { cookie, csrf } = await login(s);
  const user = await s.req('/api/v1/users', {
    method: 'POST',
    json: { username: 'lockme', password: 'right-password', role: 'user' },
    headers: { cookie, 'x-csrf-token': csrf },
  });
  assert.equal(user.status, 201);
  for (let i = 0; i < 4; i++) {
    assert.equal((await jsonLogin('lockme', 'wrong')).status, 401);
    clock.advance(60_000);
  }
  assert.equal((await jsonLogin('lockme', 'right-password')).status, 200, '4 failures do not lock');
  // a success resets the counter; now 5 fresh failures
  for (let i = 0; i < 5; i++) assert.equal((await jsonLogin('lockme', 'wrong')).status, 401);
  const locked = await jsonLogin('lockme', 'right-password');
  assert.equal(locked.status, 423);
  assert.match(locked.data.error!, /locked/i);
  assert.ok(at(locked.data, 'locked_until'));
  const form = await s.req('/login', {
    method: 'POST',
    body: new URLSearchParams({ username: 'lockme', password: 'right-password' }),
    headers: { accept: 'text/html' },
  });
  assert.equal(form.headers.get('location'), '/login?error=locked');
  clock.advance(14 * 60_000);
  assert.equal((await jsonLogin('lockme', 'right-password')).status, 423, 'still locked after 14 min');
  clock.advance(60_000 + 1);
  assert.equal((await jsonLogin('lockme', 'right-password')).status, 200, 'unlocked after 15 min');
  // failures spread over more than the window do not lock
  for (let i = 0; i < 6; i++) {
    await jsonLogin('lockme', 'wrong');
    clock.advance(4 * 60_000);
  }
  assert.equal((await jsonLogin('lockme', 'right-password')).status, 200, 'failures spread over 24 min never reach 5 within 15 min');
  // manual unlock through the API
  for (let i = 0; i < 5; i++) await jsonLogin('lockme', 'wrong');
  assert.equal((await jsonLogin('lockme', 'right-password')).status, 423);
  const lockedList = await s.req('/api/v1/users/locked', { headers: { cookie } });
  assert.deepEqual(
    lockedList.data.locked.map((l: Locked) => l.identifier),
    ['lockme'],
  );
  const un = await s.req('/api/v1/users/unlock', { method: 'POST', json: { username: 'lockme' }, headers: { cookie, 'x-csrf-token': csrf } });
  assert.equal(un.status, 200);
  assert.equal(un.data.was_locked, true);
  assert.equal((await jsonLogin('lockme', 'right-password')).status, 200);
  // settings change the policy
  const set = await s.req('/api/v1/settings/security', {
    method: 'PUT',
    json: { lockout: { max_attempts: 2, duration: 1 } },
    headers: { cookie, 'x-csrf-token': csrf },
  });
  assert.equal(set.status, 200);
  for (let i = 0; i < 2; i++) await jsonLogin('lockme', 'wrong');
  assert.equal((await jsonLogin('lockme', 'right-password')).status, 423);
  clock.advance(60_001);
  assert.equal((await jsonLogin('lockme', 'right-password')).status, 200);
  const badSet = await s.req('/api/v1/settings/security', {
    method: 'PUT',
    json: { lockout: { max_attempts: 0, duration: 'x' } },
    headers: { cookie, 'x-csrf-token': csrf },
  });
  assert.equal(badSet.status, 400);
  assert.ok(badSet.data.fields!['lockout.max_attempts'] && badSet.data.fields!['lockout.duration']);
  assert.equal(await s.deps.settings.get('security.lockout.max_attempts'), 2, 'nothing changed');
  await s.deps.settings.set('security.lockout.max_attempts', 5);
  await s.deps.settings.set('security.lockout.duration', 15);
  const rows = asRows<'LoginAttempt'>(await s.deps.db.models.LoginAttempt.findAll({ where: { identifier: 'lockme' }, raw: true }));
  assert.ok(rows.every((r) => r.record_type === 'admin'));
});

test('an old bcrypt hash verifies once and is replaced by argon2id', async () => {
  const now = clock();
  await s.deps.db.models.User.create({
    username: 'legacy',
    email: null,
    password_hash: await bcrypt.hash('legacy-password', 10),
    role: 'user',
    language: 'en',
    theme: null,
    last_login_at: null,
    created_at: now,
    updated_at: now,
  });
  assert.equal((await jsonLogin('legacy', 'wrong-one')).status, 401);
  let row = ((await s.deps.db.models.User.findOne({ where: { username: 'legacy' }, raw: true })) as Row<'User'> | null)!;
  assert.match(row.password_hash, /^\$2b\$/);
  assert.equal((await jsonLogin('legacy', 'legacy-password')).status, 200);
  row = ((await s.deps.db.models.User.findOne({ where: { username: 'legacy' }, raw: true })) as Row<'User'> | null)!;
  assert.match(row.password_hash, /^\$argon2id\$/);
  assert.equal((await jsonLogin('legacy', 'legacy-password')).status, 200, 'the new hash verifies');
});

test('CSRF: header or _csrf body field; wrong token 403; token requests need none', async () => {
  const { cookie, csrf } = await login(s);
  const viaHeader = await s.req('/api/v1/settings/default-theme', { method: 'PUT', json: { theme: 'pro' }, headers: { cookie, 'x-csrf-token': csrf } });
  assert.equal(viaHeader.status, 200);
  const viaBody = await s.req('/api/v1/settings/default-theme', { method: 'PUT', json: { theme: 'default', _csrf: csrf }, headers: { cookie } });
  assert.equal(viaBody.status, 200);
  const wrong = await s.req('/api/v1/settings/default-theme', { method: 'PUT', json: { theme: 'pro' }, headers: { cookie, 'x-csrf-token': csrf + 'x' } });
  assert.equal(wrong.status, 403);
  assert.equal(await s.deps.settings.get('ui.default_theme'), 'default', 'refused write changed nothing');
  const t = await s.req('/api/v1/csrf', { headers: { cookie } });
  assert.equal(t.data.csrfToken, csrf);
});

test('password change needs the current password and ends other sessions', async () => {
  const { cookie, csrf } = await login(s);
  await s.req('/api/v1/users', {
    method: 'POST',
    json: { username: 'changer', password: 'first-password', role: 'user' },
    headers: { cookie, 'x-csrf-token': csrf },
  });
  const a = await login(s, { username: 'changer', password: 'first-password' });
  const b = await login(s, { username: 'changer', password: 'first-password' });
  const wrong = await s.req('/api/v1/settings/password', {
    method: 'PUT',
    json: { current: 'nope', next: 'second-password' },
    headers: { cookie: a.cookie, 'x-csrf-token': a.csrf },
  });
  assert.equal(wrong.status, 422, 'a wrong current password: valid by the document, refused (documented 422)');
  assert.ok(wrong.data.fields!.current);
  const short = await s.req('/api/v1/settings/password', {
    method: 'PUT',
    json: { current: 'first-password', next: 'short' },
    headers: { cookie: a.cookie, 'x-csrf-token': a.csrf },
  });
  assert.equal(short.status, 400);
  assert.ok(short.data.fields!.next);
  const ok = await s.req('/api/v1/settings/password', {
    method: 'PUT',
    json: { current: 'first-password', next: 'second-password' },
    headers: { cookie: a.cookie, 'x-csrf-token': a.csrf },
  });
  assert.equal(ok.status, 200);
  assert.equal((await s.req('/api/v1/session', { headers: { cookie: a.cookie } })).status, 200, 'own session kept');
  assert.equal((await s.req('/api/v1/session', { headers: { cookie: b.cookie } })).status, 401, 'other session ended');
  assert.equal((await jsonLogin('changer', 'second-password')).status, 200);
});

test('users API: create, duplicate 409, update, reset-password, delete, bad input leaves nothing', async () => {
  const { cookie, csrf } = await login(s);
  const h = { cookie, 'x-csrf-token': csrf };
  const before = (await s.req('/api/v1/users', { headers: h })).data.users.length;
  const bad = await s.req('/api/v1/users', { method: 'POST', json: { username: 'bad name!', email: 'nope', password: 'x', role: 'root' }, headers: h });
  assert.equal(bad.status, 400);
  assert.deepEqual(Object.keys(bad.data.fields!).sort(), ['email', 'password', 'role', 'username']);
  assert.equal((await s.req('/api/v1/users', { headers: h })).data.users.length, before, 'nothing written');
  const u = await s.req('/api/v1/users', {
    method: 'POST',
    json: { username: 'ops', email: 'ops@example.com', password: 'ops-password', role: 'admin' },
    headers: h,
  });
  assert.equal(u.status, 201);
  assert.ok(!('password_hash' in u.data.user));
  assert.equal((await s.req('/api/v1/users', { method: 'POST', json: { username: 'ops', password: 'ops-password', role: 'admin' }, headers: h })).status, 409);
  const up = await s.req(`/api/v1/users/${u.data.user.id}`, { method: 'PUT', json: { role: 'user', language: 'de' }, headers: h });
  assert.equal(up.data.user.role, 'user');
  assert.equal((await s.req(`/api/v1/users/${u.data.user.id}`, { method: 'PUT', json: { role: 'god' }, headers: h })).status, 400);
  const rp = await s.req(`/api/v1/users/${u.data.user.id}/reset-password`, { method: 'POST', headers: h });
  const after = await jsonLogin('ops', rp.data.password);
  assert.equal(after.status, 200);
  assert.equal(after.data.must_change_password, true, 'the admin has seen the new password: the user is asked for their own at sign-in');
  assert.equal((await s.req(`/api/v1/users/${u.data.user.id}`, { headers: h })).data.user.must_change_password, true);
  assert.equal((await s.req(`/api/v1/users/${u.data.user.id}`, { method: 'DELETE', headers: h })).status, 200);
  assert.equal((await s.req(`/api/v1/users/${u.data.user.id}`, { method: 'DELETE', headers: h })).status, 404);
  assert.equal((await s.req('/api/v1/users/abc', { headers: h })).status, 400);
  const me = (await s.req('/api/v1/session', { headers: h })).data.user!.id;
  assert.equal((await s.req(`/api/v1/users/${me}`, { method: 'DELETE', headers: h })).status, 409, 'cannot delete yourself');
});

test('activity log: filters, paging, CSV and JSON export', async () => {
  const { cookie } = await login(s);
  const h = { cookie };
  const all = await s.req('/api/v1/logs/activity?limit=5', { headers: h });
  assert.equal(all.status, 200);
  assert.equal(all.data.entries.length, 5);
  assert.ok(all.data.total > 5);
  const failed = await s.req('/api/v1/logs/activity?event_type=login_failed&severity=warning', { headers: h });
  assert.ok(failed.data.entries.length > 0);
  assert.ok(failed.data.entries.every((e: ActivityEntry) => e.event_type === 'login_failed' && e.severity === 'warning'));
  clock.advance(5000);
  const since = clock();
  await s.deps.activity.record({ source: 'test', event_type: 'marker', msg: msg('text.verbatim', { text: 'marker' }) });
  const iso = await s.req(`/api/v1/logs/activity?since=${encodeURIComponent(new Date(since).toISOString())}`, { headers: h });
  assert.deepEqual(
    iso.data.entries.map((e: ActivityEntry) => e.event_type),
    ['marker'],
  );
  const epoch = await s.req(`/api/v1/logs/activity?since=${since}&source=test`, { headers: h });
  assert.equal(epoch.data.entries.length, 1);
  const until = await s.req(`/api/v1/logs/activity?until=${since - 1}&event_type=marker`, { headers: h });
  assert.equal(until.data.entries.length, 0);
  const bad = await s.req('/api/v1/logs/activity?since=yesterday&limit=0&severity=loud', { headers: h });
  assert.equal(bad.status, 400);
  assert.ok(bad.data.fields!.since && bad.data.fields!.limit && bad.data.fields!.severity);
  const csv = await s.req('/api/v1/logs/activity/export?format=csv&event_type=marker', { headers: h });
  assert.match(csv.headers.get('content-type')!, /text\/csv/);
  assert.match(csv.headers.get('content-disposition')!, /attachment; filename="activity-log-.*\.csv"/);
  const lines = String(csv.data).trim().split('\n');
  assert.equal(lines[0], 'id,created_at,severity,source,event_type,message,details,user_id,ip');
  assert.equal(lines.length, 2);
  const json = await s.req('/api/v1/logs/activity/export?format=json&event_type=marker', { headers: h });
  assert.equal(at(json.data, 0, 'message'), 'marker');
  const recent = await s.req('/api/v1/logs/recent?limit=3', { headers: h });
  assert.equal(recent.data.entries.length, 3);
  assert.equal(recent.data.entries[0].event_type, 'marker');
});

test('profile, language, themes and app settings', async () => {
  const { cookie, csrf } = await login(s);
  const h = { cookie, 'x-csrf-token': csrf };
  const p = await s.req('/api/v1/settings/profile', { method: 'PUT', json: { email: 'admin@example.com', language: 'de' }, headers: h });
  assert.equal(p.data.profile.email, 'admin@example.com');
  assert.equal(p.data.profile.language, 'de');
  assert.equal((await s.req('/api/v1/settings/language', { method: 'POST', json: { language: 'fr' }, headers: h })).status, 400);
  assert.equal((await s.req('/api/v1/settings/default-theme', { method: 'PUT', json: { theme: 'dark' }, headers: h })).data.fields!.theme !== undefined, true);
  await s.req('/api/v1/settings/default-theme', { method: 'PUT', json: { theme: 'pro' }, headers: h });
  const app = await s.req('/api/v1/settings/app', { headers: h });
  assert.equal(app.data.app.default_theme, 'pro');
  assert.equal(app.data.app.token_prefix, 'gth');
  // The admin app takes its language from the session's user (GET /api/v1/session).
  const me = await s.req('/api/v1/session', { headers: { cookie } });
  assert.equal(me.data.user!.language, 'de');
  await s.req('/api/v1/settings/language', { method: 'POST', json: { language: 'en' }, headers: h });
});

test('token without a user cannot use profile endpoints; bound token can', async () => {
  const { cookie, csrf } = await login(s);
  const t = await s.req('/api/v1/tokens', {
    method: 'POST',
    json: { name: 'bound', scopes: ['settings'], user_id: 1 },
    headers: { cookie, 'x-csrf-token': csrf },
  });
  const prof = await s.req('/api/v1/settings/profile', { headers: bearer(t.data.token) });
  assert.equal(prof.status, 200);
  assert.equal(prof.data.profile.id, 1);
});

test('activity log filters accept a plain date and a zone-less date-time, read as UTC', async () => {
  clock.set(Date.UTC(2027, 2, 4, 9, 30, 0));
  const { cookie } = await login(s);
  const h = { cookie };
  await s.deps.activity.record({ source: 'test', event_type: 'dated_marker', msg: msg('text.verbatim', { text: 'at 2027-03-04T09:30Z' }) });
  const q = async (qs: string) => {
    const r = await s.req(`/api/v1/logs/activity?event_type=dated_marker&${qs}`, { headers: h });
    assert.equal(r.status, 200, `${qs} → ${r.status} ${JSON.stringify(r.data)}`);
    return r.data.entries.length as number;
  };
  assert.equal(await q('since=2027-03-04'), 1);
  assert.equal(await q('since=2027-03-05'), 0);
  assert.equal(await q('until=2027-03-04'), 0);
  assert.equal(await q('since=2027-03-04T09:30:00'), 1);
  assert.equal(await q('since=2027-03-04T09:30:01'), 0, 'zone-less means UTC, not server local time');
  assert.equal(await q('since=2027-03-04T11:30:00%2B02:00'), 1);
  const exp = await s.req('/api/v1/logs/activity/export?format=json&event_type=dated_marker&since=2027-03-04&until=2027-03-04T23:59:59', { headers: h });
  assert.equal(exp.status, 200);
  assert.equal(arr(exp.data).length, 1);
  for (const bad of ['since=2027-02-30', 'until=%5B1%5D', 'since=2027-03-04T25:00', 'since=99999999999999999']) {
    const r = await s.req(`/api/v1/logs/activity?${bad}`, { headers: h });
    assert.equal(r.status, 400, bad);
    assert.ok(r.data.fields?.since || r.data.fields?.until, bad);
  }
});

test('a NUL or other control character in login, unlock and the log filters is a 400 with fields, never a 500', async () => {
  const nul = await jsonLogin('a\u0000', 'x');
  assert.equal(nul.status, 400, JSON.stringify(nul.data));
  assert.equal(nul.data.ok, false);
  assert.ok(nul.data.fields!.username);
  const form = await s.req('/login', {
    method: 'POST',
    body: new URLSearchParams({ username: 'admin\u0000', password: 'x' }),
    headers: { accept: 'application/json' },
  });
  assert.equal(form.status, 400);
  assert.ok(form.data.fields!.username);
  for (const username of ['admin\u001b[2J', 'admin\u0085', '\ud800']) {
    const r = await jsonLogin(username, 'x');
    assert.equal(r.status, 400, JSON.stringify(username));
  }
  const { cookie, csrf } = await login(s);
  const h = { cookie, 'x-csrf-token': csrf };
  const unlock = await s.req('/api/v1/users/unlock', { method: 'POST', json: { username: 'a\u0000' }, headers: h });
  assert.equal(unlock.status, 400, JSON.stringify(unlock.data));
  assert.ok(unlock.data.fields!.username);
  for (const p of [
    '/api/v1/logs/activity?source=a%00',
    '/api/v1/logs/activity?event_type=a%00',
    '/api/v1/logs/activity/export?source=a%00',
    '/api/v1/logs/activity/export?format=csv&event_type=%07',
  ]) {
    const r = await s.req<Refusal>(p, { headers: h });
    assert.equal(r.status, 400, `${p} → ${r.status}`);
    assert.equal(r.data.ok, false);
    assert.ok(r.data.fields!.source || r.data.fields!.event_type, p);
  }
});

test('POST /logout of a signed-in session needs its CSRF token; the sign-out form (_csrf field) works', async () => {
  const a = await login(s);
  const noToken = await s.req('/logout', { method: 'POST', headers: { cookie: a.cookie, accept: 'application/json' } });
  assert.equal(noToken.status, 403);
  assert.equal(noToken.data.ok, false);
  const wrong = await s.req('/logout', { method: 'POST', headers: { cookie: a.cookie, accept: 'application/json', 'x-csrf-token': 'forged' } });
  assert.equal(wrong.status, 403);
  assert.equal((await s.req('/api/v1/session', { headers: { cookie: a.cookie } })).status, 200, 'the refused logout ended nothing');
  // The admin app's sign-out form: urlencoded _csrf (the session's token from GET /api/v1/session),
  // browser Accept → redirect to /login.
  const token = (await s.req('/api/v1/session', { headers: { cookie: a.cookie } })).data.csrfToken!;
  assert.equal(typeof token, 'string');
  const form = await s.req('/logout', { method: 'POST', body: new URLSearchParams({ _csrf: token }), headers: { cookie: a.cookie, accept: 'text/html' } });
  assert.equal(form.status, 302);
  assert.equal(form.headers.get('location'), '/login');
  assert.equal((await s.req('/api/v1/session', { headers: { cookie: a.cookie } })).status, 401);
  const anonymous = await s.req('/logout', { method: 'POST', headers: { accept: 'application/json' } });
  assert.equal(anonymous.status, 200, 'no session: nothing to end, nothing to protect');
});

test('the _csrf body field is honoured on DELETE', async () => {
  const { cookie, csrf } = await login(s);
  const tok = await s.req('/api/v1/tokens', { method: 'POST', json: { name: 'to-delete', scopes: ['logs'] }, headers: { cookie, 'x-csrf-token': csrf } });
  const id = tok.data.record.id;
  const without = await s.req(`/api/v1/tokens/${id}`, { method: 'DELETE', headers: { cookie } });
  assert.equal(without.status, 403);
  const viaJson = await s.req(`/api/v1/tokens/${id}`, { method: 'DELETE', json: { _csrf: csrf }, headers: { cookie } });
  assert.equal(viaJson.status, 200, JSON.stringify(viaJson.data));
  const tok2 = await s.req('/api/v1/tokens', { method: 'POST', json: { name: 'to-delete-2', scopes: ['logs'] }, headers: { cookie, 'x-csrf-token': csrf } });
  const viaForm = await s.req(`/api/v1/tokens/${tok2.data.record.id}`, { method: 'DELETE', body: new URLSearchParams({ _csrf: csrf }), headers: { cookie } });
  assert.equal(viaForm.status, 200, JSON.stringify(viaForm.data));
  const list = await s.req('/api/v1/tokens', { headers: { cookie } });
  assert.ok(!list.data.tokens.some((t: Token) => t.id === id || t.id === tok2.data.record.id));
});

test('admin session ids are stored only as their SHA-256: the cookie value is nowhere in the sessions table, the session works, logout removes it', async () => {
  const { cookie } = await login(s);
  const sid = new RegExp(`${SESSION_COOKIE}=([^;]+)`).exec(cookie)?.[1];
  assert.ok(sid, cookie);
  const rows = asRows<'Session'>(await s.deps.db.models.Session.findAll({ raw: true }));
  assert.ok(rows.length > 0);
  for (const r of rows) assert.ok(!r.sid.includes(sid) && !r.data.includes(sid), 'the plain session id is not stored');
  const hashed = crypto.createHash('sha256').update(sid).digest('hex');
  assert.ok(
    rows.some((r) => r.sid === hashed),
    'stored under its SHA-256',
  );
  assert.equal((await s.req('/api/v1/session', { headers: { cookie } })).status, 200);
  const csrf = (await s.req('/api/v1/csrf', { headers: { cookie } })).data.csrfToken!;
  assert.equal((await s.req('/logout', { method: 'POST', headers: { cookie, 'x-csrf-token': csrf, accept: 'application/json' } })).status, 200);
  assert.equal(await s.deps.db.models.Session.count({ where: { sid: hashed } }), 0);
  assert.equal((await s.req('/api/v1/session', { headers: { cookie } })).status, 401);
});
