// The licence feature: its endpoints and its scheduled work (the service is ctx.licence, built with
// the platform in app-context.ts createDeps because every gated code path asks it).
// - licence-check (every minute): notices expiry and the end of the refresh grace period;
// - licence-refresh (every GATEHOUSE_LICENCE_REFRESH_HOURS, and once at start) when GATEHOUSE_LICENCE_URL is set.
import type { Feature } from '../feature.js';
import { licenceEndpoints } from './endpoints.js';

export const CHECK_INTERVAL_MS = 60_000;

export const licenceFeature: Feature = {
  name: 'licence',
  endpoints: (ctx) => licenceEndpoints(ctx),
  start(ctx) {
    ctx.scheduler.every('licence-check', CHECK_INTERVAL_MS, () => ctx.licence.check(), { scope: 'per-node' });
    if (ctx.config.licence.url) {
      const job = ctx.scheduler.every('licence-refresh', ctx.config.licence.refreshHours * 3600 * 1000, () => ctx.licence.scheduledRefresh(), {
        scope: 'singleton',
      });
      void job.runNow().catch(() => undefined);
    }
  },
};
