// End to end, as root: route auth's method oidc through the real custom Caddy (bin/caddy, on
// 127.0.0.1) and a real WireGuard tunnel to the backend (an HTTP server echoing the request as JSON,
// in a peer namespace), with a real OpenID Provider (npm oidc-provider on loopback: two people in
// two groups). A visitor is sent to the login page, follows "Sign in with <provider>", signs in at
// the provider and comes back through the callback on the route's own host; the backend then sees
// X-Auth-User / X-Auth-Email / X-Auth-Groups from verify (the visitor's own copies replaced) and no
// gh_ra_ cookie (the visitor's other cookies kept). A person outside the allowed group and address
// gets the 403 page and never reaches the backend.
//   cd /work/main && node --import tsx --test test/e2e/route-oidc.test.ts
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import { skipReason } from '../lib/netns.js';
import { waitFor } from '../lib/wait.js';
import { CADDY, startE2e } from '../lib/e2e-server.js';
import { startIdp, throughIdp, ProviderJar } from '../../sidecar/test/lib/oidc-idp.js';

const reason = skipReason(['wireguard-go', 'wg', 'ping']) ?? (fs.existsSync(CADDY) ? null : `no ${CADDY}: build it with bash scripts/build-caddy.sh`);

interface Res {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A browser of one domain served by Caddy on 127.0.0.1:port (a cookie jar, no redirects followed). */
class Visitor {
  cookies = new Map<string, string>();
  constructor(
    private port: number,
    private domain: string,
  ) {}

  get(p: string, headers: Record<string, string> = {}): Promise<Res> {
    const h: Record<string, string> = { host: `${this.domain}:${this.port}`, 'accept-language': 'en', ...headers };
    const jar = [...this.cookies].map(([k, v]) => `${k}=${v}`);
    if (jar.length || h.cookie) h.cookie = [h.cookie, ...jar].filter(Boolean).join('; ');
    return new Promise((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port: this.port, path: p, headers: h, agent: false }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          for (const line of res.headers['set-cookie'] ?? []) {
            const [pair, ...attrs] = line.split(';').map((x) => x.trim());
            const eq = pair.indexOf('=');
            if (!pair.slice(eq + 1) || attrs.some((a) => /^max-age=0$/i.test(a))) this.cookies.delete(pair.slice(0, eq));
            else this.cookies.set(pair.slice(0, eq), pair.slice(eq + 1));
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') });
        });
      });
      req.setTimeout(10_000, () => req.destroy(new Error(`timeout ${this.domain}${p}`)));
      req.on('error', reject);
      req.end();
    });
  }
}

/** path + query of a redirect's Location */
const target = (r: Res) => {
  const u = new URL(r.headers.location!, 'http://x');
  return u.pathname + u.search;
};

