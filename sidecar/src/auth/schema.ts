// Request schemas of the admin login (zod).
import { z } from 'zod';
import { text } from '../http/fields.js';
import { fieldText } from '../http/messages.js';
import { SCOPES } from '../http/scopes.js';
import { userView } from '../users/schema.js';

export const loginBody = z.strictObject({
  username: text({ min: 1, max: 64 }),
  password: z.string().min(1, 'required').max(1024),
  next: text({ max: 2048 }).optional(),
});

/** The server-rendered password change form (GET /password); `next` is where to go afterwards. */
export const passwordFormBody = z.strictObject({
  current: z.string().max(1024),
  new_password: z.string().max(1024),
  confirm: z.string().max(1024).optional(),
  next: text({ max: 2048 }).optional(),
});

/** The second step of a sign-in: a 6-digit TOTP code or a recovery code (ABCD-EFGH-JKLM-NPQR, any case, dashes optional). */
export const secondFactorBody = z.strictObject({
  code: text({ min: 1, max: 64 }),
  next: text({ max: 2048 }).optional(),
});
export const enrolBody = z.strictObject({
  code: text({ min: 1, max: 16 }).optional().meta({ description: 'a 6-digit code of the new secret; without it the answer is the secret to add' }),
  next: text({ max: 2048 }).optional(),
});

/** A completed sign-in for JSON clients (browsers are redirected). */
export const signedInResponse = z.object({ ok: z.literal(true), user: userView, csrfToken: z.string(), must_change_password: z.boolean() });
/** POST /login: signed in, or the second step the account needs first (its path: POST there next). */
export const loginResponse = z.union([
  signedInResponse,
  z.object({
    ok: z.literal(true),
    second_factor: z.enum(['totp', 'enrol']).meta({
      description: 'totp: POST /login/second-factor {code} | enrol: every account needs a second factor and this one has none: POST /login/enrol',
    }),
    next_step: z.string(),
  }),
]);
export const totpSetupView = z.object({
  secret: z.string().meta({ description: 'base32; add it to an authenticator app (or scan qr_code)' }),
  otpauth_url: z.string(),
  qr_code: z.string().meta({ description: 'PNG data URL of otpauth_url' }),
});
/** POST /login/enrol: the secret to add (without code), or signed in with the recovery codes shown this once. */
export const enrolResponse = z.union([
  z.object({ ok: z.literal(true), setup: totpSetupView }),
  signedInResponse.extend({ recovery_codes: z.array(z.string()).meta({ description: 'ten one-use codes, shown this once' }) }),
]);
export const csrfResponse = z.object({ ok: z.literal(true), csrfToken: z.string().nullable().meta({ description: 'null for API tokens' }) });
/** GET /session: one shape per kind of caller. */
export const sessionResponse = z.union([
  z.object({ ok: z.literal(true), kind: z.literal('session'), user: userView, csrfToken: z.string(), must_change_password: z.boolean() }),
  z.object({
    ok: z.literal(true),
    kind: z.literal('token'),
    token: z.object({ id: z.number().int(), scopes: z.array(z.enum(SCOPES)), user_id: z.number().int().nullable(), peer_id: z.number().int().nullable() }),
  }),
  z.object({ ok: z.literal(true), kind: z.enum(['gateway', 'client']) }),
]);

// the owner's second factor (auth/second-factor-endpoints.ts)
export const secondFactorStatus = z.object({
  totp_active: z.boolean(),
  totp_setup_pending: z.boolean(),
  recovery_codes_left: z.number().int(),
  required: z.boolean().meta({ description: 'the policy (PUT /settings/security second_factor.required): every account needs a second factor' }),
});
export const secondFactorStatusResponse = z.object({ ok: z.literal(true), second_factor: secondFactorStatus });
export const currentPasswordBody = z.strictObject({ current: z.string().min(1, 'required').max(1024).meta({ description: 'the current password' }) });
export const totpActivateBody = z.strictObject({
  token: z
    .string()
    .regex(/^\d{6}$/, fieldText('second_factor.field.six_digits'))
    .meta({ description: 'a code of the pending secret' }),
});
export const totpSetupResponse = z.object({ ok: z.literal(true), setup: totpSetupView });
export const recoveryCodesResponse = z.object({
  ok: z.literal(true),
  recovery_codes: z.array(z.string()).meta({ description: 'ten one-use codes, shown this once' }),
  second_factor: secondFactorStatus,
});
export const secondFactorResetResponse = z.object({ ok: z.literal(true), reset: z.boolean() });
