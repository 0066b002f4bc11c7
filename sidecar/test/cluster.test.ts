// The cluster core (src/cluster, docs/guides/cluster.md): GET /api/v1/cluster alone and in a
// cluster; on real PostgreSQL two nodes on one database (two servers in this process, one manual
// clock): the licence gate refuses a second node without `cluster`, one node leads and runs the
// singleton jobs, the leader's lock connection ended → the other leads within seconds and runs them,
// a node without heartbeats is announced lost once, and comes back; a lost node is removed
// (DELETE /cluster/nodes/:name: by role and scope, bad input, 404, 409 for a live node and for the
// node itself); two unlicensed nodes joining at the same instant: exactly one joins.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { manualClock } from '../src/util/clock.js';
import { ClusterRefused, ClusterService } from '../src/cluster/service.js';
import { LOST_AFTER_MS } from '../src/cluster/config.js';
import { COMMUNITY, isFeatureEnabled } from '../src/licence/features.js';
import { apiToken, bearer, login, startTestServer, type TestServer } from './lib/server.js';
import { waitFor } from '../../test/lib/wait.js';
import type { BodyOf } from './lib/api-types.js';

/** DELETE /cluster/nodes/:name: the removal, or a refusal. */
type Removal = BodyOf<'DELETE', '/api/v1/cluster/nodes/:name'>;
const pgOnly = { skip: process.env.TEST_DATABASE_URL ? false : 'PostgreSQL only (TEST_DATABASE_URL)' };
const servers: TestServer[] = [];
after(async () => {
  for (const s of servers.reverse()) await s.close();
});

test('without GATEHOUSE_CLUSTER: one node, itself the leader; read-only and full-access tokens read it, scoped ones get 403; the event kinds are webhook kinds', async () => {
  const s = await startTestServer({ GATEHOUSE_NODE_NAME: 'solo', GATEHOUSE_RATE_LIMIT_LOGIN: '1000' });
  servers.push(s);
  const r = await s.req('/api/v1/cluster', { headers: bearer(await apiToken(s, ['read-only'])) });
  assert.equal(r.status, 200, JSON.stringify(r.data));
  assert.equal(r.data.enabled, false);
  assert.equal(r.data.leader, 'solo');
  assert.deepEqual(
    r.data.nodes.map((n: { name: string; role: string; vrrp: string; lost: boolean }) => [n.name, n.role, n.vrrp, n.lost]),
    [['solo', 'leader', 'unknown', false]],
  );
  assert.equal((await s.req('/api/v1/cluster', { headers: bearer(await apiToken(s, ['system'])) })).status, 403);
  assert.equal((await s.req('/api/v1/cluster', { headers: bearer(await apiToken(s, ['peers'])) })).status, 403);
  assert.equal((await s.req('/api/v1/cluster')).status, 401);
  assert.equal(s.deps.scheduler.isLeader(), true, 'alone, the node runs the singleton jobs');
  const kinds = JSON.stringify((await s.req('/api/v1/webhooks/events', { headers: bearer(await apiToken(s)) })).data);
  for (const k of ['cluster_node_joined', 'cluster_node_lost', 'cluster_leader_changed']) assert.ok(kinds.includes(k), k);
});

test('DELETE /cluster/nodes/:name: admin only (sessions and full-access tokens), 400 with fields for a bad name, 404 unknown, 409 for the node itself; nothing changed', async () => {
  const s = servers[0]!;
  const del = (name: string, headers: Record<string, string> = {}) => s.req<Removal>(`/api/v1/cluster/nodes/${name}`, { method: 'DELETE', headers });
  const heads: Record<string, Record<string, string>> = {};
  for (const role of ['operator', 'viewer', 'user'] as const) {
    await s.deps.users.create({ username: `cl-${role}`, password: 'role-password-123', role });
    const c = await login(s, { username: `cl-${role}`, password: 'role-password-123' });
    heads[role] = { cookie: c.cookie, 'x-csrf-token': c.csrf };
  }
  const admin = await login(s);
  assert.equal((await del('ghost')).status, 401, 'no credentials');
  for (const scopes of [['read-only'], ['system'], ['peers']]) assert.equal((await del('ghost', bearer(await apiToken(s, scopes)))).status, 403, scopes.join());
  for (const role of ['operator', 'viewer', 'user']) assert.equal((await del('ghost', heads[role])).status, 403, role);
  const token = bearer(await apiToken(s));
  const before = (await s.req('/api/v1/cluster', { headers: token })).data;

  for (const bad of ['bad%20name', '-dash-first', 'x'.repeat(64), 'a%2Fb']) {
    const r = await del(bad, token);
    assert.equal(r.status, 400, `${bad}: ${JSON.stringify(r.data)}`);
    assert.match(String(r.data.fields?.name), /node name/, bad);
  }
  const unknown = await del('ghost', { cookie: admin.cookie, 'x-csrf-token': admin.csrf });
  assert.equal(unknown.status, 404, JSON.stringify(unknown.data));
  assert.match(String(unknown.data.error), /No cluster node named ghost/);
  const self = await del('solo', token);
  assert.equal(self.status, 409, JSON.stringify(self.data));
  assert.match(String(self.data.error), /cannot remove itself/);
  assert.deepEqual(
    (await s.req('/api/v1/cluster', { headers: token })).data.nodes.map((n) => n.name),
    before.nodes.map((n: { name: string }) => n.name),
  );
  const kinds = JSON.stringify((await s.req('/api/v1/webhooks/events', { headers: token })).data);
  assert.ok(kinds.includes('cluster_node_removed'), 'a webhook kind');
});

