// Custom certificates through the API: upload (checked with node:crypto), the private key never in
// any answer and sealed at rest, key mismatch / garbage / expired / chain order refused with fields
// and nothing written, a route naming a certificate (it must cover the domain), the rendered Caddy
// configuration (load_pem, the connection policy, no automation for the name), replace (renewal),
// delete in use 409, and the expiry warning of the housekeeping job.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, apiToken, bearer, type TestServer, apiInit } from './lib/server.js';
import { manualClock } from '../src/util/clock.js';
import type { DomainEvent } from '../src/events.js';
import { findRows } from '../src/db/define.js';
import { makeChain, type TestChain } from '../../test/lib/certs.js';
import { arrAt, at, objAt } from '../../test/lib/json.js';

let s: TestServer;
let h: Record<string, string>;
const clock = manualClock(Date.now());
const api = apiInit(
  () => s,
  () => h,
);
let peerId: number;
let shop: TestChain;

before(async () => {
  s = await startTestServer({ GATEHOUSE_RATE_LIMIT_ADMIN: '100000' }, { clock });
  h = bearer(await apiToken(s));
  const p = await api('/peers', { method: 'POST', json: { name: 'cert-backend' } });
  assert.equal(p.status, 201, JSON.stringify(p.data));
  peerId = p.data.peer.id;
  shop = makeChain({ names: ['shop.example.test', '*.shop.example.test'] });
});
after(async () => s.close());

const count = async () => (await findRows(s.deps.db.models.Certificate)).length;

