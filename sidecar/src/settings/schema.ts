// Request schemas of the settings API (zod): profile, password, language, themes, security (the
// monitoring interval's are the resilience feature's: resilience/schema.ts).
import { z } from 'zod';
import { UNPROCESSABLE } from '../http/fields.js';
import { passwordSchema, userView, usernameSchema } from '../users/schema.js';
import { PUBLIC_HOST_PROBLEMS } from '../system/schema.js';

const lockoutBody = z
  .strictObject({
    max_attempts: z.number().int().min(1).max(100),
    duration: z
      .number()
      .int()
      .min(1)
      .max(24 * 60),
  })
  .partial()
  .refine((v) => Object.keys(v).length > 0, { message: 'nothing to update', params: UNPROCESSABLE });

export const profileBody = z
  .strictObject({ username: usernameSchema, email: z.string().trim().email('must be an email address').nullable(), language: z.enum(['de', 'en']) })
  .partial();
export const passwordChangeBody = z.strictObject({ current: z.string().min(1, 'required'), next: passwordSchema });
export const languageBody = z.strictObject({ language: z.enum(['de', 'en']) });
export const themeBody = z.strictObject({ theme: z.enum(['pro', 'default']).nullable() });
export const defaultThemeBody = z.strictObject({ theme: z.enum(['pro', 'default']) });
export const securityBody = z.strictObject({ lockout: lockoutBody });

const lockoutView = z.object({ max_attempts: z.number().int(), duration: z.number().int().meta({ description: 'minutes' }) });
export const profileResponse = z.object({ ok: z.literal(true), profile: userView });
export const lockoutResponse = z.object({ ok: z.literal(true), lockout: lockoutView });
export const defaultThemeResponse = z.object({ ok: z.literal(true), theme: z.enum(['pro', 'default']) });
export const clearLogsResponse = z.object({
  ok: z.literal(true),
  cleared: z.object({ activity: z.number().int(), access: z.number().int() }).meta({ description: 'rows removed from each log' }),
});
export const appSettingsResponse = z.object({
  ok: z.literal(true),
  app: z.object({
    name: z.string(),
    version: z.string(),
    default_theme: z.enum(['pro', 'default']),
    default_language: z.enum(['en', 'de']),
    token_prefix: z.string(),
    fingerprint_header: z.string(),
    wireguard: z.object({
      interface: z.string(),
      port: z.number().int(),
      subnet: z.string(),
      public_host: z.string().nullable().meta({ description: 'GATEHOUSE_PUBLIC_HOST as set; null: unset (see public_host for what applies)' }),
    }),
    public_host: z
      .object({
        host: z.string().meta({ description: 'what peer configs (Endpoint = host:port) and gateway-mode RDP use now' }),
        source: z.enum(['env', 'hostname']).meta({ description: "env: GATEHOUSE_PUBLIC_HOST; hostname: unset, this machine's hostname is the fallback" }),
        internet_resolvable: z.boolean().meta({
          description:
            'judged by its form: false for a single-label name, a local-only suffix (.local, .lan, .internal, .home.arpa, ...), a private, loopback or link-local IP',
        }),
        problem: z.enum(PUBLIC_HOST_PROBLEMS).nullable().meta({ description: 'why it is not internet-resolvable; null when it may be' }),
        warning: z.string().nullable().meta({
          description:
            'set when the hostname fallback is not internet-resolvable (also logged at start); the admin UI shows it on the dashboard and the peer config',
        }),
      })
      .meta({ description: "This server's public host: what peers dial" }),
    dns_domain: z.string(),
    tls: z.enum(['acme', 'internal']),
    admin_domain: z.string().nullable(),
    security: z.object({ lockout: lockoutView }),
  }),
});
