// Route resilience, sidecar side. The services are ctx.breaker, ctx.accessLog and ctx.monitor (app-context.ts).
// - circuit breaker: Caddy's state reports (POST /internal/circuit-breaker) and reset (breaker.ts)
// - access log: ingestion of Caddy's JSON access log, GET /logs/access(/export), GET /routes/:id/trace
//   (the last TRACE_LIMIT = 100 requests of the route, from the ingested rows) (logs/access-log.ts)
// - uptime monitoring: the scheduler, POST /routes/:id/check, GET /routes/:id/checks,
//   GET/PUT /settings/monitoring (the interval; a change applies at once) (monitor.ts)
import { z } from 'zod';
import type { AppContext, Feature } from '../app-context.js';
import { actingUserId } from '../http/auth.js';
import { defineEndpoint, paging, type Endpoint } from '../http/registry.js';
import { TRACE_LIMIT } from '../logs/access-log.js';
import { sendExport } from '../logs/endpoints.js';
import { BREAKER_REPORT_PATH } from '../proxy/fragments/resilience.js';
import { notFound, validation } from '../util/errors.js';
import { breakerReport } from './breaker.js';
import { DEFAULT_MONITOR_INTERVAL_S, MAX_MONITOR_INTERVAL_S, MIN_MONITOR_INTERVAL_S, monitorable } from './monitor.js';

const MONITOR_INTERVAL_KEY = 'monitoring_interval_seconds';

/** The stored interval, or the default when it is missing or out of range. */
async function monitorInterval(deps: AppContext): Promise<number> {
  const v = Number(await deps.settings.get(MONITOR_INTERVAL_KEY, DEFAULT_MONITOR_INTERVAL_S));
  return Number.isInteger(v) && v >= MIN_MONITOR_INTERVAL_S && v <= MAX_MONITOR_INTERVAL_S ? v : DEFAULT_MONITOR_INTERVAL_S;
}

const ACCESS_COLUMNS = ['id', 'ts', 'route_id', 'host', 'method', 'uri', 'status', 'duration_ms', 'size', 'upstream', 'client_ip', 'user_agent', 'auth_user'];
const withTime = <T extends { ts: number }>(e: T) => ({ ...e, time: new Date(e.ts).toISOString() });

