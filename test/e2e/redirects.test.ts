// End to end, as root, through the real custom Caddy (bin/caddy): redirect hosts and the default
// site. The sidecar runs with GATEHOUSE_MANAGE_CADDY=true (Caddy on 127.0.0.1, internal TLS). A
// redirect host answers on HTTP and HTTPS with its status code and Location (the request's path and
// query appended, or not); a host name nothing serves gets the default site on HTTP: Gatehouse's
// 404 page, then the admin's own HTML (its `{…}` sent as written), then a redirect. On HTTPS such a
// name gets no certificate: the TLS handshake fails before any HTTP answer.
//   cd /work/main && node --import tsx --test test/e2e/redirects.test.ts
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import tls from 'node:tls';
import { skipReason } from '../lib/netns.js';
import { CADDY, startE2e } from '../lib/e2e-server.js';

const reason = skipReason(['wireguard-go', 'wg']) ?? (fs.existsSync(CADDY) ? null : `no ${CADDY}: build it with bash scripts/build-caddy.sh`);

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** One request to Caddy on 127.0.0.1 with this Host (and SNI over TLS). */
function get(scheme: 'http' | 'https', port: number, host: string, path = '/', headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const opts = { host: '127.0.0.1', port, path, headers: { host, ...headers }, agent: false, servername: host, rejectUnauthorized: false };
    const req = (scheme === 'https' ? https : http).request(opts, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.setTimeout(15_000, () => req.destroy(new Error(`timeout ${host}`)));
    req.on('error', reject);
    req.end();
  });
}

/** A TLS handshake with this SNI: whether it completed. */
function handshake(port: number, servername: string): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = tls.connect({ host: '127.0.0.1', port, servername, rejectUnauthorized: false });
    const timer = setTimeout(() => done(false), 8000);
    const done = (ok: boolean) => {
      clearTimeout(timer);
      sock.destroy();
      resolve(ok);
    };
    sock.on('secureConnect', () => done(true));
    sock.on('error', () => done(false));
  });
}

test('redirect hosts and the default site through the real Caddy', { skip: reason ?? false, timeout: 180_000 }, async (t) => {
  const run = await startE2e(t, {
    prefix: 'redir',
    iface: `ghd${process.pid % 1000}`,
    vpnOctet: 236,
    peers: [{ name: 'peer', octet: 237 }],
    proxyBind: '127.0.0.1',
    env: { GATEHOUSE_TLS: 'internal' },
  });
  const { api, ports } = run;

  // ---- a redirect host keeping the path and query: 301 on both ports
  const rh = await api('/redirect-hosts', 'POST', { domain: 'old.redir.test', target_url: 'https://new.example.org/base/' });
  assert.equal(rh.status, 201, JSON.stringify(rh.data));
  const plain = await get('http', ports.http, 'old.redir.test', '/a/b?x=1&y=2');
  assert.equal(plain.status, 301);
  assert.equal(plain.headers.location, 'https://new.example.org/base/a/b?x=1&y=2');
  const secure = await get('https', ports.https, 'old.redir.test', '/p?q=1');
  assert.equal(secure.status, 301, 'served over HTTPS with a certificate of the internal CA');
  assert.equal(secure.headers.location, 'https://new.example.org/base/p?q=1');

  // ---- changed to a 308 to a fixed URL: every path goes there as it is
  const upd = await api(`/redirect-hosts/${rh.data.redirect_host.id}`, 'PUT', {
    status_code: 308,
    preserve_path: false,
    target_url: 'https://new.example.org/landing',
  });
  assert.equal(upd.status, 200, JSON.stringify(upd.data));
  const fixed = await get('http', ports.http, 'old.redir.test', '/anything?z=9');
  assert.equal(fixed.status, 308);
  assert.equal(fixed.headers.location, 'https://new.example.org/landing');

  // ---- disabled: the host name is unknown again
  await api(`/redirect-hosts/${rh.data.redirect_host.id}`, 'PUT', { enabled: false });
  assert.equal((await get('http', ports.http, 'old.redir.test')).status, 404);

  // ---- the default site: Gatehouse's 404 page (German by Accept-Language)
  const unknown = await get('http', ports.http, 'nobody.redir.test', '/x');
  assert.equal(unknown.status, 404);
  assert.match(String(unknown.headers['content-type']), /^text\/html/);
  assert.match(unknown.body, /Page not found/);
  assert.match((await get('http', ports.http, 'nobody.redir.test', '/', { 'accept-language': 'de-DE' })).body, /Seite nicht gefunden/);
  // on HTTPS an unknown name gets no certificate: no HTTP answer at all
  assert.equal(await handshake(ports.https, 'nobody.redir.test'), false, 'no certificate for a name nothing serves');
  assert.equal(await handshake(ports.https, 'old.redir.test'), false, 'nor for a disabled redirect host');

  // ---- custom HTML: status 404, the page exactly as written (placeholders are not expanded)
  const html = '<!doctype html><title>Lost?</title><h1>Nothing at {http.request.host}</h1>\n';
  const c = await api('/settings/default-site', 'PUT', { mode: 'custom_html', html });
  assert.equal(c.status, 200, JSON.stringify(c.data));
  const custom = await get('http', ports.http, 'nobody.redir.test', '/x');
  assert.equal(custom.status, 404);
  assert.equal(custom.headers['content-type'], 'text/html; charset=utf-8');
  assert.equal(custom.headers['x-content-type-options'], 'nosniff');
  assert.equal(custom.body, html);

  // ---- redirect mode: a 302 to the URL
  const r = await api('/settings/default-site', 'PUT', { mode: 'redirect', redirect_url: 'https://www.example.org/' });
  assert.equal(r.status, 200, JSON.stringify(r.data));
  const red = await get('http', ports.http, 'nobody.redir.test', '/x');
  assert.equal(red.status, 302);
  assert.equal(red.headers.location, 'https://www.example.org/');

  // ---- deleted: the redirect host's name gets the default site too
  await api(`/redirect-hosts/${rh.data.redirect_host.id}`, 'DELETE');
  assert.equal((await get('http', ports.http, 'old.redir.test')).status, 302);
});