test('two nodes on one PostgreSQL: licence gate, one leader, singleton jobs on the leader only, takeover within seconds, lost and back', pgOnly, async () => {
  const clock = manualClock(Date.now());
  const opts = { clock, timers: clock.timers };
  const cluster = { GATEHOUSE_CLUSTER: 'true', GATEHOUSE_LICENCE_KEY: '' };
  const a = await startTestServer({ ...cluster, GATEHOUSE_NODE_NAME: 'edge-a' }, opts);
  servers.push(a);
  // a second live node without the licence feature `cluster` refuses to start
  await assert.rejects(
    startTestServer({ ...cluster, GATEHOUSE_NODE_NAME: 'edge-b', DATABASE_URL: a.databaseUrl! }, opts),
    (err: Error) =>
      err instanceof ClusterRefused && /edge-b refuses to start: .*second live node .*\(live: edge-a\).*licence feature cluster/.test(err.message),
  );
  // with a licence that has it (activated at start, stored for both), it joins
  const { GATEHOUSE_LICENCE_KEY: _none, ...licensed } = cluster;
  const b = await startTestServer({ ...licensed, GATEHOUSE_NODE_NAME: 'edge-b', DATABASE_URL: a.databaseUrl! }, opts);
  servers.push(b);

  await a.deps.cluster.lead();
  await b.deps.cluster.lead();
  assert.equal(a.deps.cluster.isLeader(), true);
  assert.equal(b.deps.cluster.isLeader(), false, 'the lock is held by edge-a');

  const runs = { a: 0, b: 0 };
  a.deps.scheduler.every('probe', 1000, () => void runs.a++, { scope: 'singleton' });
  b.deps.scheduler.every('probe', 1000, () => void runs.b++, { scope: 'singleton' });
  const idle = () => Promise.all([a.deps.scheduler.idle(), b.deps.scheduler.idle()]);
  await clock.advanceAsync(2000, idle);
  assert.deepEqual(runs, { a: 2, b: 0 }, 'the follower runs no singleton job');

  const token = await apiToken(a);
  for (const s of [a, b]) {
    const r = await s.req('/api/v1/cluster', { headers: bearer(token) });
    assert.equal(r.status, 200);
    assert.equal(r.data.leader, 'edge-a');
    assert.deepEqual(
      r.data.nodes.map((n: { name: string; role: string }) => [n.name, n.role]),
      [
        ['edge-a', 'leader'],
        ['edge-b', 'follower'],
      ],
    );
  }

  // the leader's lock connection dies (as when its process is killed): the other node leads within seconds
  const pg = (await import('pg')).default;
  const admin = new pg.Client({ connectionString: a.databaseUrl });
  await admin.connect();
  const t0 = Date.now();
  try {
    await admin.query('SELECT pg_terminate_backend($1)', [a.deps.cluster.lockBackendPid()]);
  } finally {
    await admin.end();
  }
  await waitFor(() => !a.deps.cluster.isLeader(), 5000, 'edge-a notices it lost the lock');
  await waitFor(
    async () => {
      await b.deps.cluster.lead();
      return b.deps.cluster.isLeader();
    },
    5000,
    { what: 'edge-b takes the lock', intervalMs: 200 },
  );
  assert.ok(Date.now() - t0 < 5000, `takeover took ${Date.now() - t0} ms`);
  await a.deps.cluster.lead();
  assert.equal(a.deps.cluster.isLeader(), false, 'edge-a reconnects as a follower');
  await clock.advanceAsync(1000, idle);
  assert.deepEqual(runs, { a: 2, b: 1 }, 'the new leader runs the singleton job, the old one no more');
  const after1 = await a.req('/api/v1/cluster', { headers: bearer(token) });
  assert.equal(after1.data.leader, 'edge-b');

  // edge-a sends no heartbeat for LOST_AFTER_MS: the leader announces it lost once; its next heartbeat brings it back
  await clock.advanceAsync(LOST_AFTER_MS + 1000, idle);
  await b.deps.cluster.heartbeat();
  await b.deps.cluster.sweepLost();
  await b.deps.cluster.sweepLost();
  const lost = await b.req('/api/v1/cluster', { headers: bearer(token) });
  assert.deepEqual(
    lost.data.nodes.map((n: { name: string; lost: boolean }) => [n.name, n.lost]),
    [
      ['edge-a', true],
      ['edge-b', false],
    ],
  );
  await a.deps.cluster.heartbeat();

  const rows = (await a.req('/api/v1/logs/activity?source=cluster&limit=50', { headers: bearer(token) })).data.entries;
  const seen = rows
    .map((r) => `${r.event_type} ${String(r.details?.name ?? r.details?.leader)}${r.details?.previous ? ` (was ${String(r.details.previous)})` : ''}`)
    .reverse();
  assert.deepEqual(seen, [
    'cluster_node_joined edge-a',
    'cluster_node_joined edge-b',
    'cluster_leader_changed edge-a',
    'cluster_leader_changed edge-b (was edge-a)',
    'cluster_node_lost edge-a',
    'cluster_node_joined edge-a',
  ]);

  // removing a node: refused while it is live (409, the row stays), done once it is lost
  const remove = (name: string) => b.req<Removal>(`/api/v1/cluster/nodes/${name}`, { method: 'DELETE', headers: bearer(token) });
  const live = await remove('edge-a');
  assert.equal(live.status, 409, JSON.stringify(live.data));
  assert.match(String(live.data.error), /edge-a is live .*only a lost node can be removed/);
  assert.equal((await remove('edge-b')).status, 409, 'the node that answers');
  await clock.advanceAsync(LOST_AFTER_MS + 1000, idle);
  await b.deps.cluster.heartbeat();
  const gone = await remove('edge-a');
  assert.equal(gone.status, 200, JSON.stringify(gone.data));
  assert.equal(gone.data.removed, 'edge-a');
  assert.deepEqual(
    (await b.req('/api/v1/cluster', { headers: bearer(token) })).data.nodes.map((n) => n.name),
    ['edge-b'],
  );
  assert.equal((await remove('edge-a')).status, 404, 'removed once');
  const removed = (await b.req('/api/v1/logs/activity?source=cluster&limit=1', { headers: bearer(token) })).data.entries[0];
  assert.equal(removed.event_type, 'cluster_node_removed');
  assert.equal(removed.details?.name, 'edge-a');
  assert.equal(typeof removed.user_id, 'number', "the token's user removed it");

  // the licence gate is one transaction per join under an advisory lock: with no node live, two
  // unlicensed nodes joining at the same instant, one joins and the other refuses naming it
  await clock.advanceAsync(LOST_AFTER_MS + 1000, idle);
  const community = { isEnabled: (f: Parameters<typeof isFeatureEnabled>[1]) => isFeatureEnabled(COMMUNITY, f) };
  const racers = ['race-1', 'race-2'].map(
    (name) =>
      new ClusterService({
        ...a.deps,
        config: { ...a.deps.config, cluster: { ...a.deps.config.cluster, nodeName: name } },
        features: community,
        configHash: () => null,
      }),
  );
  const results = await Promise.allSettled(racers.map((r) => r.join()));
  await Promise.all(racers.map((r) => r.stop()));
  const joined = results.flatMap((r, i) => (r.status === 'fulfilled' ? [racers[i]!.name] : []));
  assert.equal(joined.length, 1, `exactly one joins: ${JSON.stringify(results.map((r) => r.status))}`);
  const refused = results.find((r) => r.status === 'rejected');
  assert.ok(refused?.reason instanceof ClusterRefused, String(refused?.reason));
  assert.match((refused.reason as Error).message, new RegExp(`\\(live: ${joined[0]}\\)`));
});
