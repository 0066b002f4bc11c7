// Desktop client API, the tunnel part: register, config, config/check, heartbeat, split tunnel, the
// admin's machines of a token; fingerprint binding and scopes.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { startTestServer, login, bearer, type TestServer } from './lib/server.js';
import type { ActivityEntry } from './lib/protocol.js';
import type { Row } from './lib/rows.js';

let s: TestServer;
let admin: Record<string, string>;
before(async () => {
  s = await startTestServer({ GATEHOUSE_RATE_LIMIT_CLIENT: '100000', GATEHOUSE_RATE_LIMIT_ADMIN: '100000' });
  const { cookie, csrf } = await login(s);
  admin = { cookie, 'x-csrf-token': csrf };
});
after(async () => s.close());

async function clientToken(scopes = ['client'], extra: Record<string, unknown> = {}): Promise<{ token: string; id: number }> {
  const r = await s.req('/api/v1/tokens', { method: 'POST', json: { name: `c-${Math.random()}`, scopes, ...extra }, headers: admin });
  assert.equal(r.status, 201, JSON.stringify(r.data));
  return { token: r.data.token, id: r.data.record.id };
}

const as = (token: string, fp: string | null) => ({ ...bearer(token), ...(fp === null ? {} : { 'x-machine-fingerprint': fp }) });
const register = (token: string, fp: string | null, json: unknown = { hostname: 'laptop-1', platform: 'linux-x64', client_version: '0.1.0' }) =>
  s.req('/api/v1/client/register', { method: 'POST', json, headers: as(token, fp) });
const count = async (model: 'ClientMachine' | 'Peer') => (model === 'Peer' ? s.deps.db.models.Peer.count() : s.deps.db.models.ClientMachine.count());

test('register: 201 creates a peer named after the hostname; the same machine again is 200 with the same peer; another machine of a reset token gets its own peer', async () => {
  const { token, id } = await clientToken();
  const peersBefore = await count('Peer');
  const r = await register(token, 'machine-A');
  assert.equal(r.status, 201, JSON.stringify(r.data));
  assert.equal(r.data.created, true);
  assert.equal(r.data.peer.name, 'laptop-1');
  assert.match(r.data.config_hash, /^sha256:[0-9a-f]{64}$/);
  assert.equal(r.data.machine.hostname, 'laptop-1');
  assert.equal(r.data.machine.platform, 'linux-x64');
  assert.equal(r.data.machine.token_id, id);
  assert.equal(await count('Peer'), peersBefore + 1);
  const row = ((await s.deps.db.models.ClientMachine.findByPk(r.data.machine.id, { raw: true })) as Row<'ClientMachine'> | null)!;
  assert.equal(row.fingerprint, crypto.createHash('sha256').update('machine-A').digest('hex'), 'only the fingerprint hash is stored');

  const again = await register(token, 'machine-A', { hostname: 'laptop-1', platform: 'linux-x64', client_version: '0.2.0' });
  assert.equal(again.status, 200);
  assert.equal(again.data.created, false);
  assert.equal(again.data.peer.id, r.data.peer.id);
  assert.equal(again.data.machine.id, r.data.machine.id);
  assert.equal(again.data.machine.client_version, '0.2.0');
  assert.equal(again.data.config_hash, r.data.config_hash);
  assert.equal(await count('Peer'), peersBefore + 1, 'no second peer');

  // another token registering a machine with the same hostname: a unique peer name
  const other = await clientToken();
  const r2 = await register(other.token, 'machine-B');
  assert.equal(r2.status, 201);
  assert.equal(r2.data.peer.name, 'laptop-1-2');
  assert.notEqual(r2.data.peer.id, r.data.peer.id);

  const activity = await s.req('/api/v1/logs/activity?event_type=client_registered', { headers: admin });
  assert.ok(activity.data.entries.some((e: ActivityEntry) => e.details!.machine_id === r.data.machine.id && e.details!.peer_id === r.data.peer.id));
});

