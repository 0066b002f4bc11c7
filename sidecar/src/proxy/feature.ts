// The proxy feature: the /caddy endpoints, the Caddy supervisor's start (GATEHOUSE_MANAGE_CADDY=true)
// and the reconcile loop. The services are ctx.proxy (render + load, coalesced, all-or-nothing
// writes) and ctx.caddySupervisor (app-context.ts).
//
// GATEHOUSE_MANAGE_CADDY=false is the "no proxy" mode: no Caddy is started and nothing is loaded;
// every write still renders the configuration (so it is known to build) and records its hash.
import type { Feature } from '../feature.js';
import { proxyEndpoints } from './endpoints.js';

export const RECONCILE_INTERVAL_MS = 10_000;

export const proxyFeature: Feature = {
  name: 'proxy',
  endpoints: (ctx) => proxyEndpoints(ctx),
  async start(ctx) {
    const { proxy, caddySupervisor } = ctx;
    if (caddySupervisor) await caddySupervisor.start();
    else await proxy.apply({ reason: 'startup (no proxy mode)' });
    ctx.scheduler.every('proxy reconcile', RECONCILE_INTERVAL_MS, () => proxy.apply({ verify: true }), { scope: 'per-node' });
  },
  async stop(ctx) {
    ctx.scheduler.job('proxy reconcile')?.stop();
    await ctx.caddySupervisor?.stop();
  },
};
