// Security suite: every redirect parameter of a running sidecar, fed every known
// open-redirect bypass form (sidecar/test/lib/redirect-bypasses.ts), sends the browser nowhere but the
// origin it asked. The parameters are listed once in PARAMETERS: a new one (OIDC `next` when it comes)
// is one more entry there. Each entry gets a same-origin target through unchanged first, so the probe
// cannot pass by never redirecting at all.
//   node --import tsx --test --test-concurrency=1 test/security/redirects.test.ts
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, apiToken, bearer, login, ADMIN, type TestServer } from '../../sidecar/test/lib/server.js';
import { totpCode } from '../../sidecar/src/util/totp.js';
import { Browser, createRoute, rawRequest } from '../../sidecar/test/route-auth-helpers.js';
import { BYPASSES, HOST, staysOn } from '../../sidecar/test/lib/redirect-bypasses.js';
import { startIdp, throughIdp, ProviderJar, type Idp } from '../../sidecar/test/lib/oidc-idp.js';

let s: TestServer;
const PASSWORD = 'correct horse battery';
let routeId = 0;
/** A full-access token of the admin (the policy switched on and off around the enrolment's password step). */
let full: Record<string, string> = {};
// route auth's method oidc: a route signing in through a real OpenID Provider (lib/oidc-idp.ts)
const OIDC_HOST = 'sso.app.example.test';
const OIDC_ORIGIN = `https://${OIDC_HOST}`;
let idp: Idp;
const idpJar = new ProviderJar();

before(async () => {
  s = await startTestServer({ GATEHOUSE_RATE_LIMIT_ADMIN: '100000', GATEHOUSE_RATE_LIMIT_LOGIN: '100000' });
  const h = (full = bearer(await apiToken(s)));
  const r = await createRoute(s, { domain: HOST });
  routeId = r.id;
  const res = await s.req(`/api/v1/routes/${r.id}/auth`, {
    method: 'POST',
    headers: h,
    json: { method: 'email_password', password: PASSWORD, email: 'owner@example.test', session_max_age: 3_600_000 },
  });
  assert.equal(res.status, 200, JSON.stringify(res.data));
  // an account with a TOTP: its sign-in has the second-factor step, whose page carries `next`
  assert.equal((await s.req('/api/v1/users', { method: 'POST', headers: h, json: { ...TWO_FACTOR, role: 'operator' } })).status, 201);
  const sess = await login(s, TWO_FACTOR);
  const own = { cookie: sess.cookie, 'x-csrf-token': sess.csrf, accept: 'application/json' };
  const setup = await s.req('/api/v1/settings/second-factor/totp', { method: 'POST', headers: own, json: { current: TWO_FACTOR.password } });
  const on = await s.req('/api/v1/settings/second-factor/totp/verify', {
    method: 'POST',
    headers: own,
    json: { token: totpCode(setup.data.setup.secret, Date.now()) },
  });
  assert.equal(on.status, 200, JSON.stringify(on.data));
  // an account without one: under the policy its sign-in goes through the enrolment page
  assert.equal((await s.req('/api/v1/users', { method: 'POST', headers: h, json: { ...ENROL, role: 'viewer' } })).status, 201);
  idp = await startIdp({
    clients: [{ client_id: 'gh-redirects', redirect_uris: [`${OIDC_ORIGIN}/route-auth/oidc/callback`] }],
    users: { alice: { email: 'alice@example.test', email_verified: true, groups: ['ops'] } },
  });
  const p = await s.req('/api/v1/auth/oidc/providers', {
    method: 'POST',
    headers: h,
    json: { name: 'Redirect IdP', issuer: idp.issuer, client_id: 'gh-redirects', scopes: ['openid', 'email', 'groups'], allow_private: true },
  });
  assert.equal(p.status, 201, JSON.stringify(p.data));
  const o = await createRoute(s, { domain: OIDC_HOST });
  const oidc = await s.req(`/api/v1/routes/${o.id}/auth`, {
    method: 'POST',
    headers: h,
    json: { method: 'oidc', oidc_provider_id: p.data.provider.id, allowed_groups: ['ops'], email: 'owner@example.test', session_max_age: 3_600_000 },
  });
  assert.equal(oidc.status, 200, JSON.stringify(oidc.data));
});
after(async () => {
  await idp?.close();
  await s.close();
});
const TWO_FACTOR = { username: 'redirect-2fa', password: 'redirect-2fa-password' };
const ENROL = { username: 'redirect-enrol', password: 'redirect-enrol-password' };

/** What a redirect parameter gave back for a target: where the browser is sent, or what the next form carries. */
interface Outcome {
  status: number;
  /** the Location header, or the hidden form field that will be posted back */
  target: string;
}

