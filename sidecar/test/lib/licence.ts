// Licences for tests: a key pair generated when this module loads (never the vendor's key), keys
// signed with it (the same signLicence the vendor script uses), and the environment that makes a
// test server trust the pair and activate a licence at start.
import crypto from 'node:crypto';
import { signLicence, type LicenceDocument } from '../../src/licence/document.js';
import { LICENSED_FEATURES } from '../../src/licence/features.js';

export const testKeys = crypto.generateKeyPairSync('ed25519');
export const TEST_PUBLIC_KEY_PEM = testKeys.publicKey.export({ type: 'spki', format: 'pem' }).toString();

let n = 0;
/** A licence document (every feature, no limits, a year from `now`), with the given changes. */
export function testDocument(over: Partial<LicenceDocument> = {}, now = Date.now()): LicenceDocument {
  return {
    v: 1,
    id: `TEST-${process.pid}-${++n}`,
    customer: 'Test Customer',
    plan: 'test',
    features: [...LICENSED_FEATURES],
    limits: {},
    issued_at: new Date(now - 60_000).toISOString(),
    expires_at: new Date(now + 365 * 24 * 3600 * 1000).toISOString(),
    ...over,
  };
}

/** A key signed with the test key pair (or another private key). */
export function testLicenceKey(over: Partial<LicenceDocument> = {}, opts: { now?: number; privateKey?: crypto.KeyObject } = {}): string {
  return signLicence(testDocument(over, opts.now), opts.privateKey ?? testKeys.privateKey);
}

/** Env for startTestServer: trust the test key and activate a licence at start (default: every feature). */
export function licensedEnv(over: Partial<LicenceDocument> = {}): Record<string, string> {
  return { GATEHOUSE_LICENCE_PUBLIC_KEY: TEST_PUBLIC_KEY_PEM, GATEHOUSE_LICENCE_KEY: testLicenceKey(over) };
}
