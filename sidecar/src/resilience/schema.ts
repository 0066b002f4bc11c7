// Schemas of the resilience feature's settings (GET/PUT /settings/monitoring, zod), and the bounds of
// the uptime monitor's interval; browsers can import them (no Node module in their graph).
import { z } from 'zod';

export const MIN_MONITOR_INTERVAL_S = 5;
export const MAX_MONITOR_INTERVAL_S = 3600;

export const monitoringBody = z.strictObject({
  interval_seconds: z
    .number({ error: 'must be a number of seconds' })
    .int('must be a whole number of seconds')
    .min(MIN_MONITOR_INTERVAL_S)
    .max(MAX_MONITOR_INTERVAL_S),
});
/** POST /internal/circuit-breaker: whether Caddy's report was applied. */
export const breakerReportResponse = z.object({
  ok: z.literal(true),
  applied: z.boolean().meta({ description: 'false: an older report than the last one, ignored' }),
});
export const monitoringResponse = z.object({ ok: z.literal(true), monitoring: z.object({ interval_seconds: z.number().int() }) });
