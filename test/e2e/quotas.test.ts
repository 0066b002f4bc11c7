// End to end: per-peer data quotas (quotas/) through real wireguard-go tunnels, with the real poller
// and a webhook receiver, on a manual clock (the sidecar's poll and quota jobs run when the test moves
// it; the kernel's counters and the tunnels run in real time). The sidecar drives its interface in
// a namespace "srv"; peer A (quota 3 MB a day, disable) and peer B (3 MB a day, throttle to
// 2,000 kbit/s) each bring their config up in a namespace of their own. Checked:
// - iperf3 pushes 8 MB through A's tunnel: at the next poll (the test polls until the counters of
//   wireguard-go hold the bytes) A is disabled (ping fails), and the receiver gets
//   peer_quota_warning and peer_quota_exceeded for it;
// - the same through B: B is throttled, iperf3 measures 2,000 kbit/s ±15 % in each direction;
// - the next day on the manual clock: A is enabled again (ping works), B's throttle is lifted
//   (iperf3 well above the throttle), and peer_quota_reset reaches the receiver.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, apiToken, bearer, type TestServer, apiCall } from '../../sidecar/test/lib/server.js';
import { startReceiver, type Receiver } from '../../sidecar/test/lib/webhook-receiver.js';
import { manualClock } from '../../sidecar/src/util/clock.js';
import { WgDriver } from '@gatehouse/common/wireguard/driver.js';
import { createNetwork, skipReason, type Network } from '../lib/netns.js';
import { waitFor } from '../lib/wait.js';
import { freePort } from '../lib/ports.js';
import type { Peer } from '../../sidecar/test/lib/protocol.js';

const reason = skipReason(['wireguard-go', 'wg', 'ping', 'tc', 'iperf3']);
const SECRET = 'quota-receiver-secret-0123456789';
const MB = 1024 * 1024;

/** One iperf3 run from `ns` (-n: that many bytes, else -t seconds; -R: the server sends); the receiver's kbit/s. */
async function iperf(net: Network, ns: string, host: string, port: number, o: { reverse?: boolean; bytes?: number; seconds?: number } = {}): Promise<number> {
  const args = [
    '-c',
    host,
    '-p',
    String(port),
    '-J',
    ...(o.bytes ? ['-n', String(o.bytes)] : ['-t', String(o.seconds ?? 3), '-O', '1']),
    ...(o.reverse ? ['-R'] : []),
  ];
  const r = await net.exec(ns, 'iperf3', args, { timeoutMs: 30_000 });
  const j = JSON.parse(r.stdout) as { end?: { sum_received?: { bits_per_second: number } }; error?: string };
  if (!j.end?.sum_received) throw new Error(`iperf3 failed: ${j.error ?? r.stderr}`);
  return Math.round(j.end.sum_received.bits_per_second / 1000);
}
const within = (got: number, cap: number, what: string) =>
  assert.ok(Math.abs(got - cap) <= cap * 0.15, `${what}: ${got} kbit/s, throttle ${cap} kbit/s (±15 %)`);

