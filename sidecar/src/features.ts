// Feature modules (peers, routes, proxy, wireguard, ...) plug in here: their services are created
// in setupFeatures() and their endpoints listed in featureEndpoints().
import type { Deps } from './deps.js';
import type { Endpoint } from './http/registry.js';
import { peersFeature } from './peers/feature.js';
import { proxyFeature } from './proxy/feature.js';
import { routesFeature } from './routes/feature.js';
import { smtpFeature } from './smtp/feature.js';
import { routeAuthFeature } from './route-auth/feature.js';
import { gatewaysFeature } from './gateways/feature.js';
import { resilienceFeature } from './resilience/feature.js';

export interface Feature {
  name: string;
  /** Create services and put them on deps (called once, before endpoints are built). */
  setup?(deps: Deps): Promise<void> | void;
  endpoints?(deps: Deps): Endpoint[];
  /** Start background work (pollers, reconcile loops) once the HTTP server listens. */
  start?(deps: Deps): Promise<void> | void;
  /** Stop background work; called in reverse order on shutdown. */
  stop?(deps: Deps): Promise<void> | void;
}

export const features: Feature[] = [];
features.push(peersFeature);
features.push(proxyFeature, routesFeature);
features.push(smtpFeature, routeAuthFeature);
features.push(gatewaysFeature); // after peers (tunnel up) and routes
features.push(resilienceFeature); // after proxy and routes

export async function setupFeatures(deps: Deps): Promise<void> {
  for (const f of features) await f.setup?.(deps);
}

export function featureEndpoints(deps: Deps): Endpoint[] {
  return features.flatMap((f) => f.endpoints?.(deps) ?? []);
}
