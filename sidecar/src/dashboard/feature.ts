// The dashboard feature: /dashboard (dashboard/endpoints.ts). The service is ctx.dashboard.
import type { Feature } from '../feature.js';
import { dashboardEndpoints } from './endpoints.js';

export const dashboardFeature: Feature = {
  name: 'dashboard',
  endpoints: (ctx) => dashboardEndpoints(ctx),
};
