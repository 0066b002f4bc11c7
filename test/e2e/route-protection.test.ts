// End to end, as root: route protection through the real custom Caddy (bin/caddy) and a real
// WireGuard tunnel. The sidecar runs with GATEHOUSE_WG_MANAGE=true and GATEHOUSE_MANAGE_CADDY=true in
// the host namespace (own interface, subnet and ports); Caddy listens on the server's tunnel address
// only, so the peers reach it through the tunnel with their tunnel addresses as source. Two peer
// namespaces A and B; A runs the backend (an HTTP server echoing the request as JSON).
// - route auth (email_password): a cookie-jar client gets 302 to the login page, posts the form,
//   reaches the backend (with X-Auth-Email set by verify), logs out and gets 302 again; a second
//   device's session survives the first one's logout; five wrong passwords lock the login and the
//   right one is refused until an admin unlocks;
// - route auth (totp): codes computed from the secret returned by totp-setup;
// - share links: a link opens the route without signing in, only under its path prefix; used up after
//   max_uses and revoked it shows the page that says so; the backend's request log never holds a token;
// - basic auth on an HTTPS route (Caddy's internal CA): 401 + WWW-Authenticate, 200, 401; a share
//   link on it skips the prompt under its prefix only, and a forged or revoked session gets the prompt;
// - peer ACL and IP filter (whitelist, then blacklist): allowed from A, 403 from B;
// - rate limit: 429 on the (N+1)th request.
//   cd /work/main && node --import tsx --test test/e2e/route-protection.test.ts
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import speakeasy from 'speakeasy';
import { startSmtp, codeFromMail } from '../../sidecar/test/route-auth-helpers.js';
import { skipReason } from '../lib/netns.js';
import { waitFor } from '../lib/wait.js';
import { CADDY, startE2e, tunnelPeers } from '../lib/e2e-server.js';

const reason = skipReason(['wireguard-go', 'wg', 'ping']) ?? (fs.existsSync(CADDY) ? null : `no ${CADDY}: build it with bash scripts/build-caddy.sh`);

interface Res {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A browser-like client of one domain served by Caddy at addr:port (cookie jar, no redirects followed). */
class Client {
  cookies = new Map<string, string>();
  constructor(
    private addr: string,
    private port: number,
    public domain: string,
    private tls = false,
  ) {}

  request(method: string, p: string, opts: { form?: Record<string, string>; headers?: Record<string, string> } = {}): Promise<Res> {
    const body = opts.form ? new URLSearchParams(opts.form).toString() : undefined;
    const headers: Record<string, string> = { host: this.tls ? this.domain : `${this.domain}:${this.port}`, 'accept-language': 'en', ...opts.headers };
    if (this.cookies.size) headers.cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    if (body !== undefined) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      headers['content-length'] = String(Buffer.byteLength(body));
    }
    return new Promise((resolve, reject) => {
      const o = { host: this.addr, port: this.port, method, path: p, headers, agent: false as const };
      const done = (res: http.IncomingMessage) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          for (const line of res.headers['set-cookie'] ?? []) {
            const [pair, ...attrs] = line.split(';').map((x) => x.trim());
            const eq = pair.indexOf('=');
            const expired = attrs.some((a) => /^max-age=0$/i.test(a) || (/^expires=/i.test(a) && Date.parse(a.slice(8)) < Date.now()));
            if (!pair.slice(eq + 1) || expired) this.cookies.delete(pair.slice(0, eq));
            else this.cookies.set(pair.slice(0, eq), pair.slice(eq + 1));
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') });
        });
      };
      const req = this.tls ? https.request({ ...o, servername: this.domain, rejectUnauthorized: false }, done) : http.request(o, done);
      req.setTimeout(8000, () => req.destroy(new Error(`timeout ${method} ${this.domain}${p}`)));
      req.on('error', reject);
      if (body !== undefined) req.write(body);
      req.end();
    });
  }

  get = (p: string, headers?: Record<string, string>) => this.request('GET', p, { headers });

  /** path + query of a redirect's Location */
  static target(res: Res): string {
    const u = new URL(res.headers.location!, 'http://x');
    return u.pathname + u.search;
  }

  static csrf(html: string): string {
    const m = /name="_csrf" value="([^"]+)"/.exec(html);
    if (!m) throw new Error(`no CSRF field in page:\n${html.slice(0, 500)}`);
    return m[1];
  }

  /** Visits `p`, expects 302 to the login page, posts one login step there; returns the answer to the post. */
  async login(p: string, step: string, fields: Record<string, string>): Promise<Res> {
    const first = await this.get(p);
    assert.equal(first.status, 302, `${this.domain}${p} without a session: ${first.status} ${first.body.slice(0, 200)}`);
    const loginUrl = Client.target(first);
    assert.match(loginUrl, /^\/route-auth\/login\?rd=/);
    const rd = new URL(loginUrl, 'http://x').searchParams.get('rd')!;
    assert.equal(new URL(rd).pathname + new URL(rd).search, p, 'the original URL is kept for the return');
    const page = await this.get(loginUrl);
    assert.equal(page.status, 200, page.body.slice(0, 300));
    return this.request('POST', '/route-auth/login', { form: { _csrf: Client.csrf(page.body), rd, step, ...fields } });
  }

  async logout(): Promise<Res> {
    const page = await this.get('/route-auth/logout');
    return this.request('POST', '/route-auth/logout', { form: { _csrf: Client.csrf(page.body) } });
  }
}

