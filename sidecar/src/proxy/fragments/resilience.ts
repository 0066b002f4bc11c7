// Handlers of the route-resilience features (bot blocker, mirror, circuit breaker, retries),
// rendered into a host's chain by routeHandlers() in render.ts. Pure: everything comes from the route and the render context.
//
// Order inside the chain (render.ts): ... auth → gatehouse_botblock → encode → gatehouse_mirror →
// gatehouse_circuit_breaker → reverse_proxy (with retries: two routes after the chain, see
// retryRoutes). The bot blocker runs before compression and mirroring so a blocked request is
// neither mirrored nor counted by the breaker; the mirror copies what reaches the backend; the
// breaker sits directly before reverse_proxy (module README) and sees one outcome per client
// request, after the retries.
//
// Module JSON: caddy-modules/{botblock,mirror,circuitbreaker}/README.md, caddy-modules/RETRY.md.
import path from 'node:path';
import type { Route } from '../../routes/model.js';
import type { CaddyHandler, CaddyRoute, Json } from '../caddy-json.js';
import type { RenderContext } from '../render-context.js';

/** File in the data directory holding the breaker-report secret (created 0600 by the sidecar). */
export const BREAKER_SECRET_FILE = 'caddy-report.secret';
export const BREAKER_REPORT_PATH = '/internal/circuit-breaker';
export const breakerSecretPath = (dataDir: string) => path.join(dataDir, BREAKER_SECRET_FILE);

/** gatehouse_botblock from bot_blocker_mode + bot_blocker_config (shape: routes/schema.ts botConfig). */
export function botBlockHandler(route: Route): CaddyHandler {
  const h: CaddyHandler = { handler: 'gatehouse_botblock', route_id: String(route.id), mode: route.bot_blocker_mode ?? 'block' };
  const c = (route.bot_blocker_config ?? {}) as Json;
  for (const k of [
    'tarpit_delay',
    'categories',
    'custom_user_agents',
    'allow_user_agents',
    'block_empty_user_agent',
    'block_exploit_paths',
    'block_wordpress_paths',
    'custom_paths',
    'allow_paths',
  ]) {
    if (c[k] !== undefined && c[k] !== null) h[k] = c[k];
  }
  return h;
}

/** A mirror_targets entry as stored: {url} or {peer_id, port}. */
export type MirrorTarget = { url: string } | { peer_id: number; port: number };

/** gatehouse_mirror, or null when no target can be rendered (every peer target missing/disabled). */
export function mirrorHandler(route: Route, ctx: RenderContext): CaddyHandler | null {
  const urls: string[] = [];
  // reason: the stored JSON may also hold plain URL strings (written before the {url} form), which Route's type does not admit
  for (const t of route.mirror_targets as unknown as (MirrorTarget | string)[]) {
    let url: string | null = null;
    if (typeof t === 'string') url = /^https?:\/\//i.test(t) ? t : `http://${t}`;
    else if ('url' in t) url = t.url;
    else {
      const peer = ctx.peers.get(t.peer_id);
      if (peer?.enabled) {
        const ip = peer.address.split('/')[0];
        url = `http://${ip.includes(':') ? `[${ip}]` : ip}:${t.port}`;
      }
    }
    if (url !== null) {
      url = url.replace(/\/$/, '');
      if (!urls.includes(url)) urls.push(url);
    }
  }
  if (!urls.length) return null;
  return { handler: 'gatehouse_mirror', route_id: String(route.id), targets: urls.map((url) => ({ url })) };
}

/** gatehouse_circuit_breaker; the seed comes from the stored state unless the context pins one. */
export function circuitBreakerHandler(route: Route, ctx: RenderContext): CaddyHandler {
  const seed = ctx.breakers?.get(route.id) ?? { failure_count: route.cb_failure_count ?? 0, opened_at: route.cb_opened_at ?? 0, reset_at: 0 };
  return {
    handler: 'gatehouse_circuit_breaker',
    route_id: String(route.id),
    threshold: route.circuit_breaker_threshold ?? 5,
    timeout: route.circuit_breaker_timeout ?? 30,
    failure_count: seed.failure_count,
    opened_at: seed.opened_at,
    reset_at: seed.reset_at,
    report_url: `http://${ctx.settings.sidecarUpstream}${BREAKER_REPORT_PATH}`,
    report_secret: `{file.${breakerSecretPath(ctx.settings.dataDir)}}`,
    // The open 503 as an error, answered by the branded page (error-pages.ts circuit_open).
    open_as_error: true,
  };
}

