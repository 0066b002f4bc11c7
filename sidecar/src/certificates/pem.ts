// Reading and checking an uploaded certificate chain and its private key with node:crypto (pure: the
// clock comes in). What is refused is said per field (certificate_pem, private_key_pem) with a
// message of the catalogue; the service answers 422 with them.
import { createHash, createPrivateKey, X509Certificate, type KeyObject } from 'node:crypto';
import { msg } from '@gatehouse/common/messages/index.js';
import type { FieldMessages } from '../util/errors.js';

export interface ParsedChain {
  /** the leaf, then its issuers, each as one PEM block */
  blocks: string[];
  /** the chain as stored: the blocks joined by newlines */
  pem: string;
  /** the key as stored: PKCS#8 PEM */
  keyPem: string;
  names: string[];
  issuer: string;
  notBefore: number;
  notAfter: number;
  /** SHA-256 of the leaf's DER, upper-case hex with colons */
  fingerprint: string;
}

const BLOCK = /-----BEGIN CERTIFICATE-----[A-Za-z0-9+/=\s]+?-----END CERTIFICATE-----/g;

function dnField(dn: string, key: string): string | null {
  for (const line of dn.split('\n')) {
    const eq = line.indexOf('=');
    if (eq > 0 && line.slice(0, eq).trim() === key) return line.slice(eq + 1).trim();
  }
  return null;
}

/** The DNS names of a certificate: its subject alternative names, else its subject's common name. */
export function certificateNames(cert: X509Certificate): string[] {
  const sans = (cert.subjectAltName ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.startsWith('DNS:'))
    .map((s) => s.slice(4).toLowerCase());
  if (sans.length) return [...new Set(sans)];
  const cn = dnField(cert.subject, 'CN');
  return cn && /^[*a-z0-9.-]+$/i.test(cn) ? [cn.toLowerCase()] : [];
}

/** The issuer as lists show it: its common name, else its organization, else the whole name. */
export function issuerName(cert: X509Certificate): string {
  return dnField(cert.issuer, 'CN') ?? dnField(cert.issuer, 'O') ?? cert.issuer.replace(/\n/g, ', ');
}

export function fingerprintOf(cert: X509Certificate): string {
  return createHash('sha256')
    .update(cert.raw)
    .digest('hex')
    .toUpperCase()
    .replace(/(..)(?!$)/g, '$1:');
}

/**
 * Whether a certificate name covers a route's domain: the same name, or a `*.` wildcard name one
 * label above it (`*.example.com` covers `app.example.com`, not `example.com` nor `a.b.example.com`).
 * A wildcard route (`*.example.com`) is covered only by the same wildcard name.
 */
export function covers(names: readonly string[], domain: string): boolean {
  const d = domain.toLowerCase();
  if (names.includes(d)) return true;
  if (d.startsWith('*.')) return false;
  const dot = d.indexOf('.');
  return dot > 0 && names.includes(`*.${d.slice(dot + 1)}`);
}

/** Parses and checks a chain and its key: the fields that are wrong, or the parsed chain. */
export function parseChain(certificatePem: string, privateKeyPem: string, now: number): { fields: FieldMessages } | { chain: ParsedChain } {
  const fields: FieldMessages = {};
  const blocks = certificatePem.match(BLOCK) ?? [];
  if (!blocks.length) return { fields: { certificate_pem: msg('certificate.field.not_pem') } };
  const certs: X509Certificate[] = [];
  for (const [i, b] of blocks.entries()) {
    try {
      certs.push(new X509Certificate(b));
    } catch {
      return { fields: { certificate_pem: msg('certificate.field.unreadable', { index: i + 1 }) } };
    }
  }
  const leaf = certs[0];
  const names = certificateNames(leaf);
  const notBefore = Date.parse(leaf.validFrom);
  const notAfter = Date.parse(leaf.validTo);
  if (!names.length) fields.certificate_pem = msg('certificate.field.no_names');
  else if (notAfter <= now) fields.certificate_pem = msg('certificate.field.expired', { not_after: new Date(notAfter).toISOString() });
  else if (notBefore > now) fields.certificate_pem = msg('certificate.field.not_yet_valid', { not_before: new Date(notBefore).toISOString() });
  else {
    for (let i = 1; i < certs.length; i++) {
      if (!certs[i - 1].checkIssued(certs[i]) || !certs[i - 1].verify(certs[i].publicKey)) {
        fields.certificate_pem = msg('certificate.field.chain_order', { index: i });
        break;
      }
    }
  }
  let key: KeyObject | null = null;
  try {
    key = createPrivateKey({ key: privateKeyPem, format: 'pem' });
  } catch {
    fields.private_key_pem = msg('certificate.field.key_unreadable');
  }
  if (key && !leaf.checkPrivateKey(key)) fields.private_key_pem = msg('certificate.field.key_mismatch');
  if (Object.keys(fields).length || !key) return { fields };
  return {
    chain: {
      blocks,
      pem: blocks.join('\n') + '\n',
      keyPem: key.export({ type: 'pkcs8', format: 'pem' }) as string,
      names,
      issuer: issuerName(leaf),
      notBefore,
      notAfter,
      fingerprint: fingerprintOf(leaf),
    },
  };
}
