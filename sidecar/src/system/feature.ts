// The system feature: GET /health (liveness: database and tunnel interface, system/health.ts). The
// public host (system/public-host.ts) is a platform service (ctx.publicHost).
import type { Feature } from '../feature.js';
import { healthEndpoints } from './health.js';

export const systemFeature: Feature = {
  name: 'system',
  endpoints: (ctx) => healthEndpoints(ctx),
};
