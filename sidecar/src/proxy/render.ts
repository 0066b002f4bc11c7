// The Caddy JSON renderer: one pure function from a database snapshot to the complete Caddy
// configuration, loaded with POST /load. No I/O, no clock, no randomness: the same snapshot always
// gives the same object (golden-file tests, config_hash). This file only composes: each route
// concern has its fragment builder in fragments/ (upstream, protection, route-auth, resilience,
// gateway, l4, servers, access-log, error-pages), the JSON types are in caddy-json.ts (a leaf module) and
// the inputs in render-context.ts.
//
// Shape (see docs in docs/guides/routes.md):
// - admin: GATEHOUSE_CADDY_ADMIN only, config.persist=false (the database is the source of truth).
// - apps.pki: the internal CA never installs its root into the host's trust stores.
// - apps.http: server "gatehouse_http" on :httpPort always exists; server "gatehouse_https" on
//   :httpsPort exists when at least one host is served over TLS. Each server has exactly ONE route
//   whose only handler is our `gatehouse_hostroute` module: a map from host name to that host's own
//   route list (exact names first, then one-label `*.` wildcards; unknown hosts get a 404 from the
//   module). Per-request cost therefore does not depend on the number of routes.
//   - a plain route (https_enabled false) is served on the HTTP server only;
//   - an HTTPS route is served on the HTTPS server, and the HTTP server answers its host with a 308
//     redirect to https://host[:httpsPort]/uri.
//   Caddy's automatic HTTPS is disabled per server because it only discovers names from `host`
//   matchers, which the host map does not use. Its two effects are rendered explicitly instead:
//   the certificates (tls app: `certificates.automate` + an automation policy with the internal or
//   ACME issuer for exactly those names) and the redirects. ACME HTTP-01 challenges are still
//   answered by every Caddy HTTP server before any route runs.
//   With the licence feature prometheus_metrics (snapshot.metrics), each server's host map counts
//   requests and their duration per host itself (fragments/metrics.ts).
// - apps.layer4 (caddy-l4): one server per enabled L4 route on its l4_listen_port.
// - storage: in a cluster, the certificates in PostgreSQL (fragments/storage.ts); else Caddy's default.
import type { Route } from '../routes/model.js';
import type { CaddyConfig, CaddyHandler, CaddyRoute, HostEntry, Json, L4Server } from './caddy-json.js';
import { featureOn, type ProxySettings, type ProxySnapshot, type RenderContext } from './render-context.js';
import { addAccessLog } from './fragments/access-log.js';
import { withGatewayWol } from './fragments/gateway.js';
import { l4NeedsCertificate, l4Server, l4ServerName } from './fragments/l4.js';
import { aclPeerAddresses, protectionRoutes } from './fragments/protection.js';
import { botBlockHandler, circuitBreakerHandler, mirrorHandler, retryRoutes } from './fragments/resilience.js';
import { serverRoutes } from './fragments/metrics.js';
import { sharedCertificateStorage } from './fragments/storage.js';
import {
  GRACE_PERIOD,
  HTTP_SERVER,
  HTTPS_SERVER,
  hostEntry,
  redirectToHttps,
  reverseProxyTo,
  sharedProxyRoutes,
  shareEntryUpstreams,
  tlsApp,
  usesSharedProxy,
} from './fragments/servers.js';
import { encodeHandler, listenAddr, reverseProxy } from './fragments/upstream.js';
import { routeEncodings, routeUpstreams, withTraffic } from './fragments/lb.js';
import { errorAnswerRoutes, errorRoutes, gatewayHostErrors } from './fragments/error-pages.js';
import { defaultSiteEntry, redirectHostEntry } from './fragments/redirects.js';
import { exposureRoutes } from './fragments/exposure.js';
import { closedHostEntry } from './fragments/access-window.js';
import { customCertHosts, customCertUses, withCustomCerts, type CustomCertUse } from './fragments/custom-certs.js';
import { geoFilterRoute, trustedProxiesFields } from './fragments/geo.js';

/**
 * The handler chain of one HTTP route, in order: bot blocker, compression, mirroring, circuit
 * breaker, reverse_proxy; with retries, `tail` holds the reverse_proxy instead, as routes that
 * follow the chain in the host's route list (fragments/resilience.ts retryRoutes).
 */
