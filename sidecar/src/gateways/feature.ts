// The gateways feature: the gateway endpoints, the idle-poll fast path (early middleware), the
// status timer and the tunnel listener of the companion API. The services are ctx.gateways (also
// ctx.gatewayAuth), ctx.gatewayWol and ctx.gatewayTunnelListener (app-context.ts).
import type { Feature } from '../feature.js';
import { defineGatewayModels } from './model.js';
import { checkFastPath, gatewayEndpoints, gatewayTunnelApp } from './endpoints.js';

export const gatewaysFeature: Feature = {
  name: 'gateways',
  models: defineGatewayModels,
  endpoints: (ctx) => gatewayEndpoints(ctx),
  // the idle poll of every companion, answered ahead of the session, body and router middleware
  early: (ctx) => [checkFastPath(ctx)],
  start(ctx) {
    ctx.gateways.start();
    ctx.gatewayTunnelListener.start(() => gatewayTunnelApp(ctx));
    // a server URL outside the tunnel: its companions' calls come from elsewhere than their tunnel addresses
    const g = ctx.config.gateways;
    if (g.serverUrl && !g.tokenAnySource && new URL(g.serverUrl).hostname !== ctx.wireguard.serverAddress) {
      ctx.log.warn(
        `GATEHOUSE_GATEWAY_SERVER_URL=${g.serverUrl} is not the tunnel address ${ctx.wireguard.serverAddress}: a gateway token is accepted only from its gateway's tunnel address, so companions that reach that URL outside their tunnel are refused (401) unless GATEHOUSE_GATEWAY_TOKEN_ANY_SOURCE=true`,
      );
    }
  },
  async stop(ctx) {
    await ctx.gateways.stop();
    await ctx.gatewayTunnelListener.stop();
  },
};
