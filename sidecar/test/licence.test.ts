// Licences (docs/guides/licence.md): the signed key format verified offline, the endpoints, the community
// fallback (every feature the product names, no limits: DNS hostnames, circuit breaker, /metrics and RDP
// work on a fresh install), the feature a licence adds (`cluster`), limits, the proxy and DNS
// following a lost feature without losing data (a test gate: no licence change can take a community
// feature away), expiry noticed by the scheduled check, and refresh against a real local licence
// service (renewed, revoked, down: grace kept, then ended).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { startTestServer, apiToken, bearer, login, type TestServer, apiCall } from './lib/server.js';
import { TEST_PUBLIC_KEY_PEM, testDocument, testKeys, testLicenceKey } from './lib/licence.js';
import { LicenceKeyError, publicKeyFrom, signLicence, verifyLicence } from '../src/licence/document.js';
import { COMMUNITY, COMMUNITY_FEATURES, LICENSED_FEATURES, type FeatureGate, type LicensedFeature } from '../src/licence/features.js';
import { fullPath } from '../src/http/registry.js';
import { manualClock } from '../src/util/clock.js';
import { licenceFeature } from '../src/licence/feature.js';
import { asRows, type Row } from './lib/rows.js';
import { arrAt, at } from '../../test/lib/json.js';

const DAY = 24 * 3600 * 1000;
const trusted = [publicKeyFrom(TEST_PUBLIC_KEY_PEM)];

function refused(fn: () => unknown, reason: string): void {
  assert.throws(fn, (e: unknown) => e instanceof LicenceKeyError && e.reason === reason);
}

