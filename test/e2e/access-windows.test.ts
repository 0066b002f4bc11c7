// End to end, as root, through the real custom Caddy (bin/caddy) and a real WireGuard tunnel
// (wireguard-go in a namespace): an access window closes a route (403 page naming the opening time),
// an L4 route (no listener) and a peer's tunnel (no traffic) at its boundary, and opens them again at the next, on a clock
// the test moves (the sidecar's injected clock: the real time plus an offset; its timers are real).
//   WG_I_PREFER_BUGGY_USERSPACE_TO_POLISHED_KMOD=1 node --import tsx --test test/e2e/access-windows.test.ts
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { skipReason, type Network } from '../lib/netns.js';
import { waitFor } from '../lib/wait.js';
import { CADDY, startE2e, tunnelPeers } from '../lib/e2e-server.js';
import { freePort } from '../lib/ports.js';

const reason = skipReason(['wireguard-go', 'wg', 'ping', 'curl']) ?? (fs.existsSync(CADDY) ? null : `no ${CADDY}: build it with bash scripts/build-caddy.sh`);

async function curl(n: Network, url: string, extra: string[] = []): Promise<{ status: number; body: string } | null> {
  const u = new URL(url);
  const r = await n.exec(null, 'curl', ['-s', '--max-time', '3', '--resolve', `${u.hostname}:${u.port}:127.0.0.1`, '-w', '\n%{http_code}', ...extra, url], {
    timeoutMs: 8000,
  });
  if (r.code !== 0) return null;
  const i = r.stdout.lastIndexOf('\n');
  return { status: Number(r.stdout.slice(i + 1)), body: r.stdout.slice(0, i) };
}

const hhmm = (t: number) => new Date(t).toISOString().slice(11, 16);

test('an access window closes a route and a peer tunnel at its boundary and opens them at the next', { skip: reason ?? false, timeout: 180_000 }, async (t) => {
  let offset = 0;
  const clock = () => Date.now() + offset;
  const run = await startE2e(t, {
    prefix: 'aw',
    iface: `gha${process.pid % 1000}`,
    vpnOctet: 236,
    peers: [{ name: 'peer', octet: 237 }],
    proxyBind: '127.0.0.1',
    // listen: Caddy sends a closed route's requests to GATEHOUSE_PORT (the closed page)
    start: { clock, listen: true },
  });
  const { network, s, api, ports, serverIp } = run;
  const [ns] = run.ns;
  const [peer] = await tunnelPeers(run, ['aw-peer']);
  const peerIp = peer.address.split('/')[0];
  await network.startHttpServer(ns, peerIp, 8080, { name: 'aw-web' });
  const route = (await api('/routes', 'POST', { domain: 'hours.test', peer_id: peer.id, target_port: 8080 })).data.route;
  const url = `http://hours.test:${ports.http}/`;
  assert.equal((await curl(network, url))?.status, 200);
  // an L4 (TCP) route to the same server: closed, its port has no listener
  const l4Port = await freePort('tcp');
  const l4 = await api('/routes', 'POST', { route_type: 'l4', l4_protocol: 'tcp', l4_listen_port: l4Port, peer_id: peer.id, target_port: 8080 });
  assert.equal(l4.status, 201, JSON.stringify(l4.data));
  const l4Url = `http://l4.test:${l4Port}/`;
  assert.equal((await waitFor(async () => curl(network, l4Url), 15_000, 'the L4 route serves'))?.status, 200);

  // closed for one minute from the boundary B (UTC): open from B+1min round the clock to B
  const B = Math.ceil((Date.now() + 120_000) / 60_000) * 60_000;
  const schedule = { timezone: 'UTC', windows: [{ days: [1, 2, 3, 4, 5, 6, 7], from: hhmm(B + 60_000), to: hhmm(B) }] };
  assert.equal((await api(`/routes/${route.id}`, 'PUT', { access_schedule: schedule })).status, 200);
  assert.equal((await api(`/peers/${peer.id}`, 'PUT', { access_schedule: schedule })).status, 200);
  assert.equal((await api(`/routes/${l4.data.route.id}`, 'PUT', { access_schedule: schedule })).status, 200);
  assert.equal((await curl(network, url))?.status, 200, 'open before the boundary');
  assert.ok((await network.ping(ns, serverIp, { count: 1, timeoutS: 2 })).ok);

  // 2 s before B: the scheduler applies B when it comes
  offset = B - 2000 - Date.now();
  s.deps.accessWindows.refresh();
  const closed = await waitFor(
    async () => {
      const r = await curl(network, url, ['-H', 'Accept: text/html']);
      return r?.status === 403 ? r : null;
    },
    15_000,
    'the route answers 403 after its boundary',
  );
  assert.match(closed.body, /It opens again on .* \(UTC\)/);
  const de = await curl(network, url, ['-H', 'Accept-Language: de']);
  assert.equal(de?.status, 403);
  assert.match(de!.body, /Sie ist wieder erreichbar ab/);
  // curl's exit code 7: the connection was refused (an accepted connection whose backend is gone would be 52)
  const refused = async () => (await network.exec(null, 'curl', ['-s', '--max-time', '3', `http://127.0.0.1:${l4Port}/`], { timeoutMs: 8000 })).code === 7;
  await waitFor(refused, 15_000, 'the L4 port refuses connections');
  // the tunnel carries nothing: the peer left the interface
  await waitFor(async () => !(await network.ping(ns, serverIp, { count: 1, timeoutS: 1 })).ok, 15_000, 'the tunnel stops carrying traffic');
  const dump = await network.exec(null, 'wg', ['show', run.env.GATEHOUSE_WG_INTERFACE, 'peers']);
  assert.ok(!dump.stdout.includes(peer.public_key), 'the closed peer is off the interface');
  const pv = (await api(`/peers/${peer.id}`)).data.peer;
  assert.equal(pv.access_state.open, false);
  assert.equal(pv.access_state.next_change_at, new Date(B + 60_000).toISOString());
  assert.match((await api(`/peers/${peer.id}/config`)).data as string, /# Now CLOSED; it opens/);
  // a full resync does not put the closed peer back
  await s.deps.wireguard.fullSync();
  assert.ok(!(await network.ping(ns, serverIp, { count: 1, timeoutS: 1 })).ok);
  const rv = (await api(`/routes/${route.id}`)).data.route;
  assert.equal(rv.access_state.open, false);
  assert.ok(rv.access_state.closed_answers >= 2, JSON.stringify(rv.access_state));

  // 2 s before B + 1 min: both open again
  offset = B + 58_000 - Date.now();
  s.deps.accessWindows.refresh();
  await waitFor(async () => (await curl(network, url))?.status === 200, 15_000, 'the route serves again');
  await waitFor(async () => (await curl(network, l4Url))?.status === 200, 15_000, 'the L4 route listens again');
  await waitFor(async () => (await network.ping(ns, serverIp, { count: 1, timeoutS: 1 })).ok, 15_000, 'the tunnel carries traffic again');
  const kinds = (await api('/logs/activity?limit=50')).data;
  const text = JSON.stringify(kinds);
  for (const code of ['schedule.route_closed', 'schedule.route_opened', 'schedule.peer_closed', 'schedule.peer_opened']) assert.ok(text.includes(code), code);
});
