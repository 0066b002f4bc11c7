// Per-peer client AllowedIPs (client_allowed_ips): full or split tunnel in the peer's config, through
// the admin's download, the QR code, a one-time config link and the desktop client API; bad input
// refused with fields and nothing written; config_outdated after a change. (GATEHOUSE_WG_MANAGE=false:
// the forwarding and NAT part is in test/wireguard-nat.test.ts and test/e2e/full-tunnel.test.ts.)
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, apiToken, bearer, login, type TestServer, apiInit } from './lib/server.js';
import type { Peer } from './lib/protocol.js';
import { normalizeCidr } from '../src/peers/cidr.js';
import type { Refusal } from './lib/api-types.js';

let s: TestServer;
let h: Record<string, string>;
const api = apiInit(
  () => s,
  () => h,
);
const allowedLine = (conf: string) => /^AllowedIPs = (.*)$/m.exec(conf)?.[1];

before(async () => {
  s = await startTestServer({
    GATEHOUSE_WG_SUBNET: '10.78.0.0/24',
    GATEHOUSE_PUBLIC_HOST: 'vpn.example.test',
    GATEHOUSE_RATE_LIMIT_ADMIN: '100000',
    GATEHOUSE_RATE_LIMIT_CLIENT: '100000',
  });
  h = bearer(await apiToken(s));
});
after(async () => s.close());

