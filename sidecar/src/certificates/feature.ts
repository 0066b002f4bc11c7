// The custom certificates feature: its table, the admin API under /certificates and the daily
// expiry check (a warning once per certificate that expires within EXPIRY_WARNING_DAYS). The
// renderer reads the certificates the routes use through ctx.proxy (app-context.ts).
import type { Feature } from '../feature.js';
import { defineCertificateModels } from './model.js';
import { certificateEndpoints } from './endpoints.js';

/** How often the expiry check runs (it warns once per certificate, so the rate only bounds the delay). */
export const EXPIRY_CHECK_INTERVAL_MS = 3_600_000;

export const certificatesFeature: Feature = {
  name: 'certificates',
  models: defineCertificateModels,
  endpoints: (ctx) => certificateEndpoints(() => ctx.customCertificates),
  async start(ctx) {
    await ctx.customCertificates.warnExpiring().catch((err) => ctx.log.warn(`certificate expiry check failed: ${(err as Error).message}`));
    ctx.scheduler.every('certificate expiry check', EXPIRY_CHECK_INTERVAL_MS, () => ctx.customCertificates.warnExpiring(), { scope: 'singleton' });
  },
  async stop(ctx) {
    ctx.scheduler.job('certificate expiry check')?.stop();
  },
};
