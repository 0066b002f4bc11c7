// End to end, as root: peer ACL and IP filter on L4 routes, enforced by the real custom Caddy's
// layer4 server (caddy-l4 remote_ip) through a real WireGuard tunnel. The sidecar runs with
// GATEHOUSE_WG_MANAGE=true and GATEHOUSE_MANAGE_CADDY=true in the host namespace; Caddy listens on
// the server's tunnel address only, so the two peer namespaces A and B reach it through the tunnel
// with their tunnel addresses as source. A runs a TCP echo and a UDP echo on its tunnel address.
// Each L4 route lets one peer through and refuses the other (connection closed before any byte
// reaches the backend, no UDP answer); switching the protection off lets the refused peer in.
// The country filter (geo_filter, Caddy module gatehouse_geo) on the same set-up, with an MMDB file
// the test writes (peer A's tunnel address in DE, peer B's in FR, two documentation addresses):
// an L4 route that denies FR closes B's connection; an HTTP route that allows DE answers A and
// gives B a 403; peer A is a trusted proxy (GATEHOUSE_TRUSTED_PROXIES), so a request it relays is
// judged by the address in its X-Forwarded-For, while the same header from B changes nothing.
//   cd /work/main && node --import tsx --test test/e2e/l4-protection.test.ts
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { skipReason } from '../lib/netns.js';
import { waitFor } from '../lib/wait.js';
import { freePort } from '../lib/ports.js';
import { CADDY, startE2e, tunnelPeers } from '../lib/e2e-server.js';
import os from 'node:os';
import path from 'node:path';
import { writeTestMmdb } from '../lib/geoip.js';

const reason = skipReason(['wireguard-go', 'wg', 'ping']) ?? (fs.existsSync(CADDY) ? null : `no ${CADDY}: build it with bash scripts/build-caddy.sh`);