describe('custom certificates', () => {
  test('upload: the view (names, issuer, validity, fingerprint), the key sealed at rest and never answered', async () => {
    const seen: DomainEvent[] = [];
    const off = s.deps.events.onAny((e) => void (e.type.startsWith('certificate_') ? seen.push(e) : undefined));
    try {
      const r = await api('/certificates', { method: 'POST', json: { name: 'Shop', certificate_pem: shop.chain, private_key_pem: shop.key } });
      assert.equal(r.status, 201, JSON.stringify(r.data));
      const c = r.data.certificate;
      assert.deepEqual(c.subject_names, ['shop.example.test', '*.shop.example.test']);
      assert.equal(c.issuer, 'Gatehouse Test CA');
      assert.equal(c.fingerprint_sha256, shop.fingerprint);
      assert.equal(c.chain_length, 2);
      assert.equal(c.state, 'valid');
      assert.ok(c.days_left >= 89 && c.days_left <= 90, String(c.days_left));
      assert.deepEqual(c.routes, []);
      const keyBody = shop.key.split('\n')[1];
      for (const body of [r.data, (await api('/certificates')).data, (await api(`/certificates/${c.id}`)).data]) {
        assert.ok(!JSON.stringify(body).includes('PRIVATE KEY') && !JSON.stringify(body).includes(keyBody), 'no key in an answer');
      }
      const [row] = await findRows(s.deps.db.models.Certificate, { where: { id: c.id } });
      assert.match(row.private_key_enc, /^v1:/);
      assert.ok(!row.private_key_enc.includes(keyBody));
      assert.equal(s.deps.crypto.open(row.private_key_enc).trim(), shop.key.trim());
      assert.deepEqual(
        seen.map((e) => e.type),
        ['certificate_created'],
      );
      const dup = await api('/certificates', { method: 'POST', json: { name: 'shop', certificate_pem: shop.chain, private_key_pem: shop.key } });
      assert.equal(dup.status, 409);
      assert.ok(dup.data.fields!.name);
    } finally {
      off();
    }
  });

  test('refused with fields and nothing written: key mismatch, garbage PEM, expired, not yet valid, chain out of order, unknown fields', async () => {
    const before = await count();
    const other = makeChain({ names: ['other.example.test'] });
    const expired = makeChain({ names: ['old.example.test'], start: new Date(Date.now() - 400 * 86_400_000), end: new Date(Date.now() - 86_400_000) });
    const future = makeChain({ names: ['soon.example.test'], start: new Date(Date.now() + 5 * 86_400_000) });
    const child = makeChain({ names: ['leaf.example.test'], ca: { cert: shop.ca, key: shop.caKey } });
    const cases: [string, Record<string, unknown>, number, string][] = [
      ['key of another certificate', { name: 'x', certificate_pem: shop.chain, private_key_pem: other.key }, 422, 'private_key_pem'],
      ['garbage certificate', { name: 'x', certificate_pem: 'hello', private_key_pem: shop.key }, 400, 'certificate_pem'],
      ['garbage key', { name: 'x', certificate_pem: shop.chain, private_key_pem: 'not a key' }, 400, 'private_key_pem'],
      [
        'armour around garbage',
        { name: 'x', certificate_pem: '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n', private_key_pem: shop.key },
        422,
        'certificate_pem',
      ],
      ['expired', { name: 'x', certificate_pem: expired.chain, private_key_pem: expired.key }, 422, 'certificate_pem'],
      ['not yet valid', { name: 'x', certificate_pem: future.chain, private_key_pem: future.key }, 422, 'certificate_pem'],
      ['chain out of order', { name: 'x', certificate_pem: child.leaf.trim() + '\n' + other.ca, private_key_pem: child.key }, 422, 'certificate_pem'],
      ['empty name', { name: ' ', certificate_pem: shop.chain, private_key_pem: shop.key }, 400, 'name'],
      ['unknown field', { name: 'x', certificate_pem: shop.chain, private_key_pem: shop.key, extra: 1 }, 400, 'extra'],
      ['missing key', { name: 'x', certificate_pem: shop.chain }, 400, 'private_key_pem'],
    ];
    for (const [what, json, status, field] of cases) {
      const r = await api('/certificates', { method: 'POST', json });
      assert.equal(r.status, status, `${what}: ${JSON.stringify(r.data)}`);
      assert.ok(r.data.fields?.[field], `${what}: fields.${field} in ${JSON.stringify(r.data)}`);
      assert.ok(!JSON.stringify(r.data).includes('PRIVATE KEY'), what);
    }
    // every bad field in one answer: a taken name beside a wrong key (422), beside text that is not PEM (400)
    const both = await api('/certificates', { method: 'POST', json: { name: 'SHOP', certificate_pem: shop.chain, private_key_pem: other.key } });
    assert.equal(both.status, 422, JSON.stringify(both.data));
    assert.deepEqual(Object.keys(both.data.fields!).sort(), ['name', 'private_key_pem']);
    const three = await api('/certificates', { method: 'POST', json: { name: 'shop', certificate_pem: 'hello', private_key_pem: other.key } });
    assert.equal(three.status, 400, JSON.stringify(three.data));
    assert.deepEqual(Object.keys(three.data.fields!).sort(), ['certificate_pem', 'name']);
    assert.equal(await count(), before);
    // the chain in the right order is taken
    const good = await api('/certificates', {
      method: 'POST',
      json: { name: 'Leaf', certificate_pem: child.leaf.trim() + '\n' + shop.ca, private_key_pem: child.key },
    });
    assert.equal(good.status, 201, JSON.stringify(good.data));
    assert.equal(await count(), before + 1);
    assert.equal((await api(`/certificates/${good.data.certificate.id}`, { method: 'DELETE' })).status, 200);
    assert.equal(await count(), before);
  });

  test('a route names a certificate that covers its domain: rendered with load_pem and a connection policy, not managed; delete in use 409', async () => {
    const list = (await api('/certificates')).data.certificates;
    const cert = list.find((c) => c.name === 'Shop')!;
    // not covering, not HTTPS, unknown: 422 fields.certificate_id
    for (const [json, what] of [
      [{ domain: 'elsewhere.example.test', peer_id: peerId, target_port: 80, https_enabled: true, certificate_id: cert.id }, 'not covered'],
      [{ domain: 'a.b.shop.example.test', peer_id: peerId, target_port: 80, https_enabled: true, certificate_id: cert.id }, 'two labels below the wildcard'],
      [{ domain: 'plain.shop.example.test', peer_id: peerId, target_port: 80, certificate_id: cert.id }, 'no HTTPS'],
      [{ domain: 'x.shop.example.test', peer_id: peerId, target_port: 80, https_enabled: true, certificate_id: 999999 }, 'unknown'],
    ] as const) {
      const r = await api('/routes', { method: 'POST', json });
      assert.equal(r.status, 422, `${what}: ${JSON.stringify(r.data)}`);
      assert.ok(r.data.fields!.certificate_id, what);
    }
    const r = await api('/routes', {
      method: 'POST',
      json: { domain: 'www.shop.example.test', peer_id: peerId, target_port: 80, https_enabled: true, certificate_id: cert.id },
    });
    assert.equal(r.status, 201, JSON.stringify(r.data));
    const route = r.data.route;
    assert.equal(route.certificate_id, cert.id);
    assert.deepEqual(route.certificate.custom, { id: cert.id, name: 'Shop' });
    assert.equal(route.certificate.issuer, 'Gatehouse Test CA');
    assert.equal(route.certificate.state, 'valid');
    assert.equal(route.certificate.not_after, cert.not_after);
    const auto = await api('/routes', { method: 'POST', json: { domain: 'auto.example.test', peer_id: peerId, target_port: 80, https_enabled: true } });
    assert.equal(auto.status, 201);
    assert.equal(auto.data.route.certificate.custom, null);

    const cfg = s.deps.proxy.state.config();
    const tlsApp = objAt(cfg, 'apps', 'tls');
    assert.equal(arrAt(tlsApp, 'certificates', 'load_pem').length, 1);
    assert.deepEqual(at(tlsApp, 'certificates', 'load_pem', 0, 'tags'), [`gatehouse_cert_${cert.id}`]);
    assert.equal(objAt(tlsApp, 'certificates', 'load_pem', 0).certificate, shop.chain.trim().replace(/\r/g, '') + '\n');
    assert.deepEqual(objAt(tlsApp, 'automation', 'policies', 0), { subjects: ['www.shop.example.test'] });
    const policies = objAt(cfg, 'apps', 'http', 'servers', 'gatehouse_https').tls_connection_policies;
    assert.deepEqual(policies, [{ match: { sni: ['www.shop.example.test'] }, certificate_selection: { any_tag: [`gatehouse_cert_${cert.id}`] } }, {}]);

    const listed = (await api(`/certificates/${cert.id}`)).data.certificate;
    assert.deepEqual(listed.routes, [{ id: route.id, domain: 'www.shop.example.test' }]);
    const del = await api(`/certificates/${cert.id}`, { method: 'DELETE' });
    assert.equal(del.status, 409, JSON.stringify(del.data));
    assert.match(del.data.error!, /www\.shop\.example\.test/);
    assert.deepEqual(at(del.data, 'routes'), [{ id: route.id, domain: 'www.shop.example.test' }]);

    // renewal: a certificate that no longer covers the route is refused; one that does replaces it in Caddy
    const narrow = makeChain({ names: ['shop.example.test'] });
    const bad = await api(`/certificates/${cert.id}`, { method: 'PUT', json: { certificate_pem: narrow.chain, private_key_pem: narrow.key } });
    assert.equal(bad.status, 422, JSON.stringify(bad.data));
    assert.match(bad.data.fields!.certificate_pem, /www\.shop\.example\.test/);
    const renewed = makeChain({ names: ['www.shop.example.test'] });
    const put = await api(`/certificates/${cert.id}`, {
      method: 'PUT',
      json: { name: 'Shop 2027', certificate_pem: renewed.chain, private_key_pem: renewed.key },
    });
    assert.equal(put.status, 200, JSON.stringify(put.data));
    assert.equal(put.data.certificate.fingerprint_sha256, renewed.fingerprint);
    assert.equal(put.data.certificate.name, 'Shop 2027');
    const after = s.deps.proxy.state.config();
    assert.equal(objAt(after, 'apps', 'tls', 'certificates', 'load_pem', 0).certificate, renewed.chain.trim() + '\n');

    // back to the automatic certificate: the route leaves load_pem, and the certificate can go
    const back = await api(`/routes/${route.id}`, { method: 'PUT', json: { certificate_id: null } });
    assert.equal(back.status, 200, JSON.stringify(back.data));
    assert.equal(objAt(s.deps.proxy.state.config(), 'apps', 'tls').certificates, undefined);
    assert.equal((await api(`/certificates/${cert.id}`, { method: 'DELETE' })).status, 200);
    assert.equal((await api(`/certificates/${cert.id}`)).status, 404);
  });

  test('the expiry check warns once per upload for a certificate within 14 days of its end (activity row, event)', async () => {
    const soon = makeChain({ names: ['soon-ends.example.test'], end: new Date(clock() + 10 * 86_400_000) });
    const up = await api('/certificates', { method: 'POST', json: { name: 'Ends soon', certificate_pem: soon.chain, private_key_pem: soon.key } });
    assert.equal(up.status, 201, JSON.stringify(up.data));
    assert.equal(up.data.certificate.state, 'expiring');
    const seen: DomainEvent[] = [];
    const off = s.deps.events.onAny((e) => void (e.type === 'certificate_expiring' ? seen.push(e) : undefined));
    try {
      assert.equal(await s.deps.customCertificates.warnExpiring(), 1);
      assert.equal(await s.deps.customCertificates.warnExpiring(), 0, 'once');
      assert.equal(seen.length, 1);
      const e = seen[0] as Extract<DomainEvent, { type: 'certificate_expiring' }>;
      assert.equal(e.name, 'Ends soon');
      assert.ok(e.days_left >= 9 && e.days_left <= 10);
      const logs = await api('/logs/activity?limit=20');
      const row = logs.data.entries.find((x) => x.event_type === 'certificate_expiring');
      assert.ok(row, JSON.stringify(logs.data).slice(0, 500));
      assert.equal(row.severity, 'warning');
      assert.equal(row.code, 'certificate.expiring');
    } finally {
      off();
    }
  });
});
