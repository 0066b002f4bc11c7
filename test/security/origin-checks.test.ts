// Origin checks, on a running sidecar:
// - POST /login and every public endpoint that browsers post with the session (`sameOrigin` in the
//   registry: sign-in, sign-out, the password form) refuse a request whose Origin, or without one
//   Referer, names another site: another host, port or scheme, `null`, or no URL at all;
// - every session-authenticated admin write (walked from the registry) does the same, with a valid
//   session and CSRF token;
// - the route-auth login and logout forms on a protected host do the same;
// - same-origin and absent headers pass; API tokens are not affected;
// - the site's own scheme follows the trusted-proxy rule (X-Forwarded-Proto from loopback, only
//   with GATEHOUSE_TRUST_PROXY on).
// A refused sign-in sets no session. New endpoints are covered without editing this file. In real
// Chromium: the admin sign-in form and the route-auth sign-in form work from their own pages, and a
// form on another site's page that posts to /login is refused.
//   node --import tsx --test test/security/origin-checks.test.ts
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { CHROMIUM, openBrowser } from '../lib/browser.js';
import { startTestServer, apiToken, login, bearer, ADMIN, type TestServer } from '../../sidecar/test/lib/server.js';
import { Browser, rawRequest } from '../../sidecar/test/route-auth-helpers.js';
import { SESSION_COOKIE } from '../../sidecar/src/http/app.js';
import { fullPath, type Endpoint } from '../../sidecar/src/http/registry.js';
import { at, str } from '../lib/json.js';

let s: TestServer;
let own: string;
let full: Record<string, string>;
const LIMITS = { GATEHOUSE_RATE_LIMIT_ADMIN: '1000000', GATEHOUSE_RATE_LIMIT_LOGIN: '1000000' };

before(async () => {
  s = await startTestServer(LIMITS);
  own = new URL(s.url).origin;
  full = bearer(await apiToken(s));
});
after(async () => s?.close());

/** Origin/Referer headers a page of another site makes a browser send (or an attacker's page can force). */
function foreign(): [string, Record<string, string>][] {
  const u = new URL(own);
  return [
    ['Origin of another site', { origin: 'https://evil.example' }],
    ['Origin null', { origin: 'null' }],
    ['Origin of another port on the same host', { origin: `${u.protocol}//${u.hostname}:1` }],
    ['Origin of the same host over the other scheme', { origin: `https://${u.host}` }],
    ['Origin that is no URL', { origin: 'evil' }],
    ['Referer of another site, no Origin', { referer: 'https://evil.example/page?x=1' }],
    ['Origin of another site with a Referer of this one', { origin: 'https://evil.example', referer: `${own}/` }],
  ];
}
const sameOrAbsent = (): [string, Record<string, string>][] => [
  ['its own Origin', { origin: own }],
  ['its own Referer, no Origin', { referer: `${own}/peers?q=x` }],
  ['neither Origin nor Referer', {}],
];

const sessionCookie = (r: Response) => r.headers.getSetCookie().some((c) => c.startsWith(`${SESSION_COOKIE}=`) && !/expires=Thu, 01 Jan 1970/i.test(c));

