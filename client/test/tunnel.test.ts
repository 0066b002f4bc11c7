// The client's tunnel for real (root): wireguard-go in two network namespaces, a "server" interface
// made with the shared driver and the client's Tunnel fed with the wg-quick text the server renders.
// Checks: the tunnel comes up and carries traffic (handshake age, rx/tx from the dump); a changed
// config is applied to the running interface without dropping it (same wireguard-go process, same
// interface index, no new handshake needed, routes added and removed by difference); down removes it.
//   cd client && npm test   (skipped unless root with wireguard-go, wg, ip and ping)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createLogger } from '@gatehouse/common/json-log.js';
import { WgDriver } from '@gatehouse/common/wireguard/driver.js';
import { generateKeyPair } from '@gatehouse/common/wireguard/keys.js';
import { renderPeerConfig } from '@gatehouse/common/wireguard/render.js';
import { createNetwork, skipReason } from '../../test/lib/netns.js';
import { Tunnel } from '../src/tunnel.js';
import { parseWgQuick } from '../src/wgconf.js';

const reason = skipReason(['wireguard-go', 'wg', 'ip', 'ping']);

test('tunnel up in a namespace, config changes applied without dropping it, down', { skip: reason ?? false, timeout: 120_000 }, async (t) => {
  const net = await createNetwork({ prefix: 'gcli' });
  t.after(() => net.cleanup());
  const srvNs = await net.addNamespace('srv');
  const cliNs = await net.addNamespace('cli');
  const l = await net.link(srvNs, cliNs);
  const sk = generateKeyPair();
  const ck = generateKeyPair();
  const srvIf = net.ifName('s');
  const cliIf = net.ifName('c');
  const srv = new WgDriver({ netns: srvNs, userspaceOnly: true });
  t.after(() => srv.down(srvIf).catch(() => undefined));
  await srv.up({
    iface: srvIf,
    privateKey: sk.privateKey,
    listenPort: 51820,
    address: '10.99.0.1/24',
    peers: [{ publicKey: ck.publicKey, allowedIps: ['10.99.0.2/32'] }],
  });

  const text = (allowedIps: string[], keepalive: number) =>
    renderPeerConfig({
      privateKey: ck.privateKey,
      address: '10.99.0.2',
      serverPublicKey: sk.publicKey,
      endpoint: `${l.addrA}:51820`,
      allowedIps,
      persistentKeepalive: keepalive,
    });
  const tunnel = new Tunnel(
    { iface: cliIf, netns: cliNs, userspaceOnly: true },
    createLogger('error', () => undefined),
  );
  t.after(() => tunnel.down().catch(() => undefined));

  const first = await tunnel.apply(parseWgQuick(text(['10.99.0.0/24'], 25)));
  assert.equal(first.created, true);
  assert.equal(tunnel.mode, 'userspace');
  const p1 = await net.ping(cliNs, '10.99.0.1', { count: 3, timeoutS: 5 });
  assert.ok(p1.ok, p1.output);
  const s1 = await tunnel.stats();
  assert.ok(s1 && s1.handshakeAgeS !== null && s1.handshakeAgeS < 30, JSON.stringify(s1));
  assert.ok(s1.rx > 0 && s1.tx > 0, JSON.stringify(s1));

  const linkIndex = async () => JSON.parse((await net.exec(cliNs, 'ip', ['-j', 'link', 'show', 'dev', cliIf], { check: true })).stdout)[0].ifindex as number;
  const routes = async () => (await net.exec(cliNs, 'ip', ['-4', 'route', 'show', 'dev', cliIf], { check: true })).stdout;
  const pid = tunnel.driver.userspacePid(cliIf);
  const index = await linkIndex();
  const dumpBefore = await tunnel.driver.dump(cliIf);
  assert.ok(pid);

  // a changed config: one more range, another keepalive
  const second = await tunnel.apply(parseWgQuick(text(['10.99.0.0/24', '10.98.0.0/24'], 7)));
  assert.equal(second.created, false);
  assert.equal(tunnel.driver.userspacePid(cliIf), pid, 'the same wireguard-go');
  assert.equal(await linkIndex(), index, 'the same interface');
  const d2 = await tunnel.driver.dump(cliIf);
  assert.equal(d2?.iface.listenPort, dumpBefore?.iface.listenPort, 'same listen port');
  assert.deepEqual(d2?.peers[0].allowedIps.sort(), ['10.98.0.0/24', '10.99.0.0/24']);
  assert.equal(d2?.peers[0].persistentKeepalive, 7);
  assert.equal(d2?.peers[0].latestHandshake, dumpBefore?.peers[0].latestHandshake, 'the session survives: no new handshake');
  assert.match(await routes(), /10\.98\.0\.0\/24/);
  const p2 = await net.ping(cliNs, '10.99.0.1', { count: 2, timeoutS: 5 });
  assert.ok(p2.ok, p2.output);

  // back to the first: the extra route goes
  await tunnel.apply(parseWgQuick(text(['10.99.0.0/24'], 25)));
  assert.doesNotMatch(await routes(), /10\.98\.0\.0/);
  assert.equal(tunnel.driver.userspacePid(cliIf), pid);

  // full tunnel: the two /1 halves through the interface, the endpoint pinned to its own path
  await tunnel.apply(parseWgQuick(text(['0.0.0.0/0'], 25)));
  const full = await routes();
  assert.match(full, /^0\.0\.0\.0\/1 /m);
  assert.match(full, /^128\.0\.0\.0\/1 /m);
  const pin = (await net.exec(cliNs, 'ip', ['-4', 'route', 'show', `${l.addrA}/32`], { check: true })).stdout;
  assert.match(pin, new RegExp(`dev ${l.ifB}\\b`), 'the endpoint stays on the link');
  const p3 = await net.ping(cliNs, '10.99.0.1', { count: 2, timeoutS: 5 });
  assert.ok(p3.ok, p3.output);
  assert.equal(tunnel.driver.userspacePid(cliIf), pid);
  // and back: the halves and the pin go
  await tunnel.apply(parseWgQuick(text(['10.99.0.0/24'], 25)));
  assert.doesNotMatch(await routes(), /0\.0\.0\.0\/1|128\.0\.0\.0\/1/);
  assert.equal((await net.exec(cliNs, 'ip', ['-4', 'route', 'show', `${l.addrA}/32`], { check: true })).stdout.trim(), '');

  await tunnel.down();
  assert.equal(await tunnel.exists(), false);
});
