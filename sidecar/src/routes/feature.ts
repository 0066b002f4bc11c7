// The routes feature: the /routes endpoints. The service is ctx.routes (app-context.ts).
import type { Feature } from '../feature.js';
import { defineRouteModels } from './model.js';
import { routeEndpoints } from './endpoints.js';
import { backendHealth, backendHealthEndpoints } from './backend-health.js';

export const routesFeature: Feature = {
  name: 'routes',
  models: defineRouteModels,
  endpoints: (ctx) => [...routeEndpoints(ctx), ...backendHealthEndpoints(ctx)],
  // the live backend states (routes/backend-health.ts)
  start: (ctx) => backendHealth(ctx).start(),
  stop: (ctx) => backendHealth(ctx).stop(),
};
