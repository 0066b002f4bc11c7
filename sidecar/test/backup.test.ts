// Backup and restore: a rich data set made through the API, downloaded, restored in replace mode
// into a fresh install (new data directory, NEW master key): every API listing equals the original
// and the old logins and tokens work. Merge and dry run; a damaged or wrong document changes nothing;
// the migration hook with a synthetic older document.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startTestServer, apiToken, bearer, login, ADMIN, type TestServer, callOn } from './lib/server.js';
import type { BodyOf } from './lib/api-types.js';
import { SECTIONS } from '../src/backup/sections.js';
import { resealDocument } from '../src/backup/document.js';
import type { BackupDocument } from '../src/backup/schema.js';
import { PassphraseKey } from '../src/backup/envelope.js';
import { BackupService } from '../src/backup/service.js';
import type { Row } from './lib/rows.js';
import type { BackupJob, Group, Peer, PlanItem, Route, User } from './lib/protocol.js';
import { at } from '../../test/lib/json.js';

const PASS = 'correct horse battery staple';
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');
const ENV = {
  GATEHOUSE_WEBHOOK_ALLOW_PRIVATE: 'true',
  GATEHOUSE_RATE_LIMIT_ADMIN: '100000',
  GATEHOUSE_RATE_LIMIT_LOGIN: '100000',
  GATEHOUSE_WG_SUBNET: '10.77.0.0/24',
  GATEHOUSE_PUBLIC_HOST: 'vpn.example.test',
};
const NEW_ADMIN_PASSWORD = 'a-new-admin-password-9';

let src: TestServer;
let h: Record<string, string>;
const ids: Record<string, number> = {};
let userToken = '';

/** call(server, headers, path, method?, json?): the API of either server (callOn). */
const call = callOn;
/** call() that asserts a 2xx answer and returns its body. */
async function ok<P extends string, M extends string = 'GET'>(s: TestServer, hh: Record<string, string>, p: P, method?: M, json?: unknown) {
  const r = await call<never, P, M>(s, hh, p, method, json);
  assert.ok(r.status >= 200 && r.status < 300, `${method ?? 'GET'} ${p}: ${r.status} ${JSON.stringify(r.data)}`);
  return r.data;
}

async function download(
  s: TestServer,
  hh: Record<string, string>,
  passphrase = PASS,
  q = '',
): Promise<{ res: Response & { data: BodyOf<'GET', '/api/v1/settings/backup'> }; text: string }> {
  const res = await s.req<BodyOf<'GET', '/api/v1/settings/backup'>>(`/api/v1/settings/backup${q}`, { headers: { ...hh, 'x-backup-passphrase': passphrase } });
  return { res, text: typeof res.data === 'string' ? res.data : JSON.stringify(res.data) };
}

async function restore(s: TestServer, hh: Record<string, string>, doc: string, q: string, passphrase = PASS) {
  const form = new FormData();
  form.set('passphrase', passphrase);
  form.set('file', new Blob([doc], { type: 'application/json' }), 'backup.json');
  return s.req(`/api/v1/settings/backup/restore?${q}`, { method: 'POST', headers: hh, body: form });
}

