// End to end: full and split tunnel (client_allowed_ips) with the server's forwarding and NAT, real
// wireguard-go and iptables. The sidecar drives its WireGuard interface and its NAT inside a
// namespace "srv" (WgDriver with netns), whose default route leads to a namespace "inet" (the
// internet, holding the target address on its loopback). Peer "full" (AllowedIPs 0.0.0.0/0, ::/0)
// and peer "split" (the server default: the VPN subnet) each have a namespace linked to srv and
// bring their own config up unchanged (wg-quick's way). Checked:
// - srv starts without forwarding and without NAT; a full-tunnel peer makes the sidecar turn both
//   on (GET /wg/status nat, the iptables rules in srv), out of srv's default-route interface;
// - full reaches the target through the tunnel, and the target sees srv's uplink address as the
//   source (the masquerade), never the peer's tunnel address;
// - split has no route to the target through the tunnel (`ip route get` says so) and reaches nothing;
// - back to split, the rules go; a desktop client token with a 0.0.0.0/0 split tunnel brings them
//   back and takes them away again; a sidecar stop leaves none behind.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, apiToken, bearer, type TestServer, apiCall } from '../../sidecar/test/lib/server.js';
import { WgDriver } from '@gatehouse/common/wireguard/driver.js';
import { createNetwork, skipReason } from '../lib/netns.js';
import { waitFor } from '../lib/wait.js';
import { freePort } from '../lib/ports.js';
import type { Peer } from '../../sidecar/test/lib/protocol.js';

const reason = skipReason(['wireguard-go', 'wg', 'ping', 'iptables', 'sysctl']);

// An HTTP server answering every request with the address it came from (what the target sees).
const WHO_SCRIPT = `
const http = require('node:http');
const [host, port] = process.argv.slice(1);
http.createServer((req, res) => { res.setHeader('content-type', 'application/json'); res.end(JSON.stringify({ remote: req.socket.remoteAddress })); })
  .listen(Number(port), host, () => console.log('listening'));
`;

