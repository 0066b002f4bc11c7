// The features of the sidecar, one per folder that serves or runs anything, in start order (stopped
// in reverse). Each declares its endpoints, early and late middleware, fast paths and background
// work against the typed container (the contract: feature.ts); the services themselves are built by
// createAppContext().
//
// The order the endpoints are served in does not depend on this list: endpoints.ts sorts them by
// path (a literal segment ahead of a parameter), method and full path (endpointOrder;
// sidecar/test/registry-routes.test.ts holds the served order).
import type { AppContext } from './app-context.js';
import type { FastPath, Feature } from './feature.js';
import type { Endpoint } from './http/registry.js';
import type { ModelDefiner } from './db/models.js';
import type Koa from 'koa';
import { systemFeature } from './system/feature.js';
import { authFeature } from './auth/feature.js';
import { oidcFeature } from './oidc/feature.js';
import { usersFeature } from './users/feature.js';
import { tokensFeature } from './tokens/feature.js';
import { settingsFeature } from './settings/feature.js';
import { logsFeature } from './logs/feature.js';
import { eventsStreamFeature } from './events-stream/feature.js';
import { peersFeature } from './peers/feature.js';
import { configLinksFeature } from './config-links/feature.js';
import { groupsFeature } from './groups/feature.js';
import { tagsFeature } from './tags/feature.js';
import { wireguardFeature } from './wireguard/feature.js';
import { dashboardFeature } from './dashboard/feature.js';
import { dnsFeature } from './dns/feature.js';
import { proxyFeature } from './proxy/feature.js';
import { routesFeature } from './routes/feature.js';
import { geoipFeature } from './geoip/feature.js';
import { redirectsFeature } from './redirects/feature.js';
import { certificatesFeature } from './certificates/feature.js';
import { smtpFeature } from './smtp/feature.js';
import { routeAuthFeature } from './route-auth/feature.js';
import { shareLinksFeature } from './share-links/feature.js';
import { gatewaysFeature } from './gateways/feature.js';
import { resilienceFeature } from './resilience/feature.js';
import { accessWindowsFeature } from './access-windows/feature.js';
import { metricsFeature } from './metrics/feature.js';
import { webhooksFeature } from './webhooks/feature.js';
import { licenceFeature } from './licence/feature.js';
import { backupFeature } from './backup/feature.js';
import { rdpFeature } from './rdp/feature.js';
import { clientApiFeature } from './client-api/feature.js';
import { webFeature } from './web/feature.js';
import { shapingFeature } from './shaping/feature.js';
import { quotasFeature } from './quotas/feature.js';
import { clusterFeedFeature } from './cluster/feed-feature.js';
import { clusterFeature } from './cluster/feature.js';

export const features: readonly Feature[] = [
  systemFeature, // GET /health first
  clusterFeature, // the leader is chosen before the other features start their jobs (stopped after them)
  authFeature, // sign-in; hourly session housekeeping
  oidcFeature, // sign-in through OpenID Connect providers (its pages ahead of the admin app's)
  usersFeature,
  tokensFeature,
  settingsFeature,
  logsFeature, // the activity log, and the access log's reader
  eventsStreamFeature,
  peersFeature,
  configLinksFeature, // one-time config links of peers
  groupsFeature,
  tagsFeature,
  wireguardFeature, // the interface up before the DNS hosts file and everything that routes through it
  shapingFeature, // speed caps on the interface (applied by its full syncs; removed at shutdown)
  quotasFeature, // data quotas: after the interface and the speed caps (it disables and throttles peers)
  dashboardFeature,
  dnsFeature, // after the interface
  proxyFeature,
  routesFeature,
  geoipFeature, // the country database of the routes' country filters
  redirectsFeature, // redirect hosts and the default site: after routes
  certificatesFeature, // custom certificates: after routes (the routes name them)
  smtpFeature,
  shareLinksFeature, // its GET /route-auth/share ahead of the route-auth pages
  routeAuthFeature,
  gatewaysFeature, // after peers (tunnel up) and routes
  clientApiFeature, // desktop clients: after peers and routes
  resilienceFeature, // after proxy and routes
  accessWindowsFeature, // the boundaries of access windows: after proxy, routes and WireGuard
  metricsFeature,
  rdpFeature, // after routes and gateways
  licenceFeature, // its checks re-render the proxy and rewrite DNS on a change
  clusterFeedFeature, // other nodes' changes applied here: after the proxy, WireGuard and the licence
  backupFeature, // after everything it backs up and restores
  webhooksFeature, // stopped first (of the features with work), its queue stays in the database
  webFeature, // the pages after the router: last
];

/** The features' models, defined with the platform's when the database opens (app-context.ts ContextOptions.models). */
export const featureModels: readonly ModelDefiner[] = features.flatMap((f) => (f.models ? [f.models] : []));

export function featureEndpoints(ctx: AppContext): Endpoint[] {
  return features.flatMap((f) => f.endpoints?.(ctx) ?? []);
}

export function earlyMiddleware(ctx: AppContext): Koa.Middleware[] {
  return features.flatMap((f) => f.early?.(ctx) ?? []);
}

export function lateMiddleware(ctx: AppContext): Koa.Middleware[] {
  return features.flatMap((f) => f.late?.(ctx) ?? []);
}

export function fastPaths(ctx: AppContext): FastPath[] {
  return features.flatMap((f) => f.fastPaths?.(ctx) ?? []);
}
