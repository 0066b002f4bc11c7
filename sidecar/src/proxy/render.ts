// The Caddy JSON renderer: one pure function from a database snapshot to the complete Caddy
// configuration, loaded with POST /load. No I/O, no clock, no randomness: the same snapshot always
// gives the same object (golden-file tests, config_hash).
//
// Shape (see docs in README "Proxy"):
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
// - apps.layer4 (caddy-l4): one server per enabled L4 route on its l4_listen_port.
import type { Route } from '../routes/model.js';
import { gatewayUpstream, withGatewayWol } from '../gateways/caddy.js';
import { addAccessLog, retryRoutes, botBlockHandler, circuitBreakerHandler, mirrorHandler, type BreakerSeed } from './resilience.js';
import { protectionRoutes, type CaddyRoute } from '../route-auth/caddy.js';

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

export interface ProxySnapshot {
  settings: ProxySettings;
  /** Routes to render; disabled ones are skipped here too. */
  routes: Route[];
  peers: Map<number, PeerTarget>;
  /** Ids of the routes with a route-auth configuration (forward auth to the sidecar). */
  protectedRouteIds?: Set<number>;
  /** Circuit-breaker seeds and reset markers pinned in memory by ProxyService (proxy/breaker.ts). */
  breakers?: Map<number, BreakerSeed>;
}

type Json = Record<string, unknown>;
export type CaddyHandler = Json;
export type CaddyConfig = Json;

export interface RenderContext {
  settings: ProxySettings;
  peers: Map<number, PeerTarget>;
  protectedRouteIds?: Set<number>;
  breakers?: Map<number, BreakerSeed>;
}

export const HTTP_SERVER = 'gatehouse_http';
export const HTTPS_SERVER = 'gatehouse_https';
export const GRACE_PERIOD = '10s';

/** `host:port` of a route's upstream, or null when it cannot be served now (reason given). */
export function routeUpstream(route: Route, ctx: RenderContext): { host: string; port: number } | { unavailable: string } {
  // Gateway targets: the companion on the gateway's tunnel address (gateways/caddy.ts).
  if (route.target_kind === 'gateway') return gatewayUpstream(route, ctx.peers, ctx.settings.gatewayProxyPort);
  if (route.peer_id === null || route.target_port === null) return { unavailable: 'route has no target' };
  const peer = ctx.peers.get(route.peer_id);
  if (!peer) return { unavailable: 'peer not found' };
  if (!peer.enabled) return { unavailable: 'peer disabled' };
  return { host: peer.address.split('/')[0], port: Number(route.target_port) };
}

const listenAddr = (bind: string, port: number, udp = false) => `${udp ? 'udp/' : ''}${bind.includes(':') ? `[${bind}]` : bind}:${port}`;

function unavailableResponse(): CaddyHandler {
  return {
    handler: 'static_response',
    status_code: 502,
    headers: { 'Content-Type': ['text/plain; charset=utf-8'] },
    body: '502 Bad Gateway: the target of this route is unavailable\n',
  };
}

function redirectToHttps(settings: ProxySettings): CaddyHandler {
  const port = settings.httpsPort === 443 ? '' : `:${settings.httpsPort}`;
  return {
    handler: 'static_response',
    status_code: 308,
    headers: { Location: [`https://{http.request.host}${port}{http.request.uri}`] },
  };
}

function encodeHandler(): CaddyHandler {
  // The JSON of the Caddyfile directive `encode zstd gzip`.
  return { handler: 'encode', encodings: { gzip: {}, zstd: {} }, prefer: ['zstd', 'gzip'] };
}

function reverseProxy(route: Route, up: { host: string; port: number }): CaddyHandler {
  const h: CaddyHandler = { handler: 'reverse_proxy', upstreams: [{ dial: `${up.host}:${up.port}` }] };
  if (route.backend_https && route.target_kind !== 'gateway') {
    // (gateway routes: the companion makes the TLS hop to the LAN target.)
    // The hop runs inside the WireGuard tunnel (encrypted and authenticated already) to a tunnel IP
    // address, which a backend's certificate practically never names: the certificate is not
    // verified. The route's domain is sent as SNI so name-based backends pick the right site.
    const tls: Json = { insecure_skip_verify: true };
    if (!route.domain.startsWith('*.')) tls.server_name = route.domain;
    h.transport = { protocol: 'http', tls };
  }
  return h;
}

/**
 * The handler chain of one HTTP route, in order: bot blocker, compression, mirroring, circuit
 * breaker, reverse_proxy; with retries, `tail` holds the reverse_proxy instead, as routes that
 * follow the chain in the host's route list (resilience.ts retryRoutes).
 */
