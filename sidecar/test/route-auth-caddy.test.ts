// The Caddy JSON builders of route protection: golden shapes (what `caddy adapt` prints for the
// equivalent Caddyfile directives, checked live against bin/caddy when it exists), and the real
// Caddy running them in front of the real sidecar and a backend on loopback.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import bcrypt from 'bcrypt';
import {
  aclRoute,
  basicAuthHandler,
  ipFilterRoute,
  protectionRoutes,
  rateLimitHandler,
  rateWindowNs,
  type ProtectedRoute,
} from '../src/proxy/fragments/protection.js';
import {
  authUserLogHandler,
  forwardAuthHandler,
  forwardAuthRoutes,
  PAGE_PATHS,
  ROUTE_AUTH_COOKIE_PREFIX,
  notShared,
  routeAuthForwardHandler,
  routeAuthPagesRoute,
  shareLinkRoutes,
} from '../src/proxy/fragments/route-auth.js';
import { cookieNameFor } from '../src/route-auth/view.js';
import { CSRF_COOKIE } from '../src/route-auth/http.js';
import { startTestServer, apiToken, bearer, type TestServer } from './lib/server.js';
import { Browser, createRoute, rawRequest } from './route-auth-helpers.js';
import { SESSION_DURATIONS } from '../src/route-auth/schema.js';
import { freePort } from '../../test/lib/ports.js';
import { CADDY, stopCaddy } from '../../test/lib/caddy-env.js';
import { addAccessLog, accessLogFile } from '../src/proxy/fragments/access-log.js';
import { waitFor } from '../../test/lib/wait.js';
import type { AccessEntry } from './lib/protocol.js';
import { at, objAt, objsAt } from '../../test/lib/json.js';

const haveCaddy = fs.existsSync(CADDY);
const HASH = '$2a$14$Zkx19XLiW6VYouLHR5NmfOFU0z2GTNmpkT/5qqR7hx4IjWJPDhjvG';

const baseRoute = (over: Partial<ProtectedRoute> = {}): ProtectedRoute => ({
  id: 7,
  domain: 'app.example.com',
  basic_auth_user: null,
  basic_auth_password_hash: null,
  ip_filter_enabled: false,
  ip_filter_mode: null,
  ip_filter_rules: null,
  acl_enabled: false,
  rate_limit_enabled: false,
  rate_limit_requests: null,
  rate_limit_window: null,
  ...over,
});