export function routeHandlers(route: Route, ctx: RenderContext): { chain: CaddyHandler[]; tail: CaddyRoute[] } {
  const ups = routeUpstreams(route, ctx);
  // Nothing to proxy to: the branded "offline" answer (fragments/error-pages.ts) instead.
  if ('unavailable' in ups) return { chain: [], tail: errorAnswerRoutes(route.target_kind === 'gateway' ? 'gateway_offline' : 'peer_offline') };
  const chain: CaddyHandler[] = [];
  if (route.bot_blocker_enabled) chain.push(botBlockHandler(route));
  const encodings = routeEncodings(route);
  if (encodings.length) chain.push(encodeHandler(encodings));
  const mirror = route.mirror_enabled ? mirrorHandler(route, ctx) : null;
  if (mirror) chain.push(mirror);
  // Licence feature circuit_breaker: without it the module is left out; the route keeps its settings.
  if (route.circuit_breaker_enabled && featureOn(ctx, 'circuit_breaker')) chain.push(circuitBreakerHandler(route, ctx));
  const proxy = withGatewayWol(withTraffic(reverseProxy(route, ups[0]), route, ups, ctx), route, ctx.settings.sidecarUpstream);
  const tail = retryRoutes(proxy, route);
  if (!tail) chain.push(proxy);
  return { chain, tail: tail ?? [] };
}

/**
 * The host entry of an HTTP route: its protection (fragments/protection.ts protectionRoutes: peer
 * ACL → IP filter → rate limit before basic auth | basic auth | route-auth pages + forward auth →
 * rate limit after route auth) in front of routeHandlers(). An unprotected route is one plain route.
 */
function routeHostEntry(route: Route, ctx: RenderContext): HostEntry {
  // outside its access window: the closed page instead (fragments/access-window.ts)
  const entry = ctx.closedRouteIds?.has(route.id) ? closedHostEntry(route, ctx.settings) : protectedRoutes(route, ctx);
  // an internal route answers outsiders first (fragments/exposure.ts)
  entry.routes.unshift(...exposureRoutes(route, ctx.internalRanges));
  // A gateway route's dial failures mean the gateway is offline, not a peer.
  if (route.target_kind === 'gateway') entry.errors = gatewayHostErrors();
  return entry;
}

function protectedRoutes(route: Route, ctx: RenderContext): HostEntry {
  const { chain: rest, tail } = routeHandlers(route, ctx);
  const routeAuth = ctx.protectedRouteIds?.has(route.id) ?? false;
  const basicAuth = !!(route.basic_auth_user && route.basic_auth_password_hash);
  if (!routeAuth && !basicAuth && !route.acl_enabled && !route.ip_filter_enabled && !route.rate_limit_enabled && !route.geo_filter) {
    return { routes: [...(rest.length ? [{ handle: rest }] : []), ...tail] };
  }
  return {
    routes: protectionRoutes(
      route,
      {
        routeAuth,
        sidecarUpstream: ctx.settings.sidecarUpstream,
        aclAddresses: aclPeerAddresses(route, ctx.peers),
        geo: route.geo_filter ? geoFilterRoute(route.geo_filter, ctx.settings) : null,
        trustedProxies: ctx.settings.trustedProxies,
      },
      rest,
      tail,
    ),
  };
}

/** A route's place in the host maps: the map (server) and the host key it rendered. */
export interface HostRef {
  map: string;
  host: string;
}

/**
 * The host maps of a snapshot (render step 1 of 2, pure): each server's host entries, which route
 * rendered which host (`owners`: route id → its hosts; the admin domain's hosts have no owner),
 * the layer4 servers, and the certificate names that are not host-map keys (layer4 TLS
 * termination). Host entries are final (shared upstreams applied), so
 * the apply path (proxy/apply.ts) can send one as it is, and its JSON is what a full render holds.
 */
export interface RenderedHosts {
  maps: Record<typeof HTTP_SERVER | typeof HTTPS_SERVER, Record<string, HostEntry>>;
  owners: Map<number, HostRef[]>;
  l4Servers: Record<string, L4Server>;
  certSubjects: string[];
  /** The default site: both host maps' fallback (part of the frame). */
  fallback?: HostEntry;
  /** The custom certificates the routes use (fragments/custom-certs.ts), part of the frame. */
  customCerts: CustomCertUse[];
  /** The routes served with a custom certificate. */
  customCertRoutes: number[];
}

