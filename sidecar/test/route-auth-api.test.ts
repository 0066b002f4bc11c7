// Route auth admin API: GET/POST/DELETE /routes/:id/auth, TOTP setup, branding uploads.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import speakeasy from 'speakeasy';
import { startTestServer, apiToken, bearer, type TestServer } from './lib/server.js';
import type { BodyOf } from './lib/api-types.js';
import { Browser, createRoute, startSmtp, type SmtpSink } from './route-auth-helpers.js';
import { SESSION_DURATIONS, BRANDING_MAX_BYTES } from '../src/route-auth/schema.js';
import type { RouteAuthService } from '../src/route-auth/service.js';
import { at } from '../../test/lib/json.js';

let s: TestServer;
let h: Record<string, string>;
let smtp: SmtpSink;
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');
const H24 = SESSION_DURATIONS['24h'];

before(async () => {
  // branding URLs are fetched from a server on loopback here: the operator's explicit opt-in (util/outbound.ts)
  s = await startTestServer({ GATEHOUSE_RATE_LIMIT_ADMIN: '100000', GATEHOUSE_RATE_LIMIT_LOGIN: '100000', GATEHOUSE_OUTBOUND_ALLOW_PRIVATE: 'branding' });
  h = bearer(await apiToken(s));
  smtp = await startSmtp();
});
after(async () => {
  await smtp.close();
  await s.close();
});

const svc = () => s.deps.routeAuth as RouteAuthService;
const count = async () => svc().models.RouteAuth.count();
/** GET /routes/:id/auth, or POST with a body (route_auth: the configuration, null when none), typed as GET's answer. */
const auth = (id: number, json?: unknown, method = json === undefined ? 'GET' : 'POST') =>
  s.req<BodyOf<'GET', '/api/v1/routes/:id/auth'>>(`/api/v1/routes/${id}/auth`, { method, headers: h, ...(json !== undefined ? { json } : {}) });

test('GET: null without a configuration, 404 for an unknown route', async () => {
  const r = await createRoute(s);
  const g = await auth(r.id);
  assert.equal(g.status, 200);
  assert.equal(g.data.route_auth, null);
  assert.equal((await auth(987654)).status, 404);
  assert.equal((await auth(987654, { method: 'email_password', email: 'a@b.test', password: 'secret-pass', session_max_age: H24 })).status, 404);
});

test('bad input: 400 with fields, nothing written', async () => {
  const r = await createRoute(s);
  const before = await count();
  const cases: [unknown, string[]][] = [
    [{}, ['method', 'email', 'session_max_age']],
    [{ method: 'magic', email: 'a@b.test', session_max_age: H24, password: 'longenough' }, ['method']],
    [{ method: 'email_password', email: 'not-an-email', session_max_age: H24, password: 'longenough' }, ['email']],
    [{ method: 'email_password', email: 'a@b.test', session_max_age: 1000, password: 'longenough' }, ['session_max_age']],
    [{ method: 'email_password', email: 'a@b.test', session_max_age: '24h', password: 'longenough' }, ['session_max_age']],
    [{ method: 'email_password', email: 'a@b.test', session_max_age: H24, password: 'short' }, ['password']],
    [{ method: 'email_password', email: 'a@b.test', session_max_age: H24, password: 'x'.repeat(73) }, ['password']],
    [{ method: 'totp', two_factor_enabled: true, two_factor_method: 'totp', email: 'a@b.test', session_max_age: H24 }, ['two_factor_enabled']],
    [{ method: 'email_password', two_factor_enabled: true, email: 'a@b.test', session_max_age: H24, password: 'longenough' }, ['two_factor_method']],
    [{ method: 'email_password', email: 'a@b.test', session_max_age: H24, password: 'longenough', primary_color: 'red' }, ['primary_color']],
    [{ method: 'email_password', email: 'a@b.test', session_max_age: H24, password: 'longenough', logo_url: 'javascript:alert(1)' }, ['logo_url']],
    [{ method: 'email_password', email: 'a@b.test', session_max_age: H24, password: 'longenough', title: 'a\u0000b' }, ['title']],
    // service-level rules
    [{ method: 'email_password', email: 'a@b.test', session_max_age: H24 }, ['password']],
    [{ method: 'email_code', email: 'a@b.test', session_max_age: H24 }, ['method']],
    [
      { method: 'email_password', two_factor_enabled: true, two_factor_method: 'email_code', email: 'a@b.test', session_max_age: H24, password: 'longenough' },
      ['two_factor_method'],
    ],
  ];
  for (const [body, fields] of cases) {
    const res = await auth(r.id, body);
    assert.ok([400, 409, 422].includes(res.status), `${JSON.stringify(body)} → ${res.status} ${JSON.stringify(res.data)}`);
    assert.equal(res.data.ok, false);
    for (const f of fields) assert.ok(res.data.fields?.[f], `${JSON.stringify(body)}: expected fields.${f} in ${JSON.stringify(res.data.fields)}`);
  }
  assert.equal(await count(), before);
  assert.equal((await auth(r.id)).data.route_auth, null);
  // a non-JSON object body
  const bad = await s.req(`/api/v1/routes/${r.id}/auth`, { method: 'POST', headers: { ...h, 'content-type': 'application/json' }, body: '[1,2]' });
  assert.equal(bad.status, 400);
  assert.equal(await count(), before);
});

