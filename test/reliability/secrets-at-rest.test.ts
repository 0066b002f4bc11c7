// Secrets at rest: every kind of secret the server holds is created through the API (and
// used: a test mail through an SMTP server that needs the password, a visitor signed in on a
// route-auth route), then the database file (SQLite with its WAL, or a pg_dump on PostgreSQL), the
// logs (everything the server logged at debug level) and every file of the data directory are
// searched for each secret: as text, base64, base64url and hex of the text, and for the binary ones
// (WireGuard keys, the TOTP seed) also the raw bytes and their hex. None may be found.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { Writable } from 'node:stream';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import speakeasy from 'speakeasy';
import winston from 'winston';
import { startTestServer, apiToken, login, bearer, ADMIN, type TestServer } from '../../sidecar/test/lib/server.js';
import { Browser, startSmtp, type SmtpSink } from '../../sidecar/test/route-auth-helpers.js';
import { SESSION_COOKIE } from '../../sidecar/src/http/app.js';
import { recordFigure } from './lib/figures.js';

let s: TestServer;
let smtp: SmtpSink;
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-secrets-'));
const logLines: string[] = [];

/** A logger like the server's own (winston JSON lines), at debug level, into memory. */
function captureLogger(): winston.Logger {
  const sink = new Writable({
    write(chunk, _enc, cb) {
      logLines.push(String(chunk));
      cb();
    },
  });
  return winston.createLogger({
    level: 'debug',
    format: winston.format.combine(winston.format.timestamp(), winston.format.errors({ stack: true }), winston.format.json()),
    transports: [new winston.transports.Stream({ stream: sink })],
  });
}

