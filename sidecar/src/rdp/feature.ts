// The RDP feature (licence feature remote_desktop): the operations (status, Wake-on-LAN, sessions
// and history: rdp/ops-endpoints.ts) ahead of the RDP routes (/rdp: rdp/endpoints.ts), so that
// /rdp/status and /rdp/history/export are matched before /rdp/:id, then the desktop client's
// /client/rdp endpoints (rdp/client-endpoints.ts); and the scheduled status checks and the
// lost-session sweep. The services are ctx.rdp, ctx.rdpStatus, ctx.rdpWol and ctx.rdpSessions
// (app-context.ts).
import type { Feature } from '../feature.js';
import { defineRdpModels } from './model.js';
import { rdpEndpoints } from './endpoints.js';
import { rdpOpsEndpoints } from './ops-endpoints.js';
import { rdpClientEndpoints } from './client-endpoints.js';

export const rdpFeature: Feature = {
  name: 'rdp',
  models: defineRdpModels,
  endpoints: (ctx) => [...rdpOpsEndpoints(ctx), ...rdpEndpoints(ctx), ...rdpClientEndpoints(ctx)],
  start(ctx) {
    ctx.rdpStatus.start();
    ctx.rdpSessions.startSweep();
  },
  stop(ctx) {
    ctx.rdpStatus.stop();
    ctx.rdpSessions.stopSweep();
  },
};
