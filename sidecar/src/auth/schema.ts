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
    second_factor: z.enum(['totp', 'passkey', 'enrol']).meta({
      description:
        'totp: POST /login/second-factor {code} (or a passkey when the account has one: POST /login/second-factor/passkey/options, then POST /login/second-factor/passkey) | passkey: the account has passkeys only: the same passkey pair (or a recovery code to POST /login/second-factor) | enrol: every account needs a second factor and this one has none: POST /login/enrol',
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
  passkeys: z.number().int().meta({ description: 'how many passkeys the account has (each counts as a second factor)' }),
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

// passkeys (WebAuthn; auth/second-factor.ts): the JSON of the browser's credential as
// @simplewebauthn/browser sends it (binary fields base64url)
const b64url = (max: number) =>
  z
    .string()
    .min(1, 'required')
    .max(max)
    .regex(/^[A-Za-z0-9_-]+$/, 'must be base64url');
const transports = z.array(z.enum(['ble', 'cable', 'hybrid', 'internal', 'nfc', 'smart-card', 'usb'])).max(8);
const credentialCommon = {
  id: b64url(1400),
  rawId: b64url(1400),
  type: z.literal('public-key'),
  authenticatorAttachment: z.enum(['platform', 'cross-platform']).optional(),
  clientExtensionResults: z.record(z.string(), z.unknown()),
};
export const registrationCredential = z.strictObject({
  ...credentialCommon,
  response: z.strictObject({
    clientDataJSON: b64url(8192),
    attestationObject: b64url(65536),
    authenticatorData: b64url(65536).optional(),
    transports: transports.optional(),
    publicKeyAlgorithm: z.number().int().optional(),
    publicKey: b64url(8192).optional(),
  }),
});
export const authenticationCredential = z.strictObject({
  ...credentialCommon,
  response: z.strictObject({
    clientDataJSON: b64url(8192),
    authenticatorData: b64url(65536),
    signature: b64url(8192),
    userHandle: z.string().max(1400).optional(),
  }),
});
const passkeyName = text({ min: 1, max: 64 }).meta({ description: 'a name to tell it apart (the device, the key)' });
export const passkeyView = z.object({
  id: z.number().int(),
  name: z.string(),
  transports: z.array(z.string()),
  created_at: z.number().int().meta({ description: 'epoch milliseconds' }),
  last_used_at: z.number().int().nullable().meta({ description: 'epoch milliseconds of the last sign-in with it' }),
});
export const passkeysResponse = z.object({ ok: z.literal(true), passkeys: z.array(passkeyView) });
export const passkeyResponse = z.object({ ok: z.literal(true), passkey: passkeyView });
/** WebAuthn options for the browser (PublicKeyCredentialCreationOptionsJSON / …RequestOptionsJSON), passed to @simplewebauthn/browser as they are. */
const webauthnOptions = z
  .record(z.string(), z.unknown())
  .meta({ description: 'WebAuthn options JSON, for navigator.credentials (through @simplewebauthn/browser)' });
export const passkeyOptionsResponse = z.object({ ok: z.literal(true), options: webauthnOptions });
export const passkeyRegisterBody = z.strictObject({ name: passkeyName, credential: registrationCredential });
export const passkeyRenameBody = z.strictObject({ name: passkeyName });
export const passkeyRegisteredResponse = z.object({
  ok: z.literal(true),
  passkey: passkeyView,
  recovery_codes: z
    .array(z.string())
    .optional()
    .meta({ description: "ten one-use codes, shown this once: only when this is the account's first second factor" }),
  second_factor: secondFactorStatus,
});
export const passkeySignInBody = z.strictObject({ credential: authenticationCredential, next: text({ max: 2048 }).optional() });
export const emptyBody = z.strictObject({});
/** POST /login/enrol/passkey: a passkey as the second factor the policy asks for at sign-in. */
export const enrolPasskeyBody = z.strictObject({
  name: passkeyName,
  credential: registrationCredential,
  next: text({ max: 2048 }).optional(),
});
export const enrolPasskeyResponse = signedInResponse.extend({
  recovery_codes: z.array(z.string()).meta({ description: 'ten one-use codes, shown this once' }),
});