test('route auth on an L4 route, or with basic auth on the route: 400, nothing written', async () => {
  const l4 = await createRoute(s, { route_type: 'l4', l4_protocol: 'tcp', l4_listen_port: 15432 });
  const basic = await createRoute(s, { basic_auth_user: 'alice', basic_auth_password_hash: '$2b$12$abcdefghijklmnopqrstuu5B6bD7c7lQ3r7Yt0b3Jv1w9o0GxN8W2' });
  const body = { method: 'email_password', email: 'a@b.test', password: 'longenough', session_max_age: H24 };
  const before = await count();
  const a = await auth(l4.id, body);
  assert.equal(a.status, 409);
  assert.match(a.data.error!, /L4/);
  assert.ok(a.data.fields!.method);
  const b = await auth(basic.id, body);
  assert.equal(b.status, 409);
  assert.match(b.data.error!, /[Bb]asic auth/);
  assert.ok(b.data.fields!.method);
  assert.equal(await count(), before);
  assert.equal(await svc().hasRouteAuth(basic.id), false);
});

test('every allowed session duration is accepted; the password is never returned', async () => {
  const r = await createRoute(s);
  for (const [label, ms] of Object.entries(SESSION_DURATIONS)) {
    const res = await auth(r.id, { method: 'email_password', email: 'Owner@Example.test', password: 'correct horse', session_max_age: ms });
    assert.equal(res.status, 200, `${label}: ${JSON.stringify(res.data)}`);
    assert.equal(res.data.route_auth!.session_max_age, ms);
  }
  const g = await auth(r.id);
  assert.equal(g.data.route_auth!.method, 'email_password');
  assert.equal(g.data.route_auth!.email, 'owner@example.test');
  assert.equal(g.data.route_auth!.password_set, true);
  assert.equal(g.data.route_auth!.two_factor_enabled, false);
  assert.equal(g.data.route_auth!.totp_active, false);
  assert.ok(!JSON.stringify(g.data).includes('$2'), 'no bcrypt hash in the answer');
  assert.ok(!('password' in g.data.route_auth!) && !('password_hash' in g.data.route_auth!));
  const row = (await svc().config(r.id))!;
  assert.match(row.password_hash!, /^\$2[aby]\$12\$/);
  assert.equal(await svc().hasRouteAuth(r.id), true);
  assert.ok((await svc().protectedRouteIds()).has(r.id));
  // an update without password keeps the hash
  const u = await auth(r.id, { method: 'email_password', email: 'owner@example.test', session_max_age: H24, title: 'Team wiki' });
  assert.equal(u.status, 200);
  assert.equal((await svc().config(r.id))!.password_hash, row.password_hash);
  assert.equal(u.data.route_auth!.title, 'Team wiki');
  // omitted branding fields are kept, null clears them
  const k = await auth(r.id, { method: 'email_password', email: 'owner@example.test', session_max_age: H24 });
  assert.equal(k.data.route_auth!.title, 'Team wiki');
  const c = await auth(r.id, { method: 'email_password', email: 'owner@example.test', session_max_age: H24, title: null });
  assert.equal(c.data.route_auth!.title, null);
});

/** A route with email/password route auth and a browser holding an active session for it (verify lets it through). */
async function routeWithSignedInBrowser() {
  const r = await createRoute(s);
  await auth(r.id, { method: 'email_password', email: 'o@example.test', password: 'correct horse', session_max_age: H24 });
  const token = await svc().createSession(r.id, 'o@example.test', 'active', 'email_password', H24);
  const b = new Browser(s, r.domain);
  b.cookies.set(`gh_ra_${r.id}`, { value: token, path: '/', attrs: '' });
  assert.equal((await b.verify('/')).status, 204);
  return { r, b };
}

test('DELETE removes the configuration and ends its sessions', async () => {
  const { r, b } = await routeWithSignedInBrowser();
  const d = await auth(r.id, undefined, 'DELETE');
  assert.equal(d.status, 200);
  assert.equal(at(d.data, 'deleted'), true);
  assert.equal((await auth(r.id)).data.route_auth, null);
  assert.equal(await svc().models.RouteAuthSession.count({ where: { route_id: r.id } }), 0);
  assert.equal((await b.verify('/')).status, 302);
  const again = await auth(r.id, undefined, 'DELETE');
  assert.equal(at(again.data, 'deleted'), false);
});