interface RedirectParameter {
  name: string;
  /** the origin the browser is on */
  origin: string;
  /** a legitimate target and what it must come out as */
  good: [string, string];
  send(target: string): Promise<Outcome>;
}

const location = (res: { status: number; headers: Headers | Record<string, string | string[] | undefined> }): Outcome => {
  // a 400 (the body's own limits refused the value) sends the browser nowhere
  if (res.status === 400) return { status: 400, target: '' };
  const l = res.headers instanceof Headers ? res.headers.get('location') : (res.headers.location as string | undefined);
  assert.ok([302, 303].includes(res.status), `a redirect, not ${res.status}`);
  assert.ok(l !== null && l !== undefined, 'a Location header');
  return { status: res.status, target: l };
};
const hidden = (name: string, html: string): string => {
  const m = new RegExp(`<input type="hidden" name="${name}" value="([^"]*)">`).exec(html);
  assert.ok(m, `the form has a hidden ${name}`);
  return m[1]
    .replace(/&amp;/g, '&')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>');
};
const cookiesOf = (res: Response) =>
  res.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
const html = { accept: 'text/html' };
let adminCookie = '';
async function adminSession(): Promise<string> {
  if (adminCookie) return adminCookie;
  const res = await s.req('/login', { method: 'POST', body: new URLSearchParams({ username: ADMIN.username, password: ADMIN.password }), headers: html });
  adminCookie = cookiesOf(res);
  return adminCookie;
}
let signedIn: Browser | null = null;
async function routeSession(): Promise<Browser> {
  if (signedIn) return signedIn;
  const b = new Browser(s, HOST);
  const res = await b.submit('password', { email: 'owner@example.test', password: PASSWORD });
  assert.equal(res.status, 303);
  assert.ok(b.session(routeId));
  signedIn = b;
  return b;
}

const ADMIN_ORIGIN = () => s.url;
const ROUTE_ORIGIN = `https://${HOST}`;

