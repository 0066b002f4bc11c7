// The envelope that carries RDP credentials (username, password, domain) end to end: the admin app
// encrypts them in the browser with the server's RDP public key (GET /api/v1/rdp/pubkey), the API
// stores and returns only that envelope, and a desktop client gets them re-encrypted for a one-time
// key it sends with its connect request. Only WebCrypto (globalThis.crypto.subtle) is used, so the
// same code runs in the browser, the sidecar and the desktop client.
//
// Scheme "RSA-OAEP-256+A256GCM" (envelope version 1):
//   - a fresh AES-256-GCM key and 12-byte IV per envelope encrypt the UTF-8 JSON
//     {"username","password","domain"}; the additional authenticated data is "gatehouse-rdp-v1|<kid>",
//     so the ciphertext cannot be moved under another key id;
//   - the AES key (raw, 32 bytes) is wrapped with RSA-OAEP (SHA-256) under the recipient's RSA public
//     key (3072-bit for the server's key pair);
//   - kid = the first 16 hex digits of SHA-256 over the recipient's public key (SPKI DER): it names the
//     key an envelope was made for, so a rotated server key pair shows which envelopes are stale.
//   JSON: {v: 1, alg: "RSA-OAEP-256+A256GCM", kid, key: b64(wrapped AES key), iv: b64(IV), data: b64(ciphertext || 16-byte tag)}
//   Public keys travel as base64 SPKI DER, private keys (the server's, sealed under the master key) as
//   base64 PKCS#8 DER. b64 is standard base64 with padding.
import { z } from 'zod';

export const RDP_ENVELOPE_ALG = 'RSA-OAEP-256+A256GCM';
const AAD_PREFIX = 'gatehouse-rdp-v1|';
const RSA = { name: 'RSA-OAEP', hash: 'SHA-256' } as const;

const b64 = z
  .string()
  .max(8192)
  .regex(/^[A-Za-z0-9+/]+={0,2}$/, 'must be base64');

export const credentialEnvelopeSchema = z
  .object({
    v: z.literal(1),
    alg: z.literal(RDP_ENVELOPE_ALG),
    kid: z.string().regex(/^[0-9a-f]{16}$/, 'must be 16 hex digits'),
    key: b64,
    iv: b64,
    data: b64,
  })
  .strict();
export type CredentialEnvelope = z.infer<typeof credentialEnvelopeSchema>;

export const rdpCredentialsSchema = z
  .object({
    username: z.string().min(1, 'must not be empty').max(256, 'at most 256 characters'),
    password: z.string().max(1024, 'at most 1024 characters'),
    domain: z.string().max(256, 'at most 256 characters').default(''),
  })
  .strict();
/** The credentials an envelope carries (domain: the Windows domain, empty when none). */
export type RdpCredentials = z.output<typeof rdpCredentialsSchema>;

const subtle = () => globalThis.crypto.subtle;
const enc = new TextEncoder();
const dec = new TextDecoder('utf-8', { fatal: true });

export function toBase64(bytes: ArrayBuffer | Uint8Array): string {
  const u8 = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  let s = '';
  for (let i = 0; i < u8.length; i += 0x8000) s += String.fromCharCode(...u8.subarray(i, i + 0x8000));
  return btoa(s);
}

export function fromBase64(text: string): Uint8Array<ArrayBuffer> {
  const s = atob(text);
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}

/** A new RSA-OAEP (SHA-256) key pair for envelopes: 3072-bit, exportable (the server seals the private half). */
export async function generateEnvelopeKeyPair(modulusLength = 3072): Promise<CryptoKeyPair> {
  return subtle().generateKey({ ...RSA, modulusLength, publicExponent: new Uint8Array([1, 0, 1]) }, true, ['encrypt', 'decrypt', 'wrapKey', 'unwrapKey']);
}

export async function exportPublicKey(key: CryptoKey): Promise<string> {
  return toBase64(await subtle().exportKey('spki', key));
}

