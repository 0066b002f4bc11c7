// Vendor tool: signs a licence document with an Ed25519 private key file and prints the licence key.
// The vendor's private key is never in this repository. docs/guides/licence.md describes the format.
//
//   node --import tsx scripts/licence-sign.ts --private-key vendor.pem --customer "Example GmbH" \
//     --plan business --features cluster \
//     [--max-peers 250] [--max-routes 500] [--expires 2027-12-31T23:59:59Z | --expires never] [--id LIC-0001] [--issued <ISO>]
//   node --import tsx scripts/licence-sign.ts --private-key vendor.pem --document doc.json
//   node --import tsx scripts/licence-sign.ts --generate-key vendor.pem   (writes a new private key, prints its public key)
//
// The community edition already has internal_dns, remote_desktop, circuit_breaker and
// prometheus_metrics; a licence adds the features beyond them (cluster) and may carry limits.
// A self-signed deployment generates its own key pair, signs its licence, and sets
// GATEHOUSE_LICENCE_PUBLIC_KEY to the printed public key (PEM text or a file path).
import crypto from 'node:crypto';
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import { keyId, licenceDocument, signLicence, type LicenceDocument } from '../sidecar/src/licence/document.js';

function fail(msg: string): never {
  process.stderr.write(`licence-sign: ${msg}\n`);
  process.exit(2);
}

const { values } = parseArgs({
  options: {
    'private-key': { type: 'string' },
    'generate-key': { type: 'string' },
    document: { type: 'string' },
    id: { type: 'string' },
    customer: { type: 'string' },
    plan: { type: 'string' },
    features: { type: 'string' },
    'max-peers': { type: 'string' },
    'max-routes': { type: 'string' },
    expires: { type: 'string' },
    issued: { type: 'string' },
  },
  strict: true,
});

if (values['generate-key']) {
  const file = values['generate-key'];
  if (fs.existsSync(file)) fail(`${file} exists; not overwriting a key`);
  const { privateKey, publicKey } = crypto.generateKeyPairSync('ed25519');
  fs.writeFileSync(file, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
  process.stdout.write(`${publicKey.export({ type: 'spki', format: 'pem' })}`);
  process.stderr.write(`private key written to ${file} (key id ${keyId(publicKey)})\n`);
  process.exit(0);
}

if (!values['private-key']) fail('--private-key <file> is required (or --generate-key <file>)');
let privateKey: crypto.KeyObject;
try {
  privateKey = crypto.createPrivateKey(fs.readFileSync(values['private-key'], 'utf8'));
} catch (err) {
  fail(`cannot read the private key: ${(err as Error).message}`);
}
if (privateKey.asymmetricKeyType !== 'ed25519') fail('the private key must be Ed25519');

const int = (v: string | undefined, name: string): number | null => {
  if (v === undefined) return null;
  if (!/^\d+$/.test(v)) fail(`${name} must be a whole number`);
  return Number(v);
};

let doc: unknown;
if (values.document) {
  try {
    doc = JSON.parse(fs.readFileSync(values.document, 'utf8'));
  } catch (err) {
    fail(`cannot read ${values.document}: ${(err as Error).message}`);
  }
} else {
  if (!values.customer || !values.plan) fail('--customer and --plan are required (or --document <file>)');
  const expires = values.expires ?? fail('--expires <ISO date> or --expires never is required');
  doc = {
    v: 1,
    id: values.id ?? `LIC-${crypto.randomBytes(6).toString('hex').toUpperCase()}`,
    customer: values.customer,
    plan: values.plan,
    features: (values.features ?? '')
      .split(',')
      .map((f) => f.trim())
      .filter(Boolean),
    limits: { max_peers: int(values['max-peers'], '--max-peers'), max_routes: int(values['max-routes'], '--max-routes') },
    issued_at: values.issued ?? new Date().toISOString(),
    expires_at: expires === 'never' ? null : new Date(expires).toISOString(),
  };
}
const parsed = licenceDocument.safeParse(doc);
if (!parsed.success) fail(`not a licence document: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(document)'}: ${i.message}`).join('; ')}`);
process.stdout.write(`${signLicence(parsed.data as LicenceDocument, privateKey)}\n`);
