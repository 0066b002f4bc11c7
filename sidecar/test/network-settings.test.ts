// Network settings (GET/PUT /api/v1/settings/network, POST /settings/network/skip-setup): this
// server's public host and IPv4, the TLS mode and the ACME e-mail stored in the database over the
// environment, each answered with its source; bad input refused with fields and nothing changed;
// the next peer config carries the new host (and says in a comment where a fresh one comes from);
// peers whose config was handed out with the old endpoint show config_outdated; Check DNS and the
// Caddy renderer follow; the settings travel in a backup and come back with a restore.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import { networkResponse, type NetworkView } from '../src/settings/schema.js';
import { peerListResponse, peerResponse } from '../src/peers/schema.js';
import { startTestServer, apiToken, bearer, type TestServer } from './lib/server.js';

const PASS = 'network backup passphrase';

interface Ctx {
  s: TestServer;
  h: Record<string, string>;
}

async function call<T = never, P extends string = string, M extends string = 'GET'>(
  c: Ctx,
  path: P,
  method?: [T] extends [never] ? M : string,
  json?: unknown,
) {
  return c.s.req<T, `/api/v1${P}`, M>(`/api/v1${path}`, { method, headers: c.h, ...(json === undefined ? {} : { json }) });
}
async function network(c: Ctx): Promise<NetworkView> {
  const r = await call(c, '/settings/network');
  assert.equal(r.status, 200, JSON.stringify(r.data));
  return networkResponse.parse(r.data).network;
}
async function put(c: Ctx, body: Record<string, unknown>): Promise<NetworkView> {
  const r = await call(c, '/settings/network', 'PUT', body);
  assert.equal(r.status, 200, JSON.stringify(r.data));
  return networkResponse.parse(r.data).network;
}
async function newPeer(c: Ctx, name: string): Promise<number> {
  const r = await call(c, '/peers', 'POST', { name });
  assert.equal(r.status, 201, JSON.stringify(r.data));
  return peerResponse.parse(r.data).peer.id;
}
async function configText(c: Ctx, id: number): Promise<string> {
  const r = await call(c, `/peers/${id}/config`);
  assert.equal(r.status, 200);
  return String(r.data);
}
const endpointOf = (text: string) => /^Endpoint = (.+)$/m.exec(text)?.[1];
async function peer(c: Ctx, id: number) {
  const r = await call(c, `/peers/${id}`);
  assert.equal(r.status, 200, JSON.stringify(r.data));
  return peerResponse.parse(r.data).peer;
}

