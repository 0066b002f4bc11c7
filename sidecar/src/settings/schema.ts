// Request schemas of the settings API (zod): profile, password, language, themes, security, network
// (the monitoring interval's are the resilience feature's: resilience/schema.ts).
import { z } from 'zod';
import { UNPROCESSABLE } from '../http/fields.js';
import { HOST_NAME, IPV4, IPV6, whole } from '../http/patterns.js';
import { passwordSchema, userView, usernameSchema } from '../users/schema.js';
import { PUBLIC_HOST_PROBLEMS, publicHostInfo } from '../system/schema.js';
import { fieldText } from '../http/messages.js';

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
  .strictObject({ username: usernameSchema, email: z.string().trim().email(fieldText('field.email')).nullable(), language: z.enum(['de', 'en']) })
  .partial();
export const passwordChangeBody = z.strictObject({ current: z.string().min(1, 'required'), next: passwordSchema });
export const languageBody = z.strictObject({ language: z.enum(['de', 'en']) });
export const themeBody = z.strictObject({ theme: z.enum(['pro', 'default']).nullable() });
export const defaultThemeBody = z.strictObject({ theme: z.enum(['pro', 'default']) });
const secondFactorPolicy = z.strictObject({
  required: z.boolean({ error: 'must be true or false' }).meta({
    description:
      'every admin-UI account needs a second factor (TOTP): a sign-in of an account without one goes through the enrolment page (GET /login/enrol) before the session opens',
  }),
});
export const securityBody = z
  .strictObject({ lockout: lockoutBody.optional(), second_factor: secondFactorPolicy.optional() })
  .refine((v) => v.lockout !== undefined || v.second_factor !== undefined, { message: 'nothing to update', params: UNPROCESSABLE });

const lockoutView = z.object({ max_attempts: z.number().int(), duration: z.number().int().meta({ description: 'minutes' }) });
export const profileResponse = z.object({ ok: z.literal(true), profile: userView });
export const lockoutResponse = z.object({ ok: z.literal(true), lockout: lockoutView, second_factor: z.object({ required: z.boolean() }) });
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
      public_host: z.string().nullable().meta({
        description: 'the public host set for this server (Network settings, else GATEHOUSE_PUBLIC_HOST); null: neither (see public_host for what applies)',
      }),
    }),
    public_host: publicHostInfo,
    dns_domain: z.string(),
    tls: z.enum(['acme', 'internal']).meta({ description: 'the TLS mode in effect (Network settings, else GATEHOUSE_TLS)' }),
    admin_domain: z.string().nullable(),
    security: z.object({ lockout: lockoutView }),
  }),
});

// ---------------------------------------------------------------- network (GET/PUT /settings/network)

/** A DNS name or an IP address (IPv6 with or without brackets), surrounding spaces allowed. */
const publicHostSchema = z
  .string()
  .regex(whole(`\\s*(?:${IPV4}|${IPV6}|\\[${IPV6}\\]|(?=[^\\s]{1,253}\\s*$)${HOST_NAME}\\.?)\\s*`), 'must be a DNS name or an IP address')
  .transform((v) =>
    v
      .trim()
      .replace(/^\[(.*)\]$/, '$1')
      .replace(/\.$/, '')
      .toLowerCase(),
  );
const publicIpSchema = z
  .string()
  .regex(whole(`\\s*${IPV4}\\s*`), 'must be an IPv4 address')
  .transform((v) => v.trim());
const acmeEmailSchema = z.string().trim().max(254).email(fieldText('field.email'));
export const TLS_MODES = ['acme', 'internal'] as const;

/**
 * PUT /settings/network: each field null to fall back to the environment (and for public_host, this
 * machine's hostname); a field left out keeps its stored value.
 */
export const networkBody = z
  .strictObject({
    public_host: publicHostSchema.nullable().meta({
      description: "the DNS name or IP address peers dial (Endpoint of every peer config); null: GATEHOUSE_PUBLIC_HOST, else this machine's hostname",
    }),
    public_ip: publicIpSchema
      .nullable()
      .meta({ description: "this server's public IPv4, what route domains should resolve to (Check DNS); null: GATEHOUSE_PUBLIC_IP" }),
    tls_mode: z.enum(TLS_MODES).nullable().meta({ description: "acme: public certificates (Let's Encrypt); internal: Caddy's local CA; null: GATEHOUSE_TLS" }),
    acme_email: acmeEmailSchema
      .nullable()
      .meta({ description: 'contact of the ACME account (optional: without one the account is registered without a contact); null: GATEHOUSE_ACME_EMAIL' }),
  })
  .partial();
export type NetworkBody = z.output<typeof networkBody>;

const stored = (d: string) =>
  z
    .string()
    .nullable()
    .meta({ description: `the stored value (PUT /settings/network); null: not set there, ${d}` });
const fromEnv = (name: string) =>
  z
    .string()
    .nullable()
    .meta({ description: `${name} as set; null: unset` });
export const networkView = z.object({
  public_host: z.object({
    value: z.string().meta({ description: 'what peer configs (Endpoint = host:port), gateway companions, desktop clients and gateway-mode RDP use now' }),
    source: z.enum(['settings', 'env', 'hostname']),
    stored: stored('GATEHOUSE_PUBLIC_HOST or the hostname applies'),
    env: fromEnv('GATEHOUSE_PUBLIC_HOST'),
    internet_resolvable: z.boolean().meta({ description: 'judged by its form (system/public-host.ts classifyHost)' }),
    problem: z.enum(PUBLIC_HOST_PROBLEMS).nullable(),
    warning: z.string().nullable().meta({ description: 'set when the hostname fallback is a host the internet cannot resolve' }),
  }),
  public_ip: z.object({
    value: z
      .string()
      .nullable()
      .meta({ description: 'the IPv4 route domains should resolve to; null: none set (Check DNS takes the first interface address)' }),
    source: z.enum(['settings', 'env', 'public_host']).nullable().meta({ description: 'public_host: the public host is an IPv4 address' }),
    stored: stored('GATEHOUSE_PUBLIC_IP applies'),
    env: fromEnv('GATEHOUSE_PUBLIC_IP'),
  }),
  tls_mode: z.object({
    value: z.enum(TLS_MODES),
    source: z.enum(['settings', 'env']).meta({ description: 'env: GATEHOUSE_TLS (default internal)' }),
    stored: z.enum(TLS_MODES).nullable(),
    env: z.enum(TLS_MODES),
  }),
  acme_email: z.object({
    value: z.string().nullable(),
    source: z.enum(['settings', 'env']).nullable(),
    stored: stored('GATEHOUSE_ACME_EMAIL applies'),
    env: fromEnv('GATEHOUSE_ACME_EMAIL'),
  }),
  hostname: z.string().meta({ description: "this machine's hostname (the public host's last fallback; the set-up step's suggestion)" }),
  endpoint: z.string().meta({ description: 'what peers dial now: public host and WireGuard port' }),
  setup: z.enum(['pending', 'saved', 'skipped', 'env']).meta({
    description:
      'the first-sign-in Network step: pending (never saved nor skipped, GATEHOUSE_PUBLIC_HOST unset: the admin UI asks), saved, skipped (POST /settings/network/skip-setup), env (GATEHOUSE_PUBLIC_HOST set)',
  }),
});
export type NetworkView = z.infer<typeof networkView>;
export const networkResponse = z.object({ ok: z.literal(true), network: networkView });
