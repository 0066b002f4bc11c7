// The cluster feature (docs/guides/cluster.md): its table, GET /api/v1/cluster and, in cluster mode,
// its jobs. The service is ctx.cluster, built in app-context.ts, where a node joins before anything
// starts (a second node without the licence feature `cluster` refuses to start there) and where
// the scheduler is told to ask it who leads.
// - cluster leader (per node, every LEADER_RETRY_MS): a follower tries the leader's lock, the
//   leader checks its lock connection; run once at start, so a lone node leads at once; a node
//   that takes the lead runs every singleton job at once (scheduler.leadershipGained). With a
//   floating address, a VRRP backup does not try, and a leader that becomes backup steps down;
// - cluster heartbeat (per node, every HEARTBEAT_INTERVAL_MS): this node's row;
// - cluster node check (singleton, every HEARTBEAT_INTERVAL_MS): the leader announces lost nodes;
// - cluster VRRP (per node, every VRRP_CHECK_MS, with a floating address configured): keepalived's
//   state for this node (cluster/vrrp-watch.ts) goes to its row, and only the master carries the
//   WireGuard tunnels (WireGuardService.setCarrier); becoming master takes them over at once
//   (takeOver: the peers' handshakes start from here, from the endpoints the carrier stored: every
//   ENDPOINT_WATCH_MS it stores the new ones, 'cluster WireGuard endpoints'). Read once before WireGuard starts (this
//   feature starts first), so a standby's fresh interface restores no endpoint, and before the
//   first try for the lead.
import type { Feature } from '../feature.js';
import { HEARTBEAT_INTERVAL_MS, LEADER_RETRY_MS } from './config.js';
import { clusterEndpoints } from './endpoints.js';
import { defineClusterModels } from './nodes.js';
import { VrrpWatcher } from './vrrp-watch.js';

export const CLUSTER_JOBS = ['cluster leader', 'cluster heartbeat', 'cluster node check', 'cluster VRRP', 'cluster WireGuard endpoints'] as const;

/** How often a node reads its VRRP state: it bounds how late a new master starts the tunnels' handshakes. */
export const VRRP_CHECK_MS = 250;
/**
 * How often the carrier stores the peers' new endpoints (WireGuardService.storeEndpoints): a peer that
 * connected or roamed less than this before a failure has no endpoint for the next carrier.
 */
export const ENDPOINT_WATCH_MS = 1000;

export const clusterFeature: Feature = {
  name: 'cluster',
  models: defineClusterModels,
  endpoints: (ctx) => clusterEndpoints(ctx),
  async start(ctx) {
    if (!ctx.cluster.enabled) return;
    // the floating address first: whether this node may lead depends on its VRRP role
    const { vrrp } = ctx.config;
    let watcher: VrrpWatcher | null = null;
    if (vrrp.address) {
      const w = new VrrpWatcher(
        { stateFile: vrrp.stateFile, address: vrrp.address, pidFile: vrrp.pidFile },
        {
          report: async (role, status) => {
            ctx.log.info(`VRRP: this node is ${role} (${status.reason})`);
            await ctx.cluster.reportVrrp(role);
          },
          takeOver: async () => {
            const peers = await ctx.wireguard.takeOver();
            ctx.log.info('VRRP: this node carries the tunnels now', { peers_nudged: peers });
          },
        },
      );
      await w.tick().catch((err: unknown) => ctx.log.warn('reading the VRRP state failed', { err: String(err) }));
      ctx.wireguard.setCarrier(() => w.carrier);
      ctx.scheduler.every('cluster VRRP', VRRP_CHECK_MS, () => w.tick(), { scope: 'per-node' });
      ctx.scheduler.every('cluster WireGuard endpoints', ENDPOINT_WATCH_MS, () => ctx.wireguard.storeEndpoints(), { scope: 'per-node' });
      watcher = w;
    }
    // A VRRP backup does not lead: the leader's jobs that reach backends (uptime checks, RDP status,
    // gateway checks) go through the tunnels, which only the address holder carries. A leader that
    // becomes backup steps down; the master takes the lock at its next try. Taking the lead runs the
    // singleton jobs at once (what fell due while no node led) and the scheduled backups missed in
    // the gap (util/scheduler.ts leadershipGained).
    const lead = async () => {
      const was = ctx.cluster.isLeader();
      if (watcher?.current === 'backup') {
        if (was) await ctx.cluster.stepDown('this node is a VRRP backup: the address holder leads');
        return;
      }
      await ctx.cluster.lead();
      if (!was && ctx.cluster.isLeader()) void ctx.scheduler.leadershipGained();
    };
    const leader = ctx.scheduler.every('cluster leader', LEADER_RETRY_MS, lead, { scope: 'per-node' });
    ctx.scheduler.every('cluster heartbeat', HEARTBEAT_INTERVAL_MS, () => ctx.cluster.heartbeat(), { scope: 'per-node' });
    ctx.scheduler.every('cluster node check', HEARTBEAT_INTERVAL_MS, () => ctx.cluster.sweepLost(), { scope: 'singleton' });
    await leader.runNow().catch(() => undefined);
  },
  async stop(ctx) {
    for (const name of CLUSTER_JOBS) ctx.scheduler.job(name)?.stop();
    await ctx.cluster.stop();
  },
};