test('route auth through an OpenID Provider, through the real Caddy', { skip: reason ?? false, timeout: 120_000 }, async (t) => {
  const run = await startE2e(t, {
    prefix: 'roidc',
    iface: `gho${process.pid % 1000}`,
    vpnOctet: 237,
    peers: [{ name: 'po', octet: 238 }],
    proxyBind: '127.0.0.1',
    env: { GATEHOUSE_RATE_LIMIT_LOGIN: '100000' },
    start: { listen: true },
  });
  const { network, api, ports, serverIp } = run;
  const [ns] = run.ns;
  const peer = (await api('/peers', 'POST', { name: 'e2e-oidc' })).data.peer;
  await network.bringUpPeer(ns, network.ifName('o'), (await api(`/peers/${peer.id}/config`)).data as string);
  await waitFor(async () => (await network.ping(ns, serverIp, { count: 1, timeoutS: 1 })).ok, 20_000, { what: 'the tunnel' });
  const ip = peer.address.split('/')[0];
  await network.startHttpServer(ns, ip, 8080, { name: 'backend' });

  const domain = 'sso.test';
  const callback = `http://${domain}:${ports.http}/route-auth/oidc/callback`;
  const idp = await startIdp({
    clients: [{ client_id: 'gh-e2e', client_secret: 'e2e-client-secret-5d1e', redirect_uris: [callback] }],
    users: {
      alice: { email: 'alice@example.test', email_verified: true, groups: ['ops'] },
      eve: { email: 'eve@example.test', email_verified: true, groups: ['guests'] },
    },
  });
  t.after(() => idp.close());
  const provider = await api('/auth/oidc/providers', 'POST', {
    name: 'Corp ID',
    issuer: idp.issuer,
    client_id: 'gh-e2e',
    client_secret: 'e2e-client-secret-5d1e',
    scopes: ['openid', 'profile', 'email', 'groups'],
    allow_private: true,
  });
  assert.equal(provider.status, 201, JSON.stringify(provider.data));
  const route = await api('/routes', 'POST', { domain, peer_id: peer.id, target_port: 8080 });
  assert.equal(route.status, 201, JSON.stringify(route.data));
  const routeId = route.data.route.id as number;
  const saved = await api(`/routes/${routeId}/auth`, 'POST', {
    method: 'oidc',
    email: 'owner@example.test',
    session_max_age: 3_600_000,
    oidc_provider_id: provider.data.provider.id,
    allowed_groups: ['ops'],
    allowed_emails: ['someone@example.test'],
  });
  assert.equal(saved.status, 200, JSON.stringify(saved.data));
  assert.deepEqual((await api(`/auth/oidc/providers/${provider.data.provider.id}`)).data.provider.route_redirect_uris, [
    `http://${domain}/route-auth/oidc/callback`,
  ]);

  /** From the protected page to the provider and back; the answer to the callback. */
  const signIn = async (v: Visitor, user: string): Promise<Res> => {
    const first = await waitFor(
      async () => {
        const r = await v.get('/docs/page?x=1');
        if (r.status !== 302) throw new Error(`not protected yet: ${r.status}`);
        return r;
      },
      15_000,
      { what: 'the route behind route auth' },
    );
    const loginUrl = target(first);
    assert.match(loginUrl, /^\/route-auth\/login\?rd=/);
    const page = await v.get(loginUrl);
    assert.equal(page.status, 200);
    const start = /<a class="button" href="([^"]+)"[^>]*>Sign in with Corp ID<\/a>/.exec(page.body);
    assert.ok(start, page.body.slice(0, 500));
    const toIdp = await v.get(start[1].replaceAll('&amp;', '&'));
    assert.equal(toIdp.status, 302, toIdp.body.slice(0, 300));
    const back = await throughIdp(idp, new ProviderJar(), toIdp.headers.location!, user);
    assert.equal(`${back.origin}${back.pathname}`, callback, "back on the route's host");
    return v.get(back.pathname + back.search);
  };

  const alice = new Visitor(ports.http, domain);
  const done = await signIn(alice, 'alice');
  assert.equal(done.status, 302, done.body.slice(0, 300));
  assert.equal(target(done), '/docs/page?x=1');
  assert.ok(alice.cookies.has(`gh_ra_${routeId}`), 'session cookie on the route host');
  const page = await alice.get('/docs/page?x=1', { 'x-auth-user': 'root', 'x-auth-groups': 'admins', cookie: 'theme=dark' });
  assert.equal(page.status, 200, page.body.slice(0, 300));
  const echoed = JSON.parse(page.body) as { server: string; headers: Record<string, string> };
  assert.equal(echoed.server, 'backend');
  assert.equal(echoed.headers['x-auth-user'], 'alice');
  assert.equal(echoed.headers['x-auth-email'], 'alice@example.test');
  assert.equal(echoed.headers['x-auth-groups'], 'ops', "from verify, the visitor's own replaced");
  assert.equal(echoed.headers['x-auth-method'], 'oidc');
  assert.equal(echoed.headers.cookie, 'theme=dark', 'no gh_ra_ cookie reaches the backend, the others do');

  const eve = new Visitor(ports.http, domain);
  const refused = await signIn(eve, 'eve');
  assert.equal(refused.status, 403);
  assert.match(refused.body, /not allowed on this site/);
  assert.ok(refused.body.includes('eve@example.test'));
  assert.equal(eve.cookies.has(`gh_ra_${routeId}`), false);
  const still = await eve.get('/docs/page?x=1');
  assert.equal(still.status, 302, 'never reaches the backend');
});
