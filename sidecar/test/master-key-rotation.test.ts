// Master-key rotation (masterkey/rotation.ts, `npm run cli -- rotate-master-key`), on SQLite and on
// PostgreSQL (TEST_DATABASE_URL): every sealed value re-sealed in one transaction (none opens with the
// old key afterwards, all with the new), the peers' WireGuard configurations, SMTP and TOTP working
// after a restart; the CLI refuses while the sidecar runs; a failure or a crash after any step leaves
// a key on disk that opens the data; hooks run inside the transaction.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import speakeasy from 'speakeasy';
import { startTestServer, apiToken, bearer, type TestServer } from './lib/server.js';
import { startSmtp, type SmtpSink } from './route-auth-helpers.js';
import { loadConfig, type Config } from '../src/config.js';
import { createAppContext, type AppContext } from '../src/app-context.js';
import { featureModels } from '../src/features.js';
import { createLogger } from '../src/util/logger.js';
import { MASTER_SEALED, MasterKey } from '../src/util/crypto.js';
import { openableWith } from '../src/masterkey/sealed.js';
import { keyFiles } from '../src/masterkey/files.js';
import { ROTATION_STEPS, type RotationStep } from '../src/masterkey/rotation.js';
import { LOCK_FILE, STALE_MS } from '../src/masterkey/lock.js';
import { EXCLUDED_TABLES } from '../src/backup/sections.js';
import { QueryTypes } from 'sequelize';
import { asRows, type Row } from './lib/rows.js';

const ENV = {
  GATEHOUSE_WEBHOOK_ALLOW_PRIVATE: 'true',
  GATEHOUSE_OUTBOUND_ALLOW_PRIVATE: 'backup_s3',
  GATEHOUSE_RATE_LIMIT_ADMIN: '100000',
  GATEHOUSE_WG_SUBNET: '10.78.0.0/24',
  GATEHOUSE_PUBLIC_HOST: 'vpn.example.test',
};
const SMTP_AUTH = { user: 'mailer', password: 'smtp-secret-rotate-1' };
const SIDECAR = path.resolve(import.meta.dirname, '..');

let dataDir: string;
let databaseUrl: string | undefined;
let smtp: SmtpSink;
let s: TestServer | null = null;
const peerIds: number[] = [];
const configs = new Map<number, string>();
let routeId = 0;
let totpSecret = '';
/** where sealed values are (table.column), and how many, before any rotation */
let sealedAt: string[] = [];

const env = (): Record<string, string> => ({ ...ENV, GATEHOUSE_DATA_DIR: dataDir, ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}) });
const keyFile = () => path.join(dataDir, 'master.key');
const columns = (places: string[]) => [...new Set(places.map((p) => p.split(' ')[0]))].sort();

function config(): Config {
  return loadConfig({ ...env(), GATEHOUSE_MANAGE_CADDY: 'false', GATEHOUSE_WG_MANAGE: 'false' });
}

async function context(): Promise<AppContext> {
  return createAppContext(config(), { models: featureModels, log: createLogger('error', true) });
}

async function ok<T = never, P extends string = string, M extends string = 'GET'>(
  p: P,
  method?: [T] extends [never] ? M : string,
  json?: unknown,
  h?: Record<string, string>,
) {
  const r = await s!.req<T, `/api/v1${P}`, M>(`/api/v1${p}`, { method, headers: h, ...(json !== undefined ? { json } : {}) });
  assert.ok(r.status >= 200 && r.status < 300, `${method ?? 'GET'} ${p}: ${r.status} ${JSON.stringify(r.data)}`);
  return r.data;
}

function cli(args: string[]) {
  return spawnSync(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], {
    cwd: SIDECAR,
    env: { ...process.env, ...env(), GATEHOUSE_MANAGE_CADDY: 'false', GATEHOUSE_WG_MANAGE: 'false' },
    encoding: 'utf8',
    timeout: 120_000,
  });
}

/** Everything that must still work with whatever key is on disk now. */
async function assertDataOpens(ctx: AppContext, label: string) {
  const onDisk = MasterKey.load(keyFile());
  assert.ok(onDisk.equals(ctx.crypto), `${label}: the process runs with the key on disk`);
  const f = keyFiles(keyFile());
  assert.ok(!fs.existsSync(f.next) && !fs.existsSync(f.old), `${label}: no master.key.new / master.key.old left`);
  // (hooks may add sealed values: the rdp hook's new key pair)
  const opening = new Set(await openableWith(ctx.db, onDisk));
  for (const place of sealedAt) assert.ok(opening.has(place), `${label}: ${place} opens with the key on disk`);
  for (const id of peerIds) assert.equal((await ctx.peers.config(id)).text, configs.get(id), `${label}: peer ${id}'s WireGuard configuration unchanged`);
}

