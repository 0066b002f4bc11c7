// Route resilience, sidecar side. The services are ctx.breaker, ctx.accessLog (the reverse proxy's
// access log, ingested from Caddy's JSON log: resilience/access-log.ts) and ctx.monitor
// (app-context.ts). Endpoints:
// - access log: GET /logs/access(/export) (resilience/access-log-endpoints.ts)
// - a route's trace, uptime checks and breaker reset: /routes/:id/... (resilience/route-endpoints.ts)
// - GET/PUT /settings/monitoring (resilience/monitoring-endpoints.ts)
// - here: Caddy's circuit-breaker state reports (POST /internal/circuit-breaker, internal to Caddy
//   and the sidecar).
// And the start/stop of the access-log reader and the uptime monitor.
import { msg } from '@gatehouse/common/messages/index.js';
import type { AppContext } from '../app-context.js';
import type { Feature } from '../feature.js';
import { defineEndpoint, type Endpoint } from '../http/registry.js';
import { BREAKER_REPORT_PATH } from '../proxy/fragments/resilience.js';
import { accessLogEndpoints } from './access-log-endpoints.js';
import { routeResilienceEndpoints } from './route-endpoints.js';
import { monitoringSettingsEndpoints } from './monitoring-endpoints.js';
import { notFound, validation } from '../util/errors.js';
import { breakerReport } from './breaker.js';
import { breakerReportResponse } from './schema.js';
import { monitorInterval } from './monitor-settings.js';

function breakerReportEndpoint(deps: AppContext): Endpoint {
  const svc = () => deps.breaker;
  return defineEndpoint({
    method: 'POST',
    path: BREAKER_REPORT_PATH,
    auth: 'public',
    tags: ['routes'],
    ownBody:
      'read by the handler only after the sender is known to be Caddy (loopback + X-Gatehouse-Secret), so that an outsider cannot tell this path from an unknown one',
    response: breakerReportResponse,
    errors: { '404': 'Not from loopback with the right X-Gatehouse-Secret (indistinguishable from an unknown path)' },
    summary: "Internal: Caddy's circuit-breaker state reports (loopback + X-Gatehouse-Secret only; 404 otherwise)",
    handler: async (_i, ctx) => {
      // Checked before anything is parsed: an outsider cannot tell this path from an unknown one.
      if (!svc().authorized(ctx)) throw notFound(msg('resource.not_found', { what: 'Endpoint' }));
      const r = breakerReport.safeParse(ctx.request.body ?? {});
      if (!r.success) throw validation(msg('request.invalid_report'));
      return { applied: await svc().report(r.data) };
    },
  });
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
  endpoints: (ctx) => [...accessLogEndpoints(ctx), ...routeResilienceEndpoints(ctx), breakerReportEndpoint(ctx), ...monitoringSettingsEndpoints(ctx)],
};
