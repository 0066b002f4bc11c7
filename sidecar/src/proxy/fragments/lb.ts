// Several backends, active health checks, header operations and compression of an HTTP route
// (routes/traffic.ts has the fields and rules), rendered with Caddy's stock reverse_proxy load
// balancing (`load_balancing.selection_policy`), active health checks (`health_checks.active`),
// header operations (`headers.request` / `headers.response`) and `encode`. Pure.
//
// Sticky cookies (lb_policy cookie): Caddy writes the chosen upstream into the cookie as an
// HMAC-SHA256 of its dial address under the policy's `secret`. Without a secret the HMAC key is
// empty, and anyone can compute the value of every tunnel address and pick or probe a backend; so
// each route gets its own secret (lbCookieSecret), derived from the master key and the route id:
// the same at every render and restart, so a reload keeps each client on its backend.
//
// Passive failure counting stays with the route's circuit breaker (fragments/resilience.ts): the
// reverse_proxy has no `health_checks.passive`.
import crypto from 'node:crypto';
import type { Route } from '../../routes/model.js';
import { ENCODINGS, type Encoding, type HeaderOps } from '../../routes/traffic.js';
import type { CaddyHandler, Json } from '../caddy-json.js';
import type { ProxySettings, RenderContext } from '../render-context.js';
import { routeUpstream } from './upstream.js';

export interface Upstream {
  host: string;
  port: number;
  weight: number;
}

export const dialOf = (u: { host: string; port: number }) => `${u.host.includes(':') ? `[${u.host}]` : u.host}:${u.port}`;

/**
 * The upstreams of a route in order: its single target, or each of its backends whose peer is on
 * the interface now (enabled, not expired; the others are left out as a disabled peer's route is
 * "offline"). Unavailable only when none is left.
 */
export function routeUpstreams(route: Route, ctx: Pick<RenderContext, 'peers' | 'settings'>): Upstream[] | { unavailable: string } {
  if (route.backends.length < 2) {
    const up = routeUpstream(route, ctx);
    return 'unavailable' in up ? up : [{ ...up, weight: 1 }];
  }
  const out: Upstream[] = [];
  for (const b of route.backends) {
    const peer = ctx.peers.get(b.peer_id);
    if (!peer?.enabled) continue;
    out.push({ host: peer.address.split('/')[0], port: b.target_port, weight: b.weight });
  }
  return out.length ? out : { unavailable: 'no backend peer is enabled' };
}

/** The HMAC secret of a route's sticky cookie: per route, from the server's key (never empty). */
export function lbCookieSecret(route: Pick<Route, 'id'>, settings: Pick<ProxySettings, 'lbCookieKey'>): string {
  if (!settings.lbCookieKey) throw new Error('no key for the sticky-cookie secrets (ProxySettings.lbCookieKey)');
  return crypto.createHmac('sha256', settings.lbCookieKey).update(`lb-cookie:${route.id}`).digest('hex');
}

/** The reverse_proxy's load_balancing.selection_policy of a route with several upstreams. */
export function selectionPolicy(route: Route, ups: Upstream[], settings: Pick<ProxySettings, 'lbCookieKey'>): Json {
  switch (route.lb_policy ?? 'round_robin') {
    case 'least_conn':
      return { policy: 'least_conn' };
    case 'ip_hash':
      // the client address as Caddy determines it (trusted proxies honoured)
      return { policy: 'client_ip_hash' };
    case 'first':
      return { policy: 'first' };
    case 'cookie':
      return { policy: 'cookie', name: route.lb_cookie_name ?? 'gh_lb', secret: lbCookieSecret(route, settings), fallback: { policy: 'round_robin' } };
    default:
      return ups.some((u) => u.weight !== 1) ? { policy: 'weighted_round_robin', weights: ups.map((u) => u.weight) } : { policy: 'round_robin' };
  }
}

/** What a documented placeholder of a header value becomes (routes/traffic.ts HEADER_PLACEHOLDERS). */
export function headerPlaceholders(route: Route, ctx: Pick<RenderContext, 'protectedRouteIds'>): Record<string, string> {
  const routeAuth = ctx.protectedRouteIds?.has(route.id) ?? false;
  return {
    '{client_ip}': '{http.vars.client_ip}',
    '{host}': '{http.request.host}',
    '{route_id}': String(route.id),
    '{route_domain}': route.domain,
    // the route-auth account (the verified X-Auth-User forward auth copies) or the basic-auth user
    '{user}': routeAuth ? '{http.request.header.X-Auth-User}' : route.basic_auth_user ? '{http.auth.user.id}' : '',
  };
}

function headerOps(ops: HeaderOps, vars: Record<string, string>): Json | null {
  const set = Object.entries(ops.set);
  if (!set.length && !ops.delete.length) return null;
  const out: Json = {};
  if (set.length) out.set = Object.fromEntries(set.map(([k, v]) => [k, [v.replace(/\{[a-z_]+\}/g, (p) => vars[p] ?? p)]]));
  if (ops.delete.length) out.delete = ops.delete;
  return out;
}

/** The route's reverse_proxy with its upstreams, load balancing, active health checks and header operations. */
export function withTraffic(h: CaddyHandler, route: Route, ups: Upstream[], ctx: Pick<RenderContext, 'protectedRouteIds' | 'settings'>): CaddyHandler {
  const out: CaddyHandler = { ...h };
  if (ups.length > 1) {
    out.upstreams = ups.map((u) => ({ dial: dialOf(u) }));
    // a dial that fails (server stopped, not yet detected) is tried on the next upstream
    out.load_balancing = { selection_policy: selectionPolicy(route, ups, ctx.settings), retries: ups.length - 1 };
  }
  if (route.health_check) {
    const c = route.health_check;
    const active: Json = { uri: c.path, interval: `${c.interval_s}s`, timeout: `${c.timeout_s}s`, expect_status: c.expect_status };
    // name-based backends answer the route's own site
    if (!route.domain.startsWith('*.') && route.domain) active.headers = { Host: [route.domain] };
    out.health_checks = { active };
  }
  const vars = headerPlaceholders(route, ctx);
  const req = route.request_headers ? headerOps(route.request_headers, vars) : null;
  const res = route.response_headers ? headerOps(route.response_headers, vars) : null;
  if (req || res) out.headers = { ...(req ? { request: req } : {}), ...(res ? { response: res } : {}) };
  return out;
}

/** The encodings of a route: its compression list (compress_enabled alone: zstd and gzip, routes written before the list). */
export function routeEncodings(route: Route): Encoding[] {
  return route.compression.length ? route.compression : route.compress_enabled ? [...ENCODINGS] : [];
}
