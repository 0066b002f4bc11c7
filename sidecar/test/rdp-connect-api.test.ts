// The desktop client's RDP endpoints (src/rdp/client-endpoints.ts) against a real sidecar: a client
// token bound to its machine fingerprint lists the routes it may use, gets a connect profile whose
// credentials it decrypts with its one-time private key to exactly what the admin's browser
// encrypted, sees the address for each access mode, runs a session through start, heartbeat,
// disconnect-all and end; refusals: wrong scope, other machine, bad one-time key, disabled route,
// maintenance window (with its note), credentials pending after a master-key rotation.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { decryptCredentials, encryptCredentials, exportPublicKey, generateEnvelopeKeyPair, keyId } from '@gatehouse/common/rdp-credentials.js';
import { startTestServer, apiToken, bearer, type TestServer, apiCall } from './lib/server.js';
import { connectAddresses, sessionHeartbeatInterval } from '../src/rdp/client-endpoints.js';
import { parseRdpFile } from '../src/rdp/rdp-file.js';

const PUBLIC_HOST = 'vpn.example.org';
const FP = 'machine-fingerprint-A';
const creds = { username: 'alice', password: 'Pa55 w0rd+/="\u00e9\u{1F511}', domain: 'CORP' };

let s: TestServer;
let admin: Record<string, string>;
let client: Record<string, string>;
let rdpListener: net.Server;
let rdpPort: number;
let bobClient: Record<string, string>;
const ids: Record<string, number> = {};

const adminCall = apiCall(
  () => s,
  () => admin,
);
const clientCall = <T = never, P extends string = string, M extends string = 'GET'>(
  p: P,
  method?: [T] extends [never] ? M : string,
  json?: unknown,
  headers = client,
) => s.req<T, `/api/v1/client${P}`, M>(`/api/v1/client${p}`, { method, headers, ...(json !== undefined ? { json } : {}) });

async function oneTimeKey(bits = 2048) {
  const pair = await generateEnvelopeKeyPair(bits);
  const spki = await exportPublicKey(pair.publicKey);
  return { ...pair, spki, kid: await keyId(spki) };
}

const connect = (id: number, spki: string, headers = client) => clientCall(`/rdp/${id}/connect?key=${encodeURIComponent(spki)}`, 'GET', undefined, headers);

async function createRoute(name: string, body: Record<string, unknown>): Promise<number> {
  const r = await adminCall('/rdp', 'POST', { name, ...body });
  assert.equal(r.status, 201, JSON.stringify(r.data));
  return r.data.route.id;
}

async function storeCredentials(id: number): Promise<void> {
  const pk = await adminCall('/rdp/pubkey');
  assert.equal(pk.status, 200, JSON.stringify(pk.data));
  const envelope = await encryptCredentials(pk.data.public_key, creds);
  const r = await adminCall(`/rdp/${id}/credentials`, 'PUT', { credentials: envelope });
  assert.equal(r.status, 200, JSON.stringify(r.data));
}

before(async () => {
  rdpListener = net.createServer((sock) => sock.end());
  await new Promise<void>((resolve) => rdpListener.listen(0, '127.0.0.1', resolve));
  rdpPort = (rdpListener.address() as net.AddressInfo).port;
  s = await startTestServer({ GATEHOUSE_PUBLIC_HOST: PUBLIC_HOST, GATEHOUSE_RATE_LIMIT_ADMIN: '100000', GATEHOUSE_RATE_LIMIT_CLIENT: '100000' });
  admin = bearer(await apiToken(s));
  client = { ...bearer(await apiToken(s, ['client'])), 'X-Machine-Fingerprint': FP };
  const bob = await adminCall('/users', 'POST', { username: 'bob', password: 'bob-password-1', role: 'user' });
  assert.equal(bob.status, 201, JSON.stringify(bob.data));
  const bobToken = await adminCall('/tokens', 'POST', { name: 'bob-desktop', scopes: ['client'], user_id: bob.data.user.id });
  assert.equal(bobToken.status, 201, JSON.stringify(bobToken.data));
  bobClient = { ...bearer(bobToken.data.token), 'X-Machine-Fingerprint': 'bob-machine' };
  const gw = await adminCall('/peers', 'POST', { name: 'home-gw', is_gateway: true, api_port: 9876 });
  assert.equal(gw.status, 201, JSON.stringify(gw.data));
  ids.internal = await createRoute('Desk', { access_mode: 'internal', target_host: '127.0.0.1', target_port: rdpPort });
  ids.external = await createRoute('Office', {
    access_mode: 'external',
    target_host: 'office.example.com',
    listen_port: 53389,
    resolution: '1920x1080',
    color_depth: 16,
    audio_mode: 'remote',
    clipboard_enabled: false,
    gateway_host: 'rdg.example.com',
    gateway_port: 8443,
  });
  ids.both = await createRoute('Laptop', { access_mode: 'both', target_host: '10.0.0.6', external_host: 'laptop.example.com', listen_port: 43389 });
  ids.gateway = await createRoute('Home', {
    access_mode: 'gateway',
    target_host: '192.168.1.20',
    gateway_peer_id: gw.data.peer.id,
    listen_port: 33890,
    network_level_auth: false,
  });
  ids.restricted = await createRoute('Boss', { access_mode: 'internal', target_host: '10.0.0.7', allowed_user_ids: [bob.data.user.id] });
  ids.disabled = await createRoute('Old', { access_mode: 'internal', target_host: '10.0.0.8', enabled: false });
  for (const k of ['internal', 'external', 'gateway', 'restricted', 'disabled']) await storeCredentials(ids[k]);
});
after(async () => {
  await s.close();
  rdpListener.close();
});