export function routeHandlers(route: Route, ctx: RenderContext): { chain: CaddyHandler[]; tail: CaddyRoute[] } {
  const up = routeUpstream(route, ctx);
  if ('unavailable' in up) return { chain: [unavailableResponse()], tail: [] };
  const chain: CaddyHandler[] = [];
  if (route.bot_blocker_enabled) chain.push(botBlockHandler(route));
  if (route.compress_enabled) chain.push(encodeHandler());
  const mirror = route.mirror_enabled ? mirrorHandler(route, ctx) : null;
  if (mirror) chain.push(mirror);
  if (route.circuit_breaker_enabled) chain.push(circuitBreakerHandler(route, ctx));
  const proxy = withGatewayWol(reverseProxy(route, up), route, ctx.settings.sidecarUpstream);
  const tail = retryRoutes(proxy, route);
  if (!tail) chain.push(proxy);
  return { chain, tail: tail ?? [] };
}

/** One host entry of the host map: a Caddy route list, like a `subroute` body. */
function hostEntry(handlers: CaddyHandler[]): Json {
  return { routes: [{ handle: handlers }] };
}

/**
 * The host entry of an HTTP route: its protection (route-auth/caddy.ts protectionRoutes: peer ACL →
 * IP filter → rate limit before basic auth | basic auth | route-auth pages + forward auth → rate
 * limit after route auth) in front of routeHandlers(). An unprotected route is one plain route.
 */
function routeHostEntry(route: Route, ctx: RenderContext): Json {
  const { chain: rest, tail } = routeHandlers(route, ctx);
  const routeAuth = ctx.protectedRouteIds?.has(route.id) ?? false;
  const basicAuth = !!(route.basic_auth_user && route.basic_auth_password_hash);
  if (!routeAuth && !basicAuth && !route.acl_enabled && !route.ip_filter_enabled && !route.rate_limit_enabled) {
    return { routes: [...(rest.length ? [{ handle: rest }] : []), ...tail] };
  }
  // ACL: the tunnel addresses of the listed peers that are on the interface now (enabled, not expired).
  const aclAddresses = route.acl_peer_ids.flatMap((id) => {
    const p = ctx.peers.get(id);
    return p?.enabled ? [p.address] : [];
  });
  return { routes: protectionRoutes(route, { routeAuth, sidecarUpstream: ctx.settings.sidecarUpstream, aclAddresses }, rest, tail) };
}

/** The server-level named route every plain reverse_proxy of the host map goes through. */
export const SHARED_PROXY = 'gatehouse_proxy';
export const UPSTREAM_VAR = 'gatehouse_upstream';

function isPlainReverseProxy(h: CaddyHandler): boolean {
  if (h.handler !== 'reverse_proxy' || Object.keys(h).length !== 2 || !Array.isArray(h.upstreams) || h.upstreams.length !== 1) return false;
  const u = h.upstreams[0] as Json;
  return Object.keys(u).length === 1 && typeof u.dial === 'string' && !u.dial.includes('{');
}

/**
 * Replaces every plain `reverse_proxy` (one static upstream, no other option) in the hosts' route
 * lists by `vars {gatehouse_upstream: <dial>}` + `invoke gatehouse_proxy`, a server-level named
 * route holding ONE reverse_proxy whose upstream is `{http.vars.gatehouse_upstream}`. Same
 * behaviour per request (Caddy evaluates an upstream's dial address per request anyway), but a
 * config load provisions two trivial handlers per host instead of a whole reverse_proxy (transport,
 * upstream pool): /load of 10,000 hosts measured ~0.65 s instead of ~0.95 s. A reverse_proxy with
 * any option of its own (TLS transport, handle_response, retries, circuit breaker) stays as it is.
 * Returns whether the server needs the named route.
 */
function shareUpstreams(hosts: Record<string, Json>): boolean {
  let used = false;
  for (const entry of Object.values(hosts)) {
    for (const route of (entry.routes as Json[] | undefined) ?? []) {
      const handle = route.handle as CaddyHandler[] | undefined;
      if (!handle?.some(isPlainReverseProxy)) continue;
      route.handle = handle.flatMap((h) =>
        isPlainReverseProxy(h) ? [{ handler: 'vars', [UPSTREAM_VAR]: (h.upstreams as Json[])[0].dial }, { handler: 'invoke', name: SHARED_PROXY }] : [h],
      );
      used = true;
    }
  }
  return used;
}

function sharedProxyRoutes(): Json {
  return { [SHARED_PROXY]: { handle: [{ handler: 'reverse_proxy', upstreams: [{ dial: `{http.vars.${UPSTREAM_VAR}}` }] }] } };
}

function hostRoute(hosts: Record<string, Json>): CaddyHandler {
  return { handler: 'gatehouse_hostroute', hosts };
}