export function renderHosts(snap: ProxySnapshot): RenderedHosts {
  const { settings } = snap;
  const ctx: RenderContext = {
    settings,
    peers: snap.peers,
    protectedRouteIds: snap.protectedRouteIds,
    breakers: snap.breakers,
    features: snap.features,
    internalRanges: snap.internalRanges,
    closedRouteIds: snap.closedRouteIds,
  };
  // an RDP route's linked L4 route needs the licence feature remote_desktop (ProxySnapshot.rdpLinkedRouteIds)
  const rdpOn = featureOn(ctx, 'remote_desktop');
  const routes = snap.routes.filter((r) => r.enabled && (rdpOn || !snap.rdpLinkedRouteIds?.has(r.id))).sort((a, b) => a.id - b.id);

  const plainHosts: Record<string, HostEntry> = {};
  const tlsHosts: Record<string, HostEntry> = {};
  const owners = new Map<number, HostRef[]>();
  const redirect = redirectToHttps(settings);
  for (const r of routes) {
    if (r.route_type !== 'http') continue;
    if (r.https_enabled) {
      tlsHosts[r.domain] = routeHostEntry(r, ctx);
      plainHosts[r.domain] = hostEntry([redirect]);
      owners.set(r.id, [
        { map: HTTPS_SERVER, host: r.domain },
        { map: HTTP_SERVER, host: r.domain },
      ]);
    } else {
      plainHosts[r.domain] = routeHostEntry(r, ctx);
      owners.set(r.id, [{ map: HTTP_SERVER, host: r.domain }]);
    }
  }
  // redirect hosts: the same redirect on both servers, no owner (a change renders everything: redirects/service.ts)
  for (const rh of snap.redirectHosts ?? []) {
    if (!rh.enabled || rh.domain in plainHosts || rh.domain in tlsHosts) continue;
    tlsHosts[rh.domain] = redirectHostEntry(rh);
    plainHosts[rh.domain] = redirectHostEntry(rh);
  }
  if (settings.adminDomain) {
    tlsHosts[settings.adminDomain] = hostEntry([reverseProxyTo(settings.sidecarUpstream)]);
    plainHosts[settings.adminDomain] = hostEntry([redirect]);
  }

  const l4Servers: Record<string, L4Server> = {};
  const certSubjects = new Set<string>();
  for (const r of routes) {
    if (r.route_type !== 'l4' || r.l4_listen_port === null) continue;
    // outside its access window an L4 route has no listener: its port refuses connections
    if (ctx.closedRouteIds?.has(r.id)) continue;
    const srv = l4Server(r, ctx);
    if (!srv) continue;
    l4Servers[l4ServerName(r)] = srv;
    if (l4NeedsCertificate(r)) certSubjects.add(r.domain);
  }
  for (const entry of Object.values(plainHosts)) shareEntryUpstreams(entry);
  for (const entry of Object.values(tlsHosts)) shareEntryUpstreams(entry);
  const fallback = defaultSiteEntry(snap.defaultSite);
  const custom = customCertUses(routes, snap.certificates);
  return {
    maps: { [HTTP_SERVER]: plainHosts, [HTTPS_SERVER]: tlsHosts },
    owners,
    l4Servers,
    certSubjects: [...certSubjects].sort(),
    ...(fallback ? { fallback } : {}),
    customCerts: custom.uses,
    customCertRoutes: custom.routeIds,
  };
}

/**
 * What the rest of the configuration needs to know about the host maps (render step 2 of 2):
 * whether the HTTPS server has hosts, which of its keys are wildcards (their certificates are
 * managed up front, exact names on demand), and which servers need the shared reverse_proxy.
 * The apply path keeps these up to date as it changes hosts, so it can tell whether a change
 * needs more than host puts (then it makes a full load).
 */
export interface HostSummary {
  tlsHosts: number;
  /** Exact (non-wildcard) keys of the HTTPS map. */
  exactTlsHosts: number;
  /** Wildcard keys of the HTTPS map, sorted. */
  wildcardTlsHosts: string[];
  /** Servers with at least one host that invokes the shared reverse_proxy. */
  shared: string[];
}

