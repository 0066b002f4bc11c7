// The metrics feature: GET /metrics (metrics/endpoints.ts) and GET /api/v1/system/resources (the
// host's CPU, memory and disk: metrics/resources-endpoints.ts, metrics/resources.ts). The metrics
// service is ctx.metrics (app-context.ts), built before the proxy and route auth so that they count
// into it.
import type { Feature } from '../feature.js';
import { metricsEndpoints } from './endpoints.js';
import { systemResourceEndpoints } from './resources-endpoints.js';

export const metricsFeature: Feature = {
  name: 'metrics',
  endpoints: (ctx) => [...metricsEndpoints(ctx), ...systemResourceEndpoints(ctx)],
};
