// End to end: the sidecar's WgDriver runs a real wireguard-go server inside a namespace "srv"; two
// client namespaces, each joined to srv by a veth pair, bring up tunnels from configs rendered by
// renderPeerConfig() (exactly what a user downloads). Proves ping and TCP over the tunnel, handshake
// and counters in dump(), that adding a peer leaves the first tunnel running, that removePeer stops
// a tunnel and sync() restores it, and that down() removes the interface and its wireguard-go.
// Needs root, wireguard-go, wg and ping; skipped otherwise.
//   cd /work/main && node --import tsx --test test/e2e/wireguard-driver.test.ts
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { WgDriver } from '@gatehouse/common/wireguard/driver.js';
import { generateKeyPair, generatePresharedKey } from '@gatehouse/common/wireguard/keys.js';
import { renderPeerConfig, serverAddress, serverInterfaceAddress } from '@gatehouse/common/wireguard/render.js';
import type { WgInterfaceSpec, WgPeerSpec } from '@gatehouse/common/wireguard/types.js';
import { createNetwork, skipReason } from '../lib/netns.js';
import { waitFor } from '../lib/wait.js';

const reason = skipReason(['wireguard-go', 'wg', 'ping']);

test('WgDriver: real tunnels between network namespaces', { skip: reason ?? false, timeout: 90_000 }, async (t) => {
  const net = await createNetwork({ prefix: 'wgdrv' });
  t.after(() => net.cleanup());

  const srv = await net.addNamespace('srv');
  const p1 = await net.addNamespace('p1');
  const p2 = await net.addNamespace('p2');
  const l1 = await net.link(srv, p1, '10.233.1.1/24', '10.233.1.2/24');
  const l2 = await net.link(srv, p2, '10.233.2.1/24', '10.233.2.2/24');

  const subnet = '10.233.100.0/24';
  const srvIp = serverAddress(subnet); // 10.233.100.1
  const port = 51820;
  const server = generateKeyPair();
  const peer1 = generateKeyPair();
  const peer2 = generateKeyPair();
  const psk1 = generatePresharedKey();
  const iface = net.ifName('srv');

  const peer1Spec: WgPeerSpec = { publicKey: peer1.publicKey, presharedKey: psk1, allowedIps: ['10.233.100.2/32'] };
  const peer2Spec: WgPeerSpec = { publicKey: peer2.publicKey, allowedIps: ['10.233.100.3/32'] };
  const spec: WgInterfaceSpec = { iface, privateKey: server.privateKey, listenPort: port, address: serverInterfaceAddress(subnet), peers: [peer1Spec] };

  const driver = new WgDriver({ netns: srv });
  t.after(() => driver.down(iface).catch(() => {}));

  const peerConfig = (keys: { privateKey: string }, address: string, psk: string | undefined, endpointIp: string) =>
    renderPeerConfig({
      privateKey: keys.privateKey,
      address,
      dns: srvIp,
      serverPublicKey: server.publicKey,
      presharedKey: psk,
      endpoint: `${endpointIp}:${port}`,
      subnet,
      persistentKeepalive: 25,
    });

  const pingOk = async (ns: string, ip: string) => (await net.ping(ns, ip, { count: 1, timeoutS: 1 })).ok;
  const peerStatus = async (pub: string) => (await driver.dump(iface))?.peers.find((p) => p.publicKey === pub);

  // ---- up with one peer
  const { mode } = await driver.up(spec);
  assert.equal(mode, 'userspace', 'no kernel module here: wireguard-go');
  const pid = driver.userspacePid(iface);
  assert.ok(pid && pid > 0, 'driver supervises wireguard-go by PID');
  const d0 = await driver.dump(iface);
  assert.ok(d0);
  assert.equal(d0.iface.publicKey, server.publicKey);
  assert.equal(d0.iface.listenPort, port);
  assert.deepEqual(
    d0.peers.map((p) => [p.publicKey, p.allowedIps, p.latestHandshake]),
    [[peer1.publicKey, ['10.233.100.2/32'], 0]],
  );
  const addr = await net.exec(srv, 'ip', ['-o', 'address', 'show', 'dev', iface], { check: true });
  assert.match(addr.stdout, /inet 10\.233\.100\.1\/24/);
  const link = await net.exec(srv, 'ip', ['link', 'show', 'dev', iface], { check: true });
  assert.match(link.stdout, /mtu 1420/);
  assert.match(link.stdout, /[<,]UP[,>]/);

  // ---- peer 1 from its rendered client config
  await net.bringUpPeer(p1, net.ifName('p1'), peerConfig(peer1, '10.233.100.2/32', psk1, l1.addrA));
  await waitFor(() => pingOk(p1, srvIp), 15_000, { what: 'ping peer1 → server over the tunnel' });
  assert.ok(await pingOk(srv, '10.233.100.2'), 'ping server → peer1');

  const echo = await net.startTcpEcho(srv, srvIp, 7000);
  assert.equal(await net.tcpRoundTrip(p1, srvIp, echo.port, 'hello through the tunnel'), 'hello through the tunnel');
  // The TCP service is reachable only through the tunnel, not over the veth address.
  assert.equal(await net.tcpRoundTrip(p1, l1.addrA, echo.port, 'x', 1000), null);

  const s1 = await waitFor(
    async () => {
      const s = await peerStatus(peer1.publicKey);
      return s && s.latestHandshake > 0 && s.rx > 0 && s.tx > 0 ? s : null;
    },
    5000,
    { what: 'handshake and counters in dump()' },
  );
  assert.ok(Math.abs(Date.now() - s1.latestHandshake) < 60_000, 'handshake time is recent epoch ms');
  assert.match(s1.endpoint ?? '', /^10\.233\.1\.2:\d+$/, 'server learned peer1 endpoint from the veth');
  assert.equal(s1.persistentKeepalive, null);
  const peer1Endpoint = s1.endpoint!;

  // ---- a second peer added with setPeer while peer1 keeps pinging: no packet lost
  const continuous = net.ping(p1, srvIp, { count: 40, intervalS: 0.05, timeoutS: 1 });
  await new Promise((r) => setTimeout(r, 300)); // not a condition: peer1 is pinging when peer2 is added
  await driver.setPeer(iface, peer2Spec);
  await net.bringUpPeer(p2, net.ifName('p2'), peerConfig(peer2, '10.233.100.3/32', undefined, l2.addrA));
  await waitFor(() => pingOk(p2, srvIp), 15_000, { what: 'ping peer2 → server' });
  const cont = await continuous;
  assert.equal(cont.transmitted, 40, cont.output);
  assert.equal(cont.received, cont.transmitted, `peer1 lost packets while peer2 was added:\n${cont.output}`);
  assert.equal(await net.tcpRoundTrip(p2, srvIp, echo.port, 'peer2'), 'peer2');
  const d1 = await driver.dump(iface);
  assert.deepEqual(d1?.peers.map((p) => p.publicKey).sort(), [peer1.publicKey, peer2.publicKey].sort());

  // setPeer updates in place: a keepalive for peer2 shows in the dump, peer1 untouched.
  await driver.setPeer(iface, { ...peer2Spec, persistentKeepalive: 15 });
  assert.equal((await peerStatus(peer2.publicKey))?.persistentKeepalive, 15);
  assert.equal((await peerStatus(peer1.publicKey))?.latestHandshake, s1.latestHandshake);

  // ---- removePeer stops peer1's tunnel at once; peer2 carries on
  await driver.removePeer(iface, peer1.publicKey);
  assert.equal(await peerStatus(peer1.publicKey), undefined);
  const dead = await net.ping(p1, srvIp, { count: 2, timeoutS: 1 });
  assert.equal(dead.received, 0, `peer1 still reaches the server after removal:\n${dead.output}`);
  assert.equal(await net.tcpRoundTrip(p1, srvIp, echo.port, 'x', 1500), null);
  assert.ok(await pingOk(p2, srvIp), 'peer2 unaffected by removing peer1');

  // ---- sync() back to the full spec restores it. The endpoint is the one the server had learned
  // (as a reconcile may keep it), so the server can start the new handshake itself.
  const full: WgInterfaceSpec = { ...spec, peers: [{ ...peer1Spec, endpoint: peer1Endpoint }, peer2Spec] };
  await driver.sync(full);
  await waitFor(() => pingOk(srv, '10.233.100.2'), 15_000, { what: 'server → peer1 after sync()' });
  await waitFor(() => pingOk(p1, srvIp), 10_000, { what: 'peer1 → server after sync()' });
  assert.equal(await net.tcpRoundTrip(p1, srvIp, echo.port, 'back again'), 'back again');
  assert.ok(await pingOk(p2, srvIp));

  // ---- up() on the running interface reuses it: same wireguard-go, tunnels stay.
  assert.deepEqual(await driver.up(full), { mode: 'userspace' });
  assert.equal(driver.userspacePid(iface), pid);
  assert.ok(await pingOk(p1, srvIp));
  assert.ok(await pingOk(p2, srvIp));

  // ---- down() removes the interface and stops exactly our wireguard-go
  await driver.down(iface);
  assert.equal(await driver.exists(iface), false);
  assert.equal(await driver.dump(iface), null);
  assert.equal(driver.userspacePid(iface), null);
  assert.throws(() => process.kill(pid, 0), { code: 'ESRCH' }, 'wireguard-go is gone');
  assert.equal(fs.existsSync(`/var/run/wireguard/${iface}.sock`), false, 'control socket removed');
  assert.equal((await net.ping(p1, srvIp, { count: 1, timeoutS: 1 })).ok, false);
  await driver.down(iface); // idempotent
});
