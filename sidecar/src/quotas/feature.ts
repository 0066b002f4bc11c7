// Per-peer data quotas (quotas/service.ts, ctx.quotas): the counting job and its event subscriptions
// (started after WireGuard and the speed caps, whose throttles it sets), and the reset and grant
// endpoints. The quota field itself is part of the peers and peer-groups APIs.
import type { Feature } from '../feature.js';
import { quotaEndpoints } from './endpoints.js';

export const quotasFeature: Feature = {
  name: 'quotas',
  endpoints: (ctx) => quotaEndpoints(ctx),
  async start(ctx) {
    await ctx.quotas.start();
  },
  stop(ctx) {
    ctx.quotas.stop();
  },
};
