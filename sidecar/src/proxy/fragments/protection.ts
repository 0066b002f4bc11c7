// Route protection in Caddy (pure): peer ACL, IP filter, rate limit and basic auth, and the order
// in which they and route auth (route-auth.ts) stand in a protected host's route list. The shapes
// are exactly what `caddy adapt` (Caddy 2.11.9) prints for the equivalent Caddyfile directives (see
// the golden tests in test/route-auth-caddy.test.ts).
//
// protectionRoutes places the pieces in this order:
//
//   1. peer ACL (aclRoute)                 - VPN source check first, login pages included
//   2. IP filter (ipFilterRoute)           - only for routes WITHOUT route auth (route auth: the
//                                            sidecar checks the IP in verify and on its pages)
//   3. rate limit (rateLimitHandler)       - BEFORE auth for basic auth and for unprotected routes
//   4. basic auth (basicAuthHandler), after the share-link routes (route-auth.ts shareLinkRoutes:
//      /route-auth/share and a forward auth for requests with the route's session cookie; the basic
//      auth runs unless a share-link session let the request in)
//                                     |  route auth: first the /route-auth/* pages route
//                                            (routeAuthPagesRoute), then forward auth
//                                            (routeAuthForwardHandler: it also removes the
//                                            gh_ra_… cookies) for everything else, followed by
//                                            authUserLogHandler (who, in the access log)
//   5. rate limit                          - AFTER auth for route auth
//   6. rest (the route's handler chain), then tail (its retrying reverse_proxy routes, if any)
//
// A route_auth row appearing or disappearing changes the rendering: the route-auth service writes
// through the proxy service's transact(), so the snapshot read inside that transaction sees it.
import { parseStoredRules, type IpFilterMode, type IpRuleInput } from '../../util/ip-rules.js';
import type { CaddyHandler, CaddyRoute, Json } from '../caddy-json.js';
import type { PeerTarget } from '../render-context.js';
import { notShared, routeAuthForwardHandler, routeAuthPagesRoute, shareLinkRoutes } from './route-auth.js';
import { ipFilterMatcher } from './geo.js';
import type { ProxySettings } from '../render-context.js';

/** The route fields these builders read (a normalized route from src/routes/model.ts fits). */
export interface ProtectedRoute {
  id: number;
  domain: string;
  basic_auth_user: string | null;
  basic_auth_password_hash: string | null;
  ip_filter_enabled: boolean;
  ip_filter_mode: string | null;
  ip_filter_rules: readonly IpRuleInput[] | string | null;
  acl_enabled: boolean;
  rate_limit_enabled: boolean;
  rate_limit_requests: number | null;
  rate_limit_window: string | null;
}

function forbidden(body?: string): CaddyHandler {
  return body === undefined ? { handler: 'static_response', status_code: 403 } : { body, handler: 'static_response', status_code: 403 };
}

/** Caddy `authentication` handler with the http_basic provider (Caddyfile `basic_auth`), bcrypt hash as stored. */
export function basicAuthHandler(user: string, bcryptHash: string): CaddyHandler {
  return {
    handler: 'authentication',
    providers: {
      http_basic: {
        accounts: [{ password: bcryptHash, username: user }],
        hash: { algorithm: 'bcrypt' },
        hash_cache: {},
      },
    },
  };
}

/** ACL: the tunnel addresses of the route's acl_peer_ids that are on the interface now (enabled, not expired). */
export function aclPeerAddresses(route: { acl_peer_ids: readonly number[] }, peers: Map<number, PeerTarget>): string[] {
  return route.acl_peer_ids.flatMap((id) => {
    const p = peers.get(id);
    return p?.enabled ? [p.address] : [];
  });
}

/** remote_ip matcher (the TCP peer: the tunnel address for VPN peers; X-Forwarded-For is not trusted). */
export function remoteIpMatcher(ranges: readonly string[]): Json {
  return { remote_ip: { ranges: [...ranges] } };
}

/** Peer ACL matcher: requests whose source is NOT one of the peers' tunnel addresses. */
export function aclMatcher(peerAddresses: readonly string[]): Json {
  return { not: [remoteIpMatcher(peerAddresses.map((a) => a.split('/')[0]))] };
}

/** Peer ACL: 403 for every source that is not an allowed peer (no allowed peer: 403 for all). */
export function aclRoute(peerAddresses: readonly string[]): CaddyRoute {
  if (!peerAddresses.length) return { handle: [forbidden('Forbidden')] };
  return { handle: [forbidden('Forbidden')], match: [aclMatcher(peerAddresses)] };
}

/**
 * IP filter in Caddy (routes without route auth): whitelist → 403 unless the source matches;
 * blacklist → 403 when it matches. An empty whitelist refuses everyone; an empty blacklist gives
 * no route (null).
 */
