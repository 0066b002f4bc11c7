// Desktop client API, the rest: ping, permissions, status, peer/hostname (sticky admin, 3 per
// minute), peer-info, traffic, services, dns-check, update; the client rate limit.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import dns from 'node:dns';
import { startTestServer, login, bearer, type TestServer } from './lib/server.js';
import { localDns } from './lib/local-dns.js';
import { addSamples } from '../src/peers/traffic.js';
import { APP_VERSION } from '../src/version.js';
import type { ExternalAddress, Service, User } from './lib/protocol.js';
import type { Row } from './lib/rows.js';

let s: TestServer;
let admin: Record<string, string>;
let dnsServer: { port: number; close(): void };
before(async () => {
  s = await startTestServer({ GATEHOUSE_RATE_LIMIT_CLIENT: '100000', GATEHOUSE_RATE_LIMIT_HOSTNAME: '100000', GATEHOUSE_RATE_LIMIT_ADMIN: '100000' });
  const { cookie, csrf } = await login(s);
  admin = { cookie, 'x-csrf-token': csrf };
  dnsServer = await localDns({ 'app.example.test': ['192.0.2.10', '192.0.2.11'] });
  const resolver = new dns.promises.Resolver({ timeout: 500, tries: 1 });
  resolver.setServers([`127.0.0.1:${dnsServer.port}`]);
  s.deps.clientMachines.resolver = resolver;
});
after(async () => {
  dnsServer?.close();
  await s.close();
});

let n = 0;
async function client(
  scopes = ['client'],
  extra: Record<string, unknown> = {},
): Promise<{ token: string; id: number; h: Record<string, string>; peerId: number; machineId: number }> {
  const t = await s.req('/api/v1/tokens', { method: 'POST', json: { name: `i-${++n}`, scopes, ...extra }, headers: admin });
  assert.equal(t.status, 201);
  const h = { ...bearer(t.data.token), 'x-machine-fingerprint': `fp-${n}` };
  const r = await s.req('/api/v1/client/register', {
    method: 'POST',
    json: { hostname: `host-${n}`, platform: 'linux-x64', client_version: '0.1.0' },
    headers: h,
  });
  assert.equal(r.status, 201, JSON.stringify(r.data));
  return { token: t.data.token, id: t.data.record.id, h, peerId: r.data.peer.id, machineId: r.data.machine.id };
}

test('ping and permissions', async () => {
  const c = await client();
  const ping = await s.req('/api/v1/client/ping', { headers: c.h });
  assert.equal(ping.status, 200);
  assert.equal(ping.data.version, APP_VERSION);
  assert.equal(ping.data.registered, true);
  const other = await s.req('/api/v1/tokens', { method: 'POST', json: { name: 'unregistered', scopes: ['client'] }, headers: admin });
  assert.equal((await s.req('/api/v1/client/ping', { headers: { ...bearer(other.data.token), 'x-machine-fingerprint': 'nobody' } })).data.registered, false);
  const p = await s.req('/api/v1/client/permissions', { headers: c.h });
  assert.equal(p.status, 200, JSON.stringify(p.data));
  assert.deepEqual(p.data.token.scopes, ['client']);
  assert.equal(p.data.token.fingerprint_bound, true);
  assert.equal(p.data.user!.username, 'admin', 'a token without user_id acts as its creator');
  assert.deepEqual(p.data.machine, { id: c.machineId, peer_id: c.peerId });
  assert.deepEqual(p.data.can, { register: true, tunnel: true, hostname: true, rdp: true, dns_check: true });
  assert.deepEqual(p.data.features, { remote_desktop: true, internal_dns: true });
  const logs = await s.req('/api/v1/tokens', { method: 'POST', json: { name: 'logs-only', scopes: ['logs'] }, headers: admin });
  assert.equal((await s.req('/api/v1/client/permissions', { headers: bearer(logs.data.token) })).status, 403);
});

