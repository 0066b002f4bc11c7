// Peers API through a real sidecar (SQLite, GATEHOUSE_WG_MANAGE=false: database state only).
import { after, before, describe, test } from 'node:test';
import { arrAt } from '../../test/lib/json.js';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startTestServer, apiToken, bearer, type TestServer, apiInit } from './lib/server.js';
import { addSamples } from '../src/peers/traffic.js';
import { startOfDay } from '../src/dashboard/service.js';
import type { PeersService } from '../src/peers/service.js';
import { configFileName } from '../src/peers/service.js';
import type { DnsRecords, Peer, PeerBatchResult } from './lib/protocol.js';
import type { Refusal } from './lib/api-types.js';

let s: TestServer;
let h: Record<string, string>;
const api = apiInit(
  () => s,
  () => h,
);
const create = (json: unknown) => api('/peers', { method: 'POST', json });
const peerCount = async () => (await api('/peers?limit=1')).data.total as number;

before(async () => {
  s = await startTestServer({
    GATEHOUSE_WG_SUBNET: '10.77.0.0/24',
    GATEHOUSE_PUBLIC_HOST: 'vpn.example.test',
    GATEHOUSE_WG_PORT: '51999',
    GATEHOUSE_WG_DNS: '10.77.0.1',
    GATEHOUSE_RATE_LIMIT_ADMIN: '100000',
  });
  h = bearer(await apiToken(s));
});
after(async () => s.close());

describe('create, read, list', () => {
  test('create returns the peer with API fields and an allocated address; secrets never appear', async () => {
    const r = await create({ name: 'Laptop Jane', description: 'work laptop', tags: 'office, Linux', expires_at: '2099-01-01T00:00:00Z', dns: '1.1.1.1' });
    assert.equal(r.status, 201, JSON.stringify(r.data));
    const p = r.data.peer;
    for (const k of [
      'id',
      'name',
      'description',
      'peer_type',
      'enabled',
      'allowed_ips',
      'tags',
      'group_id',
      'hostname',
      'hostname_source',
      'expires_at',
      'total_rx',
      'total_tx',
      'latestHandshake',
      'isOnline',
      'public_key',
      'address',
      'dns',
      'created_at',
    ]) {
      assert.ok(k in p, `field ${k}`);
    }
    assert.equal(p.name, 'Laptop Jane');
    assert.equal(p.peer_type, 'regular');
    assert.equal(p.enabled, 1);
    assert.equal(p.address, '10.77.0.2');
    assert.equal(p.allowed_ips, '10.77.0.2/32');
    assert.equal(p.tags, 'office,Linux');
    assert.equal(p.expires_at, '2099-01-01T00:00:00.000Z');
    assert.equal(p.latestHandshake, null);
    assert.equal(p.isOnline, false);
    assert.equal(p.total_rx, 0);
    assert.match(p.public_key, /^[A-Za-z0-9+/]{43}=$/);
    const text = JSON.stringify(r.data);
    assert.ok(!/private|preshared/i.test(text), 'no key material in the JSON');
    const got = await api(`/peers/${p.id}`);
    assert.equal(got.status, 200);
    assert.deepEqual(got.data.peer, p);
  });

  test('list pages with limit/offset and reports total', async () => {
    for (const n of ['list-a', 'list-b', 'list-c']) assert.equal((await create({ name: n })).status, 201);
    const all = await api('/peers');
    assert.equal(all.status, 200);
    assert.equal(all.data.total, all.data.peers.length);
    const page = await api('/peers?limit=2&offset=1');
    assert.equal(page.data.peers.length, 2);
    assert.equal(page.data.total, all.data.total);
    assert.deepEqual(
      page.data.peers.map((p: Peer) => p.id),
      all.data.peers.slice(1, 3).map((p: Peer) => p.id),
    );
    assert.equal((await api('/peers?limit=0')).status, 400);
    assert.equal((await api('/peers?offset=-1')).status, 400);
  });

  test('duplicate names are a 409, regardless of case; renaming onto a name too', async () => {
    assert.equal((await create({ name: 'dup-name' })).status, 201);
    const before = await peerCount();
    const r = await create({ name: 'DUP-name' });
    assert.equal(r.status, 409);
    assert.match(r.data.error!, /already exists/);
    assert.match(r.data.fields?.name ?? '', /already exists/, 'the field error lets a form show it next to the name');
    assert.equal(await peerCount(), before);
    const other = (await create({ name: 'other-name' })).data.peer;
    const u = await api(`/peers/${other.id}`, { method: 'PUT', json: { name: 'Dup-Name' } });
    assert.equal(u.status, 409);
    assert.match(u.data.fields?.name ?? '', /already exists/);
    assert.equal((await api(`/peers/${other.id}`)).data.peer.name, 'other-name');
    // changing only the case of one's own name is fine
    assert.equal((await api(`/peers/${other.id}`, { method: 'PUT', json: { name: 'Other-Name' } })).data.peer.name, 'Other-Name');
  });

  test('gateway peers: is_gateway and api_port are stored', async () => {
    const r = await create({ name: 'home-gw', is_gateway: true, api_port: 9876 });
    assert.equal(r.status, 201);
    assert.equal(r.data.peer.peer_type, 'gateway');
    assert.equal(r.data.peer.api_port, 9876);
  });

  test('50 parallel creates through the API get 50 distinct addresses', async () => {
    const rs = await Promise.all(Array.from({ length: 50 }, (_, i) => create({ name: `par-${i}` })));
    assert.deepEqual(
      rs.map((r) => r.status),
      Array(50).fill(201),
    );
    const addrs = rs.map((r) => r.data.peer.address);
    assert.equal(new Set(addrs).size, 50);
    const all = await api('/peers?limit=1000');
    const everyAddr = all.data.peers.map((p: Peer) => p.address);
    assert.equal(new Set(everyAddr).size, everyAddr.length, 'no address twice in the table');
    assert.ok(everyAddr.every((a: string) => /^10\.77\.0\.(\d+)$/.test(a) && Number(a.split('.')[3]) >= 2 && Number(a.split('.')[3]) <= 254));
  });
});

