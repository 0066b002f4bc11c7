// The licence key: a signed document, verified offline (docs/guides/licence.md).
//
//   GHL1.<kid>.<payload>.<signature>
//
// - payload: base64url of the JSON document {v: 1, id, customer, plan, features, limits, issued_at,
//   expires_at} (LicenceDocument below);
// - kid: the id of the signing key, the first 16 hex digits of SHA-256 over the public key's SPKI DER;
// - signature: base64url of the Ed25519 signature over the ASCII text "GHL1.<kid>.<payload>" (the exact
//   bytes of the key up to the last dot, so no canonical JSON is needed).
//
// The verifying public key ships with the product (public-key.ts); GATEHOUSE_LICENCE_PUBLIC_KEY adds
// another one (tests, self-signed deployments). The vendor's private key is never in this repository;
// scripts/licence-sign.ts signs a document with a private key file. Pure functions, no I/O.
import { msg, type Msg } from '@gatehouse/common/messages/index.js';
import crypto from 'node:crypto';
import { z } from 'zod';

export const KEY_PREFIX = 'GHL1';
/** A licence whose issued_at lies further in the future than this is refused (clock skew allowance). */
export const ISSUE_SKEW_MS = 24 * 3600 * 1000;

export const licenceLimits = z
  .object({
    max_peers: z.number().int().min(0).nullable().optional().meta({ description: 'most peers (gateways included); null or absent: no limit' }),
    max_routes: z.number().int().min(0).nullable().optional().meta({ description: 'most routes (HTTP and L4); null or absent: no limit' }),
  })
  .strict();
export type LicenceLimits = { max_peers: number | null; max_routes: number | null };

const isoDate = z.string().refine((s) => !Number.isNaN(Date.parse(s)), 'must be an ISO date');

/** The signed document. Unknown feature names are kept (a newer product may know them) and ignored here. */
export const licenceDocument = z
  .object({
    v: z.literal(1),
    id: z.string().min(1).max(64),
    customer: z.string().min(1).max(200),
    plan: z.string().min(1).max(64),
    features: z.array(z.string().min(1).max(64)).max(64),
    limits: licenceLimits.default({}),
    issued_at: isoDate,
    expires_at: isoDate.nullable(),
  })
  .strict();
export type LicenceDocument = z.infer<typeof licenceDocument>;

/** Why a key is refused (the `reason` of the 400). */
export type RefusalReason = 'malformed' | 'unknown_signer' | 'bad_signature' | 'invalid_document' | 'expired' | 'not_yet_valid';

export class LicenceKeyError extends Error {
  constructor(
    readonly reason: RefusalReason,
    readonly msg: Msg,
  ) {
    super(msg.text);
  }
}

export interface VerifiedLicence {
  doc: LicenceDocument;
  kid: string;
  /** epoch ms */
  issuedAt: number;
  /** epoch ms, null = does not expire */
  expiresAt: number | null;
}

/** A public key from PEM text (SPKI), or raw base64 of the 32 key bytes. */
export function publicKeyFrom(text: string): crypto.KeyObject {
  const t = text.trim();
  if (t.includes('-----BEGIN')) return crypto.createPublicKey(t);
  const raw = Buffer.from(t, 'base64');
  if (raw.length !== 32) throw new Error('an Ed25519 public key is PEM (BEGIN PUBLIC KEY) or the base64 of its 32 bytes');
  // SPKI DER of an Ed25519 key: a fixed 12-byte header and the 32 key bytes.
  return crypto.createPublicKey({ key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), raw]), format: 'der', type: 'spki' });
}

/** The key id of a public key (first 16 hex digits of SHA-256 over its SPKI DER). */
export function keyId(pub: crypto.KeyObject): string {
  if (pub.asymmetricKeyType !== 'ed25519') throw new Error('licence keys are signed with Ed25519');
  return crypto
    .createHash('sha256')
    .update(pub.export({ type: 'spki', format: 'der' }))
    .digest('hex')
    .slice(0, 16);
}

/** Signs a document with an Ed25519 private key (vendor side: scripts/licence-sign.ts, tests). */
export function signLicence(doc: LicenceDocument, privateKey: crypto.KeyObject): string {
  const parsed = licenceDocument.parse(doc);
  const kid = keyId(crypto.createPublicKey(privateKey));
  const signed = `${KEY_PREFIX}.${kid}.${Buffer.from(JSON.stringify(parsed), 'utf8').toString('base64url')}`;
  const sig = crypto.sign(null, Buffer.from(signed, 'ascii'), privateKey);
  return `${signed}.${sig.toString('base64url')}`;
}

const B64URL = /^[A-Za-z0-9_-]+$/;

/**
 * Verifies a key against the trusted public keys and the time `now`: throws LicenceKeyError with the
 * reason (malformed, unknown_signer, bad_signature, invalid_document, expired, not_yet_valid).
 * `ignoreExpiry` verifies the signature and document only (a stored key that has since expired).
 */
export function verifyLicence(key: string, trusted: readonly crypto.KeyObject[], now: number, opts: { ignoreExpiry?: boolean } = {}): VerifiedLicence {
  const text = key.replace(/\s+/g, '');
  const parts = text.split('.');
  if (parts.length !== 4 || parts[0] !== KEY_PREFIX || !/^[0-9a-f]{16}$/.test(parts[1]) || !B64URL.test(parts[2]) || !B64URL.test(parts[3])) {
    throw new LicenceKeyError('malformed', msg('licence.key.malformed', { prefix: KEY_PREFIX }));
  }
  const [, kid, payload, sig] = parts;
  const pub = trusted.find((k) => keyId(k) === kid);
  if (!pub) {
    throw new LicenceKeyError('unknown_signer', msg('licence.key.unknown_signer', { kid, trusted: trusted.map(keyId) }));
  }
  const ok = crypto.verify(null, Buffer.from(`${KEY_PREFIX}.${kid}.${payload}`, 'ascii'), pub, Buffer.from(sig, 'base64url'));
  if (!ok) throw new LicenceKeyError('bad_signature', msg('licence.key.bad_signature'));
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    throw new LicenceKeyError('invalid_document', msg('licence.key.not_json'));
  }
  const r = licenceDocument.safeParse(json);
  if (!r.success)
    throw new LicenceKeyError(
      'invalid_document',
      msg('licence.key.not_understood', { issues: r.error.issues.map((i) => `${i.path.join('.') || '(document)'}: ${i.message}`).join('; ') }),
    );
  const doc = r.data;
  const issuedAt = Date.parse(doc.issued_at);
  const expiresAt = doc.expires_at === null ? null : Date.parse(doc.expires_at);
  if (!opts.ignoreExpiry) {
    if (expiresAt !== null && expiresAt <= now)
      throw new LicenceKeyError('expired', msg('licence.key.expired', { id: doc.id, expired_at: new Date(expiresAt).toISOString() }));
    if (issuedAt > now + ISSUE_SKEW_MS)
      throw new LicenceKeyError('not_yet_valid', msg('licence.key.not_yet_valid', { id: doc.id, issued_at: new Date(issuedAt).toISOString() }));
  }
  return { doc, kid, issuedAt, expiresAt };
}