/** Must equal the number in the retry expressions (RETRY.md). */
export const RETRY_REQUEST_BUFFERS = 65536;
/** Idempotent methods (RFC 9110 §9.2.2, TRACE left out): the only ones retried on a response status. */
const RETRY_METHODS = ['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE'];
/** The idempotent methods that usually carry no content: sent to the lean reverse_proxy when bodiless. */
const LEAN_METHODS = ['GET', 'HEAD', 'OPTIONS', 'DELETE'];
/**
 * "This request's body can be sent again", for the requests that reach the buffering
 * reverse_proxy: a Content-Length below request_buffers (the body is buffered whole), or no
 * Content-Length over HTTP/3 (which cannot say "no content" up front; a PUT without it is not
 * retried). Without Content-Length over HTTP/1 (chunked) or HTTP/2 (streamed) the request did
 * carry a body of unknown length, since bodiless ones take the lean reverse_proxy: not retried.
 */
const BODY_OK = `({http.request.header.Content-Length} == '' ? ({http.request.method} != 'PUT' && {http.request.proto} == 'HTTP/3.0') : int({http.request.header.Content-Length}) < ${RETRY_REQUEST_BUFFERS})`;
const TRANSPORT_ERROR = '{http.reverse_proxy.is_transport_error} == true';

/** Parses retry_status_codes: trimmed integers 100-599, de-duplicated, in order. */
export function retryStatuses(codes: string | null): number[] {
  const out: number[] = [];
  for (const part of (codes ?? '').split(',')) {
    const s = part.trim();
    if (!/^\d{3}$/.test(s)) continue;
    const n = Number(s);
    if (n >= 100 && n <= 599 && !out.includes(n)) out.push(n);
  }
  return out;
}

/**
 * The reverse_proxy of a route with retries (RETRY.md), as two routes that follow the route's
 * handler chain in its host's route list: bodiless GET, HEAD, OPTIONS and DELETE requests
 * (gatehouse_bodiless) take a lean copy of `h` (retries with one short status expression, nothing
 * buffered), every other request a copy that buffers bodies below request_buffers so that PUT and
 * DELETE with a body can be replayed. A reverse_proxy never calls the next handler, so a request
 * that the first route takes never reaches the second. Routes rather than a `subroute` handler:
 * Caddy compiles a subroute's routes on every request, a host's route list once.
 * null without retries: `h` goes at the end of the chain as it is.
 */
export function retryRoutes(h: CaddyHandler, route: Route): CaddyRoute[] | null {
  if (!route.retry_enabled || !route.retry_count || route.retry_count < 1) return null;
  const statuses = retryStatuses(route.retry_status_codes);
  const status = statuses.length ? `{http.reverse_proxy.status_code} in [${statuses.join(', ')}]` : null;
  const lean: CaddyHandler = {
    ...h,
    load_balancing: {
      ...(h.load_balancing as Json | undefined),
      retries: route.retry_count,
      retry_match: [...(status ? [{ expression: status }] : []), { expression: TRANSPORT_ERROR }],
    },
  };
  const buffering: CaddyHandler = {
    ...h,
    request_buffers: RETRY_REQUEST_BUFFERS,
    load_balancing: {
      ...(h.load_balancing as Json | undefined),
      retries: route.retry_count,
      retry_match: [
        ...(status ? [{ method: RETRY_METHODS, expression: `${status} && ${BODY_OK}` }] : []),
        { method: RETRY_METHODS, expression: `${TRANSPORT_ERROR} && ${BODY_OK}` },
      ],
    },
  };
  return [{ match: [{ method: LEAN_METHODS, gatehouse_bodiless: {} }], handle: [lean] }, { handle: [buffering] }];
}