const PARAMETERS: RedirectParameter[] = [
  {
    name: 'admin next: GET /login, signed in (redirect)',
    get origin() {
      return ADMIN_ORIGIN();
    },
    good: ['/peers?q=x', '/peers?q=x'],
    send: async (t) => location(await s.req(`/login?next=${encodeURIComponent(t)}`, { headers: { ...html, cookie: await adminSession() } })),
  },
  {
    name: 'admin next: GET /login, not signed in (the form field)',
    get origin() {
      return ADMIN_ORIGIN();
    },
    good: ['/routes#x', '/routes#x'],
    send: async (t) => {
      const res = await s.req<string>(`/login?next=${encodeURIComponent(t)}`, { headers: html });
      assert.equal(res.status, 200);
      return { status: 200, target: hidden('next', res.data) };
    },
  },
  {
    name: 'admin next: POST /login (redirect after signing in)',
    get origin() {
      return ADMIN_ORIGIN();
    },
    good: ['/tokens', '/tokens'],
    send: async (t) =>
      location(
        await s.req('/login', { method: 'POST', body: new URLSearchParams({ username: ADMIN.username, password: ADMIN.password, next: t }), headers: html }),
      ),
  },
  {
    name: 'route-auth rd: GET /route-auth/login, signed in (redirect)',
    origin: ROUTE_ORIGIN,
    good: [`${ROUTE_ORIGIN}/app?x=1`, `${ROUTE_ORIGIN}/app?x=1`],
    send: async (t) => {
      const b = await routeSession();
      const res = await b.get(`/route-auth/login?rd=${encodeURIComponent(t)}`);
      return location({ status: res.status, headers: res.headers as Record<string, string> });
    },
  },
  {
    name: 'route-auth rd: GET /route-auth/login, not signed in (the form field)',
    origin: ROUTE_ORIGIN,
    good: ['/wiki/page', '/wiki/page'],
    send: async (t) => {
      const res = await new Browser(s, HOST).get(`/route-auth/login?rd=${encodeURIComponent(t)}`);
      assert.equal(res.status, 200);
      return { status: 200, target: hidden('rd', res.body) };
    },
  },
  {
    name: 'route-auth rd: POST /route-auth/login (redirect after signing in)',
    origin: ROUTE_ORIGIN,
    good: [`${ROUTE_ORIGIN}/after`, `${ROUTE_ORIGIN}/after`],
    send: async (t) => {
      const b = new Browser(s, HOST);
      const page = await b.get('/route-auth/login');
      const res = await b.post('/route-auth/login', {
        _csrf: Browser.csrf(page.body),
        rd: t,
        step: 'password',
        email: 'owner@example.test',
        password: PASSWORD,
      });
      return location({ status: res.status, headers: res.headers as Record<string, string> });
    },
  },
  {
    name: 'route-auth rd: POST /route-auth/login?rd= (the query when the form has none)',
    origin: ROUTE_ORIGIN,
    good: ['/q', '/q'],
    send: async (t) => {
      const b = new Browser(s, HOST);
      const page = await b.get('/route-auth/login');
      const res = await b.post(`/route-auth/login?rd=${encodeURIComponent(t)}`, {
        _csrf: Browser.csrf(page.body),
        step: 'password',
        email: 'owner@example.test',
        password: PASSWORD,
      });
      return location({ status: res.status, headers: res.headers as Record<string, string> });
    },
  },
  {
    // the rd of the start is kept with the flow; the callback redirects to it once the provider let the visitor in
    name: 'route-auth oidc rd: GET /route-auth/oidc/start → the provider → the callback (redirect after signing in)',
    origin: OIDC_ORIGIN,
    good: [`${OIDC_ORIGIN}/app?x=1`, `${OIDC_ORIGIN}/app?x=1`],
    send: async (t) => {
      const b = new Browser(s, OIDC_HOST);
      const start = await b.get(`/route-auth/oidc/start?rd=${encodeURIComponent(t)}`);
      assert.equal(start.status, 302, start.body.slice(0, 200));
      const back = await throughIdp(idp, idpJar, start.headers.location!, 'alice');
      const res = await b.get(back.pathname + back.search);
      assert.ok(b.session(Number(/gh_ra_(\d+)=/.exec(String(res.headers['set-cookie']))?.[1])), 'signed in');
      return location({ status: res.status, headers: res.headers as Record<string, string> });
    },
  },
  {
    name: 'admin next: GET /login/second-factor after the password step (the form field)',
    get origin() {
      return ADMIN_ORIGIN();
    },
    good: ['/peers?q=x', '/peers?q=x'],
    send: async (t) => {
      const step = await s.req('/login', { method: 'POST', json: TWO_FACTOR, headers: { accept: 'application/json' } });
      assert.equal(step.data.second_factor, 'totp');
      const res = await s.req<string>(`/login/second-factor?next=${encodeURIComponent(t)}`, { headers: { ...html, cookie: cookiesOf(step) } });
      assert.equal(res.status, 200);
      return { status: 200, target: hidden('next', res.data) };
    },
  },
  {
    // an account without a second factor under the policy: its sign-in goes through the enrolment page,
    // which carries `next` (to the TOTP form and the passkey script) as the second-factor page does
    name: 'admin next: GET /login/enrol after the password step under the policy (the form field)',
    get origin() {
      return ADMIN_ORIGIN();
    },
    good: ['/groups?q=x', '/groups?q=x'],
    send: async (t) => {
      const h = full;
      assert.equal((await s.req('/api/v1/settings/security', { method: 'PUT', headers: h, json: { second_factor: { required: true } } })).status, 200);
      const step = await s
        .req('/login', { method: 'POST', json: ENROL, headers: { accept: 'application/json' } })
        .finally(() => s.req('/api/v1/settings/security', { method: 'PUT', headers: h, json: { second_factor: { required: false } } }));
      assert.equal(step.data.second_factor, 'enrol');
      const res = await s.req<string>(`/login/enrol?next=${encodeURIComponent(t)}`, { headers: { ...html, cookie: cookiesOf(step) } });
      assert.equal(res.status, 200);
      return { status: 200, target: hidden('next', res.data) };
    },
  },
  {
    name: 'admin next: GET /auth/oidc/:providerId/start, signed in (redirect)',
    get origin() {
      return ADMIN_ORIGIN();
    },
    good: ['/routes?q=x', '/routes?q=x'],
    send: async (t) => location(await s.req(`/auth/oidc/1/start?next=${encodeURIComponent(t)}`, { headers: { ...html, cookie: await adminSession() } })),
  },
  {
    // not signed in, a provider that is not there: the refusal page links back to the sign-in with `next`
    // (the same check keeps it for the provider's flow, whose end redirects to it: sidecar/test/oidc.test.ts)
    name: 'admin next: GET /auth/oidc/:providerId/start, not signed in (the page link back)',
    get origin() {
      return ADMIN_ORIGIN();
    },
    good: ['/tokens', '/tokens'],
    send: async (t) => {
      const res = await s.req(`/auth/oidc/999/start?next=${encodeURIComponent(t)}`, { headers: html });
      assert.equal(res.status, 404);
      const m = /<a href="(\/login[^"]*)"/.exec(res.data as string);
      assert.ok(m, 'a link back to the sign-in');
      const href = m[1].replace(/&amp;/g, '&');
      return { status: 404, target: new URL(href, s.url).searchParams.get('next') ?? '/' };
    },
  },
];