test('register: bad input is 400 with fields and writes nothing; no fingerprint header is 400', async () => {
  const { token } = await clientToken();
  const machines = await count('ClientMachine');
  const peers = await count('Peer');
  const bad = await register(token, 'machine-bad', { hostname: '', platform: 'x'.repeat(65), client_version: 7 });
  assert.equal(bad.status, 400);
  assert.equal(bad.data.ok, false);
  assert.ok(bad.data.fields!.hostname && bad.data.fields!.platform && bad.data.fields!.client_version, JSON.stringify(bad.data.fields));
  const ctl = await register(token, 'machine-bad', { hostname: 'a\nb', platform: 'linux', client_version: '1' });
  assert.equal(ctl.status, 400);
  assert.ok(ctl.data.fields!.hostname);
  // (the calls above bound the token to machine-bad on first use, as every authenticated call does)
  const fresh = await clientToken();
  const nofp = await register(fresh.token, null);
  assert.equal(nofp.status, 400);
  assert.ok(nofp.data.fields!['X-Machine-Fingerprint'], JSON.stringify(nofp.data));
  assert.equal(await count('ClientMachine'), machines);
  assert.equal(await count('Peer'), peers);
});

test('fingerprint binding: another machine with the same token is 401; a token of another scope is 403; no token 401', async () => {
  const { token, id } = await clientToken();
  assert.equal((await register(token, 'machine-C')).status, 201);
  const other = await register(token, 'machine-D');
  assert.equal(other.status, 401);
  assert.match(other.data.error!, /another machine/);
  assert.equal((await s.req('/api/v1/client/config', { headers: as(token, 'machine-D') })).status, 401);
  assert.equal((await s.req('/api/v1/client/config', { headers: as(token, null) })).status, 401, 'a bound token without the fingerprint');
  assert.equal((await s.req(`/api/v1/tokens/${id}/machines`, { headers: admin })).data.machines.length, 1, 'machine-D registered nothing');
  const logs = await clientToken(['logs']);
  const r = await register(logs.token, 'machine-E');
  assert.equal(r.status, 403);
  assert.match(r.data.error!, /scope/);
  assert.equal((await s.req('/api/v1/client/config', { headers: { 'x-machine-fingerprint': 'machine-C' } })).status, 401);
  // full-access works as a client token too
  const full = await clientToken(['full-access']);
  assert.equal((await register(full.token, 'machine-F', { hostname: 'full-box', platform: 'linux-x64', client_version: '0.1.0' })).status, 201);
});

