// RDP tables in the backup: a gateway-mode RDP route with its linked L4 route, stored credentials,
// the server key pair and a session row are downloaded and restored (replace) into a fresh install
// with another master key: the key pair is the same (its private half re-sealed under the new master
// key, so the restored envelope still opens), the linked route is still linked (409 on the routes
// API, rendered into the proxy configuration), the session history is back.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decryptCredentials, encryptCredentials } from '@gatehouse/common/rdp-credentials.js';
import { startTestServer, apiToken, bearer, login, apiCall } from './lib/server.js';
import { objAt } from '../../test/lib/json.js';
import type { Row } from './lib/rows.js';

const PASS = 'correct horse battery staple';
const ENV = { GATEHOUSE_RATE_LIMIT_ADMIN: '100000', GATEHOUSE_RATE_LIMIT_LOGIN: '100000' };

test('backup and replace restore of RDP routes, keys and sessions into a fresh install', async () => {
  const src = await startTestServer(ENV);
  const dst = await startTestServer(ENV);
  try {
    const h = bearer(await apiToken(src));
    const call = apiCall(
      () => src,
      () => h,
    );
    const gw = (await call('/peers', 'POST', { name: 'gw', is_gateway: true, api_port: 9876 })).data.peer.id;
    const r = await call('/rdp', 'POST', {
      name: 'Backed up',
      access_mode: 'gateway',
      gateway_peer_id: gw,
      target_host: '192.168.2.10',
      listen_port: 33896,
      maintenance_windows: [{ from: '2099-01-01T00:00:00Z', to: '2099-01-02T00:00:00Z', note: 'n' }],
    });
    assert.equal(r.status, 201, JSON.stringify(r.data));
    const route = r.data.route;
    const pub = (await call('/rdp/pubkey')).data;
    const env = await encryptCredentials(pub.public_key, { username: 'bob', password: 'pw-backup-1', domain: '' });
    assert.equal((await call(`/rdp/${route.id}/credentials`, 'PUT', { credentials: env })).status, 200);
    const now = Date.now();
    await src.deps.db.models.RdpSession.create({
      rdp_route_id: route.id,
      token_id: null,
      machine_id: null,
      peer_id: null,
      user_id: 1,
      client_name: 'laptop',
      status: 'ended',
      started_at: now - 60_000,
      last_heartbeat_at: now - 1000,
      ended_at: now,
      end_reason: 'client',
      disconnect_requested_at: null,
    });

    const res = await src.req('/api/v1/settings/backup', { headers: { ...h, 'x-backup-passphrase': PASS } });
    assert.equal(res.status, 200);
    const text = typeof res.data === 'string' ? res.data : JSON.stringify(res.data);
    assert.equal(text.includes('pw-backup-1'), false);
    const keyRow = ((await src.deps.db.models.RdpServerKey.findByPk(pub.kid, { raw: true })) as Row<'RdpServerKey'> | null)!;
    assert.equal(text.includes(keyRow.private_key_sealed), false, 'the private half travels sealed under the passphrase, not under the old master key');

    const { cookie, csrf } = await login(dst);
    const form = new FormData();
    form.set('passphrase', PASS);
    form.set('file', new Blob([text], { type: 'application/json' }), 'backup.json');
    const rr = await dst.req('/api/v1/settings/backup/restore?mode=replace', { method: 'POST', headers: { cookie, 'x-csrf-token': csrf }, body: form });
    assert.equal(rr.status, 200, JSON.stringify(rr.data));

    // replace ended every sign-in; the restored admin (same password on both servers here) signs in again
    const h2 = bearer(await apiToken(dst));
    const call2 = apiCall(
      () => dst,
      () => h2,
    );
    assert.deepEqual((await call2('/rdp/pubkey')).data, (await call('/rdp/pubkey')).data, 'the same key pair');
    const got = await call2(`/rdp/${route.id}`);
    assert.deepEqual(got.data.route, (await call(`/rdp/${route.id}`)).data.route);
    const stored = (await call2(`/rdp/${route.id}/credentials`)).data.credentials;
    assert.deepEqual(stored, env);
    const priv = await dst.deps.rdp.keys.privateKeyFor(pub.kid);
    assert.equal((await decryptCredentials(priv, pub.kid, stored)).password, 'pw-backup-1', 'the re-sealed private key opens the restored envelope');
    assert.equal((await call2(`/routes/${route.gateway_l4_route_id}`, 'DELETE')).status, 409, 'still linked');
    assert.deepEqual(objAt(await dst.deps.proxy.render(), 'apps', 'layer4', 'servers', `route_${route.gateway_l4_route_id}`).listen, [':33896']);
    assert.equal(await dst.deps.db.models.RdpSession.count({ where: { rdp_route_id: route.id } }), 1);
  } finally {
    await src.close();
    await dst.close();
  }
});