describe('the key format', () => {
  test('a signed key verifies offline; tampered, wrongly signed, expired, not yet valid and malformed keys are refused with their reason', () => {
    const now = Date.now();
    const key = testLicenceKey({ customer: 'ACME', plan: 'business', features: ['circuit_breaker', 'future_feature'], limits: { max_peers: 5 } });
    const v = verifyLicence(key, trusted, now);
    assert.equal(v.doc.customer, 'ACME');
    assert.deepEqual(v.doc.features, ['circuit_breaker', 'future_feature']);
    assert.equal(v.doc.limits.max_peers, 5);
    // whitespace and line breaks (a key pasted from a mail) do not matter
    assert.equal(verifyLicence(key.replace(/(.{60})/g, '$1\n'), trusted, now).doc.id, v.doc.id);

    // tampered: another document under the same signature
    const [p, kid, payload, sig] = key.split('.');
    const doc = JSON.parse(Buffer.from(payload, 'base64url').toString());
    doc.features.push('remote_desktop');
    refused(() => verifyLicence([p, kid, Buffer.from(JSON.stringify(doc)).toString('base64url'), sig].join('.'), trusted, now), 'bad_signature');
    // one flipped signature byte
    const bad = Buffer.from(sig, 'base64url');
    bad[0] ^= 1;
    refused(() => verifyLicence([p, kid, payload, bad.toString('base64url')].join('.'), trusted, now), 'bad_signature');
    // signed by another key
    const other = crypto.generateKeyPairSync('ed25519');
    refused(() => verifyLicence(testLicenceKey({}, { privateKey: other.privateKey }), trusted, now), 'unknown_signer');
    // another key claiming the trusted key id
    const forged = signLicence(testDocument(), other.privateKey).split('.');
    forged[1] = kid;
    refused(() => verifyLicence(forged.join('.'), trusted, now), 'bad_signature');
    // expired, and not yet valid
    refused(() => verifyLicence(testLicenceKey({ expires_at: new Date(now - 1000).toISOString() }), trusted, now), 'expired');
    refused(() => verifyLicence(testLicenceKey({ issued_at: new Date(now + 3 * DAY).toISOString() }), trusted, now), 'not_yet_valid');
    for (const m of ['', 'hello', 'GHL1.x.y.z', key.replace('GHL1', 'GHL2'), `${key}.extra`]) refused(() => verifyLicence(m, trusted, now), 'malformed');
  });

  test('scripts/licence-sign.ts signs a document with a private key file; the key verifies and names what was given', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gh-lic-'));
    try {
      const pem = path.join(dir, 'vendor.pem');
      fs.writeFileSync(pem, testKeys.privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
      const repo = path.resolve(import.meta.dirname, '..', '..');
      const run = (args: string[]) =>
        execFileSync(process.execPath, ['--import', 'tsx', 'scripts/licence-sign.ts', ...args], { cwd: repo, encoding: 'utf8' }).trim();
      const key = run([
        '--private-key',
        pem,
        '--customer',
        'Example GmbH',
        '--plan',
        'business',
        '--features',
        'internal_dns,circuit_breaker',
        '--max-peers',
        '250',
        '--expires',
        '2099-12-31T00:00:00Z',
        '--id',
        'LIC-42',
      ]);
      const v = verifyLicence(key, trusted, Date.now());
      assert.deepEqual(
        { id: v.doc.id, customer: v.doc.customer, plan: v.doc.plan, features: v.doc.features, limits: v.doc.limits, expires_at: v.doc.expires_at },
        {
          id: 'LIC-42',
          customer: 'Example GmbH',
          plan: 'business',
          features: ['internal_dns', 'circuit_breaker'],
          limits: { max_peers: 250, max_routes: null },
          expires_at: '2099-12-31T00:00:00.000Z',
        },
      );
      // a key pair of its own (self-signed deployments): the printed public key verifies what it signs
      const own = path.join(dir, 'own.pem');
      const pub = run(['--generate-key', own]);
      const selfKey = run(['--private-key', own, '--customer', 'Me', '--plan', 'self', '--expires', 'never']);
      assert.equal(verifyLicence(selfKey, [publicKeyFrom(pub)], Date.now()).doc.expires_at, null);
      refused(() => verifyLicence(selfKey, trusted, Date.now()), 'unknown_signer');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('a server without a licence (community fallback)', () => {
  let s: TestServer;
  let auth: Record<string, string>;
  const call = <T = never, P extends string = string, M extends string = 'GET'>(
    p: P,
    method?: [T] extends [never] ? M : string,
    json?: unknown,
    headers = auth,
  ) => s.req<T, `/api/v1${P}`, M>(`/api/v1${p}`, { method, headers, ...(json !== undefined ? { json } : {}) });
  /** An endpoint at its full path (fullPath: /api/v1/..., or served at the root like /metrics). */
  const callAt = (url: string, method: string) => s.req(url, { method, headers: auth, ...(method === 'GET' ? {} : { json: {} }) });
  const licenceEvents = () => s.deps.db.models.Activity.count({ where: { event_type: 'licence_changed' } });

  before(async () => {
    s = await startTestServer({ GATEHOUSE_LICENCE_KEY: '', GATEHOUSE_RATE_LIMIT_ADMIN: '100000' });
    auth = bearer(await apiToken(s));
  });
  after(async () => s.close());

  test('GET /license shows the community fallback', async () => {
    const r = await call('/license');
    assert.equal(r.status, 200, JSON.stringify(r.data));
    assert.equal(r.data.license.status, 'community');
    assert.equal(r.data.license.plan, 'community');
    assert.deepEqual(r.data.license.features, [...COMMUNITY.features]);
    assert.deepEqual(r.data.license.limits, { max_peers: null, max_routes: null });
    assert.equal(r.data.license.licence, null);
    assert.deepEqual(r.data.license.community, {
      plan: 'community',
      features: ['internal_dns', 'remote_desktop', 'circuit_breaker', 'prometheus_metrics'],
      limits: { max_peers: null, max_routes: null },
    });
    assert.deepEqual(r.data.license.features, ['internal_dns', 'remote_desktop', 'circuit_breaker', 'prometheus_metrics']);
    assert.equal(s.deps.features.isEnabled('cluster'), false, 'cluster needs a licence');
  });

  test('a fresh install without a licence: DNS hostnames, the circuit breaker, /metrics and the RDP endpoints all work; no gated endpoint answers the licence 403', async () => {
    const peer = await call('/peers', 'POST', { name: 'p1' });
    assert.equal(peer.status, 201, JSON.stringify(peer.data));
    const id = peer.data.peer.id;
    // internal DNS: a hostname is set and the hosts file holds it
    const h = await call(`/peers/${id}/hostname`, 'PATCH', { hostname: 'nas' });
    assert.equal(h.status, 200, JSON.stringify(h.data));
    assert.equal((await call(`/peers/${id}`)).data.peer.hostname, 'nas');
    const dns = await call('/system/dns/status');
    assert.equal(dns.status, 200, JSON.stringify(dns.data));
    assert.equal(dns.data.dns.enabled, true);
    await s.deps.dns.refresh();
    assert.match(fs.readFileSync(s.deps.dns.file, 'utf8'), /nas\./);
    assert.equal((await call('/system/dns/records')).status, 200);
    // circuit breaker: switched on at create, rendered, reset
    const r = await call('/routes', 'POST', {
      domain: 'community-cb.example.com',
      peer_id: id,
      target_port: 80,
      circuit_breaker_enabled: true,
      circuit_breaker_threshold: 3,
    });
    assert.equal(r.status, 201, JSON.stringify(r.data));
    assert.match(JSON.stringify(await s.deps.proxy.render()), /gatehouse_circuit_breaker/);
    assert.equal((await call(`/routes/${r.data.route.id}`, 'PUT', { circuit_breaker_threshold: 5 })).status, 200);
    assert.equal((await call(`/routes/${r.data.route.id}/circuit-breaker/reset`, 'POST', {})).status, 200);
    // Prometheus metrics
    const m = await s.req('/metrics', { headers: auth });
    assert.equal(m.status, 200, String(m.data).slice(0, 300));
    assert.match(String(m.data), /^# HELP /m);
    // remote desktop
    const rdp = await call('/rdp', 'POST', { name: 'Community desk', access_mode: 'internal', target_peer_id: id });
    assert.equal(rdp.status, 201, JSON.stringify(rdp.data));
    assert.equal((await call('/rdp')).status, 200);
    assert.equal((await call(`/rdp/${rdp.data.route.id}`)).status, 200);
    assert.equal((await call('/rdp/status')).status, 200);
    // every gated endpoint: none answers the licence 403
    const gated = s.endpoints.filter((e) => e.feature);
    const features = new Set(gated.map((e) => e.feature));
    for (const f of ['internal_dns', 'circuit_breaker', 'prometheus_metrics', 'remote_desktop'] as const) assert.ok(features.has(f), f);
    const urlOf = (e: (typeof gated)[number]) => fullPath(e).replace(/:[A-Za-z_]+/g, String(id));
    for (const e of gated) {
      const x = await callAt(urlOf(e), e.method);
      assert.ok(!(x.status === 403 && at(x.data, 'feature')), `${e.method} ${urlOf(e)} gated without a licence: ${JSON.stringify(x.data)}`);
    }
    assert.equal(await licenceEvents(), 0);
  });

  test('cluster is what a licence adds: off without one, on with a licence that names it (the community features stay), off again when the licence is removed or does not name it', async () => {
    const on = () => LICENSED_FEATURES.filter((f) => s.deps.features.isEnabled(f));
    assert.deepEqual(on(), [...COMMUNITY_FEATURES]);
    const a = await call('/license/activate', 'POST', { key: testLicenceKey({ plan: 'cluster', features: ['cluster'] }) });
    assert.equal(a.status, 200, JSON.stringify(a.data));
    assert.deepEqual(a.data.license.features, [...LICENSED_FEATURES]);
    assert.deepEqual(a.data.license.licence!.features, ['cluster'], 'the document as it names them');
    assert.deepEqual(on(), [...LICENSED_FEATURES]);
    // a licence that names no feature still has the community ones, and not cluster
    const none = await call('/license/activate', 'POST', { key: testLicenceKey({ plan: 'limits-only', features: [] }) });
    assert.equal(none.status, 200);
    assert.deepEqual(none.data.license.features, [...COMMUNITY_FEATURES]);
    assert.deepEqual(on(), [...COMMUNITY_FEATURES]);
    assert.equal((await call('/license/activate', 'POST', { key: testLicenceKey({ features: ['cluster'] }) })).status, 200);
    assert.equal(s.deps.features.isEnabled('cluster'), true);
    const d = await call('/license', 'DELETE');
    assert.equal(d.status, 200);
    assert.deepEqual(d.data.license.features, [...COMMUNITY_FEATURES]);
    assert.deepEqual(on(), [...COMMUNITY_FEATURES]);
    // the OpenAPI document knows the name
    const doc = (await call('/openapi.json')).data;
    assert.ok(arrAt(doc, 'components', 'schemas', 'FeatureDisabled', 'properties', 'feature', 'enum').includes('cluster'));
  });

  test('an expired, tampered or wrongly signed key is refused with a clear reason (400, fields.key), nothing stored, no event', async () => {
    const before = await licenceEvents();
    const now = Date.now();
    const good = testLicenceKey();
    const [p, kid, payload, sig] = good.split('.');
    const doc = JSON.parse(Buffer.from(payload, 'base64url').toString());
    doc.customer = 'Someone Else';
    const cases: Array<[string, string, RegExp]> = [
      [testLicenceKey({ expires_at: new Date(now - DAY).toISOString() }), 'expired', /expired on/],
      [[p, kid, Buffer.from(JSON.stringify(doc)).toString('base64url'), sig].join('.'), 'bad_signature', /altered or damaged/],
      [testLicenceKey({}, { privateKey: crypto.generateKeyPairSync('ed25519').privateKey }), 'unknown_signer', /does not trust/],
      ['not a key', 'malformed', /not a Gatehouse licence key/i],
    ];
    for (const [key, reason, msg] of cases) {
      const r = await call('/license/activate', 'POST', { key });
      assert.equal(r.status, reason === 'malformed' ? 400 : 422, JSON.stringify(r.data)); // the key's form is in the document; its signature and dates are not
      assert.equal(r.data.ok, false);
      if (reason !== 'malformed') assert.equal(r.data.reason, reason); // a malformed key is refused by the document's pattern
      assert.match(r.data.fields!.key, msg);
      if (reason !== 'malformed') assert.match(r.data.error!, /Licence key refused/);
    }
    const bad = await call('/license/activate', 'POST', { key: 42 });
    assert.equal(bad.status, 400);
    assert.ok(bad.data.fields!.key);
    assert.equal((await call('/license/activate', 'POST', {})).data.fields!.key !== undefined, true);
    assert.equal((await call('/license')).data.license.status, 'community');
    assert.equal(await s.deps.db.models.Setting.count({ where: { key: 'licence' } }), 0);
    assert.equal(await licenceEvents(), before);
  });

  test('activate, then DELETE: licence_changed each time, GET shows the licence; refresh without a stored licence is a 409', async () => {
    const before = await licenceEvents();
    const key = testLicenceKey({ customer: 'ACME', plan: 'business', features: ['cluster'], limits: { max_routes: 10 } });
    const a = await call('/license/activate', 'POST', { key });
    assert.equal(a.status, 200, JSON.stringify(a.data));
    assert.equal(a.data.license.status, 'active');
    assert.equal(a.data.license.plan, 'business');
    assert.deepEqual(a.data.license.features, [...COMMUNITY_FEATURES, 'cluster']);
    assert.deepEqual(a.data.license.limits, { max_peers: null, max_routes: 10 });
    assert.equal(a.data.license.licence!.customer, 'ACME');
    const g = await call('/license');
    assert.deepEqual(g.data, a.data);
    // offline refresh without a licence service
    const rf = await call('/license/refresh', 'POST');
    assert.equal(rf.status, 200, JSON.stringify(rf.data));
    assert.deepEqual(rf.data.refresh, { checked: 'offline', ok: true, error: null, error_code: null });
    const d = await call('/license', 'DELETE');
    assert.equal(d.status, 200);
    assert.equal(d.data.removed, true);
    assert.equal(d.data.license.status, 'community');
    assert.equal((await call('/license', 'DELETE')).data.removed, false);
    assert.equal((await call('/license/refresh', 'POST')).status, 409);
    const rows = asRows<'Activity'>(await s.deps.db.models.Activity.findAll({ where: { event_type: 'licence_changed' }, order: [['id', 'ASC']], raw: true }));
    assert.equal(rows.length - before, 2);
    const reasons = rows.slice(before).map((r) => JSON.parse(r.details!).reason);
    assert.deepEqual(reasons, ['activated', 'removed']);
  });

  test('authz: a read-only token reads the licence but cannot change it; a non-admin user cannot either', async () => {
    const ro = bearer(await apiToken(s, ['read-only']));
    assert.equal((await call('/license', 'GET', undefined, ro)).status, 200);
    assert.equal((await call('/license/activate', 'POST', { key: testLicenceKey() }, ro)).status, 403);
    assert.equal((await call('/license', 'DELETE', undefined, ro)).status, 403);
    const sys = bearer(await apiToken(s, ['system']));
    assert.equal((await call('/license', 'GET', undefined, sys)).status, 403);
    const { cookie, csrf } = await login(s);
    const u = await s.req('/api/v1/users', {
      method: 'POST',
      headers: { cookie, 'x-csrf-token': csrf },
      json: { username: 'viewer1', email: 'v@example.com', password: 'viewer-password-1', role: 'user' },
    });
    assert.equal(u.status, 201, JSON.stringify(u.data));
    const v = await login(s, { username: 'viewer1', password: 'viewer-password-1' });
    const r = await s.req('/api/v1/license/activate', {
      method: 'POST',
      headers: { cookie: v.cookie, 'x-csrf-token': v.csrf },
      json: { key: testLicenceKey() },
    });
    assert.equal(r.status, 403);
    assert.equal((await call('/license')).data.license.status, 'community');
  });

  test('limits: max_peers and max_routes refuse the next create with 403 {limit, max}; within the limit creates work', async () => {
    const peers = Number(await s.deps.db.models.Peer.count());
    const routes = Number(await s.deps.db.models.Route.count());
    await call('/license/activate', 'POST', { key: testLicenceKey({ limits: { max_peers: peers + 1, max_routes: routes + 1 } }) });
    const ok = await call('/peers', 'POST', { name: 'within-limit' });
    assert.equal(ok.status, 201, JSON.stringify(ok.data));
    const over = await call('/peers', 'POST', { name: 'over-limit' });
    assert.equal(over.status, 403, JSON.stringify(over.data));
    assert.equal(over.data.limit, 'max_peers');
    assert.equal(over.data.max, peers + 1);
    assert.match(over.data.error!, /at most/);
    assert.equal(Number(await s.deps.db.models.Peer.count()), peers + 1);
    const r1 = await call('/routes', 'POST', { domain: 'limit-1.example.com', peer_id: ok.data.peer.id, target_port: 80 });
    assert.equal(r1.status, 201, JSON.stringify(r1.data));
    const r2 = await call('/routes', 'POST', { domain: 'limit-2.example.com', peer_id: ok.data.peer.id, target_port: 80 });
    assert.equal(r2.status, 403);
    assert.equal(r2.data.limit, 'max_routes');
    // the community fallback has no limits
    await call('/license', 'DELETE');
    assert.equal((await call('/routes', 'POST', { domain: 'limit-2.example.com', peer_id: ok.data.peer.id, target_port: 80 })).status, 201);
  });
});

// No licence change takes a community feature away, but the code paths that follow a lost feature
// stay (for what a licence grants beyond the community set): a test gate switches circuit_breaker and
// internal_dns off and on, and licence_changed is announced as the licence service would.
describe('losing and regaining circuit_breaker and internal_dns (a test gate)', () => {
  let s: TestServer;
  let auth: Record<string, string>;
  const off = new Set<LicensedFeature>();
  const gate: FeatureGate = { isEnabled: (f) => !off.has(f) };
  const call = apiCall(
    () => s,
    () => auth,
  );
  /** switches the features off (or every one on) and announces it the way LicenceService does */
  const lose = async (...fs: LicensedFeature[]) => {
    off.clear();
    for (const f of fs) off.add(f);
    await s.deps.events.emit({
      type: 'licence_changed',
      reason: fs.length ? 'removed' : 'activated',
      plan: 'test',
      features: LICENSED_FEATURES.filter((f) => !off.has(f)),
      expires_at: null,
      actor: null,
    });
  };

  before(async () => {
    s = await startTestServer({ GATEHOUSE_RATE_LIMIT_ADMIN: '100000' }, { featureGate: gate });
    auth = bearer(await apiToken(s));
  });
  after(async () => s.close());

  test('the route keeps its breaker settings, the rendered configuration leaves the module out and gets it back; writes that switch it on are refused', async () => {
    const peer = (await call('/peers', 'POST', { name: 'cb-peer' })).data.peer;
    const c = await call('/routes', 'POST', {
      domain: 'cb.example.com',
      peer_id: peer.id,
      target_port: 80,
      circuit_breaker_enabled: true,
      circuit_breaker_threshold: 3,
      circuit_breaker_timeout: 20,
    });
    assert.equal(c.status, 201, JSON.stringify(c.data));
    const id = c.data.route.id;
    const rendered = async () => JSON.stringify(await s.deps.proxy.render());
    assert.match(await rendered(), /gatehouse_circuit_breaker/);
    const hashLicensed = s.deps.proxy.status().config_hash;

    await lose('circuit_breaker');
    assert.doesNotMatch(await rendered(), /gatehouse_circuit_breaker/);
    assert.notEqual(s.deps.proxy.status().config_hash, hashLicensed, 'the licence change re-rendered the configuration');
    const r = (await call(`/routes/${id}`)).data.route;
    assert.deepEqual([r.circuit_breaker_enabled, r.circuit_breaker_threshold, r.circuit_breaker_timeout], [true, 3, 20]);
    // other changes to the route work and keep the breaker settings
    const u = await call(`/routes/${id}`, 'PUT', { description: 'still here', circuit_breaker_enabled: true, circuit_breaker_threshold: 3 });
    assert.equal(u.status, 200, JSON.stringify(u.data));
    // switching it on elsewhere, or changing its settings, needs the feature
    const c2 = await call('/routes', 'POST', { domain: 'cb2.example.com', peer_id: peer.id, target_port: 80, circuit_breaker_enabled: true });
    assert.equal(c2.status, 403);
    assert.equal(c2.data.feature, 'circuit_breaker');
    const u2 = await call(`/routes/${id}`, 'PUT', { circuit_breaker_threshold: 9 });
    assert.equal(u2.status, 403);
    assert.equal(u2.data.feature, 'circuit_breaker');
    assert.equal((await call(`/routes/${id}`)).data.route.circuit_breaker_threshold, 3);
    assert.equal((await call('/routes', 'POST', { domain: 'plain.example.com', peer_id: peer.id, target_port: 80 })).status, 201);

    await lose();
    assert.match(await rendered(), /gatehouse_circuit_breaker/);
    const cfg = await s.deps.proxy.render();
    assert.match(JSON.stringify(cfg), /"threshold":3,"timeout":20/);
  });

  test('the internal DNS hosts file loses its records without internal_dns and gets them back; the hostnames stay stored', async () => {
    const peer = (await call('/peers', 'POST', { name: 'dns-peer' })).data.peer;
    assert.equal((await call(`/peers/${peer.id}/hostname`, 'PATCH', { hostname: 'printer' })).status, 200);
    const file = s.deps.dns.file;
    await s.deps.dns.refresh();
    assert.match(fs.readFileSync(file, 'utf8'), /printer\./);
    await lose('internal_dns');
    const hosts = fs.readFileSync(file, 'utf8');
    assert.doesNotMatch(hosts, /printer\./);
    assert.match(hosts, /needs the licence feature internal_dns/);
    assert.equal(((await s.deps.db.models.Peer.findByPk(peer.id, { raw: true })) as Row<'Peer'> | null)!.hostname, 'printer');
    await lose();
    assert.match(fs.readFileSync(file, 'utf8'), /printer\./);
  });
});

describe('expiry and refresh (injectable clock, a real local licence service)', () => {
  const start = Date.UTC(2026, 10, 24, 12, 0, 0);
  const clock = manualClock(start);
  let s: TestServer;
  let auth: Record<string, string>;
  let service: http.Server;
  let serviceUrl: string;
  let answer: (body: unknown) => { status: number; json: unknown } = () => ({ status: 500, json: { error: 'not set' } });
  const requests: { method?: string; url?: string; body: { licence_id?: string; key?: string } }[] = [];
  const call = apiCall(
    () => s,
    () => auth,
  );
  const events = async () =>
    asRows<'Activity'>(await s.deps.db.models.Activity.findAll({ where: { event_type: 'licence_changed' }, order: [['id', 'ASC']], raw: true })).map((r) =>
      JSON.parse(r.details!),
    );
  const advance = (ms: number) => clock.advanceAsync(ms, () => s.deps.scheduler.idle());

  before(async () => {
    service = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        const parsed = JSON.parse(body);
        requests.push({ method: req.method, url: req.url, body: parsed });
        const a = answer(parsed);
        res.writeHead(a.status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(a.json));
      });
    });
    await new Promise<void>((r) => service.listen(0, '127.0.0.1', r));
    serviceUrl = `http://127.0.0.1:${(service.address() as AddressInfo).port}/v1/refresh`;
    s = await startTestServer(
      {
        GATEHOUSE_LICENCE_KEY: '',
        GATEHOUSE_LICENCE_URL: serviceUrl,
        GATEHOUSE_OUTBOUND_ALLOW_PRIVATE: 'licence',
        GATEHOUSE_LICENCE_GRACE_DAYS: '3',
        GATEHOUSE_RATE_LIMIT_ADMIN: '100000',
      },
      { clock, timers: clock.timers },
    );
    // Only the licence feature's scheduled work on the manual clock (the other features' pollers
    // would run hundreds of thousands of times over the simulated days).
    await licenceFeature.start!(s.deps);
    assert.deepEqual(
      s.deps.scheduler
        .list()
        .filter((j) => j.name.startsWith('licence'))
        .map((j) => j.name)
        .sort(),
      ['licence-check', 'licence-refresh'],
    );
    auth = bearer(await apiToken(s));
  });
  after(async () => {
    await s.close();
    service.closeAllConnections();
    await new Promise((r) => service.close(r));
  });

  test('an expiring licence is noticed by the scheduled check: licence_changed expired, community from then on (cluster off, the community features stay on)', async () => {
    const key = testLicenceKey(
      { id: 'SHORT', issued_at: new Date(start - DAY).toISOString(), expires_at: new Date(start + 90_000).toISOString() },
      { now: start },
    );
    const a = await call('/license/activate', 'POST', { key });
    assert.equal(a.status, 200, JSON.stringify(a.data));
    assert.equal(s.deps.features.isEnabled('cluster'), true);
    await advance(60_000);
    assert.equal((await call('/license')).data.license.status, 'active');
    await advance(60_000);
    const g = (await call('/license')).data.license;
    assert.equal(g.status, 'expired');
    assert.deepEqual(g.features, [...COMMUNITY_FEATURES]);
    assert.equal(g.licence!.id, 'SHORT', 'the expired licence is still shown');
    assert.equal(s.deps.features.isEnabled('cluster'), false);
    assert.equal(s.deps.features.isEnabled('circuit_breaker'), true, 'a community feature');
    const ev = (await events()).at(-1);
    assert.equal(ev.reason, 'expired');
    assert.equal(ev.plan, 'community');
    const n = (await events()).length;
    await advance(180_000);
    assert.equal((await events()).length, n, 'expiry is announced once');
  });

  test('in a cluster a follower notices an expiry by its own check without announcing it (the leader does, once), and re-renders what the licence gates', async () => {
    const key = testLicenceKey(
      { id: 'SHORT-2', issued_at: new Date(clock() - DAY).toISOString(), expires_at: new Date(clock() + 90_000).toISOString() },
      { now: clock() },
    );
    assert.equal((await call('/license/activate', 'POST', { key })).status, 200);
    const n = (await events()).length;
    const quiet = s.deps.licence.onQuietChange;
    let rendered = 0;
    s.deps.licence.onQuietChange = async () => {
      rendered++;
      await quiet?.();
    };
    s.deps.scheduler.setLeadership(() => false);
    try {
      await advance(120_000);
      assert.equal((await call('/license')).data.license.status, 'expired', 'the follower applies the expiry');
      assert.equal(s.deps.features.isEnabled('cluster'), false);
      assert.equal((await events()).length, n, 'and does not announce it');
      assert.equal(rendered, 1, 'it re-renders once');
    } finally {
      s.deps.scheduler.setLeadership(() => true);
      s.deps.licence.onQuietChange = quiet;
    }
  });

  test('refresh takes the renewed key from the licence service; down: the last good state is kept for the grace period, then the community fallback applies (grace_ended); back: restored', async () => {
    const now = () => clock();
    const first = testLicenceKey(
      { id: 'SUB-1', plan: 'business', issued_at: new Date(now() - DAY).toISOString(), expires_at: new Date(now() + 30 * DAY).toISOString() },
      { now: now() },
    );
    assert.equal((await call('/license/activate', 'POST', { key: first })).status, 200);
    const renewed = testLicenceKey(
      { id: 'SUB-1', plan: 'business', issued_at: new Date(now()).toISOString(), expires_at: new Date(now() + 400 * DAY).toISOString() },
      { now: now() },
    );
    answer = () => ({ status: 200, json: { key: renewed } });
    const r = await call('/license/refresh', 'POST');
    assert.equal(r.status, 200, JSON.stringify(r.data));
    assert.deepEqual(r.data.refresh, { checked: 'service', ok: true, error: null, error_code: null });
    assert.equal(r.data.license.licence!.expires_at, new Date(now() + 400 * DAY).toISOString());
    const req = requests.at(-1)!;
    assert.equal(req.method, 'POST');
    assert.equal(req.url, '/v1/refresh');
    assert.equal(req.body.licence_id, 'SUB-1');
    assert.equal(req.body.key, first);
    assert.equal((await events()).at(-1).reason, 'refreshed');

    // the service goes down
    service.closeAllConnections();
    await new Promise((res) => service.close(res));
    const downAt = now();
    const d = await call('/license/refresh', 'POST');
    assert.equal(d.status, 200);
    assert.equal(d.data.refresh.ok, false);
    assert.match(d.data.refresh.error!, /cannot be reached: ECONNREFUSED/);
    assert.deepEqual(
      d.data.refresh.error_code,
      { code: 'licence.service.unreachable', params: { detail: 'ECONNREFUSED' } },
      'a coded category, the cause as detail',
    );
    assert.deepEqual(d.data.license.licence!.last_refresh_error_code, d.data.refresh.error_code, 'the stored error is read back as its code');
    assert.equal(d.data.license.status, 'grace');
    assert.equal(d.data.license.plan, 'business');
    assert.deepEqual(d.data.license.features, [...LICENSED_FEATURES]);
    assert.equal(d.data.license.grace!.ends_at, new Date(downAt + 3 * DAY).toISOString());
    assert.equal(s.deps.features.isEnabled('cluster'), true, 'kept during the grace period');
    const before = (await events()).length;
    await advance(3 * DAY - 120_000);
    assert.equal((await call('/license')).data.license.status, 'grace');
    assert.equal((await events()).length, before);
    await advance(180_000);
    const ended = (await call('/license')).data.license;
    assert.equal(ended.status, 'grace_ended');
    assert.equal(ended.plan, 'community');
    assert.deepEqual(ended.features, [...COMMUNITY_FEATURES]);
    assert.equal(s.deps.features.isEnabled('cluster'), false);
    const ev = (await events()).at(-1);
    assert.equal(ev.reason, 'grace_ended');
    assert.equal((await events()).length, before + 1);

    // the service is back: the licence applies again
    await new Promise<void>((res) => service.listen(Number(new URL(serviceUrl).port), '127.0.0.1', res));
    const back = await call('/license/refresh', 'POST');
    assert.equal(back.data.refresh.ok, true, JSON.stringify(back.data));
    assert.equal(back.data.license.status, 'active');
    assert.equal(s.deps.features.isEnabled('cluster'), true);
    assert.equal((await events()).at(-1).reason, 'refreshed');
  });

  test('a licence the service no longer knows (410) is revoked: community fallback, licence_changed revoked; a 5xx is treated like down', async () => {
    answer = () => ({ status: 503, json: { error: 'maintenance' } });
    const m = await call('/license/refresh', 'POST');
    assert.equal(m.data.refresh.ok, false);
    assert.match(m.data.refresh.error!, /HTTP 503: maintenance/);
    assert.deepEqual(m.data.refresh.error_code, { code: 'licence.service.status_detail', params: { status: 503, detail: 'maintenance' } });
    assert.deepEqual(m.data.license.licence!.last_refresh_error_code, m.data.refresh.error_code);
    assert.equal(m.data.license.status, 'grace');
    answer = () => ({ status: 410, json: { error: 'licence cancelled' } });
    const r = await call('/license/refresh', 'POST');
    assert.equal(r.data.refresh.ok, false);
    assert.match(r.data.refresh.error!, /licence cancelled/);
    assert.deepEqual(r.data.refresh.error_code, { code: 'licence.service.refused', params: { detail: 'licence cancelled' } });
    assert.deepEqual(r.data.license.licence!.last_refresh_error_code, { code: 'licence.service.revoked', params: { detail: 'licence cancelled' } });
    assert.equal(r.data.license.status, 'revoked');
    assert.deepEqual(r.data.license.features, [...COMMUNITY_FEATURES]);
    assert.equal((await events()).at(-1).reason, 'revoked');
  });
});
