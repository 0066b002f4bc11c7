// RDP credentials end to end at the API: GET /rdp/pubkey (the server key pair, made on first need,
// private half sealed under the master key, the same after a restart), credentials PUT/GET/DELETE
// with a real envelope made by @gatehouse/common encryptCredentials (stored only as that envelope,
// openable with RdpKeys.privateKeyFor - the sealed key works), refusals (another key id, malformed),
// maintenance windows, and the rotation after a master-key rotation (pending, ack refused while the
// credentials are still for the retired key, re-entry, ack).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  decryptCredentials,
  encryptCredentials,
  exportPublicKey,
  generateEnvelopeKeyPair,
  keyId,
  RDP_ENVELOPE_ALG,
} from '@gatehouse/common/rdp-credentials.js';
import { startTestServer, apiToken, bearer, type TestServer, apiCall } from './lib/server.js';
import type { MaintenanceWindow } from './lib/protocol.js';
import type { Row } from './lib/rows.js';

const creds = { username: 'alice', password: 'S3cret-pässwort!', domain: 'CORP' };
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gh-rdp-creds-'));
let s: TestServer;
let auth: Record<string, string>;
let routeId: number;
const call = apiCall(
  () => s,
  () => auth,
);

before(async () => {
  s = await startTestServer({ GATEHOUSE_RATE_LIMIT_ADMIN: '100000', GATEHOUSE_DATA_DIR: dataDir });
  auth = bearer(await apiToken(s));
  const r = await call('/rdp', 'POST', { name: 'Creds', access_mode: 'external', target_host: 'rdp.example.com' });
  assert.equal(r.status, 201, JSON.stringify(r.data));
  routeId = r.data.route.id;
});
after(async () => {
  await s.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

let pub: { kid: string; public_key: string; alg: string };

test('GET /rdp/pubkey: made on first need, stable, kid derived from the key; the private half is stored only sealed', async () => {
  assert.equal(await s.deps.db.models.RdpServerKey.count(), 0, 'no key before the first need');
  const [a, b] = await Promise.all([call('/rdp/pubkey'), call('/rdp/pubkey')]);
  assert.equal(a.status, 200, JSON.stringify(a.data));
  assert.deepEqual(b.data, a.data, 'concurrent first calls get the same key');
  pub = a.data;
  assert.equal(pub.alg, RDP_ENVELOPE_ALG);
  assert.match(pub.kid, /^[0-9a-f]{16}$/);
  assert.equal(pub.kid, await keyId(pub.public_key));
  assert.equal(await s.deps.db.models.RdpServerKey.count(), 1);
  const row = ((await s.deps.db.models.RdpServerKey.findByPk(pub.kid, { raw: true })) as Row<'RdpServerKey'> | null)!;
  assert.match(row.private_key_sealed, /^v1:/, 'sealed with the master key (util/crypto.ts format)');
  assert.equal(row.retired_at, null);
  // not the plain key: the master key opens it to the PKCS#8 key in base64 (MII...), and no run of
  // that text stands in the sealed one (was: no "MII" anywhere, which random ciphertext holds by
  // chance about once in a hundred keys)
  const plain = s.deps.crypto.open(row.private_key_sealed);
  assert.match(plain, /^MII/);
  for (let i = 0; i + 24 <= plain.length; i += 24) assert.ok(!row.private_key_sealed.includes(plain.slice(i, i + 24)), `plain key text at ${i}`);
});

test('credentials: PUT a real envelope, GET returns exactly it, the sealed server key opens it; the database holds no plaintext', async () => {
  const env = await encryptCredentials(pub.public_key, creds);
  const put = await call(`/rdp/${routeId}/credentials`, 'PUT', { credentials: env });
  assert.equal(put.status, 200, JSON.stringify(put.data));
  assert.deepEqual(put.data.credentials, env);
  assert.equal(put.data.credentials_kid, pub.kid);
  const got = await call(`/rdp/${routeId}/credentials`);
  assert.deepEqual(got.data.credentials, env);
  const view = (await call(`/rdp/${routeId}`)).data.route;
  assert.equal(view.has_credentials, true);
  assert.equal(view.credentials_kid, pub.kid);
  assert.ok(view.credentials_updated_at);
  assert.equal(JSON.stringify(view).includes(env.data), false, 'the route view never carries the envelope');
  const priv = await s.deps.rdp.keys.privateKeyFor(pub.kid);
  assert.deepEqual(await decryptCredentials(priv, pub.kid, got.data.credentials), creds);
  const row = ((await s.deps.db.models.RdpRoute.findByPk(routeId, { raw: true })) as Row<'RdpRoute'> | null)!;
  assert.equal(JSON.stringify(row).includes(creds.password), false);
  assert.equal(JSON.stringify(row).includes('alice'), false);
  if (s.deps.db.dialect === 'sqlite') {
    const files = fs.readdirSync(dataDir).filter((f) => /\.(db|sqlite)(-wal)?$/.test(f));
    assert.ok(files.length > 0, 'found the SQLite file');
    for (const f of files)
      assert.equal(fs.readFileSync(path.join(dataDir, f)).includes(Buffer.from(creds.password)), false, `${f} holds no plaintext password`);
  }
});

test('credentials refused with 400 + fields, nothing written: another key id, malformed envelope, missing body', async () => {
  const before = await call(`/rdp/${routeId}/credentials`);
  const other = await generateEnvelopeKeyPair(2048);
  const foreign = await encryptCredentials(await exportPublicKey(other.publicKey), creds);
  const r1 = await call(`/rdp/${routeId}/credentials`, 'PUT', { credentials: foreign });
  assert.equal(r1.status, 422, JSON.stringify(r1.data));
  assert.ok(r1.data.fields!['credentials.kid'], JSON.stringify(r1.data.fields));
  const r2 = await call(`/rdp/${routeId}/credentials`, 'PUT', { credentials: { username: 'alice', password: 'plain' } });
  assert.equal(r2.status, 400);
  assert.ok(
    Object.keys(r2.data.fields!).some((k) => k.startsWith('credentials')),
    JSON.stringify(r2.data.fields),
  );
  const r3 = await call(`/rdp/${routeId}/credentials`, 'PUT', {});
  assert.equal(r3.status, 400);
  assert.ok(r3.data.fields!.credentials);
  // also refused in a PATCH of the route
  const r4 = await call(`/rdp/${routeId}`, 'PATCH', { credentials: foreign });
  assert.equal(r4.status, 422);
  assert.ok(r4.data.fields!['credentials.kid']);
  assert.deepEqual((await call(`/rdp/${routeId}/credentials`)).data, before.data, 'nothing written');
  assert.equal((await call('/rdp/99999/credentials')).status, 404);
});

test('a write that changes where the credentials go drops them (unless it carries new ones); other edits keep them', async () => {
  const env = await encryptCredentials(pub.public_key, creds);
  const make = await call('/rdp', 'POST', { name: 'Creds dest', access_mode: 'external', target_host: 'rdp2.example.com', credentials: env });
  assert.equal(make.status, 201, JSON.stringify(make.data));
  const id = make.data.route.id;
  const has = async () => (await call(`/rdp/${id}`)).data.route.has_credentials;
  assert.equal(await has(), true);
  // not a destination: kept (also when the admin app sends back unchanged destination fields)
  let r = await call(`/rdp/${id}`, 'PATCH', { name: 'Creds dest 2', target_host: 'rdp2.example.com', resolution: '1280x720' });
  assert.equal(r.status, 200, JSON.stringify(r.data));
  assert.equal(r.data.route.has_credentials, true, 'an edit that keeps the destination keeps the credentials');
  // each destination field drops them
  for (const patch of [{ target_host: 'attacker.example.net' }, { target_port: 3390 }, { gateway_host: 'rdgw.example.net', gateway_port: 443 }]) {
    await call(`/rdp/${id}/credentials`, 'PUT', { credentials: env });
    assert.equal(await has(), true);
    r = await call(`/rdp/${id}`, 'PATCH', patch);
    assert.equal(r.status, 200, JSON.stringify(r.data));
    assert.equal(r.data.route.has_credentials, false, `${JSON.stringify(patch)} drops the stored credentials`);
    assert.equal((await call(`/rdp/${id}/credentials`)).data.credentials, null);
  }
  // a destination change that brings new credentials keeps those
  const env2 = await encryptCredentials(pub.public_key, { ...creds, password: 'other' });
  r = await call(`/rdp/${id}`, 'PATCH', { target_host: 'new.example.com', credentials: env2 });
  assert.equal(r.status, 200, JSON.stringify(r.data));
  assert.deepEqual((await call(`/rdp/${id}/credentials`)).data.credentials, env2);
  const activity = await call(`/logs/activity?event_type=rdp_route_updated&limit=50`);
  assert.equal(activity.status, 200, JSON.stringify(activity.data));
  assert.ok(JSON.stringify(activity.data).includes('credentials'), 'the update that dropped them names the credentials among its fields');
  await call(`/rdp/${id}`, 'DELETE');
});

test('maintenance windows: PUT validates (ISO, from < to), stores sorted UTC, GET shows the active one', async () => {
  const now = Date.now();
  const bad = await call(`/rdp/${routeId}/maintenance`, 'PUT', { windows: [{ from: '2030-01-02T00:00:00Z', to: '2030-01-01T00:00:00Z', note: 'x' }] });
  assert.equal(bad.status, 422, 'from after to: two fields compared, which no schema states');
  assert.ok(bad.data.fields!['windows.0.to'], JSON.stringify(bad.data.fields));
  const bad2 = await call(`/rdp/${routeId}/maintenance`, 'PUT', { windows: [{ from: 'tomorrow', to: '2030-01-01T00:00:00Z' }] });
  assert.equal(bad2.status, 400);
  assert.ok(bad2.data.fields!['windows.0.from']);
  assert.deepEqual((await call(`/rdp/${routeId}/maintenance`)).data.windows, [], 'nothing written');
  const later = { from: '2099-01-01T00:00:00+02:00', to: '2099-01-01T06:00:00+02:00', note: 'later' };
  const current = { from: new Date(now - 60_000).toISOString(), to: new Date(now + 3_600_000).toISOString(), note: 'Patch day' };
  const put = await call(`/rdp/${routeId}/maintenance`, 'PUT', { windows: [later, current] });
  assert.equal(put.status, 200, JSON.stringify(put.data));
  assert.deepEqual(
    put.data.windows.map((w: MaintenanceWindow) => w.note),
    ['Patch day', 'later'],
  );
  assert.equal(put.data.windows[1].from, '2098-12-31T22:00:00.000Z');
  const got = await call(`/rdp/${routeId}/maintenance`);
  assert.equal(got.data.active!.note, 'Patch day');
  assert.deepEqual((await call(`/rdp/${routeId}`)).data.route.maintenance_windows, got.data.windows);
  const cleared = await call(`/rdp/${routeId}/maintenance`, 'PUT', { windows: [] });
  assert.equal(cleared.data.active, null);
});

test('master-key rotation: new key pair, routes with credentials pending; ack refused until re-entered with the new key', async () => {
  const res = await s.deps.rdp.onMasterKeyRotated();
  assert.notEqual(res.kid, pub.kid);
  assert.equal(res.pending, 1);
  const np = (await call('/rdp/pubkey')).data;
  assert.equal(np.kid, res.kid);
  await assert.rejects(s.deps.rdp.keys.privateKeyFor(pub.kid), /retired/);
  const pending = await call('/rdp/rotation/pending');
  assert.equal(pending.status, 200);
  assert.equal(pending.data.current_kid, np.kid);
  assert.deepEqual(
    pending.data.routes.map((r) => r.id),
    [routeId],
  );
  assert.equal(pending.data.routes[0].rotation_state, 'pending');
  assert.ok(pending.data.routes[0].rotation_pending_since);
  const early = await call(`/rdp/${routeId}/rotation/ack`, 'POST');
  assert.equal(early.status, 409, JSON.stringify(early.data));
  assert.match(early.data.error!, /enter them again/);
  // an envelope for the retired key is refused
  const stale = await encryptCredentials(pub.public_key, creds);
  assert.equal((await call(`/rdp/${routeId}/credentials`, 'PUT', { credentials: stale })).status, 422);
  const fresh = await encryptCredentials(np.public_key, { ...creds, password: 'new-pass' });
  assert.equal((await call(`/rdp/${routeId}/credentials`, 'PUT', { credentials: fresh })).status, 200);
  assert.equal((await call('/rdp/rotation/pending')).data.routes.length, 1, 'still pending until acknowledged');
  const ack = await call(`/rdp/${routeId}/rotation/ack`, 'POST');
  assert.equal(ack.status, 200, JSON.stringify(ack.data));
  assert.equal(ack.data.route.rotation_state, 'none');
  assert.equal(ack.data.route.rotation_pending_since, null);
  assert.equal((await call('/rdp/rotation/pending')).data.routes.length, 0);
  assert.equal((await call(`/rdp/${routeId}/rotation/ack`, 'POST')).status, 409, 'nothing pending');
  const priv = await s.deps.rdp.keys.privateKeyFor(np.kid);
  assert.equal((await decryptCredentials(priv, np.kid, (await call(`/rdp/${routeId}/credentials`)).data.credentials)).password, 'new-pass');
  pub = np;
});

test('DELETE credentials clears them; the public key and the stored envelope survive a restart and still open', async () => {
  const env = (await call(`/rdp/${routeId}/credentials`)).data.credentials;
  const other = (await call('/rdp', 'POST', { name: 'Second', access_mode: 'external', target_host: 'two.example.com' })).data.route.id;
  assert.equal((await call(`/rdp/${other}/credentials`, 'PUT', { credentials: env })).status, 200);
  const del = await call(`/rdp/${other}/credentials`, 'DELETE');
  assert.equal(del.status, 200);
  assert.equal(del.data.credentials, null);
  assert.equal((await call(`/rdp/${other}`)).data.route.has_credentials, false);

  await s.close();
  s = await startTestServer({ GATEHOUSE_RATE_LIMIT_ADMIN: '100000', GATEHOUSE_DATA_DIR: dataDir, ...(s.databaseUrl ? { DATABASE_URL: s.databaseUrl } : {}) });
  auth = bearer(await apiToken(s));
  const again = await call('/rdp/pubkey');
  assert.deepEqual(again.data, { ok: true, ...pub }, 'the same key after a restart');
  const stored = (await call(`/rdp/${routeId}/credentials`)).data.credentials;
  assert.deepEqual(stored, env);
  const priv = await s.deps.rdp.keys.privateKeyFor(pub.kid);
  assert.equal((await decryptCredentials(priv, pub.kid, stored)).username, 'alice');
});
