// Faults, nothing lost: wireguard-go killed.
// The sidecar manages the WireGuard interface with wireguard-go (userspace) and Caddy; three real
// peers in network namespaces have their tunnels up. wireguard-go is killed with SIGKILL (the
// interface vanishes with it). Targets:
// - the interface comes back with every peer the database holds;
// - tunnels carry traffic again within 2 s of its return, without the peers doing anything (their
//   wireguard-go keeps its old session): checked both ways, on separate peers so one direction
//   cannot help the other: traffic the server starts (a request through Caddy to a backend behind
//   peer B's tunnel) and traffic the peer starts (pings from peers A and C to the server's tunnel
//   address, nothing sent to them by the server).
//   bash scripts/test-reliability.sh test/reliability/faults-wireguard.test.ts
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { skipReason } from '../lib/netns.js';
import { waitFor } from '../lib/wait.js';
import { CADDY, startE2e, tunnelPeers } from '../lib/e2e-server.js';
import { recordFigure } from './lib/figures.js';
import { send, wgPeers, wireguardGoPid } from './lib/faults-harness.js';
import type { Peer } from '../../sidecar/test/lib/protocol.js';

const reason = skipReason(['wireguard-go', 'wg', 'ping']) ?? (fs.existsSync(CADDY) ? null : `no ${CADDY}`);
const CASE = 'wireguard-go killed';

test(
  'wireguard-go killed: the interface comes back with every peer and tunnels carry traffic within 2 s of its return, the peers doing nothing',
  { skip: reason ?? false, timeout: 120_000 },
  async (t) => {
    const iface = `ghfw${process.pid % 1000}`;
    const run = await startE2e(t, {
      prefix: 'fwg',
      iface,
      vpnOctet: 215,
      peers: [
        { name: 'pa', octet: 214 },
        { name: 'pb', octet: 216 },
        { name: 'pc', octet: 217 },
      ],
      proxyBind: '127.0.0.1',
      // the poller stores each peer's endpoint and handshake (what a fresh interface restores)
      env: { GATEHOUSE_WG_POLL_INTERVAL: '1' },
    });
    const { api, network, ns, ports, serverIp } = run;
    const peers = await tunnelPeers(run, ['fw-a', 'fw-b', 'fw-c']);
    // more peers in the database than tunnels: the interface must come back with all of them
    for (let i = 0; i < 5; i++) assert.equal((await api('/peers', 'POST', { name: `fw-idle-${i}` })).status, 201);
    const ipB = peers[1].address.split('/')[0];
    await network.startHttpServer(ns[1], ipB, 8080, { name: 'b' });
    const route = await api('/routes', 'POST', { peer_id: peers[1].id, target_port: 8080, domain: 'wg.faults.test' });
    assert.equal(route.status, 201, JSON.stringify(route.data));
    const visit = (timeoutMs = 1000) => send('127.0.0.1', ports.http, 'wg.faults.test', '/', { timeoutMs });
    assert.equal((await visit(5000)).status, 200);
    const wanted = new Set<string>((await api('/peers?limit=100')).data.peers.map((p: Peer) => p.public_key));
    assert.equal(wanted.size, 8);
    assert.deepEqual(wgPeers(iface), wanted);
    // the poller has stored every tunnel's endpoint
    await waitFor(async () => (await api('/peers?limit=100')).data.peers.filter((p: Peer) => p.endpoint).length === 3, 10_000, {
      what: 'the endpoints stored',
    });

    const pid = wireguardGoPid(iface);
    assert.ok(pid, `wireguard-go for ${iface} runs`);
    const killedAt = Date.now();
    process.kill(pid, 'SIGKILL');
    await waitFor(() => wgPeers(iface) === null, 5000, { intervalMs: 10, what: 'the interface gone with wireguard-go' });
    await waitFor(() => wgPeers(iface)?.size === wanted.size, 15_000, { intervalMs: 10, what: 'the interface back with every peer' });
    const backAt = Date.now();
    const back = backAt - killedAt;
    assert.notEqual(wireguardGoPid(iface), pid);
    assert.deepEqual(wgPeers(iface), wanted, 'the interface holds exactly the database peers');

    // From the return on: server-started traffic to B, peer-started traffic from A and C.
    const firstOk = async (probe: () => Promise<boolean>) => {
      await waitFor(probe, 20_000, { intervalMs: 10 });
      return Date.now() - backAt;
    };
    const [viaCaddy, fromA, fromC] = await Promise.all([
      firstOk(async () => (await visit()).status === 200),
      firstOk(async () => (await network.ping(ns[0], serverIp, { count: 1, timeoutS: 0.2 })).ok),
      firstOk(async () => (await network.ping(ns[2], serverIp, { count: 1, timeoutS: 0.2 })).ok),
    ]);
    t.diagnostic(
      `interface back ${back} ms after the kill; traffic after its return: server to peer B ${viaCaddy} ms, peer A to server ${fromA} ms, peer C to server ${fromC} ms`,
    );
    recordFigure({ test: CASE, figure: 'interface back with every peer (after the kill)', value: `${back} ms (${wanted.size} peers)` });
    recordFigure({ test: CASE, figure: 'server-to-peer traffic after the return', value: `${viaCaddy} ms`, target: '< 2000 ms', ok: viaCaddy < 2000 });
    recordFigure({
      test: CASE,
      figure: 'peer-to-server traffic after the return (slower of 2)',
      value: `${Math.max(fromA, fromC)} ms`,
      target: '< 2000 ms',
      ok: Math.max(fromA, fromC) < 2000,
    });
    assert.ok(viaCaddy < 2000, `traffic to peer B ${viaCaddy} ms after the return`);
    assert.ok(fromA < 2000 && fromC < 2000, `traffic from peers A and C ${fromA} / ${fromC} ms after the return`);
  },
);
