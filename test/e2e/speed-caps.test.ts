// End to end: per-peer speed caps (shaping/) through real wireguard-go tunnels, measured with iperf3.
// The sidecar drives its interface inside a namespace "srv" (WgDriver with netns); peer A (capped)
// and peer B (no cap) each bring their config up in a namespace of their own, linked to srv. iperf3
// servers listen on the server's tunnel address. Checked:
// - A capped at down 2,000 / up 20,000 kbit/s: each direction within ±15 % of its cap, while B
//   (same interface, no cap) gets the 50 Mbit/s it asks for at the same time;
// - the cap changed to down 20,000 / up 2,000: the same, and only A's classes changed;
// - a group default applies to a member without its own value; the member's own {null, null} wins;
//   disabling a peer removes its classes, enabling brings them back;
// - a sidecar restart on the same data (the interface re-created) brings the caps back (measured again);
// - a sidecar stop leaves no qdisc and no IFB device behind.
import { test } from 'node:test';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import assert from 'node:assert/strict';
import { startTestServer, apiToken, bearer, type TestServer, apiCall } from '../../sidecar/test/lib/server.js';
import { WgDriver } from '@gatehouse/common/wireguard/driver.js';
import { createNetwork, skipReason, type Network } from '../lib/netns.js';
import { waitFor } from '../lib/wait.js';
import { freePort } from '../lib/ports.js';
import type { Peer } from '../../sidecar/test/lib/protocol.js';

const reason = skipReason(['wireguard-go', 'wg', 'ping', 'tc', 'iperf3']);

/** One iperf3 run from `ns` to host:port (-R: the server sends, i.e. down); the receiver's kbit/s. */
async function iperf(net: Network, ns: string, host: string, port: number, o: { reverse?: boolean; bitrate?: string; seconds?: number } = {}): Promise<number> {
  const args = [
    '-c',
    host,
    '-p',
    String(port),
    '-t',
    String(o.seconds ?? 3),
    '-O',
    '1',
    '-J',
    ...(o.reverse ? ['-R'] : []),
    ...(o.bitrate ? ['-b', o.bitrate] : []),
  ];
  const r = await net.exec(ns, 'iperf3', args, { timeoutMs: 20_000 });
  const j = JSON.parse(r.stdout) as { end?: { sum_received?: { bits_per_second: number } }; error?: string };
  if (!j.end?.sum_received) throw new Error(`iperf3 failed: ${j.error ?? r.stderr}`);
  return Math.round(j.end.sum_received.bits_per_second / 1000);
}

const within = (got: number, cap: number, what: string) => assert.ok(Math.abs(got - cap) <= cap * 0.15, `${what}: ${got} kbit/s, cap ${cap} kbit/s (±15 %)`);

