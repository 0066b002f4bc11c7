// The country database (geoip/service.ts, a platform service: ctx.geoip): GET /api/v1/system/geoip.
import type { Feature } from '../feature.js';
import { geoipEndpoints } from './endpoints.js';

export const geoipFeature: Feature = {
  name: 'geoip',
  endpoints: (ctx) => geoipEndpoints(ctx),
};
