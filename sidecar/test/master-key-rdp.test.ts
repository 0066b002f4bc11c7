// Master-key rotation and RDP (hook `rdp`, registered in app-context.ts): `npm run cli --
// rotate-master-key` retires the RDP key pair, makes a new one sealed under the new master key, and
// every route with stored credentials is listed by GET /api/v1/rdp/rotation/pending, in the
// rotation's transaction: a rotation that fails later leaves the RDP keys and routes as they were.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { decryptCredentials, encryptCredentials } from '@gatehouse/common/rdp-credentials.js';
import { startTestServer, apiToken, bearer, type TestServer, apiCall } from './lib/server.js';
import { loadConfig } from '../src/config.js';
import { createAppContext } from '../src/app-context.js';
import { featureModels } from '../src/features.js';
import { createLogger } from '../src/util/logger.js';
import { MasterKey } from '../src/util/crypto.js';
import { asRows, type Row } from './lib/rows.js';

const SIDECAR = path.resolve(import.meta.dirname, '..');
const creds = { username: 'alice', password: 'rdp-pass-rotate-1', domain: 'CORP' };
let dataDir: string;
let databaseUrl: string | undefined;
let s: TestServer | null = null;
let token = '';
let withCreds = 0;
let without = 0;
let oldKid = '';

const env = (): Record<string, string> => ({
  GATEHOUSE_RATE_LIMIT_ADMIN: '100000',
  GATEHOUSE_DATA_DIR: dataDir,
  ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
});
const call = apiCall(
  () => s!,
  () => bearer(token),
);

before(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-mk-rdp-'));
  s = await startTestServer(env());
  databaseUrl = s.databaseUrl;
  token = await apiToken(s);
  withCreds = (await call('/rdp', 'POST', { name: 'Desk', access_mode: 'external', target_host: 'rdp.example.com' })).data.route.id;
  without = (await call('/rdp', 'POST', { name: 'Bare', access_mode: 'external', target_host: 'rdp2.example.com' })).data.route.id;
  const pub = (await call('/rdp/pubkey')).data;
  oldKid = pub.kid;
  const put = await call(`/rdp/${withCreds}/credentials`, 'PUT', { credentials: await encryptCredentials(pub.public_key, creds) });
  assert.equal(put.status, 200, JSON.stringify(put.data));
  assert.deepEqual((await call('/rdp/rotation/pending')).data.routes, []);
  await s.close();
  s = null;
});

after(async () => {
  await s?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

test('a rotation that fails after the rdp hook leaves the RDP key pair and the routes as they were', async () => {
  const ctx = await createAppContext(loadConfig({ ...env(), GATEHOUSE_MANAGE_CADDY: 'false', GATEHOUSE_WG_MANAGE: 'false' }), {
    models: featureModels,
    log: createLogger('error', true),
  });
  ctx.onMasterKeyRotated(async () => {
    throw new Error('later hook refuses');
  }, 'refuser');
  assert.deepEqual(ctx.masterKeyRotation.hookNames(), ['rdp', 'refuser'], 'the rdp hook runs first, then the refusing one');
  await assert.rejects(ctx.masterKeyRotation.rotate({ source: 'cli' }), /master-key hook refuser failed/);
  assert.equal(await ctx.db.models.RdpServerKey.count(), 1, 'no new key pair');
  assert.equal(await ctx.db.models.RdpRoute.count({ where: { rotation_state: 'pending' } }), 0, 'no route pending');
  await ctx.db.close();
});

test('npm run cli -- rotate-master-key: new RDP key pair, the route with credentials is pending (GET /rdp/rotation/pending)', async () => {
  const oldMaster = MasterKey.load(path.join(dataDir, 'master.key'));
  const r = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'rotate-master-key'], {
    cwd: SIDECAR,
    env: { ...process.env, ...env(), GATEHOUSE_MANAGE_CADDY: 'false', GATEHOUSE_WG_MANAGE: 'false' },
    encoding: 'utf8',
    timeout: 120_000,
  });
  assert.equal(r.status, 0, r.stderr + r.stdout);
  assert.match(r.stdout, /rdp_server_keys 1/);
  assert.match(r.stdout, /hooks run: rdp/);

  s = await startTestServer(env());
  const pending = await call('/rdp/rotation/pending');
  assert.equal(pending.status, 200, JSON.stringify(pending.data));
  const list = pending.data.routes;
  assert.deepEqual(
    list.map((x) => x.id),
    [withCreds],
    'only the route with stored credentials',
  );
  assert.equal(list[0]!.rotation_state, 'pending');
  assert.equal((await call(`/rdp/${without}`)).data.route.rotation_state, 'none', 'a route without credentials has nothing to re-enter');
  // the new pair: current, sealed under the new master key (it opens), the old one retired
  const pub = (await call('/rdp/pubkey')).data;
  assert.notEqual(pub.kid, oldKid);
  assert.equal(pending.data.current_kid, pub.kid);
  const rows = asRows<'RdpServerKey'>(await s.deps.db.models.RdpServerKey.findAll({ raw: true }));
  assert.equal(rows.length, 2);
  assert.ok(rows.find((x) => x.kid === oldKid)!.retired_at !== null);
  for (const row of rows) assert.throws(() => oldMaster.open(row.private_key_sealed), 'no RDP private key opens with the old master key');
  const fresh = await encryptCredentials(pub.public_key, creds);
  assert.deepEqual(await decryptCredentials(await s.deps.rdp.keys.privateKeyFor(pub.kid), pub.kid, fresh), creds);
  await assert.rejects(s.deps.rdp.keys.privateKeyFor(oldKid), /retired/);
  // the activity row names the hook
  const act = ((await s.deps.db.models.Activity.findOne({ where: { event_type: 'master_key_rotated' }, raw: true })) as Row<'Activity'> | null)!;
  assert.deepEqual(JSON.parse(act.details!).hooks, ['rdp']);
});