describe('update, toggle, batch, delete', () => {
  test('partial update changes only the given fields', async () => {
    const p = (await create({ name: 'upd-1', description: 'd1', tags: 'a,b' })).data.peer;
    const r = await api(`/peers/${p.id}`, { method: 'PUT', json: { description: 'd2' } });
    assert.equal(r.status, 200);
    assert.equal(r.data.peer.description, 'd2');
    assert.equal(r.data.peer.tags, 'a,b');
    assert.equal(r.data.peer.name, 'upd-1');
    const r2 = await api(`/peers/${p.id}`, { method: 'PUT', json: { tags: ['x', 'X', ' y '], expires_at: null, enabled: false } });
    assert.equal(r2.data.peer.tags, 'x,y');
    assert.equal(r2.data.peer.enabled, 0);
    const r3 = await api(`/peers/${p.id}`, { method: 'PUT', json: { allowed_ips: `${p.address}/32, 192.168.50.0/24` } });
    assert.equal(r3.status, 200, JSON.stringify(r3.data));
    assert.equal(r3.data.peer.allowed_ips, `${p.address}/32,192.168.50.0/24`);
    // another peer may not claim an overlapping LAN
    const q = (await create({ name: 'upd-2' })).data.peer;
    const clash = await api(`/peers/${q.id}`, { method: 'PUT', json: { allowed_ips: `${q.address}/32,192.168.50.128/25` } });
    assert.equal(clash.status, 409);
    const key = await api(`/peers/${q.id}`, { method: 'PUT', json: { regenerate_keys: true } });
    assert.notEqual(key.data.peer.public_key, q.public_key);
  });

  test('toggle flips enabled; the peer stays', async () => {
    const p = (await create({ name: 'tog-1' })).data.peer;
    const off = await api(`/peers/${p.id}/toggle`, { method: 'PUT' });
    assert.equal(off.status, 200);
    assert.equal(off.data.peer.enabled, 0);
    assert.equal(off.data.enabled, 0);
    const on = await api(`/peers/${p.id}/toggle`, { method: 'PUT' });
    assert.equal(on.data.peer.enabled, 1);
  });

  test('batch: one result per id, missing ids reported, delete blocked by a route reported', async () => {
    const a = (await create({ name: 'batch-a' })).data.peer;
    const b = (await create({ name: 'batch-b' })).data.peer;
    const dis = await api('/peers/batch', { method: 'POST', json: { action: 'disable', ids: [a.id, b.id, 999999] } });
    assert.equal(dis.status, 200);
    assert.equal(dis.data.action, 'disable');
    assert.deepEqual(
      dis.data.results.map((r: PeerBatchResult) => [r.id, r.ok, r.status]),
      [
        [a.id, true, 200],
        [b.id, true, 200],
        [999999, false, 404],
      ],
    );
    assert.deepEqual(
      [dis.data.results[2].error, dis.data.results[2].code, dis.data.results[2].params],
      ['Peer not found', 'peer.not_found', undefined],
      'a failed item carries its code beside the English text',
    );
    assert.equal(dis.data.succeeded, 2);
    assert.equal(dis.data.failed, 1);
    assert.equal((await api(`/peers/${a.id}`)).data.peer.enabled, 0);
    const en = await api('/peers/batch', { method: 'POST', json: { action: 'enable', ids: [a.id] } });
    assert.equal(en.data.results[0].enabled, 1);
    const now = Date.now();
    await s.deps.db.models.Route.create({
      domain: 'app.example.test',
      route_type: 'http',
      target_kind: 'peer',
      enabled: true,
      peer_id: b.id,
      target_port: '8080',
      created_at: now,
      updated_at: now,
    });
    const del = await api('/peers/batch', { method: 'POST', json: { action: 'delete', ids: [a.id, b.id] } });
    assert.equal(del.data.results[0].ok, true);
    assert.equal(del.data.results[1].ok, false);
    assert.equal(del.data.results[1].status, 409);
    assert.match(del.data.results[1].error!, /app\.example\.test/);
    assert.equal(del.data.results[1].code, 'peer.in_use');
    assert.match(arrAt(del.data.results[1].params, 'routes').join(','), /app\.example\.test/);
    assert.equal((await api(`/peers/${a.id}`)).status, 404);
    assert.equal((await api(`/peers/${b.id}`)).status, 200);
  });

  test('delete: 409 naming the routes that use the peer, 200 otherwise, 404 after', async () => {
    const p = (await create({ name: 'del-1' })).data.peer;
    const now = Date.now();
    const route = await s.deps.db.models.Route.create({
      domain: 'svc.example.test',
      route_type: 'http',
      target_kind: 'peer',
      enabled: true,
      peer_id: p.id,
      target_port: '80',
      created_at: now,
      updated_at: now,
    });
    const blocked = await api(`/peers/${p.id}`, { method: 'DELETE' });
    assert.equal(blocked.status, 409);
    assert.match(blocked.data.error!, /svc\.example\.test/);
    assert.deepEqual(
      blocked.data.routes!.map((r) => r.domain),
      ['svc.example.test'],
    );
    await route.destroy();
    const ok = await api(`/peers/${p.id}`, { method: 'DELETE' });
    assert.equal(ok.status, 200);
    assert.deepEqual(ok.data.deleted, { id: p.id, name: 'del-1' });
    assert.equal((await api(`/peers/${p.id}`)).status, 404);
  });
});

