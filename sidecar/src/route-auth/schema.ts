// Request schemas and constants of route auth.
import { z } from 'zod';
import { text, UNPROCESSABLE } from '../http/fields.js';
import { fieldIssue, fieldText } from '../http/messages.js';
import { msg } from '@gatehouse/common/messages/index.js';

/** the API: allowed session durations 1h, 12h, 24h, 7d, 30d (milliseconds). */
export const SESSION_DURATIONS: Record<string, number> = {
  '1h': 3_600_000,
  '12h': 43_200_000,
  '24h': 86_400_000,
  '7d': 604_800_000,
  '30d': 2_592_000_000,
};
export const SESSION_DURATION_VALUES = Object.values(SESSION_DURATIONS);

/** Email codes: 6 digits, valid 10 minutes, single use, 5 tries per code, one mail per 60 s per route and address. */
export const EMAIL_CODE_TTL_MS = 10 * 60_000;
export const EMAIL_CODE_MAX_ATTEMPTS = 5;
export const EMAIL_CODE_RESEND_MS = 60_000;
/** How long the first step of a two-step login (password done, or code requested) stays usable. */
export const PENDING_TTL_MS = 10 * 60_000;
/** Branding uploads: PNG, JPEG, GIF or WebP by content (SVG is refused: it can carry script), at most 2 MiB. */
export const BRANDING_MAX_BYTES = 2 * 1024 * 1024;

