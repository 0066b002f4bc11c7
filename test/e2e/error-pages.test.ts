// End to end, as root: the branded "device offline" answer when a route's peer drops off the VPN.
// The sidecar runs with GATEHOUSE_WG_MANAGE=true and GATEHOUSE_MANAGE_CADDY=true (Caddy on
// 127.0.0.1); a peer namespace runs an HTTP backend on its tunnel address. While the tunnel is up
// the route answers from the backend; once the peer's WireGuard interface is gone, Caddy's dial
// through the tunnel times out and the visitor gets a 502 page (English, German by
// Accept-Language, JSON for JSON clients) instead of an empty 502.
//   cd /work/main && node --import tsx --test test/e2e/error-pages.test.ts
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import { errorPageHtml } from '../../sidecar/src/proxy/fragments/error-pages.js';
import { skipReason } from '../lib/netns.js';
import { waitFor } from '../lib/wait.js';
import { CADDY, startE2e } from '../lib/e2e-server.js';

const reason = skipReason(['wireguard-go', 'wg', 'ping']) ?? (fs.existsSync(CADDY) ? null : `no ${CADDY}: build it with bash scripts/build-caddy.sh`);

function get(port: number, host: string, headers: Record<string, string> = {}): Promise<{ status: number; type: string; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: '/', headers: { host, ...headers }, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type'] ?? ''), body: Buffer.concat(chunks).toString('utf8') }),
      );
    });
    req.setTimeout(15_000, () => req.destroy(new Error(`timeout ${host}`)));
    req.on('error', reject);
    req.end();
  });
}

test(
  'a peer that drops off the VPN: the visitor gets the branded 502 "device offline" page, not an empty 502',
  { skip: reason ?? false, timeout: 180_000 },
  async (t) => {
    const run = await startE2e(t, {
      prefix: 'errpg',
      iface: `ghe${process.pid % 1000}`,
      vpnOctet: 249,
      peers: [{ name: 'peer', octet: 250 }],
      proxyBind: '127.0.0.1',
    });
    const { network, api, ports, serverIp } = run;
    const [ns] = run.ns;
    const peer = (await api('/peers', 'POST', { name: 'e2e-errpg' })).data.peer;
    const wg = await network.bringUpPeer(ns, network.ifName('p'), (await api(`/peers/${peer.id}/config`)).data as string);
    await waitFor(async () => (await network.ping(ns, serverIp, { count: 1, timeoutS: 1 })).ok, 20_000, { what: 'the tunnel' });
    const ip = peer.address.split('/')[0];
    const backend = await network.startHttpServer(ns, ip, 8080, { name: 'backend' });
    t.after(() => backend.stop());
    const r = await api('/routes', 'POST', { domain: 'app.errpg.test', peer_id: peer.id, target_port: 8080 });
    assert.equal(r.status, 201, JSON.stringify(r.data));
    // The backend answers through the tunnel (checked directly: a request through Caddy would leave a
    // kept-alive upstream connection, on which the next request would wait for the dead peer instead
    // of dialling it).
    assert.equal((await network.httpGet(null, `http://${ip}:8080/`)).status, 200);

    await wg.stop(); // the peer is gone from the VPN; the server still has it (enabled, same endpoint)
    const t0 = Date.now();
    const en = await get(ports.http, 'app.errpg.test');
    assert.equal(en.status, 502);
    assert.match(en.type, /^text\/html/);
    assert.equal(en.body, errorPageHtml('peer_offline', 'en'));
    assert.doesNotMatch(en.body, new RegExp(`${ip.replace(/\./g, '\\.')}|8080|dial|timeout`), 'no backend detail');
    assert.ok(Date.now() - t0 < 10_000, 'answered after the dial timeout, not hanging');
    const de = await get(ports.http, 'app.errpg.test', { 'accept-language': 'de' });
    assert.equal(de.status, 502);
    assert.equal(de.body, errorPageHtml('peer_offline', 'de'));
    const json = await get(ports.http, 'app.errpg.test', { accept: 'application/json' });
    assert.equal(json.status, 502);
    assert.deepEqual(JSON.parse(json.body), { ok: false, error: 'peer_offline', message: JSON.parse(json.body).message });
  },
);
