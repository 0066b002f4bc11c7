// RDP credentials across a real master-key rotation (masterkey/rotation.ts, the hook registered in
// app-context.ts): inside the rotation's transaction a new RDP key pair is made (its private half
// sealed with the NEW master key), the old one retired (re-sealed with the rest), and every route
// with credentials goes to rotation pending; after a restart on the rotated key file the new pair
// opens what is encrypted for it, re-entry and ack clear the rotation. A server that never made an
// RDP key gets none from a rotation.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { decryptCredentials, encryptCredentials } from '@gatehouse/common/rdp-credentials.js';
import { MasterKey } from '../src/util/crypto.js';
import { startTestServer, apiToken, bearer, type TestServer, apiCall } from './lib/server.js';
import { asRows } from './lib/rows.js';

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gh-rdp-rotation-'));
let s: TestServer;
let auth: Record<string, string>;
const call = apiCall(
  () => s,
  () => auth,
);
const creds = { username: 'carol', password: 'rotate-me-1', domain: 'LAB' };

before(async () => {
  s = await startTestServer({ GATEHOUSE_RATE_LIMIT_ADMIN: '100000', GATEHOUSE_DATA_DIR: dataDir });
  auth = bearer(await apiToken(s));
});
async function restart() {
  await s.close();
  s = await startTestServer({ GATEHOUSE_RATE_LIMIT_ADMIN: '100000', GATEHOUSE_DATA_DIR: dataDir, ...(s.databaseUrl ? { DATABASE_URL: s.databaseUrl } : {}) });
  auth = bearer(await apiToken(s));
}
after(async () => {
  await s.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

test('no RDP key yet: a rotation makes none', async () => {
  const r = await s.deps.masterKeyRotation.rotate({ source: 'cli' });
  assert.ok(r.hooks.includes('rdp'));
  assert.equal(await s.deps.db.models.RdpServerKey.count(), 0);
  // the rotating process is meant to exit (the CLI): start again on the rotated key file
  await restart();
});

test('rotation: new key pair sealed with the new master key, old retired, routes with credentials pending; after a restart re-entry + ack', async () => {
  const withCreds = (await call('/rdp', 'POST', { name: 'Rot A', access_mode: 'external', target_host: 'a.example.com' })).data.route.id;
  const without = (await call('/rdp', 'POST', { name: 'Rot B', access_mode: 'external', target_host: 'b.example.com' })).data.route.id;
  const old = (await call('/rdp/pubkey')).data;
  assert.equal((await call(`/rdp/${withCreds}/credentials`, 'PUT', { credentials: await encryptCredentials(old.public_key, creds) })).status, 200);

  const r = await s.deps.masterKeyRotation.rotate({ source: 'cli' });
  assert.deepEqual(r.hooks, ['rdp']);
  const newMaster = MasterKey.load(path.join(dataDir, 'master.key'));
  const rows = asRows<'RdpServerKey'>(await s.deps.db.models.RdpServerKey.findAll({ raw: true, order: [['created_at', 'ASC']] }));
  assert.equal(rows.length, 2);
  assert.equal(rows[0].kid, old.kid);
  assert.ok(rows[0].retired_at !== null, 'the old pair is retired');
  assert.equal(rows[1].retired_at, null, 'exactly one current pair');
  for (const row of rows) assert.doesNotThrow(() => newMaster.open(row.private_key_sealed), `${row.kid} opens with the new master key`);
  const pending = (await call('/rdp/rotation/pending')).data;
  assert.equal(pending.current_kid, rows[1].kid);
  assert.deepEqual(
    pending.routes.map((x) => x.id),
    [withCreds],
  );
  assert.equal((await call(`/rdp/${without}`)).data.route.rotation_state, 'none');
  // in this process too, the new pair opens (RdpKeys took the new master key at the commit)
  const fresh = (await call('/rdp/pubkey')).data;
  assert.equal(fresh.kid, rows[1].kid);
  await s.deps.rdp.keys.privateKeyFor(fresh.kid);
  await assert.rejects(s.deps.rdp.keys.privateKeyFor(old.kid), /retired/);

  await restart();
  assert.equal((await call('/rdp/pubkey')).data.kid, fresh.kid);
  assert.equal((await call(`/rdp/${withCreds}/rotation/ack`, 'POST')).status, 409, 'still for the retired key');
  const env = await encryptCredentials(fresh.public_key, { ...creds, password: 'rotated-2' });
  assert.equal((await call(`/rdp/${withCreds}/credentials`, 'PUT', { credentials: env })).status, 200);
  assert.equal((await call(`/rdp/${withCreds}/rotation/ack`, 'POST')).status, 200);
  assert.deepEqual((await call('/rdp/rotation/pending')).data.routes, []);
  const priv = await s.deps.rdp.keys.privateKeyFor(fresh.kid);
  assert.equal((await decryptCredentials(priv, fresh.kid, (await call(`/rdp/${withCreds}/credentials`)).data.credentials)).password, 'rotated-2');
});