test(
  'speed caps: each direction at its cap (2,000 and 20,000 kbit/s), an uncapped peer unaffected, restored after a restart',
  { skip: reason ?? false, timeout: 150_000 },
  async (t) => {
    const n = (process.pid % 200) + 20;
    const net = await createNetwork({ prefix: 'shape' });
    const running: { s?: TestServer } = {};
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-shape-'));
    t.after(async () => {
      await running.s?.close();
      await net.cleanup();
      fs.rmSync(dataDir, { recursive: true, force: true });
    });
    const srv = await net.addNamespace('srv');
    const nsA = await net.addNamespace('a');
    const nsB = await net.addNamespace('b');
    const toA = await net.link(srv, nsA, `10.213.${n}.1/24`, `10.213.${n}.2/24`);
    const toB = await net.link(srv, nsB, `10.214.${n}.1/24`, `10.214.${n}.2/24`);
    const iface = net.ifName('s');
    const ifb = `ifb-${iface}`.slice(0, 15);
    const subnet = `10.212.${n}.0/24`;
    const serverIp = `10.212.${n}.1`;
    const port = await freePort('udp', '0.0.0.0');
    const env = {
      GATEHOUSE_WG_MANAGE: 'true',
      GATEHOUSE_WG_INTERFACE: iface,
      GATEHOUSE_WG_SUBNET: subnet,
      GATEHOUSE_WG_PORT: String(port),
      GATEHOUSE_PUBLIC_HOST: toA.addrA,
      GATEHOUSE_WG_POLL_INTERVAL: '3600',
      GATEHOUSE_RATE_LIMIT_ADMIN: '100000',
      GATEHOUSE_MANAGE_CADDY: 'false',
      // ours, so that it outlives the first server (the restart below)
      GATEHOUSE_DATA_DIR: dataDir,
    };
    let s = await startTestServer(env, { startFeatures: true, wgDriver: new WgDriver({ netns: srv }) });
    running.s = s;
    let h = bearer(await apiToken(s));
    const api = apiCall(
      () => s,
      () => h,
    );
    const tc = async (...args: string[]) => (await net.exec(srv, 'tc', args)).stdout;
    const classes = async (dev: string) =>
      (await tc('class', 'show', 'dev', dev))
        .split('\n')
        .map((l) => /^class htb (1:[0-9a-f]+) .*?rate (\S+)/.exec(l))
        .filter((m) => m !== null)
        .map((m) => `${m[1]} ${m[2]}`)
        .sort();

    const a = (await api('/peers', 'POST', { name: 'capped', speed_limit: { down_kbit: 2000, up_kbit: 20000 } })).data.peer as Peer & { speed_limit: unknown };
    const b = (await api('/peers', 'POST', { name: 'free' })).data.peer as Peer;
    assert.deepEqual(a.speed_limit, { down_kbit: 2000, up_kbit: 20000 });
    const minor = (p: Peer) => `1:${(Number(p.address.split('.')[3]) - 0).toString(16)}`;
    assert.deepEqual(await classes(iface), [`${minor(a)} 2Mbit`], 'one class on the interface: A down');
    assert.deepEqual(await classes(ifb), [`${minor(a)} 20Mbit`], 'one class on the IFB: A up');

    const confA = String((await api(`/peers/${a.id}/config`)).data);
    const confB = String((await api(`/peers/${b.id}/config`)).data).replaceAll(`${toA.addrA}:`, `${toB.addrA}:`);
    await net.bringUpPeer(nsA, net.ifName('a'), confA);
    await net.bringUpPeer(nsB, net.ifName('b'), confB);
    for (const ns of [nsA, nsB]) await waitFor(async () => (await net.ping(ns, serverIp, { count: 1, timeoutS: 1 })).ok, 20_000, { what: 'the tunnel' });
    const portA = 15201;
    const portB = 15202;
    for (const p of [portA, portB]) net.spawn(srv, 'iperf3', ['-s', '-B', serverIp, '-p', String(p)]);
    await waitFor(async () => (await net.exec(srv, 'ss', ['-Hltn', `sport = :${portB}`])).stdout.includes(String(portB)), 10_000, { what: 'iperf3 servers' });

    /** A's down and up one after the other, B asking for 50 Mbit/s down at the same time as each. */
    const measure = async (down: number, up: number, what: string) => {
      for (const [dir, cap] of [
        ['down', down],
        ['up', up],
      ] as const) {
        const [gotA, gotB] = await Promise.all([
          iperf(net, nsA, serverIp, portA, { reverse: dir === 'down' }),
          iperf(net, nsB, serverIp, portB, { reverse: true, bitrate: '50M' }),
        ]);
        t.diagnostic(`${what} ${dir}: A ${gotA} kbit/s (cap ${cap}), B ${gotB} kbit/s (asked 50000, no cap)`);
        within(gotA, cap, `${what}: A ${dir}`);
        assert.ok(gotB >= 50_000 * 0.85, `${what}: B (no cap) got ${gotB} kbit/s of the 50,000 it asked for while A was capped`);
      }
    };
    await measure(2000, 20000, 'first');

    // the cap changed: only A's classes are replaced
    const put = await api(`/peers/${a.id}`, 'PUT', { speed_limit: { down_kbit: 20000, up_kbit: 2000 } });
    assert.equal(put.status, 200, JSON.stringify(put.data));
    assert.deepEqual(await classes(iface), [`${minor(a)} 20Mbit`]);
    assert.deepEqual(await classes(ifb), [`${minor(a)} 2Mbit`]);
    await measure(20000, 2000, 'changed');

    // group default and the member's own value; disable / enable
    const g = (await api('/peer-groups', 'POST', { name: 'slow', speed_limit: { down_kbit: 1000, up_kbit: 500 } })).data.group;
    assert.deepEqual(g.speed_limit, { down_kbit: 1000, up_kbit: 500 });
    const c = (await api('/peers', 'POST', { name: 'member', group_id: g.id })).data.peer as Peer;
    assert.deepEqual(await classes(iface), [`${minor(a)} 20Mbit`, `${minor(c)} 1Mbit`].sort(), 'the group default applies');
    assert.deepEqual(await classes(ifb), [`${minor(a)} 2Mbit`, `${minor(c)} 500Kbit`].sort());
    await api(`/peer-groups/${g.id}`, 'PUT', { speed_limit: { down_kbit: 3000, up_kbit: null } });
    assert.deepEqual(await classes(iface), [`${minor(a)} 20Mbit`, `${minor(c)} 3Mbit`].sort(), 'the group default changed');
    assert.deepEqual(await classes(ifb), [`${minor(a)} 2Mbit`]);
    await api(`/peers/${c.id}`, 'PUT', { speed_limit: { down_kbit: null, up_kbit: null } });
    assert.deepEqual(await classes(iface), [`${minor(a)} 20Mbit`], "the member's own no-cap wins");
    await api(`/peers/${a.id}/toggle`, 'PUT');
    assert.deepEqual(await classes(iface), [], 'a disabled peer has no class');
    assert.deepEqual(await classes(ifb), []);
    await api(`/peers/${a.id}/toggle`, 'PUT');
    assert.deepEqual(await classes(iface), [`${minor(a)} 20Mbit`], 'back with the peer');

    // a sidecar restart on the same data: the interface is re-created and the caps come back
    await s.close();
    running.s = undefined;
    assert.equal((await net.exec(srv, 'ip', ['link', 'show', 'dev', ifb])).code === 0, false, 'no IFB device after a stop');
    s = await startTestServer(env, { startFeatures: true, wgDriver: new WgDriver({ netns: srv }) });
    running.s = s;
    h = bearer(await apiToken(s));
    assert.deepEqual(await classes(iface), [`${minor(a)} 20Mbit`], 'restored after the restart');
    assert.deepEqual(await classes(ifb), [`${minor(a)} 2Mbit`]);
    for (const ns of [nsA, nsB])
      await waitFor(async () => (await net.ping(ns, serverIp, { count: 1, timeoutS: 1 })).ok, 20_000, { what: 'the tunnel after the restart' });
    await measure(20000, 2000, 'after restart');

    // drift: a qdisc removed by hand comes back with the next full sync
    await net.exec(srv, 'tc', ['qdisc', 'del', 'dev', iface, 'root'], { check: true });
    assert.equal((await api('/wg/restart', 'POST')).status, 200);
    assert.deepEqual(await classes(iface), [`${minor(a)} 20Mbit`], 'repaired by the full sync');
  },
);