describe('full subnet', () => {
  test('a /29 holds 5 peers; the 6th is a clear 409; a freed address is reused', async () => {
    const small = await startTestServer({ GATEHOUSE_WG_SUBNET: '10.78.0.0/29' });
    try {
      const t = bearer(await apiToken(small));
      const mk = (name: string) => small.req('/api/v1/peers', { method: 'POST', json: { name }, headers: t });
      const rs = await Promise.all(Array.from({ length: 7 }, (_, i) => mk(`small-${i}`)));
      const ok = rs.filter((r) => r.status === 201);
      const full = rs.filter((r) => r.status === 409);
      assert.equal(ok.length, 5);
      assert.equal(full.length, 2);
      assert.match(full[0].data.error!, /10\.78\.0\.0\/29 is full/);
      assert.deepEqual(ok.map((r) => r.data.peer.address).sort(), ['10.78.0.2', '10.78.0.3', '10.78.0.4', '10.78.0.5', '10.78.0.6']);
      const victim = ok.find((r) => r.data.peer.address === '10.78.0.4')!.data.peer;
      assert.equal((await small.req(`/api/v1/peers/${victim.id}`, { method: 'DELETE', headers: t })).status, 200);
      const again = await mk('small-again');
      assert.equal(again.status, 201);
      assert.equal(again.data.peer.address, '10.78.0.4');
    } finally {
      await small.close();
    }
  });
});

