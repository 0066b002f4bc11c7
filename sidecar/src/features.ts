// The features of the sidecar, in start order (stopped in reverse). Each declares its endpoints,
// early middleware, fast paths and background work against the typed container (app-context.ts
// Feature); the services themselves are built by createAppContext().
import type { AppContext } from './app-context.js';
import type { FastPath, Feature } from './feature.js';
import type { Endpoint } from './http/registry.js';
import type Koa from 'koa';
import { peersFeature } from './peers/feature.js';
import { proxyFeature } from './proxy/feature.js';
import { routesFeature } from './routes/feature.js';
import { smtpFeature } from './smtp/feature.js';
import { routeAuthFeature } from './route-auth/feature.js';
import { gatewaysFeature } from './gateways/feature.js';
import { resilienceFeature } from './resilience/feature.js';
import { metricsFeature } from './metrics/feature.js';
import { webhooksFeature } from './webhooks/feature.js';
import { licenceFeature } from './licence/feature.js';
import { backupFeature } from './backup/feature.js';
import { rdpFeature } from './rdp/feature.js';
import { rdpOpsFeature } from './rdp/ops-endpoints.js';
import { clientApiFeature } from './client-api/feature.js';
import { rdpClientFeature } from './rdp/client-endpoints.js';

export const features: readonly Feature[] = [
  peersFeature,
  proxyFeature,
  routesFeature,
  smtpFeature,
  routeAuthFeature,
  gatewaysFeature, // after peers (tunnel up) and routes
  clientApiFeature, // desktop clients: after peers and routes
  resilienceFeature, // after proxy and routes
  metricsFeature,
  rdpOpsFeature, // RDP status, WoL, sessions: before rdpFeature, so /rdp/status and /rdp/history/export match ahead of /rdp/:id
  rdpFeature, // after routes and gateways
  rdpClientFeature, // the desktop client's /client/rdp endpoints
  licenceFeature, // its checks re-render the proxy and rewrite DNS on a change
  backupFeature, // after everything it backs up and restores
  webhooksFeature, // last: stopped first, its queue stays in the database
];

export function featureEndpoints(ctx: AppContext): Endpoint[] {
  return features.flatMap((f) => f.endpoints?.(ctx) ?? []);
}

export function earlyMiddleware(ctx: AppContext): Koa.Middleware[] {
  return features.flatMap((f) => f.early?.(ctx) ?? []);
}

export function fastPaths(ctx: AppContext): FastPath[] {
  return features.flatMap((f) => f.fastPaths?.(ctx) ?? []);
}
