// Licence feature gates of the endpoint registry: an endpoint declares the feature it needs
// (Endpoint.feature) and http/app.ts enforces it in one place, asking the container's FeatureGate.
// The server here gets a gate whose features the tests switch off and on: off, a gated endpoint
// answers 403 {ok:false, error, feature} before validation and the handler (nothing written); on,
// it works as before. The OpenAPI document shows the feature as x-feature with the 403 body.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, apiToken, bearer, type TestServer, apiCall } from './lib/server.js';
import { LICENSED_FEATURES, type FeatureGate, type LicensedFeature } from '../src/licence/features.js';
import type { Row } from './lib/rows.js';
import { openApiDocument } from './lib/openapi.js';
import { at, str } from '../../test/lib/json.js';

const off = new Set<LicensedFeature>();
const gate: FeatureGate = { isEnabled: (f) => !off.has(f) };

let s: TestServer;
let auth: Record<string, string>;
let peer: number;
const call = apiCall(
  () => s,
  () => auth,
);

before(async () => {
  s = await startTestServer({ GATEHOUSE_RATE_LIMIT_ADMIN: '100000' }, { featureGate: gate });
  auth = bearer(await apiToken(s));
  const p = await call('/peers', 'POST', { name: 'gated' });
  assert.equal(p.status, 201, JSON.stringify(p.data));
  peer = p.data.peer.id;
});
after(async () => s.close());

function assertGated(r: { status: number; data: { ok: boolean; feature?: string; error?: string } }, feature: LicensedFeature): void {
  assert.equal(r.status, 403, JSON.stringify(r.data));
  assert.equal(r.data.ok, false);
  assert.equal(r.data.feature, feature);
  assert.match(r.data.error!, new RegExp(feature));
}

test('internal_dns off: the DNS endpoints and the admin hostname answer 403 with the feature and write nothing; on: they work', async () => {
  off.clear();
  off.add('internal_dns');
  try {
    assertGated(await call('/system/dns/status'), 'internal_dns');
    assertGated(await call('/system/dns/records'), 'internal_dns');
    assertGated(await call(`/peers/${peer}/hostname`, 'PATCH', { hostname: 'nas' }), 'internal_dns');
    // ahead of validation: a bad body still gets the licence answer, not a 400
    assertGated(await call(`/peers/${peer}/hostname`, 'PATCH', { hostname: 42 }), 'internal_dns');
    const p = await call(`/peers/${peer}`);
    assert.equal(p.status, 200);
    assert.equal(p.data.peer.hostname, null);
    const acts = await s.deps.db.models.Activity.count({ where: { event_type: 'peer_hostname_set' } });
    assert.equal(acts, 0);
    // an ungated endpoint is not affected
    assert.equal((await call('/peers')).status, 200);
    // other features stay on
    assert.equal((await call(`/routes/987654/circuit-breaker/reset`, 'POST', {})).status, 404);
  } finally {
    off.clear();
  }
  const set = await call(`/peers/${peer}/hostname`, 'PATCH', { hostname: 'nas' });
  assert.equal(set.status, 200, JSON.stringify(set.data));
  assert.equal((await call(`/peers/${peer}`)).data.peer.hostname, 'nas');
  const st = await call('/system/dns/status');
  assert.equal(st.status, 200, JSON.stringify(st.data));
  assert.equal(st.data.dns.enabled, true);
  assert.equal((await call('/system/dns/records')).status, 200);
});

test('circuit_breaker off: the reset answers 403 with the feature and leaves the stored state; on: it resets', async () => {
  const c = await call('/routes', 'POST', {
    domain: 'gated-cb.example.com',
    peer_id: peer,
    target_port: 80,
    circuit_breaker_enabled: true,
    circuit_breaker_threshold: 3,
  });
  assert.equal(c.status, 201, JSON.stringify(c.data));
  const id = c.data.route.id;
  const Route = s.deps.db.models.Route;
  await Route.update({ cb_failure_count: 2 }, { where: { id } });
  const failures = async () => Number(((await Route.findByPk(id, { attributes: ['cb_failure_count'], raw: true })) as Row<'Route'> | null)!.cb_failure_count);
  off.add('circuit_breaker');
  try {
    assertGated(await call(`/routes/${id}/circuit-breaker/reset`, 'POST', {}), 'circuit_breaker');
    assert.equal(await failures(), 2);
    assert.equal(await s.deps.db.models.Activity.count({ where: { event_type: 'circuit_breaker_reset' } }), 0);
  } finally {
    off.clear();
  }
  const r = await call(`/routes/${id}/circuit-breaker/reset`, 'POST', {});
  assert.equal(r.status, 200, JSON.stringify(r.data));
  assert.equal(await failures(), 0);
  assert.equal(await s.deps.db.models.Activity.count({ where: { event_type: 'circuit_breaker_reset' } }), 1);
});

test("the OpenAPI document shows each gated endpoint's feature as x-feature and its 403 body with the feature", async () => {
  const doc = openApiDocument((await call('/openapi.json')).data);
  const gated: Array<[string, string, LicensedFeature]> = [
    ['/api/v1/system/dns/status', 'get', 'internal_dns'],
    ['/api/v1/system/dns/records', 'get', 'internal_dns'],
    ['/api/v1/peers/{id}/hostname', 'patch', 'internal_dns'],
    ['/api/v1/routes/{id}/circuit-breaker/reset', 'post', 'circuit_breaker'],
  ];
  for (const [p, m, f] of gated) {
    const op = doc.paths[p]?.[m];
    assert.ok(op, `${m} ${p}`);
    assert.equal(op['x-feature'], f, `${m} ${p}`);
    assert.match(str(op.responses?.['403']?.description), new RegExp(f));
    assert.equal(op.responses?.['403']?.content?.['application/json']?.schema?.$ref, '#/components/schemas/FeatureDisabled');
  }
  const schema = doc.components.schemas.FeatureDisabled;
  assert.deepEqual(at(schema, 'properties', 'feature', 'enum'), [...LICENSED_FEATURES]);
  assert.equal(doc.paths['/api/v1/peers'].get['x-feature'], undefined);
  // every x-feature names a licensed feature
  for (const ops of Object.values(doc.paths))
    for (const op of Object.values(ops)) if (op['x-feature']) assert.ok((LICENSED_FEATURES as readonly string[]).includes(op['x-feature']));
});
