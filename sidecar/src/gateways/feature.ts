// The gateways feature: deps.gateways (GatewaysService, also deps.gatewayAuth), deps.gatewayWol
// (WolService), the gateway endpoints, the status timer and the tunnel listener of the companion
// API. Needs the peers feature (deps.peers, deps.wireguard) and the routes table.
import type Koa from 'koa';
import type { Deps } from '../deps.js';
import type { Feature } from '../features.js';
import { checkFastPath, gatewayEndpoints } from './endpoints.js';
import { GatewaysService } from './service.js';
import { TunnelListener } from './tunnel-listener.js';
import { WolService } from './wol.js';

export const gatewaysFeature: Feature = {
  name: 'gateways',
  setup(deps: Deps) {
    const svc = new GatewaysService(deps);
    deps.gateways = svc;
    deps.gatewayAuth = svc;
    deps.gatewayWol = new WolService(deps, svc);
    deps.gatewayTunnelListener = new TunnelListener(deps);
    // the idle poll of every companion, answered ahead of the session, body and router middleware
    ((deps.earlyMiddleware ??= []) as Koa.Middleware[]).push(checkFastPath(deps));
  },
  endpoints: (deps) => gatewayEndpoints(deps),
  start(deps) {
    (deps.gateways as GatewaysService).start();
    (deps.gatewayTunnelListener as TunnelListener).start();
  },
  async stop(deps) {
    (deps.gateways as GatewaysService).stop();
    await (deps.gatewayTunnelListener as TunnelListener).stop();
  },
};
