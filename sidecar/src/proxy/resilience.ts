// Handlers of the route-resilience features (issue 6), rendered into a host's chain by
// routeHandlers() in render.ts. Pure: everything comes from the route and the render context.
//
// Order inside the chain (render.ts): ... auth → gatehouse_botblock → encode → gatehouse_mirror →
// gatehouse_circuit_breaker → reverse_proxy (with retries). The bot blocker runs before compression
// and mirroring so a blocked request is neither mirrored nor counted by the breaker; the mirror
// copies what reaches the backend; the breaker sits directly before reverse_proxy (module README)
// and sees one outcome per client request, after reverse_proxy's retries.
//
// Module JSON: caddy-modules/{botblock,mirror,circuitbreaker}/README.md, caddy-modules/RETRY.md.
import path from 'node:path';
import type { Route } from '../routes/model.js';
import type { CaddyConfig, CaddyHandler, RenderContext } from './render.js';

type Json = Record<string, unknown>;

/** File in the data directory holding the breaker-report secret (created 0600 by the sidecar). */
export const BREAKER_SECRET_FILE = 'caddy-report.secret';
export const BREAKER_REPORT_PATH = '/internal/circuit-breaker';
export const breakerSecretPath = (dataDir: string) => path.join(dataDir, BREAKER_SECRET_FILE);

/** In-memory breaker render state of one route: seeds and the reset marker (see BreakerMemory). */
export interface BreakerSeed {
  failure_count: number;
  opened_at: number;
  reset_at: number;
}

/** gatehouse_botblock from bot_blocker_mode + bot_blocker_config (shape: routes/schema.ts botConfig). */
export function botBlockHandler(route: Route): CaddyHandler {
  const h: CaddyHandler = { handler: 'gatehouse_botblock', route_id: String(route.id), mode: route.bot_blocker_mode ?? 'block' };
  const c = (route.bot_blocker_config ?? {}) as Json;
  for (const k of ['tarpit_delay', 'categories', 'custom_user_agents', 'allow_user_agents', 'block_empty_user_agent', 'block_exploit_paths', 'block_wordpress_paths', 'custom_paths', 'allow_paths']) {
    if (c[k] !== undefined && c[k] !== null) h[k] = c[k];
  }
  return h;
}

/** A mirror_targets entry as stored: {url} or {peer_id, port}. */
export type MirrorTarget = { url: string } | { peer_id: number; port: number };

/** gatehouse_mirror, or null when no target can be rendered (every peer target missing/disabled). */
export function mirrorHandler(route: Route, ctx: RenderContext): CaddyHandler | null {
  const urls: string[] = [];
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
  };
}

/** Must equal the number in the retry expressions (RETRY.md). */
export const RETRY_REQUEST_BUFFERS = 65536;
const RETRY_METHODS = ['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE'];
const BODY_OK = `({http.request.header.Content-Length} == '' ? ({http.request.method} != 'PUT' && {http.request.header.Transfer-Encoding} == '') : int({http.request.header.Content-Length}) < ${RETRY_REQUEST_BUFFERS})`;

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

/** Adds reverse_proxy retry fields (RETRY.md) to a reverse_proxy handler, in place. */
export function addRetries(h: CaddyHandler, route: Route): CaddyHandler {
  if (!route.retry_enabled || !route.retry_count || route.retry_count < 1) return h;
  const statuses = retryStatuses(route.retry_status_codes);
  const match: Json[] = [];
  if (statuses.length) match.push({ method: RETRY_METHODS, expression: `{http.reverse_proxy.status_code} in [${statuses.join(', ')}] && ${BODY_OK}` });
  match.push({ method: RETRY_METHODS, expression: `{http.reverse_proxy.is_transport_error} && ${BODY_OK}` });
  h.request_buffers = RETRY_REQUEST_BUFFERS;
  h.load_balancing = { retries: route.retry_count, retry_match: match };
  return h;
}

/** Caddy's JSON access log: <dataDir>/caddy/access.log, read by the sidecar (logs/access-log.ts). */
export const accessLogFile = (dataDir: string) => path.join(dataDir, 'caddy', 'access.log');
export const ACCESS_LOGGER = 'gatehouse';
/** Roll settings of the access-log file (Caddy's file writer; rotated files are access-<time>.log). */
export const ACCESS_LOG_ROLL = { roll_size_mb: 20, roll_keep: 3, roll_keep_days: 7 };

/**
 * Every HTTP server logs every request to the logger http.log.access.gatehouse
 * (`logs.default_logger_name`, one name for all hosts instead of a host→name map of 10,000
 * entries); the sidecar maps each line's Host to its route. The logger writes JSON lines to
 * `file` only (excluded from Caddy's default log).
 */
export function addAccessLog(cfg: CaddyConfig, servers: Record<string, Json>, file: string): void {
  for (const srv of Object.values(servers)) srv.logs = { default_logger_name: ACCESS_LOGGER };
  cfg.logging = {
    logs: {
      default: { exclude: [`http.log.access.${ACCESS_LOGGER}`] },
      [ACCESS_LOGGER]: {
        writer: { output: 'file', filename: file, ...ACCESS_LOG_ROLL },
        encoder: { format: 'json' },
        include: [`http.log.access.${ACCESS_LOGGER}`],
      },
    },
  };
}
