// End to end on REAL PostgreSQL and two REAL Caddies: two cluster nodes (two sidecars in this
// process, GATEHOUSE_CLUSTER, node names a and b) on one database, each supervising its own Caddy
// on its own ports, one master key between them (as the nodes of a cluster share it). The change
// feed (sidecar/src/cluster/feed.ts):
// - a route created on A is served by B's Caddy: the time from A's 201 (and from the call) until
//   B's Caddy answers with the backend, p50 and p99 over 20 creates (printed; p50 under 100 ms);
// - a route edited and deleted on A follows on B;
// - B's listener stopped: changes on A are NOT on B (missed), and when it listens again its
//   catch-up repairs exactly those; its connection killed in PostgreSQL: it reconnects by itself;
// - a rate limit spent on A counts on B (rate_limits in PostgreSQL).
// Peers live on 127.77.<n>.0/24 with WireGuard not managed (as sidecar/test/proxy-caddy.test.ts):
// the backend listens on the peer's own loopback address. PostgreSQL: TEST_DATABASE_URL, else the
// local cluster of scripts/pg-test-server.sh (as root).
//   node --import tsx --test test/e2e/cluster-feed.test.ts
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { apiCall, apiToken, bearer, freshPgDatabase, startTestServer, type ApiCall, type TestServer } from '../../sidecar/test/lib/server.js';
import { CADDY, managedCaddyEnv } from '../lib/caddy-env.js';
import { freePort } from '../lib/ports.js';
import { getWithHost } from '../lib/http-get.js';
import { waitFor } from '../lib/wait.js';
import type { ClusterFeed } from '../../sidecar/src/cluster/feed.js';
import { HTTP_SERVER } from '../../sidecar/src/proxy/fragments/servers.js';
import { testPostgresUrl } from '../lib/cluster-net.js';
import { findRows } from '../../sidecar/src/db/define.js';

const pgBase = testPostgresUrl;

const base = fs.existsSync(CADDY) ? pgBase() : null;
const skip = !fs.existsSync(CADDY)
  ? `no ${CADDY}: build it with bash scripts/build-caddy.sh`
  : !base
    ? 'no PostgreSQL (TEST_DATABASE_URL or scripts/pg-test-server.sh)'
    : false;

interface Node {
  s: TestServer;
  http: number;
  api: ApiCall;
  feed: ClusterFeed;
}
let a: Node;
let b: Node;
let peerId: number;
let backendPort: number;
const LOGIN_LIMIT = 8;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-cluster-feed-'));
let backend: http.Server;

async function startNode(name: string, databaseUrl: string, subnet: string): Promise<Node> {
  const ports = { http: await freePort(), https: await freePort(), admin: await freePort() };
  const s = await startTestServer(
    {
      ...managedCaddyEnv(ports),
      DATABASE_URL: databaseUrl,
      GATEHOUSE_CLUSTER: 'true',
      GATEHOUSE_NODE_NAME: name,
      GATEHOUSE_MASTER_KEY_FILE: path.join(tmp, 'master.key'),
      GATEHOUSE_WG_SUBNET: subnet,
      GATEHOUSE_RATE_LIMIT_ADMIN: '100000',
      GATEHOUSE_RATE_LIMIT_LOGIN: String(LOGIN_LIMIT),
    },
    { startFeatures: true },
  );
  const h = bearer(await apiToken(s));
  const api = apiCall(
    () => s,
    () => h,
  );
  assert.ok(s.deps.clusterFeed, `node ${name} runs the change feed`);
  await s.deps.clusterFeed.connected();
  return { s, http: ports.http, api, feed: s.deps.clusterFeed };
}

/** What B's (or A's) Caddy answers for a host: the backend's body, or the status of anything else. */
async function served(n: Node, host: string): Promise<string> {
  const r = await getWithHost(n.http, host, { timeoutMs: 2000 });
  if (!r) return 'no answer';
  return r.status === 200 ? r.body : `status ${r.status}`;
}

const pct = (xs: number[], p: number) => [...xs].sort((x, y) => x - y)[Math.min(xs.length - 1, Math.ceil((p / 100) * xs.length) - 1)];

before(async () => {
  if (skip) return;
  const databaseUrl = await freshPgDatabase(base!);
  const subnet = `127.77.${10 + (process.pid % 200)}.0/24`;
  a = await startNode('a', databaseUrl, subnet);
  b = await startNode('b', databaseUrl, subnet);
  const peer = await a.api('/peers', 'POST', { name: 'backend-host' });
  assert.equal(peer.status, 201, JSON.stringify(peer.data));
  peerId = peer.data.peer.id;
  const peerAddr = String(peer.data.peer.address).split('/')[0];
  backend = http.createServer((req, res) => res.end(`backend ${req.headers.host}`));
  await new Promise<void>((r) => backend.listen(0, peerAddr, () => r()));
  backendPort = (backend.address() as net.AddressInfo).port;
});