describe('config and QR', () => {
  test('config is text/plain with the server endpoint, the DNS given at create and the preshared key', async () => {
    const p = (await create({ name: "Jane's Phone (2)", dns: '9.9.9.9, vpn.internal' })).data.peer;
    const r = await api(`/peers/${p.id}/config`);
    assert.equal(r.status, 200);
    assert.match(r.headers.get('content-type')!, /^text\/plain/);
    assert.equal(r.headers.get('content-disposition'), null);
    const text = r.data as string;
    assert.match(text, /^(?:# .*\n)*\[Interface\]\nPrivateKey = [A-Za-z0-9+/]{43}=\n/);
    assert.ok(text.includes(`Address = ${p.address}/32`));
    assert.ok(text.includes('DNS = 9.9.9.9, vpn.internal'));
    assert.ok(text.includes('Endpoint = vpn.example.test:51999'));
    assert.ok(text.includes('AllowedIPs = 10.77.0.0/24'));
    assert.match(text, /PresharedKey = [A-Za-z0-9+/]{43}=/);
    assert.match(text, /PersistentKeepalive = 25/);
    const { publicKey } = await s.deps.wireguard.serverKeys();
    assert.ok(text.includes(`PublicKey = ${publicKey}`));
    const dl = await api(`/peers/${p.id}/config?download=1`);
    assert.equal(dl.headers.get('content-disposition'), 'attachment; filename="Jane_s_Phone_2.conf"');
    assert.equal(dl.data, text);
  });

  test('config without dns uses GATEHOUSE_WG_DNS; safe file names', async () => {
    const p = (await create({ name: 'no-dns' })).data.peer;
    assert.ok(((await api(`/peers/${p.id}/config`)).data as string).includes('DNS = 10.77.0.1'));
    assert.equal(configFileName('Ünïcode Laptop', 1), 'Unicode_Laptop.conf');
    assert.equal(configFileName('日本', 7), 'peer-7.conf');
    assert.equal(configFileName('..hidden', 2), 'hidden.conf');
  });

  test('qr returns {name, qr: PNG data URL, config}', async () => {
    const p = (await create({ name: 'qr-peer' })).data.peer;
    const r = await api(`/peers/${p.id}/qr`);
    assert.equal(r.status, 200);
    assert.equal(r.data.name, 'qr-peer');
    assert.match(r.data.qr, /^data:image\/png;base64,/);
    const png = Buffer.from(r.data.qr.split(',')[1], 'base64');
    assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    assert.equal(r.data.config, (await api(`/peers/${p.id}/config`)).data);
  });
});

describe('hostnames and DNS', () => {
  const hostsFile = () => fs.readFileSync(path.join(s.dataDir, 'hosts.vpn.internal'), 'utf8');

  test('sticky admin rule: agent reports never replace an admin hostname; empty or null removes it', async () => {
    const peers = s.deps.peers as PeersService;
    const p = (await create({ name: 'host-1' })).data.peer;
    const agent1 = await peers.setAgentHostname(p.id, 'Agent-Box');
    assert.equal(agent1.applied, true);
    assert.equal(agent1.peer.hostname, 'agent-box');
    assert.equal(agent1.peer.hostname_source, 'agent');
    assert.ok(hostsFile().includes(`${p.address}\tagent-box.vpn.internal`));
    const admin = await api(`/peers/${p.id}/hostname`, { method: 'PATCH', json: { hostname: 'build-server' } });
    assert.equal(admin.status, 200);
    assert.equal(admin.data.peer.hostname, 'build-server');
    assert.equal(admin.data.peer.hostname_source, 'admin');
    const agent2 = await peers.setAgentHostname(p.id, 'something-else');
    assert.equal(agent2.applied, false);
    assert.equal((await api(`/peers/${p.id}`)).data.peer.hostname, 'build-server');
    const agentClear = await peers.setAgentHostname(p.id, '');
    assert.equal(agentClear.applied, false, 'an agent cannot remove an admin hostname either');
    assert.ok(hostsFile().includes(`${p.address}\tbuild-server.vpn.internal`));
    assert.ok(!hostsFile().includes('agent-box'));
    const cleared = await api(`/peers/${p.id}/hostname`, { method: 'PATCH', json: { hostname: '' } });
    assert.equal(cleared.data.peer.hostname, null);
    assert.equal(cleared.data.peer.hostname_source, 'agent', 'the API: admin or agent, never null; without an admin name the agent decides');
    assert.ok(!hostsFile().includes('build-server'));
    const agent3 = await peers.setAgentHostname(p.id, 'back-again');
    assert.equal(agent3.applied, true);
    assert.equal(agent3.peer.hostname_source, 'agent');
    const nulled = await api(`/peers/${p.id}/hostname`, { method: 'PATCH', json: { hostname: 'x1' } });
    assert.equal(nulled.data.peer.hostname, 'x1');
    assert.equal((await api(`/peers/${p.id}/hostname`, { method: 'PATCH', json: { hostname: null } })).data.peer.hostname, null);
  });

  test('hostnames are unique, reserved names refused, deleting a peer drops its record', async () => {
    const a = (await create({ name: 'host-a' })).data.peer;
    const b = (await create({ name: 'host-b' })).data.peer;
    assert.equal((await api(`/peers/${a.id}/hostname`, { method: 'PATCH', json: { hostname: 'nas' } })).status, 200);
    const dup = await api(`/peers/${b.id}/hostname`, { method: 'PATCH', json: { hostname: 'NAS' } });
    assert.equal(dup.status, 409);
    assert.match(dup.data.fields?.hostname ?? '', /already used by peer "host-a"/, 'a form shows it next to the hostname input');
    assert.match(dup.data.error!, /host-a/);
    const reserved = await api(`/peers/${b.id}/hostname`, { method: 'PATCH', json: { hostname: 'gateway' } });
    assert.equal(reserved.status, 422);
    assert.ok(reserved.data.fields!.hostname);
    await assert.rejects((s.deps.peers as PeersService).setAgentHostname(b.id, 'nas'), /already used/);
    assert.ok(hostsFile().includes(`${a.address}\tnas.vpn.internal`));
    assert.equal((await api(`/peers/${a.id}`, { method: 'DELETE' })).status, 200);
    assert.ok(!hostsFile().includes('nas.vpn.internal'));
  });

  test('hosts file holds gateway and server records; status and records endpoints', async () => {
    const p = (await create({ name: 'host-c' })).data.peer;
    await api(`/peers/${p.id}/hostname`, { method: 'PATCH', json: { hostname: 'printer' } });
    const q = (await create({ name: 'host-d' })).data.peer;
    await (s.deps.peers as PeersService).setAgentHostname(q.id, 'old-agent');
    // make the agent report 8 days old: stale
    await s.deps.db.models.Peer.update({ hostname_updated_at: Date.now() - 8 * 86_400_000 }, { where: { id: q.id } });
    const text = hostsFile();
    assert.match(text, /^10\.77\.0\.1\tserver\.vpn\.internal$/m);
    assert.match(text, /^10\.77\.0\.1\tgateway\.vpn\.internal$/m);
    assert.ok(text.includes(`${p.address}\tprinter.vpn.internal`));
    const rec = await api('/system/dns/records');
    assert.equal(rec.status, 200);
    assert.equal(rec.data.domain, 'vpn.internal');
    assert.deepEqual(
      rec.data.static.map((x: DnsRecords['static'][number]) => [x.fqdn, x.address]),
      [
        ['gateway.vpn.internal', '10.77.0.1'],
        ['server.vpn.internal', '10.77.0.1'],
      ],
    );
    const printer = rec.data.peers.find((x) => x.name === 'printer');
    assert.equal(printer!.source, 'admin');
    assert.equal(printer!.peer_id, p.id);
    assert.equal(printer!.stale, false);
    assert.equal(rec.data.peers.find((x) => x.name === 'old-agent')!.stale, true);
    const st = await api('/system/dns/status');
    assert.equal(st.status, 200);
    assert.equal(st.data.dns.enabled, true);
    assert.equal(st.data.dns.hosts_file.exists, true);
    assert.equal(st.data.dns.hosts_file.path, path.join(s.dataDir, 'hosts.vpn.internal'));
    assert.ok(st.data.dns.peers.admin >= 1);
    assert.ok(st.data.dns.peers.agent >= 1);
    assert.ok(st.data.dns.peers.stale >= 1);
    assert.equal(st.data.dns.peers.total, st.data.dns.peers.admin + st.data.dns.peers.agent);
    assert.equal(st.data.dns.stale_after_days, 7);
  });
});

describe('traffic, status, dashboard', () => {
  test('peer traffic chart from samples', async () => {
    const p = (await create({ name: 'traffic-1' })).data.peer;
    const now = Date.now();
    await addSamples(s.deps.db.sequelize, [{ peerId: p.id, rx: 1000, tx: 2000 }], now);
    await addSamples(s.deps.db.sequelize, [{ peerId: p.id, rx: 500, tx: 0 }], now);
    await addSamples(s.deps.db.sequelize, [{ peerId: p.id, rx: 7, tx: 7 }], now - 3 * 3600_000);
    const r = await api(`/peers/${p.id}/traffic?period=24h`);
    assert.equal(r.status, 200);
    assert.equal(r.data.period, '24h');
    assert.equal(r.data.points.length, 24);
    assert.equal(r.data.total_rx, 1507);
    assert.equal(r.data.total_tx, 2007);
    assert.deepEqual(r.data.points.at(-1), { timestamp: Math.floor(now / 3600_000) * 3600_000, rx: 1500, tx: 2000 });
    assert.equal((await api(`/peers/${p.id}/traffic?period=7d`)).data.points.length, 28);
    assert.equal((await api(`/peers/${p.id}/traffic?period=30d`)).data.points.length, 30);
    assert.equal((await api(`/peers/${p.id}/traffic?period=1y`)).status, 400);
    const d = await api('/dashboard/traffic?period=1h');
    assert.equal(d.status, 200);
    assert.equal(d.data.points.length, 12);
    assert.ok(d.data.total_rx >= 1500);
  });

  test('dashboard stats has exactly the API fields', async () => {
    const r = await api('/dashboard/stats');
    assert.equal(r.status, 200);
    assert.deepEqual(Object.keys(r.data).sort(), ['latency', 'monitoring', 'ok', 'peers', 'routes', 'traffic', 'wireguard']);
    assert.deepEqual(Object.keys(r.data.peers).sort(), ['online', 'total']);
    assert.deepEqual(Object.keys(r.data.routes).sort(), ['active', 'total']);
    assert.deepEqual(Object.keys(r.data.monitoring).sort(), ['down', 'total', 'up']);
    assert.deepEqual(Object.keys(r.data.traffic).sort(), ['downloadRate', 'today', 'todayDownload', 'todayUpload', 'uploadRate']);
    assert.deepEqual(r.data.wireguard, { running: false });
    assert.equal(r.data.peers.total, await peerCount());
    // "today" is since local midnight: the samples of the chart test above (1,500 + 2,000 now, 7 + 7 three
    // hours ago) count, the older ones only after 03:00 (the test failed from midnight to 03:00)
    const since = startOfDay(Date.now());
    assert.ok(r.data.traffic.today >= 1500 + 2000 + (Date.now() - 3 * 3600_000 >= since ? 14 : 0), `today ${r.data.traffic.today}`);
    assert.equal(r.data.traffic.today, r.data.traffic.todayUpload + r.data.traffic.todayDownload);
    assert.equal(typeof r.data.latency, 'number');
    const now = Date.now();
    await s.deps.db.models.Route.create({
      domain: 'dash.example.test',
      route_type: 'http',
      target_kind: 'peer',
      enabled: true,
      monitoring_enabled: true,
      created_at: now,
      updated_at: now,
    });
    await s.deps.db.models.Route.create({
      domain: 'off.example.test',
      route_type: 'http',
      target_kind: 'peer',
      enabled: false,
      created_at: now,
      updated_at: now,
    });
    const r2 = await api('/dashboard/stats');
    assert.equal(r2.data.routes.active, r.data.routes.active + 1);
    // the total counts the disabled route too: active never exceeds it
    assert.equal(r2.data.routes.total, r.data.routes.total + 2);
    assert.equal(r2.data.routes.total, await s.deps.db.models.Route.count());
    assert.ok(r2.data.routes.active <= r2.data.routes.total);
    assert.equal(r2.data.monitoring.total, r.data.monitoring.total + 1);
  });

  test('wg status without a managed interface; restart is a 409', async () => {
    const st = await api('/wg/status');
    assert.equal(st.status, 200);
    assert.equal(st.data.managed, false);
    assert.equal(st.data.running, false);
    assert.equal(st.data.address, '10.77.0.1/24');
    assert.equal(st.data.endpoint, 'vpn.example.test:51999');
    const rs = await api('/wg/restart', { method: 'POST' });
    assert.equal(rs.status, 409);
  });
});

describe('404s', () => {
  test('every peer endpoint answers 404 for a missing id', async () => {
    const calls: [string, string, unknown?][] = [
      ['GET', '/peers/424242'],
      ['PUT', '/peers/424242', { description: 'x' }],
      ['DELETE', '/peers/424242'],
      ['PUT', '/peers/424242/toggle'],
      ['GET', '/peers/424242/config'],
      ['GET', '/peers/424242/qr'],
      ['PATCH', '/peers/424242/hostname', { hostname: 'a' }],
      ['GET', '/peers/424242/traffic'],
      ['GET', '/peer-groups/424242'],
      ['PUT', '/peer-groups/424242', { name: 'x' }],
      ['DELETE', '/peer-groups/424242'],
      ['DELETE', '/tags/never-seen'],
    ];
    for (const [method, p, json] of calls) {
      const r = await api<Refusal>(p, { method, ...(json ? { json } : {}) });
      assert.equal(r.status, 404, `${method} ${p}: ${r.status} ${JSON.stringify(r.data)}`);
      assert.equal(r.data.ok, false);
    }
    assert.equal((await api('/peers/abc')).status, 400);
  });
});

describe('bad input: 400 with fields, nothing written', () => {
  test('POST /peers', async () => {
    const before = await peerCount();
    const bodies: [unknown, string][] = [
      [{}, 'name'],
      [{ name: '' }, 'name'],
      [{ name: '   ' }, 'name'],
      [{ name: 'x'.repeat(65) }, 'name'],
      [{ name: 'bad<name>' }, 'name'],
      [{ name: 'new\nline' }, 'name'],
      [{ name: '-starts-with-dash' }, 'name'],
      [{ name: 42 }, 'name'],
      [{ name: 'ok-name', description: 'x'.repeat(501) }, 'description'],
      [{ name: 'ok-name', description: 'bell\u0007' }, 'description'],
      [{ name: 'ok-name', tags: 'a,b<c' }, 'tags'],
      [{ name: 'ok-name', tags: ['x'.repeat(65)] }, 'tags'],
      [{ name: 'ok-name', tags: ['tab\tbed'] }, 'tags'],
      [{ name: 'ok-name', tags: 5 }, 'tags'],
      [{ name: 'ok-name', group_id: 'one' }, 'group_id'],
      [{ name: 'ok-name', group_id: 987654 }, 'group_id'],
      [{ name: 'ok-name', expires_at: 'tomorrow' }, 'expires_at'],
      [{ name: 'ok-name', expires_at: '2001-01-01T00:00:00Z' }, 'expires_at'],
      [{ name: 'ok-name', dns: 'not a server!' }, 'dns'],
      [{ name: 'ok-name', dns: '1.1.1.1\nPostUp = rm -rf /' }, 'dns'],
      [{ name: 'ok-name', is_gateway: 'yes' }, 'is_gateway'],
      [{ name: 'ok-name', is_gateway: true, api_port: 70000 }, 'api_port'],
      [{ name: 'ok-name', api_port: 9000 }, 'api_port'],
      [{ name: 'ok-name', persistent_keepalive: -1 }, 'persistent_keepalive'],
    ];
    for (const [body, field] of bodies) {
      const r = await create(body);
      assert.ok([400, 422].includes(r.status), `${JSON.stringify(body)} → ${r.status} ${JSON.stringify(r.data)}`);
      assert.equal(r.data.ok, false);
      assert.ok(
        Object.keys(r.data.fields ?? {}).some((k) => k === field || k.startsWith(`${field}.`)),
        `${JSON.stringify(body)}: fields.${field} in ${JSON.stringify(r.data.fields)}`,
      );
    }
    assert.equal(await peerCount(), before);
  });

  test('PUT /peers/:id, batch, hostname', async () => {
    const p = (await create({ name: 'bad-upd', tags: 'keep' })).data.peer;
    const bodies: [unknown, string][] = [
      [{ name: '' }, 'name'],
      [{ name: 'a"b' }, 'name'],
      [{ tags: 'x,"y"' }, 'tags'],
      [{ enabled: 'maybe' }, 'enabled'],
      [{ group_id: -3 }, 'group_id'],
      [{ group_id: 987654 }, 'group_id'],
      [{ expires_at: 'soon' }, 'expires_at'],
      [{ allowed_ips: '300.1.1.1/24' }, 'allowed_ips'],
      [{ allowed_ips: '192.168.1.0/24' }, 'allowed_ips'],
      [{ allowed_ips: `${p.address}/32,10.77.0.0/24` }, 'allowed_ips'],
      [{ allowed_ips: `${p.address}/32,0.0.0.0/0` }, 'allowed_ips'],
      [{ regenerate_keys: false }, 'regenerate_keys'],
      [{ api_port: 1234 }, 'api_port'],
      [{ description: 'ok', dns: '$(reboot)' }, 'dns'],
    ];
    for (const [body, field] of bodies) {
      const r = await api(`/peers/${p.id}`, { method: 'PUT', json: body });
      assert.ok([400, 422].includes(r.status), `${JSON.stringify(body)} → ${r.status} ${JSON.stringify(r.data)}`);
      assert.ok(r.data.fields?.[field], `${JSON.stringify(body)}: fields.${field} in ${JSON.stringify(r.data.fields)}`);
    }
    assert.deepEqual((await api(`/peers/${p.id}`)).data.peer, p);
    for (const [body, field] of [
      [{ action: 'explode', ids: [p.id] }, 'action'],
      [{ action: 'delete', ids: [] }, 'ids'],
      [{ action: 'delete', ids: ['x'] }, 'ids.0'],
      [{ action: 'delete' }, 'ids'],
    ] as [unknown, string][]) {
      const r = await api('/peers/batch', { method: 'POST', json: body });
      assert.equal(r.status, 400);
      assert.ok(r.data.fields?.[field], `${JSON.stringify(body)}: ${JSON.stringify(r.data.fields)}`);
    }
    for (const [body, field] of [
      [{}, 'hostname'],
      [{ hostname: 'under_score' }, 'hostname'],
      [{ hostname: 'a'.repeat(64) }, 'hostname'],
      [{ hostname: '-x' }, 'hostname'],
      [{ hostname: 5 }, 'hostname'],
    ] as [unknown, string][]) {
      const r = await api(`/peers/${p.id}/hostname`, { method: 'PATCH', json: body });
      assert.equal(r.status, 400, `${JSON.stringify(body)}`);
      assert.ok(r.data.fields?.[field], `${JSON.stringify(body)}: ${JSON.stringify(r.data.fields)}`);
    }
    assert.deepEqual((await api(`/peers/${p.id}`)).data.peer, p);
    assert.equal((await api(`/peers/${p.id}/config?download=maybe`)).status, 400);
  });
});

describe('expiry dates', () => {
  const FAR = 9007199254740991;

  test('a far-future expires_at (beyond what a Date holds) is refused with 400 on create and update, nothing saved', async () => {
    const before = await peerCount();
    for (const expires_at of [FAR, 8.64e15, Date.UTC(10000, 0, 1)]) {
      const r = await create({ name: 'far-future', expires_at });
      assert.equal(r.status, 400, `${expires_at} → ${r.status} ${JSON.stringify(r.data)}`);
      assert.ok(r.data.fields?.expires_at, JSON.stringify(r.data));
    }
    assert.equal(await peerCount(), before);
    const p = (await create({ name: 'far-upd' })).data.peer;
    const r = await api(`/peers/${p.id}`, { method: 'PUT', json: { expires_at: FAR } });
    assert.equal(r.status, 400);
    assert.ok(r.data.fields?.expires_at);
    assert.deepEqual((await api(`/peers/${p.id}`)).data.peer, p);
    const last = await create({ name: 'year-9999', expires_at: '9999-12-31T23:59:59.999Z' });
    assert.equal(last.status, 201, JSON.stringify(last.data));
    assert.equal(last.data.peer.expires_at, '9999-12-31T23:59:59.999Z');
  });

  test('a stored out-of-range expiry never takes GET /peers or /peers/:id down', async () => {
    const p = (await create({ name: 'bad-row' })).data.peer;
    await s.deps.db.models.Peer.update({ expires_at: FAR }, { where: { id: p.id } });
    const list = await api('/peers?limit=1000');
    assert.equal(list.status, 200, JSON.stringify(list.data));
    const inList = list.data.peers.find((x: Peer) => x.id === p.id);
    assert.equal(inList!.expires_at, null);
    assert.equal(inList!.expired, false);
    const one = await api(`/peers/${p.id}`);
    assert.equal(one.status, 200, JSON.stringify(one.data));
    assert.equal(one.data.peer.name, 'bad-row');
    await api(`/peers/${p.id}`, { method: 'DELETE' });
  });

  test('expires_at accepts a plain date and a date-time without zone, both read as UTC', async () => {
    for (const [input, iso] of [
      ['2030-01-01', '2030-01-01T00:00:00.000Z'],
      ['2030-01-01T00:00:00', '2030-01-01T00:00:00.000Z'],
      ['2030-01-01T08:30', '2030-01-01T08:30:00.000Z'],
      ['2030-01-01T10:00:00+02:00', '2030-01-01T08:00:00.000Z'],
      [Date.UTC(2030, 0, 1), '2030-01-01T00:00:00.000Z'],
    ] as [unknown, string][]) {
      const r = await create({ name: `date-${String(input).replace(/[^0-9]/g, '')}`, expires_at: input });
      assert.equal(r.status, 201, `${input} → ${JSON.stringify(r.data)}`);
      assert.equal(r.data.peer.expires_at, iso, String(input));
      await api(`/peers/${r.data.peer.id}`, { method: 'DELETE' });
    }
  });

  test('expires_at refuses a numeric string, an array, a boolean and impossible dates', async () => {
    const before = await peerCount();
    for (const expires_at of ['4102444800000', [4102444800000], true, '2030-02-30', '2030-13-01', '2030-01-01T24:00:00', 4102444800000.5]) {
      const r = await create({ name: 'loose', expires_at });
      assert.equal(r.status, 400, `${JSON.stringify(expires_at)} → ${r.status} ${JSON.stringify(r.data)}`);
      assert.ok(r.data.fields?.expires_at);
    }
    assert.equal(await peerCount(), before);
  });
});

describe('hostname_source', () => {
  test('a peer without a hostname has hostname_source "agent", never null, in list and detail', async () => {
    const p = (await create({ name: 'no-hostname' })).data.peer;
    assert.equal(p.hostname, null);
    assert.equal(p.hostname_source, 'agent');
    assert.equal((await api(`/peers/${p.id}`)).data.peer.hostname_source, 'agent');
    const list = (await api('/peers?limit=1000')).data.peers;
    assert.ok(
      list.every((x: Peer) => x.hostname_source === 'admin' || x.hostname_source === 'agent'),
      'every peer in the list',
    );
    await api(`/peers/${p.id}`, { method: 'DELETE' });
  });
});
