// Uptime monitoring: real requests to a backend on the peer's address (GATEHOUSE_WG_SUBNET in
// 127.77.x.0/24 with GATEHOUSE_WG_MANAGE=false: peer addresses are loopback addresses), Host =
// domain, up/down transitions as activity events, dashboard monitoring and latency, history.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { startTestServer, apiToken, bearer, type TestServer, apiCall } from './lib/server.js';
import type { ActivityEntry, RouteCheck } from './lib/protocol.js';

const octet = 100 + (process.pid % 100);
let s: TestServer;
let auth: Record<string, string>;
let peerIp: string;
let backend: http.Server;
let port: number;
const seen: { host?: string; auth?: string }[] = [];
const call = apiCall(
  () => s,
  () => auth,
);

function listen(p = 0): Promise<http.Server> {
  const srv = http.createServer((req, res) => {
    seen.push({ host: req.headers.host, auth: req.headers.authorization });
    res.end('ok');
  });
  return new Promise((resolve) => srv.listen(p, peerIp, () => resolve(srv)));
}

before(async () => {
  s = await startTestServer({ GATEHOUSE_RATE_LIMIT_ADMIN: '100000', GATEHOUSE_WG_SUBNET: `127.77.${octet}.0/24` });
  auth = bearer(await apiToken(s));
  const p = await call('/peers', 'POST', { name: 'backend' });
  assert.equal(p.status, 201, JSON.stringify(p.data));
  peerIp = String(p.data.peer.address).split('/')[0];
  backend = await listen();
  port = (backend.address() as AddressInfo).port;
});
after(async () => {
  backend.close();
  await s.close();
});

test('check now: up with status and response time, Host = domain, no credentials; down when stopped, up again; events, dashboard, history', async () => {
  const r = await call('/routes', 'POST', {
    domain: 'watched.example.com',
    peer_id: (await call('/peers')).data.peers[0].id,
    target_port: port,
    monitoring_enabled: true,
  });
  assert.equal(r.status, 201, JSON.stringify(r.data));
  const id = r.data.route.id;
  let c = await call(`/routes/${id}/check`, 'POST', {});
  assert.equal(c.status, 200, JSON.stringify(c.data));
  assert.equal(c.data.check.up, true);
  assert.equal(c.data.check.status, 200);
  assert.equal(typeof c.data.check.response_ms, 'number');
  assert.equal(seen.at(-1)?.host, 'watched.example.com');
  assert.equal(seen.at(-1)?.auth, undefined);
  let d = await call('/dashboard/stats');
  assert.deepEqual(d.data.monitoring, { total: 1, up: 1, down: 0 });
  assert.equal(d.data.latency, c.data.check.response_ms);

  await new Promise<void>((resolve) => backend.close(() => resolve()));
  c = await call(`/routes/${id}/check`, 'POST', {});
  assert.equal(c.data.check.up, false);
  assert.equal(c.data.check.status, null);
  assert.match(c.data.check.error!, /ECONNREFUSED/);
  assert.equal(c.data.check.error_code!.code, 'route.check.network', 'a coded category');
  assert.equal(c.data.check.error_code!.params!.detail, c.data.check.error, "the network's own words as detail");
  d = await call('/dashboard/stats');
  assert.deepEqual(d.data.monitoring, { total: 1, up: 0, down: 1 });

  backend = await listen(port);
  c = await call(`/routes/${id}/check`, 'POST', {});
  assert.equal(c.data.check.up, true);
  const events = (await call('/logs/activity?source=monitoring')).data.entries.map((e: ActivityEntry) => e.event_type);
  assert.deepEqual(events, ['route_up', 'route_down']);
  const h = await call(`/routes/${id}/checks?limit=10`);
  assert.deepEqual(
    h.data.checks.map((x: RouteCheck) => x.up),
    [true, false, true],
  );
  assert.equal((await call(`/routes/${id}/checks?limit=0`)).status, 400);
  assert.equal((await call('/routes/987654/check', 'POST', {})).status, 404);
});

test('the scheduler checks monitored routes only', async () => {
  const m = s.deps.monitor as { checkAll(): Promise<{ route_id: number }[]> };
  const peerId = (await call('/peers')).data.peers[0].id;
  const off = await call('/routes', 'POST', { domain: 'unwatched.example.com', peer_id: peerId, target_port: port });
  const results = await m.checkAll();
  assert.ok(results.length >= 1);
  assert.ok(!results.some((x) => x.route_id === off.data.route.id));
});

