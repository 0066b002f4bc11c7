import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { generateKeyPair, generatePresharedKey, isWgKey, publicKeyFromPrivate } from '@gatehouse/common/wireguard/keys.js';

function hasWg(): boolean {
  try {
    execFileSync('wg', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
const wg = (args: string[], input?: string) => execFileSync('wg', args, { input, encoding: 'utf8' }).trim();

test('key pairs are 32-byte base64 keys, clamped, distinct', () => {
  const a = generateKeyPair();
  const b = generateKeyPair();
  for (const k of [a.privateKey, a.publicKey, b.privateKey, b.publicKey]) {
    assert.ok(isWgKey(k), k);
    assert.equal(Buffer.from(k, 'base64').length, 32);
  }
  assert.notEqual(a.privateKey, b.privateKey);
  const raw = Buffer.from(a.privateKey, 'base64');
  assert.equal(raw[0] & 7, 0);
  assert.equal(raw[31] & 0xc0, 0x40);
  assert.equal(publicKeyFromPrivate(a.privateKey), a.publicKey);
});

test('preshared keys are 32 random bytes', () => {
  const k = generatePresharedKey();
  assert.ok(isWgKey(k));
  assert.equal(Buffer.from(k, 'base64').length, 32);
  assert.notEqual(k, generatePresharedKey());
});

test('our public key equals `wg pubkey` for the same private key', { skip: !hasWg() && 'wg (wireguard-tools) is not installed' }, () => {
  for (let i = 0; i < 5; i++) {
    const ours = generateKeyPair();
    assert.equal(wg(['pubkey'], ours.privateKey + '\n'), ours.publicKey);
    const theirs = wg(['genkey']);
    assert.equal(publicKeyFromPrivate(theirs), wg(['pubkey'], theirs + '\n'));
  }
  // An unclamped private key: X25519 clamps internally, and so must we.
  const unclamped = Buffer.alloc(32, 0xff).toString('base64');
  assert.equal(publicKeyFromPrivate(unclamped), wg(['pubkey'], unclamped + '\n'));
});

test('a known RFC 7748 vector', () => {
  // RFC 7748 section 6.1: Alice's private and public key.
  const priv = Buffer.from('77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a', 'hex').toString('base64');
  const pub = Buffer.from('8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a', 'hex').toString('base64');
  assert.equal(publicKeyFromPrivate(priv), pub);
});

test('bad keys are rejected', () => {
  assert.equal(isWgKey('abc'), false);
  assert.equal(isWgKey(Buffer.alloc(31).toString('base64')), false);
  assert.equal(isWgKey(Buffer.alloc(32).toString('base64') + '\n'), false);
  assert.equal(isWgKey(42), false);
  assert.throws(() => publicKeyFromPrivate('not a key'), /WireGuard key/);
});
