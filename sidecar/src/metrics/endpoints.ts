// GET /metrics: the container's metrics in the Prometheus text
// format (metrics/service.ts). Served at /metrics, outside /api/v1, to an admin session or an API
// token with scope system, full-access or read-only, given in a header or (for scrapers that cannot
// send headers, on this path only) as ?token=. Licence feature prometheus_metrics.
import type { AppContext } from '../app-context.js';
import { defineEndpoint, type Endpoint } from '../http/registry.js';

export function metricsEndpoints(deps: AppContext): Endpoint[] {
  return [
    defineEndpoint({
      method: 'GET',
      path: '/metrics',
      mount: 'root',
      queryToken: true,
      feature: 'prometheus_metrics',
      tags: ['system'],
      summary:
        'Metrics in the Prometheus text format (docs/reference/metrics.md lists every series). Session, or an API token with scope system, full-access or read-only: header Authorization: Bearer, X-API-Token or X-API-Key, or the query parameter token',
      rawResponse: { contentType: 'text/plain; version=0.0.4', description: 'The Prometheus text exposition format, version 0.0.4', strictAccept: true },
      handler: async (_i, ctx) => {
        if (!ctx.accepts('text/plain')) ctx.throw(406, 'This endpoint answers only text/plain (the Prometheus text format)');
        const text = await deps.metrics.scrape();
        ctx.set('Cache-Control', 'no-store');
        ctx.type = deps.metrics.contentType;
        ctx.body = text;
      },
    }),
  ];
}