function resilienceEndpoints(deps: AppContext): Endpoint[] {
  const svc = () => deps.breaker;
  const access = () => deps.accessLog;
  return [
    defineEndpoint({
      method: 'GET', path: '/logs/access', summary: 'Access log of the reverse proxy, newest first (limit, offset)', tags: ['logs'], query: paging,
      handler: async ({ query }) => {
        await access().poll();
        const r = await access().list(query);
        return { entries: r.entries.map(withTime), total: r.total };
      },
    }),
    defineEndpoint({
      method: 'GET', path: '/logs/access/export', summary: 'Access log as a CSV or JSON download (format=csv|json, limit)', tags: ['logs'],
      query: z.object({ format: z.enum(['csv', 'json'], { error: 'must be csv or json' }).default('json'), limit: z.coerce.number().int().min(1).max(100_000).default(10_000) }),
      handler: async ({ query }, ctx) => {
        await access().poll();
        const { entries } = await access().list({ limit: query.limit, offset: 0 });
        sendExport(ctx, 'access-log', query.format, entries.map(withTime) as unknown as Record<string, unknown>[], ['time', ...ACCESS_COLUMNS]);
      },
    }),
    defineEndpoint({
      method: 'GET', path: '/routes/:id/trace',
      summary: `The last ${TRACE_LIMIT} requests of the route (time, method, uri, status, duration, upstream, client ip, auth_user: who was signed in by route auth); with debug_enabled also request_headers and response_headers (credentials redacted) of the requests logged while it was on`,
      tags: ['routes'],
      handler: async ({ params }) => {
        const route = await deps.routes.getRoute(params.id as number);
        await access().poll();
        const entries = await access().trace(route.id);
        return {
          route_id: route.id,
          debug_enabled: route.debug_enabled,
          limit: TRACE_LIMIT,
          requests: entries.map((e) => ({
            time: new Date(e.ts).toISOString(), method: e.method, uri: e.uri, status: e.status, duration_ms: e.duration_ms, upstream: e.upstream, client_ip: e.client_ip, host: e.host, user_agent: e.user_agent,
            auth_user: e.auth_user,
            ...(route.debug_enabled && e.debug ? { request_headers: e.debug.request_headers, response_headers: e.debug.response_headers } : {}),
          })),
        };
      },
    }),
    defineEndpoint({
      method: 'POST', path: BREAKER_REPORT_PATH, auth: 'public', tags: ['routes'],
      summary: "Internal: Caddy's circuit-breaker state reports (loopback + X-Gatehouse-Secret only; 404 otherwise)",
      handler: async (_i, ctx) => {
        // Checked before anything is parsed: an outsider cannot tell this path from an unknown one.
        if (!svc().authorized(ctx)) throw notFound('Endpoint');
        const r = breakerReport.safeParse(ctx.request.body ?? {});
        if (!r.success) throw validation('Invalid report');
        return { applied: await svc().report(r.data) };
      },
    }),
    defineEndpoint({
      method: 'POST', path: '/routes/:id/check', summary: "Uptime check of the route's backend now (through the tunnel): HTTP GET / for HTTP routes, a TCP connect for TCP L4 routes (400 for UDP routes); returns the result", tags: ['routes'],
      handler: async ({ params }) => {
        const route = await deps.routes.getRoute(params.id as number);
        if (!monitorable(route)) throw validation('Uptime checks are for HTTP and TCP routes: a UDP service cannot be told up without its own protocol', { l4_protocol: 'udp routes cannot be checked' });
        return { check: await deps.monitor.check(route) };
      },
    }),
    defineEndpoint({
      method: 'GET', path: '/routes/:id/checks', summary: 'Uptime history of the route, newest first (limit)', tags: ['routes'],
      query: z.object({ limit: z.coerce.number().int().min(1).max(1000).default(100) }),
      handler: async ({ params, query }) => {
        const route = await deps.routes.getRoute(params.id as number);
        return { checks: await deps.monitor.history(route.id, query.limit) };
      },
    }),
    defineEndpoint({
      method: 'GET', path: '/settings/monitoring', summary: 'Uptime monitoring settings: interval_seconds (how often every monitored route is checked)', tags: ['settings'],
      handler: async () => ({ monitoring: { interval_seconds: await monitorInterval(deps) } }),
    }),
    defineEndpoint({
      method: 'PUT', path: '/settings/monitoring', summary: `Change the uptime monitoring interval ({interval_seconds}, ${MIN_MONITOR_INTERVAL_S}–${MAX_MONITOR_INTERVAL_S}); applies at once`, tags: ['settings'],
      body: z.object({ interval_seconds: z.number({ error: 'must be a number of seconds' }).int('must be a whole number of seconds').min(MIN_MONITOR_INTERVAL_S).max(MAX_MONITOR_INTERVAL_S) }),
      handler: async ({ body }, ctx) => {
        const before = await monitorInterval(deps);
        await deps.settings.set(MONITOR_INTERVAL_KEY, body.interval_seconds);
        deps.monitor.reschedule(body.interval_seconds);
        if (before !== body.interval_seconds) {
          await deps.activity.record({ source: 'settings', event_type: 'settings_changed', message: `Uptime monitoring interval set to ${body.interval_seconds} s`, details: { interval_seconds: body.interval_seconds, previous: before }, user_id: actingUserId(ctx.state.principal) });
        }
        return { monitoring: { interval_seconds: body.interval_seconds } };
      },
    }),
    defineEndpoint({
      method: 'POST', path: '/routes/:id/circuit-breaker/reset', tags: ['routes'],
      summary: "Close the route's circuit breaker now (zeroes the state; 400 when the breaker is not enabled)",
      handler: async ({ params }, ctx) => ({ circuit_breaker: await svc().reset(params.id as number, actingUserId(ctx.state.principal)) }),
    }),
  ];
}

export const resilienceFeature: Feature = {
  name: 'resilience',
  async start(ctx) {
    ctx.accessLog.start();
    ctx.monitor.start(await monitorInterval(ctx));
  },
  stop(ctx) {
    ctx.accessLog.stop();
    ctx.monitor.stop();
  },
  endpoints: (ctx) => resilienceEndpoints(ctx),
};