test('monitoring interval: GET default, PUT validates (400 + fields, nothing changed), applies to a running scheduler', async () => {
  assert.deepEqual((await call('/settings/monitoring')).data.monitoring, { interval_seconds: 30 });
  for (const bad of [{ interval_seconds: 4 }, { interval_seconds: 3601 }, { interval_seconds: 7.5 }, { interval_seconds: '10' }, {}]) {
    const r = await call('/settings/monitoring', 'PUT', bad);
    assert.equal(r.status, 400, JSON.stringify(bad));
    assert.ok(r.data.fields?.interval_seconds, `fields.interval_seconds for ${JSON.stringify(bad)}: ${JSON.stringify(r.data)}`);
  }
  assert.deepEqual((await call('/settings/monitoring')).data.monitoring, { interval_seconds: 30 }, 'nothing changed');

  // a scheduler that is running picks the new interval up at once
  const m = s.deps.monitor as { start(i: number): void; stop(): void; intervalSeconds: number | null };
  m.start(30);
  try {
    const r = await call('/settings/monitoring', 'PUT', { interval_seconds: 5 });
    assert.equal(r.status, 200, JSON.stringify(r.data));
    assert.deepEqual(r.data.monitoring, { interval_seconds: 5 });
    assert.equal(m.intervalSeconds, 5, 'the scheduler runs every 5 s now');
  } finally {
    m.stop();
  }
  assert.deepEqual((await call('/settings/monitoring')).data.monitoring, { interval_seconds: 5 });
  const ev = (await call('/logs/activity?source=settings')).data.entries.find((e: ActivityEntry) => /monitoring interval/.test(e.message));
  assert.ok(ev, 'the change is in the activity log');
  assert.deepEqual(ev.details, { interval_seconds: 5, previous: 30 });
});

test('L4 monitoring: a TCP route is checked with a TCP connect (up, then down), counted in the dashboard so up + down = total; UDP routes are refused, never counted; debug_enabled is refused on L4', async () => {
  const peerId = (await call('/peers')).data.peers[0].id;
  const accepted: number[] = [];
  const tcp = net.createServer((c) => {
    accepted.push(Date.now());
    c.destroy();
  });
  await new Promise<void>((resolve) => tcp.listen(0, peerIp, () => resolve()));
  tcp.unref(); // a failed assertion must not leave the test process waiting on it
  const tcpPort = (tcp.address() as AddressInfo).port;
  const r = await call('/routes', 'POST', {
    domain: 'tcp-watched.example.com',
    route_type: 'l4',
    l4_protocol: 'tcp',
    l4_listen_port: 40000 + (process.pid % 5000),
    peer_id: peerId,
    target_port: tcpPort,
    monitoring_enabled: true,
  });
  assert.equal(r.status, 201, JSON.stringify(r.data));
  const id = r.data.route.id;
  let c = await call(`/routes/${id}/check`, 'POST', {});
  assert.equal(c.status, 200, JSON.stringify(c.data));
  assert.equal(c.data.check.up, true);
  assert.equal(c.data.check.status, null);
  assert.equal(typeof c.data.check.response_ms, 'number');
  assert.equal(accepted.length, 1, 'a real connection reached the backend');
  await new Promise<void>((resolve) => tcp.close(() => resolve()));
  c = await call(`/routes/${id}/check`, 'POST', {});
  assert.equal(c.data.check.up, false);
  assert.match(c.data.check.error!, /ECONNREFUSED/);
  // the scheduler checks it too
  const m = s.deps.monitor as { checkAll(): Promise<{ route_id: number; up: boolean }[]> };
  assert.equal((await m.checkAll()).find((x) => x.route_id === id)?.up, false);
  const ev = (await call('/logs/activity?source=monitoring')).data.entries.find((e: ActivityEntry) => e.details?.route_id === id);
  assert.equal(ev?.event_type, 'route_down');

  // UDP: refused with 400 (nothing stored), and no check
  const udpPort = 45000 + (process.pid % 5000);
  const udpBad = await call('/routes', 'POST', {
    domain: 'udp-watched.example.com',
    route_type: 'l4',
    l4_protocol: 'udp',
    l4_listen_port: udpPort,
    peer_id: peerId,
    target_port: 53,
    monitoring_enabled: true,
  });
  assert.equal(udpBad.status, 422, JSON.stringify(udpBad.data));
  assert.ok(udpBad.data.fields!.monitoring_enabled);
  const udp = await call('/routes', 'POST', {
    domain: 'udp-watched.example.com',
    route_type: 'l4',
    l4_protocol: 'udp',
    l4_listen_port: udpPort,
    peer_id: peerId,
    target_port: 53,
  });
  assert.equal(udp.status, 201, JSON.stringify(udp.data));
  assert.equal((await call(`/routes/${udp.data.route.id}`, 'PUT', { monitoring_enabled: true })).status, 422);
  const uc = await call(`/routes/${udp.data.route.id}/check`, 'POST', {});
  assert.equal(uc.status, 409);
  assert.ok(uc.data.fields!.l4_protocol);
  // a UDP row with the flag stored before (raw write) is neither checked nor counted
  await s.deps.db.models.Route.update({ monitoring_enabled: true }, { where: { id: udp.data.route.id } });
  const round = await m.checkAll();
  assert.ok(!round.some((x) => x.route_id === udp.data.route.id));
  const d = (await call('/dashboard/stats')).data.monitoring;
  assert.equal(d.up + d.down, d.total, JSON.stringify(d));

  // debug_enabled on an L4 route: 422 (the trace shows HTTP requests only)
  const dbg = await call(`/routes/${id}`, 'PUT', { debug_enabled: true });
  assert.equal(dbg.status, 422);
  assert.ok(dbg.data.fields!.debug_enabled);
  assert.equal((await call(`/routes/${id}`)).data.route.debug_enabled, false);
});