test(
  'L4 routes: peer ACL and IP filter enforced by the layer4 server, from two peer namespaces; the country filter on L4 and HTTP',
  { skip: reason ?? false, timeout: 240_000 },
  async (t) => {
    const geoDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-geo-e2e-'));
    t.after(() => fs.rmSync(geoDir, { recursive: true, force: true }));
    const geoDb = path.join(geoDir, 'country.mmdb');
    const run = await startE2e(t, {
      prefix: 'l4prot',
      iface: `ghl${process.pid % 1000}`,
      vpnOctet: 246,
      peers: [
        { name: 'pa', octet: 247 },
        { name: 'pb', octet: 248 },
      ],
      proxyBind: 'serverIp',
      // the file is written once the peers' tunnel addresses are known; trusted proxy: peer A (.2, the first address handed out)
      env: { GATEHOUSE_GEOIP_DB: geoDb, GATEHOUSE_TRUSTED_PROXIES: `10.246.${(process.pid % 200) + 20}.2` },
    });
    const { network, api, serverIp } = run;
    const [nsA, nsB] = run.ns;
    const [peerA, peerB] = await tunnelPeers(run, ['e2e-l4-a', 'e2e-l4-b']);
    const ipA = peerA.address.split('/')[0];
    const ipB = peerB.address.split('/')[0];
    const tcpEcho = await network.startTcpEcho(nsA, ipA, 7001);
    const udpEcho = await network.startUdpEcho(nsA, ipA, 7002);
    t.after(async () => {
      await tcpEcho.stop();
      await udpEcho.stop();
    });

    const route = async (body: Record<string, unknown>) => {
      const r = await api('/routes', 'POST', { route_type: 'l4', peer_id: peerA.id, ...body });
      assert.equal(r.status, 201, JSON.stringify(r.data));
      return r.data.route as { id: number };
    };
    const ports = { acl: await freePort('tcp'), white: await freePort('udp'), black: await freePort('tcp'), aclUdp: await freePort('udp') };
    const acl = await route({
      domain: 'acl.l4.test',
      l4_protocol: 'tcp',
      l4_listen_port: ports.acl,
      target_port: tcpEcho.port,
      acl_enabled: true,
      acl_peer_ids: [peerA.id],
    });
    const white = await route({
      domain: 'white.l4.test',
      l4_protocol: 'udp',
      l4_listen_port: ports.white,
      target_port: udpEcho.port,
      ip_filter_enabled: true,
      ip_filter_mode: 'whitelist',
      ip_filter_rules: [ipA],
    });
    await route({
      domain: 'black.l4.test',
      l4_protocol: 'tcp',
      l4_listen_port: ports.black,
      target_port: tcpEcho.port,
      ip_filter_enabled: true,
      ip_filter_mode: 'blacklist',
      ip_filter_rules: [{ value: ipA, note: 'peer A' }],
    });
    await route({
      domain: 'acludp.l4.test',
      l4_protocol: 'udp',
      l4_listen_port: ports.aclUdp,
      target_port: udpEcho.port,
      acl_enabled: true,
      acl_peer_ids: [peerB.id],
    });

    const tcp = (ns: string, port: number, msg: string) => network.tcpRoundTrip(ns, serverIp, port, msg, 2000);
    const udp = (ns: string, port: number, msg: string) => network.udpRoundTrip(ns, serverIp, port, msg, 2000);

    // TCP, ACL of peer A: A gets its echo, B's connection is closed without an answer.
    await waitFor(async () => (await tcp(nsA, ports.acl, 'a-acl')) === 'a-acl', 15_000, { what: 'the ACL route from peer A' });
    assert.equal(await tcp(nsB, ports.acl, 'b-acl'), null, 'peer B is refused by the ACL');
    // UDP, whitelist of A's address: A answered, B not.
    assert.equal(await udp(nsA, ports.white, 'a-white'), 'a-white');
    assert.equal(await udp(nsB, ports.white, 'b-white'), null, 'peer B is refused by the whitelist');
    // TCP, blacklist of A's address: B passes, A is refused.
    assert.equal(await tcp(nsB, ports.black, 'b-black'), 'b-black');
    assert.equal(await tcp(nsA, ports.black, 'a-black'), null, 'peer A is refused by the blacklist');
    // UDP, ACL of peer B: B answered, A not.
    assert.equal(await udp(nsB, ports.aclUdp, 'b-acludp'), 'b-acludp');
    assert.equal(await udp(nsA, ports.aclUdp, 'a-acludp'), null, 'peer A is refused by the UDP ACL');

    // The refusals come from the protection: switched off, the refused peer gets through.
    const off = await api(`/routes/${acl.id}`, 'PUT', { acl_enabled: false });
    assert.equal(off.status, 200, JSON.stringify(off.data));
    await waitFor(async () => (await tcp(nsB, ports.acl, 'b-open')) === 'b-open', 15_000, { what: 'peer B once the ACL is off' });
    const offWhite = await api(`/routes/${white.id}`, 'PUT', { ip_filter_enabled: false });
    assert.equal(offWhite.status, 200, JSON.stringify(offWhite.data));
    await waitFor(async () => (await udp(nsB, ports.white, 'b-open')) === 'b-open', 15_000, { what: 'peer B once the whitelist is off' });

    // --- country filter ---
    assert.equal(run.env.GATEHOUSE_TRUSTED_PROXIES, ipA, 'peer A is the trusted proxy');
    await writeTestMmdb(geoDb, { [ipA]: 'DE', [ipB]: 'FR', '203.0.113.7': 'DE', '198.51.100.9': 'FR' });
    const st = await api('/system/geoip');
    assert.equal(st.data.geoip.present, true, JSON.stringify(st.data));
    const geoPort = await freePort('tcp');
    await route({
      domain: 'geo.l4.test',
      l4_protocol: 'tcp',
      l4_listen_port: geoPort,
      target_port: tcpEcho.port,
      geo_filter: { mode: 'deny', countries: ['FR'] },
    });
    await waitFor(async () => (await tcp(nsA, geoPort, 'a-geo')) === 'a-geo', 15_000, { what: 'the country-filtered L4 route from peer A (DE)' });
    assert.equal(await tcp(nsB, geoPort, 'b-geo'), null, 'peer B (FR) is refused by the L4 country filter');

    const web = await network.startHttpServer(nsA, ipA, await freePort('tcp'), { name: 'geo-backend' });
    t.after(() => web.stop());
    const h = await api('/routes', 'POST', {
      domain: 'geo.http.test',
      peer_id: peerA.id,
      target_port: web.port,
      geo_filter: { mode: 'allow', countries: ['DE'] },
    });
    assert.equal(h.status, 201, JSON.stringify(h.data));
    const get = async (ns: string, headers: Record<string, string> = {}) =>
      (await network.httpGet(ns, `http://${serverIp}:${run.ports.http}/geo`, { headers: { host: `geo.http.test:${run.ports.http}`, ...headers } })).status;
    await waitFor(async () => (await get(nsA)) === 200, 15_000, { what: 'the country-filtered HTTP route from peer A (DE)' });
    assert.equal(await get(nsB), 403, 'peer B (FR) gets 403');
    // relayed by the trusted proxy (peer A): judged by the forwarded address
    assert.equal(await get(nsA, { 'X-Forwarded-For': '198.51.100.9' }), 403, 'a FR client relayed by the trusted proxy is refused');
    assert.equal(await get(nsA, { 'X-Forwarded-For': '198.51.100.9, 203.0.113.7' }), 200, 'the rightmost untrusted entry (DE) is judged');
    // the same header from an untrusted source is not believed
    assert.equal(await get(nsB, { 'X-Forwarded-For': '203.0.113.7' }), 403, "peer B's own X-Forwarded-For changes nothing");
    // the IP filter judges the same address through the trusted proxy
    const ipf = await api(`/routes/${h.data.route.id}`, 'PUT', { ip_filter_enabled: true, ip_filter_mode: 'blacklist', ip_filter_rules: ['203.0.113.7'] });
    assert.equal(ipf.status, 200, JSON.stringify(ipf.data));
    await waitFor(async () => (await get(nsA, { 'X-Forwarded-For': '203.0.113.7' })) === 403, 15_000, { what: 'the IP filter on the forwarded address' });
    assert.equal(await get(nsA), 200, 'peer A itself is not on the block list');
  },
);