describe('no public host in the environment, a single-label hostname', () => {
  const c = {} as Ctx;
  before(async () => {
    c.s = await startTestServer({ GATEHOUSE_PUBLIC_HOST: '', GATEHOUSE_PUBLIC_IP: '', GATEHOUSE_WG_PORT: '51820' }, { hostname: () => 'gatehouse-box' });
    c.h = bearer(await apiToken(c.s));
  });
  after(() => c.s.close());

  test('GET: the hostname applies (source hostname) with the warning; the set-up step is pending', async () => {
    const n = await network(c);
    assert.deepEqual(n.public_host, {
      value: 'gatehouse-box',
      source: 'hostname',
      stored: null,
      env: null,
      internet_resolvable: false,
      problem: 'single_label',
      warning: n.public_host.warning,
    });
    assert.match(n.public_host.warning ?? '', /Settings → Network/);
    assert.deepEqual(n.tls_mode, { value: 'internal', source: 'env', stored: null, env: 'internal' });
    assert.deepEqual(n.acme_email, { value: null, source: null, stored: null, env: null });
    assert.equal(n.public_ip.stored, null);
    assert.equal(n.hostname, 'gatehouse-box');
    assert.equal(n.endpoint, 'gatehouse-box:51820');
    assert.equal(n.setup, 'pending');
  });

  test('PUT: the stored host applies everywhere; the old config is outdated until a new one is handed out; the file says where to get one', async () => {
    const laptop = await newPeer(c, 'laptop');
    const never = await newPeer(c, 'never-downloaded');
    const old = await configText(c, laptop);
    assert.equal(endpointOf(old), 'gatehouse-box:51820');
    assert.match(old, /^# Gatehouse WireGuard config for peer "laptop" \(#\d+\), made for the endpoint gatehouse-box:51820 /);
    assert.match(old, /^# .*download a fresh config from the admin UI, Peers → laptop \(\/peers\/\d+\)\.$/m);
    assert.equal((await peer(c, laptop)).config_outdated, false);
    assert.equal((await peer(c, laptop)).config_endpoint, 'gatehouse-box:51820');

    const n = await put(c, { public_host: ' VPN.Example.COM ', public_ip: '203.0.113.9', tls_mode: null, acme_email: null });
    assert.equal(n.public_host.value, 'vpn.example.com');
    assert.equal(n.public_host.source, 'settings');
    assert.equal(n.public_host.stored, 'vpn.example.com');
    assert.equal(n.public_host.warning, null);
    assert.deepEqual(n.public_ip, { value: '203.0.113.9', source: 'settings', stored: '203.0.113.9', env: null });
    assert.equal(n.endpoint, 'vpn.example.com:51820');
    assert.equal(n.setup, 'saved');

    // the peer list and the peer's view: the laptop's config carries the old endpoint, the other peer has none
    assert.equal((await peer(c, laptop)).config_outdated, true);
    assert.equal((await peer(c, never)).config_outdated, false);
    const list = peerListResponse.parse((await call(c, '/peers')).data);
    assert.deepEqual(
      list.peers.map((p) => [p.name, p.config_outdated]),
      [
        ['laptop', true],
        ['never-downloaded', false],
      ],
    );
    // the next config carries the new host; handing it out clears the flag
    const fresh = await configText(c, laptop);
    assert.equal(endpointOf(fresh), 'vpn.example.com:51820');
    assert.equal((await peer(c, laptop)).config_outdated, false);
    // the QR code view counts as handed out too
    await put(c, { public_host: 'edge.example.net' });
    assert.equal((await peer(c, laptop)).config_outdated, true);
    const qr = await call(c, `/peers/${laptop}/qr`);
    assert.equal(qr.status, 200);
    assert.equal(endpointOf(z.object({ config: z.string() }).parse(qr.data).config), 'edge.example.net:51820');
    assert.equal((await peer(c, laptop)).config_outdated, false);

    // GET /settings/app says the same; Check DNS names the same server
    const app = z
      .object({
        app: z.object({ public_host: z.object({ host: z.string(), source: z.string() }), wireguard: z.object({ public_host: z.string().nullable() }) }),
      })
      .parse((await call(c, '/settings/app')).data).app;
    assert.deepEqual([app.public_host.host, app.public_host.source, app.wireguard.public_host], ['edge.example.net', 'settings', 'edge.example.net']);
    const dns = await call(c, '/routes/check-dns', 'POST', { domain: 'nothing.invalid' });
    assert.equal(dns.status, 200);
    const d = z.object({ publicHost: z.string(), expectedIp: z.string().nullable(), expectedIpSource: z.string().nullable() }).parse(dns.data);
    assert.deepEqual(d, { publicHost: 'edge.example.net', expectedIp: '203.0.113.9', expectedIpSource: 'settings' });

    // null: back to the hostname fallback
    const back = await put(c, { public_host: null, public_ip: null });
    assert.equal(back.public_host.source, 'hostname');
    assert.equal(back.public_host.value, 'gatehouse-box');
    assert.equal(back.public_ip.value, null);
    assert.equal(back.setup, 'saved', 'saved once stays saved');
  });

  test('activity: a row with its message code per save', async () => {
    const r = await call(c, '/logs/activity?limit=50');
    assert.equal(r.status, 200);
    const rows = z.object({ entries: z.array(z.object({ code: z.string().nullable(), message: z.string() })) }).parse(r.data).entries;
    const saved = rows.filter((e) => e.code === 'settings.network');
    assert.ok(saved.length >= 3, JSON.stringify(rows.slice(0, 5)));
    assert.ok(saved.some((e) => /public host vpn\.example\.com, TLS internal/.test(e.message)));
  });
});

describe('environment set: the stored settings override it, null falls back', () => {
  const c = {} as Ctx;
  before(async () => {
    c.s = await startTestServer(
      { GATEHOUSE_PUBLIC_HOST: 'env.example.com', GATEHOUSE_PUBLIC_IP: '198.51.100.20', GATEHOUSE_ACME_EMAIL: 'ops@example.com', GATEHOUSE_WG_PORT: '51820' },
      { hostname: () => 'gatehouse-box' },
    );
    c.h = bearer(await apiToken(c.s));
  });
  after(() => c.s.close());

  test('GET: every value from the environment; the set-up step is not needed', async () => {
    const n = await network(c);
    assert.deepEqual(
      [n.public_host.value, n.public_host.source, n.public_host.env, n.public_host.warning],
      ['env.example.com', 'env', 'env.example.com', null],
    );
    assert.deepEqual(n.public_ip, { value: '198.51.100.20', source: 'env', stored: null, env: '198.51.100.20' });
    assert.deepEqual(n.acme_email, { value: 'ops@example.com', source: 'env', stored: null, env: 'ops@example.com' });
    assert.equal(n.setup, 'env');
  });

  test('PUT overrides each, the renderer takes the TLS mode and the e-mail; null gives the environment back', async () => {
    const id = await newPeer(c, 'phone');
    assert.equal(endpointOf(await configText(c, id)), 'env.example.com:51820');
    const route = await call(c, '/routes', 'POST', { domain: 'app.example.com', peer_id: id, target_port: 8080, https_enabled: true });
    assert.equal(route.status, 201, JSON.stringify(route.data));
    const issuers = async () => JSON.stringify(await c.s.deps.proxy.render());
    assert.match(await issuers(), /"module":"internal"/);

    const n = await put(c, { public_host: '203.0.113.50', tls_mode: 'acme', acme_email: 'certs@example.org' });
    assert.deepEqual([n.public_host.value, n.public_host.source], ['203.0.113.50', 'settings']);
    assert.deepEqual([n.tls_mode.value, n.tls_mode.source, n.tls_mode.env], ['acme', 'settings', 'internal']);
    assert.deepEqual([n.acme_email.value, n.acme_email.source], ['certs@example.org', 'settings']);
    assert.deepEqual([n.public_ip.value, n.public_ip.source], ['198.51.100.20', 'env'], 'a field left out keeps its (unset) value');
    assert.equal(endpointOf(await configText(c, id)), '203.0.113.50:51820');
    const rendered = await issuers();
    assert.match(rendered, /"module":"acme","email":"certs@example.org"/);
    assert.doesNotMatch(rendered, /"module":"internal"/);
    const app = z.object({ app: z.object({ tls: z.string() }) }).parse((await call(c, '/settings/app')).data).app;
    assert.equal(app.tls, 'acme');

    // an ACME e-mail is optional: acme without one registers the account without a contact
    const noMail = await put(c, { acme_email: null });
    assert.deepEqual([noMail.acme_email.value, noMail.acme_email.source], ['ops@example.com', 'env']);

    const back = await put(c, { public_host: null, tls_mode: null, acme_email: null });
    assert.deepEqual([back.public_host.value, back.public_host.source], ['env.example.com', 'env']);
    assert.deepEqual([back.tls_mode.value, back.tls_mode.source], ['internal', 'env']);
    assert.match(await issuers(), /"module":"internal"/);
    assert.equal(endpointOf(await configText(c, id)), 'env.example.com:51820');
  });

  test('bad input: 400 with fields, nothing changed', async () => {
    await put(c, { public_host: 'kept.example.com', public_ip: null, tls_mode: null, acme_email: null });
    const id = await newPeer(c, 'tablet');
    await configText(c, id);
    const before = await network(c);
    const cases: [Record<string, unknown>, string][] = [
      [{ public_host: 'not a host' }, 'public_host'],
      [{ public_host: 'under_score.example.com' }, 'public_host'],
      [{ public_host: '' }, 'public_host'],
      [{ public_host: 12 }, 'public_host'],
      [{ public_host: 'ok.example.com', public_ip: 'vpn.example.com' }, 'public_ip'],
      [{ public_ip: '300.1.1.1' }, 'public_ip'],
      [{ tls_mode: 'letsencrypt' }, 'tls_mode'],
      [{ acme_email: 'no-at-sign' }, 'acme_email'],
      [{ public_host: 'ok.example.com', extra: 1 }, 'extra'],
    ];
    for (const [body, field] of cases) {
      const r = await call(c, '/settings/network', 'PUT', body);
      assert.equal(r.status, 400, `${JSON.stringify(body)}: ${r.status} ${JSON.stringify(r.data)}`);
      const fields = z.object({ fields: z.record(z.string(), z.string()) }).parse(r.data).fields;
      assert.ok(field in fields, `${JSON.stringify(body)}: ${JSON.stringify(fields)}`);
    }
    // valid by the schema, refused with the stored routes: a wildcard HTTPS route needs internal TLS
    const peerId = await newPeer(c, 'wild-target');
    const wild = await call(c, '/routes', 'POST', { domain: '*.wild.example.com', peer_id: peerId, target_port: 80, https_enabled: true });
    assert.equal(wild.status, 201, JSON.stringify(wild.data));
    const acme = await call(c, '/settings/network', 'PUT', { public_host: 'other.example.com', tls_mode: 'acme' });
    assert.equal(acme.status, 422, JSON.stringify(acme.data));
    assert.match(z.object({ fields: z.object({ tls_mode: z.string() }) }).parse(acme.data).fields.tls_mode, /wildcard/);
    assert.deepEqual(await network(c), before);
    assert.equal(endpointOf(await configText(c, id)), 'kept.example.com:51820');
    assert.equal((await peer(c, id)).config_outdated, false);
  });

  test('writes need a full-access token and the admin role; reads a token with access to settings', async () => {
    const settingsToken = bearer(await apiToken(c.s, ['settings']));
    const w = await c.s.req('/api/v1/settings/network', { method: 'PUT', headers: settingsToken, json: { public_host: 'x.example.com' } });
    assert.equal(w.status, 403);
    const skip = await c.s.req('/api/v1/settings/network/skip-setup', { method: 'POST', headers: settingsToken });
    assert.equal(skip.status, 403);
    assert.equal((await network(c)).public_host.value, 'kept.example.com');
  });
});

describe('skip and backup round-trip', () => {
  const c = {} as Ctx;
  before(async () => {
    c.s = await startTestServer({ GATEHOUSE_PUBLIC_HOST: '', GATEHOUSE_WG_PORT: '51820' }, { hostname: () => 'box.lan' });
    c.h = bearer(await apiToken(c.s));
  });
  after(() => c.s.close());

  test('skip-setup is remembered (and logged); a save afterwards counts as saved', async () => {
    assert.equal((await network(c)).setup, 'pending');
    const r = await call(c, '/settings/network/skip-setup', 'POST');
    assert.equal(r.status, 200, JSON.stringify(r.data));
    assert.equal(networkResponse.parse(r.data).network.setup, 'skipped');
    assert.equal((await network(c)).setup, 'skipped');
    const rows = z
      .object({ entries: z.array(z.object({ code: z.string().nullable() })) })
      .parse((await call(c, '/logs/activity?limit=20')).data)
      .entries.map((e) => e.code);
    assert.ok(rows.includes('settings.network_setup_skipped'), JSON.stringify(rows));
  });

  test('the settings travel in a backup: a restore brings them back and the next config carries them', async () => {
    await put(c, { public_host: 'backup.example.com', public_ip: '203.0.113.77', tls_mode: 'internal', acme_email: 'a@example.com' });
    const id = await newPeer(c, 'desk');
    const doc = await c.s.req('/api/v1/settings/backup', { headers: { ...c.h, 'x-backup-passphrase': PASS } });
    assert.equal(doc.status, 200);
    const text = typeof doc.data === 'string' ? doc.data : JSON.stringify(doc.data);
    await put(c, { public_host: 'changed.example.com', public_ip: null, acme_email: null });
    assert.equal(endpointOf(await configText(c, id)), 'changed.example.com:51820');

    const form = new FormData();
    form.set('passphrase', PASS);
    form.set('file', new Blob([text], { type: 'application/json' }), 'backup.json');
    const res = await c.s.req('/api/v1/settings/backup/restore?mode=replace', { method: 'POST', headers: c.h, body: form });
    assert.equal(res.status, 200, JSON.stringify(res.data));
    const n = await network(c);
    assert.deepEqual(
      [n.public_host.value, n.public_host.source, n.public_ip.value, n.acme_email.value, n.setup],
      ['backup.example.com', 'settings', '203.0.113.77', 'a@example.com', 'saved'],
    );
    assert.equal(endpointOf(await configText(c, id)), 'backup.example.com:51820');
  });
});