/** Every listing the API has for the backed-up data (sorted, so that order cannot hide a difference). */
async function listings(s: TestServer, hh: Record<string, string>): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  // the configs first: handing one out records its endpoint on the peer (config_endpoint), which the views below show
  for (const p of (await ok(s, hh, '/peers?limit=1000')).peers) {
    const cfg = await s.req(`/api/v1/peers/${p.id}/config`, { headers: hh });
    out[`peer ${p.name} config`] = cfg.data; // the client config: private key, preshared key, server key
  }
  const peers = (await ok(s, hh, '/peers?limit=1000')).peers;
  out.peers = peers;
  for (const p of peers) out[`peer ${p.name}`] = await ok(s, hh, `/peers/${p.id}`);
  out.groups = await ok(s, hh, '/peer-groups');
  out.tags = await ok(s, hh, '/tags');
  const routes = (await ok(s, hh, '/routes?limit=1000')).routes as Route[];
  out.routes = routes;
  for (const r of routes) {
    out[`route ${r.domain} ${r.id}`] = await ok(s, hh, `/routes/${r.id}`);
    out[`route ${r.domain} ${r.id} auth`] = await ok(s, hh, `/routes/${r.id}/auth`);
    const logo = await s.req(`/api/v1/routes/${r.id}/branding/logo`, { headers: hh });
    out[`route ${r.id} logo`] =
      logo.status === 200
        ? Buffer.from(await (await fetch(`${s.url}/api/v1/routes/${r.id}/branding/logo`, { headers: hh })).arrayBuffer()).toString('base64')
        : logo.status;
  }
  out.gateways = await ok(s, hh, '/gateways');
  out.users = await ok(s, hh, '/users');
  out.tokens = await ok(s, hh, '/tokens');
  out.smtp = await ok(s, hh, '/smtp');
  out.security = await ok(s, hh, '/settings/security');
  out.monitoring = await ok(s, hh, '/settings/monitoring');
  out.webhooks = await ok(s, hh, '/webhooks');
  out.jobs = ((await ok(s, hh, '/settings/autobackup')).jobs as BackupJob[]).map((j) => ({ ...j, next_run_at: null }));
  return JSON.parse(JSON.stringify(out));
}