export function ipFilterRoute(
  mode: IpFilterMode,
  rules: readonly IpRuleInput[] | string | null,
  settings?: Pick<ProxySettings, 'trustedProxies'>,
): CaddyRoute | null {
  const ranges = parseStoredRules(rules ?? []);
  if (mode === 'blacklist') return ranges.length ? { handle: [forbidden('Forbidden')], match: [ipFilterMatcher(ranges, settings)] } : null;
  if (!ranges.length) return { handle: [forbidden('Forbidden')] };
  return { handle: [forbidden('Forbidden')], match: [{ not: [ipFilterMatcher(ranges, settings)] }] };
}

const UNIT_NS: Record<string, number> = { s: 1e9, m: 60e9, h: 3600e9, d: 86400e9 };
const WORD: Record<string, string> = { second: '1s', minute: '1m', hour: '1h', day: '1d' };

/** '30s' | '1m' | '15m' | '1h' | '1d' (or second/minute/hour/day) → nanoseconds (Caddy duration). */
export function rateWindowNs(window: string | null | undefined): number {
  const w = WORD[(window ?? '').trim()] ?? (window ?? '').trim();
  const m = /^([1-9]\d{0,5})(s|m|h|d)$/.exec(w);
  if (!m) throw new Error(`invalid rate limit window ${JSON.stringify(window)}`);
  return Number(m[1]) * UNIT_NS[m[2]];
}

export function rateLimitZone(routeId: number): string {
  return `gatehouse_route_${routeId}`;
}

/** caddy-ratelimit handler: one zone per route, keyed by the client address; 429 when exceeded. */
export function rateLimitHandler(route: Pick<ProtectedRoute, 'id' | 'rate_limit_requests' | 'rate_limit_window'>): CaddyHandler {
  if (!route.rate_limit_requests || route.rate_limit_requests < 1) throw new Error(`route ${route.id}: rate_limit_requests must be a positive integer`);
  return {
    handler: 'rate_limit',
    rate_limits: {
      [rateLimitZone(route.id)]: {
        key: '{http.request.remote.host}',
        max_events: route.rate_limit_requests,
        window: rateWindowNs(route.rate_limit_window ?? '1m'),
      },
    },
  };
}

export interface ProtectionOptions {
  /** The route has a route_auth configuration. */
  routeAuth: boolean;
  /** host:port of the sidecar (ProxySettings.sidecarUpstream). */
  sidecarUpstream: string;
  /** Tunnel addresses of the route's acl_peer_ids (enabled peers only). */
  aclAddresses: readonly string[];
  /** The country filter's route (fragments/geo.ts), after the IP filter. */
  geo?: CaddyRoute | null;
  /** GATEHOUSE_TRUSTED_PROXIES: the IP filter judges client_ip then (fragments/geo.ts). */
  trustedProxies?: string[];
}

/** The whole route list of a protected host, in the order of the note at the top of this file. */
export function protectionRoutes(
  route: ProtectedRoute,
  opts: ProtectionOptions,
  rest: readonly CaddyHandler[],
  tail: readonly CaddyRoute[] = [],
): CaddyRoute[] {
  const out: CaddyRoute[] = [];
  if (route.acl_enabled) out.push(aclRoute(opts.aclAddresses));
  if (route.ip_filter_enabled && !opts.routeAuth) {
    const f = ipFilterRoute(route.ip_filter_mode === 'blacklist' ? 'blacklist' : 'whitelist', route.ip_filter_rules, opts);
    if (f) out.push(f);
  }
  if (opts.geo) out.push(opts.geo);
  const limit = route.rate_limit_enabled && route.rate_limit_requests ? rateLimitHandler(route) : null;
  const chain: CaddyHandler[] = [];
  if (opts.routeAuth) {
    out.push(routeAuthPagesRoute(route.domain, opts.sidecarUpstream));
    chain.push(routeAuthForwardHandler(route.domain, opts.sidecarUpstream));
    if (limit) chain.push(limit);
  } else if (route.basic_auth_user && route.basic_auth_password_hash && !route.domain.startsWith('*.')) {
    // share links on a basic-auth route (a wildcard domain has none): the share page, the rate limit,
    // the forward auth of requests with the route's cookie, then the basic auth unless that let it in
    const [page, shared] = shareLinkRoutes(route, opts.sidecarUpstream);
    out.push(page);
    if (limit) out.push({ handle: [limit] });
    out.push(shared, { handle: [basicAuthHandler(route.basic_auth_user, route.basic_auth_password_hash)], match: [notShared] });
  } else {
    if (limit) chain.push(limit);
    if (route.basic_auth_user && route.basic_auth_password_hash) chain.push(basicAuthHandler(route.basic_auth_user, route.basic_auth_password_hash));
  }
  chain.push(...rest);
  if (chain.length) out.push({ handle: chain });
  out.push(...tail);
  return out;
}
