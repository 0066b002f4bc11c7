// The WireGuard feature: the interface's endpoints (wireguard/endpoints.ts), and the interface with
// its poller, started with the server and stopped on shutdown. The service is ctx.wireguard.
import type { Feature } from '../feature.js';
import { wgEndpoints } from './endpoints.js';

export const wireguardFeature: Feature = {
  name: 'wireguard',
  endpoints: (ctx) => wgEndpoints(ctx),
  async start(ctx) {
    await ctx.wireguard.start();
  },
  async stop(ctx) {
    await ctx.wireguard.stop();
  },
};
