// The routes feature: the /routes endpoints. The service is ctx.routes (app-context.ts).
import type { Feature } from '../app-context.js';
import { routeEndpoints } from './endpoints.js';

export const routesFeature: Feature = {
  name: 'routes',
  endpoints: (ctx) => routeEndpoints(ctx),
};