for (const p of PARAMETERS) {
  test(`${p.name}: a same-origin target goes through, none of ${BYPASSES.length} bypass forms leaves the origin`, { timeout: 120_000 }, async () => {
    const [good, expected] = p.good;
    assert.equal((await p.send(good)).target, expected, 'the legitimate target is kept');
    const escaped: string[] = [];
    for (const bad of BYPASSES) {
      const out = await p.send(bad);
      if (!staysOn(out.target, p.origin)) escaped.push(`${JSON.stringify(bad)} -> ${JSON.stringify(out.target)}`);
    }
    assert.deepEqual(escaped, [], `targets that leave ${p.origin}`);
  });
}

test('the route-auth verify answer sends a visitor to the login page of the same host only', async () => {
  const b = new Browser(s, HOST);
  for (const uri of ['/.//evil.example/x', '//evil.example', '/a/..//evil.example']) {
    const res = await rawRequest(s.port, 'GET', '/route-auth/verify', { ...b.headers('/'), 'x-forwarded-method': 'GET', 'x-forwarded-uri': uri });
    assert.equal(res.status, 302);
    const login = new URL(res.headers.location as string);
    assert.equal(login.origin, ROUTE_ORIGIN);
    const rd = login.searchParams.get('rd')!;
    assert.ok(staysOn(rd, ROUTE_ORIGIN), rd);
  }
});

test("an internal route's redirect for outsiders: every bypass form is refused or stored as an absolute http(s) URL sent exactly as the Location", async () => {
  // The target is the admin's (any site may be chosen), but never another scheme, a scheme-relative
  // or credentialed URL, a placeholder Caddy would fill from the request, nor the route's own domain.
  const h = bearer(await apiToken(s));
  const peer = await s.req('/api/v1/peers', { method: 'POST', headers: h, json: { name: 'exposure-redirects' } });
  const domain = 'internal.example.test';
  const r = await s.req('/api/v1/routes', {
    method: 'POST',
    headers: h,
    json: {
      domain,
      peer_id: peer.data.peer.id,
      target_port: 80,
      exposure: 'internal',
      exposure_answer: 'redirect',
      exposure_redirect_url: 'https://vpn.example.org/',
    },
  });
  assert.equal(r.status, 201, JSON.stringify(r.data));
  const id = r.data.route.id as number;
  const { frameHostMap } = await import('../../sidecar/src/proxy/render.js');
  const proxy = s.deps.proxy as import('../../sidecar/src/proxy/service.js').ProxyService;
  const location = async () =>
    (frameHostMap(await proxy.render(), 'gatehouse_http')![domain].routes[0].handle as { headers: { Location: string[] } }[])[0].headers.Location[0];
  assert.equal(await location(), 'https://vpn.example.org/');
  const wrong: string[] = [];
  for (const bad of [
    ...BYPASSES,
    `https://${domain}/`,
    `https://${domain.toUpperCase()}./x`,
    'https://x.example/{http.request.uri}',
    'https://x.example/\\{x\\}',
  ]) {
    const before = (await s.req(`/api/v1/routes/${id}`, { headers: h })).data.route.exposure_redirect_url as string;
    const res = await s.req(`/api/v1/routes/${id}`, { method: 'PUT', headers: h, json: { exposure_redirect_url: bad } });
    if (res.status === 400 || res.status === 422) {
      if (!res.data.fields?.exposure_redirect_url) wrong.push(`${JSON.stringify(bad)}: ${res.status} without fields.exposure_redirect_url`);
      const after = (await s.req(`/api/v1/routes/${id}`, { headers: h })).data.route.exposure_redirect_url;
      if (after !== before) wrong.push(`${JSON.stringify(bad)}: refused but changed to ${after}`);
      continue;
    }
    if (res.status !== 200) {
      wrong.push(`${JSON.stringify(bad)}: ${res.status}`);
      continue;
    }
    const stored = res.data.route.exposure_redirect_url as string;
    const u = new URL(stored);
    if (!['http:', 'https:'].includes(u.protocol) || !u.hostname || u.username || u.password || u.href !== stored || /[{}\s\\]/.test(stored))
      wrong.push(`${JSON.stringify(bad)} stored as ${JSON.stringify(stored)}`);
    if (u.hostname === domain) wrong.push(`${JSON.stringify(bad)}: the route's own domain (a loop)`);
    if ((await location()) !== stored) wrong.push(`${JSON.stringify(bad)}: Location ${JSON.stringify(await location())} is not ${JSON.stringify(stored)}`);
  }
  assert.deepEqual(wrong, []);
});
