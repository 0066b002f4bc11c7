// The gateways feature: the gateway endpoints, the idle-poll fast path (early middleware), the
// status timer and the tunnel listener of the companion API. The services are ctx.gateways (also
// ctx.gatewayAuth), ctx.gatewayWol and ctx.gatewayTunnelListener (app-context.ts).
import type { Feature } from '../app-context.js';
import { checkFastPath, gatewayEndpoints, gatewayTunnelApp } from './endpoints.js';

export const gatewaysFeature: Feature = {
  name: 'gateways',
  endpoints: (ctx) => gatewayEndpoints(ctx),
  // the idle poll of every companion, answered ahead of the session, body and router middleware
  early: (ctx) => [checkFastPath(ctx)],
  start(ctx) {
    ctx.gateways.start();
    ctx.gatewayTunnelListener.start(() => gatewayTunnelApp(ctx));
  },
  async stop(ctx) {
    await ctx.gateways.stop();
    await ctx.gatewayTunnelListener.stop();
  },
};