test('route protection through the real Caddy and a real WireGuard tunnel', { skip: reason ?? false, timeout: 300_000 }, async (t) => {
  // Caddy on the server's tunnel address: the peers reach it through the tunnel.
  const run = await startE2e(t, {
    prefix: 'rprot',
    iface: `ghp${process.pid % 1000}`,
    vpnOctet: 234,
    peers: [
      { name: 'pa', octet: 235 },
      { name: 'pb', octet: 236 },
    ],
    proxyBind: 'serverIp',
    env: { GATEHOUSE_TLS: 'internal', GATEHOUSE_RATE_LIMIT_LOGIN: '100000' },
    // listen: Caddy forwards /route-auth/* and the verify subrequests to GATEHOUSE_PORT.
    start: { listen: true },
  });
  const { network, api, ports, serverIp } = run;
  const [nsA, nsB] = run.ns;

  // ---- two peers, each from its own namespace through the tunnel
  const [peerA, peerB] = await tunnelPeers(run, ['e2e-prot-a', 'e2e-prot-b']);
  const ipA = peerA.address.split('/')[0];
  const ipB = peerB.address.split('/')[0];
  await network.startHttpServer(nsA, ipA, 8080, { name: 'backend' });
  const target = { peer_id: peerA.id, target_port: 8080 };
  const fromPeer = async (ns: string, domain: string) =>
    (await network.httpGet(ns, `http://${serverIp}:${ports.http}/x`, { headers: { host: `${domain}:${ports.http}` } })).status;
  const created = async (body: Record<string, unknown>) => {
    const r = await api('/routes', 'POST', { ...target, ...body });
    assert.equal(r.status, 201, JSON.stringify(r.data));
    return r.data.route;
  };
  const withAuth = async (routeId: number, body: Record<string, unknown>) => {
    const r = await api(`/routes/${routeId}/auth`, 'POST', { email: 'owner@example.test', session_max_age: 3_600_000, ...body });
    assert.ok(r.status === 200 || r.status === 201, JSON.stringify(r.data));
  };
  const PASSWORD = 'correct horse battery';

  // Every route is created up front, then the traffic checks run.
  const ra = await created({ domain: 'ra.test' });
  await withAuth(ra.id, { method: 'email_password', password: PASSWORD });
  const tr = await created({ domain: 'totp.test' });
  await withAuth(tr.id, { method: 'totp' });
  const setup = await api(`/routes/${tr.id}/auth/totp-setup`, 'POST');
  assert.equal(setup.status, 200, JSON.stringify(setup.data));
  const secret = setup.data.secret as string;
  const code = (steps: number) => speakeasy.totp({ secret, encoding: 'base32', time: Math.floor(Date.now() / 1000) + steps * 30 });
  assert.equal((await api(`/routes/${tr.id}/auth/totp-verify`, 'POST', { token: code(0) })).status, 200);
  const ba = await created({ domain: 'basic.test', https_enabled: true, basic_auth_user: 'alice', basic_auth_password: 'alice-pass' });
  assert.equal((await api(`/routes/${ba.id}`, 'PUT', { https_enabled: false })).status, 422, 'basic auth keeps HTTPS on (a combination refused)');
  await created({ domain: 'acl.test', acl_enabled: true, acl_peer_ids: [peerA.id] });
  await created({ domain: 'white.test', ip_filter_enabled: true, ip_filter_mode: 'whitelist', ip_filter_rules: [ipA] });
  await created({ domain: 'black.test', ip_filter_enabled: true, ip_filter_mode: 'blacklist', ip_filter_rules: [{ value: ipA, note: 'peer A' }] });
  await created({
    domain: 'black24.test',
    ip_filter_enabled: true,
    ip_filter_mode: 'blacklist',
    ip_filter_rules: [`${ipB.split('.').slice(0, 3).join('.')}.0/24`],
  });
  await created({ domain: 'rl.test', rate_limit_enabled: true, rate_limit_requests: 3, rate_limit_window: '1m' });
  // email code and two-factor (password + email code), mailed through a real SMTP server on loopback
  const smtp = await startSmtp();
  t.after(() => smtp.close());
  const smtpPut = await api('/smtp', 'PUT', { host: '127.0.0.1', port: smtp.port, secure: false, from: 'Gatehouse <gatehouse@example.test>' });
  assert.equal(smtpPut.status, 200, JSON.stringify(smtpPut.data));
  const ec = await created({ domain: 'code.test' });
  await withAuth(ec.id, { method: 'email_code' });
  const tf = await created({ domain: 'twofa.test' });
  await withAuth(tf.id, { method: 'email_password', password: PASSWORD, two_factor_enabled: true, two_factor_method: 'email_code' });

  // ---- route auth, email_password
  const one = new Client(serverIp, ports.http, 'ra.test');
  const wrong = await one.login('/page?x=1', 'password', { email: 'owner@example.test', password: 'not the password' });
  assert.equal(wrong.status, 401);
  const ok = await one.login('/page?x=1', 'password', { email: 'owner@example.test', password: PASSWORD });
  assert.equal(ok.status, 303, ok.body.slice(0, 300));
  assert.equal(Client.target(ok), '/page?x=1');
  assert.ok(one.cookies.has(`gh_ra_${ra.id}`), 'session cookie');
  const page = await one.get('/page?x=1', { 'x-auth-email': 'intruder@evil.test' });
  assert.equal(page.status, 200, page.body.slice(0, 300));
  const echoed = JSON.parse(page.body);
  assert.equal(echoed.server, 'backend');
  assert.equal(echoed.url, '/page?x=1');
  assert.equal(echoed.headers['x-auth-email'], 'owner@example.test', 'identity from verify, the visitor’s header replaced');
  // a second device
  const two = new Client(serverIp, ports.http, 'ra.test');
  assert.equal((await two.login('/', 'password', { email: 'owner@example.test', password: PASSWORD })).status, 303);
  assert.equal((await two.get('/')).status, 200);
  // logout of the first device: it gets 302 again, the second one keeps its session
  const out = await one.logout();
  assert.ok(out.status === 303 || out.status === 302 || out.status === 200, `logout: ${out.status}`);
  const after = await one.get('/page?x=1');
  assert.equal(after.status, 302);
  assert.match(Client.target(after), /^\/route-auth\/login\?rd=/);
  assert.equal((await two.get('/')).status, 200, 'the second device survives');

  // ---- share links (ra.test): open the route without signing in, only under the prefix; used up after
  // max_uses, revoked: the explaining page; the backend never sees the token
  const shared = await api(`/routes/${ra.id}/share-links`, 'POST', { expires_at: Date.now() + 3_600_000, max_uses: 2, path_prefix: '/shared' });
  assert.equal(shared.status, 201, JSON.stringify(shared.data));
  const shareUrl = new URL(shared.data.url as string);
  const shareToken = shareUrl.searchParams.get('t')!;
  const sharePath = shareUrl.pathname + shareUrl.search;
  const guest = new Client(serverIp, ports.http, 'ra.test');
  const opened = await guest.get(sharePath);
  assert.equal(opened.status, 303, opened.body.slice(0, 300));
  assert.equal(opened.headers.location, '/shared', 'the token leaves the URL by a redirect');
  assert.equal(opened.headers['referrer-policy'], 'no-referrer');
  const sharedPage = await guest.get('/shared/doc?x=1');
  assert.equal(sharedPage.status, 200, sharedPage.body.slice(0, 300));
  assert.equal(JSON.parse(sharedPage.body).url, '/shared/doc?x=1');
  assert.equal(JSON.parse(sharedPage.body).headers['x-auth-method'], 'share_link');
  for (const outside of ['/', '/private', '/shared/../private', '/shared/%2e%2e/private', '/sharedx']) {
    const o = await guest.get(outside);
    assert.equal(o.status, 302, `${outside} is outside the prefix: ${o.status} ${o.body.slice(0, 200)}`);
    assert.match(Client.target(o), /^\/route-auth\/login\?rd=/);
  }
  assert.equal((await new Client(serverIp, ports.http, 'ra.test').get(sharePath)).status, 303, 'the second use');
  const usedUp = await new Client(serverIp, ports.http, 'ra.test').get(sharePath);
  assert.equal(usedUp.status, 410);
  assert.match(usedUp.body, /used as many times as it allows/);
  assert.doesNotMatch(usedUp.body, /name="password"/, 'not the login form');
  const whole = await api(`/routes/${ra.id}/share-links`, 'POST', { expires_at: Date.now() + 3_600_000 });
  const wholeUrl = new URL(whole.data.url as string);
  const wholePath = wholeUrl.pathname + wholeUrl.search;
  const guest2 = new Client(serverIp, ports.http, 'ra.test');
  assert.equal((await guest2.get(wholePath)).status, 303);
  assert.equal((await guest2.get('/anything')).status, 200, 'a link without a prefix opens the whole route');
  assert.equal((await api(`/routes/${ra.id}/share-links/${whole.data.share_link.id}`, 'DELETE')).status, 200);
  assert.equal((await guest2.get('/anything')).status, 302, 'revoking ended its session');
  const revoked = await new Client(serverIp, ports.http, 'ra.test').get(wholePath);
  assert.equal(revoked.status, 410);
  assert.match(revoked.body, /was revoked/);
  const listedLinks = (await api(`/routes/${ra.id}/share-links`)).data.share_links;
  assert.deepEqual(
    listedLinks.map((l) => [l.state, l.uses]),
    [
      ['revoked', 1],
      ['used_up', 2],
    ],
  );
  const backendLog = await network.httpGet(nsA, `http://${ipA}:8080/__ctl`);
  assert.equal(backendLog.status, 200);
  assert.ok(backendLog.body.includes('/shared/doc'), 'the backend log holds the shared requests');
  for (const secretToken of [shareToken, wholeUrl.searchParams.get('t')!])
    assert.ok(!backendLog.body.includes(secretToken) && !backendLog.body.includes(secretToken.slice(6)), 'the backend never saw a share token');

  // ---- lockout: five wrong passwords, the right one refused until unlock
  const locker = new Client(serverIp, ports.http, 'ra.test');
  const statuses: number[] = [];
  for (let i = 0; i < 5; i++) statuses.push((await locker.login('/', 'password', { email: 'owner@example.test', password: `wrong-${i}-password` })).status);
  assert.deepEqual(statuses, [401, 401, 401, 401, 423]);
  assert.equal((await locker.login('/', 'password', { email: 'owner@example.test', password: PASSWORD })).status, 423, 'locked');
  const un = await api('/users/unlock', 'POST', { record_type: 'route_auth', username: `${ra.id}:owner@example.test` });
  assert.equal(un.status, 200, JSON.stringify(un.data));
  assert.equal((await locker.login('/', 'password', { email: 'owner@example.test', password: PASSWORD })).status, 303);
  assert.equal((await locker.get('/')).status, 200);

  // ---- route auth, totp (activated above with code(0), which is used up now)
  const tc = new Client(serverIp, ports.http, 'totp.test');
  const window = new Set([-2, -1, 0, 1, 2].map(code));
  let bad = Number(code(0));
  do bad = (bad + 1) % 1_000_000;
  while (window.has(String(bad).padStart(6, '0')));
  assert.equal((await tc.login('/t', 'totp', { code: String(bad).padStart(6, '0') })).status, 401, 'a code outside the window');
  const tok = await tc.login('/t', 'totp', { code: code(1) }); // code(0) was used by totp-verify (single use); +1 step is in the window
  assert.equal(tok.status, 303, tok.body.slice(0, 300));
  assert.equal(JSON.parse((await tc.get('/t')).body).url, '/t');
  await tc.logout();
  assert.equal((await tc.get('/t')).status, 302);

  // ---- route auth, email code: the code is read from the mail the SMTP server received
  /** Posts the `code` step on the login page a previous step redirected to. */
  const codeStep = async (c: Client, prev: Res, code: string) => {
    const loginUrl = Client.target(prev);
    const rd = new URL(loginUrl, 'http://x').searchParams.get('rd')!;
    const form = await c.get(loginUrl);
    assert.equal(form.status, 200, form.body.slice(0, 300));
    return c.request('POST', '/route-auth/login', { form: { _csrf: Client.csrf(form.body), rd, step: 'code', code } });
  };
  const ecc = new Client(serverIp, ports.http, 'code.test');
  const mails0 = smtp.mails.length;
  const sent = await ecc.login('/c?y=2', 'send_code', { email: 'owner@example.test' });
  assert.equal(sent.status, 303, sent.body.slice(0, 300));
  const mailCode = codeFromMail(await smtp.waitFor(mails0 + 1));
  assert.equal((await codeStep(ecc, sent, String((Number(mailCode) + 1) % 1_000_000).padStart(6, '0'))).status, 401, 'a wrong code');
  const codeOk = await codeStep(ecc, sent, mailCode);
  assert.equal(codeOk.status, 303, codeOk.body.slice(0, 300));
  const codePage = await ecc.get('/c?y=2');
  assert.equal(codePage.status, 200);
  assert.equal(JSON.parse(codePage.body).headers['x-auth-email'], 'owner@example.test');

  // ---- two-factor: password, then the emailed code
  const tfc = new Client(serverIp, ports.http, 'twofa.test');
  const mails1 = smtp.mails.length;
  const first = await tfc.login('/f', 'password', { email: 'owner@example.test', password: PASSWORD });
  assert.equal(first.status, 303, first.body.slice(0, 300));
  assert.equal((await tfc.get('/f')).status, 302, 'the password alone does not pass');
  const secondCode = codeFromMail(await smtp.waitFor(mails1 + 1));
  const both = await codeStep(tfc, first, secondCode);
  assert.equal(both.status, 303, both.body.slice(0, 300));
  const tfPage = await tfc.get('/f');
  assert.equal(tfPage.status, 200);
  assert.equal(JSON.parse(tfPage.body).url, '/f');

  // ---- basic auth on an HTTPS route (Caddy's internal CA)
  const bc = new Client(serverIp, ports.https, 'basic.test', true);
  const none = await waitFor(async () => bc.get('/b').catch(() => null), 15_000, { what: 'HTTPS with a certificate from Caddy’s internal CA' });
  assert.equal(none.status, 401);
  assert.match(String(none.headers['www-authenticate']), /^Basic/);
  const basic = (u: string, p: string) => ({ authorization: `Basic ${Buffer.from(`${u}:${p}`).toString('base64')}` });
  const good = await bc.get('/b', basic('alice', 'alice-pass'));
  assert.equal(good.status, 200);
  assert.equal(JSON.parse(good.body).url, '/b');
  assert.equal((await bc.get('/b', basic('alice', 'wrong-pass'))).status, 401);
  assert.equal((await bc.get('/b', basic('bob', 'alice-pass'))).status, 401);

  // ---- a share link on the basic-auth route: no prompt under its prefix, the basic auth elsewhere;
  // a forged or revoked session cookie falls back to the prompt; the backend gets no gh_ra_ cookie
  const bl = await api(`/routes/${ba.id}/share-links`, 'POST', { expires_at: Date.now() + 3_600_000, max_uses: 1, path_prefix: '/s' });
  assert.equal(bl.status, 201, JSON.stringify(bl.data));
  const blUrl = new URL(bl.data.url as string);
  assert.equal(blUrl.protocol, 'https:');
  const blPath = blUrl.pathname + blUrl.search;
  const bguest = new Client(serverIp, ports.https, 'basic.test', true);
  const bopen = await bguest.get(blPath);
  assert.equal(bopen.status, 303, bopen.body.slice(0, 300));
  assert.equal(bopen.headers.location, '/s');
  bguest.cookies.set('theme', 'dark');
  const inside = await bguest.get('/s/x');
  assert.equal(inside.status, 200, inside.body.slice(0, 300));
  const seen = JSON.parse(inside.body) as { url: string; headers: Record<string, string> };
  assert.equal(seen.url, '/s/x');
  assert.equal(seen.headers['x-auth-method'], 'share_link');
  assert.equal(seen.headers.cookie, 'theme=dark', 'the backend keeps its own cookies and never gets the session');
  const outside = await bguest.get('/b');
  assert.equal(outside.status, 401, 'outside the prefix the basic auth asks');
  assert.match(String(outside.headers['www-authenticate']), /^Basic/);
  assert.equal((await bguest.get('/b', basic('alice', 'alice-pass'))).status, 200, 'the password still works beside the session');
  const forged = new Client(serverIp, ports.https, 'basic.test', true);
  forged.cookies.set(`gh_ra_${ba.id}`, 'a'.repeat(43));
  assert.equal((await forged.get('/s/x', { 'x-auth-user': 'mallory' })).status, 401, 'an unknown session: the prompt');
  const again = await new Client(serverIp, ports.https, 'basic.test', true).get(blPath);
  assert.equal(again.status, 410, 'used up');
  assert.doesNotMatch(again.body, /route-auth\/login|name="password"/, 'a basic-auth route has no login page to offer');
  assert.equal((await api(`/routes/${ba.id}/share-links/${bl.data.share_link.id}`, 'DELETE')).status, 200);
  assert.equal((await bguest.get('/s/x')).status, 401, 'revoking ended the session: the prompt again');

  // ---- peer ACL: A allowed, B (and the host itself) refused
  assert.equal(await fromPeer(nsA, 'acl.test'), 200);
  assert.equal(await fromPeer(nsB, 'acl.test'), 403);
  assert.equal((await new Client(serverIp, ports.http, 'acl.test').get('/')).status, 403);

  // ---- IP filter: whitelist A, blacklist A, blacklist the tunnel /24 (A and B)
  assert.equal(await fromPeer(nsA, 'white.test'), 200);
  assert.equal(await fromPeer(nsB, 'white.test'), 403);
  assert.equal(await fromPeer(nsA, 'black.test'), 403);
  assert.equal(await fromPeer(nsB, 'black.test'), 200);
  assert.equal(await fromPeer(nsA, 'black24.test'), 403, 'a CIDR rule');
  assert.equal(await fromPeer(nsB, 'black24.test'), 403);

  // ---- rate limit: 3 per minute per client address, the 4th gets 429; another client is not counted
  const rl: number[] = [];
  for (let i = 0; i < 5; i++) rl.push(await fromPeer(nsA, 'rl.test'));
  assert.deepEqual(rl, [200, 200, 200, 429, 429]);
  assert.equal(await fromPeer(nsB, 'rl.test'), 200, 'per client address');
});