before(async () => {
  s = await startTestServer(
    {
      GATEHOUSE_DATA_DIR: dataDir,
      GATEHOUSE_WG_SUBNET: '127.78.0.0/24',
      GATEHOUSE_PUBLIC_HOST: 'vpn.example.test',
      GATEHOUSE_WEBHOOK_ALLOW_PRIVATE: 'true',
      GATEHOUSE_RATE_LIMIT_LOGIN: '100000',
      GATEHOUSE_RATE_LIMIT_ADMIN: '100000',
    },
    { log: captureLogger() },
  );
});
after(async () => {
  await smtp?.close();
  await s?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

interface Secret {
  kind: string;
  value: string;
  binary?: 'base64' | 'base32';
}

/** The byte patterns a secret could be stored as. */
function forms(sec: Secret): { form: string; bytes: Buffer }[] {
  const text = Buffer.from(sec.value, 'utf8');
  const out: { form: string; bytes: Buffer }[] = [
    { form: 'text', bytes: text },
    { form: 'base64 of the text', bytes: Buffer.from(text.toString('base64').replace(/=+$/, '')) },
    { form: 'base64url of the text', bytes: Buffer.from(text.toString('base64url')) },
    { form: 'hex of the text', bytes: Buffer.from(text.toString('hex')) },
    { form: 'HEX of the text', bytes: Buffer.from(text.toString('hex').toUpperCase()) },
  ];
  let raw: Buffer | undefined;
  if (sec.binary === 'base64') raw = Buffer.from(sec.value, 'base64');
  if (sec.binary === 'base32') raw = base32Decode(sec.value);
  if (raw) {
    out.push(
      { form: 'raw bytes', bytes: raw },
      { form: 'hex of the bytes', bytes: Buffer.from(raw.toString('hex')) },
      { form: 'base64url of the bytes', bytes: Buffer.from(raw.toString('base64url')) },
    );
    if (sec.binary === 'base32') out.push({ form: 'base64 of the bytes', bytes: Buffer.from(raw.toString('base64').replace(/=+$/, '')) });
  }
  return out.filter((f) => f.bytes.length >= 8);
}

function base32Decode(s: string): Buffer {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = '';
  for (const c of s.replace(/=+$/, '').toUpperCase()) bits += alphabet.indexOf(c).toString(2).padStart(5, '0');
  const bytes: number[] = [];
  for (let i = 0; i + 8 <= bits.length; i += 8) bytes.push(parseInt(bits.slice(i, i + 8), 2));
  return Buffer.from(bytes);
}

function walk(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((d) => (d.isDirectory() ? walk(path.join(dir, d.name)) : d.isFile() ? [path.join(dir, d.name)] : []));
}

async function createSecrets(): Promise<Secret[]> {
  const secrets: Secret[] = [];
  const full = await apiToken(s);
  const h = bearer(full);
  const api = async <T = never, P extends string = string, M extends string = 'GET'>(p: P, method: [T] extends [never] ? M : string, json?: unknown) => {
    const r = await s.req<T, `/api/v1${P}`, M>(`/api/v1${p}`, { method, json, headers: h });
    assert.ok(r.status < 300, `${method} ${p}: ${r.status} ${JSON.stringify(r.data)}`);
    return r.data;
  };
  secrets.push({ kind: 'API token (full-access, of the test harness)', value: full });
  secrets.push({ kind: 'API token', value: (await api('/tokens', 'POST', { name: 'secret-scan', scopes: ['logs', 'peers'] })).token });

  // WireGuard: the server's private key, a peer's private and preshared keys
  const server = await s.deps.wireguard.serverKeys();
  secrets.push({ kind: 'WireGuard server private key', value: server.privateKey, binary: 'base64' });
  const peer = await api('/peers', 'POST', { name: 'scan-peer' });
  const conf = await s.req(`/api/v1/peers/${peer.peer.id}/config`, { headers: h });
  for (const [, k, v] of String(conf.data).matchAll(/(PrivateKey|PresharedKey) = (\S+)/g))
    secrets.push({ kind: `WireGuard peer ${k}`, value: v, binary: 'base64' });
  assert.equal(secrets.filter((x) => x.kind.startsWith('WireGuard peer')).length, 2, String(conf.data));

  // a gateway: its companion API token and the push token the server calls it with
  const gw = await api('/peers', 'POST', { name: 'scan-gw', is_gateway: true, api_port: 8090 });
  secrets.push({ kind: 'gateway API token', value: gw.gateway!.apiToken }, { kind: 'gateway push token', value: gw.gateway!.pushToken });
  const rotated = await api(`/peers/${gw.peer.id}/gateway-env/rotate`, 'POST');
  secrets.push(
    { kind: 'gateway API token (rotated)', value: rotated.gateway.apiToken },
    { kind: 'gateway push token (rotated)', value: rotated.gateway.pushToken },
  );
  // the gateway uses its token
  assert.equal((await s.req('/api/v1/gateway/config', { headers: bearer(rotated.gateway.apiToken) })).status, 200);

  // SMTP: the password, used for a real test mail
  const smtpPassword = 'smtp-at-rest-Secret-9c1e';
  smtp = await startSmtp({ user: 'mailer', password: smtpPassword });
  await api('/smtp', 'PUT', { host: '127.0.0.1', port: smtp.port, secure: false, user: 'mailer', password: smtpPassword, from: 'Gatehouse <gh@example.test>' });
  await api('/smtp/test', 'POST', { to: 'admin@example.test' });
  secrets.push({ kind: 'SMTP password', value: smtpPassword });

  // route auth: a password route with a visitor signed in, a TOTP route activated
  const raPassword = 'route-auth-at-rest-Pass-71';
  const r1 = await api('/routes', 'POST', { domain: 'scan-ra.example.test', peer_id: peer.peer.id, target_port: 8080 });
  await api(`/routes/${r1.route.id}/auth`, 'POST', { method: 'email_password', email: 'owner@example.test', password: raPassword, session_max_age: 3_600_000 });
  secrets.push({ kind: 'route-auth password', value: raPassword });
  const visitor = new Browser(s, 'scan-ra.example.test');
  const signed = await visitor.submit('password', { email: 'owner@example.test', password: raPassword });
  assert.equal(signed.status, 303, signed.body.slice(0, 300));
  const raSession = visitor.session(r1.route.id);
  assert.ok(raSession, 'the visitor has a route session');
  assert.equal((await visitor.verify('/')).status, 204);
  secrets.push({ kind: 'route-auth visitor session id', value: raSession });

  const r2 = await api('/routes', 'POST', { domain: 'scan-totp.example.test', peer_id: peer.peer.id, target_port: 8081 });
  await api(`/routes/${r2.route.id}/auth`, 'POST', { method: 'totp', email: 'owner@example.test', session_max_age: 3_600_000 });
  const setup = await api(`/routes/${r2.route.id}/auth/totp-setup`, 'POST');
  await api(`/routes/${r2.route.id}/auth/totp-verify`, 'POST', { token: speakeasy.totp({ secret: setup.secret, encoding: 'base32' }) });
  secrets.push({ kind: 'route-auth TOTP secret', value: setup.secret, binary: 'base32' });

  // basic auth on a route
  const basic = 'basic-at-rest-Pass-42';
  await api('/routes', 'POST', {
    domain: 'scan-basic.example.test',
    peer_id: peer.peer.id,
    target_port: 8082,
    https_enabled: true,
    basic_auth_user: 'visitor',
    basic_auth_password: basic,
  });
  secrets.push({ kind: 'route basic-auth password', value: basic });

  // a webhook's signing secret
  if ((await s.req('/api/v1/webhooks', { headers: h })).status === 200) {
    const whSecret = 'webhook-at-rest-Secret-5d0a';
    await api('/webhooks', 'POST', { name: 'scan-hook', url: 'http://127.0.0.1:9/hook', events: ['peer_created'], enabled: true, secret: whSecret });
    secrets.push({ kind: 'webhook secret', value: whSecret });
  }

  // a user's password, and the admin's session (signed in, used, still live)
  const userPassword = 'user-at-rest-Pass-88';
  await api('/users', 'POST', { username: 'scan-user', password: userPassword, role: 'user' });
  secrets.push({ kind: 'user password', value: userPassword }, { kind: 'admin password', value: ADMIN.password });
  const admin = await login(s);
  assert.equal(
    (
      await s.req('/api/v1/settings/profile', {
        method: 'PUT',
        json: { email: 'admin@example.test' },
        headers: { cookie: admin.cookie, 'x-csrf-token': admin.csrf },
      })
    ).status,
    200,
  );
  const sid = new RegExp(`${SESSION_COOKIE}=([^;]+)`).exec(admin.cookie)?.[1];
  assert.ok(sid, admin.cookie);
  secrets.push({ kind: 'admin session id', value: decodeURIComponent(sid) });
  return secrets;
}

test('no plaintext secret in the database, the logs or any file of the data directory', { timeout: 120_000 }, async () => {
  const started = Date.now();
  const secrets = await createSecrets();
  // places to search: every file of the data directory while running (SQLite's WAL included), the
  // same after a clean stop (checkpointed), a pg_dump on PostgreSQL, and the log
  const places: { name: string; bytes: Buffer }[] = [];
  const files = () => walk(dataDir).map((f) => ({ name: `file ${path.relative(dataDir, f)}`, bytes: fs.readFileSync(f) }));
  places.push(...files());
  if (s.databaseUrl)
    places.push({ name: 'pg_dump', bytes: execFileSync('pg_dump', ['--no-owner', '--data-only', s.databaseUrl], { maxBuffer: 256 * 1024 * 1024 }) });
  await s.close();
  places.push(...files().map((p) => ({ ...p, name: `${p.name} (after stop)` })));
  places.push({ name: 'server log', bytes: Buffer.from(logLines.join('')) });
  assert.ok(places.some((p) => /gatehouse\.db/.test(p.name)) || s.databaseUrl, `the database file is among the files: ${places.map((p) => p.name).join(', ')}`);
  assert.ok(logLines.length > 0, 'the server logged something');

  const found: string[] = [];
  let patterns = 0;
  for (const sec of secrets) {
    for (const f of forms(sec)) {
      patterns++;
      for (const p of places) if (p.bytes.includes(f.bytes)) found.push(`${sec.kind} (${f.form}) in ${p.name}`);
    }
  }
  const bytes = places.reduce((n, p) => n + p.bytes.length, 0);
  recordFigure({ test: 'Secrets at rest', figure: 'secrets created / byte patterns searched', value: `${secrets.length} / ${patterns}` });
  recordFigure({
    test: 'Secrets at rest',
    figure: 'places searched',
    value: `${places.length} (${(bytes / 1024).toFixed(0)} KiB${s.databaseUrl ? ', pg_dump included' : ', SQLite'})`,
  });
  recordFigure({ test: 'Secrets at rest', figure: 'plaintext secrets found', value: String(found.length), target: '0', ok: found.length === 0 });
  recordFigure({ test: 'Secrets at rest', figure: 'duration', value: `${((Date.now() - started) / 1000).toFixed(1)} s` });
  assert.deepEqual(found, [], `secrets found at rest:\n${found.join('\n')}`);
  // the search can find: values stored in the clear (a route's domain, a peer's name) are found in the database
  for (const plain of ['scan-ra.example.test', 'scan-peer'])
    assert.ok(
      places.some((p) => p.name !== 'server log' && p.bytes.includes(Buffer.from(plain))),
      `control: ${plain} is found at rest`,
    );
});
