// The certificate states of the route views (proxy/certificates.ts): real certificate files made
// with openssl in Caddy's storage layout, parsed with node:crypto; the last obtain error from Caddy's
// JSON log lines. The same states with the real Caddy and its internal CA: routes-certificate-caddy.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CertificateStore, parseCertificate, storageName } from '../src/proxy/certificates.js';
import { manualClock } from '../src/util/clock.js';

const ACME_DIR = 'acme-v02.api.letsencrypt.org-directory';

/** A self-signed certificate for `names` valid `days` days, written where Caddy keeps it. */
function writeCert(storage: string, issuerDir: string, name: string, days: number, cn = 'Test Issuer R1', names = [name]): string {
  const dir = path.join(storage, 'certificates', issuerDir, storageName(name));
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${storageName(name)}.crt`);
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      path.join(dir, `${storageName(name)}.key`),
      '-out',
      file,
      '-days',
      String(days),
      '-subj',
      `/CN=${cn}`,
      '-addext',
      `subjectAltName=${names.map((n) => `DNS:${n}`).join(',')}`,
    ],
    { stdio: 'ignore' },
  );
  return file;
}

test('parseCertificate reads issuer, expiry and DNS names of a real certificate file', () => {
  const storage = fs.mkdtempSync(path.join(os.tmpdir(), 'gh-certs-'));
  try {
    const file = writeCert(storage, ACME_DIR, 'app.example.com', 90, 'Test Issuer R1', ['app.example.com', 'www.example.com']);
    const c = parseCertificate(fs.readFileSync(file), 'app.example.com', ACME_DIR);
    assert.ok(c);
    assert.equal(c.issuer, 'Test Issuer R1');
    assert.equal(c.internal, false);
    assert.deepEqual(c.names, ['app.example.com', 'www.example.com']);
    const days = (c.notAfter - Date.now()) / 86_400_000;
    assert.ok(days > 89 && days <= 90.01, `expires in ${days} days`);
    assert.equal(parseCertificate('not a certificate', 'x', ACME_DIR), null);
  } finally {
    fs.rmSync(storage, { recursive: true, force: true });
  }
});

test('states: valid, expiring, expired, pending, error from the log, cleared when obtained; the scan is cached for ttlMs', async () => {
  const storage = fs.mkdtempSync(path.join(os.tmpdir(), 'gh-certs-'));
  // 50 days on: the 60-day certificate has 10 days left (expiring), the 365-day ones are valid
  const clock = manualClock(Date.now() + 50 * 86_400_000);
  try {
    writeCert(storage, ACME_DIR, 'valid.example.com', 365);
    writeCert(storage, ACME_DIR, 'soon.example.com', 60);
    writeCert(storage, ACME_DIR, '*.wild.example.com', 365);
    writeCert(storage, 'local', 'inner.example.com', 7, 'Caddy Local Authority - ECC Intermediate');
    const store = new CertificateStore({ storageDir: storage, clock, tls: () => 'acme', ttlMs: 30_000 });
    const valid = await store.stateOf('valid.example.com');
    assert.equal(valid.state, 'valid');
    assert.equal(valid.issuer, 'Test Issuer R1');
    assert.equal(valid.internal, false);
    assert.ok(valid.not_after && Date.parse(valid.not_after) > clock());
    assert.equal((await store.stateOf('soon.example.com')).state, 'expiring');
    assert.equal((await store.stateOf('*.wild.example.com')).state, 'valid', 'a wildcard name is stored as wildcard_.');
    const inner = await store.stateOf('inner.example.com');
    assert.equal(inner.internal, true);
    assert.equal(inner.issuer, 'Caddy Local Authority - ECC Intermediate');
    assert.equal((await store.stateOf('new.example.com')).state, 'pending');

    // Caddy's log line of a failed obtain: the name's state is error with the message
    store.noteLog({
      level: 'error',
      ts: clock() / 1000,
      logger: 'tls.obtain',
      msg: 'could not get certificate from issuer',
      identifier: 'new.example.com',
      issuer: ACME_DIR,
      error: 'HTTP 400 urn:ietf:params:acme:error:connection - Connection refused',
    });
    const failed = await store.stateOf('new.example.com');
    assert.equal(failed.state, 'error');
    assert.match(failed.last_error!, /could not get certificate from issuer: HTTP 400 .*Connection refused/);
    assert.equal(failed.last_error_at, new Date(clock()).toISOString());
    // lines of other loggers, or without an error, change nothing
    store.noteLog({ level: 'error', logger: 'http.handlers.reverse_proxy', msg: 'dial', error: 'x', identifier: 'valid.example.com' });
    store.noteLog({ level: 'info', logger: 'tls.obtain', msg: 'obtaining certificate', identifier: 'valid.example.com' });
    assert.equal((await store.stateOf('valid.example.com')).last_error, null);
    // a renewal error of a name that has a certificate keeps its state and shows the error
    store.noteLog({ level: 'error', logger: 'tls.renew', msg: 'will retry', error: '[soon.example.com] Renew: rate limited' });
    const soon = await store.stateOf('soon.example.com');
    assert.equal(soon.state, 'expiring');
    assert.match(soon.last_error!, /rate limited/);

    // a certificate written now is seen after the TTL (cached reads), or at once after "obtained"
    writeCert(storage, ACME_DIR, 'new.example.com', 365);
    assert.equal((await store.stateOf('new.example.com')).state, 'error', 'the cached scan is still used');
    store.noteLog({ level: 'info', logger: 'tls.obtain', msg: 'certificate obtained successfully', identifier: 'new.example.com' });
    const got = await store.stateOf('new.example.com');
    assert.equal(got.state, 'valid');
    assert.equal(got.last_error, null);
    writeCert(storage, ACME_DIR, 'later.example.com', 365);
    assert.equal((await store.stateOf('later.example.com')).state, 'pending');
    clock.advance(30_001);
    assert.equal((await store.stateOf('later.example.com')).state, 'valid', 'rescanned after the TTL');

    // time passes: expired
    clock.advance(400 * 86_400_000);
    store.invalidate();
    assert.equal((await store.stateOf('valid.example.com')).state, 'expired');
  } finally {
    fs.rmSync(storage, { recursive: true, force: true });
  }
});
