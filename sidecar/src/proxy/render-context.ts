// What the Caddy renderer takes in: the settings, the snapshot read from the database
// (proxy/snapshot.ts) and the render context handed to every fragment builder.
import type { Route } from '../routes/model.js';
import type { LicensedFeature } from '../licence/features.js';

export interface ProxySettings {
  httpPort: number;
  httpsPort: number;
  /** Caddy admin API address (GATEHOUSE_CADDY_ADMIN), loopback only. */
  adminListen: string;
  tls: 'acme' | 'internal';
  acmeEmail?: string;
  /** Publish the admin UI behind Caddy on this domain (HTTPS, with an HTTP redirect). */
  adminDomain?: string;
  /** host:port of the sidecar's own HTTP server, for the admin domain. */
  sidecarUpstream: string;
  /** Address Caddy's HTTP/HTTPS/L4 listeners bind to; '' = every interface. */
  bind: string;
  dataDir: string;
  /** The gateway companions' HTTP proxy port (GATEHOUSE_GATEWAY_PROXY_PORT; default 8080). */
  gatewayProxyPort?: number;
  /** Caddy's JSON access log file (<dataDir>/caddy/access.log); unset = no access log. */
  accessLogFile?: string;
  /** Roll size of that file in MB (default ACCESS_LOG_ROLL.roll_size_mb). */
  accessLogRollMb?: number;
}

export interface PeerTarget {
  /** Tunnel address, with or without a /prefix. */
  address: string;
  enabled: boolean;
}

/** In-memory breaker render state of one route: seeds and the reset marker (see BreakerMemory). */
export interface BreakerSeed {
  failure_count: number;
  opened_at: number;
  reset_at: number;
}

export interface ProxySnapshot {
  settings: ProxySettings;
  /** Routes to render; disabled ones are skipped here too. */
  routes: Route[];
  peers: Map<number, PeerTarget>;
  /** Ids of the routes with a route-auth configuration (forward auth to the sidecar). */
  protectedRouteIds?: Set<number>;
  /** Circuit-breaker seeds and reset markers pinned in memory by ProxyService (proxy/breaker.ts). */
  breakers?: Map<number, BreakerSeed>;
  /**
   * Routes owned by an RDP route (its gateway-mode linked L4 route, rdp_routes.gateway_l4_route_id):
   * rendered only while the licence feature remote_desktop is on; without it they leave the
   * configuration (their rows stay, and come back with the feature).
   */
  rdpLinkedRouteIds?: Set<number>;
  /** Caddy's own HTTP metrics, per host (licence feature prometheus_metrics; proxy/fragments/metrics.ts). */
  metrics?: boolean;
  /**
   * The licence features on when the snapshot was taken (ProxyService always sets it from the
   * licence). A gated module is left out of the configuration without its feature; the route keeps
   * its settings. Absent: every feature (golden tests and tools that render without a licence).
   */
  features?: readonly LicensedFeature[];
}

export interface RenderContext {
  settings: ProxySettings;
  peers: Map<number, PeerTarget>;
  protectedRouteIds?: Set<number>;
  breakers?: Map<number, BreakerSeed>;
  /** See ProxySnapshot.features; ask with featureOn(ctx, feature). */
  features?: readonly LicensedFeature[];
}

/** Whether the render includes a licensed feature's modules (absent list: every feature). */
export function featureOn(ctx: Pick<RenderContext, 'features'>, feature: LicensedFeature): boolean {
  return ctx.features === undefined || ctx.features.includes(feature);
}
