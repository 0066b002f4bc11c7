// The sign-in feature: /login (with its second-factor and enrolment steps), /logout, /password,
// /csrf, /session (auth/endpoints.ts), the accounts' second factor (auth/second-factor-endpoints.ts), and the
// hourly housekeeping of expired sessions and old login attempts. The services are ctx.sessions
// (http/session-store.ts) and ctx.lockout (auth/lockout.ts), built with the platform (app-context.ts).
import type { Feature } from '../feature.js';
import { authEndpoints } from './endpoints.js';
import { secondFactorEndpoints } from './second-factor-endpoints.js';

export const HOUSEKEEPING_INTERVAL_MS = 3_600_000;

export const authFeature: Feature = {
  name: 'auth',
  endpoints: (ctx) => [...authEndpoints(ctx), ...secondFactorEndpoints(ctx)],
  start(ctx) {
    ctx.scheduler.every(
      'session housekeeping',
      HOUSEKEEPING_INTERVAL_MS,
      () => Promise.all([ctx.sessions.prune().catch(() => undefined), ctx.lockout.prune().catch(() => undefined)]),
      { scope: 'singleton' },
    );
  },
  stop(ctx) {
    ctx.scheduler.job('session housekeeping')?.stop();
  },
};
