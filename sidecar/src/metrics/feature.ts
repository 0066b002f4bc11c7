// The metrics feature: GET /metrics (metrics/endpoints.ts). The service is ctx.metrics
// (app-context.ts), built before the proxy and route auth so that they count into it.
import type { Feature } from '../app-context.js';
import { metricsEndpoints } from './endpoints.js';

export const metricsFeature: Feature = {
  name: 'metrics',
  endpoints: (ctx) => metricsEndpoints(ctx),
};
