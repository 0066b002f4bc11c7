// The logs feature: the activity log (GET /logs/activity, /logs/recent, /logs/activity/export:
// logs/endpoints.ts; ctx.activity, built with the platform). The reverse proxy's access log
// (GET /logs/access) is the resilience feature's.
import type { Feature } from '../feature.js';
import { logEndpoints } from './endpoints.js';

export const logsFeature: Feature = {
  name: 'logs',
  endpoints: (ctx) => logEndpoints(ctx),
};