test("list: enabled routes the token's user may use, with flags; never an envelope", async () => {
  const r = await clientCall('/rdp');
  assert.equal(r.status, 200, JSON.stringify(r.data));
  const names = r.data.routes.map((x: { name: string }) => x.name).sort();
  assert.deepEqual(names, ['Desk', 'Home', 'Laptop', 'Office']);
  const desk = r.data.routes.find((x: { name: string }) => x.name === 'Desk');
  assert.equal(desk!.has_credentials, true);
  assert.equal(desk!.rotation_pending, false);
  assert.equal(desk!.maintenance, null);
  assert.equal(r.data.routes.find((x) => x.name === 'Laptop')!.has_credentials, false);
  assert.ok(!JSON.stringify(r.data).includes('"key"') && !JSON.stringify(r.data).includes('envelope'));
  // bob's token (bound to bob) also sees the route restricted to him
  const bobs = await clientCall('/rdp', 'GET', undefined, bobClient);
  assert.equal(bobs.status, 200, JSON.stringify(bobs.data));
  assert.deepEqual(bobs.data.routes.map((x: { name: string }) => x.name).sort(), ['Boss', 'Desk', 'Home', 'Laptop', 'Office']);
});

test('connect (internal): profile, address through the tunnel, credentials that open with the one-time key to the original', async () => {
  const k = await oneTimeKey();
  const r = await connect(ids.internal, k.spki);
  assert.equal(r.status, 200, JSON.stringify(r.data));
  assert.deepEqual(r.data.address, { host: '127.0.0.1', port: rdpPort, mode: 'internal' });
  assert.equal(r.data.candidates.length, 1);
  assert.equal(r.data.kid, k.kid);
  assert.equal(r.data.credentials!.kid, k.kid);
  assert.equal(r.headers.get('cache-control'), 'no-store');
  assert.equal(r.data.session.path, `/api/v1/client/rdp/${ids.internal}/session`);
  assert.equal(r.data.session.heartbeat_interval_s, sessionHeartbeatInterval(r.data.session.lost_after_s));
  assert.ok(r.data.session.heartbeat_interval_s > 0 && r.data.session.heartbeat_interval_s < r.data.session.lost_after_s);
  const text = JSON.stringify(r.data);
  for (const secret of [creds.password, creds.username]) assert.ok(!text.includes(secret), 'nothing in the clear');
  assert.deepEqual(await decryptCredentials(k.privateKey, k.kid, r.data.credentials), creds);
  const file = parseRdpFile(r.data.rdp_file);
  assert.equal(file.get('full address')?.value, `127.0.0.1:${rdpPort}`);
  assert.equal(file.get('enablecredsspsupport')?.value, '1');
  assert.ok(!/password/i.test(r.data.rdp_file));
  // a URL-safe key works too; each connect is a fresh envelope
  const again = await connect(ids.internal, k.spki.replace(/\+/g, '-').replace(/\//g, '_'));
  assert.equal(again.status, 200, JSON.stringify(again.data));
  assert.notEqual(again.data.credentials!.data, r.data.credentials!.data);
  assert.deepEqual(await decryptCredentials(k.privateKey, k.kid, again.data.credentials), creds);
  // each release is in the activity log (who got them), without the credentials themselves
  const log = (await adminCall('/logs/activity?source=rdp&limit=100')).data.entries;
  const released = log.filter((e) => e.event_type === 'rdp_credentials_released' && e.details?.rdp_route_id === ids.internal);
  assert.equal(released.length, 2, JSON.stringify(log.map((e) => e.event_type)));
  assert.equal(released[0].details?.key_id, k.kid);
  assert.ok(typeof released[0].details?.token_id === 'number');
  for (const e of released) for (const secret of [creds.password, creds.username]) assert.ok(!JSON.stringify(e).includes(secret), 'no credential in the log');
});

test('connect: the address per access mode and the route options in the profile', async () => {
  const k = await oneTimeKey();
  const ext = await connect(ids.external, k.spki);
  assert.equal(ext.status, 200, JSON.stringify(ext.data));
  assert.deepEqual(ext.data.address, { host: 'office.example.com', port: 53389, mode: 'external' });
  const f = parseRdpFile(ext.data.rdp_file);
  assert.equal(f.get('desktopwidth')?.value, '1920');
  assert.equal(f.get('session bpp')?.value, '16');
  assert.equal(f.get('audiomode')?.value, '1');
  assert.equal(f.get('redirectclipboard')?.value, '0');
  assert.equal(f.get('gatewayhostname')?.value, 'rdg.example.com:8443');
  assert.equal(f.get('gatewayusagemethod')?.value, '1');

  const gw = await connect(ids.gateway, k.spki);
  assert.equal(gw.status, 200, JSON.stringify(gw.data));
  assert.deepEqual(gw.data.address, { host: PUBLIC_HOST, port: 33890, mode: 'gateway' });
  assert.equal(parseRdpFile(gw.data.rdp_file).get('enablecredsspsupport')?.value, '0');

  // both: internal first, then external, each with its own profile; no credentials stored → null, still a profile
  const both = await connect(ids.both, k.spki);
  assert.equal(both.status, 200, JSON.stringify(both.data));
  assert.deepEqual(
    both.data.candidates.map((c: { host: string; port: number; mode: string }) => [c.mode, c.host, c.port]),
    [
      ['internal', '10.0.0.6', 3389],
      ['external', 'laptop.example.com', 43389],
    ],
  );
  assert.equal(parseRdpFile(both.data.candidates[1].rdp_file).get('full address')?.value, 'laptop.example.com:43389');
  assert.equal(both.data.rdp_file, both.data.candidates[0].rdp_file);
  assert.equal(both.data.credentials, null);
  assert.equal(both.data.kid, k.kid);
});

test('the session heartbeat interval: one late heartbeat tolerated, and a session fits the client rate limit with the default intervals', () => {
  assert.equal(sessionHeartbeatInterval(90), 45);
  assert.equal(sessionHeartbeatInterval(8), 5);
  for (const lost of [30, 90, 300, 86_400]) {
    const every = sessionHeartbeatInterval(lost);
    assert.ok(2 * every <= lost, `${lost}: two intervals fit before the session counts as lost`);
  }
  // 15 minutes of an RDP session next to the reference client's defaults (config check every 15 s,
  // heartbeat every 60 s), plus connect, session start and end: within 100 calls per 15 min
  const window = 900;
  assert.ok(window / 15 + window / 60 + Math.ceil(window / sessionHeartbeatInterval(90)) + 3 <= 100);
});

test('connectAddresses: each access mode, incomplete settings refused', () => {
  const base = { name: 'r', target_host: '10.0.0.2', target_port: 3389, external_host: null, listen_port: null, gateway_l4_route_id: null };
  assert.deepEqual(connectAddresses({ ...base, access_mode: 'internal' }, 'pub'), [{ host: '10.0.0.2', port: 3389, mode: 'internal' }]);
  assert.deepEqual(connectAddresses({ ...base, access_mode: 'external', target_host: 'x.example' }, 'pub'), [
    { host: 'x.example', port: 3389, mode: 'external' },
  ]);
  assert.deepEqual(connectAddresses({ ...base, access_mode: 'both', external_host: 'y.example', listen_port: 4000 }, 'pub'), [
    { host: '10.0.0.2', port: 3389, mode: 'internal' },
    { host: 'y.example', port: 4000, mode: 'external' },
  ]);
  assert.deepEqual(connectAddresses({ ...base, access_mode: 'gateway', listen_port: 33000, gateway_l4_route_id: 7 }, 'pub'), [
    { host: 'pub', port: 33000, mode: 'gateway' },
  ]);
  assert.throws(() => connectAddresses({ ...base, access_mode: 'gateway' }, 'pub'), /no address/);
});

test("refusals: unknown/other user's route 404, disabled 409, bad one-time key 400 with fields.key", async () => {
  const k = await oneTimeKey();
  assert.equal((await connect(987654, k.spki)).status, 404);
  const restricted = await connect(ids.restricted, k.spki);
  assert.equal(restricted.status, 404, JSON.stringify(restricted.data));
  const bobs = await connect(ids.restricted, k.spki, bobClient);
  assert.equal(bobs.status, 200, JSON.stringify(bobs.data));
  assert.deepEqual(await decryptCredentials(k.privateKey, k.kid, bobs.data.credentials), creds);
  const disabled = await connect(ids.disabled, k.spki);
  assert.equal(disabled.status, 409, JSON.stringify(disabled.data));
  assert.equal(disabled.data.reason, 'route_disabled');
  assert.match(disabled.data.error!, /disabled/);
  for (const key of ['', 'not base64!', Buffer.from('no key').toString('base64')]) {
    const r = await clientCall(`/rdp/${ids.internal}/connect?key=${encodeURIComponent(key)}`);
    assert.equal(r.status, key.includes(' ') || key === '' || key.includes('!') ? 400 : 422, `${key}: ${JSON.stringify(r.data)}`);
    assert.ok(r.data.fields?.key, JSON.stringify(r.data));
  }
  const missing = await clientCall(`/rdp/${ids.internal}/connect`);
  assert.equal(missing.status, 400);
  assert.ok(missing.data.fields?.key);
  const small = await oneTimeKey(1024);
  const r = await connect(ids.internal, small.spki);
  assert.equal(r.status, 422);
  assert.match(r.data.fields!.key, /1024 bits/);
});

test("authentication: wrong scope 403, other machine's fingerprint refused, no token 401", async () => {
  const k = await oneTimeKey();
  const routesToken = { ...bearer(await apiToken(s, ['routes'])), 'X-Machine-Fingerprint': 'm' };
  assert.equal((await connect(ids.internal, k.spki, routesToken)).status, 403);
  assert.equal((await clientCall('/rdp', 'GET', undefined, routesToken)).status, 403);
  const other = await connect(ids.internal, k.spki, { ...client, 'X-Machine-Fingerprint': 'machine-fingerprint-B' });
  // refused (401 since the client API reads a token bound elsewhere as no client of its own; 403 on the admin API)
  assert.ok([401, 403].includes(other.status), JSON.stringify(other.data));
  assert.match(other.data.error!, /another machine/);
  assert.equal(other.data.credentials, undefined);
  assert.equal((await connect(ids.internal, k.spki, {})).status, 401);
});

test("status: reachability of the target through the route's path", async () => {
  const r = await clientCall(`/rdp/${ids.internal}/status?refresh=1`);
  assert.equal(r.status, 200, JSON.stringify(r.data));
  assert.equal(r.data.status.rdp_route_id, ids.internal);
  assert.equal(r.data.status.reachable, true);
  assert.equal((await clientCall(`/rdp/${ids.restricted}/status`)).status, 404);
});

test('sessions: start, heartbeat, disconnect-all seen on the next heartbeat, end; another token cannot touch them', async () => {
  // a registered machine: the session carries it, its peer and its hostname
  const reg = await clientCall('/register', 'POST', { hostname: 'laptop-1', platform: 'linux', client_version: '0.1.0' });
  assert.ok([200, 201].includes(reg.status), JSON.stringify(reg.data));
  const start = await clientCall(`/rdp/${ids.internal}/session`, 'POST', {});
  assert.equal(start.status, 201, JSON.stringify(start.data));
  const sid = start.data.session.id;
  assert.equal(start.data.session.status, 'active');
  assert.equal(start.data.session.client_name, 'laptop-1');
  assert.equal(start.data.session.machine_id, reg.data.machine.id);
  assert.equal(start.data.session.peer_id, reg.data.peer.id);
  // the session belongs to its route: another route's path does not reach it
  assert.equal((await clientCall(`/rdp/${ids.both}/session`, 'PATCH', { session_id: sid })).status, 404);
  const hb = await clientCall(`/rdp/${ids.internal}/session`, 'PATCH', { session_id: sid });
  assert.equal(hb.status, 200, JSON.stringify(hb.data));
  assert.equal(hb.data.disconnect, false);
  const otherClient = { ...bearer(await apiToken(s, ['client'])), 'X-Machine-Fingerprint': 'machine-C' };
  assert.equal((await clientCall(`/rdp/${ids.internal}/session`, 'PATCH', { session_id: sid }, otherClient)).status, 404);
  assert.equal((await clientCall(`/rdp/${ids.internal}/session`, 'PATCH', {})).status, 400);
  const dc = await adminCall(`/rdp/${ids.internal}/sessions/disconnect-all`, 'POST');
  assert.equal(dc.status, 200, JSON.stringify(dc.data));
  const order = await clientCall(`/rdp/${ids.internal}/session`, 'PATCH', { session_id: sid });
  assert.equal(order.status, 200);
  assert.equal(order.data.disconnect, true);
  assert.equal(order.data.reason, 'disconnected');
  const s2 = (await clientCall(`/rdp/${ids.internal}/session`, 'POST', {})).data.session.id;
  const end = await clientCall(`/rdp/${ids.internal}/session`, 'DELETE', { session_id: s2 });
  assert.equal(end.status, 200, JSON.stringify(end.data));
  assert.equal(end.data.session.status, 'ended');
  assert.equal(end.data.session.end_reason, 'client');
  const refused = await clientCall(`/rdp/${ids.disabled}/session`, 'POST', {});
  assert.equal(refused.status, 409);
});

test('maintenance window: connect and session start refused with the note (423); listed as in maintenance', async () => {
  const now = Date.now();
  const w = { from: new Date(now - 3_600_000).toISOString(), to: new Date(now + 3_600_000).toISOString(), note: 'Patch Tuesday: back at noon' };
  const put = await adminCall(`/rdp/${ids.external}/maintenance`, 'PUT', { windows: [w] });
  assert.equal(put.status, 200, JSON.stringify(put.data));
  const k = await oneTimeKey();
  const r = await connect(ids.external, k.spki);
  assert.equal(r.status, 423, JSON.stringify(r.data));
  assert.equal(r.data.ok, false);
  assert.equal(r.data.reason, 'maintenance');
  assert.match(r.data.error!, /Patch Tuesday: back at noon/);
  assert.equal(r.data.maintenance!.note, w.note);
  assert.equal(r.data.credentials, undefined);
  assert.equal((await clientCall(`/rdp/${ids.external}/session`, 'POST', {})).status, 423);
  const list = await clientCall('/rdp');
  assert.equal(list.data.routes.find((x) => x.id === ids.external)!.maintenance!.note, w.note);
  // a window in the past does not refuse
  await adminCall(`/rdp/${ids.external}/maintenance`, 'PUT', {
    windows: [{ ...w, from: new Date(now - 7_200_000).toISOString(), to: new Date(now - 3_600_000).toISOString() }],
  });
  assert.equal((await connect(ids.external, k.spki)).status, 200);
});

test('after a master-key rotation: routes with credentials are refused until re-entered and acknowledged', async () => {
  await s.deps.rdp.onMasterKeyRotated();
  const k = await oneTimeKey();
  const r = await connect(ids.internal, k.spki);
  assert.equal(r.status, 409, JSON.stringify(r.data));
  assert.equal(r.data.reason, 'rotation_pending');
  assert.match(r.data.error!, /credentials must be re-entered by an admin after a master-key rotation/);
  const list = await clientCall('/rdp');
  assert.equal(list.data.routes.find((x) => x.id === ids.internal)!.rotation_pending, true);
  // a route without credentials is not affected
  assert.equal((await connect(ids.both, k.spki)).status, 200);
  // the admin re-enters the credentials (for the new server key) and acknowledges
  await storeCredentials(ids.internal);
  const ack = await adminCall(`/rdp/${ids.internal}/rotation/ack`, 'POST');
  assert.equal(ack.status, 200, JSON.stringify(ack.data));
  const ok = await connect(ids.internal, k.spki);
  assert.equal(ok.status, 200, JSON.stringify(ok.data));
  assert.deepEqual(await decryptCredentials(k.privateKey, k.kid, ok.data.credentials), creds);
});