export async function exportPrivateKey(key: CryptoKey): Promise<string> {
  return toBase64(await subtle().exportKey('pkcs8', key));
}

export async function importPublicKey(spkiB64: string): Promise<CryptoKey> {
  return subtle().importKey('spki', fromBase64(spkiB64), RSA, true, ['encrypt', 'wrapKey']);
}

export async function importPrivateKey(pkcs8B64: string): Promise<CryptoKey> {
  return subtle().importKey('pkcs8', fromBase64(pkcs8B64), RSA, false, ['decrypt', 'unwrapKey']);
}

/** The key id of a public key (base64 SPKI): the first 16 hex digits of its SHA-256. */
export async function keyId(spkiB64: string): Promise<string> {
  const digest = new Uint8Array(await subtle().digest('SHA-256', fromBase64(spkiB64)));
  return Array.from(digest.subarray(0, 8), (b) => b.toString(16).padStart(2, '0')).join('');
}

/** Encrypts credentials for the holder of the private half of `publicKeySpkiB64`. */
export async function encryptCredentials(publicKeySpkiB64: string, credentials: RdpCredentials): Promise<CredentialEnvelope> {
  const creds = rdpCredentialsSchema.parse(credentials);
  const [rsa, kid] = await Promise.all([importPublicKey(publicKeySpkiB64), keyId(publicKeySpkiB64)]);
  const aes = await subtle().generateKey({ name: 'AES-GCM', length: 256 }, true, ['encrypt']);
  const iv = globalThis.crypto.getRandomValues(new Uint8Array(12));
  const data = await subtle().encrypt(
    { name: 'AES-GCM', iv, additionalData: enc.encode(AAD_PREFIX + kid), tagLength: 128 },
    aes,
    enc.encode(JSON.stringify(creds)),
  );
  const wrapped = await subtle().wrapKey('raw', aes, rsa, RSA);
  return { v: 1, alg: RDP_ENVELOPE_ALG, kid, key: toBase64(wrapped), iv: toBase64(iv), data: toBase64(data) };
}

/** Why an envelope cannot be opened (thrown by decryptCredentials). */
export class EnvelopeError extends Error {}

/**
 * Opens an envelope with the private key it was made for (`expectedKid`: that key's id). Throws
 * EnvelopeError for a malformed envelope, another key's envelope, or one that fails authentication.
 */
export async function decryptCredentials(privateKey: CryptoKey, expectedKid: string, envelope: unknown): Promise<RdpCredentials> {
  const parsed = credentialEnvelopeSchema.safeParse(envelope);
  if (!parsed.success)
    throw new EnvelopeError(`not a credential envelope: ${parsed.error.issues.map((i) => `${i.path.join('.') || '_'} ${i.message}`).join('; ')}`);
  const env = parsed.data;
  if (env.kid !== expectedKid) throw new EnvelopeError(`the envelope was made for key ${env.kid}, not for the current key ${expectedKid}`);
  let plain: ArrayBuffer;
  try {
    const aes = await subtle().unwrapKey('raw', fromBase64(env.key), privateKey, RSA, { name: 'AES-GCM', length: 256 }, false, ['decrypt']);
    plain = await subtle().decrypt(
      { name: 'AES-GCM', iv: fromBase64(env.iv), additionalData: enc.encode(AAD_PREFIX + env.kid), tagLength: 128 },
      aes,
      fromBase64(env.data),
    );
  } catch {
    throw new EnvelopeError('the envelope does not decrypt with this key (tampered, or made for another key)');
  }
  let json: unknown;
  try {
    json = JSON.parse(dec.decode(plain));
  } catch {
    throw new EnvelopeError('the envelope does not hold credentials');
  }
  const creds = rdpCredentialsSchema.safeParse(json);
  if (!creds.success) throw new EnvelopeError('the envelope does not hold valid credentials');
  return creds.data;
}
