// What the Caddy renderer takes in: the settings, the snapshot read from the database, the render
// context handed to every fragment builder, and the extension point for route kinds beyond the
// HTTP and L4 routes of the routes table (RDP's linked routes): a RouteKind reads its own rows
// into the snapshot (proxy/snapshot.ts) and renders them into a Fragment that render.ts merges.
import type { Transaction } from 'sequelize';
import type { Database } from '../db/index.js';
import type { Route } from '../routes/model.js';
import type { HostEntry, L4Server } from './caddy-json.js';
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
  /** What the registered route kinds read (readSnapshot), rendered after the routes, in order. */
  contributions?: Contribution[];
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

/**
 * What one route kind adds to the configuration. render.ts merges it after the routes of the routes
 * table: host entries of the HTTP (plain) and HTTPS servers, layer4 servers by name, and the names
 * whose certificates Caddy must manage. A host or server name that is already taken is an error.
 */
export interface Fragment {
  httpHosts?: Record<string, HostEntry>;
  httpsHosts?: Record<string, HostEntry>;
  l4Servers?: Record<string, L4Server>;
  certSubjects?: string[];
}

/** Where a route kind reads its rows: the snapshot's database, transaction and clock. */
export interface SnapshotSource {
  db: Database;
  transaction?: Transaction;
  now: number;
}

/**
 * A kind of route with its own rows (RDP's linked routes are the first): `read` runs inside the
 * snapshot's transaction (I/O), `render` is pure and gets the same context as every fragment.
 */
export interface RouteKind<Rows> {
  name: string;
  read(src: SnapshotSource): Promise<Rows>;
  render(rows: Rows, ctx: RenderContext): Fragment;
}

/** One route kind's rows as read for a snapshot, bound to its renderer. */
export interface Contribution {
  kind: string;
  render(ctx: RenderContext): Fragment;
}

/** Reads a route kind's rows and binds them to its renderer (readSnapshot; tests). */
export async function readContribution<Rows>(kind: RouteKind<Rows>, src: SnapshotSource): Promise<Contribution> {
  const rows = await kind.read(src);
  return { kind: kind.name, render: (ctx) => kind.render(rows, ctx) };
}

/** A contribution from rows already in hand (golden tests build snapshots without a database). */
export function contributionOf<Rows>(kind: RouteKind<Rows>, rows: Rows): Contribution {
  return { kind: kind.name, render: (ctx) => kind.render(rows, ctx) };
}