/** The subroute body `caddy adapt` prints for one site of a Caddyfile. */
function adapt(site: string, globals = ''): unknown[] {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ra-adapt-'));
  try {
    fs.writeFileSync(path.join(dir, 'Caddyfile'), `${globals}\napp.example.com {\n${site}\n}\n`);
    const out = execFileSync(CADDY, ['adapt', '--config', path.join(dir, 'Caddyfile')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    return JSON.parse(out).apps.http.servers.srv0.routes[0].handle[0].routes;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------- golden shapes

test('basicAuthHandler: the authentication handler of `basic_auth`', () => {
  assert.deepEqual(basicAuthHandler('alice', HASH), {
    handler: 'authentication',
    providers: { http_basic: { accounts: [{ password: HASH, username: 'alice' }], hash: { algorithm: 'bcrypt' }, hash_cache: {} } },
  });
});

test('basicAuthHandler matches caddy adapt', { skip: !haveCaddy && 'bin/caddy not built' }, () => {
  const routes = adapt(`basic_auth {\n alice ${HASH}\n}\nrespond ok`) as { handle: unknown[] }[];
  assert.deepEqual(routes[0].handle[0], basicAuthHandler('alice', HASH));
});

test('forwardAuthHandler: reverse_proxy GET /route-auth/verify, copy X-Auth-* on 2xx', () => {
  const h = forwardAuthHandler('app.example.com', '127.0.0.1:3000');
  assert.equal(h.handler, 'reverse_proxy');
  assert.deepEqual(h.rewrite, { method: 'GET', uri: '/route-auth/verify' });
  assert.deepEqual(h.upstreams, [{ dial: '127.0.0.1:3000' }]);
  assert.deepEqual(objAt(h, 'headers', 'request').set, {
    'X-Forwarded-Method': ['{http.request.method}'],
    'X-Forwarded-Uri': ['{http.request.uri}'],
    'X-Route-Domain': ['app.example.com'],
  });
  assert.deepEqual(objAt(h, 'handle_response', 0).match, { status_code: [2] });
  const routes = objsAt(h, 'handle_response', 0, 'routes');
  assert.deepEqual(routes[0], { handle: [{ handler: 'vars' }] });
  assert.deepEqual(routes[1], { handle: [{ handler: 'headers', request: { delete: ['X-Auth-Email'] } }] });
  assert.deepEqual(routes[2], {
    handle: [{ handler: 'headers', request: { set: { 'X-Auth-Email': ['{http.reverse_proxy.header.X-Auth-Email}'] } } }],
    match: [{ not: [{ vars: { '{http.reverse_proxy.header.X-Auth-Email}': [''] } }] }],
  });
  assert.deepEqual(routes[4], {
    handle: [{ handler: 'headers', request: { set: { 'X-Auth-Groups': ['{http.reverse_proxy.header.X-Auth-Groups}'] } } }],
    match: [{ not: [{ vars: { '{http.reverse_proxy.header.X-Auth-Groups}': [''] } }] }],
  });
  assert.deepEqual(routes[8], {
    handle: [{ handler: 'headers', request: { set: { 'X-Auth-User': ['{http.reverse_proxy.header.X-Auth-User}'] } } }],
    match: [{ not: [{ vars: { '{http.reverse_proxy.header.X-Auth-User}': [''] } }] }],
  });
  assert.equal(routes.length, 9);
});

test('forwardAuthHandler matches caddy adapt of forward_auth', { skip: !haveCaddy && 'bin/caddy not built' }, () => {
  const routes = adapt(
    'forward_auth 127.0.0.1:3000 {\n uri /route-auth/verify\n header_up X-Route-Domain app.example.com\n copy_headers X-Auth-Email X-Auth-Groups X-Auth-Method X-Auth-User\n}\nrespond ok',
  ) as { handle: unknown[] }[];
  assert.deepEqual(routes[0].handle[0], forwardAuthHandler('app.example.com', '127.0.0.1:3000'));
});

test('routeAuthPagesRoute and forwardAuthRoutes', { skip: !haveCaddy && 'bin/caddy not built' }, () => {
  const routes = adapt(`@pages path ${PAGE_PATHS.join(' ')}\nreverse_proxy @pages 127.0.0.1:3000 {\n header_up X-Route-Domain app.example.com\n}`);
  assert.deepEqual(routes[0], routeAuthPagesRoute('app.example.com', '127.0.0.1:3000'));
  assert.deepEqual(forwardAuthRoutes({ domain: 'app.example.com' }, '127.0.0.1:3000'), [
    routeAuthPagesRoute('app.example.com', '127.0.0.1:3000'),
    { handle: [routeAuthForwardHandler('app.example.com', '127.0.0.1:3000')] },
  ]);
  // log_append as `caddy adapt` prints it
  const log = adapt('log_append auth_user {http.request.header.X-Auth-User}\nrespond ok') as { handle: unknown[] }[];
  assert.deepEqual(log[0].handle[0], authUserLogHandler());
});

test('routeAuthForwardHandler is forwardAuthHandler plus, on a successful verify, the removal of every gh_ra_ cookie', () => {
  const plain = forwardAuthHandler('app.example.com', '127.0.0.1:3000');
  const h = routeAuthForwardHandler('app.example.com', '127.0.0.1:3000');
  const plainRoutes = objsAt(plain, 'handle_response', 0, 'routes');
  const copied = plainRoutes.length;
  assert.deepEqual({ ...h, handle_response: undefined }, { ...plain, handle_response: undefined });
  assert.deepEqual(objAt(h, 'handle_response', 0).match, { status_code: [2] });
  const routes = objsAt(h, 'handle_response', 0, 'routes');
  assert.deepEqual(routes.slice(0, copied), plainRoutes);
  const [strip, drop, log, ...more] = routes.slice(copied);
  assert.deepEqual(Object.keys(objAt(strip, 'handle', 0, 'request', 'replace')), ['Cookie']);
  assert.deepEqual(at(drop, 'handle', 0, 'request', 'delete'), ['Cookie']);
  // Then the access-log field naming the signed-in account, in front of the rest of the chain.
  assert.deepEqual(log, { handle: [authUserLogHandler()] });
  assert.deepEqual(more, []);
  // The prefix covers every cookie route auth sets.
  for (const name of [cookieNameFor(7), `${cookieNameFor(7)}_p`, CSRF_COOKIE]) assert.ok(name.startsWith(ROUTE_AUTH_COOKIE_PREFIX), name);
});

test('aclRoute and ipFilterRoute: remote_ip matchers answering 403', () => {
  assert.deepEqual(aclRoute(['10.8.0.2/32', '10.8.0.3']), {
    handle: [{ body: 'Forbidden', handler: 'static_response', status_code: 403 }],
    match: [{ not: [{ remote_ip: { ranges: ['10.8.0.2', '10.8.0.3'] } }] }],
  });
  assert.deepEqual(aclRoute([]), { handle: [{ body: 'Forbidden', handler: 'static_response', status_code: 403 }] });
  assert.deepEqual(ipFilterRoute('whitelist', ['203.0.113.9/24', { value: '2001:DB8::1/32', note: 'v6 office' }]), {
    handle: [{ body: 'Forbidden', handler: 'static_response', status_code: 403 }],
    match: [{ not: [{ remote_ip: { ranges: ['203.0.113.0/24', '2001:db8::/32'] } }] }],
  });
  assert.deepEqual(ipFilterRoute('blacklist', '["198.51.100.7"]'), {
    handle: [{ body: 'Forbidden', handler: 'static_response', status_code: 403 }],
    match: [{ remote_ip: { ranges: ['198.51.100.7'] } }],
  });
  assert.equal(ipFilterRoute('blacklist', []), null);
  assert.deepEqual(ipFilterRoute('whitelist', []), { handle: [{ body: 'Forbidden', handler: 'static_response', status_code: 403 }] });
});

test('aclRoute / ipFilterRoute match caddy adapt', { skip: !haveCaddy && 'bin/caddy not built' }, () => {
  const a = adapt('@denied not remote_ip 10.8.0.2 10.8.0.3\nrespond @denied "Forbidden" 403');
  assert.deepEqual(a[0], aclRoute(['10.8.0.2', '10.8.0.3']));
  const b = adapt('@bl remote_ip 198.51.100.7\nrespond @bl "Forbidden" 403');
  assert.deepEqual(b[0], ipFilterRoute('blacklist', ['198.51.100.7']));
});

test('rateLimitHandler: one zone per route keyed by the client address', () => {
  assert.deepEqual(rateLimitHandler({ id: 7, rate_limit_requests: 100, rate_limit_window: '1m' }), {
    handler: 'rate_limit',
    rate_limits: { gatehouse_route_7: { key: '{http.request.remote.host}', max_events: 100, window: 60_000_000_000 } },
  });
  assert.equal(rateWindowNs('15m'), 900e9);
  assert.equal(rateWindowNs('1h'), 3600e9);
  assert.equal(rateWindowNs('30s'), 30e9);
  assert.equal(rateWindowNs('1d'), 86400e9);
  assert.equal(rateWindowNs('minute'), 60e9);
  assert.throws(() => rateWindowNs('5x'));
  assert.throws(() => rateLimitHandler({ id: 1, rate_limit_requests: 0, rate_limit_window: '1m' }));
});

test('rateLimitHandler matches caddy adapt', { skip: !haveCaddy && 'bin/caddy not built' }, () => {
  const r = adapt(
    'rate_limit {\n zone gatehouse_route_7 {\n  key {http.request.remote.host}\n  events 100\n  window 1m\n }\n}\nrespond ok',
    '{\n order rate_limit before respond\n}',
  ) as { handle: unknown[] }[];
  assert.deepEqual(r[0].handle[0], rateLimitHandler({ id: 7, rate_limit_requests: 100, rate_limit_window: '1m' }));
});

test('protectionRoutes: ACL → IP filter → rate limit → basic auth → rest; route auth: ACL → pages → forward auth (its 2xx routes add the auth_user log field) → rate limit → rest', () => {
  const rest = [{ handler: 'reverse_proxy', upstreams: [{ dial: '10.8.0.2:80' }] }];
  const up = '127.0.0.1:3000';
  const limit = rateLimitHandler({ id: 7, rate_limit_requests: 10, rate_limit_window: '1m' });
  const basic = baseRoute({
    acl_enabled: true,
    ip_filter_enabled: true,
    ip_filter_mode: 'whitelist',
    ip_filter_rules: ['203.0.113.0/24'],
    rate_limit_enabled: true,
    rate_limit_requests: 10,
    rate_limit_window: '1m',
    basic_auth_user: 'alice',
    basic_auth_password_hash: HASH,
  });
  assert.deepEqual(protectionRoutes(basic, { routeAuth: false, sidecarUpstream: up, aclAddresses: ['10.8.0.2'] }, rest), [
    aclRoute(['10.8.0.2']),
    ipFilterRoute('whitelist', ['203.0.113.0/24']),
    shareLinkRoutes(basic, up)[0],
    { handle: [limit] },
    shareLinkRoutes(basic, up)[1],
    { handle: [basicAuthHandler('alice', HASH)], match: [notShared] },
    { handle: rest },
  ]);
  // a wildcard domain has no share links: the basic auth in the chain as before
  assert.deepEqual(protectionRoutes({ ...basic, domain: '*.example.com' }, { routeAuth: false, sidecarUpstream: up, aclAddresses: ['10.8.0.2'] }, rest), [
    aclRoute(['10.8.0.2']),
    ipFilterRoute('whitelist', ['203.0.113.0/24']),
    { handle: [limit, basicAuthHandler('alice', HASH), ...rest] },
  ]);
  const ra = baseRoute({
    acl_enabled: true,
    ip_filter_enabled: true,
    ip_filter_mode: 'whitelist',
    ip_filter_rules: ['203.0.113.0/24'],
    rate_limit_enabled: true,
    rate_limit_requests: 10,
    rate_limit_window: '1m',
  });
  assert.deepEqual(protectionRoutes(ra, { routeAuth: true, sidecarUpstream: up, aclAddresses: ['10.8.0.2'] }, rest), [
    aclRoute(['10.8.0.2']),
    routeAuthPagesRoute('app.example.com', up),
    { handle: [routeAuthForwardHandler('app.example.com', up), limit, ...rest] },
  ]);
  assert.deepEqual(protectionRoutes(baseRoute(), { routeAuth: false, sidecarUpstream: up, aclAddresses: [] }, rest), [{ handle: rest }]);
  // A route with retries: its reverse_proxy routes (tail) follow the chain; an empty chain is left out.
  const tail = [{ match: [{ gatehouse_bodiless: {} }], handle: rest }, { handle: rest }];
  assert.deepEqual(protectionRoutes(ra, { routeAuth: true, sidecarUpstream: up, aclAddresses: ['10.8.0.2'] }, [], tail), [
    aclRoute(['10.8.0.2']),
    routeAuthPagesRoute('app.example.com', up),
    { handle: [routeAuthForwardHandler('app.example.com', up), limit] },
    ...tail,
  ]);
  assert.deepEqual(protectionRoutes(baseRoute({ acl_enabled: true }), { routeAuth: false, sidecarUpstream: up, aclAddresses: ['10.8.0.2'] }, [], tail), [
    aclRoute(['10.8.0.2']),
    ...tail,
  ]);
});

// ---------------------------------------------------------------- real Caddy

let s: TestServer | undefined;
/** A browser's cookie jar: keep() takes a response's Set-Cookie lines (an empty value deletes), cookie() is the Cookie header. */
function cookieJar() {
  const jar = new Map<string, string>();
  const cookie = () => [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
  const keep = (r: { headers: http.IncomingHttpHeaders }) => {
    for (const line of r.headers['set-cookie'] ?? []) {
      const [pair] = line.split(';');
      const [k, v] = [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)];
      if (v) jar.set(k, v);
      else jar.delete(k);
    }
  };
  return { cookie, keep };
}

let caddy: ChildProcess | undefined;
let backend: http.Server | undefined;
let caddyPort = 0;
let dir = '';
const routes: Record<string, { id: number; domain: string }> = {};
const routeUsers: Record<string, { id: number; password: string }> = {};
let adminHeaders: Record<string, string> = {};

before(async () => {
  if (!haveCaddy) return;
  s = await startTestServer({ GATEHOUSE_RATE_LIMIT_ADMIN: '100000', GATEHOUSE_RATE_LIMIT_LOGIN: '100000' });
  const h = bearer(await apiToken(s));
  backend = http.createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ path: req.url, headers: req.headers }));
  });
  await new Promise<void>((resolve) => backend!.listen(0, '127.0.0.1', () => resolve()));
  const backendDial = `127.0.0.1:${(backend.address() as net.AddressInfo).port}`;
  const up = `127.0.0.1:${s.port}`;
  const rest = [{ handler: 'reverse_proxy', upstreams: [{ dial: backendDial }] }];
  const hash = await bcrypt.hash('basic-secret', 10); // node's bcrypt writes $2b$
  routes.fa = await createRoute(s, { domain: 'fa.test', https_enabled: false });
  const res = await s.req(`/api/v1/routes/${routes.fa.id}/auth`, {
    method: 'POST',
    headers: h,
    json: { method: 'email_password', email: 'owner@example.test', password: 'correct horse', session_max_age: SESSION_DURATIONS['1h'] },
  });
  assert.equal(res.status, 200);
  // a route whose users (user_ids) sign in with their own Gatehouse accounts
  adminHeaders = h;
  for (const name of ['alice', 'bob', 'carol']) {
    const password = `${name}-own-password-1`;
    const u: Response & { data: { user: { id: number } } } = await s.req('/api/v1/users', {
      method: 'POST',
      headers: h,
      json: { username: name, email: `${name}@example.test`, password, role: 'user' },
    });
    assert.equal(u.status, 201, JSON.stringify(u.data));
    routeUsers[name] = { id: u.data.user.id, password };
  }
  routes.users = await createRoute(s, { domain: 'users.test', https_enabled: false, user_ids: JSON.stringify([routeUsers.alice.id, routeUsers.bob.id]) });
  const ru = await s.req(`/api/v1/routes/${routes.users.id}/auth`, {
    method: 'POST',
    headers: h,
    json: { method: 'email_password', email: 'owner@example.test', password: 'correct horse', session_max_age: SESSION_DURATIONS['1h'] },
  });
  assert.equal(ru.status, 200);
  const hosts: [string, ProtectedRoute, boolean, string[]][] = [
    ['fa.test', baseRoute({ id: routes.fa.id, domain: 'fa.test', rate_limit_enabled: true, rate_limit_requests: 1000, rate_limit_window: '1m' }), true, []],
    ['users.test', baseRoute({ id: routes.users.id, domain: 'users.test' }), true, []],
    ['basic.test', baseRoute({ id: 101, domain: 'basic.test', basic_auth_user: 'alice', basic_auth_password_hash: hash }), false, []],
    ['rl.test', baseRoute({ id: 102, domain: 'rl.test', rate_limit_enabled: true, rate_limit_requests: 3, rate_limit_window: '1m' }), false, []],
    ['acl-deny.test', baseRoute({ id: 103, domain: 'acl-deny.test', acl_enabled: true }), false, ['10.99.0.1']],
    ['acl-allow.test', baseRoute({ id: 104, domain: 'acl-allow.test', acl_enabled: true }), false, ['10.99.0.1', '127.0.0.1/32']],
    ['ipw.test', baseRoute({ id: 105, domain: 'ipw.test', ip_filter_enabled: true, ip_filter_mode: 'whitelist', ip_filter_rules: ['127.0.0.0/8'] }), false, []],
    ['ipb.test', baseRoute({ id: 106, domain: 'ipb.test', ip_filter_enabled: true, ip_filter_mode: 'blacklist', ip_filter_rules: ['127.0.0.1'] }), false, []],
  ];
  caddyPort = await freePort();
  const config = {
    admin: { disabled: true },
    apps: {
      http: {
        servers: {
          ra_test: {
            listen: [`127.0.0.1:${caddyPort}`],
            automatic_https: { disable: true },
            routes: hosts.map(([host, route, routeAuth, acl]) => ({
              match: [{ host: [host] }],
              handle: [{ handler: 'subroute', routes: protectionRoutes(route, { routeAuth, sidecarUpstream: up, aclAddresses: acl }, rest) }],
              terminal: true,
            })),
          },
        },
      },
    },
  };
  // the access log as the renderer writes it, into the file the sidecar tails
  addAccessLog(config, config.apps.http.servers, accessLogFile(s.dataDir));
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ra-caddy-'));
  fs.writeFileSync(path.join(dir, 'caddy.json'), JSON.stringify(config));
  caddy = spawn(CADDY, ['run', '--config', path.join(dir, 'caddy.json')], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, HOME: dir, XDG_DATA_HOME: dir, XDG_CONFIG_HOME: dir },
  });
  let stderr = '';
  caddy.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  await waitFor(
    async () => {
      if (caddy!.exitCode !== null) throw new Error(`caddy exited: ${stderr}`);
      return new Promise<boolean>((resolve) => {
        const sock = net.connect(caddyPort, '127.0.0.1', () => {
          sock.destroy();
          resolve(true);
        });
        sock.on('error', () => resolve(false));
      });
    },
    15_000,
    { intervalMs: 100, what: `caddy to listen on ${caddyPort}` },
  );
});