before(async () => {
  src = await startTestServer(ENV);
  h = bearer(await apiToken(src));
  // groups, tags, peers (regular, disabled, in a group, tagged, expiring), a gateway
  ids.g1 = (await ok(src, h, '/peer-groups', 'POST', { name: 'Office', color: '#336699', description: 'the office' })).group.id;
  ids.g2 = (await ok(src, h, '/peer-groups', 'POST', { name: 'Home' })).group.id;
  await ok(src, h, '/tags', 'POST', { name: 'prod' });
  ids.p1 = (
    await ok(src, h, '/peers', 'POST', { name: 'laptop', description: 'work laptop', tags: 'prod,eu', group_id: ids.g1, expires_at: '2031-01-01' })
  ).peer.id;
  ids.p2 = (await ok(src, h, '/peers', 'POST', { name: 'phone', group_id: ids.g2, persistent_keepalive: 25 })).peer.id;
  ids.p3 = (await ok(src, h, '/peers', 'POST', { name: 'old-box' })).peer.id;
  await ok(src, h, `/peers/${ids.p3}/toggle`, 'PUT');
  ids.gw = (await ok(src, h, '/peers', 'POST', { name: 'home-gw', is_gateway: true, api_port: 9100 })).peer.id;
  ids.gone = (await ok(src, h, '/peers', 'POST', { name: 'gone-before-backup' })).peer.id;
  // users and tokens
  ids.u1 = (await ok(src, h, '/users', 'POST', { username: 'operator', email: 'op@example.test', password: 'operator-pass-1', role: 'user' })).user.id;
  ids.u2 = (await ok(src, h, '/users', 'POST', { username: 'second-admin', email: 'a2@example.test', password: 'second-admin-pass-1', role: 'admin' })).user.id;
  userToken = (await ok(src, h, '/tokens', 'POST', { name: 'ci', scopes: ['peers', 'routes'], user_id: ids.u1, expires_at: '2032-01-01' })).token;
  // routes: HTTP with every setting, L4, to a gateway's LAN host, protected with route auth + image
  ids.r1 = (
    await ok(src, h, '/routes', 'POST', {
      domain: 'app.example.test',
      description: 'the app',
      peer_id: ids.p1,
      target_port: 8080,
      https_enabled: true,
      backend_https: true,
      compress_enabled: true,
      rate_limit_enabled: true,
      rate_limit_requests: 100,
      rate_limit_window: '1m',
      retry_enabled: true,
      retry_count: 3,
      retry_status_codes: '502,503',
      circuit_breaker_enabled: true,
      circuit_breaker_threshold: 5,
      circuit_breaker_timeout: 30,
      acl_enabled: true,
      acl_peer_ids: [ids.p1, ids.p2],
      // several backends: the second on a peer nothing else names (a merge must map the ids inside the list)
      backends: [
        { peer_id: ids.p1, target_port: 8080 },
        { peer_id: ids.p3, target_port: 8081 },
      ],
      lb_policy: 'cookie',
      lb_cookie_name: 'app_lb',
      // mirror targets: on a peer, on a URL, and (below) on a peer deleted before the backup
      mirror_enabled: true,
      mirror_targets: [{ peer_id: ids.p2, port: 9000 }, { url: 'http://mirror.example.test' }, { peer_id: ids.gone, port: 9001 }],
      basic_auth_user: 'bob',
      basic_auth_password: 'basic secret pw',
    })
  ).route.id;
  // deleting a peer leaves the mirror targets that name it (nothing refuses it): the backup carries a dangling id
  assert.equal((await call(src, h, `/peers/${ids.gone}`, 'DELETE')).status, 200);
  ids.r4 = (
    await ok(src, h, '/routes', 'POST', {
      domain: 'filtered.example.test',
      peer_id: ids.p2,
      target_port: 80,
      ip_filter_enabled: true,
      ip_filter_mode: 'whitelist',
      ip_filter_rules: [{ value: '10.0.0.0/8' }],
    })
  ).route.id;
  ids.r2 = (
    await ok(src, h, '/routes', 'POST', {
      domain: 'ssh.example.test',
      route_type: 'l4',
      l4_protocol: 'tcp',
      l4_listen_port: 2222,
      peer_id: ids.p2,
      target_port: 22,
    })
  ).route.id;
  ids.r3 = (
    await ok(src, h, '/routes', 'POST', {
      domain: 'nas.example.test',
      target_kind: 'gateway',
      target_peer_id: ids.gw,
      target_lan_host: '192.168.1.20',
      target_lan_port: 5000,
      monitoring_enabled: true,
      user_ids: [ids.u1],
    })
  ).route.id;
  await ok(src, h, `/routes/${ids.r3}/auth`, 'POST', {
    method: 'email_password',
    email: 'owner@example.test',
    password: 'route-auth-pass-1',
    session_max_age: 24 * 3600_000,
    title: 'NAS',
    primary_color: '#112233',
  });
  await ok(src, h, `/routes/${ids.r3}/auth/totp-setup`, 'POST');
  const form = new FormData();
  form.set('file', new Blob([PNG], { type: 'image/png' }), 'logo.png');
  const up = await src.req(`/api/v1/routes/${ids.r3}/branding/logo`, { method: 'POST', headers: h, body: form });
  assert.equal(up.status, 200, JSON.stringify(up.data));
  // SMTP (password sealed at rest), security, monitoring, an auto-backup job
  await ok(src, h, '/smtp', 'PUT', {
    host: 'mail.example.test',
    port: 587,
    secure: false,
    user: 'mailer',
    password: 'smtp-secret-1',
    from: 'Gatehouse <gh@example.test>',
  });
  await ok(src, h, '/settings/security', 'PUT', { lockout: { max_attempts: 7, duration: 20 } });
  await ok(src, h, '/settings/monitoring', 'PUT', { interval_seconds: 120 });
  await ok(src, h, '/webhooks', 'POST', {
    name: 'ops hook',
    url: 'http://127.0.0.1:9/hook',
    events: ['peer_created', 'backup_failed'],
    enabled: false,
    secret: 'webhook-secret-0123456789',
    retry_count: 5,
  });
  await ok(src, h, '/settings/autobackup', 'POST', { name: 'nightly', schedule: 'daily', keep: 5, target: 'local', passphrase: 'job passphrase 123' });
  // the admin's own password changes (the restored server must take this one, not its bootstrap one)
  const admin = (await ok(src, h, '/users')).users.find((u: User) => u.username === ADMIN.username);
  await ok(src, h, `/users/${admin!.id}`, 'PUT', { password: NEW_ADMIN_PASSWORD });
});
after(async () => src.close());

test('every table is in the backup or excluded with a reason', async () => {
  // (the full check, column by column, is backup-coverage.test.ts; here: the sections are not empty)
  const { res } = await download(src, h);
  assert.equal(res.status, 200);
  const doc = res.data as BackupDocument;
  for (const s of SECTIONS) assert.ok(Array.isArray(doc.sections[s.name]), s.name);
  for (const name of ['users', 'peers', 'peer_groups', 'tags', 'routes', 'route_auth', 'gateways', 'api_tokens', 'settings', 'backup_jobs', 'webhooks'])
    assert.ok(doc.sections[name].length > 0, `${name} has rows`);
});