test('email_code needs SMTP; with SMTP configured it is accepted', async () => {
  const r = await createRoute(s);
  const put = await s.req('/api/v1/smtp', {
    method: 'PUT',
    headers: h,
    json: { host: '127.0.0.1', port: smtp.port, secure: false, from: 'gatehouse@example.test' },
  });
  assert.equal(put.status, 200);
  const res = await auth(r.id, { method: 'email_code', email: 'o@example.test', session_max_age: SESSION_DURATIONS['1h'] });
  assert.equal(res.status, 200, JSON.stringify(res.data));
  assert.equal(res.data.route_auth!.method, 'email_code');
  assert.equal(res.data.route_auth!.password_set, false);
});

test('TOTP setup only for a saved configuration; verify activates it (±1 step)', async () => {
  const r = await createRoute(s);
  const early = await s.req(`/api/v1/routes/${r.id}/auth/totp-setup`, { method: 'POST', headers: h });
  assert.equal(early.status, 409);
  assert.equal((await s.req(`/api/v1/routes/987654/auth/totp-setup`, { method: 'POST', headers: h })).status, 404);
  await auth(r.id, { method: 'totp', email: 'o@example.test', session_max_age: H24 });
  const setup = await s.req(`/api/v1/routes/${r.id}/auth/totp-setup`, { method: 'POST', headers: h });
  assert.equal(setup.status, 200);
  const { secret, otpauth_url, qr_code } = setup.data;
  assert.match(secret, /^[A-Z2-7]{32}$/);
  const u = new URL(otpauth_url);
  assert.equal(u.protocol, 'otpauth:');
  assert.equal(u.searchParams.get('secret'), secret);
  assert.equal(u.searchParams.get('issuer'), 'Gatehouse');
  assert.match(decodeURIComponent(u.pathname), new RegExp(`${r.domain}:o@example.test`));
  assert.match(qr_code, /^data:image\/png;base64,/);
  assert.ok(Buffer.from(qr_code.split(',')[1], 'base64').subarray(0, 8).equals(PNG.subarray(0, 8)));
  assert.equal((await auth(r.id)).data.route_auth!.totp_active, false);
  assert.equal((await auth(r.id)).data.route_auth!.totp_setup_pending, true);
  // the secret is sealed at rest
  const row = (await svc().config(r.id))!;
  assert.ok(row.totp_pending_secret && !row.totp_pending_secret.includes(secret));
  for (const bad of [{}, { token: '12345' }, { token: 'abcdef' }]) {
    const v = await s.req(`/api/v1/routes/${r.id}/auth/totp-verify`, { method: 'POST', headers: h, json: bad });
    assert.equal(v.status, 400);
    assert.ok(v.data.fields!.token, JSON.stringify(v.data));
  }
  const now = Math.floor(Date.now() / 1000);
  const wrong = speakeasy.totp({ secret, encoding: 'base32', time: now + 300 });
  const w = await s.req(`/api/v1/routes/${r.id}/auth/totp-verify`, { method: 'POST', headers: h, json: { token: wrong } });
  assert.equal(w.status, 422);
  assert.equal((await auth(r.id)).data.route_auth!.totp_active, false);
  // one step behind is inside the documented window
  const prev = speakeasy.totp({ secret, encoding: 'base32', time: now - 30 });
  const ok = await s.req(`/api/v1/routes/${r.id}/auth/totp-verify`, { method: 'POST', headers: h, json: { token: prev } });
  assert.equal(ok.status, 200, JSON.stringify(ok.data));
  assert.equal(ok.data.route_auth.totp_active, true);
  assert.equal(ok.data.route_auth.totp_setup_pending, false);
  assert.ok(!JSON.stringify(ok.data).includes(secret));
});

