// WireGuard keys with Node's crypto: X25519 key pairs and preshared keys, in WireGuard's own text
// format (the raw 32 bytes, standard base64 with padding: 44 characters), as `wg genkey`,
// `wg pubkey` and `wg genpsk` print them.
import { createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes } from 'node:crypto';

export interface WgKeyPair {
  privateKey: string;
  publicKey: string;
}

// DER prefixes of the two encodings Node speaks for raw X25519 keys (RFC 8410):
// PKCS#8 PrivateKeyInfo and SubjectPublicKeyInfo, each followed by the 32 key bytes.
const PKCS8_PREFIX = Buffer.from('302e020100300506032b656e04220420', 'hex');
const SPKI_PREFIX = Buffer.from('302a300506032b656e032100', 'hex');

/** The exact shape of a WireGuard key: base64 of 32 bytes (the last character carries 4 bits). */
const KEY_RE = /^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw480]=$/;

export function isWgKey(value: unknown): value is string {
  return typeof value === 'string' && KEY_RE.test(value);
}

function decodeKey(key: string, what: string): Buffer {
  if (!isWgKey(key)) throw new Error(`${what} must be a WireGuard key (base64 of 32 bytes)`);
  return Buffer.from(key, 'base64');
}

/** Curve25519 clamping, as `wg genkey` applies it (X25519 ignores these bits anyway). */
function clamp(raw: Buffer): Buffer {
  const k = Buffer.from(raw);
  k[0] &= 248;
  k[31] = (k[31] & 127) | 64;
  return k;
}

function rawPublic(privateRaw: Buffer): Buffer {
  const priv = createPrivateKey({ key: Buffer.concat([PKCS8_PREFIX, privateRaw]), format: 'der', type: 'pkcs8' });
  const spki = createPublicKey(priv).export({ format: 'der', type: 'spki' });
  return spki.subarray(SPKI_PREFIX.length);
}

/** A new key pair. */
export function generateKeyPair(): WgKeyPair {
  const { privateKey, publicKey } = generateKeyPairSync('x25519');
  const pkcs8 = privateKey.export({ format: 'der', type: 'pkcs8' });
  const spki = publicKey.export({ format: 'der', type: 'spki' });
  if (!pkcs8.subarray(0, PKCS8_PREFIX.length).equals(PKCS8_PREFIX) || !spki.subarray(0, SPKI_PREFIX.length).equals(SPKI_PREFIX)) {
    throw new Error('unexpected X25519 key encoding from node:crypto');
  }
  const priv = clamp(pkcs8.subarray(PKCS8_PREFIX.length));
  return { privateKey: priv.toString('base64'), publicKey: spki.subarray(SPKI_PREFIX.length).toString('base64') };
}

/** The public key that belongs to a private key (what `wg pubkey` prints). */
export function publicKeyFromPrivate(privateKey: string): string {
  return rawPublic(decodeKey(privateKey, 'private key')).toString('base64');
}

/** A new preshared key: 32 random bytes (what `wg genpsk` prints). */
export function generatePresharedKey(): string {
  return randomBytes(32).toString('base64');
}