test(
  'quotas: past the quota a peer is disabled (ping fails) or throttled (iperf3), webhooks at 80/100 %, restored the next day',
  { skip: reason ?? false, timeout: 150_000 },
  async (t) => {
    const n = (process.pid % 200) + 20;
    const net = await createNetwork({ prefix: 'quota' });
    const running: { s?: TestServer; rx?: Receiver } = {};
    t.after(async () => {
      await running.s?.close();
      await running.rx?.close();
      await net.cleanup();
    });
    const srv = await net.addNamespace('srv');
    const nsA = await net.addNamespace('a');
    const nsB = await net.addNamespace('b');
    const toA = await net.link(srv, nsA, `10.223.${n}.1/24`, `10.223.${n}.2/24`);
    const toB = await net.link(srv, nsB, `10.224.${n}.1/24`, `10.224.${n}.2/24`);
    const iface = net.ifName('s');
    const serverIp = `10.222.${n}.1`;
    const port = await freePort('udp', '0.0.0.0');
    // now, on a clock the test moves: the poll and quota jobs (10 s) run when it does
    const clock = manualClock(Date.now());
    const s = await startTestServer(
      {
        GATEHOUSE_WG_MANAGE: 'true',
        GATEHOUSE_WG_INTERFACE: iface,
        GATEHOUSE_WG_SUBNET: `10.222.${n}.0/24`,
        GATEHOUSE_WG_PORT: String(port),
        GATEHOUSE_PUBLIC_HOST: toA.addrA,
        GATEHOUSE_WG_POLL_INTERVAL: '10',
        GATEHOUSE_RATE_LIMIT_ADMIN: '100000',
        GATEHOUSE_MANAGE_CADDY: 'false',
        GATEHOUSE_WEBHOOK_ALLOW_PRIVATE: 'true',
      },
      { startFeatures: true, wgDriver: new WgDriver({ netns: srv }), clock, timers: clock.timers },
    );
    running.s = s;
    const rx = await startReceiver(SECRET, { clock });
    running.rx = rx;
    const h = bearer(await apiToken(s));
    const api = apiCall(
      () => s,
      () => h,
    );
    const hook = await api('/webhooks', 'POST', {
      name: 'quotas',
      url: rx.url,
      events: ['peer_quota_warning', 'peer_quota_exceeded', 'peer_quota_reset'],
      enabled: true,
      secret: SECRET,
      allow_private: true,
    });
    assert.equal(hook.status, 201, JSON.stringify(hook.data));
    /** one poll interval and a bit on the manual clock, every job run finished */
    const poll = () => clock.advanceAsync(s.deps.wireguard.pollIntervalMs + 1000, () => s.deps.scheduler.idle());
    const received = (event: string, peerId: number) => rx.got.filter((g) => g.event === event && g.json?.data.peer_id === peerId && g.signatureValid);

    const quota = { bytes: 3 * MB, period: 'daily' };
    const a = (await api('/peers', 'POST', { name: 'quota-off', quota: { ...quota, action: 'disable' } })).data.peer as Peer;
    const b = (await api('/peers', 'POST', { name: 'quota-slow', quota: { ...quota, action: 'throttle', throttle_kbit: 2000 } })).data.peer as Peer;
    const confA = String((await api(`/peers/${a.id}/config`)).data);
    const confB = String((await api(`/peers/${b.id}/config`)).data).replaceAll(`${toA.addrA}:`, `${toB.addrA}:`);
    await net.bringUpPeer(nsA, net.ifName('a'), confA);
    await net.bringUpPeer(nsB, net.ifName('b'), confB);
    const pings = (ns: string) => net.ping(ns, serverIp, { count: 1, timeoutS: 1 }).then((r) => r.ok);
    for (const ns of [nsA, nsB]) await waitFor(() => pings(ns), 20_000, { what: 'the tunnel' });
    const portA = 15301;
    const portB = 15302;
    for (const p of [portA, portB]) net.spawn(srv, 'iperf3', ['-s', '-B', serverIp, '-p', String(p)]);
    await waitFor(async () => (await net.exec(srv, 'ss', ['-Hltn', `sport = :${portB}`])).stdout.includes(String(portB)), 10_000, { what: 'iperf3 servers' });

    /** polls until the peer's quota shows `state` (the counters of wireguard-go may trail the last bytes by a poll) */
    const pollUntil = async (id: number, state: string) => {
      for (let i = 0; i < 5; i++) {
        await poll();
        if (((await api(`/peers/${id}`)).data.peer as Peer).quota_state?.state === state) return;
      }
    };

    // A: 8 MB through the tunnel, the poll interval: disabled, ping fails, both events delivered
    await iperf(net, nsA, serverIp, portA, { bytes: 8 * MB });
    await pollUntil(a.id, 'exceeded');
    let va = (await api(`/peers/${a.id}`)).data.peer as Peer;
    assert.deepEqual([va.enabled, va.quota_state?.state, va.quota_state?.action_applied], [0, 'exceeded', 'disable'], JSON.stringify(va.quota_state));
    assert.ok((va.quota_state?.used_bytes ?? 0) >= 3 * MB, `counted ${va.quota_state?.used_bytes}`);
    assert.equal(await pings(nsA), false, 'a disabled peer does not reach the server');
    await waitFor(async () => received('peer_quota_warning', a.id).length === 1 && received('peer_quota_exceeded', a.id).length === 1, 15_000, {
      what: 'the 80 % and 100 % webhooks',
    });
    assert.equal(received('peer_quota_exceeded', a.id)[0].json?.data.action_applied, 'disable');

    // B: past the quota it is throttled to 2,000 kbit/s both ways
    await iperf(net, nsB, serverIp, portB, { bytes: 8 * MB });
    await pollUntil(b.id, 'exceeded');
    const vb = (await api(`/peers/${b.id}`)).data.peer as Peer;
    assert.deepEqual([vb.enabled, vb.quota_state?.action_applied], [1, 'throttle'], JSON.stringify(vb.quota_state));
    const down = await iperf(net, nsB, serverIp, portB, { reverse: true, seconds: 4 });
    const up = await iperf(net, nsB, serverIp, portB, { seconds: 4 });
    t.diagnostic(`throttled: down ${down} kbit/s, up ${up} kbit/s (throttle 2000)`);
    within(down, 2000, 'down');
    within(up, 2000, 'up');
    await waitFor(async () => received('peer_quota_exceeded', b.id).length === 1, 15_000, { what: "B's 100 % webhook" });

    // the next day (00:00:05 local time): A back on the tunnel, B's throttle lifted
    const d = new Date(clock());
    clock.set(new Date(d.getFullYear(), d.getMonth(), d.getDate() + 1, 0, 0, 5).getTime() - s.deps.wireguard.pollIntervalMs - 1000);
    await poll();
    va = (await api(`/peers/${a.id}`)).data.peer as Peer;
    assert.deepEqual([va.enabled, va.quota_state?.state, va.quota_state?.used_bytes], [1, 'ok', 0]);
    await waitFor(() => pings(nsA), 20_000, { what: 'the tunnel of A the next day' });
    const free = await iperf(net, nsB, serverIp, portB, { reverse: true });
    t.diagnostic(`the next day: down ${free} kbit/s`);
    assert.ok(free > 2000 * 3, `B unthrottled the next day: ${free} kbit/s`);
    await waitFor(async () => received('peer_quota_reset', a.id).length === 1 && received('peer_quota_reset', b.id).length === 1, 15_000, {
      what: 'the reset webhooks',
    });
  },
);