test('branding: upload checked by content and size, served on the login page, deleted', async () => {
  const r = await createRoute(s);
  const upload = (seg: string, data: Buffer, name = 'x.png', type = 'image/png') => {
    const fd = new FormData();
    fd.append('file', new Blob([new Uint8Array(data)], { type }), name);
    return s.req<BodyOf<'POST', '/api/v1/routes/:id/branding/logo'>>(`/api/v1/routes/${r.id}/branding/${seg}`, { method: 'POST', headers: h, body: fd });
  };
  const early = await upload('logo', PNG);
  assert.equal(early.status, 409, 'needs a saved configuration');
  await auth(r.id, { method: 'email_password', email: 'o@example.test', password: 'correct horse', session_max_age: H24 });
  const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>');
  const refused = await upload('logo', svg, 'logo.png', 'image/png');
  assert.equal(refused.status, 422);
  assert.ok(refused.data.fields!.file);
  const big = Buffer.concat([PNG, Buffer.alloc(BRANDING_MAX_BYTES)]);
  const tooBig = await upload('logo', big);
  assert.equal(tooBig.status, 400);
  assert.ok(tooBig.data.fields!.file);
  const none = await s.req(`/api/v1/routes/${r.id}/branding/logo`, { method: 'POST', headers: h, json: {} });
  assert.equal(none.status, 400);
  assert.ok(none.data.fields!.file);
  assert.equal((await auth(r.id)).data.route_auth!.logo, null);

  const ok = await upload('logo', PNG, 'whatever.bin', 'application/octet-stream');
  assert.equal(ok.status, 200, JSON.stringify(ok.data));
  assert.match(ok.data.route_auth.logo!, /^\/route-auth\/branding\/logo\?v=\d+$/);
  const gif = Buffer.concat([Buffer.from('GIF89a'), Buffer.alloc(32)]);
  const bg = await upload('bg-image', gif, 'bg.gif', 'image/gif');
  assert.equal(bg.status, 200);
  const files = fs.readdirSync(path.join(s.dataDir, 'branding')).filter((f) => f.startsWith(`route-${r.id}-`));
  assert.equal(files.length, 2);

  const b = new Browser(s, r.domain);
  const page = await b.get('/route-auth/login');
  assert.match(page.body, /<img class="logo" src="\/route-auth\/branding\/logo\?v=\d+"/);
  assert.match(page.body, /background-image:url\("\/route-auth\/branding\/bg-image\?v=\d+"\)/);
  const img = await b.get('/route-auth/branding/logo');
  assert.equal(img.status, 200);
  assert.equal(img.headers['content-type'], 'image/png');
  assert.equal(img.headers['x-content-type-options'], 'nosniff');
  const bgImg = await b.get('/route-auth/branding/bg-image');
  assert.equal(bgImg.headers['content-type'], 'image/gif');

  const del = await s.req(`/api/v1/routes/${r.id}/branding/logo`, { method: 'DELETE', headers: h });
  assert.equal(del.status, 200);
  assert.equal(del.data.route_auth.logo, null);
  assert.equal((await b.get('/route-auth/branding/logo')).status, 404);
  assert.equal(fs.readdirSync(path.join(s.dataDir, 'branding')).filter((f) => f.startsWith(`route-${r.id}-`)).length, 1);
  // removing the configuration removes the files
  await auth(r.id, undefined, 'DELETE');
  assert.equal(fs.readdirSync(path.join(s.dataDir, 'branding')).filter((f) => f.startsWith(`route-${r.id}-`)).length, 0);
});

test('branding by URL is fetched once and stored locally; a non-image URL is refused', async () => {
  const srv = http.createServer((req, res) => {
    if (req.url === '/logo.png') {
      res.writeHead(200, { 'content-type': 'image/png' });
      res.end(PNG);
    } else {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<html>not an image</html>');
    }
  });
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', () => resolve()));
  const base = `http://127.0.0.1:${(srv.address() as AddressInfo).port}`;
  try {
    const r = await createRoute(s);
    const bad = await auth(r.id, {
      method: 'email_password',
      email: 'o@example.test',
      password: 'correct horse',
      session_max_age: H24,
      logo_url: `${base}/page.html`,
    });
    assert.equal(bad.status, 422);
    assert.ok(bad.data.fields!.logo_url);
    assert.equal(await svc().hasRouteAuth(r.id), false);
    const ok = await auth(r.id, {
      method: 'email_password',
      email: 'o@example.test',
      password: 'correct horse',
      session_max_age: H24,
      logo_url: `${base}/logo.png`,
    });
    assert.equal(ok.status, 200, JSON.stringify(ok.data));
    assert.ok(ok.data.route_auth!.logo);
    const b = new Browser(s, r.domain);
    const img = await b.get('/route-auth/branding/logo');
    assert.equal(img.status, 200);
    assert.ok(!(await b.get('/route-auth/login')).body.includes('127.0.0.1'), 'the page does not reference the source URL');
  } finally {
    srv.close();
  }
});

test('deleting the route removes its route auth (cascade) and verify stops letting it through', async () => {
  const { r, b } = await routeWithSignedInBrowser();
  await s.deps.db.models.Route.destroy({ where: { id: r.id } });
  assert.equal(await svc().models.RouteAuth.count({ where: { route_id: r.id } }), 0);
  assert.equal(await svc().models.RouteAuthSession.count({ where: { route_id: r.id } }), 0);
  assert.equal((await b.verify('/')).status, 302);
});
