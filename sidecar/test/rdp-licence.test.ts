// Licence feature remote_desktop: off, every /rdp endpoint answers 403 {feature} before validation
// and nothing is written, and the linked L4 routes of gateway-mode RDP routes leave the proxy
// configuration (their rows stay); on again, the endpoints work and the linked routes are rendered.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, apiToken, bearer, type TestServer, apiCall } from './lib/server.js';
import type { FeatureGate, LicensedFeature } from '../src/licence/features.js';
import { at, obj } from '../../test/lib/json.js';
import type { Row } from './lib/rows.js';
import type { Refusal } from './lib/api-types.js';

const off = new Set<LicensedFeature>();
const gate: FeatureGate = { isEnabled: (f) => !off.has(f) };
let s: TestServer;
let auth: Record<string, string>;
let gateway: number;
const call = apiCall(
  () => s,
  () => auth,
);
const l4Servers = async () => Object.keys(obj(at(await s.deps.proxy.render(), 'apps', 'layer4', 'servers') ?? {}));

before(async () => {
  s = await startTestServer({ GATEHOUSE_RATE_LIMIT_ADMIN: '100000' }, { featureGate: gate });
  auth = bearer(await apiToken(s));
  gateway = (await call('/peers', 'POST', { name: 'gw', is_gateway: true, api_port: 9876 })).data.peer.id;
});
after(async () => s.close());

test('remote_desktop off: 403 with the feature on every RDP endpoint, nothing written; linked routes not rendered; on: back', async () => {
  const r = await call('/rdp', 'POST', { name: 'GW desk', access_mode: 'gateway', gateway_peer_id: gateway, target_host: '192.168.1.10', listen_port: 33895 });
  assert.equal(r.status, 201, JSON.stringify(r.data));
  const id = r.data.route.id;
  const linked = `route_${r.data.route.gateway_l4_route_id}`;
  assert.ok((await l4Servers()).includes(linked));
  off.add('remote_desktop');
  try {
    const calls: [string, string, unknown?][] = [
      ['/rdp', 'GET'],
      ['/rdp', 'POST', { name: 'x', access_mode: 'external', target_host: 'x.example.com' }],
      ['/rdp', 'POST', { bad: 1 }],
      [`/rdp/${id}`, 'GET'],
      [`/rdp/${id}`, 'PATCH', { name: 'renamed' }],
      [`/rdp/${id}`, 'DELETE'],
      [`/rdp/${id}/toggle`, 'PUT'],
      ['/rdp/batch', 'POST', { action: 'delete', ids: [id] }],
      ['/rdp/pubkey', 'GET'],
      [`/rdp/${id}/credentials`, 'GET'],
      [`/rdp/${id}/credentials`, 'PUT', { credentials: {} }],
      [`/rdp/${id}/credentials`, 'DELETE'],
      [`/rdp/${id}/maintenance`, 'GET'],
      [`/rdp/${id}/maintenance`, 'PUT', { windows: [] }],
      ['/rdp/rotation/pending', 'GET'],
      [`/rdp/${id}/rotation/ack`, 'POST'],
    ];
    for (const [p, m, body] of calls) {
      const x = await call<Refusal>(p, m, body);
      assert.equal(x.status, 403, `${m} ${p}: ${x.status} ${JSON.stringify(x.data)}`);
      assert.equal(x.data.feature, 'remote_desktop');
    }
    assert.equal(await s.deps.db.models.RdpRoute.count(), 1, 'nothing created or deleted');
    assert.equal(((await s.deps.db.models.RdpRoute.findByPk(id, { raw: true })) as Row<'RdpRoute'> | null)!.name, 'GW desk');
    assert.equal(await s.deps.db.models.RdpServerKey.count(), 0, 'no key made');
    assert.equal((await l4Servers()).includes(linked), false, 'the linked route leaves the proxy configuration');
    const other = await call('/routes', 'POST', {
      domain: 'ssh.example.com',
      route_type: 'l4',
      l4_protocol: 'tcp',
      l4_listen_port: 2222,
      target_kind: 'gateway',
      target_peer_id: gateway,
      target_lan_host: '192.168.1.11',
      target_lan_port: 22,
    });
    assert.equal(other.status, 201);
    assert.ok((await l4Servers()).includes(`route_${other.data.route.id}`), 'other L4 routes are not affected');
  } finally {
    off.delete('remote_desktop');
  }
  assert.ok((await l4Servers()).includes(linked), 'back with the feature');
  assert.equal((await call(`/rdp/${id}`)).status, 200);
});
