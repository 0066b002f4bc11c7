// The peers feature: WireGuard interface + poller, peers, groups, tags, internal DNS data and the
// dashboard (services ctx.wireguard, ctx.peers, ctx.groups, ctx.tags, ctx.dns, ctx.dashboard,
// built in app-context.ts).
import type { Feature } from '../feature.js';
import { wgEndpoints } from '../wireguard/endpoints.js';
import { dnsEndpoints } from '../dns/endpoints.js';
import { groupEndpoints } from '../groups/endpoints.js';
import { tagEndpoints } from '../tags/endpoints.js';
import { dashboardEndpoints } from '../dashboard/endpoints.js';
import { peerEndpoints } from './endpoints.js';

export const peersFeature: Feature = {
  name: 'peers',
  endpoints: (ctx) => [...peerEndpoints(ctx), ...groupEndpoints(ctx), ...tagEndpoints(ctx), ...wgEndpoints(ctx), ...dashboardEndpoints(ctx), ...dnsEndpoints(ctx)],
  async start(ctx) {
    await ctx.wireguard.start();
    await ctx.dns.refresh();
  },
  async stop(ctx) {
    await ctx.wireguard.stop();
  },
};