test('POST /login: refused (403, no session) from another site; same origin and no header sign in, as JSON and as a browser form', async () => {
  for (const [why, h] of foreign()) {
    for (const json of [true, false]) {
      const r = await s.req(
        '/login',
        json
          ? { method: 'POST', json: ADMIN, headers: { accept: 'application/json', ...h } }
          : {
              method: 'POST',
              body: new URLSearchParams({ ...ADMIN, next: '/peers' }).toString(),
              headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html', ...h },
            },
      );
      assert.equal(r.status, 403, `${why} (${json ? 'JSON' : 'form'}): ${r.status}`);
      assert.match(JSON.stringify(r.data), /another site/, why);
      assert.equal(sessionCookie(r), false, `${why}: no session cookie`);
    }
  }
  for (const [why, h] of sameOrAbsent()) {
    const j = await s.req('/login', { method: 'POST', json: ADMIN, headers: { accept: 'application/json', ...h } });
    assert.equal(j.status, 200, `${why} (JSON): ${j.status} ${JSON.stringify(j.data)}`);
    assert.ok(sessionCookie(j), why);
    const f = await s.req('/login', {
      method: 'POST',
      body: new URLSearchParams({ ...ADMIN, next: '/peers' }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html', ...h },
    });
    assert.equal(f.status, 302, `${why} (form): ${f.status}`);
    assert.equal(f.headers.get('location'), '/peers');
  }
});

test('every public endpoint browsers post with the session (sameOrigin in the registry) refuses another site', async () => {
  const forms = s.endpoints.filter((e) => e.sameOrigin);
  for (const must of ['/login', '/logout', '/password'])
    assert.ok(
      forms.some((e) => e.path === must),
      `${must} is checked`,
    );
  for (const e of forms) {
    for (const [why, h] of foreign()) {
      const sess = await login(s);
      const r = await s.req(fullPath(e), {
        method: e.method,
        json: { _csrf: sess.csrf },
        headers: { accept: 'application/json', cookie: sess.cookie, 'x-csrf-token': sess.csrf, ...h },
      });
      assert.equal(r.status, 403, `${e.method} ${e.path} with ${why}: ${r.status}`);
      // the session is still there (a refused sign-out did not end it)
      assert.equal(
        (await s.req('/api/v1/session', { headers: { cookie: sess.cookie, accept: 'application/json' } })).status,
        200,
        `${e.method} ${e.path} with ${why}: session kept`,
      );
    }
    const sess = await login(s);
    const ok = await s.req(fullPath(e), {
      method: e.method,
      json: { _csrf: sess.csrf },
      headers: { accept: 'application/json', cookie: sess.cookie, 'x-csrf-token': sess.csrf, origin: own },
    });
    assert.notEqual(ok.status, 403, `${e.method} ${e.path} from this site: ${ok.status} ${JSON.stringify(ok.data)}`);
  }
});

/** A concrete path: ids that do not exist, so a call that passes the checks ends in a 404 or 400, not a change. */
const concrete = (e: Endpoint) => fullPath(e).replace(/:([A-Za-z_]+)/g, (_m, n: string) => (/id$/i.test(n) ? '987654' : 'no-such-thing'));
/** Passed authentication, authorization, CSRF and origin: anything but 401/403 (a licence gate's 403 names its feature). */
const passed = (r: { status: number; data: unknown }) => r.status !== 401 && (r.status !== 403 || typeof at(r.data, 'feature') === 'string');

test(
  'every session-authenticated admin write: refused from another site even with its CSRF token; passes from this site or without the headers; tokens are not affected',
  { timeout: 180_000 },
  async () => {
    const writes = s.endpoints.filter((e) => e.auth === 'admin' && e.method !== 'GET');
    assert.ok(writes.length >= 50, `admin writes: ${writes.length}`);
    const sess = await login(s);
    const variants = foreign();
    let i = 0;
    for (const e of writes) {
      const label = `${e.method} ${fullPath(e)}`;
      const [why, h] = variants[i++ % variants.length];
      const call = (headers: Record<string, string>) => s.req(concrete(e), { method: e.method, json: {}, headers: { accept: 'application/json', ...headers } });
      const refused = await call({ cookie: sess.cookie, 'x-csrf-token': sess.csrf, ...h });
      assert.equal(refused.status, 403, `${label}, session with CSRF, ${why}: ${refused.status} ${JSON.stringify(refused.data)}`);
      assert.match(str(at(refused.data, 'error')), /another site/, label);
      for (const [how, ok] of sameOrAbsent()) {
        const r = await call({ cookie: sess.cookie, 'x-csrf-token': sess.csrf, ...ok });
        assert.ok(passed(r), `${label}, session with CSRF, ${how}: ${r.status} ${JSON.stringify(r.data)}`);
      }
      // a token is never origin-checked; a session-only endpoint (an account's own second factor) refuses every token anyway
      if (!e.sessionOnly) {
        const t = await call({ ...full, ...h });
        assert.ok(passed(t), `${label}, full-access token, ${why}: ${t.status} ${JSON.stringify(t.data)}`);
      }
    }
    // reads are not writes: a session GET from another site's link still answers
    assert.equal(
      (await s.req('/api/v1/session', { headers: { cookie: sess.cookie, accept: 'application/json', referer: 'https://evil.example/' } })).status,
      200,
    );
  },
);

test("the site's own scheme follows the trusted-proxy rule: X-Forwarded-Proto from loopback counts only with GATEHOUSE_TRUST_PROXY on", async () => {
  // node's fetch does not send a Host of our choosing: a raw request, as Caddy makes it
  const viaCaddy = (srv: TestServer, origin: string) =>
    rawRequest(
      srv.port,
      'POST',
      '/login',
      {
        host: 'admin.example.test',
        'x-forwarded-proto': 'https',
        'x-forwarded-for': '203.0.113.9',
        origin,
        accept: 'application/json',
        'content-type': 'application/json',
      },
      JSON.stringify(ADMIN),
    ).then((r) => r.status);
  assert.equal(await viaCaddy(s, 'https://admin.example.test'), 200, 'https page behind our Caddy');
  assert.equal(await viaCaddy(s, 'http://admin.example.test'), 403, 'an http page is another origin than the https site');
  assert.equal(await viaCaddy(s, 'https://admin.example.test.evil.example'), 403);
  const untrusting = await startTestServer({ ...LIMITS, GATEHOUSE_TRUST_PROXY: 'false' });
  try {
    assert.equal(await viaCaddy(untrusting, 'https://admin.example.test'), 403, 'X-Forwarded-Proto is not trusted: the site is http');
    assert.equal(await viaCaddy(untrusting, 'http://admin.example.test'), 200);
  } finally {
    await untrusting.close();
  }
});

test('route-auth login and logout forms on a protected host: refused from another site; same origin and no header sign in', async () => {
  const peer = await s.req('/api/v1/peers', { method: 'POST', json: { name: 'origin-peer' }, headers: full });
  const route = await s.req('/api/v1/routes', {
    method: 'POST',
    json: { domain: 'origin-ra.example.test', peer_id: peer.data.peer.id, target_port: 8080 },
    headers: full,
  });
  assert.equal(route.status, 201, JSON.stringify(route.data));
  const password = 'origin-route-Pass-24';
  assert.equal(
    (
      await s.req(`/api/v1/routes/${route.data.route.id}/auth`, {
        method: 'POST',
        json: { method: 'email_password', email: 'owner@example.test', password, session_max_age: 3_600_000 },
        headers: full,
      })
    ).status,
    200,
  );
  const site = 'https://origin-ra.example.test';
  const rd = `${site}/after`;
  /** Opens the login page (its CSRF cookie and field), then posts the password step with these headers. */
  const signIn = async (b: Browser, headers: Record<string, string>) => {
    const page = await b.get(`/route-auth/login?rd=${encodeURIComponent(rd)}`);
    assert.equal(page.status, 200);
    assert.equal(page.headers['referrer-policy'], 'same-origin', 'the page makes its own form posts carry their Origin');
    assert.match(page.body, /<meta name="referrer" content="same-origin">/);
    return b.post('/route-auth/login', { _csrf: Browser.csrf(page.body), rd, step: 'password', email: 'owner@example.test', password }, headers);
  };
  const variants: [string, Record<string, string>][] = [
    ['Origin of another site', { origin: 'https://evil.example' }],
    ['Origin null', { origin: 'null' }],
    ['Origin of the admin host', { origin: own }],
    ['the http origin of the https site', { origin: 'http://origin-ra.example.test' }],
    ['Referer of another site, no Origin', { referer: 'https://evil.example/x' }],
  ];
  for (const [why, h] of variants) {
    const b = new Browser(s, 'origin-ra.example.test');
    const r = await signIn(b, h);
    assert.equal(r.status, 403, `${why}: ${r.status}`);
    assert.equal(b.session(route.data.route.id), undefined, `${why}: no route session`);
  }
  for (const [why, h] of [
    ['its own Origin', { origin: site }],
    ['its own Referer', { referer: `${site}/route-auth/login?rd=x` }],
    ['no header', {}],
  ] as [string, Record<string, string>][]) {
    const b = new Browser(s, 'origin-ra.example.test');
    const r = await signIn(b, h);
    assert.equal(r.status, 303, `${why}: ${r.status} ${r.body.slice(0, 200)}`);
    assert.equal(r.headers.location, rd);
    assert.ok(b.session(route.data.route.id), `${why}: signed in`);
    assert.equal((await b.verify('/')).status, 204);
    // sign-out from another site is refused (the session stays); from the page itself it ends
    const page = await b.get('/route-auth/logout');
    const out = await b.post('/route-auth/logout', { _csrf: Browser.csrf(page.body) }, { origin: 'https://evil.example' });
    assert.equal(out.status, 403, `${why}: foreign logout ${out.status}`);
    assert.equal((await b.verify('/')).status, 204, 'still signed in');
    const real = await b.post('/route-auth/logout', { _csrf: Browser.csrf(page.body) }, { origin: site });
    assert.equal(real.status, 303);
    assert.notEqual((await b.verify('/')).status, 204, 'signed out');
  }
});

test(
  'in Chromium: the sign-in forms work from their own pages; a form on another site that posts to /login is refused',
  { skip: fs.existsSync(CHROMIUM) ? false : `no ${CHROMIUM}` },
  async () => {
    const peer = await s.req('/api/v1/peers', { method: 'POST', json: { name: 'origin-chromium-peer' }, headers: full });
    const route = await s.req('/api/v1/routes', {
      method: 'POST',
      json: { domain: 'origin-chromium.example.test', peer_id: peer.data.peer.id, target_port: 8080 },
      headers: full,
    });
    const password = 'origin-chromium-Pass-24';
    assert.equal(
      (
        await s.req(`/api/v1/routes/${route.data.route.id}/auth`, {
          method: 'POST',
          json: { method: 'email_password', email: 'owner@example.test', password, session_max_age: 3_600_000 },
          headers: full,
        })
      ).status,
      200,
    );
    // the attacker's page: another origin (localhost, another port) with a form that posts itself to our /login
    const evil = http.createServer((_req, res) => {
      res.setHeader('content-type', 'text/html');
      res.end(
        `<form id="f" method="post" action="${own}/login"><input name="username" value="${ADMIN.username}"><input name="password" value="${ADMIN.password}"><button>go</button></form>`,
      );
    });
    await new Promise<void>((r) => evil.listen(0, '127.0.0.1', () => r()));
    const evilUrl = `http://localhost:${(evil.address() as AddressInfo).port}/`;
    const browser = await openBrowser();
    try {
      // the admin sign-in form on its own page
      const admin = await browser.newContext();
      const page = await admin.newPage();
      await page.goto(`${own}/login?next=/peers`);
      await page.fill('input[name=username]', ADMIN.username);
      await page.fill('input[name=password]', ADMIN.password);
      const [signIn] = await Promise.all([
        page.waitForResponse((r) => r.url() === `${own}/login` && r.request().method() === 'POST'),
        page.click('button[type=submit]'),
      ]);
      assert.equal(signIn.status(), 302, 'signed in from the sign-in page');
      assert.equal(new URL(signIn.request().headers().origin ?? '').origin, own, 'Chromium sent this site as Origin');
      assert.ok((await admin.cookies(own)).some((c) => c.name === SESSION_COOKIE));
      // another site's form: Chromium names that site; refused, no session
      const victim = await browser.newContext();
      const ep = await victim.newPage();
      await ep.goto(evilUrl);
      const [refused] = await Promise.all([ep.waitForResponse((r) => r.url() === `${own}/login`), ep.click('button')]);
      assert.equal(refused.status(), 403);
      assert.equal(refused.request().headers().origin, evilUrl.replace(/\/$/, ''));
      assert.ok(!(await victim.cookies(own)).some((c) => c.name === SESSION_COOKIE), "no session in the victim's browser");
      // the route-auth sign-in form on its own page (the route chosen by X-Route-Domain, as Caddy sets it)
      const visitor = await browser.newContext({ extraHTTPHeaders: { 'x-route-domain': 'origin-chromium.example.test' } });
      const rp = await visitor.newPage();
      await rp.goto(`${own}/route-auth/login?rd=${encodeURIComponent('/after')}`);
      await rp.fill('input[name=email]', 'owner@example.test');
      await rp.fill('input[name=password]', password);
      const [posted] = await Promise.all([
        rp.waitForResponse((r) => r.url() === `${own}/route-auth/login` && r.request().method() === 'POST'),
        rp.click('button[type=submit]'),
      ]);
      assert.equal(posted.status(), 303, 'signed in on the route-auth page');
      assert.equal(posted.request().headers().origin, own, "the page's own form carries its origin, not null");
      assert.ok(
        (await visitor.cookies(own)).some((c) => c.name === `gh_ra_${route.data.route.id}`),
        'route session cookie set',
      );
    } finally {
      await browser.close();
      evil.close();
    }
  },
);