test('config: wg-quick text of its peer, hash = sha256 of the text; unregistered machine 404', async () => {
  const { token } = await clientToken();
  const unreg = await s.req('/api/v1/client/config', { headers: as(token, 'machine-G') });
  assert.equal(unreg.status, 404);
  assert.match(unreg.data.error!, /register/);
  const reg = await register(token, 'machine-G', { hostname: 'cfg-box', platform: 'linux-x64', client_version: '0.1.0' });
  const c = await s.req('/api/v1/client/config', { headers: as(token, 'machine-G') });
  assert.equal(c.status, 200);
  assert.match(c.data.config, /^(?:# .*\n)*\[Interface\]\nPrivateKey = /);
  assert.match(c.data.config, /AllowedIPs = 10\.8\.0\.0\/24\n/);
  assert.equal(c.data.config_hash, `sha256:${crypto.createHash('sha256').update(c.data.config).digest('hex')}`);
  assert.equal(c.data.config_hash, reg.data.config_hash);
  assert.equal(c.data.peer_id, reg.data.peer.id);
  // the same text as the admin's download of that peer's config
  const adminConf = await s.req(`/api/v1/peers/${reg.data.peer.id}/config`, { headers: admin });
  assert.equal(adminConf.data, c.data.config);
});

test('config/check: 304 while unchanged, 200 with the new hash after a peer change, then 304 again; bad hash 400', async () => {
  const { token } = await clientToken();
  const reg = await register(token, 'machine-H', { hostname: 'poll-box', platform: 'linux-x64', client_version: '0.1.0' });
  const h = as(token, 'machine-H');
  const hash = reg.data.config_hash;
  const same = await s.req(`/api/v1/client/config/check?hash=${hash}`, { headers: h });
  assert.equal(same.status, 304);
  assert.equal(same.data, '');
  const none = await s.req('/api/v1/client/config/check', { headers: h });
  assert.equal(none.status, 200);
  assert.deepEqual(none.data, { ok: true, changed: true, config_hash: hash });
  const bad = await s.req('/api/v1/client/config/check?hash=md5:abc', { headers: h });
  assert.equal(bad.status, 400);
  assert.ok(bad.data.fields!.hash);
  // the admin changes the peer's DNS: the rendered config changes
  const upd = await s.req(`/api/v1/peers/${reg.data.peer.id}`, { method: 'PUT', json: { dns: '10.8.0.1' }, headers: admin });
  assert.equal(upd.status, 200);
  const flip = await s.req(`/api/v1/client/config/check?hash=${hash}`, { headers: h });
  assert.equal(flip.status, 200);
  assert.equal(flip.data.changed, true);
  assert.notEqual(flip.data.config_hash, hash);
  const cfg = await s.req('/api/v1/client/config', { headers: h });
  assert.match(cfg.data.config, /DNS = 10\.8\.0\.1/);
  assert.equal(cfg.data.config_hash, flip.data.config_hash);
  assert.equal((await s.req(`/api/v1/client/config/check?hash=${flip.data.config_hash}`, { headers: h })).status, 304);
  // new keys: changes again
  await s.req(`/api/v1/peers/${reg.data.peer.id}`, { method: 'PUT', json: { regenerate_keys: true }, headers: admin });
  assert.equal((await s.req(`/api/v1/client/config/check?hash=${flip.data.config_hash}`, { headers: h })).status, 200);
});

test('config/check marks the machine seen: last_seen_at written in batches (flushSeen)', async () => {
  const { token, id } = await clientToken();
  const reg = await register(token, 'machine-S', { hostname: 'seen-box', platform: 'linux-x64', client_version: '0.1.0' });
  await s.deps.db.models.ClientMachine.update({ last_seen_at: null }, { where: { id: reg.data.machine.id } });
  s.deps.clientMachines.invalidate();
  assert.equal((await s.req(`/api/v1/tokens/${id}/machines`, { headers: admin })).data.machines[0].last_seen_at, null);
  const t0 = Date.now();
  assert.equal((await s.req(`/api/v1/client/config/check?hash=${reg.data.config_hash}`, { headers: as(token, 'machine-S') })).status, 304);
  await s.deps.clientMachines.flushSeen();
  const seen = (await s.req(`/api/v1/tokens/${id}/machines`, { headers: admin })).data.machines[0].last_seen_at;
  assert.ok(seen && Date.parse(seen) >= Math.floor(t0 / 1000) * 1000, String(seen));
});

test('split tunnel: server default, token override via PATCH /tokens/:id, applied to AllowedIPs and the hash', async () => {
  const { token, id } = await clientToken();
  const reg = await register(token, 'machine-I', { hostname: 'split-box', platform: 'linux-x64', client_version: '0.1.0' });
  const h = as(token, 'machine-I');
  let st = await s.req('/api/v1/client/split-tunnel', { headers: h });
  assert.deepEqual({ ...st.data }, { ok: true, allowed_ips: ['10.8.0.0/24'], ranges: [], source: 'default', full_tunnel: false, vpn_subnet: '10.8.0.0/24' });

  const badSet = await s.req('/api/v1/settings/client', { method: 'PUT', json: { split_tunnel: ['10.0.0.0/33'] }, headers: admin });
  assert.equal(badSet.status, 400);
  assert.ok(badSet.data.fields!['split_tunnel.0'], JSON.stringify(badSet.data));
  const set = await s.req('/api/v1/settings/client', { method: 'PUT', json: { split_tunnel: ['192.168.10.7/24'] }, headers: admin });
  assert.equal(set.status, 200, JSON.stringify(set.data));
  assert.deepEqual(set.data.client.split_tunnel, ['192.168.10.0/24']);
  st = await s.req('/api/v1/client/split-tunnel', { headers: h });
  assert.equal(st.data.source, 'server');
  assert.deepEqual(st.data.allowed_ips, ['10.8.0.0/24', '192.168.10.0/24']);
  const check = await s.req(`/api/v1/client/config/check?hash=${reg.data.config_hash}`, { headers: h });
  assert.equal(check.status, 200, 'the default changed the config');
  let cfg = await s.req('/api/v1/client/config', { headers: h });
  assert.match(cfg.data.config, /AllowedIPs = 10\.8\.0\.0\/24, 192\.168\.10\.0\/24\n/);

  const badPatch = await s.req(`/api/v1/tokens/${id}`, { method: 'PATCH', json: { split_tunnel: ['nonsense'] }, headers: admin });
  assert.equal(badPatch.status, 400);
  assert.ok(badPatch.data.fields!['split_tunnel.0']);
  const patch = await s.req(`/api/v1/tokens/${id}`, { method: 'PATCH', json: { split_tunnel: ['0.0.0.0/0'] }, headers: admin });
  assert.equal(patch.status, 200, JSON.stringify(patch.data));
  assert.deepEqual(patch.data.record.split_tunnel, ['0.0.0.0/0']);
  st = await s.req('/api/v1/client/split-tunnel', { headers: h });
  assert.equal(st.data.source, 'token');
  assert.equal(st.data.full_tunnel, true);
  assert.deepEqual(st.data.allowed_ips, ['0.0.0.0/0']);
  const before = cfg.data.config_hash;
  assert.equal((await s.req(`/api/v1/client/config/check?hash=${before}`, { headers: h })).status, 200, 'the token override changed the config');
  cfg = await s.req('/api/v1/client/config', { headers: h });
  assert.match(cfg.data.config, /AllowedIPs = 0\.0\.0\.0\/0\n/);
  assert.equal((await s.req(`/api/v1/tokens/${id}`, { method: 'PATCH', json: { split_tunnel: null }, headers: admin })).data.record.split_tunnel, null);
  assert.equal((await s.req('/api/v1/client/split-tunnel', { headers: h })).data.source, 'server');
  assert.equal((await s.req('/api/v1/settings/client', { method: 'PUT', json: { split_tunnel: null }, headers: admin })).status, 200);
  assert.equal((await s.req('/api/v1/client/split-tunnel', { headers: h })).data.source, 'default');
});

test('heartbeat: stored on the machine, answers the config hash; bad input 400 with fields and nothing written', async () => {
  const { token, id } = await clientToken();
  const reg = await register(token, 'machine-J', { hostname: 'hb-box', platform: 'linux-x64', client_version: '0.1.0' });
  const h = as(token, 'machine-J');
  const bad = await s.req('/api/v1/client/heartbeat', { method: 'POST', json: { handshake_age_s: -1, rx_bytes: 'x' }, headers: h });
  assert.equal(bad.status, 400);
  assert.ok(bad.data.fields!.handshake_age_s && bad.data.fields!.rx_bytes && bad.data.fields!.tx_bytes, JSON.stringify(bad.data.fields));
  let row = ((await s.deps.db.models.ClientMachine.findByPk(reg.data.machine.id, { raw: true })) as Row<'ClientMachine'> | null)!;
  assert.equal(row.rx_bytes, null);
  const ok = await s.req('/api/v1/client/heartbeat', {
    method: 'POST',
    json: { handshake_age_s: 12, rx_bytes: 1000, tx_bytes: 2000, hostname: 'hb-box-renamed' },
    headers: h,
  });
  assert.equal(ok.status, 200, JSON.stringify(ok.data));
  assert.equal(ok.data.config_hash, reg.data.config_hash);
  row = ((await s.deps.db.models.ClientMachine.findByPk(reg.data.machine.id, { raw: true })) as Row<'ClientMachine'> | null)!;
  assert.equal(Number(row.handshake_age_s), 12);
  assert.equal(Number(row.rx_bytes), 1000);
  assert.equal(Number(row.tx_bytes), 2000);
  assert.equal(row.hostname, 'hb-box-renamed');
  const list = await s.req(`/api/v1/tokens/${id}/machines`, { headers: admin });
  assert.equal(list.status, 200);
  assert.equal(list.data.machines.length, 1);
  const m = list.data.machines[0];
  assert.equal(m.hostname, 'hb-box-renamed');
  assert.equal(m.handshake_age_s, 12);
  assert.equal(m.rx_bytes, 1000);
  assert.equal(m.peer_id, reg.data.peer.id);
  assert.equal(m.peer_name, 'hb-box');
  assert.ok(m.last_seen_at);
});

test('admin: machines of a token; forget keeps the peer by default, delete_peer=true removes it; the machine must register again', async () => {
  const { token, id } = await clientToken();
  const reg = await register(token, 'machine-K', { hostname: 'forget-box', platform: 'windows-x64', client_version: '0.1.0' });
  assert.equal((await s.req('/api/v1/tokens/987654/machines', { headers: admin })).status, 404);
  const keep = await s.req(`/api/v1/tokens/${id}/machines/${reg.data.machine.id}`, { method: 'DELETE', headers: admin });
  assert.equal(keep.status, 200, JSON.stringify(keep.data));
  assert.deepEqual(keep.data.deleted, { id: reg.data.machine.id, peer_deleted: false, peer_id: reg.data.peer.id });
  assert.equal((await s.req(`/api/v1/peers/${reg.data.peer.id}`, { headers: admin })).status, 200, 'peer kept');
  assert.equal((await s.req('/api/v1/client/config', { headers: as(token, 'machine-K') })).status, 404, 'forgotten: must register again');
  const again = await register(token, 'machine-K', { hostname: 'forget-box', platform: 'windows-x64', client_version: '0.1.0' });
  assert.equal(again.status, 201);
  assert.notEqual(again.data.peer.id, reg.data.peer.id);
  const del = await s.req(`/api/v1/tokens/${id}/machines/${again.data.machine.id}?delete_peer=true`, { method: 'DELETE', headers: admin });
  assert.equal(del.status, 200);
  assert.equal(del.data.deleted.peer_deleted, true);
  assert.equal((await s.req(`/api/v1/peers/${again.data.peer.id}`, { headers: admin })).status, 404);
  assert.equal((await s.req(`/api/v1/tokens/${id}/machines/${again.data.machine.id}`, { method: 'DELETE', headers: admin })).status, 404);
});

test('a deleted peer: config is 409, register gives the machine a new peer', async () => {
  const { token } = await clientToken();
  const reg = await register(token, 'machine-L', { hostname: 'gone-box', platform: 'linux-x64', client_version: '0.1.0' });
  assert.equal((await s.req(`/api/v1/peers/${reg.data.peer.id}`, { method: 'DELETE', headers: admin })).status, 200);
  const c = await s.req('/api/v1/client/config', { headers: as(token, 'machine-L') });
  assert.equal(c.status, 409);
  assert.match(c.data.error!, /deleted.*register/);
  const again = await register(token, 'machine-L', { hostname: 'gone-box', platform: 'linux-x64', client_version: '0.1.0' });
  assert.equal(again.status, 201);
  assert.equal(again.data.machine.id, reg.data.machine.id);
  assert.notEqual(again.data.peer.id, reg.data.peer.id);
  assert.equal((await s.req('/api/v1/client/config', { headers: as(token, 'machine-L') })).status, 200);
});

test('a token bound to a peer: register uses that peer', async () => {
  const peer = await s.req('/api/v1/peers', { method: 'POST', json: { name: 'provisioned-laptop' }, headers: admin });
  const { token } = await clientToken(['client'], { peer_id: peer.data.peer.id });
  const peersBefore = await count('Peer');
  const r = await register(token, 'machine-M', { hostname: 'whatever', platform: 'linux-x64', client_version: '0.1.0' });
  assert.equal(r.status, 201);
  assert.equal(r.data.peer.id, peer.data.peer.id);
  assert.equal(await count('Peer'), peersBefore);
  // its config renders although the shared render inputs were read before it registered
  const c = await s.req('/api/v1/client/config', { headers: as(token, 'machine-M') });
  assert.equal(c.status, 200);
  assert.equal(c.data.peer_id, peer.data.peer.id);
  assert.equal(c.data.config_hash, r.data.config_hash);
});

test('a peer update re-renders the configs without re-reading the machines; a deleted peer drops the machine cache', async () => {
  const { token } = await clientToken();
  const reg = await register(token, 'machine-N', { hostname: 'inval-box', platform: 'linux-x64', client_version: '0.1.0' });
  const h = as(token, 'machine-N');
  assert.equal((await s.req(`/api/v1/client/config/check?hash=${reg.data.config_hash}`, { headers: h })).status, 304);
  const other = await s.req('/api/v1/peers', { method: 'POST', json: { name: 'unrelated-peer' }, headers: admin });
  assert.equal((await s.req(`/api/v1/peers/${other.data.peer.id}`, { method: 'PUT', json: { description: 'x' }, headers: admin })).status, 200);
  assert.equal((await s.req(`/api/v1/client/config/check?hash=${reg.data.config_hash}`, { headers: h })).status, 304, 'an unrelated peer write: same config');
  assert.equal((await s.req(`/api/v1/peers/${reg.data.peer.id}`, { method: 'DELETE', headers: admin })).status, 200);
  assert.equal((await s.req(`/api/v1/client/config/check?hash=${reg.data.config_hash}`, { headers: h })).status, 409, 'its peer is gone');
});