const email = z.string().trim().toLowerCase().max(254).email(fieldText('field.email'));
const color = z
  .string()
  .trim()
  .regex(/^#[0-9a-fA-F]{6}$/, 'must be a colour such as #1e66f5')
  .transform((v) => v.toLowerCase());
/** What the OpenAPI document says of logo_url and bg_image_url. */
const BRANDING_URL_DOC =
  'http(s) URL of a PNG, JPEG, GIF or WebP image, fetched once when saved through the request-forgery guard (global addresses only, at most 3 redirects, each checked) and stored locally; null removes it. 400 with this field "not allowed" for loopback, private ranges or this server, "could not be fetched" for any other failure';

const httpUrl = z
  .string()
  .trim()
  .max(2048)
  .refine((v) => {
    try {
      const u = new URL(v);
      return (u.protocol === 'http:' || u.protocol === 'https:') && !u.username && !u.password;
    } catch {
      return false;
    }
  }, 'must be an http(s) URL');
/** Titles and descriptions of the login page: text() with line breaks and tabs allowed. */
const noControl = (max: number) => text({ max, multiline: true });

/** The login methods of a route (oidc: through an OpenID Connect provider, route-auth/oidc.ts). */
export const LOGIN_METHODS = ['email_password', 'email_code', 'totp', 'oidc'] as const;
const loginMethod = z.enum(LOGIN_METHODS, { error: 'must be email_password, email_code, totp or oidc' });
/** The methods a second factor can follow. */
const FIRST_FACTORS: readonly string[] = ['email_password', 'oidc'];
const ALLOW_LIST_MAX = 200;

export const routeAuthBody = z
  .strictObject({
    method: loginMethod,
    two_factor_enabled: z.boolean().optional(),
    two_factor_method: z.enum(['email_code', 'totp'], { error: 'must be email_code or totp' }).nullable().optional(),
    email,
    /** bcrypt uses at most 72 bytes; omitted: the stored hash is kept */
    password: z
      .string()
      .min(8, 'at least 8 characters')
      .max(72, 'at most 72 bytes (bcrypt)')
      .refine((v) => Buffer.byteLength(v) <= 72, { message: 'at most 72 bytes (bcrypt): fewer characters outside ASCII', params: UNPROCESSABLE })
      .optional(),
    // A literal set (not a refinement) so the OpenAPI document shows the five values as an enum.
    session_max_age: z.literal(SESSION_DURATION_VALUES, { error: fieldText('field.one_of_durations', { values: [...SESSION_DURATION_VALUES] }) }),
    title: noControl(100).nullable().optional(),
    description: noControl(500).nullable().optional(),
    primary_color: color.nullable().optional(),
    bg_color: color.nullable().optional(),
    /** fetched once when saved, checked like an upload and stored locally (the login page loads nothing from elsewhere); null removes */
    logo_url: httpUrl.nullable().optional().meta({ description: BRANDING_URL_DOC }),
    bg_image_url: httpUrl.nullable().optional().meta({ description: BRANDING_URL_DOC }),
    oidc_provider_id: z
      .number({ error: 'must be an OIDC provider id' })
      .int('must be an OIDC provider id')
      .positive('must be an OIDC provider id')
      .max(2_147_483_647)
      .nullable()
      .optional()
      .meta({ description: 'method oidc: the OpenID Connect provider visitors sign in through (it must exist and be enabled, else 422)' }),
    allowed_emails: z
      .array(email)
      .max(ALLOW_LIST_MAX, fieldText('field.at_most', { max: ALLOW_LIST_MAX }))
      .optional()
      .meta({ description: "method oidc: the e-mail addresses (the provider's email claim, any case) let in" }),
    allowed_groups: z
      .array(text({ min: 1, max: 256 }))
      .max(ALLOW_LIST_MAX, fieldText('field.at_most', { max: ALLOW_LIST_MAX }))
      .optional()
      .meta({
        description:
          "method oidc: the provider's groups (its groups claim) let in. A visitor is let in when their address is in allowed_emails or one of their groups in allowed_groups; method oidc needs at least one entry in either (422)",
      }),
  })
  .superRefine((v, ctx) => {
    if (v.method === 'oidc') {
      if (v.oidc_provider_id === undefined || v.oidc_provider_id === null)
        ctx.addIssue({ code: 'custom', path: ['oidc_provider_id'], message: 'required for method oidc', params: UNPROCESSABLE });
      if (!v.allowed_emails?.length && !v.allowed_groups?.length)
        ctx.addIssue(fieldIssue(msg('route_auth.field.oidc_allow_list'), { path: ['allowed_emails'], params: UNPROCESSABLE }));
    }
    if (v.two_factor_enabled) {
      if (!FIRST_FACTORS.includes(v.method))
        ctx.addIssue({
          code: 'custom',
          path: ['two_factor_enabled'],
          message: 'two-factor needs method email_password or oidc as the first factor',
          params: UNPROCESSABLE,
        });
      if (!v.two_factor_method)
        ctx.addIssue({
          code: 'custom',
          path: ['two_factor_method'],
          message: 'required when two_factor_enabled is true (email_code or totp)',
          params: UNPROCESSABLE,
        });
    }
  });
export type RouteAuthInput = z.infer<typeof routeAuthBody>;

const routeUserId = z.number({ error: 'must be a user id' }).int().positive().max(2_147_483_647).optional();
/** Without user_id: the configured account's TOTP; with user_id: that route user's own TOTP. */
export const totpSetupBody = z.strictObject({ user_id: routeUserId });
export const totpVerifyBody = z.strictObject({
  token: z.string().regex(/^\s*\d{6}\s*$/, 'must be the 6-digit code from the authenticator app'),
  user_id: routeUserId,
});

/** The steps of the login page the admin preview can show. */
export const PREVIEW_STEPS = ['password', 'request_code', 'code_email', 'code_totp', 'totp', 'oidc'] as const;
const emptyToNull = (v: unknown) => (v === '' ? null : v);
/**
 * GET /routes/:id/auth/preview: branding values not saved yet override the stored ones (a parameter
 * given empty clears that value, one left out keeps the stored value); step defaults to the first
 * step of the given or stored method.
 */
export const previewQuery = z.strictObject({
  lang: z.enum(['en', 'de'], { error: 'must be en or de' }).optional(),
  method: loginMethod.optional(),
  step: z.enum(PREVIEW_STEPS, { error: fieldText('field.one_of', { values: [...PREVIEW_STEPS] }) }).optional(),
  title: z.preprocess(emptyToNull, noControl(100).nullable()).optional(),
  description: z.preprocess(emptyToNull, noControl(500).nullable()).optional(),
  primary_color: z.preprocess(emptyToNull, color.nullable()).optional(),
  bg_color: z.preprocess(emptyToNull, color.nullable()).optional(),
  v: z.string().max(64).optional().meta({ description: "ignored: a cache-buster (the admin app sends the configuration's updated_at)" }),
});
export type PreviewInput = z.infer<typeof previewQuery>;

const isoDate = z.string().meta({ format: 'date-time' });
/** A route's auth configuration as served (never its secrets), with the route's users. */
export const routeAuthView = z.object({
  route_id: z.number().int(),
  method: z.enum(LOGIN_METHODS),
  two_factor_enabled: z.boolean(),
  two_factor_method: z.enum(['email_code', 'totp']).nullable(),
  email: z.string(),
  password_set: z.boolean(),
  totp_active: z.boolean(),
  totp_setup_pending: z.boolean(),
  pending_method: z.enum(LOGIN_METHODS).nullable().meta({
    description:
      'a switch to TOTP (method totp, or the TOTP second factor) saved while TOTP was not verified yet: the method it switches to once totp-verify succeeds; until then `method` (the one in force) stays, and visitors sign in with it. null when nothing waits',
  }),
  pending_two_factor_method: z
    .enum(['email_code', 'totp'])
    .nullable()
    .meta({ description: 'the second factor of the pending switch (with pending_method email_password), else null' }),
  session_max_age: z.number().int(),
  oidc_provider_id: z.number().int().nullable().meta({ description: 'method oidc: the provider visitors sign in through (else null)' }),
  allowed_emails: z.array(z.string()).meta({ description: 'method oidc: the e-mail addresses let in' }),
  allowed_groups: z.array(z.string()).meta({ description: "method oidc: the provider's groups let in" }),
  title: z.string().nullable(),
  description: z.string().nullable(),
  primary_color: z.string().nullable(),
  bg_color: z.string().nullable(),
  logo: z.string().nullable(),
  bg_image: z.string().nullable(),
  created_at: isoDate,
  updated_at: isoDate,
  users: z.array(
    z.object({ user_id: z.number().int(), username: z.string(), email: z.string().nullable(), totp_active: z.boolean(), totp_setup_pending: z.boolean() }),
  ),
});
export type RouteAuthView = z.infer<typeof routeAuthView>;
export const routeAuthResponse = z.object({ ok: z.literal(true), route_auth: routeAuthView });
/** DELETE /routes/:id/auth: whether the route had route auth to remove. */
export const routeAuthDeletedResponse = z.object({ ok: z.literal(true), deleted: z.boolean() });
export const routeAuthOrNullResponse = z.object({ ok: z.literal(true), route_auth: routeAuthView.nullable() });
export const totpSetupResponse = z.object({ ok: z.literal(true), secret: z.string(), otpauth_url: z.string(), qr_code: z.string() });