test('status: stored (size-limited); too large 413, bad known fields 400 with fields, nothing written', async () => {
  const c = await client();
  const big = await s.req('/api/v1/client/status', { method: 'POST', json: { blob: 'x'.repeat(17 * 1024) }, headers: c.h });
  assert.equal(big.status, 413, 'a byte size no schema states: 413 (documented)');
  const bad = await s.req('/api/v1/client/status', { method: 'POST', json: { uptime_s: -5, tunnel: { up: 'yes' } }, headers: c.h });
  assert.equal(bad.status, 400);
  assert.ok(bad.data.fields!.uptime_s && bad.data.fields!['tunnel.up'], JSON.stringify(bad.data.fields));
  let row = ((await s.deps.db.models.ClientMachine.findByPk(c.machineId, { raw: true })) as Row<'ClientMachine'> | null)!;
  assert.equal(row.status_json, null);
  const ok = await s.req('/api/v1/client/status', {
    method: 'POST',
    json: { os: 'Debian 12', uptime_s: 99, tunnel: { up: true, interface: 'gh0' }, extra: { cpu: 3 } },
    headers: c.h,
  });
  assert.equal(ok.status, 200, JSON.stringify(ok.data));
  row = ((await s.deps.db.models.ClientMachine.findByPk(c.machineId, { raw: true })) as Row<'ClientMachine'> | null)!;
  assert.deepEqual(JSON.parse(row.status_json!), { os: 'Debian 12', uptime_s: 99, tunnel: { up: true, interface: 'gh0' }, extra: { cpu: 3 } });
  const machines = await s.req(`/api/v1/tokens/${c.id}/machines`, { headers: admin });
  assert.equal(machines.data.machines[0].status!.os, 'Debian 12');
});

test('peer/hostname: agent name applied; an admin hostname is never overwritten (sticky admin); bad name 400', async () => {
  const c = await client();
  const bad = await s.req('/api/v1/client/peer/hostname', { method: 'POST', json: { hostname: 'not valid!' }, headers: c.h });
  assert.equal(bad.status, 400);
  assert.ok(bad.data.fields!.hostname);
  const r = await s.req('/api/v1/client/peer/hostname', { method: 'POST', json: { hostname: 'My-Laptop' }, headers: c.h });
  assert.equal(r.status, 200, JSON.stringify(r.data));
  assert.equal(r.data.applied, true);
  assert.equal(r.data.hostname, 'my-laptop');
  assert.equal(r.data.hostname_source, 'agent');
  assert.equal(r.data.fqdn, 'my-laptop.vpn.internal');
  assert.equal((await s.req(`/api/v1/peers/${c.peerId}`, { headers: admin })).data.peer.hostname, 'my-laptop');
  // the admin sets a name: the agent's next report does not replace it
  const set = await s.req(`/api/v1/peers/${c.peerId}/hostname`, { method: 'PATCH', json: { hostname: 'admin-name' }, headers: admin });
  assert.equal(set.status, 200);
  const again = await s.req('/api/v1/client/peer/hostname', { method: 'POST', json: { hostname: 'agent-name' }, headers: c.h });
  assert.equal(again.status, 200);
  assert.equal(again.data.applied, false);
  assert.match(again.data.reason!, /admin/);
  assert.equal(again.data.hostname, 'admin-name');
  assert.equal(again.data.hostname_source, 'admin');
  const peer = (await s.req(`/api/v1/peers/${c.peerId}`, { headers: admin })).data.peer;
  assert.equal(peer.hostname, 'admin-name');
  assert.equal(peer.hostname_source, 'admin');
  const m = (await s.req(`/api/v1/tokens/${c.id}/machines`, { headers: admin })).data.machines[0];
  assert.equal(m.hostname_source, 'admin');
  assert.equal((await s.req('/api/v1/client/permissions', { headers: c.h })).data.can.hostname, false);
});