test(
  'full tunnel through the server NAT reaches the "internet" namespace as the server; split tunnel does not route it',
  { skip: reason ?? false, timeout: 120_000 },
  async (t) => {
    const n = (process.pid % 200) + 20;
    const net = await createNetwork({ prefix: 'fulltun' });
    const running: { s?: TestServer } = {};
    t.after(async () => {
      await running.s?.close();
      await net.cleanup();
    });
    const srv = await net.addNamespace('srv');
    const inet = await net.addNamespace('inet');
    const full = await net.addNamespace('full');
    const split = await net.addNamespace('split');
    const up = await net.link(srv, inet, `10.211.${n}.1/24`, `10.211.${n}.2/24`);
    const toFull = await net.link(srv, full, `10.209.${n}.1/24`, `10.209.${n}.2/24`);
    const toSplit = await net.link(srv, split, `10.210.${n}.1/24`, `10.210.${n}.2/24`);
    // the internet: an address on inet's loopback, reached from srv by its default route
    const target = `172.31.${n}.7`;
    await net.exec(inet, 'ip', ['address', 'add', `${target}/32`, 'dev', 'lo'], { check: true });
    await net.exec(srv, 'ip', ['route', 'add', 'default', 'via', up.addrB], { check: true });
    await net.sysctl(srv, 'net.ipv4.ip_forward', '0');
    const whoPort = 18080;
    const who = net.spawn(inet, process.execPath, ['-e', WHO_SCRIPT, target, String(whoPort)]);
    await new Promise<void>((resolve, reject) => {
      let out = '';
      who.stdout!.setEncoding('utf8').on('data', (d: string) => ((out += d), out.includes('listening') && resolve()));
      who.once('exit', (code) => reject(new Error(`the target server exited (${code})`)));
    });
    const iptS = async () =>
      `${(await net.exec(srv, 'iptables', ['-w', '-t', 'nat', '-S', 'POSTROUTING'], { check: true })).stdout}${(await net.exec(srv, 'iptables', ['-w', '-S', 'FORWARD'], { check: true })).stdout}`
        .split('\n')
        .filter((l) => l.includes('gatehouse-nat'));
    assert.deepEqual(await iptS(), [], 'no NAT rules before');

    const iface = net.ifName('s');
    const subnet = `10.208.${n}.0/24`;
    const serverIp = `10.208.${n}.1`;
    const port = await freePort('udp', '0.0.0.0');
    const s = await startTestServer(
      {
        GATEHOUSE_WG_MANAGE: 'true',
        GATEHOUSE_WG_INTERFACE: iface,
        GATEHOUSE_WG_SUBNET: subnet,
        GATEHOUSE_WG_PORT: String(port),
        GATEHOUSE_PUBLIC_HOST: toFull.addrA,
        GATEHOUSE_WG_POLL_INTERVAL: '3600',
        GATEHOUSE_RATE_LIMIT_ADMIN: '100000',
        GATEHOUSE_MANAGE_CADDY: 'false',
      },
      { startFeatures: true, wgDriver: new WgDriver({ netns: srv }) },
    );
    running.s = s;
    const h = bearer(await apiToken(s));
    const api = apiCall(
      () => s,
      () => h,
    );
    const nat = async () => (await api('/wg/status')).data.nat;
    assert.equal((await nat())!.active, false, 'no full-tunnel peer: no NAT');
    assert.equal((await nat())!.mode, 'auto');

    const fullPeer = (await api('/peers', 'POST', { name: 'full', client_allowed_ips: ['0.0.0.0/0', '::/0'] })).data.peer as Peer;
    const splitPeer = (await api('/peers', 'POST', { name: 'split' })).data.peer as Peer;
    assert.equal(fullPeer.full_tunnel, true);

    // the sidecar turned forwarding and NAT on, out of srv's default-route interface
    const st = await nat();
    assert.equal(st!.active, true, JSON.stringify(st));
    assert.equal(st!.out_interface, up.ifA);
    assert.equal(st!.forwarding, true);
    assert.equal(st!.error, null);
    assert.equal((await net.exec(srv, 'sysctl', ['-n', 'net.ipv4.ip_forward'])).stdout.trim(), '1');
    assert.equal((await iptS()).length, 3);
    assert.ok((await iptS()).includes(`-A POSTROUTING -s ${subnet} -o ${up.ifA} -m comment --comment "gatehouse-nat:${iface}" -j MASQUERADE`));

    // each peer brings its own config up unchanged (the split one dials srv through its own link)
    const fullConf = String((await api(`/peers/${fullPeer.id}/config`)).data);
    const splitConf = String((await api(`/peers/${splitPeer.id}/config`)).data).replaceAll(`${toFull.addrA}:`, `${toSplit.addrA}:`);
    assert.match(fullConf, /^AllowedIPs = 0\.0\.0\.0\/0, ::\/0$/m);
    assert.match(splitConf, new RegExp(`^AllowedIPs = ${subnet.replaceAll('.', '\\.')}$`, 'm'));
    const fullIf = net.ifName('f');
    const splitIf = net.ifName('p');
    await net.bringUpPeer(full, fullIf, fullConf);
    await net.bringUpPeer(split, splitIf, splitConf);
    for (const ns of [full, split]) await waitFor(async () => (await net.ping(ns, serverIp, { count: 1, timeoutS: 1 })).ok, 20_000, { what: 'the tunnel' });

    // full: the target through the tunnel, seen with srv's uplink address as the source
    assert.match((await net.exec(full, 'ip', ['route', 'get', target])).stdout, new RegExp(`dev ${fullIf}\\b`));
    const seen = await waitFor(
      async () => {
        const r = await net.httpGet(full, `http://${target}:${whoPort}/`, { timeoutMs: 3000 }).catch(() => null);
        return r?.status === 200 ? (JSON.parse(r.body) as { remote: string }) : null;
      },
      20_000,
      { what: 'the target through the full tunnel' },
    );
    assert.equal(seen.remote.replace(/^::ffff:/, ''), up.addrA, 'the target sees the server, not the peer');
    assert.notEqual(seen.remote.replace(/^::ffff:/, ''), fullPeer.address);
    assert.ok((await net.ping(full, target, { count: 2, timeoutS: 2 })).ok, 'ping through the NAT too');
    const rx = (await api(`/wg/status`)).data.peers.find((p) => p.id === fullPeer.id);
    assert.ok(rx!.transfer_rx > 0, 'the traffic went through the tunnel');

    // split: the target is not routed through the tunnel (no route at all in its namespace), nothing reaches it
    const route = await net.exec(split, 'ip', ['route', 'get', target]);
    assert.ok(!route.stdout.includes(splitIf), `split routes the target through the tunnel: ${route.stdout}`);
    assert.notEqual(route.code, 0, `split has no route to the target: ${route.stdout}${route.stderr}`);
    assert.equal((await net.ping(split, target, { count: 1, timeoutS: 1 })).ok, false);

    // back to the default: no full-tunnel peer left, the rules go (forwarding stays on)
    const back = await api(`/peers/${fullPeer.id}`, 'PUT', { client_allowed_ips: null });
    assert.equal(back.status, 200);
    assert.equal(back.data.peer.config_outdated, true, 'the downloaded full-tunnel config is outdated now');
    assert.equal((await nat())!.active, false);
    assert.deepEqual(await iptS(), []);

    // a desktop client token whose split tunnel is 0.0.0.0/0 needs the NAT too
    const tok = await api('/tokens', 'POST', { name: 'desktop', scopes: ['client'] });
    assert.equal(tok.status, 201, JSON.stringify(tok.data));
    assert.equal((await api(`/tokens/${tok.data.record.id}`, 'PATCH', { split_tunnel: ['0.0.0.0/0'] })).status, 200);
    await waitFor(async () => (await iptS()).length === 3, 10_000, { what: 'the NAT for the desktop client token' });
    assert.equal((await api(`/tokens/${tok.data.record.id}`, 'PATCH', { split_tunnel: null })).status, 200);
    await waitFor(async () => (await iptS()).length === 0, 10_000, { what: 'the NAT gone with the token split tunnel' });

    // on again, then a sidecar stop removes them
    await api(`/peers/${splitPeer.id}`, 'PUT', { client_allowed_ips: ['0.0.0.0/0'] });
    assert.equal((await iptS()).length, 3);
    await s.close();
    running.s = undefined;
    assert.deepEqual(await iptS(), [], 'no rules left after the sidecar stopped');
  },
);
