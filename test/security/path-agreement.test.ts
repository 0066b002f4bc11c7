// Security suite: the route-auth paths through the REAL Caddy (bin/caddy, run and
// configured by the sidecar from its own renderer) in front of a route-auth route. Caddy's path matcher
// compares case-insensitively, percent-decoded and cleaned (dot segments, doubled slashes), and forwards
// the path as written; the sidecar must agree on what is a route-auth page. Every mixed-case, encoded
// and dot-segment spelling of a /route-auth/ path either reaches forward auth (302 to the login page),
// is the route-auth page itself, or is refused; none reaches the admin app unauthenticated. The same
// spellings sent straight to the sidecar (as Caddy forwards them) are refused unless exact.
// Everything listens on loopback: peers get addresses in 127.0.0.0/8 (GATEHOUSE_WG_MANAGE=false).
//   node --import tsx --test --test-concurrency=1 test/security/path-agreement.test.ts
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { startTestServer, apiToken, bearer, type TestServer } from '../../sidecar/test/lib/server.js';
import { rawRequest, type RawResponse } from '../../sidecar/test/route-auth-helpers.js';
import { PAGE_PATHS, VERIFY_PATH } from '../../sidecar/src/proxy/fragments/route-auth.js';
import { CADDY, managedCaddyEnv } from '../lib/caddy-env.js';
import { freePort } from '../lib/ports.js';
import { waitFor } from '../lib/wait.js';

const skip = fs.existsSync(CADDY) ? false : `no ${CADDY}: build it with bash scripts/build-caddy.sh`;
const DOMAIN = 'guarded.test';

/** Spellings of /route-auth/ paths as a visitor could send them (the request line, as is). */
const VARIANTS: readonly string[] = [
  // case
  '/ROUTE-AUTH/secret',
  '/Route-Auth/secret',
  '/ROUTE-AUTH/LOGIN',
  '/Route-Auth/Login',
  '/route-auth/LOGIN',
  '/route-auth/Logout',
  '/ROUTE-AUTH/VERIFY',
  '/ROUTE-AUTH/assets/LOGIN.CSS',
  '/route-auth/BRANDING/logo',
  '/ROUTE-AUTH/',
  '/ROUTE-AUTH',
  // percent-encoded
  '/route-auth%2Flogin',
  '/route-auth%2flogin',
  '/%72oute-auth/login',
  '/route-auth/%6Cogin',
  '/route%2Dauth/login',
  '/route-auth%2Fsecret',
  '/%2Froute-auth/login',
  '/route-auth/%2e%2e/api/v1/peers',
  '/route-auth/..%2Fapi/v1/settings',
  '/%52OUTE-AUTH/login',
  '/route-auth%252Flogin',
  // dot segments, doubled slashes, trailing dots
  '/x/../route-auth/login',
  '/./route-auth/login',
  '/route-auth/./login',
  '/route-auth/x/../login',
  '//route-auth/login',
  '/route-auth//login',
  '/x/..%2Froute-auth/login',
  '/route-auth/login/.',
  '/route-auth/login/',
  '/ROUTE-AUTH/x/../LOGIN',
  '/route-auth/../api/v1/settings',
  '/route-auth/login/../../api/v1/settings',
  '/ROUTE-AUTH/../api/v1/peers',
  // under the prefix, not a page
  '/route-auth/secret',
  '/route-auth/',
  '/route-auth',
  '/route-auth/verify',
  '/route-auth/api/v1/peers',
  '/route-auth/login.html',
  '/route-auth/assets/other.css',
  // admin paths themselves, on the protected host
  '/api/v1/settings',
  '/api/v1/peers',
  '/login',
  '/',
];

let s: TestServer;
let ports: { http: number; https: number; admin: number; api: number };
let backendHits: string[] = [];
let backend: http.Server;

before(async () => {
  if (skip) return;
  ports = { http: await freePort(), https: await freePort(), admin: await freePort(), api: await freePort() };
  const octet = 10 + (process.pid % 200);
  s = await startTestServer(
    {
      ...managedCaddyEnv(ports),
      GATEHOUSE_PORT: String(ports.api),
      GATEHOUSE_BIND: '127.0.0.1',
      GATEHOUSE_WG_SUBNET: `127.79.${octet}.0/24`,
      GATEHOUSE_RATE_LIMIT_ADMIN: '100000',
      GATEHOUSE_RATE_LIMIT_LOGIN: '100000',
    },
    { startFeatures: true, listen: true },
  );
  const h = bearer(await apiToken(s));
  const peer = await s.req('/api/v1/peers', { method: 'POST', headers: h, json: { name: 'path-backend' } });
  assert.equal(peer.status, 201, JSON.stringify(peer.data));
  const peerAddr = peer.data.peer.address.split('/')[0] as string;
  backend = http.createServer((req, res) => {
    backendHits.push(req.url ?? '');
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end(`BACKEND ${req.url}`);
  });
  await new Promise<void>((r) => backend.listen(0, peerAddr, () => r()));
  const route = await s.req('/api/v1/routes', {
    method: 'POST',
    headers: h,
    json: { domain: DOMAIN, peer_id: peer.data.peer.id, target_port: (backend.address() as net.AddressInfo).port, https_enabled: false },
  });
  assert.equal(route.status, 201, JSON.stringify(route.data));
  const ra = await s.req(`/api/v1/routes/${route.data.route.id}/auth`, {
    method: 'POST',
    headers: h,
    json: { method: 'email_password', email: 'owner@example.test', password: 'correct horse battery', session_max_age: 3_600_000 },
  });
  assert.equal(ra.status, 200, JSON.stringify(ra.data));
  await waitFor(async () => (await viaCaddy('/x')).status === 302, 20_000, { what: 'Caddy applies the route-auth route' });
});
after(async () => {
  if (skip) return;
  backend?.close();
  await s?.close();
});