describe('client_allowed_ips', () => {
  test('normalised CIDRs: host bits cleared, IPv6 compressed, IPv4 dotted decimal only', () => {
    assert.equal(normalizeCidr('192.168.1.77/24'), '192.168.1.0/24');
    assert.equal(normalizeCidr('FD00:0:0:0::5/64'), 'fd00::/64');
    assert.equal(normalizeCidr('::/0'), '::/0');
    assert.equal(normalizeCidr('2001:0:0:1:0:0:0:1/128'), '2001:0:0:1::1/128');
    for (const bad of ['10.1/16', '1.2.3.4/33', '1.2.3.4', 'fe80::1%eth0/64', '::/129', '010.1.2.3/8', 'x/1', '']) assert.equal(normalizeCidr(bad), null, bad);
  });

  test('default null: the config routes the VPN subnet; full tunnel and a split list are carried by download, QR and config link', async () => {
    const plain = (await api('/peers', { method: 'POST', json: { name: 'cai default' } })).data.peer as Peer;
    assert.equal(plain.client_allowed_ips, null);
    assert.equal(plain.full_tunnel, false);
    assert.equal(allowedLine((await api<string>(`/peers/${plain.id}/config`)).data), '10.78.0.0/24');

    const full = await api('/peers', { method: 'POST', json: { name: 'cai full', client_allowed_ips: ['0.0.0.0/0', '::/0'] } });
    assert.equal(full.status, 201, JSON.stringify(full.data));
    assert.deepEqual(full.data.peer.client_allowed_ips, ['0.0.0.0/0', '::/0']);
    assert.equal(full.data.peer.full_tunnel, true);
    const id = full.data.peer.id;
    assert.equal(allowedLine((await api<string>(`/peers/${id}/config`)).data), '0.0.0.0/0, ::/0');
    assert.equal(allowedLine((await api(`/peers/${id}/qr`)).data.config), '0.0.0.0/0, ::/0');

    // split: normalised, duplicates removed, order kept
    const put = await api(`/peers/${id}`, { method: 'PUT', json: { client_allowed_ips: [' 10.78.0.0/24', '192.168.1.9/24', '192.168.1.0/24', 'FD00::1/64'] } });
    assert.equal(put.status, 200, JSON.stringify(put.data));
    assert.deepEqual(put.data.peer.client_allowed_ips, ['10.78.0.0/24', '192.168.1.0/24', 'fd00::/64']);
    assert.equal(put.data.peer.full_tunnel, false);
    const link = await api(`/peers/${id}/config-links`, { method: 'POST', json: {} });
    assert.equal(link.status, 201, JSON.stringify(link.data));
    const got = await s.req(link.data.path, { method: 'POST' });
    assert.equal(got.status, 200);
    assert.equal(allowedLine(String(got.data)), '10.78.0.0/24, 192.168.1.0/24, fd00::/64');

    // back to the default
    const reset = await api(`/peers/${id}`, { method: 'PUT', json: { client_allowed_ips: null } });
    assert.equal(reset.data.peer.client_allowed_ips, null);
    assert.equal(allowedLine((await api<string>(`/peers/${id}/config`)).data), '10.78.0.0/24');
  });

  test('config_outdated: a config handed out before client_allowed_ips changed is outdated until a new one is handed out', async () => {
    const p = (await api('/peers', { method: 'POST', json: { name: 'cai outdated' } })).data.peer as Peer;
    assert.equal(p.config_outdated, false, 'nothing handed out yet');
    await api(`/peers/${p.id}/config`);
    assert.equal((await api(`/peers/${p.id}`)).data.peer.config_outdated, false);
    const changed = await api(`/peers/${p.id}`, { method: 'PUT', json: { client_allowed_ips: ['0.0.0.0/0'] } });
    assert.equal(changed.data.peer.config_outdated, true);
    const same = await api(`/peers/${p.id}`, { method: 'PUT', json: { client_allowed_ips: ['0.0.0.0/0'] } });
    assert.equal(same.data.peer.config_outdated, true, 'the same value again changes nothing');
    await api(`/peers/${p.id}/qr`);
    assert.equal((await api(`/peers/${p.id}`)).data.peer.config_outdated, false, 'the QR code handed out the new config');
    await api(`/peers/${p.id}`, { method: 'PUT', json: { client_allowed_ips: null } });
    assert.equal((await api(`/peers/${p.id}`)).data.peer.config_outdated, true, 'back to the default is a change too');
    // an untouched peer stays current
    const other = (await api('/peers', { method: 'POST', json: { name: 'cai untouched' } })).data.peer as Peer;
    await api(`/peers/${other.id}/config`);
    await api(`/peers/${other.id}`, { method: 'PUT', json: { description: 'x' } });
    assert.equal((await api(`/peers/${other.id}`)).data.peer.config_outdated, false);
  });

  test('bad input: 400 with fields.client_allowed_ips and a coded message, nothing written', async () => {
    const p = (await api('/peers', { method: 'POST', json: { name: 'cai bad', client_allowed_ips: ['10.0.0.0/8'] } })).data.peer as Peer;
    const count = await s.deps.db.models.Peer.count();
    const cases: [unknown, string | RegExp][] = [
      [['10.0.0.0/33'], 'peer.field.not_cidr'],
      [['192.168.1.0/24', 'fe80::1%eth0/64'], 'peer.field.not_cidr'],
      [['example.com/24'], 'peer.field.not_cidr'],
      [['10.1/16'], 'peer.field.not_cidr'],
      [[], 'schema.at_least_one_cidr'],
      [Array.from({ length: 65 }, (_, i) => `10.${i}.0.0/16`), 'field.max_cidrs'],
      ['0.0.0.0/0', /./],
    ];
    for (const [value, code] of cases) {
      for (const [path, method, extra] of [
        ['/peers', 'POST', { name: 'cai bad new' }],
        [`/peers/${p.id}`, 'PUT', {}],
      ] as const) {
        const r = await api<Refusal>(path, { method, json: { ...extra, client_allowed_ips: value } });
        assert.equal(r.status, 400, `${method} ${JSON.stringify(value)}: ${JSON.stringify(r.data)}`);
        assert.ok(r.data.fields?.client_allowed_ips, JSON.stringify(r.data));
        if (typeof code === 'string') assert.equal(r.data.field_codes?.client_allowed_ips?.code, code, JSON.stringify(r.data));
      }
    }
    const typed = await api(`/peers/${p.id}`, { method: 'PUT', json: { client_allowed_ips: [7] } });
    assert.equal(typed.status, 400);
    assert.ok(typed.data.fields!['client_allowed_ips.0'], 'a list item of another type is named by its index');
    const bad = await api(`/peers/${p.id}`, { method: 'PUT', json: { client_allowed_ips: ['10.0.0.0/33'] } });
    assert.match(bad.data.fields!.client_allowed_ips, /"10\.0\.0\.0\/33" is not a CIDR/);
    assert.equal(await s.deps.db.models.Peer.count(), count, 'no peer created');
    assert.deepEqual((await api(`/peers/${p.id}`)).data.peer.client_allowed_ips, ['10.0.0.0/8'], 'the peer unchanged');

    // a gateway routes the VPN subnet: no client_allowed_ips for it
    const gw = await api('/peers', { method: 'POST', json: { name: 'cai gw', is_gateway: true, client_allowed_ips: ['0.0.0.0/0'] } });
    assert.equal(gw.status, 422, 'a rule between fields');
    assert.equal(gw.data.field_codes?.client_allowed_ips?.code, 'peer.field.client_allowed_ips_regular_only');
    assert.equal(await s.deps.db.models.Peer.count(), count);
  });

  test("the desktop client's config: the peer's client_allowed_ips win over the token's split tunnel", async () => {
    const { cookie, csrf } = await login(s);
    const admin = { cookie, 'x-csrf-token': csrf };
    const tok = await s.req('/api/v1/tokens', { method: 'POST', json: { name: 'cai client', scopes: ['client'] }, headers: admin });
    assert.equal(tok.status, 201, JSON.stringify(tok.data));
    const split = await s.req(`/api/v1/tokens/${tok.data.record.id}`, { method: 'PATCH', json: { split_tunnel: ['192.168.5.0/24'] }, headers: admin });
    assert.equal(split.status, 200, JSON.stringify(split.data));
    const as = { ...bearer(tok.data.token), 'x-machine-fingerprint': 'cai-machine' };
    const reg = await s.req('/api/v1/client/register', {
      method: 'POST',
      json: { hostname: 'cai-box', platform: 'linux-x64', client_version: '0.1.0' },
      headers: as,
    });
    assert.equal(reg.status, 201, JSON.stringify(reg.data));
    const before = await s.req('/api/v1/client/config', { headers: as });
    assert.equal(allowedLine(before.data.config), '10.78.0.0/24, 192.168.5.0/24');
    await api(`/peers/${reg.data.peer.id}`, { method: 'PUT', json: { client_allowed_ips: ['0.0.0.0/0', '::/0'] } });
    const now = await s.req('/api/v1/client/config', { headers: as });
    assert.equal(allowedLine(now.data.config), '0.0.0.0/0, ::/0');
    assert.deepEqual(now.data.allowed_ips, ['0.0.0.0/0', '::/0']);
    assert.notEqual(now.data.config_hash, before.data.config_hash, 'the client sees a new config');
  });
});
