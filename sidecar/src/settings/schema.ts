// Request schemas of the settings API (zod): profile, password, language, themes, security, monitoring.
import { z } from 'zod';
import { MAX_MONITOR_INTERVAL_S, MIN_MONITOR_INTERVAL_S } from '../resilience/monitor.js';
import { passwordSchema, userView, usernameSchema } from '../users/schema.js';

const lockoutBody = z
  .strictObject({
    max_attempts: z.number().int().min(1).max(100),
    duration: z.number().int().min(1).max(24 * 60),
  })
  .partial()
  .refine((v) => Object.keys(v).length > 0, 'nothing to update');

export const profileBody = z.strictObject({ username: usernameSchema, email: z.string().trim().email('must be an email address').nullable(), language: z.enum(['de', 'en']) }).partial();
export const passwordChangeBody = z.strictObject({ current: z.string().min(1, 'required'), next: passwordSchema });
export const languageBody = z.strictObject({ language: z.enum(['de', 'en']) });
export const themeBody = z.strictObject({ theme: z.enum(['pro', 'default']).nullable() });
export const defaultThemeBody = z.strictObject({ theme: z.enum(['pro', 'default']) });
export const securityBody = z.strictObject({ lockout: lockoutBody });
export const monitoringBody = z.strictObject({ interval_seconds: z.number({ error: 'must be a number of seconds' }).int('must be a whole number of seconds').min(MIN_MONITOR_INTERVAL_S).max(MAX_MONITOR_INTERVAL_S) });

const lockoutView = z.object({ max_attempts: z.number().int(), duration: z.number().int().meta({ description: 'minutes' }) });
export const profileResponse = z.object({ ok: z.literal(true), profile: userView });
export const lockoutResponse = z.object({ ok: z.literal(true), lockout: lockoutView });
export const defaultThemeResponse = z.object({ ok: z.literal(true), theme: z.enum(['pro', 'default']) });
export const clearLogsResponse = z.object({ ok: z.literal(true), cleared: z.object({ activity: z.number().int(), access: z.number().int() }).meta({ description: 'rows removed from each log' }) });
export const appSettingsResponse = z.object({
  ok: z.literal(true),
  app: z.object({
    name: z.string(),
    version: z.string(),
    default_theme: z.enum(['pro', 'default']),
    default_language: z.enum(['en', 'de']),
    token_prefix: z.string(),
    fingerprint_header: z.string(),
    wireguard: z.object({ interface: z.string(), port: z.number().int(), subnet: z.string(), public_host: z.string().nullable() }),
    dns_domain: z.string(),
    tls: z.enum(['acme', 'internal']),
    admin_domain: z.string().nullable(),
    security: z.object({ lockout: lockoutView }),
  }),
});
export const monitoringResponse = z.object({ ok: z.literal(true), monitoring: z.object({ interval_seconds: z.number().int() }) });
