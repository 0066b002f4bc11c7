// TOTP (RFC 6238: SHA-1, 6 digits, 30-second steps) and recovery codes, shared by route auth's second
// factor (route-auth/service.ts) and the admin accounts' second factor (auth/second-factor.ts). Pure
// but for the random secret and the QR image; the callers keep the secret sealed and the last
// accepted step, so that a code is taken once.
import crypto from 'node:crypto';
import speakeasy from 'speakeasy';

export const TOTP_STEP_S = 30;
/** steps accepted before and after the current one (clock drift of the authenticator) */
export const TOTP_WINDOW = 1;

/** A new base32 secret of 160 bits (RFC 4226's recommended length). */
export function newTotpSecret(): string {
  return speakeasy.generateSecret({ length: 20 }).base32;
}

/** The otpauth:// URL authenticator apps read, and its QR code as a PNG data URL. */
export async function totpEnrolment(secret: string, label: string): Promise<{ otpauth_url: string; qr_code: string }> {
  const otpauth_url = speakeasy.otpauthURL({ secret, encoding: 'base32', label, issuer: 'Gatehouse', algorithm: 'sha1', digits: 6, period: TOTP_STEP_S });
  const { default: QRCode } = await import('qrcode'); // loaded when first asked, not at every start
  const qr_code = await QRCode.toDataURL(otpauth_url, { errorCorrectionLevel: 'M', margin: 2, width: 240 });
  return { otpauth_url, qr_code };
}

/** The 30-second step a 6-digit code matches (within ±TOTP_WINDOW of `nowMs`), or null. */
export function totpStep(secretBase32: string, token: string, nowMs: number): number | null {
  if (!/^\d{6}$/.test(token)) return null;
  const nowS = Math.floor(nowMs / 1000);
  const r = speakeasy.totp.verifyDelta({ secret: secretBase32, encoding: 'base32', token, window: TOTP_WINDOW, step: TOTP_STEP_S, time: nowS });
  if (!r) return null;
  return Math.floor(nowS / TOTP_STEP_S) + r.delta;
}

/** The code an authenticator shows for a secret at a time (tests, and the enrolment page's check). */
export function totpCode(secretBase32: string, nowMs: number): string {
  return speakeasy.totp({ secret: secretBase32, encoding: 'base32', step: TOTP_STEP_S, time: Math.floor(nowMs / 1000) });
}

// Recovery codes: 80 random bits each, written as four groups of four base32 letters and digits
// (ABCD-EFGH-JKLM-NPQR). Only a SHA-256 of the normalised code is stored: at 80 bits an offline
// search of the hash is out of reach, so no slow hash is needed.
const RECOVERY_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789'; // 32 symbols, no 0/O, 1/I
export const RECOVERY_CODES = 10;

export function newRecoveryCodes(n = RECOVERY_CODES): string[] {
  return Array.from({ length: n }, () => {
    const bytes = crypto.randomBytes(16);
    const chars = Array.from(bytes, (b) => RECOVERY_ALPHABET[b & 31]).join('');
    return chars.match(/.{4}/g)!.join('-');
  });
}

/** A code as typed (any case, spaces or dashes) in the form that is hashed, or null when it cannot be one. */
export function normaliseRecoveryCode(input: string): string | null {
  const v = input.toUpperCase().replace(/[\s-]/g, '');
  return /^[A-Z2-9]{16}$/.test(v) ? v : null;
}

export function hashRecoveryCode(normalised: string): string {
  return crypto.createHash('sha256').update(`gatehouse-recovery:${normalised}`).digest('hex');
}