test('peer-info: own peer and peers of the same group; anything else 404; bad id 400', async () => {
  const g = await s.req('/api/v1/peer-groups', { method: 'POST', json: { name: 'team-a' }, headers: admin });
  const mate = await s.req('/api/v1/peers', { method: 'POST', json: { name: 'team-mate', group_id: g.data.group.id }, headers: admin });
  const stranger = await s.req('/api/v1/peers', { method: 'POST', json: { name: 'stranger' }, headers: admin });
  const c = await client();
  const own = await s.req(`/api/v1/client/peer-info?peerId=${c.peerId}`, { headers: c.h });
  assert.equal(own.status, 200, JSON.stringify(own.data));
  assert.equal(own.data.peer.id, c.peerId);
  assert.equal(own.data.peer.online, false);
  assert.equal((await s.req(`/api/v1/client/peer-info?peerId=${mate.data.peer.id}`, { headers: c.h })).status, 404, 'not in a group yet');
  assert.equal((await s.req(`/api/v1/peers/${c.peerId}`, { method: 'PUT', json: { group_id: g.data.group.id }, headers: admin })).status, 200);
  const m = await s.req(`/api/v1/client/peer-info?peerId=${mate.data.peer.id}`, { headers: c.h });
  assert.equal(m.status, 200);
  assert.deepEqual(Object.keys(m.data.peer).sort(), ['address', 'fqdn', 'hostname', 'id', 'is_gateway', 'name', 'online']);
  assert.equal(m.data.peer.name, 'team-mate');
  assert.equal((await s.req(`/api/v1/client/peer-info?peerId=${stranger.data.peer.id}`, { headers: c.h })).status, 404);
  assert.equal((await s.req('/api/v1/client/peer-info?peerId=987654', { headers: c.h })).status, 404);
  const bad = await s.req('/api/v1/client/peer-info?peerId=abc', { headers: c.h });
  assert.equal(bad.status, 400);
  assert.ok(bad.data.fields!.peerId);
});

test('traffic: its own peer only, by period; bad period 400', async () => {
  const c = await client();
  const other = await client();
  const now = s.deps.clock();
  await addSamples(
    s.deps.db.sequelize,
    [
      { peerId: c.peerId, rx: 1000, tx: 500 },
      { peerId: other.peerId, rx: 7777, tx: 7777 },
    ],
    now - 60_000,
  );
  const t = await s.req('/api/v1/client/traffic?period=1h', { headers: c.h });
  assert.equal(t.status, 200, JSON.stringify(t.data));
  assert.equal(t.data.peer_id, c.peerId);
  assert.equal(t.data.total_rx, 1000);
  assert.equal(t.data.total_tx, 500);
  assert.equal((await s.req('/api/v1/client/traffic', { headers: c.h })).data.period, '24h');
  const bad = await s.req('/api/v1/client/traffic?period=1y', { headers: c.h });
  assert.equal(bad.status, 400);
  assert.ok(bad.data.fields!.period);
});

test('services: routes whose ACL lists its peer, sign-in routes that list its user, open routes; not the others', async () => {
  const target = await s.req('/api/v1/peers', { method: 'POST', json: { name: 'svc-target' }, headers: admin });
  const tp = target.data.peer.id;
  const c = await client();
  const mk = async (json: Record<string, unknown>) => {
    const r = await s.req('/api/v1/routes', { method: 'POST', json: { peer_id: tp, target_port: 8080, ...json }, headers: admin });
    assert.equal(r.status, 201, JSON.stringify(r.data));
    return r.data.route.id as number;
  };
  const open = await mk({ domain: 'open.example.test' });
  const aclMine = await mk({ domain: 'acl-mine.example.test', acl_enabled: true, acl_peer_ids: [c.peerId] });
  const aclOther = await mk({ domain: 'acl-other.example.test', acl_enabled: true, acl_peer_ids: [tp] });
  const users = await s.req('/api/v1/users', { method: 'GET', headers: admin });
  const adminId = users.data.users.find((u: User) => u.username === 'admin')!.id;
  const signinMine = await mk({ domain: 'signin-mine.example.test', user_ids: [adminId] });
  assert.equal(
    (
      await s.req(`/api/v1/routes/${signinMine}/auth`, {
        method: 'POST',
        json: { method: 'email_password', email: 'o@example.test', password: 'correct horse battery', session_max_age: 3_600_000 },
        headers: admin,
      })
    ).status,
    200,
  );
  const signinOther = await mk({ domain: 'signin-other.example.test' });
  assert.equal(
    (
      await s.req(`/api/v1/routes/${signinOther}/auth`, {
        method: 'POST',
        json: { method: 'email_password', email: 'o@example.test', password: 'correct horse battery', session_max_age: 3_600_000 },
        headers: admin,
      })
    ).status,
    200,
  );
  const l4 = await mk({ domain: 'ssh.example.test', route_type: 'l4', l4_protocol: 'tcp', l4_listen_port: 42222, target_port: 22 });
  const disabled = await mk({ domain: 'off.example.test' });
  await s.req(`/api/v1/routes/${disabled}/toggle`, { method: 'PUT', headers: admin });

  const r = await s.req('/api/v1/client/services', { headers: c.h });
  assert.equal(r.status, 200, JSON.stringify(r.data));
  const by = new Map<number, Service>(r.data.services.map((x: Service) => [x.route_id, x]));
  assert.equal(by.get(open)?.access, 'open');
  assert.equal(by.get(open)?.url, 'http://open.example.test');
  assert.equal(by.get(aclMine)?.access, 'acl');
  assert.equal(by.get(signinMine)?.access, 'user');
  assert.equal(by.get(signinMine)?.requires_login, true);
  assert.equal(by.get(l4)?.protocol, 'tcp');
  assert.equal(by.get(l4)?.port, 42222);
  for (const id of [aclOther, signinOther, disabled]) assert.ok(!by.has(id), `route ${id} is not the client's`);
  // a token bound to another user does not get the sign-in route
  const u = await s.req('/api/v1/users', { method: 'POST', json: { username: 'svc-user', password: 'svc-user-password', role: 'user' }, headers: admin });
  const c2 = await client(['client'], { user_id: u.data.user.id });
  const r2 = await s.req('/api/v1/client/services', { headers: c2.h });
  assert.ok(!r2.data.services.some((x: Service) => x.route_id === signinMine));
  assert.ok(!r2.data.services.some((x: Service) => x.route_id === aclMine));
  assert.ok(r2.data.services.some((x: Service) => x.route_id === open));
});

