// Access windows (routes' and peers' access_schedule): the boundary scheduler (service.ts, started
// after the proxy and WireGuard) and the closed page Caddy sends a closed route's requests to
// (closed-page.ts, a fast path). The field itself is part of the routes and peers APIs.
import type { Feature } from '../feature.js';
import { ensureBreakerSecret } from '../resilience/breaker.js';
import { closedPageFastPath } from './closed-page.js';
import { parseSchedule } from './schedule.js';

export const accessWindowsFeature: Feature = {
  name: 'access-windows',
  async start(ctx) {
    await ctx.accessWindows.start();
  },
  stop(ctx) {
    ctx.accessWindows.stop();
  },
  fastPaths: (ctx) => [
    closedPageFastPath({
      secret: ensureBreakerSecret(ctx.config.dataDir),
      windows: () => ctx.accessWindows,
      clock: ctx.clock,
      scheduleOf: async (id) => {
        const row = (await ctx.db.models.Route.findByPk(id, { attributes: ['access_schedule'], raw: true })) as { access_schedule: string | null } | null;
        return parseSchedule(row?.access_schedule);
      },
    }),
  ],
};