function tlsIssuer(settings: ProxySettings): Json {
  if (settings.tls === 'internal') return { module: 'internal' };
  const issuer: Json = { module: 'acme' };
  if (settings.acmeEmail) issuer.email = settings.acmeEmail;
  // Caddy's automatic HTTPS tells the ACME solvers when the HTTP servers do not listen on the
  // standard ports (port forwarding 80→httpPort, 443→httpsPort); we render the same.
  const challenges: Json = {};
  if (settings.httpPort !== 80) challenges.http = { alternate_port: settings.httpPort };
  if (settings.httpsPort !== 443) challenges['tls-alpn'] = { alternate_port: settings.httpsPort };
  if (Object.keys(challenges).length) issuer.challenges = challenges;
  return issuer;
}

function l4Server(route: Route, ctx: RenderContext): Json | null {
  const up = routeUpstream(route, ctx);
  if ('unavailable' in up) return null; // nothing listens: connections are refused
  const udp = route.l4_protocol === 'udp';
  const proxy = { handler: 'proxy', upstreams: [{ dial: [`${udp ? 'udp/' : ''}${up.host}:${up.port}`] }] };
  const mode = udp ? 'none' : route.l4_tls_mode ?? 'none';
  let l4route: Json;
  if (mode === 'passthrough') {
    l4route = { match: [{ tls: { sni: [route.domain] } }], handle: [proxy] };
  } else if (mode === 'terminate') {
    l4route = { match: [{ tls: { sni: [route.domain] } }], handle: [{ handler: 'tls' }, proxy] };
  } else {
    l4route = { handle: [proxy] };
  }
  return { listen: [listenAddr(ctx.settings.bind, route.l4_listen_port as number, udp)], routes: [l4route] };
}

/** The whole Caddy configuration for a snapshot. */
export function renderCaddyConfig(snap: ProxySnapshot): CaddyConfig {
  const { settings } = snap;
  const ctx: RenderContext = { settings, peers: snap.peers, protectedRouteIds: snap.protectedRouteIds, breakers: snap.breakers };
  const routes = snap.routes.filter((r) => r.enabled).sort((a, b) => a.id - b.id);

  const plainHosts: Record<string, Json> = {};
  const tlsHosts: Record<string, Json> = {};
  const redirect = redirectToHttps(settings);
  for (const r of routes) {
    if (r.route_type !== 'http') continue;
    if (r.https_enabled) {
      tlsHosts[r.domain] = routeHostEntry(r, ctx);
      plainHosts[r.domain] = hostEntry([redirect]);
    } else {
      plainHosts[r.domain] = routeHostEntry(r, ctx);
    }
  }
  if (settings.adminDomain) {
    tlsHosts[settings.adminDomain] = hostEntry([{ handler: 'reverse_proxy', upstreams: [{ dial: settings.sidecarUpstream }] }]);
    plainHosts[settings.adminDomain] = hostEntry([redirect]);
  }

  const servers: Record<string, Json> = {
    [HTTP_SERVER]: {
      listen: [listenAddr(settings.bind, settings.httpPort)],
      automatic_https: { disable: true },
      routes: [{ handle: [hostRoute(plainHosts)] }],
    },
  };
  if (shareUpstreams(plainHosts)) servers[HTTP_SERVER].named_routes = sharedProxyRoutes();
  if (Object.keys(tlsHosts).length) {
    servers[HTTPS_SERVER] = {
      listen: [listenAddr(settings.bind, settings.httpsPort)],
      automatic_https: { disable: true },
      tls_connection_policies: [{}],
      routes: [{ handle: [hostRoute(tlsHosts)] }],
    };
    if (shareUpstreams(tlsHosts)) servers[HTTPS_SERVER].named_routes = sharedProxyRoutes();
  }

  const l4Servers: Record<string, Json> = {};
  const certSubjects = new Set(Object.keys(tlsHosts));
  for (const r of routes) {
    if (r.route_type !== 'l4' || r.l4_listen_port === null) continue;
    const srv = l4Server(r, ctx);
    if (!srv) continue;
    l4Servers[`route_${r.id}`] = srv;
    if (r.l4_protocol !== 'udp' && r.l4_tls_mode === 'terminate') certSubjects.add(r.domain);
  }

  const apps: Json = {
    pki: { certificate_authorities: { local: { install_trust: false } } },
  };
  if (certSubjects.size) {
    const subjects = [...certSubjects].sort();
    apps.tls = {
      certificates: { automate: subjects },
      automation: { policies: [{ subjects, issuers: [tlsIssuer(settings)] }] },
    };
  }
  apps.http = { http_port: settings.httpPort, https_port: settings.httpsPort, grace_period: GRACE_PERIOD, servers };
  if (Object.keys(l4Servers).length) apps.layer4 = { servers: l4Servers };

  const cfg: CaddyConfig = {
    admin: { listen: settings.adminListen, config: { persist: false } },
    apps,
  };
  if (settings.accessLogFile) addAccessLog(cfg, servers, settings.accessLogFile, settings.accessLogRollMb);
  return cfg;
}
