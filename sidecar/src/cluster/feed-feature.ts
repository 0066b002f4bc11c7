// The cluster's change feed (cluster/feed.ts, ctx.clusterFeed; only with GATEHOUSE_CLUSTER on
// PostgreSQL): its listener, started after the proxy, WireGuard and the licence (a notice is
// applied to them), and its periodic catch-up, a job of every node.
import type { Feature } from '../feature.js';
import { FEED_CATCH_UP_MS } from './feed.js';

export const clusterFeedFeature: Feature = {
  name: 'cluster-feed',
  async start(ctx) {
    const feed = ctx.clusterFeed;
    if (!feed) return;
    await feed.start();
    ctx.scheduler.every('Cluster catch-up', FEED_CATCH_UP_MS, () => feed.catchUp('periodic'), { scope: 'per-node' });
  },
  async stop(ctx) {
    await ctx.clusterFeed?.stop();
  },
};