test('dns-check: internal names from peer hostnames, others through the resolver; bad domain 400 with fields', async () => {
  const c = await client();
  await s.req('/api/v1/client/peer/hostname', { method: 'POST', json: { hostname: 'dns-box' }, headers: c.h });
  const internal = await s.req('/api/v1/client/dns-check?domain=dns-box.vpn.internal', { headers: c.h });
  assert.equal(internal.status, 200, JSON.stringify(internal.data));
  const addr = (await s.req(`/api/v1/peers/${c.peerId}`, { headers: admin })).data.peer.allowed_ips.split('/')[0];
  assert.deepEqual(
    { found: internal.data.found, source: internal.data.source, addresses: internal.data.addresses },
    { found: true, source: 'internal', addresses: [{ address: addr, family: 4 }] },
  );
  const srv = await s.req('/api/v1/client/dns-check?domain=server.vpn.internal', { headers: c.h });
  assert.equal(srv.data.addresses[0].address, '10.8.0.1');
  const missing = await s.req('/api/v1/client/dns-check?domain=nobody.vpn.internal', { headers: c.h });
  assert.equal(missing.data.found, false);
  assert.equal(missing.data.error, 'NXDOMAIN');
  const ext = await s.req('/api/v1/client/dns-check?domain=App.Example.Test.', { headers: c.h });
  assert.equal(ext.status, 200);
  assert.equal(ext.data.domain, 'app.example.test');
  assert.equal(ext.data.source, 'system');
  assert.deepEqual(ext.data.addresses.map((a: ExternalAddress) => a.address).sort(), ['192.0.2.10', '192.0.2.11']);
  const nx = await s.req('/api/v1/client/dns-check?domain=nx.example.test', { headers: c.h });
  assert.equal(nx.data.found, false);
  assert.ok(nx.data.error);
  for (const bad of ['', 'a..b', '-x.example', 'x'.repeat(64) + '.test', 'bad_name.test', 'a b']) {
    const r = await s.req(`/api/v1/client/dns-check?domain=${encodeURIComponent(bad)}`, { headers: c.h });
    assert.equal(r.status, 400, bad);
    assert.ok(r.data.fields!.domain, bad);
  }
});