before(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-mk-'));
  smtp = await startSmtp(SMTP_AUTH);
  s = await startTestServer({ ...ENV, GATEHOUSE_DATA_DIR: dataDir });
  databaseUrl = s.databaseUrl;
  const h = bearer(await apiToken(s));
  // sealed: peer private + preshared keys, the server key (settings), a gateway's push token, a
  // route's TOTP secret, the SMTP password (settings), a webhook secret, a backup job's S3 secret and passphrase
  for (const name of ['laptop', 'phone']) peerIds.push((await ok('/peers', 'POST', { name }, h)).peer.id);
  const gw = (await ok('/peers', 'POST', { name: 'home-gw', is_gateway: true, api_port: 9100 }, h)).peer.id as number;
  peerIds.push(gw);
  for (const id of peerIds) configs.set(id, (await s.deps.peers.config(id)).text);
  routeId = (
    await ok(
      '/routes',
      'POST',
      { domain: 'nas.example.test', target_kind: 'gateway', target_peer_id: gw, target_lan_host: '192.168.1.20', target_lan_port: 5000 },
      h,
    )
  ).route.id;
  await ok(`/routes/${routeId}/auth`, 'POST', { method: 'totp', email: 'o@example.test', session_max_age: 24 * 3600_000 }, h);
  totpSecret = (await ok(`/routes/${routeId}/auth/totp-setup`, 'POST', undefined, h)).secret;
  const prev = speakeasy.totp({ secret: totpSecret, encoding: 'base32', time: Math.floor(Date.now() / 1000) - 30 });
  await ok(`/routes/${routeId}/auth/totp-verify`, 'POST', { token: prev }, h);
  await ok(
    '/smtp',
    'PUT',
    { host: '127.0.0.1', port: smtp.port, secure: false, user: SMTP_AUTH.user, password: SMTP_AUTH.password, from: 'gh@example.test' },
    h,
  );
  await ok(
    '/webhooks',
    'POST',
    { name: 'ops', url: 'http://127.0.0.1:9/hook', events: ['master_key_rotated'], enabled: true, secret: 'webhook-secret-0123456789' },
    h,
  );
  await ok(
    '/settings/autobackup',
    'POST',
    {
      name: 'offsite',
      schedule: 'daily',
      keep: 3,
      target: 's3',
      s3: {
        bucket: 'gatehouse-backups',
        region: 'us-east-1',
        endpoint: 'http://127.0.0.1:9',
        access_key_id: 'AKIDEXAMPLE',
        secret_access_key: 's3-secret-key-1',
      },
      passphrase: 'job passphrase 123',
    },
    h,
  );
  sealedAt = await openableWith(s.deps.db, s.deps.crypto);
  for (const col of [
    'peers.private_key_enc',
    'peers.preshared_key_enc',
    'settings.value',
    'gateways.push_token_enc',
    'route_auth.totp_secret',
    'webhooks.secret_enc',
    'backup_jobs.s3_secret_enc',
    'backup_jobs.passphrase_enc',
  ]) {
    assert.ok(columns(sealedAt).includes(col), `fixture: ${col} holds a sealed value (${columns(sealedAt).join(', ')})`);
  }
});