test('download: attachment with a safe name, no secret in plaintext, passphrase required', async () => {
  const { res, text } = await download(src, h, PASS, '?format=download');
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-disposition') ?? '', /^attachment; filename="gatehouse-backup-\d{8}T\d{9}Z\.json"$/);
  assert.equal(res.headers.get('cache-control'), 'no-store');
  // secrets: not as plaintext, and not as values sealed with the master key either
  const peerCfg = (await src.req(`/api/v1/peers/${ids.p1}/config`, { headers: h })).data as string;
  const priv = /PrivateKey\s*=\s*(\S+)/.exec(peerCfg)![1];
  const psk = /PresharedKey\s*=\s*(\S+)/.exec(peerCfg)![1];
  for (const secret of [priv, psk, 'webhook-secret-0123456789', 'smtp-secret-1', 'basic secret pw', 'route-auth-pass-1', userToken, NEW_ADMIN_PASSWORD])
    assert.ok(!text.includes(secret), `no plaintext ${secret.slice(0, 6)}…`);
  assert.doesNotMatch(text, /"v1:[A-Za-z0-9_-]{16}:/, 'no value sealed with the master key');
  assert.doesNotMatch(text, /\$argon2|\$2[aby]\$/, 'password hashes are sealed too');
  // no passphrase / too short: 400 naming the header (the document requires it, at least 12 characters)
  const none = await src.req('/api/v1/settings/backup', { headers: h });
  assert.equal(none.status, 400);
  assert.ok(none.data.fields!['X-Backup-Passphrase']);
  const short = await download(src, h, 'short');
  assert.equal(short.res.status, 400);
  assert.ok(short.res.data.fields!['X-Backup-Passphrase']);
  // a user without the admin role may not (a backup holds every secret)
  const op = await src.req('/api/v1/settings/backup', { headers: { ...bearer(userToken), 'x-backup-passphrase': PASS } });
  assert.equal(op.status, 403);
});

test('replace restore into a fresh install (new data dir, new master key): every listing equal, old logins and tokens work', async () => {
  const before = await listings(src, h);
  const { text } = await download(src, h);
  const dst = await startTestServer(ENV);
  try {
    assert.notEqual(fs.readFileSync(path.join(dst.dataDir, 'master.key'), 'utf8'), fs.readFileSync(path.join(src.dataDir, 'master.key'), 'utf8'));
    const { cookie, csrf } = await login(dst);
    const hh = { cookie, 'x-csrf-token': csrf };
    // dry run first: lists, writes nothing
    const dry = await restore(dst, hh, text, 'mode=replace&dry_run=1');
    assert.equal(dry.status, 200, JSON.stringify(dry.data));
    assert.equal(dry.data.dry_run, true);
    assert.equal(dry.data.plan.peers.created.length, 4);
    assert.deepEqual(dry.data.plan.routes.created.map((r: PlanItem) => r.label).sort(), [
      'app.example.test',
      'filtered.example.test',
      'nas.example.test',
      'ssh.example.test (tcp/2222)',
    ]);
    assert.equal((await ok(dst, hh, '/peers')).peers.length, 0, 'the dry run wrote nothing');
    const r = await restore(dst, hh, text, 'mode=replace');
    assert.equal(r.status, 200, JSON.stringify(r.data));
    assert.equal(r.data.dry_run, false);
    assert.deepEqual(r.data.applied, { proxy: null, wireguard: null });
    // replace ended every sign-in; the restored admin signs in with the password from the backup
    assert.equal((await dst.req('/api/v1/peers', { headers: hh })).status, 401);
    await assert.rejects(login(dst));
    const again = await login(dst, { username: ADMIN.username, password: NEW_ADMIN_PASSWORD });
    const h2 = { cookie: again.cookie, 'x-csrf-token': again.csrf };
    await login(dst, { username: 'operator', password: 'operator-pass-1' });
    // the old token works (scope peers)
    assert.equal((await dst.req('/api/v1/peers', { headers: bearer(userToken) })).status, 200);
    // every listing equal (tokens' last_used_at moved on the first server only by our own use)
    const after = await listings(dst, h2);
    const strip = (x: unknown) => JSON.parse(JSON.stringify(x, (k, v) => (k === 'last_used_at' || k === 'last_login_at' ? null : v)));
    assert.deepEqual(strip(after), strip(before));
    // SMTP password came back (sealed under the new key): the transport opens it
    const stored = JSON.parse(((await dst.deps.db.models.Setting.findByPk('smtp', { raw: true })) as Row<'Setting'> | null)!.value);
    assert.equal(dst.deps.crypto.open(stored.password), 'smtp-secret-1');
    const hook = ((await dst.deps.db.models.Webhook.findOne({ raw: true })) as Row<'Webhook'> | null)!;
    assert.equal(dst.deps.crypto.open(hook.secret_enc), 'webhook-secret-0123456789');
    // the WireGuard server key is the old one (old client configs name it)
    assert.equal(
      (after[`peer laptop config`] as string).match(/\[Peer\]\s*PublicKey\s*=\s*(\S+)/)![1],
      (before[`peer laptop config`] as string).match(/\[Peer\]\s*PublicKey\s*=\s*(\S+)/)![1],
    );
    // a restore activity row
    const act = await ok(dst, h2, '/logs/activity?event_type=backup_restored');
    assert.equal(act.entries?.length ?? at(act, 'logs', 'length') ?? at(act, 'activity', 'length'), 1, JSON.stringify(act).slice(0, 300));
  } finally {
    await dst.close();
  }
});

test('merge: adds and updates by identity, removes nothing; dry run lists the same and writes nothing', async () => {
  const { text } = await download(src, h);
  const dst = await startTestServer(ENV);
  try {
    const hh = bearer(await apiToken(dst));
    // the destination has its own data: a peer, a group with the same name as the source's, a route
    const own = (await ok(dst, hh, '/peers', 'POST', { name: 'dst-only' })).peer;
    await ok(dst, hh, '/peer-groups', 'POST', { name: 'Office', color: '#000000' });
    await ok(dst, hh, '/routes', 'POST', { domain: 'dst.example.test', peer_id: own.id, target_port: 80 });
    const dry = await restore(dst, hh, text, 'mode=merge&dry_run=1');
    assert.equal(dry.status, 200, JSON.stringify(dry.data));
    assert.deepEqual(
      dry.data.plan.peer_groups.created.map((x: PlanItem) => x.label),
      ['Home'],
    );
    assert.deepEqual(
      dry.data.plan.peer_groups.changed.map((x: PlanItem) => [x.label, x.fields!.includes('color')]),
      [['Office', true]],
    );
    assert.equal(dry.data.summary.removed, 0);
    const counts = async () => Object.fromEntries(await Promise.all(SECTIONS.map(async (s) => [s.name, await s.model(dst.deps.db.models).count()] as const)));
    const before = await counts();
    assert.equal((await restore(dst, hh, text, 'mode=merge&dry_run=1')).status, 200);
    assert.deepEqual(await counts(), before, 'dry run wrote nothing');
    const r = await restore(dst, hh, text, 'mode=merge');
    assert.equal(r.status, 200, JSON.stringify(r.data));
    assert.deepEqual(r.data.plan.peers.created.map((x: PlanItem) => x.label).sort(), dry.data.plan.peers.created.map((x: PlanItem) => x.label).sort());
    const peers = (await ok(dst, hh, '/peers?limit=100')).peers as Peer[];
    assert.deepEqual(peers.map((p) => p.name).sort(), ['dst-only', 'home-gw', 'laptop', 'old-box', 'phone']);
    const groups = (await ok(dst, hh, '/peer-groups')).groups as Group[];
    assert.equal(groups.find((g) => g.name === 'Office')!.color, '#336699');
    // references follow the new ids: the app route's peer and ACL, the NAS route's users
    const routes = (await ok(dst, hh, '/routes?limit=100')).routes as Route[];
    const app = routes.find((x) => x.domain === 'app.example.test')!;
    const laptop = peers.find((p) => p.name === 'laptop')!;
    const phone = peers.find((p) => p.name === 'phone')!;
    assert.equal(app.peer_id, laptop.id);
    assert.deepEqual([...app.acl_peer_ids].sort(), [laptop.id, phone.id].sort());
    // the backends' peers too, and the index that keeps a backend's peer from being deleted
    const oldBox = peers.find((p) => p.name === 'old-box')!;
    assert.deepEqual(
      app.backends.map((b) => [b.peer_id, b.target_port]),
      [
        [laptop.id, 8080],
        [oldBox.id, 8081],
      ],
    );
    // mirror targets: the peer's id mapped, the URL kept, the one on a peer deleted before the backup dropped
    assert.deepEqual(app.mirror_targets, [{ peer_id: phone.id, port: 9000 }, { url: 'http://mirror.example.test' }]);
    const del = await call(dst, hh, `/peers/${oldBox.id}`, 'DELETE');
    assert.equal(del.status, 409, `old-box is a backend of app.example.test: ${JSON.stringify(del.data)}`);
    assert.ok(
      routes.find((x) => x.domain === 'dst.example.test'),
      'merge removed nothing',
    );
    const nas = routes.find((x) => x.domain === 'nas.example.test')!;
    const op = ((await ok(dst, hh, '/users')).users as User[]).find((u) => u.username === 'operator')!;
    assert.deepEqual(nas.user_ids, [op.id]);
    const auth = await ok(dst, hh, `/routes/${nas.id}/auth`);
    assert.equal(auth.route_auth!.title, 'NAS');
    assert.ok(auth.route_auth!.logo, 'the logo came along');
    // a second merge of the same document changes nothing
    const again = await restore(dst, hh, text, 'mode=merge&dry_run=1');
    assert.equal(again.data.summary.created, 0);
  } finally {
    await dst.close();
  }
});

test('a bad, damaged or wrongly sealed document: 400 with fields, nothing changed', async () => {
  const { text } = await download(src, h);
  const snapshot = async () => {
    const out: Record<string, unknown> = {};
    for (const s of SECTIONS) out[s.name] = await s.model(src.deps.db.models).findAll({ raw: true, order: [[s.pk, 'ASC']] });
    out.sessions = await src.deps.db.models.Session.count();
    return JSON.parse(JSON.stringify(out));
  };
  const before = await snapshot();
  const doc = JSON.parse(text) as BackupDocument;
  const cases: [string, string, string, string?][] = [
    ['not JSON', text.slice(0, text.length / 2), 'file'],
    ['not a backup', JSON.stringify({ hello: 'world' }), 'format'],
    ['newer version', JSON.stringify({ ...doc, version: 99 }), 'version'],
    ['wrong passphrase', text, 'passphrase', 'not the passphrase at all'],
    [
      'a value changed',
      JSON.stringify({ ...doc, sections: { ...doc.sections, peers: doc.sections.peers.map((p, i) => (i === 0 ? { ...p, name: 'tampered' } : p)) } }),
      'integrity',
    ],
    ['no integrity', JSON.stringify({ ...doc, integrity: undefined }), 'integrity'],
  ];
  for (const [what, body, field, pass] of cases) {
    for (const mode of ['replace', 'merge']) {
      const r = await restore(src, h, body, `mode=${mode}`, pass ?? PASS);
      // the file's content: what no schema of the request can judge (422, documented)
      assert.equal(r.status, 422, `${what}: ${JSON.stringify(r.data)}`);
      assert.equal(r.data.ok, false);
      assert.ok(r.data.fields?.[field], `${what}: fields.${field} in ${JSON.stringify(r.data)}`);
    }
  }
  // validly sealed, but wrong inside: a missing column, a wrong type, a dangling reference
  const resealed = async (sections: Record<string, unknown[]>) =>
    JSON.stringify(await resealDocument({ ...doc, sections } as BackupDocument, PASS, doc.encryption));
  const bad: [string, Record<string, unknown[]>, RegExp][] = [
    ['missing column', { ...doc.sections, peers: doc.sections.peers.map(({ address: _a, ...p }) => p) }, /^sections\.peers\.\d+\.address$/],
    ['wrong type', { ...doc.sections, routes: doc.sections.routes.map((r) => ({ ...r, enabled: 'yes' })) }, /^sections\.routes\.\d+\.enabled$/],
    ['dangling reference', { ...doc.sections, peer_groups: [] }, /^sections\.peers\.\d+\.group_id$/],
    ['unknown section', { ...doc.sections, aliens: [] }, /^sections\.aliens$/],
    [
      'damaged secret',
      { ...doc.sections, peers: doc.sections.peers.map((p) => ({ ...p, private_key_enc: String(p.private_key_enc).slice(0, -4) + 'AAAA' })) },
      /^sections\.peers\.\d+\.private_key_enc$/,
    ],
  ];
  for (const [what, sections, re] of bad) {
    const r = await restore(src, h, await resealed(sections), 'mode=replace');
    assert.equal(r.status, 422, `${what}: ${JSON.stringify(r.data)}`);
    assert.ok(
      Object.keys(r.data.fields ?? {}).some((k) => re.test(k)),
      `${what}: ${JSON.stringify(r.data.fields)}`,
    );
  }
  // no file, bad mode
  const form = new FormData();
  form.set('passphrase', PASS);
  assert.equal((await src.req('/api/v1/settings/backup/restore?mode=replace', { method: 'POST', headers: h, body: form })).status, 400);
  const m = await restore(src, h, text, 'mode=everything');
  assert.equal(m.status, 400);
  assert.ok(m.data.fields!.mode);
  assert.deepEqual(await snapshot(), before, 'nothing changed');
});

test('the migration hook: a synthetic version-0 document is upgraded and restored', async () => {
  const { text } = await download(src, h);
  const doc = JSON.parse(text) as BackupDocument;
  // version 0 (synthetic): peers named their group "group" and had no description column
  const v0 = await resealDocument(
    {
      ...doc,
      version: 0,
      sections: { ...doc.sections, peers: doc.sections.peers.map(({ group_id, description: _d, ...p }) => ({ ...p, group: group_id })) },
    } as BackupDocument,
    PASS,
    doc.encryption,
  );
  const dst = await startTestServer(ENV);
  try {
    const plain = await dst.req('/api/v1/settings/backup/restore?mode=replace', { method: 'POST' });
    assert.equal(plain.status, 401);
    // without a migration from 0 the server refuses it
    const svc = dst.deps.backup as BackupService;
    await assert.rejects(
      svc.restore(JSON.stringify(v0), { passphrase: PASS, mode: 'replace', dryRun: true }),
      (e: { kind?: string; fields?: Record<string, unknown> }) => e.kind === 'unprocessable' && Boolean(e.fields!.version),
    );
    // with one, it is read as version 1
    const migrating = new BackupService(dst.deps, {
      proxy: dst.deps.proxy,
      wireguard: dst.deps.wireguard,
      routeAuth: dst.deps.routeAuth,
      gateways: dst.deps.gateways,
      peers: dst.deps.peers,
      migrations: {
        0: (d) => ({
          ...d,
          sections: {
            ...d.sections,
            peers: (d.sections.peers as Record<string, unknown>[]).map(({ group, ...p }) => ({ ...p, group_id: group, description: null })),
          },
        }),
      },
    });
    const r = await migrating.restore(JSON.stringify(v0), { passphrase: PASS, mode: 'replace', dryRun: false });
    assert.equal(r.migrated_from, 0);
    assert.equal(r.version, 1);
    const laptop = ((await dst.deps.db.models.Peer.findOne({ where: { name: 'laptop' }, raw: true })) as Row<'Peer'> | null)!;
    assert.equal(laptop.group_id, ids.g1);
    assert.equal(laptop.description, null);
  } finally {
    await dst.close();
  }
});

test('envelope: the passphrase key opens only its own fields', async () => {
  const k = await PassphraseKey.create(PASS);
  const sealed = k.seal('secret', 'peers.private_key_enc');
  assert.equal(k.open(sealed, 'peers.private_key_enc'), 'secret');
  assert.throws(() => k.open(sealed, 'users.password_hash'));
  const again = await PassphraseKey.open(PASS, k.header);
  assert.equal(again.open(sealed, 'peers.private_key_enc'), 'secret');
  await assert.rejects(PassphraseKey.open('another passphrase', k.header), (e: { fields?: Record<string, unknown> }) => Boolean(e.fields?.passphrase));
});
