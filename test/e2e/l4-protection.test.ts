// End to end, as root: peer ACL and IP filter on L4 routes, enforced by the real custom Caddy's
// layer4 server (caddy-l4 remote_ip) through a real WireGuard tunnel. The sidecar runs with
// GATEHOUSE_WG_MANAGE=true and GATEHOUSE_MANAGE_CADDY=true in the host namespace; Caddy listens on
// the server's tunnel address only, so the two peer namespaces A and B reach it through the tunnel
// with their tunnel addresses as source. A runs a TCP echo and a UDP echo on its tunnel address.
// Each L4 route lets one peer through and refuses the other (connection closed before any byte
// reaches the backend, no UDP answer); switching the protection off lets the refused peer in.
//   cd /work/main && node --import tsx --test test/e2e/l4-protection.test.ts
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { skipReason } from '../lib/netns.js';
import { waitFor } from '../lib/wait.js';
import { freePort } from '../lib/ports.js';
import { CADDY, startE2e, tunnelPeers } from '../lib/e2e-server.js';

const reason = skipReason(['wireguard-go', 'wg', 'ping']) ?? (fs.existsSync(CADDY) ? null : `no ${CADDY}: build it with bash scripts/build-caddy.sh`);

test('L4 routes: peer ACL and IP filter enforced by the layer4 server, from two peer namespaces', { skip: reason ?? false, timeout: 240_000 }, async (t) => {
  const run = await startE2e(t, {
    prefix: 'l4prot',
    iface: `ghl${process.pid % 1000}`,
    vpnOctet: 246,
    peers: [
      { name: 'pa', octet: 247 },
      { name: 'pb', octet: 248 },
    ],
    proxyBind: 'serverIp',
  });
  const { network, api, serverIp } = run;
  const [nsA, nsB] = run.ns;
  const [peerA, peerB] = await tunnelPeers(run, ['e2e-l4-a', 'e2e-l4-b']);
  const ipA = peerA.address.split('/')[0];
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
});