after(async () => {
  await stopCaddy(caddy);
  backend?.close();
  await s?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

const viaCaddy = (method: string, host: string, p: string, headers: Record<string, string> = {}, body?: string) =>
  rawRequest(caddyPort, method, p, { host, ...headers }, body);

test(
  'real Caddy: forward auth → 302 to login, login through Caddy, backend gets the identity, spoofed headers replaced',
  { skip: !haveCaddy && 'bin/caddy not built' },
  async () => {
    const host = `fa.test:${caddyPort}`;
    const anon = await viaCaddy('GET', host, '/docs?x=1', { 'x-auth-email': 'intruder@evil.test' });
    assert.equal(anon.status, 302);
    const loc = new URL(anon.headers.location!);
    assert.equal(loc.origin, `http://${host}`);
    assert.equal(loc.searchParams.get('rd'), `http://${host}/docs?x=1`);
    // the login page and form, through Caddy (browser-like: cookie jar)
    const { cookie, keep } = cookieJar();
    const page = await viaCaddy('GET', host, `${loc.pathname}${loc.search}`);
    assert.equal(page.status, 200);
    keep(page);
    const form = new URLSearchParams({
      _csrf: Browser.csrf(page.body),
      rd: loc.searchParams.get('rd')!,
      step: 'password',
      email: 'owner@example.test',
      password: 'correct horse',
    }).toString();
    const post = await viaCaddy('POST', host, '/route-auth/login', { cookie: cookie(), 'content-type': 'application/x-www-form-urlencoded' }, form);
    assert.equal(post.status, 303, post.body);
    assert.equal(post.headers.location, `http://${host}/docs?x=1`);
    keep(post);
    const ok = await viaCaddy('GET', host, '/docs?x=1', { cookie: cookie(), 'x-auth-email': 'intruder@evil.test', 'x-auth-method': 'forged' });
    assert.equal(ok.status, 200, ok.body);
    const seen = JSON.parse(ok.body);
    assert.equal(seen.path, '/docs?x=1');
    assert.equal(seen.headers['x-auth-email'], 'owner@example.test');
    assert.equal(seen.headers['x-auth-method'], 'email_password');
    // logout through Caddy, then 302 again
    const lp = await viaCaddy('GET', host, '/route-auth/logout', { cookie: cookie() });
    keep(lp);
    const out = await viaCaddy(
      'POST',
      host,
      '/route-auth/logout',
      { cookie: cookie(), 'content-type': 'application/x-www-form-urlencoded' },
      new URLSearchParams({ _csrf: Browser.csrf(lp.body) }).toString(),
    );
    assert.equal(out.status, 303);
    keep(out);
    assert.equal((await viaCaddy('GET', host, '/docs', { cookie: cookie() })).status, 302);
  },
);

test(
  'real Caddy: two route users sign in on the same route, each with their own session; the backend, the access log and the trace name them; a user not in user_ids is refused',
  { skip: !haveCaddy && 'bin/caddy not built' },
  async () => {
    const host = `users.test:${caddyPort}`;
    async function signIn(name: string, password: string): Promise<{ status: number; cookie: string }> {
      const { cookie, keep } = cookieJar();
      const page = await viaCaddy('GET', host, '/route-auth/login?rd=%2F');
      assert.equal(page.status, 200);
      keep(page);
      const form = new URLSearchParams({ _csrf: Browser.csrf(page.body), rd: '/', step: 'password', email: name, password }).toString();
      const post = await viaCaddy('POST', host, '/route-auth/login', { cookie: cookie(), 'content-type': 'application/x-www-form-urlencoded' }, form);
      keep(post);
      return { status: post.status, cookie: cookie() };
    }
    const alice = await signIn('alice', routeUsers.alice.password);
    const bob = await signIn('bob@example.test', routeUsers.bob.password);
    assert.equal(alice.status, 303);
    assert.equal(bob.status, 303);
    const sid = (c: string) => /gh_ra_\d+=([^;]+)/.exec(c)?.[1];
    assert.ok(sid(alice.cookie) && sid(bob.cookie) && sid(alice.cookie) !== sid(bob.cookie), 'a session each');
    const carol = await signIn('carol', routeUsers.carol.password);
    assert.equal(carol.status, 401, 'a Gatehouse user not in user_ids is refused');
    assert.equal((await viaCaddy('GET', host, '/carol', { cookie: carol.cookie })).status, 302);

    const a = await viaCaddy('GET', host, '/alice-was-here', { cookie: alice.cookie, 'x-auth-user': 'bob' });
    assert.equal(a.status, 200, a.body);
    assert.equal(JSON.parse(a.body).headers['x-auth-user'], 'alice', 'a visitor cannot name someone else');
    assert.equal(JSON.parse(a.body).headers['x-auth-email'], 'alice@example.test');
    const b = await viaCaddy('GET', host, '/bob-was-here', { cookie: bob.cookie });
    assert.equal(JSON.parse(b.body).headers['x-auth-user'], 'bob');

    // the trace (from Caddy's access log) names who made each request
    let reqs: { uri: string; auth_user: string | null; status: number }[] = [];
    await waitFor(
      async () => {
        const t = await s!.req(`/api/v1/routes/${routes.users.id}/trace`, { headers: adminHeaders });
        assert.equal(t.status, 200);
        reqs = t.data.requests;
        return reqs.some((r) => r.uri === '/bob-was-here');
      },
      5000,
      { intervalMs: 100, what: 'the trace to show /bob-was-here' },
    );
    const byUri = (u: string) => reqs.find((r) => r.uri === u);
    assert.equal(byUri('/alice-was-here')?.auth_user, 'alice', JSON.stringify(reqs));
    assert.equal(byUri('/bob-was-here')?.auth_user, 'bob');
    assert.equal(byUri('/carol')?.auth_user, null, 'a refused request names nobody');
    assert.equal(byUri('/carol')?.status, 302);
    // and so does the access log
    const log = await s!.req('/api/v1/logs/access?limit=100', { headers: adminHeaders });
    assert.ok(log.data.entries.some((e: AccessEntry) => e.uri === '/alice-was-here' && e.auth_user === 'alice'));
  },
);

test(
  'real Caddy: basic auth 401 + WWW-Authenticate, 200 with the bcrypt-checked password, 401 when wrong',
  { skip: !haveCaddy && 'bin/caddy not built' },
  async () => {
    const none = await viaCaddy('GET', 'basic.test', '/');
    assert.equal(none.status, 401);
    assert.match(String(none.headers['www-authenticate']), /^Basic/);
    const good = await viaCaddy('GET', 'basic.test', '/', { authorization: `Basic ${Buffer.from('alice:basic-secret').toString('base64')}` });
    assert.equal(good.status, 200);
    const bad = await viaCaddy('GET', 'basic.test', '/', { authorization: `Basic ${Buffer.from('alice:wrong').toString('base64')}` });
    assert.equal(bad.status, 401);
  },
);

test('real Caddy: rate limit gives 429 after the configured count', { skip: !haveCaddy && 'bin/caddy not built' }, async () => {
  const statuses: number[] = [];
  for (let i = 0; i < 5; i++) statuses.push((await viaCaddy('GET', 'rl.test', '/')).status);
  assert.deepEqual(statuses, [200, 200, 200, 429, 429]);
});

test('real Caddy: peer ACL and IP filter by remote address', { skip: !haveCaddy && 'bin/caddy not built' }, async () => {
  assert.equal((await viaCaddy('GET', 'acl-deny.test', '/')).status, 403);
  assert.equal((await viaCaddy('GET', 'acl-allow.test', '/')).status, 200);
  assert.equal((await viaCaddy('GET', 'ipw.test', '/')).status, 200);
  assert.equal((await viaCaddy('GET', 'ipb.test', '/')).status, 403);
  // a spoofed X-Forwarded-For does not change the remote address
  assert.equal((await viaCaddy('GET', 'acl-deny.test', '/', { 'x-forwarded-for': '10.99.0.1' })).status, 403);
});

test(
  'real Caddy: the backend never sees a gh_ra_ cookie (the session included) and gets its own cookies intact',
  { skip: !haveCaddy && 'bin/caddy not built' },
  async () => {
    const host = `fa.test:${caddyPort}`;
    const jar = new Map<string, string>();
    const keep = (r: { headers: http.IncomingHttpHeaders }) => {
      for (const line of r.headers['set-cookie'] ?? []) {
        const pair = line.split(';')[0];
        jar.set(pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1));
      }
    };
    const ours = () => [...jar].filter(([, v]) => v).map(([k, v]) => `${k}=${v}`);
    const anon = await viaCaddy('GET', host, '/app');
    const loc = new URL(anon.headers.location!);
    const page = await viaCaddy('GET', host, `${loc.pathname}${loc.search}`);
    keep(page);
    const form = new URLSearchParams({
      _csrf: Browser.csrf(page.body),
      rd: loc.searchParams.get('rd')!,
      step: 'password',
      email: 'owner@example.test',
      password: 'correct horse',
    }).toString();
    const post = await viaCaddy('POST', host, '/route-auth/login', { cookie: ours().join('; '), 'content-type': 'application/x-www-form-urlencoded' }, form);
    assert.equal(post.status, 303, post.body);
    keep(post);
    const session = `gh_ra_${routes.fa.id}`;
    assert.ok(jar.get(session), 'signed in: the session cookie is set');
    const cases: [string, string | undefined][] = [
      // [Cookie the browser sends, Cookie the backend must receive]
      [['theme=dark', ...ours(), 'sid=abc'].join('; '), 'theme=dark; sid=abc'],
      [[...ours(), 'theme=dark'].join('; '), 'theme=dark'],
      [['theme=dark', ...ours()].join(';'), 'theme=dark'],
      [['a=1', `${session}=${jar.get(session)}`, 'b=gh_ra_x', 'xgh_ra_1=2'].join('; '), 'a=1; b=gh_ra_x; xgh_ra_1=2'],
      [ours().join('; '), undefined],
    ];
    for (const [sent, expected] of cases) {
      const ok = await viaCaddy('GET', host, '/app', { cookie: sent });
      assert.equal(ok.status, 200, `${sent}: ${ok.body}`);
      const seen = JSON.parse(ok.body);
      assert.equal(seen.headers.cookie, expected, sent);
      assert.equal(seen.headers['x-auth-email'], 'owner@example.test');
      assert.doesNotMatch(
        JSON.stringify(seen.headers),
        new RegExp(jar.get(session)!.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')),
        'the session value appears nowhere',
      );
    }
  },
);