export function summarizeHosts(maps: RenderedHosts['maps']): HostSummary {
  const tls = Object.keys(maps[HTTPS_SERVER]);
  const wildcardTlsHosts = tls.filter((h) => h.startsWith('*.')).sort();
  const shared = [HTTP_SERVER, HTTPS_SERVER].filter((m) => Object.values(maps[m as keyof RenderedHosts['maps']]).some(usesSharedProxy));
  return { tlsHosts: tls.length, exactTlsHosts: tls.length - wildcardTlsHosts.length, wildcardTlsHosts, shared };
}

/**
 * Everything but the host entries (pure): admin, pki, tls, the servers with EMPTY host maps,
 * layer4, logging. renderCaddyConfig fills the maps in; the apply path compares this frame with
 * the one Caddy runs to tell a host change from a global one.
 */
export function renderFrame(
  settings: ProxySettings,
  summary: HostSummary,
  rendered: Pick<RenderedHosts, 'l4Servers' | 'certSubjects' | 'fallback' | 'customCerts'>,
  metrics: boolean,
): CaddyConfig {
  const servers: Record<string, Json> = {
    [HTTP_SERVER]: {
      listen: [listenAddr(settings.bind, settings.httpPort)],
      automatic_https: { disable: true },
      routes: serverRoutes({}, metrics, rendered.fallback),
      errors: errorRoutes(),
      ...trustedProxiesFields(settings),
    },
  };
  if (summary.shared.includes(HTTP_SERVER)) servers[HTTP_SERVER].named_routes = sharedProxyRoutes();
  if (summary.tlsHosts) {
    servers[HTTPS_SERVER] = {
      listen: [listenAddr(settings.bind, settings.httpsPort)],
      automatic_https: { disable: true },
      tls_connection_policies: [{}],
      routes: serverRoutes({}, metrics, rendered.fallback),
      errors: errorRoutes(),
      ...trustedProxiesFields(settings),
    };
    if (summary.shared.includes(HTTPS_SERVER)) servers[HTTPS_SERVER].named_routes = sharedProxyRoutes();
  }

  const apps: Json = {
    pki: { certificate_authorities: { local: { install_trust: false } } },
  };
  // names served with a custom certificate are not managed (fragments/custom-certs.ts)
  const custom = customCertHosts(rendered.customCerts);
  const managed = [...new Set([...summary.wildcardTlsHosts, ...rendered.certSubjects])].filter((n) => !custom.has(n)).sort();
  const tls = withCustomCerts(tlsApp(settings, managed, summary.exactTlsHosts > 0), servers[HTTPS_SERVER], rendered.customCerts);
  if (tls) apps.tls = tls;
  apps.http = { http_port: settings.httpPort, https_port: settings.httpsPort, grace_period: GRACE_PERIOD, servers };
  if (Object.keys(rendered.l4Servers).length) apps.layer4 = { servers: rendered.l4Servers };

  const cfg: CaddyConfig = {
    admin: { listen: settings.adminListen, config: { persist: false } },
    apps,
  };
  if (settings.sharedCertificates) cfg.storage = sharedCertificateStorage();
  if (settings.accessLogFile) addAccessLog(cfg, servers, settings.accessLogFile, settings.accessLogRollMb);
  return cfg;
}

/** The host map object of a server in a frame (or a whole configuration). */
export function frameHostMap(cfg: CaddyConfig, server: string): Record<string, HostEntry> | undefined {
  const srv = ((cfg.apps as Json).http as { servers: Record<string, { routes: { handle: { hosts: Record<string, HostEntry> }[] }[] }> }).servers[server];
  return srv?.routes[0].handle[0].hosts;
}

/** The whole Caddy configuration for a snapshot: the frame with its host maps filled in. */
export function renderCaddyConfig(snap: ProxySnapshot): CaddyConfig {
  const rendered = renderHosts(snap);
  return assembleConfig(renderFrame(snap.settings, summarizeHosts(rendered.maps), rendered, !!snap.metrics), rendered.maps);
}

/** A frame with these host maps put in (the frame is changed and returned). */
export function assembleConfig(frame: CaddyConfig, maps: Record<string, Record<string, HostEntry>>): CaddyConfig {
  for (const [server, hosts] of Object.entries(maps)) {
    const map = frameHostMap(frame, server);
    if (map) Object.assign(map, hosts);
  }
  return frame;
}