test('update: public; the server version until configured, then the settings; bad settings 400', async () => {
  const r = await s.req('/api/v1/client/update');
  assert.equal(r.status, 200);
  assert.deepEqual({ ...r.data }, { ok: true, version: APP_VERSION, download_url: null, notes: null, source: 'server' });
  assert.ok(r.headers.get('ratelimit-limit'));
  const bad = await s.req('/api/v1/settings/client', { method: 'PUT', json: { update: { version: '', download_url: 'ftp://x' } }, headers: admin });
  assert.equal(bad.status, 400);
  assert.ok(bad.data.fields!['update.version'] && bad.data.fields!['update.download_url'], JSON.stringify(bad.data.fields));
  const set = await s.req('/api/v1/settings/client', {
    method: 'PUT',
    json: { update: { version: '1.2.3', download_url: 'https://downloads.example.test/gatehouse-client-1.2.3.tar.gz', notes: 'Faster polling' } },
    headers: admin,
  });
  assert.equal(set.status, 200, JSON.stringify(set.data));
  const u = await s.req('/api/v1/client/update');
  assert.deepEqual(
    { ...u.data },
    { ok: true, version: '1.2.3', download_url: 'https://downloads.example.test/gatehouse-client-1.2.3.tar.gz', notes: 'Faster polling', source: 'settings' },
  );
  await s.req('/api/v1/settings/client', { method: 'PUT', json: { update: null }, headers: admin });
  assert.equal((await s.req('/api/v1/client/update')).data.source, 'server');
});

test('update from the environment', async () => {
  const e = await startTestServer({ GATEHOUSE_CLIENT_VERSION: '2.0.0', GATEHOUSE_CLIENT_DOWNLOAD_URL: 'https://dl.example.test/c.tgz' });
  try {
    const u = await e.req('/api/v1/client/update');
    assert.deepEqual({ ...u.data }, { ok: true, version: '2.0.0', download_url: 'https://dl.example.test/c.tgz', notes: null, source: 'env' });
  } finally {
    await e.close();
  }
});

test('rate limits: 3 hostname reports per minute per IP (the 4th is 429), 100 client calls per 15 min; Ratelimit headers', async () => {
  const l = await startTestServer({ GATEHOUSE_RATE_LIMIT_ADMIN: '100000' });
  try {
    const { cookie, csrf } = await login(l);
    const t = await l.req('/api/v1/tokens', { method: 'POST', json: { name: 'rl', scopes: ['client'] }, headers: { cookie, 'x-csrf-token': csrf } });
    const h = { ...bearer(t.data.token), 'x-machine-fingerprint': 'rl-machine' };
    const reg = await l.req('/api/v1/client/register', {
      method: 'POST',
      json: { hostname: 'rl', platform: 'linux-x64', client_version: '0.1.0' },
      headers: h,
    });
    assert.equal(reg.status, 201);
    assert.equal(reg.headers.get('ratelimit-limit'), '100');
    for (let i = 1; i <= 3; i++) {
      const r = await l.req('/api/v1/client/peer/hostname', { method: 'POST', json: { hostname: `rl-${i}` }, headers: h });
      assert.equal(r.status, 200, `report ${i}`);
      assert.equal(r.headers.get('ratelimit-limit'), '3');
      assert.equal(r.headers.get('ratelimit-remaining'), String(3 - i));
    }
    const fourth = await l.req('/api/v1/client/peer/hostname', { method: 'POST', json: { hostname: 'rl-4' }, headers: h });
    assert.equal(fourth.status, 429);
    assert.equal(fourth.data.ok, false);
    assert.equal(fourth.headers.get('ratelimit-remaining'), '0');
    assert.ok(Number(fourth.headers.get('ratelimit-reset')) > 0);
    const peer = (await l.req(`/api/v1/peers/${reg.data.peer.id}`, { headers: { cookie } })).data.peer;
    assert.equal(peer.hostname, 'rl-3', 'the refused report changed nothing');
    // the client scope: 100 per 15 minutes (register and 3 hostname reports do not count into it twice)
    let last: Response | undefined;
    let used = 1; // register
    while (used < 100) {
      last = await l.req('/api/v1/client/ping', { headers: h });
      used++;
      assert.equal(last.status, 200, `call ${used}`);
    }
    assert.equal(last!.headers.get('ratelimit-remaining'), '0');
    const over = await l.req('/api/v1/client/config/check', { headers: h });
    assert.equal(over.status, 429);
    assert.equal((await l.req('/api/v1/client/update')).status, 429, 'GET /client/update counts into the same scope');
  } finally {
    await l.close();
  }
});