after(async () => {
  if (skip) return;
  backend?.close();
  await b?.s.close();
  await a?.s.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

test('a route created on A is served by B within 100 ms (p50 over 20 creates); edited and deleted on A, it follows on B', { skip }, async () => {
  const fromAck: number[] = [];
  const fromCall: number[] = [];
  const ids: number[] = [];
  const fullLoads = { a: a.s.deps.proxy.fullLoads, b: b.s.deps.proxy.fullLoads };
  for (let i = 0; i < 20; i++) {
    const host = `c${i}.feed.test`;
    const t0 = performance.now();
    const c = await a.api('/routes', 'POST', { domain: host, peer_id: peerId, target_port: backendPort });
    const tAck = performance.now();
    assert.equal(c.status, 201, JSON.stringify(c.data));
    ids.push(c.data.route.id);
    await waitFor(async () => (await served(b, host)) === `backend ${host}`, 5000, { what: `${host} on B`, intervalMs: 2 });
    const tLive = performance.now();
    fromAck.push(tLive - tAck);
    fromCall.push(tLive - t0);
  }
  const f = (xs: number[]) => `p50 ${pct(xs, 50).toFixed(1)} ms, p99 ${pct(xs, 99).toFixed(1)} ms, max ${Math.max(...xs).toFixed(1)} ms`;
  console.log(`# route created on A → served by B's Caddy: from A's 201: ${f(fromAck)}; from the call: ${f(fromCall)}`);
  assert.ok(pct(fromAck, 50) < 100, `p50 from A's acknowledgment to live on B: ${f(fromAck)}`);
  assert.equal(b.feed.status().last_error, null);

  // edited on A (a new domain: the old host goes, the new one comes)
  const e = await a.api(`/routes/${ids[0]}`, 'PUT', { domain: 'renamed.feed.test' });
  assert.equal(e.status, 200, JSON.stringify(e.data));
  await waitFor(async () => (await served(b, 'renamed.feed.test')) === 'backend renamed.feed.test', 5000, { what: 'the renamed host on B', intervalMs: 5 });
  assert.equal(await served(b, 'c0.feed.test'), 'status 404');
  // deleted on A → gone on B
  const d = await a.api(`/routes/${ids[1]}`, 'DELETE');
  assert.equal(d.status, 200, JSON.stringify(d.data));
  await waitFor(async () => (await served(b, 'c1.feed.test')) === 'status 404', 5000, { what: 'c1 gone on B', intervalMs: 5 });
  // both Caddies run the same hosts (19 routes' hosts, besides what both render for themselves)
  const hostsOf = (n: Node) => [...n.s.deps.proxy.state.hostHashes(HTTP_SERVER).keys()].filter((h) => h.endsWith('.feed.test')).sort();
  assert.equal(hostsOf(b).length, 19);
  assert.deepEqual(hostsOf(b), hostsOf(a));
  // B loaded in full exactly when A did (the first host: the frame changes), every other change host by host
  assert.equal(b.s.deps.proxy.fullLoads - fullLoads.b, a.s.deps.proxy.fullLoads - fullLoads.a, 'B made the full loads A made, no more');
  assert.ok(b.s.deps.proxy.hostChanges >= 20, `B applied host changes: ${b.s.deps.proxy.hostChanges}`);
});

test('B missed notifications (its listener stopped): the catch-up when it listens again repairs exactly those', { skip }, async () => {
  const gone = await a.api('/routes', 'POST', { domain: 'gone.feed.test', peer_id: peerId, target_port: backendPort });
  assert.equal(gone.status, 201);
  await waitFor(async () => (await served(b, 'gone.feed.test')) === 'backend gone.feed.test', 5000, { what: 'gone.feed.test on B' });
  await b.feed.stop();
  const missed = await a.api('/routes', 'POST', { domain: 'missed.feed.test', peer_id: peerId, target_port: backendPort });
  assert.equal(missed.status, 201);
  assert.equal((await a.api(`/routes/${gone.data.route.id}`, 'DELETE')).status, 200);
  assert.equal(await served(a, 'missed.feed.test'), 'backend missed.feed.test');
  // B heard nothing: it still serves the deleted route and not the new one (what a missed notice means)
  assert.equal(await served(b, 'missed.feed.test'), 'status 404');
  assert.equal(await served(b, 'gone.feed.test'), 'backend gone.feed.test');
  const before = b.feed.status().catch_ups;
  const fullLoads = b.s.deps.proxy.fullLoads;
  await b.feed.start();
  await waitFor(async () => (await served(b, 'missed.feed.test')) === 'backend missed.feed.test', 5000, { what: 'the catch-up on B' });
  await waitFor(async () => (await served(b, 'gone.feed.test')) === 'status 404', 5000, { what: 'the deleted route gone on B' });
  assert.ok(b.feed.status().catch_ups > before, 'a catch-up ran when B listened again');
  assert.equal(b.s.deps.proxy.fullLoads, fullLoads, 'the catch-up repaired hosts, without a full load');

  // its connection killed in PostgreSQL: it reconnects by itself and applies what comes next
  const pid = b.feed.listenerPid();
  assert.ok(pid, 'B listens on its own connection');
  await a.s.deps.db.sequelize.query('SELECT pg_terminate_backend(:pid)', { replacements: { pid } });
  await waitFor(() => b.feed.status().reconnects > 0 && b.feed.listenerPid() !== null && b.feed.listenerPid() !== pid, 10_000, { what: 'B reconnected' });
  const after = await a.api('/routes', 'POST', { domain: 'after.feed.test', peer_id: peerId, target_port: backendPort });
  assert.equal(after.status, 201);
  await waitFor(async () => (await served(b, 'after.feed.test')) === 'backend after.feed.test', 5000, { what: 'after.feed.test on B' });
});

test('a setting saved on A is what B answers (its settings cache dropped)', { skip }, async () => {
  const theme = async (n: Node) => (await n.api('/settings/app')).data.app.default_theme;
  assert.equal(await theme(b), 'default'); // B has it cached now
  const put = await a.api('/settings/default-theme', 'PUT', { theme: 'pro' });
  assert.equal(put.status, 200, JSON.stringify(put.data));
  await waitFor(async () => (await theme(b)) === 'pro', 5000, { what: "A's default theme on B" });
});

test('a rate limit spent on A counts on B (shared in PostgreSQL)', { skip }, async () => {
  const attempt = (n: Node, i: number) =>
    n.s.req('/login', { method: 'POST', json: { username: `nobody${i}`, password: 'wrong-password-1' }, headers: { accept: 'application/json' } });
  const first = await attempt(a, 0);
  assert.equal(first.status, 401, JSON.stringify(first.data));
  const left = Number(first.headers.get('ratelimit-remaining'));
  assert.ok(left > 0 && left < LOGIN_LIMIT, `remaining after A's attempt: ${left}`);
  const onB = await attempt(b, 1);
  assert.equal(Number(onB.headers.get('ratelimit-remaining')), left - 1, 'B counts on from A');
  let i = 2;
  let last = onB;
  while (last.status !== 429 && i < 2 * LOGIN_LIMIT) last = await attempt(i % 2 ? b : a, i++);
  assert.equal(last.status, 429);
  assert.equal(i, left + 2, 'the limit is reached after exactly the attempts left, counted on both nodes');
  assert.equal((await attempt(a, 99)).status, 429);
  assert.equal((await attempt(b, 98)).status, 429);
});

test(
  'work that runs once: a webhook queued on the follower is sent by the leader at once (asked through the feed), exactly once; a backup job written on the follower is scheduled on the leader',
  { skip },
  async () => {
    await a.s.deps.cluster.lead();
    await b.s.deps.cluster.lead();
    assert.equal(a.s.deps.cluster.isLeader(), true, 'A started first and leads');
    assert.equal(b.s.deps.cluster.isLeader(), false);
    const deliveries: { id: string; event: string; at: number }[] = [];
    const receiver = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        deliveries.push({ id: String(req.headers['x-gatehouse-delivery']), event: String(req.headers['x-gatehouse-event']), at: performance.now() });
        res.end('ok');
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
    try {
      const port = (receiver.address() as net.AddressInfo).port;
      const hook = await b.api('/webhooks', 'POST', {
        name: 'once',
        url: `http://127.0.0.1:${port}/hook`,
        events: ['route_created'],
        enabled: true,
        secret: 'cluster-webhook-secret-0123456789',
        allow_private: true,
      });
      assert.equal(hook.status, 201, JSON.stringify(hook.data));
      // the route is created on the follower: its event is queued there, and only the leader sends
      const t0 = performance.now();
      const r = await b.api('/routes', 'POST', { domain: 'hooked.cluster.test', peer_id: peerId, target_port: backendPort });
      assert.equal(r.status, 201, JSON.stringify(r.data));
      await waitFor(() => deliveries.length > 0, 5000, { what: 'the delivery of the follower’s event', intervalMs: 20 });
      const after = deliveries[0].at - t0;
      console.log(`# cluster: a webhook queued on the follower delivered by the leader ${after.toFixed(0)} ms after the write`);
      assert.ok(after < 3000, `delivered ${after.toFixed(0)} ms after the write (the leader's safety tick is 30 s)`);
      // exactly once: wait for both queues to go idle, then count
      await Promise.all([a.s.deps.webhookQueue.idle(), b.s.deps.webhookQueue.idle()]);
      const rows = await findRows(a.s.deps.db.models.WebhookDelivery, { where: { webhook_id: hook.data.webhook.id } });
      assert.deepEqual(
        rows.map((x) => [x.event, x.status, Number(x.attempts)]),
        [['route_created', 'delivered', 1]],
      );
      assert.deepEqual(
        deliveries.map((d) => d.id),
        [rows[0].uid],
      );
    } finally {
      receiver.close();
    }
    // a backup job created on the follower: the leader (which makes the runs) has its schedule at once
    const job = await b.api('/settings/autobackup', 'POST', {
      name: 'nightly',
      schedule: 'daily',
      keep: 2,
      target: 'local',
      passphrase: 'cluster backup passphrase',
    });
    assert.equal(job.status, 201, JSON.stringify(job.data));
    await waitFor(async () => (await a.api(`/settings/autobackup/${job.data.job.id}`)).data.job.next_run_at !== null, 5000, {
      what: 'the follower’s backup job scheduled on the leader',
    });
  },
);
