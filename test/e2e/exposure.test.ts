// End to end, as root: internal routes (exposure) through the real custom Caddy (bin/caddy) and a real
// WireGuard tunnel. The sidecar runs with GATEHOUSE_WG_MANAGE=true and GATEHOUSE_MANAGE_CADDY=true in
// the host namespace; Caddy listens on every address, so the peer's namespace reaches it two ways:
// through the tunnel (the server's tunnel address, source = the peer's tunnel address: an insider) and
// over its plain link to the host (source = the link address: an outsider), as does the host itself
// on 127.0.0.1. An internal route serves the insider and gives outsiders the chosen answer, each in
// turn: the 404 page, the admin's page (403), a 302 redirect; a forged X-Forwarded-For changes
// nothing. The internal DNS data names the route with the server's tunnel address, and that address
// reaches it. Made public, the outsider reaches it too.
//   cd /work/main && node --import tsx --test test/e2e/exposure.test.ts
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { skipReason } from '../lib/netns.js';
import { waitFor } from '../lib/wait.js';
import { CADDY, startE2e, tunnelPeers } from '../lib/e2e-server.js';

const reason = skipReason(['wireguard-go', 'wg', 'ping']) ?? (fs.existsSync(CADDY) ? null : `no ${CADDY}: build it with bash scripts/build-caddy.sh`);

test('internal routes through the real Caddy and a real WireGuard tunnel', { skip: reason ?? false, timeout: 180_000 }, async (t) => {
  const run = await startE2e(t, {
    prefix: 'expo',
    iface: `ghx${process.pid % 1000}`,
    vpnOctet: 242,
    peers: [{ name: 'pa', octet: 243 }],
    // every address: the tunnel address for the insider, the link and loopback for outsiders
    proxyBind: '',
  });
  const { network, api, ports, serverIp, links, s } = run;
  const [ns] = run.ns;
  const [peer] = await tunnelPeers(run, ['e2e-expo-peer']);
  const peerIp = peer.address.split('/')[0];
  await network.startHttpServer(ns, peerIp, 8080, { name: 'intranet' });

  const domain = 'intra.test';
  const get = (from: string | null, addr: string, headers: Record<string, string> = {}) =>
    network.httpGet(from, `http://${addr}:${ports.http}/wiki?page=1`, { headers: { host: `${domain}:${ports.http}`, ...headers } });
  const inside = () => get(ns, serverIp);
  const outsideLink = () => get(ns, links[0].addrA);
  const outsideHost = () => get(null, '127.0.0.1');

  const created = await api('/routes', 'POST', { domain, peer_id: peer.id, target_port: 8080, exposure: 'internal' });
  assert.equal(created.status, 201, JSON.stringify(created.data));
  const id = created.data.route.id as number;

  // the insider, through the tunnel: the backend answers
  const ok = await inside();
  assert.equal(ok.status, 200, ok.body);
  assert.equal(JSON.parse(ok.body).server, 'intranet');
  assert.equal(JSON.parse(ok.body).url, '/wiki?page=1');

  // 404 (the default answer): the same page a name nothing serves gets
  for (const res of [await outsideLink(), await outsideHost(), await get(ns, links[0].addrA, { 'x-forwarded-for': peerIp, 'x-real-ip': peerIp })]) {
    assert.equal(res.status, 404, res.body);
    assert.match(res.body, /Page not found/);
    assert.doesNotMatch(res.body, /intranet/);
  }

  // the admin's page, status 403
  const page = '<h1>Only through the VPN</h1><p>{http.request.uri}</p>';
  assert.equal((await api(`/routes/${id}`, 'PUT', { exposure_answer: 'page', exposure_page: page })).status, 200);
  const p = await outsideLink();
  assert.equal(p.status, 403);
  assert.equal(p.body, page, 'sent exactly as written: no placeholder is filled in');
  assert.match(String(p.headers['content-type']), /^text\/html/);
  assert.equal((await outsideHost()).status, 403);
  assert.equal((await inside()).status, 200);

  // a redirect (302, not cached)
  assert.equal((await api(`/routes/${id}`, 'PUT', { exposure_answer: 'redirect', exposure_redirect_url: 'https://www.example.org/vpn-only' })).status, 200);
  const r = await outsideLink();
  assert.equal(r.status, 302);
  assert.equal(r.headers.location, 'https://www.example.org/vpn-only');
  assert.equal(r.headers['cache-control'], 'no-store');
  assert.equal((await get(null, '127.0.0.1', { 'x-forwarded-for': peerIp })).status, 302, 'a forged forwarded address is not the connection');
  assert.equal((await inside()).status, 200);

  // by name: the internal DNS data gives the route the server's tunnel address, which serves it
  const hosts = path.join(s.dataDir, `hosts.${s.deps.config.dnsDomain}`);
  const line = await waitFor(
    () =>
      fs
        .readFileSync(hosts, 'utf8')
        .split('\n')
        .find((l) => l.endsWith(`\t${domain}`)),
    10_000,
    'the route in the hosts file',
  );
  const addr = line.split('\t')[0];
  assert.equal(addr, serverIp);
  assert.equal((await get(ns, addr)).status, 200);

  // public again: everyone reaches it, and the name leaves the internal zone
  assert.equal((await api(`/routes/${id}`, 'PUT', { exposure: 'public' })).status, 200);
  assert.equal((await outsideLink()).status, 200);
  assert.equal((await outsideHost()).status, 200);
  await waitFor(() => !fs.readFileSync(hosts, 'utf8').includes(domain), 10_000, 'the public route leaves the hosts file');
});
