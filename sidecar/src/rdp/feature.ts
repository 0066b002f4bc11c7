// The RDP routes feature (licence feature remote_desktop): the /rdp endpoints. The service is ctx.rdp
// (app-context.ts); status, WoL, sessions and history add their own endpoints (ops-endpoints.ts).
import type { Feature } from '../feature.js';
import { rdpEndpoints } from './endpoints.js';

export const rdpFeature: Feature = {
  name: 'rdp',
  endpoints: (ctx) => rdpEndpoints(ctx),
};
