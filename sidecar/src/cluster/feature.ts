// The cluster feature (docs/guides/cluster.md): its table, GET /api/v1/cluster and, in cluster mode,
// its jobs. The service is ctx.cluster, built in app-context.ts, where a node joins before anything
// starts (a second node without the licence feature `cluster` refuses to start there) and where
// the scheduler is told to ask it who leads.
// - cluster leader (per node, every LEADER_RETRY_MS): a follower tries the leader's lock, the
//   leader checks its lock connection; run once at start, so a lone node leads at once;
// - cluster heartbeat (per node, every HEARTBEAT_INTERVAL_MS): this node's row;
// - cluster node check (singleton, every HEARTBEAT_INTERVAL_MS): the leader announces lost nodes.
import type { Feature } from '../feature.js';
import { HEARTBEAT_INTERVAL_MS, LEADER_RETRY_MS } from './config.js';
import { clusterEndpoints } from './endpoints.js';
import { defineClusterModels } from './nodes.js';

export const CLUSTER_JOBS = ['cluster leader', 'cluster heartbeat', 'cluster node check'] as const;

export const clusterFeature: Feature = {
  name: 'cluster',
  models: defineClusterModels,
  endpoints: (ctx) => clusterEndpoints(ctx),
  async start(ctx) {
    if (!ctx.cluster.enabled) return;
    const leader = ctx.scheduler.every('cluster leader', LEADER_RETRY_MS, () => ctx.cluster.lead(), { scope: 'per-node' });
    ctx.scheduler.every('cluster heartbeat', HEARTBEAT_INTERVAL_MS, () => ctx.cluster.heartbeat(), { scope: 'per-node' });
    ctx.scheduler.every('cluster node check', HEARTBEAT_INTERVAL_MS, () => ctx.cluster.sweepLost(), { scope: 'singleton' });
    await leader.runNow().catch(() => undefined);
  },
  async stop(ctx) {
    for (const name of CLUSTER_JOBS) ctx.scheduler.job(name)?.stop();
    await ctx.cluster.stop();
  },
};
