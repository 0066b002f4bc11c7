// What the Caddy renderer takes in: the settings, the snapshot read from the database
// (proxy/snapshot.ts) and the render context handed to every fragment builder.
import type { Route } from '../routes/model.js';
import type { LicensedFeature } from '../licence/features.js';
import type { DefaultSite } from '../redirects/schema.js';
import type { RedirectTarget } from './fragments/redirects.js';

/** The country database as the renderer names it (fragments/geo.ts). */
export interface GeoDatabase {
  path: string;
  /** changes when the file does (size and modification time), so a replaced file is reloaded */
  version: string;
}

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
  /** The tunnel subnet (GATEHOUSE_WG_SUBNET): internal routes serve it (proxy/exposure-snapshot.ts). */
  tunnelSubnet?: string;
  /** The country database (GATEHOUSE_GEOIP_DB) when it is usable; unset: country filters refuse everyone (fragments/geo.ts). */
  geoipDb?: GeoDatabase;
  /** GATEHOUSE_TRUSTED_PROXIES: the HTTP servers' trusted_proxies (fragments/geo.ts). */
  trustedProxies?: string[];
  /**
   * The server's key for the routes' sticky-cookie secrets (fragments/lb.ts lbCookieSecret): a
   * sub-key of the master key, so every render and every restart gives a route the same secret.
   */
  lbCookieKey: string;
  /**
   * Caddy keeps its certificates in PostgreSQL, shared by every node of a cluster
   * (fragments/storage.ts); unset: in its data directory.
   */
  sharedCertificates?: boolean;
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

/** A custom certificate a route uses (src/certificates), its key opened: what the renderer loads into Caddy. */
export interface CustomCertificatePem {
  id: number;
  certificate_pem: string;
  private_key_pem: string;
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
  /** Redirect hosts (disabled ones are skipped here too); fragments/redirects.ts. */
  redirectHosts?: RedirectTarget[];
  /** The default site, the host maps' fallback; absent: none (the module's plain 404). */
  defaultSite?: DefaultSite;
  /** The custom certificates the routes name (certificate_id), by id (proxy/fragments/custom-certs.ts). */
  certificates?: Map<number, CustomCertificatePem>;
  /** What internal routes serve: the tunnel subnet and the active gateways' LANs (proxy/exposure-snapshot.ts); read only when a route is internal. */
  internalRanges?: string[];
  /** HTTP routes outside their access window when the snapshot was taken (fragments/access-window.ts). */
  closedRouteIds?: Set<number>;
}

export interface RenderContext {
  settings: ProxySettings;
  /** See ProxySnapshot.closedRouteIds. */
  closedRouteIds?: Set<number>;
  peers: Map<number, PeerTarget>;
  protectedRouteIds?: Set<number>;
  breakers?: Map<number, BreakerSeed>;
  /** See ProxySnapshot.features; ask with featureOn(ctx, feature). */
  features?: readonly LicensedFeature[];
  /** See ProxySnapshot.internalRanges. */
  internalRanges?: string[];
}

/** Whether the render includes a licensed feature's modules (absent list: every feature). */
export function featureOn(ctx: Pick<RenderContext, 'features'>, feature: LicensedFeature): boolean {
  return ctx.features === undefined || ctx.features.includes(feature);
}
