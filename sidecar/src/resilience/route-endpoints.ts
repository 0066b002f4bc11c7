// A route's resilience endpoints: the trace of its last requests (from the ingested access log),
// uptime checks now and their history (ctx.monitor), and the circuit breaker's reset (ctx.breaker).
import { msg } from '@gatehouse/common/messages/index.js';
import type { AppContext } from '../app-context.js';
import { actingUserId } from '../http/auth.js';
import { defineEndpoint, type Endpoint } from '../http/registry.js';
import { TRACE_LIMIT } from './access-log.js';
import { monitorable } from './monitor.js';
import { AppError } from '../util/errors.js';
import { breakerResetResponse, checksQuery, routeCheckResponse, routeChecksResponse, traceResponse } from '../routes/schema.js';

export function routeResilienceEndpoints(deps: AppContext): Endpoint[] {
  const svc = () => deps.breaker;
  const access = () => deps.accessLog;
  return [
    defineEndpoint({
      method: 'GET',
      path: '/routes/:id/trace',
      response: traceResponse,
      summary: `The last ${TRACE_LIMIT} requests of the route (time, method, uri, status, duration, upstream, client ip, auth_user: who was signed in by route auth); with debug_enabled also request_headers and response_headers (credentials redacted) of the requests logged while it was on`,
      tags: ['routes'],
      handler: async ({ params }) => {
        const route = await deps.routes.getRoute(params.id);
        await access().poll();
        const entries = await access().trace(route.id);
        return {
          route_id: route.id,
          debug_enabled: route.debug_enabled,
          limit: TRACE_LIMIT,
          requests: entries.map((e) => ({
            time: new Date(e.ts).toISOString(),
            method: e.method,
            uri: e.uri,
            status: e.status,
            duration_ms: e.duration_ms,
            upstream: e.upstream,
            client_ip: e.client_ip,
            host: e.host,
            user_agent: e.user_agent,
            auth_user: e.auth_user,
            ...(route.debug_enabled && e.debug ? { request_headers: e.debug.request_headers, response_headers: e.debug.response_headers } : {}),
          })),
        };
      },
    }),
    defineEndpoint({
      method: 'POST',
      path: '/routes/:id/check',
      response: routeCheckResponse,
      summary:
        "Uptime check of the route's backend now (through the tunnel): HTTP GET / for HTTP routes, a TCP connect for TCP L4 routes (400 for UDP routes); returns the result",
      tags: ['routes'],
      handler: async ({ params }) => {
        const route = await deps.routes.getRoute(params.id);
        if (!monitorable(route)) throw new AppError('conflict', msg('route.udp_not_checkable'), { l4_protocol: msg('route.field.udp_not_checkable') });
        return { check: await deps.monitor.check(route) };
      },
    }),
    defineEndpoint({
      method: 'GET',
      path: '/routes/:id/checks',
      response: routeChecksResponse,
      summary: 'Uptime history of the route, newest first (limit)',
      tags: ['routes'],
      query: checksQuery,
      handler: async ({ params, query }) => {
        const route = await deps.routes.getRoute(params.id);
        return { checks: await deps.monitor.history(route.id, query.limit) };
      },
    }),
    defineEndpoint({
      method: 'POST',
      path: '/routes/:id/circuit-breaker/reset',
      response: breakerResetResponse,
      tags: ['routes'],
      feature: 'circuit_breaker',
      summary: "Close the route's circuit breaker now (zeroes the state; 400 when the breaker is not enabled)",
      handler: async ({ params }, ctx) => ({ circuit_breaker: await svc().reset(params.id, actingUserId(ctx.state.principal)) }),
    }),
  ];
}