after(async () => {
  await s?.close();
  await smtp.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

test('no value sealed with the master key lives in a table the backup (and so the rotation) leaves out', async () => {
  const found: string[] = [];
  for (const table of Object.keys(EXCLUDED_TABLES)) {
    let rows: Record<string, unknown>[];
    try {
      rows = (await s!.deps.db.sequelize.query(`SELECT * FROM "${table}"`, { type: QueryTypes.SELECT })) as Record<string, unknown>[];
    } catch {
      continue; // sqlite_sequence on PostgreSQL
    }
    for (const row of rows) {
      for (const [col, v] of Object.entries(row)) {
        for (const m of typeof v === 'string' ? v.matchAll(MASTER_SEALED) : []) {
          try {
            s!.deps.crypto.open(m[0]);
            found.push(`${table}.${col}`);
          } catch {
            /* not sealed with it */
          }
        }
      }
    }
  }
  assert.deepEqual(found, []);
});

test('the CLI refuses while the sidecar runs (it holds the key in memory) and changes nothing', async () => {
  assert.ok(fs.existsSync(path.join(dataDir, LOCK_FILE)), 'the running sidecar holds gatehouse.pid');
  const before = fs.readFileSync(keyFile(), 'utf8');
  const r = cli(['rotate-master-key']);
  assert.equal(r.status, 1, r.stderr);
  assert.match(r.stderr, new RegExp(`The sidecar is running \\(pid ${process.pid}.*\\n.*Stop it`));
  assert.equal(fs.readFileSync(keyFile(), 'utf8'), before);
  assert.deepEqual(await openableWith(s!.deps.db, s!.deps.crypto), sealedAt);
  await s!.close();
  s = null;
  assert.ok(!fs.existsSync(path.join(dataDir, LOCK_FILE)), 'the sidecar gives gatehouse.pid back at close');
});

test('npm run cli -- rotate-master-key: every sealed value re-sealed; tunnels, SMTP, TOTP and webhooks work after a restart', async () => {
  const oldKey = MasterKey.load(keyFile());
  const r = cli(['rotate-master-key']);
  assert.equal(r.status, 0, r.stderr + r.stdout);
  assert.match(r.stdout, new RegExp(`master key rotated: ${sealedAt.length} sealed values re-sealed`));
  const newKey = MasterKey.load(keyFile());
  assert.ok(!newKey.equals(oldKey), 'a new key is on disk');
  assert.equal(fs.statSync(keyFile()).mode & 0o777, 0o600);

  s = await startTestServer(env());
  assert.ok(s.deps.crypto.equals(newKey));
  assert.deepEqual(await openableWith(s.deps.db, oldKey), [], 'nothing opens with the old key');
  await assertDataOpens(s.deps, 'after the CLI');
  // SMTP: the password authenticates against a real SMTP server
  await s.deps.smtp.sendTest('admin@example.test');
  const mail = await smtp.waitFor(1);
  assert.equal(mail.user, SMTP_AUTH.user);
  // TOTP: the route's second factor still checks a current code
  const cfg = (await s.deps.routeAuth.config(routeId))!;
  assert.equal(await s.deps.routeAuth.checkTotp(cfg, speakeasy.totp({ secret: totpSecret, encoding: 'base32' })), true);
  // webhook secret and backup job secrets open
  const hook = ((await s.deps.db.models.Webhook.findOne({ raw: true })) as Row<'Webhook'> | null)!;
  assert.equal(s.deps.crypto.open(hook.secret_enc), 'webhook-secret-0123456789');
  // the activity log and a webhook delivery for the subscribed event
  const act = asRows<'Activity'>(await s.deps.db.models.Activity.findAll({ where: { event_type: 'master_key_rotated' }, raw: true }));
  assert.equal(act.length, 1);
  assert.equal(act[0].source, 'cli');
  assert.equal(JSON.parse(act[0].details!).sealed_values, sealedAt.length);
  const deliveries = asRows<'WebhookDelivery'>(await s.deps.db.models.WebhookDelivery.findAll({ raw: true }));
  assert.deepEqual(
    deliveries.map((d) => d.event),
    ['master_key_rotated'],
  );
  await s.close();
  s = null;
});

test('a failure after any step, or a crash there, leaves a key on disk that opens the data', async () => {
  const f = keyFiles(keyFile());
  for (const at of ROTATION_STEPS) {
    const before = MasterKey.load(keyFile());
    // what a crash at that point leaves on disk: the key files as they are then (the database is
    // rolled back before the commit and committed after it, as a crash leaves it)
    let snapshot: Record<string, string | null> = {};
    const ctx = await context();
    await assert.rejects(
      ctx.masterKeyRotation.rotate({
        source: 'cli',
        onStep: (step: RotationStep) => {
          if (step !== at) return;
          snapshot = Object.fromEntries(Object.values(f).map((p) => [p, fs.existsSync(p) ? fs.readFileSync(p, 'utf8') : null]));
          throw new Error(`stopped at ${at}`);
        },
      }),
      new RegExp(`stopped at ${at}`),
    );
    await ctx.db.close();
    const committed = at === 'committed' || at === 'renamed';
    assert.equal(!MasterKey.load(keyFile()).equals(before), committed, `${at}: the key on disk is the new one iff the transaction committed`);
    let again = await context();
    await assertDataOpens(again, `failure at ${at}`);
    await again.db.close();

    // the crash image: the files as they were at that step
    for (const [p, text] of Object.entries(snapshot)) {
      if (text === null) fs.rmSync(p, { force: true });
      else fs.writeFileSync(p, text, { mode: 0o600 });
    }
    assert.ok(fs.existsSync(f.old), `${at}: master.key.old is kept until the end`);
    again = await context();
    await assertDataOpens(again, `crash at ${at}`);
    assert.equal(!again.crypto.equals(before), committed, `${at}: the settled key is the new one iff the transaction committed`);
    await again.db.close();
  }
});

test('hooks run inside the transaction with the new key; a hook that throws rolls everything back', async () => {
  const before = MasterKey.load(keyFile());
  let ctx = await context();
  const underOld = await openableWith(ctx.db, before);
  ctx.onMasterKeyRotated(async (newKey, { transaction }) => {
    await ctx.db.models.Setting.create({ key: 'test.hook_ran', value: JSON.stringify(newKey.seal('x').length > 0), updated_at: Date.now() }, { transaction });
  }, 'test-writer');
  ctx.onMasterKeyRotated(async () => {
    throw new Error('refused by the test hook');
  }, 'test-refuser');
  await assert.rejects(ctx.masterKeyRotation.rotate({ source: 'cli' }), /master-key hook test-refuser failed: refused by the test hook/);
  assert.equal(await ctx.db.models.Setting.count({ where: { key: 'test.hook_ran' } }), 0, "the first hook's write is rolled back");
  assert.deepEqual(await openableWith(ctx.db, before), underOld, 'every value still under the old key');
  await ctx.db.close();
  ctx = await context();
  await assertDataOpens(ctx, 'after a refusing hook');
  assert.ok(ctx.crypto.equals(before));

  let seen: MasterKey | null = null;
  ctx.onMasterKeyRotated(async (newKey, { transaction, oldKey }) => {
    seen = newKey;
    assert.ok(oldKey.equals(before));
    // inside the transaction: the values are already under the new key
    const row = ((await ctx.db.models.Webhook.findOne({ raw: true, transaction })) as Row<'Webhook'> | null)!;
    assert.equal(newKey.open(row.secret_enc), 'webhook-secret-0123456789');
    await ctx.db.models.Setting.create({ key: 'test.hook_ran', value: 'true', updated_at: Date.now() }, { transaction });
  }, 'test-writer');
  const r = await ctx.masterKeyRotation.rotate({ source: 'cli' });
  assert.deepEqual(r.hooks, ['rdp', 'test-writer']);
  assert.ok(seen && (seen as MasterKey).equals(MasterKey.load(keyFile())), 'the hook got the key that is now on disk');
  assert.equal(await ctx.db.models.Setting.count({ where: { key: 'test.hook_ran' } }), 1);
  await ctx.db.models.Setting.destroy({ where: { key: 'test.hook_ran' } });
  await ctx.db.close();
  ctx = await context();
  await assertDataOpens(ctx, 'after a rotation with a hook');
  await ctx.db.close();
});

test('gatehouse.pid: a sidecar does not start while a rotation holds it; a holder that is gone and silent is taken over', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-mk-lock-'));
  const other = spawn('sleep', ['60'], { stdio: 'ignore' });
  try {
    // a live pid with another start time is a reused pid, not the holder (once the file is silent)
    fs.writeFileSync(path.join(dir, LOCK_FILE), JSON.stringify({ pid: other.pid, start: '1', role: 'rotate-master-key', since: new Date().toISOString() }));
    const silent = new Date(Date.now() - STALE_MS - 1000);
    fs.utimesSync(path.join(dir, LOCK_FILE), silent, silent);
    const first = await startTestServer({ GATEHOUSE_DATA_DIR: dir });
    await first.close();
    fs.writeFileSync(path.join(dir, LOCK_FILE), JSON.stringify({ pid: other.pid, role: 'rotate-master-key', since: new Date().toISOString() }));
    await assert.rejects(
      startTestServer({ GATEHOUSE_DATA_DIR: dir }),
      new RegExp(`held by a master-key rotation \\(pid ${other.pid}.*start the sidecar again when it is done`),
    );
    other.kill('SIGKILL');
    await new Promise((resolve) => other.once('exit', resolve));
    // the holder is gone, but touched the file recently (a holder in another pid namespace looks like this)
    await assert.rejects(startTestServer({ GATEHOUSE_DATA_DIR: dir }), /held by a master-key rotation/);
    const old = new Date(Date.now() - STALE_MS - 1000);
    fs.utimesSync(path.join(dir, LOCK_FILE), old, old);
    const t = await startTestServer({ GATEHOUSE_DATA_DIR: dir });
    assert.equal(JSON.parse(fs.readFileSync(path.join(dir, LOCK_FILE), 'utf8')).pid, process.pid, 'taken over from the dead holder');
    await t.close();
    assert.ok(!fs.existsSync(path.join(dir, LOCK_FILE)));
    // a sidecar's file that still looks live (restarted right after a crash): the new sidecar takes it
    // over and holds it, so the CLI sees it
    fs.writeFileSync(path.join(dir, LOCK_FILE), JSON.stringify({ pid: process.ppid, role: 'sidecar', since: new Date().toISOString() }));
    const next = await startTestServer({ GATEHOUSE_DATA_DIR: dir });
    assert.equal(JSON.parse(fs.readFileSync(path.join(dir, LOCK_FILE), 'utf8')).pid, process.pid);
    await next.close();
  } finally {
    other.kill('SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
