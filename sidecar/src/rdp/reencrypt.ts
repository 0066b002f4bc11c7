// Re-encryption of a route's stored credential envelope for the desktop client's one-time key.
// The stored envelope (@gatehouse/common/rdp-credentials, made in the admin's browser for the server's
// RDP key pair) is opened with the server private key of its kid and the credentials are sealed at
// once in a new envelope for the RSA public key the client sent with its connect request. The
// plaintext exists only in this function's locals: it is neither logged, nor returned, nor kept.
import { msg } from '@gatehouse/common/messages/index.js';
import { z } from 'zod';
import { UNPROCESSABLE } from '../http/fields.js';
import {
  decryptCredentials,
  EnvelopeError,
  encryptCredentials,
  fromBase64,
  keyId,
  toBase64,
  type CredentialEnvelope,
} from '@gatehouse/common/rdp-credentials.js';
import { AppError, unprocessable } from '../util/errors.js';
import { fieldText } from '../http/messages.js';

export const ONE_TIME_KEY_MIN_BITS = 2048;
export const ONE_TIME_KEY_MAX_BITS = 4096;
/** base64 of a 4096-bit SPKI is about 740 characters; anything much longer is not a key. */
const MAX_KEY_CHARS = 1200;

/**
 * The one-time key as sent: base64 (standard or URL-safe, padding optional) of the SPKI DER of an
 * RSA public key. A `+` that arrived as a space (an unencoded query parameter) is taken back as `+`.
 */
export const oneTimeKeyText = z
  .string()
  .min(1, 'required: base64 SPKI of a one-time RSA-OAEP (SHA-256) public key')
  .max(MAX_KEY_CHARS, fieldText('field.max_chars', { max: MAX_KEY_CHARS }))
  // base64, standard or URL-safe (a + read from a query string as a space counts as +), padded or not
  .regex(/^\s*[A-Za-z0-9+/_ -]+={0,2}\s*$/, 'must be base64 (SPKI DER)')
  .transform((s) => s.trim().replace(/ /g, '+').replace(/-/g, '+').replace(/_/g, '/'))
  // the pattern above is the document's; what is left after trimming may still be no base64 ("  ==")
  .refine((s) => /^[A-Za-z0-9+/]+={0,2}$/.test(s), { message: 'must be base64 (SPKI DER)', params: UNPROCESSABLE })
  .transform((s) => s.replace(/=+$/, '') + '='.repeat((4 - (s.replace(/=+$/, '').length % 4)) % 4));

export interface OneTimeKey {
  /** standard base64 SPKI */
  spki: string;
  /** its key id (the kid of envelopes made for it) */
  kid: string;
  bits: number;
}

/**
 * Checks that `spkiB64` (already in standard base64) is an RSA public key usable for RSA-OAEP with
 * SHA-256 of 2048 to 4096 bits; a 400 with `fields[field]` otherwise.
 */
export async function validateOneTimeKey(spkiB64: string, field = 'key'): Promise<OneTimeKey> {
  let key: CryptoKey;
  try {
    key = await globalThis.crypto.subtle.importKey('spki', fromBase64(spkiB64), { name: 'RSA-OAEP', hash: 'SHA-256' }, true, ['encrypt', 'wrapKey']);
  } catch {
    throw unprocessable(msg('rdp.one_time_key_invalid'), { [field]: msg('rdp.field.not_rsa_key') });
  }
  const alg = key.algorithm as RsaHashedKeyAlgorithm;
  const bits = alg.modulusLength;
  if (!(bits >= ONE_TIME_KEY_MIN_BITS && bits <= ONE_TIME_KEY_MAX_BITS)) {
    throw unprocessable(msg('rdp.one_time_key_invalid'), {
      [field]: msg('rdp.field.rsa_bits', { bits, min: ONE_TIME_KEY_MIN_BITS, max: ONE_TIME_KEY_MAX_BITS }),
    });
  }
  const e = alg.publicExponent;
  if (!(e.length >= 1 && (e[e.length - 1] & 1) === 1) || (e.length === 1 && e[0] < 3)) {
    throw unprocessable(msg('rdp.one_time_key_invalid'), { [field]: msg('rdp.field.rsa_exponent') });
  }
  // The canonical form: what the client gets back as kid is computed over the DER it sent.
  const spki = toBase64(await globalThis.crypto.subtle.exportKey('spki', key));
  return { spki, kid: await keyId(spki), bits };
}

/** What reencryptForClient needs of the server's RDP key pairs (rdpcore's RdpKeys). */
export interface ServerPrivateKeys {
  /** The private key of a server key id; throws when the kid is unknown or retired. */
  privateKeyFor(kid: string): Promise<CryptoKey>;
}

/**
 * Opens `stored` (an envelope for the server key `storedKid`) and seals its credentials for the
 * client's one-time key. A stored envelope that the server key cannot open (a retired key after a
 * rotation, a damaged row) is a 409 that names what an admin must do: re-enter the credentials.
 */
export async function reencryptForClient(keys: ServerPrivateKeys, stored: unknown, storedKid: string, client: OneTimeKey): Promise<CredentialEnvelope> {
  let privateKey: CryptoKey;
  try {
    privateKey = await keys.privateKeyFor(storedKid);
  } catch {
    throw new AppError('conflict', msg('rdp.credentials_old_key'), undefined, { reason: 'rotation_pending' });
  }
  let reopened: Awaited<ReturnType<typeof decryptCredentials>>;
  try {
    reopened = await decryptCredentials(privateKey, storedKid, stored);
  } catch (err) {
    if (err instanceof EnvelopeError) throw new AppError('conflict', msg('rdp.credentials_unreadable'), undefined, { reason: 'credentials_unreadable' });
    throw err;
  }
  return encryptCredentials(client.spki, reopened);
}
