// Request schemas of the settings API (zod): profile, password, language, themes, security, monitoring.
import { z } from 'zod';
import { MAX_MONITOR_INTERVAL_S, MIN_MONITOR_INTERVAL_S } from '../resilience/monitor.js';
import { passwordSchema, usernameSchema } from '../users/schema.js';

const lockoutBody = z
  .object({
    max_attempts: z.number().int().min(1).max(100),
    duration: z.number().int().min(1).max(24 * 60),
  })
  .partial()
  .refine((v) => Object.keys(v).length > 0, 'nothing to update');

export const profileBody = z.object({ username: usernameSchema, email: z.string().trim().email('must be an email address').nullable(), language: z.enum(['de', 'en']) }).partial();
export const passwordChangeBody = z.object({ current: z.string().min(1, 'required'), next: passwordSchema });
export const languageBody = z.object({ language: z.enum(['de', 'en']) });
export const themeBody = z.object({ theme: z.enum(['pro', 'default']).nullable() });
export const defaultThemeBody = z.object({ theme: z.enum(['pro', 'default']) });
export const securityBody = z.object({ lockout: lockoutBody });
export const monitoringBody = z.object({ interval_seconds: z.number({ error: 'must be a number of seconds' }).int('must be a whole number of seconds').min(MIN_MONITOR_INTERVAL_S).max(MAX_MONITOR_INTERVAL_S) });
