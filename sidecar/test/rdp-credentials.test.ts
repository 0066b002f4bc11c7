// The RDP credential envelope (sidecar/common/src/rdp-credentials.ts): WebCrypto only, so the
// browser, the sidecar and the desktop client share it. Checked here: round trip, the documented
// format opened by an independent implementation (node:crypto privateDecrypt + AES-256-GCM with the
// documented AAD), and every way an envelope must be refused (tampered, moved under another key id,
// another recipient, malformed, bad contents).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import {
  decryptCredentials,
  encryptCredentials,
  EnvelopeError,
  exportPrivateKey,
  exportPublicKey,
  fromBase64,
  generateEnvelopeKeyPair,
  importPrivateKey,
  keyId,
  RDP_ENVELOPE_ALG,
  toBase64,
} from '@gatehouse/common/rdp-credentials.js';

const creds = { username: 'alice', password: 'pässwörd "quoted" \u{1F511}', domain: 'CORP' };

async function recipient(bits = 2048) {
  const pair = await generateEnvelopeKeyPair(bits);
  const spki = await exportPublicKey(pair.publicKey);
  return { pair, spki, kid: await keyId(spki), pkcs8: await exportPrivateKey(pair.privateKey) };
}

test('round trip: what the browser encrypts for the server key, the server key opens; each envelope is fresh', async () => {
  const r = await recipient();
  const env = await encryptCredentials(r.spki, creds);
  assert.equal(env.v, 1);
  assert.equal(env.alg, RDP_ENVELOPE_ALG);
  assert.match(env.kid, /^[0-9a-f]{16}$/);
  assert.equal(env.kid, r.kid);
  assert.ok(!JSON.stringify(env).includes('alice') && !JSON.stringify(env).includes('CORP'), 'nothing readable in the envelope');
  // the private key survives export (PKCS#8, as the server seals it) and import
  const priv = await importPrivateKey(r.pkcs8);
  assert.deepEqual(await decryptCredentials(priv, r.kid, env), creds);
  const again = await encryptCredentials(r.spki, creds);
  assert.notEqual(again.data, env.data, 'a fresh key and IV per envelope');
  assert.notEqual(again.key, env.key);
  // the domain defaults to empty
  assert.deepEqual(
    await decryptCredentials(priv, r.kid, await encryptCredentials(r.spki, { username: 'bob', password: 'x' } as Parameters<typeof encryptCredentials>[1])),
    {
      username: 'bob',
      password: 'x',
      domain: '',
    },
  );
  // a 3072-bit key (the server's size) works the same
  const big = await recipient(3072);
  assert.deepEqual(await decryptCredentials(big.pair.privateKey, big.kid, await encryptCredentials(big.spki, creds)), creds);
});

test('the documented format: an independent implementation (node:crypto) opens it', async () => {
  const r = await recipient();
  const env = await encryptCredentials(r.spki, creds);
  const pem = crypto.createPrivateKey({ key: Buffer.from(r.pkcs8, 'base64'), format: 'der', type: 'pkcs8' });
  const aesKey = crypto.privateDecrypt({ key: pem, padding: crypto.constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' }, Buffer.from(env.key, 'base64'));
  assert.equal(aesKey.length, 32);
  const data = Buffer.from(env.data, 'base64');
  const d = crypto.createDecipheriv('aes-256-gcm', aesKey, Buffer.from(env.iv, 'base64'));
  d.setAAD(Buffer.from(`gatehouse-rdp-v1|${env.kid}`));
  d.setAuthTag(data.subarray(data.length - 16));
  const plain = Buffer.concat([d.update(data.subarray(0, data.length - 16)), d.final()]).toString('utf8');
  assert.deepEqual(JSON.parse(plain), creds);
  // kid: first 16 hex digits of SHA-256 over the SPKI DER
  assert.equal(env.kid, crypto.createHash('sha256').update(Buffer.from(r.spki, 'base64')).digest('hex').slice(0, 16));
});

test('refused: tampered ciphertext, another key id, another recipient, malformed envelopes, bad contents', async () => {
  const r = await recipient();
  const other = await recipient();
  const env = await encryptCredentials(r.spki, creds);
  const flip = (b64: string) => {
    const u = fromBase64(b64);
    u[u.length - 1] ^= 1;
    return toBase64(u);
  };
  const refuses = async (e: unknown, re: RegExp, kid = r.kid, key = r.pair.privateKey) =>
    assert.rejects(decryptCredentials(key, kid, e), (err: unknown) => err instanceof EnvelopeError && re.test(err.message));
  await refuses({ ...env, data: flip(env.data) }, /does not decrypt/);
  await refuses({ ...env, iv: flip(env.iv) }, /does not decrypt/);
  await refuses({ ...env, key: flip(env.key) }, /does not decrypt/);
  // the kid is authenticated: relabelling an envelope for another key id fails even with the right key
  await refuses({ ...env, kid: other.kid }, /does not decrypt/, other.kid);
  // an envelope for the old key after a key rotation is named as such
  await refuses(env, /made for key .* not for the current key/, other.kid, other.pair.privateKey);
  // another recipient's key cannot open it
  await refuses(env, /does not decrypt/, r.kid, other.pair.privateKey);
  await refuses({ ...env, v: 2 }, /not a credential envelope: v/);
  await refuses({ ...env, alg: 'RSA1_5' }, /not a credential envelope: alg/);
  await refuses({ ...env, extra: 1 }, /not a credential envelope/);
  await refuses({ ...env, data: 'not base64!' }, /not a credential envelope: data must be base64/);
  await refuses('{"v":1}', /not a credential envelope/);
  await refuses(null, /not a credential envelope/);
  // well-formed and authentic, but not credentials inside (made with node:crypto by the documented recipe)
  const craft = (plain: string) => {
    const aes = crypto.randomBytes(32);
    const iv = crypto.randomBytes(12);
    const c = crypto.createCipheriv('aes-256-gcm', aes, iv);
    c.setAAD(Buffer.from(`gatehouse-rdp-v1|${r.kid}`));
    const data = Buffer.concat([c.update(plain, 'utf8'), c.final(), c.getAuthTag()]);
    const pub = crypto.createPublicKey({ key: Buffer.from(r.spki, 'base64'), format: 'der', type: 'spki' });
    const key = crypto.publicEncrypt({ key: pub, padding: crypto.constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' }, aes);
    return { v: 1, alg: RDP_ENVELOPE_ALG, kid: r.kid, key: key.toString('base64'), iv: iv.toString('base64'), data: data.toString('base64') };
  };
  assert.deepEqual(await decryptCredentials(r.pair.privateKey, r.kid, craft(JSON.stringify(creds))), creds, 'the recipe is right');
  await refuses(craft('{"user":"x"}'), /does not hold valid credentials/);
  await refuses(craft('not json'), /does not hold credentials/);
  await assert.rejects(encryptCredentials(r.spki, { username: '', password: 'x', domain: '' }), /must not be empty/);
});
