// The backends' live states (routes/backend-health.ts) from Caddy's health gauge, read here from a
// stand-in admin listener that serves the gauge lines Caddy's /metrics serves: a change of state is
// route_backend_down / route_backend_up, announced by the leader only (in a cluster a standby's
// health checks cannot pass: only the floating address's holder carries the tunnels), while every
// node keeps its own states. Through real Caddy and real tunnels: test/e2e/lb-tunnel.test.ts.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTestServer, apiToken, bearer, type TestServer, apiCall } from './lib/server.js';
import { BackendHealthService } from '../src/routes/backend-health.js';
import type { EventOf } from '../src/events.js';
import { rowToRoute } from '../src/routes/model.js';
import { findRowByPk } from '../src/db/define.js';

let s: TestServer;
let auth: Record<string, string>;
let metrics: http.Server;
let healthy = 1;
const call = apiCall(
  () => s,
  () => auth,
);

before(async () => {
  s = await startTestServer({ GATEHOUSE_RATE_LIMIT_ADMIN: '100000' });
  auth = bearer(await apiToken(s));
  metrics = http.createServer((_req, res) => {
    res.end(`# TYPE caddy_reverse_proxy_upstreams_healthy gauge\ncaddy_reverse_proxy_upstreams_healthy{upstream="${dial}"} ${healthy}\n`);
  });
  await new Promise<void>((r) => metrics.listen(0, '127.0.0.1', r));
});
after(async () => {
  await s.close();
  metrics.close();
});

let dial = '';

test('a backend that leaves the rotation is announced by the leader; a follower keeps the state without announcing it', async () => {
  const peer = (await call('/peers', 'POST', { name: 'web' })).data.peer;
  dial = `${peer.address.split('/')[0]}:8080`;
  const r = await call('/routes', 'POST', { domain: 'states.example.com', peer_id: peer.id, target_port: 8080, health_check: { path: '/', interval_s: 2 } });
  assert.equal(r.status, 201, JSON.stringify(r.data));
  const port = (metrics.address() as AddressInfo).port;
  const svc = new BackendHealthService({ ...s.deps, config: { ...s.deps.config, manageCaddy: true, caddyAdmin: `127.0.0.1:${port}` } });
  const seen: string[] = [];
  const off = s.deps.events.on(['route_backend_down', 'route_backend_up'], (e: EventOf<'route_backend_down'> | EventOf<'route_backend_up'>) => {
    seen.push(`${e.type} ${e.backend}`);
  });
  const route = async () => rowToRoute((await findRowByPk(s.deps.db.models.Route, r.data.route.id))!);
  const state = async () => (await svc.of(await route())).backends.map((b) => b.state);
  try {
    await svc.poll();
    assert.deepEqual(seen, [], 'first sight of an up backend is no change');
    healthy = 0;
    await svc.poll();
    assert.deepEqual(seen, [`route_backend_down ${dial}`]);
    assert.deepEqual(await state(), ['down']);
    // a follower: the state follows, no event
    s.deps.scheduler.setLeadership(() => false);
    healthy = 1;
    await svc.poll();
    assert.deepEqual(await state(), ['up']);
    assert.deepEqual(seen, [`route_backend_down ${dial}`]);
    healthy = 0;
    await svc.poll();
    assert.deepEqual(seen, [`route_backend_down ${dial}`]);
    // leading again: the next change is announced
    s.deps.scheduler.setLeadership(() => true);
    healthy = 1;
    await svc.poll();
    assert.deepEqual(seen, [`route_backend_down ${dial}`, `route_backend_up ${dial}`]);
  } finally {
    off();
    s.deps.scheduler.setLeadership(() => true);
    await s.deps.webhookQueue.flushed();
  }
});
