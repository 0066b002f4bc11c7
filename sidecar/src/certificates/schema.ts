// Request and response schemas of custom certificates (certificates/endpoints.ts).
import { z } from 'zod';
import { text } from '../http/fields.js';
import { fieldText } from '../http/messages.js';

const isoDate = z.string().meta({ format: 'date-time' });

/** A certificate that ends within this many days counts as expiring: the list says so, and the housekeeping job warns once. */
export const EXPIRY_WARNING_DAYS = 14;

/** PEM armour of one or more certificates (what the document can state; the content is checked by the service: 422). */
const CERT_PEM =
  /^\s*-----BEGIN CERTIFICATE-----[A-Za-z0-9+/=\s]+-----END CERTIFICATE-----(?:\s*-----BEGIN CERTIFICATE-----[A-Za-z0-9+/=\s]+-----END CERTIFICATE-----)*\s*$/;
/** PEM armour of an unencrypted private key: PKCS#8 (PRIVATE KEY), PKCS#1 (RSA PRIVATE KEY) or SEC1 (EC PRIVATE KEY). */
const KEY_PEM = /^\s*-----BEGIN (?:RSA |EC )?PRIVATE KEY-----[A-Za-z0-9+/=\s]+-----END (?:RSA |EC )?PRIVATE KEY-----\s*$/;

const certificatePem = z
  .string({ error: fieldText('certificate.field.not_pem') })
  .max(65_536)
  .regex(CERT_PEM, fieldText('certificate.field.not_pem'))
  .meta({ description: 'the certificate and its chain in PEM: the leaf first, then each issuer (the root may be left out)' });
const privateKeyPem = z
  .string({ error: fieldText('certificate.field.key_unreadable') })
  .max(16_384)
  .regex(KEY_PEM, fieldText('certificate.field.key_unreadable'))
  .meta({ description: "the leaf's private key, unencrypted PEM (PKCS#8, PKCS#1 or SEC1). Stored sealed with the master key, never returned" });
const certName = text({ min: 1, max: 100 }).meta({ description: 'a name to know it by (unique, any case)' });

export const createCertificateBody = z.strictObject({
  name: certName,
  certificate_pem: certificatePem,
  private_key_pem: privateKeyPem,
});
export type CreateCertificateInput = z.infer<typeof createCertificateBody>;

/** PUT: the renewal (a new certificate with its key), optionally a new name; the routes using it keep it. */
export const replaceCertificateBody = z.strictObject({
  name: certName.optional(),
  certificate_pem: certificatePem,
  private_key_pem: privateKeyPem,
});
export type ReplaceCertificateInput = z.infer<typeof replaceCertificateBody>;

export const CERTIFICATE_STATES = ['valid', 'expiring', 'expired'] as const;

export const certificateView = z.object({
  id: z.number().int(),
  name: z.string(),
  subject_names: z.array(z.string()).meta({ description: "the leaf's DNS names (subject alternative names; the common name when it has none)" }),
  issuer: z.string().meta({ description: "the issuer's common name (or organization)" }),
  not_before: isoDate,
  not_after: isoDate,
  days_left: z.number().int().meta({ description: 'whole days until not_after (negative once expired)' }),
  state: z
    .enum(CERTIFICATE_STATES)
    .meta({ description: `valid; expiring (ends within ${EXPIRY_WARNING_DAYS} days: upload the renewal with PUT); expired (Caddy still serves it)` }),
  fingerprint_sha256: z.string().meta({ description: "SHA-256 of the leaf's DER, hex with colons (as openssl x509 -fingerprint -sha256 shows it)" }),
  chain_length: z.number().int().meta({ description: 'certificates in certificate_pem, the leaf included' }),
  routes: z.array(z.object({ id: z.number().int(), domain: z.string() })).meta({ description: 'the routes using it (certificate_id)' }),
  created_at: isoDate,
  updated_at: isoDate,
});
export type CertificateView = z.infer<typeof certificateView>;

export const certificatesResponse = z.object({ ok: z.literal(true), certificates: z.array(certificateView) });
export const certificateResponse = z.object({ ok: z.literal(true), certificate: certificateView });
export const certificateDeletedResponse = z.object({ ok: z.literal(true), deleted: z.object({ id: z.number().int(), name: z.string() }) });
