// Re-encryption for the desktop client's one-time key (src/rdp/reencrypt.ts), with real WebCrypto
// keys: what the admin's browser sealed for the server key comes out sealed for the client's key and
// opens there to the original plaintext; one-time keys that are not RSA-OAEP SHA-256 of 2048-4096
// bits are a 400 with fields.key; a stored envelope the server key cannot open is a 409 with a reason.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { decryptCredentials, encryptCredentials, exportPublicKey, generateEnvelopeKeyPair, keyId } from '@gatehouse/common/rdp-credentials.js';
import { AppError } from '../src/util/errors.js';
import { oneTimeKeyText, reencryptForClient, validateOneTimeKey, type ServerPrivateKeys } from '../src/rdp/reencrypt.js';

const creds = { username: 'alice', password: 'S3cr€t "pw" \u{1F511}', domain: 'CORP' };

async function pair(bits: number) {
  const p = await generateEnvelopeKeyPair(bits);
  const spki = await exportPublicKey(p.publicKey);
  return { ...p, spki, kid: await keyId(spki) };
}

/** Server key pairs by kid, as rdpcore's RdpKeys hands them out (a retired or unknown kid throws). */
function serverKeys(keys: Awaited<ReturnType<typeof pair>>[]): ServerPrivateKeys {
  return {
    async privateKeyFor(kid: string) {
      const k = keys.find((x) => x.kid === kid);
      if (!k) throw new Error(`unknown or retired RDP server key ${kid}`);
      return k.privateKey;
    },
  };
}

/** An RSA public key (SPKI base64) with a modulus of `bits` bits, no private half (enough to test the size checks). */
function rsaSpkiOfBits(bits: number, e = 'AQAB'): string {
  const n = crypto.randomBytes(bits / 8);
  n[0] |= 0x80;
  n[n.length - 1] |= 1;
  return crypto
    .createPublicKey({ key: { kty: 'RSA', n: n.toString('base64url'), e }, format: 'jwk' })
    .export({ type: 'spki', format: 'der' })
    .toString('base64');
}

async function rejected(p: Promise<unknown>, re: RegExp): Promise<void> {
  await assert.rejects(p, (err: unknown) => {
    assert.ok(err instanceof AppError, String(err));
    assert.equal(err.kind, 'unprocessable');
    assert.match(err.fields?.key ?? '', re);
    return true;
  });
}

test('the server envelope is re-sealed for the one-time key and opens there to the original credentials', async () => {
  const server = await pair(3072);
  const client = await pair(2048);
  const stored = await encryptCredentials(server.spki, creds);
  const key = await validateOneTimeKey(oneTimeKeyText.parse(client.spki));
  assert.equal(key.kid, client.kid);
  assert.equal(key.bits, 2048);
  const out = await reencryptForClient(serverKeys([server]), stored, server.kid, key);
  assert.equal(out.kid, client.kid);
  assert.notEqual(out.data, stored.data);
  const text = JSON.stringify(out);
  for (const secret of [creds.username, creds.password, creds.domain]) assert.ok(!text.includes(secret));
  assert.deepEqual(await decryptCredentials(client.privateKey, client.kid, out), creds);
  // the server key cannot open what is now the client's
  await assert.rejects(decryptCredentials(server.privateKey, client.kid, out));
});

test('a 4096-bit one-time key and a URL-safe or space-mangled base64 form are accepted', async () => {
  const server = await pair(2048);
  const client = await pair(4096);
  const stored = await encryptCredentials(server.spki, creds);
  const urlSafe = client.spki.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  const spaced = client.spki.replace(/\+/g, ' '); // what an unencoded "+" in a query string becomes
  for (const form of [urlSafe, spaced]) {
    const key = await validateOneTimeKey(oneTimeKeyText.parse(form));
    assert.equal(key.kid, client.kid);
    assert.deepEqual(await decryptCredentials(client.privateKey, client.kid, await reencryptForClient(serverKeys([server]), stored, server.kid, key)), creds);
  }
});

test('one-time keys outside RSA 2048-4096 bits, or not keys at all, are refused with fields.key', async () => {
  await rejected(validateOneTimeKey(rsaSpkiOfBits(1024)), /1024 bits; 2048 to 4096/);
  await rejected(validateOneTimeKey(rsaSpkiOfBits(8192)), /8192 bits; 2048 to 4096/);
  await rejected(validateOneTimeKey(rsaSpkiOfBits(2048, 'AQ')), /exponent/);
  const ec = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
  await rejected(validateOneTimeKey(ec), /not an RSA public key/);
  await rejected(validateOneTimeKey(Buffer.from('not a key at all').toString('base64')), /not an RSA public key/);
  // the text form: base64 only, bounded
  assert.equal(oneTimeKeyText.safeParse('').success, false);
  assert.equal(oneTimeKeyText.safeParse('abc$def').success, false);
  assert.equal(oneTimeKeyText.safeParse('A'.repeat(5000)).success, false);
});

test('a stored envelope the server cannot open is a 409 with a reason, never the plaintext or a 500', async () => {
  const server = await pair(2048);
  const rotated = await pair(2048);
  const client = await validateOneTimeKey((await pair(2048)).spki);
  const stored = await encryptCredentials(server.spki, creds);
  // the key of the stored envelope is retired (master-key rotation made a new pair)
  await assert.rejects(reencryptForClient(serverKeys([rotated]), stored, server.kid, client), (err: unknown) => {
    assert.ok(err instanceof AppError && err.kind === 'conflict');
    assert.equal(err.extra?.reason, 'rotation_pending');
    assert.match(err.message, /re-enter/);
    return true;
  });
  // a damaged envelope
  const damaged = { ...stored, data: stored.data.slice(0, -8) + 'AAAAAAA=' };
  await assert.rejects(reencryptForClient(serverKeys([server]), damaged, server.kid, client), (err: unknown) => {
    assert.ok(err instanceof AppError && err.kind === 'conflict');
    assert.equal(err.extra?.reason, 'credentials_unreadable');
    assert.ok(!err.message.includes(creds.password));
    return true;
  });
});