const viaCaddy = (p: string, method = 'GET') => rawRequest(ports.http, method, p, { host: `${DOMAIN}:${ports.http}` });
/** As Caddy forwards a route-auth page request: the visitor's path and Host, X-Route-Domain set. */
const toSidecar = (p: string, method = 'GET') =>
  rawRequest(ports.api, method, p, { host: DOMAIN, 'x-route-domain': DOMAIN, 'x-forwarded-proto': 'http', 'x-forwarded-for': '203.0.113.9' });

const isLoginPage = (r: RawResponse) =>
  r.status === 200 && /text\/html/.test(String(r.headers['content-type'])) && r.body.includes('action="/route-auth/login"');
const isStylesheet = (r: RawResponse) => r.status === 200 && /text\/css/.test(String(r.headers['content-type']));
const toLogin = (r: RawResponse) => r.status === 302 && /\/route-auth\/login\?rd=/.test(String(r.headers.location));
/** the sidecar's own refusal of a route-auth spelling (route-auth/http.ts), or Caddy refusing the request line */
const refused = (r: RawResponse) => (r.status === 404 && r.body === 'Not found') || r.status === 400;

function verdict(p: string, r: RawResponse): string {
  if (toLogin(r)) return 'forward auth';
  if (refused(r)) return 'refused';
  if (PAGE_PATHS.includes(p) && (isLoginPage(r) || isStylesheet(r) || r.status === 404)) return 'route-auth page';
  return `ELSE ${r.status} ${String(r.headers.location ?? '')} ${r.body.slice(0, 80).replace(/\s+/g, ' ')}`;
}

test(
  'through real Caddy: every spelling of a /route-auth/ path reaches forward auth, is the route-auth page, or is refused',
  { skip, timeout: 120_000 },
  async () => {
    // the exact pages are served (so the probe is not vacuous)
    assert.ok(isLoginPage(await viaCaddy('/route-auth/login')), 'the login page through Caddy');
    assert.ok(isStylesheet(await viaCaddy('/route-auth/assets/login.css')));
    backendHits = [];
    const wrong: string[] = [];
    for (const p of VARIANTS) {
      for (const method of ['GET', 'POST']) {
        const r = await viaCaddy(p, method);
        const v = verdict(p, r);
        if (v.startsWith('ELSE')) wrong.push(`${method} ${p} -> ${v}`);
      }
    }
    assert.deepEqual(wrong, [], 'answers that are neither forward auth, the route-auth page nor a refusal');
    assert.deepEqual(backendHits, [], 'no request reached the backend without a session');
  },
);

test(
  'straight to the sidecar as Caddy forwards them: only the exact spellings are route-auth pages, the rest is refused, none reaches the admin app',
  { skip },
  async () => {
    const wrong: string[] = [];
    for (const p of VARIANTS) {
      // the spellings Caddy's matcher would take for a /route-auth/ path (decoded, lower case, cleaned), but not the exact pages nor the verify endpoint
      const cleaned = path.posix.normalize(decodeURIComponent(decodeURIComponent(p)).toLowerCase());
      if (PAGE_PATHS.includes(p) || p === VERIFY_PATH || !(cleaned === '/route-auth' || cleaned.startsWith('/route-auth/'))) continue;
      for (const method of ['GET', 'POST']) {
        const r = await toSidecar(p, method);
        if (!refused(r) || r.status !== 404) wrong.push(`${method} ${p} -> ${r.status} ${String(r.headers.location ?? '')} ${r.body.slice(0, 60)}`);
      }
    }
    assert.deepEqual(wrong, [], 'spellings under /route-auth/ the sidecar did not refuse');
    for (const p of PAGE_PATHS.filter((x) => x !== '/route-auth/branding/logo' && x !== '/route-auth/branding/bg-image')) {
      const r = await toSidecar(p);
      // the share-link page without a link: its own page saying the link is unknown (404, HTML), not the refusal of other spellings
      if (p === '/route-auth/share')
        assert.ok(
          r.status === 404 && /text\/html/.test(String(r.headers['content-type'])) && r.body !== 'Not found',
          `${p}: ${r.status} ${r.body.slice(0, 80)}`,
        );
      // method oidc's start and callback on a route of another method, or without a flow: their own page saying so (HTML), not the refusal of other spellings
      else if (p.startsWith('/route-auth/oidc/'))
        assert.ok(
          [404, 422].includes(r.status) && /text\/html/.test(String(r.headers['content-type'])) && r.body !== 'Not found',
          `${p}: ${r.status} ${r.body.slice(0, 80)}`,
        );
      else assert.ok(isLoginPage(r) || isStylesheet(r) || r.status === 200, `${p}: ${r.status}`);
    }
  },
);
