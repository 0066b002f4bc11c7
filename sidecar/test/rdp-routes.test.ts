// RDP routes API (licence feature remote_desktop) against a real sidecar in the no-proxy mode: CRUD,
// field validation (400 with fields, nothing written), access-mode rules, toggle, batch, and the
// gateway mode's linked L4 route (created, updated and deleted with the RDP route; the routes API
// refuses to touch it with 409 naming the owner; the rendered proxy configuration carries it).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, apiToken, bearer, type TestServer, apiCall } from './lib/server.js';
import { objAt } from '../../test/lib/json.js';
import { asRows } from './lib/rows.js';
import type { Refusal } from './lib/api-types.js';

let s: TestServer;
let auth: Record<string, string>;
let peer: number;
let peerAddress: string;
let gateway: number;

const call = apiCall(
  () => s,
  () => auth,
);
const rdpCount = () => s.deps.db.models.RdpRoute.count();
const routeCount = () => s.deps.db.models.Route.count();

before(async () => {
  s = await startTestServer({
    GATEHOUSE_RATE_LIMIT_ADMIN: '100000',
    GATEHOUSE_HTTP_PORT: '8080',
    GATEHOUSE_HTTPS_PORT: '8443',
    GATEHOUSE_CADDY_ADMIN: '127.0.0.1:2999',
    GATEHOUSE_WG_PORT: '51999',
  });
  auth = bearer(await apiToken(s));
  const p = await call('/peers', 'POST', { name: 'desk-pc' });
  assert.equal(p.status, 201, JSON.stringify(p.data));
  peer = p.data.peer.id;
  peerAddress = String(p.data.peer.address).split('/')[0];
  gateway = (await call('/peers', 'POST', { name: 'home-gw', is_gateway: true, api_port: 9876 })).data.peer.id;
});
after(async () => s.close());

test('create internal by peer: defaults, target_host from the peer tunnel IP, API field names; GET, list, PATCH, DELETE', async () => {
  const r = await call('/rdp', 'POST', { name: 'Desk', access_mode: 'internal', target_peer_id: peer });
  assert.equal(r.status, 201, JSON.stringify(r.data));
  const v = r.data.route;
  assert.equal(v.name, 'Desk');
  assert.equal(v.access_mode, 'internal');
  assert.equal(v.target_host, peerAddress);
  assert.equal(v.target_port, 3389);
  assert.equal(v.enabled, true);
  assert.equal(v.network_level_auth, true);
  assert.equal(v.audio_mode, 'local');
  assert.equal(v.clipboard_enabled, true);
  assert.equal(v.color_depth, 32);
  assert.equal(v.resolution, null);
  assert.deepEqual(v.maintenance_windows, []);
  assert.equal(v.allowed_user_ids, null);
  assert.equal(v.has_credentials, false);
  assert.equal(v.rotation_state, 'none');
  assert.equal(v.gateway_l4_route_id, null);
  assert.equal('credentials_envelope' in v, false);
  const got = await call(`/rdp/${v.id}`);
  assert.deepEqual(got.data.route, v);
  const list = await call('/rdp');
  assert.equal(list.status, 200);
  assert.ok(list.data.routes.some((x: { id: number }) => x.id === v.id));
  const p = await call(`/rdp/${v.id}`, 'PATCH', { resolution: '1920x1080', color_depth: 24, audio_mode: 'off', allowed_user_ids: [1] });
  assert.equal(p.status, 200, JSON.stringify(p.data));
  assert.equal(p.data.route.resolution, '1920x1080');
  assert.equal(p.data.route.color_depth, 24);
  assert.deepEqual(p.data.route.allowed_user_ids, [1]);
  assert.equal((await call('/rdp', 'POST', { name: 'Desk', access_mode: 'external', target_host: 'rdp.example.com' })).status, 409, 'names are unique');
  const d = await call(`/rdp/${v.id}`, 'DELETE');
  assert.equal(d.status, 200);
  assert.equal((await call(`/rdp/${v.id}`)).status, 404);
});

test('400 with fields and nothing written', async () => {
  const before = await rdpCount();
  const cases: [unknown, string][] = [
    [{ access_mode: 'internal', target_host: '10.0.0.5' }, 'name'],
    [{ name: 'x' }, 'access_mode'],
    [{ name: 'x', access_mode: 'teleport', target_host: 'h' }, 'access_mode'],
    [{ name: 'x', access_mode: 'internal' }, 'target_host'],
    [{ name: 'x', access_mode: 'external', target_host: 'a b' }, 'target_host'],
    [{ name: 'x', access_mode: 'both', target_host: '10.0.0.5' }, 'external_host'],
    [{ name: 'x', access_mode: 'gateway', target_host: '192.168.1.5', listen_port: 33890 }, 'gateway_peer_id'],
    [{ name: 'x', access_mode: 'gateway', target_host: '192.168.1.5', gateway_peer_id: gateway }, 'listen_port'],
    [{ name: 'x', access_mode: 'gateway', target_host: '192.168.1.5', gateway_peer_id: peer, listen_port: 33890 }, 'gateway_peer_id'],
    [{ name: 'x', access_mode: 'internal', target_host: '10.0.0.5', target_port: 70000 }, 'target_port'],
    [{ name: 'x', access_mode: 'internal', target_host: '10.0.0.5', resolution: '1920*1080' }, 'resolution'],
    [{ name: 'x', access_mode: 'internal', target_host: '10.0.0.5', color_depth: 8 }, 'color_depth'],
    [{ name: 'x', access_mode: 'internal', target_host: '10.0.0.5', audio_mode: 'loud' }, 'audio_mode'],
    [{ name: 'x', access_mode: 'internal', target_host: '10.0.0.5', wol_enabled: true }, 'wol_mac'],
    [{ name: 'x', access_mode: 'internal', target_host: '10.0.0.5', wol_mac: 'zz' }, 'wol_mac'],
    [{ name: 'x', access_mode: 'internal', target_host: '10.0.0.5', target_peer_id: 99999 }, 'target_peer_id'],
    [{ name: 'x', access_mode: 'internal', target_host: '10.0.0.5', allowed_user_ids: [99999] }, 'allowed_user_ids'],
    [{ name: 'x', access_mode: 'internal', target_host: '10.0.0.5', gateway_port: 443 }, 'gateway_host'],
    [{ name: 'x', access_mode: 'external', target_host: 'rdp.example.com', wol_enabled: true, wol_mac: 'AA:BB:CC:DD:EE:FF' }, 'wol_enabled'],
    [
      { name: 'x', access_mode: 'internal', target_host: '10.0.0.5', maintenance_windows: [{ from: '2030-01-02T00:00:00Z', to: '2030-01-01T00:00:00Z' }] },
      'maintenance_windows.0.to',
    ],
    [
      {
        name: 'x',
        access_mode: 'internal',
        target_host: '10.0.0.5',
        credentials: { v: 1, alg: 'RSA-OAEP-256+A256GCM', kid: '0123456789abcdef', key: 'AA==', iv: 'AA==', data: 'AA==' },
      },
      'credentials.kid',
    ],
  ];
  for (const [body, field] of cases) {
    const r = await call('/rdp', 'POST', body);
    assert.ok([400, 422].includes(r.status), `${JSON.stringify(body)} → ${r.status} ${JSON.stringify(r.data)}`);
    assert.equal(r.data.ok, false);
    assert.ok(r.data.fields?.[field], `${JSON.stringify(body)}: fields.${field} expected, got ${JSON.stringify(r.data.fields)}`);
  }
  assert.equal(await rdpCount(), before, 'nothing written');
  const ok = await call('/rdp', 'POST', { name: 'patchme', access_mode: 'external', target_host: 'rdp.example.com' });
  assert.equal(ok.status, 201, JSON.stringify(ok.data));
  assert.equal(ok.data.route.listen_port, 3389, 'external: listen_port defaults to target_port');
  const bad = await call(`/rdp/${ok.data.route.id}`, 'PATCH', { target_port: 0 });
  assert.equal(bad.status, 400);
  assert.ok(bad.data.fields!.target_port);
  assert.equal((await call(`/rdp/${ok.data.route.id}`, 'PATCH', {})).status, 422);
  assert.equal((await call(`/rdp/${ok.data.route.id}`)).data.route.target_port, 3389);
  await call(`/rdp/${ok.data.route.id}`, 'DELETE');
});

test('gateway mode: the linked L4 TCP route is created with the RDP route, rendered, refused to the routes API (409 naming the owner), updated, and deleted with it', async () => {
  const routesBefore = await routeCount();
  const r = await call('/rdp', 'POST', {
    name: 'Office PC',
    access_mode: 'gateway',
    gateway_peer_id: gateway,
    target_host: '192.168.10.20',
    listen_port: 33891,
    wol_enabled: true,
    wol_mac: 'aa-bb-cc-dd-ee-01',
  });
  assert.equal(r.status, 201, JSON.stringify(r.data));
  const v = r.data.route;
  assert.equal(typeof v.gateway_l4_route_id, 'number');
  assert.equal(v.gateway_listen_port, 33891);
  assert.equal(await routeCount(), routesBefore + 1);
  const linked = (await call(`/routes/${v.gateway_l4_route_id}`)).data.route;
  assert.equal(linked.route_type, 'l4');
  assert.equal(linked.target_kind, 'gateway');
  assert.equal(linked.target_peer_id, gateway);
  assert.equal(linked.target_lan_host, '192.168.10.20');
  assert.equal(linked.target_lan_port, 3389);
  assert.equal(linked.l4_protocol, 'tcp');
  assert.equal(linked.l4_listen_port, 33891);
  assert.equal(linked.wol_mac, 'AA:BB:CC:DD:EE:01');
  assert.equal(linked.rdp_route_id, v.id, 'the route names its owner');
  const listed = (await call('/routes?type=l4')).data.routes.find((x: { id: number }) => x.id === linked.id);
  assert.equal(listed!.rdp_route_id, v.id);
  // the rendered proxy configuration carries it: a layer4 server on the listen port
  const srv = objAt(await s.deps.proxy.render(), 'apps', 'layer4', 'servers', `route_${linked.id}`);
  assert.deepEqual(srv.listen, [':33891']);

  // the routes API refuses to touch it, naming the owner; nothing changes
  const refusals: [string, string, unknown?][] = [
    [`/routes/${linked.id}`, 'PUT', { l4_listen_port: 33999 }],
    [`/routes/${linked.id}`, 'DELETE'],
    [`/routes/${linked.id}/toggle`, 'PUT'],
    ['/routes/batch', 'POST', { action: 'disable', ids: [linked.id] }],
    ['/routes/batch', 'POST', { action: 'delete', ids: [linked.id] }],
  ];
  for (const [p, m, body] of refusals) {
    const x = await call<Refusal>(p, m, body);
    assert.equal(x.status, 409, `${m} ${p}: ${x.status} ${JSON.stringify(x.data)}`);
    assert.match(x.data.error!, new RegExp(`RDP route 'Office PC' \\(id ${v.id}\\)`));
  }
  const still = (await call(`/routes/${linked.id}`)).data.route;
  assert.equal(still.enabled, true);
  assert.equal(still.l4_listen_port, 33891);

  // a port already used by another L4 route is refused (the routes' L4 conflict check), nothing written
  const other = await call('/routes', 'POST', {
    domain: 'ssh.example.com',
    route_type: 'l4',
    l4_protocol: 'tcp',
    l4_listen_port: 2222,
    target_kind: 'gateway',
    target_peer_id: gateway,
    target_lan_host: '192.168.10.30',
    target_lan_port: 22,
  });
  assert.equal(other.status, 201, JSON.stringify(other.data));
  assert.equal(other.data.route.rdp_route_id, null);
  const clash = await call(`/rdp/${v.id}`, 'PATCH', { listen_port: 2222 });
  assert.equal(clash.status, 409, JSON.stringify(clash.data));
  assert.equal(clash.data.field, 'listen_port');
  assert.equal((await call(`/rdp/${v.id}`)).data.route.listen_port, 33891);
  const clashNew = await call('/rdp', 'POST', {
    name: 'Clash',
    access_mode: 'gateway',
    gateway_peer_id: gateway,
    target_host: '192.168.10.21',
    listen_port: 2222,
  });
  assert.equal(clashNew.status, 409);
  assert.equal(await s.deps.db.models.RdpRoute.count({ where: { name: 'Clash' } }), 0);

  // an update follows into the linked route and the configuration
  const up = await call(`/rdp/${v.id}`, 'PATCH', { listen_port: 33892, target_port: 3390, target_host: '192.168.10.21' });
  assert.equal(up.status, 200, JSON.stringify(up.data));
  assert.equal(up.data.route.gateway_l4_route_id, linked.id, 'the same linked route');
  assert.equal(up.data.route.gateway_listen_port, 33892);
  const l2 = (await call(`/routes/${linked.id}`)).data.route;
  assert.equal(l2.l4_listen_port, 33892);
  assert.equal(l2.target_lan_port, 3390);
  assert.equal(l2.target_lan_host, '192.168.10.21');
  assert.deepEqual(objAt(await s.deps.proxy.render(), 'apps', 'layer4', 'servers', `route_${linked.id}`).listen, [':33892']);

  // toggle disables the linked route too
  const t = await call(`/rdp/${v.id}/toggle`, 'PUT');
  assert.equal(t.data.enabled, false);
  assert.equal((await call(`/routes/${linked.id}`)).data.route.enabled, false);
  assert.equal(objAt(await s.deps.proxy.render(), 'apps', 'layer4', 'servers')[`route_${linked.id}`], undefined);
  await call(`/rdp/${v.id}/toggle`, 'PUT');

  // leaving gateway mode deletes the linked route
  const ext = await call(`/rdp/${v.id}`, 'PATCH', { access_mode: 'external', target_host: 'office.example.com', wol_enabled: false });
  assert.equal(ext.status, 200, JSON.stringify(ext.data));
  assert.equal(ext.data.route.gateway_l4_route_id, null);
  assert.equal(ext.data.route.gateway_peer_id, null);
  assert.equal(ext.data.route.gateway_listen_port, null);
  assert.equal((await call(`/routes/${linked.id}`)).status, 404);
  // back to gateway mode: a new linked route; deleting the RDP route deletes it
  const back = await call(`/rdp/${v.id}`, 'PATCH', { access_mode: 'gateway', gateway_peer_id: gateway, target_host: '192.168.10.20', listen_port: 33893 });
  assert.equal(back.status, 200, JSON.stringify(back.data));
  const newLinked = back.data.route.gateway_l4_route_id;
  assert.equal(typeof newLinked, 'number');
  assert.equal((await call(`/rdp/${v.id}`, 'DELETE')).status, 200);
  assert.equal((await call(`/routes/${newLinked}`)).status, 404);
  assert.equal(objAt(await s.deps.proxy.render(), 'apps', 'layer4', 'servers')[`route_${newLinked}`], undefined);
  await call(`/routes/${other.data.route.id}`, 'DELETE');
  assert.equal(await routeCount(), routesBefore);
});

test('toggle and batch: enable, disable, delete with per-id results; linked routes follow', async () => {
  const a = (await call('/rdp', 'POST', { name: 'B1', access_mode: 'external', target_host: 'b1.example.com' })).data.route;
  const b = (await call('/rdp', 'POST', { name: 'B2', access_mode: 'gateway', gateway_peer_id: gateway, target_host: '192.168.10.40', listen_port: 33894 }))
    .data.route;
  const dis = await call('/rdp/batch', 'POST', { action: 'disable', ids: [a.id, b.id, 99999] });
  assert.equal(dis.status, 200, JSON.stringify(dis.data));
  assert.equal(dis.data.succeeded, 2);
  assert.equal(dis.data.failed, 1);
  assert.deepEqual(dis.data.results[2], { id: 99999, ok: false, error: 'RDP route not found', code: 'resource.not_found', params: { what: 'RDP route' } });
  assert.equal((await call(`/rdp/${a.id}`)).data.route.enabled, false);
  assert.equal((await call(`/routes/${b.gateway_l4_route_id}`)).data.route.enabled, false);
  const en = await call('/rdp/batch', 'POST', { action: 'enable', ids: [b.id] });
  assert.equal(en.data.succeeded, 1);
  assert.equal((await call(`/routes/${b.gateway_l4_route_id}`)).data.route.enabled, true);
  assert.equal((await call('/rdp/batch', 'POST', { action: 'explode', ids: [a.id] })).status, 400);
  const del = await call('/rdp/batch', 'POST', { action: 'delete', ids: [a.id, b.id] });
  assert.equal(del.data.succeeded, 2);
  assert.equal((await call(`/rdp/${a.id}`)).status, 404);
  assert.equal((await call(`/routes/${b.gateway_l4_route_id}`)).status, 404);
});

test('a refused PATCH of a gateway-mode route changes neither it nor its linked route; writes are in the activity log', async () => {
  const r = (
    await call('/rdp', 'POST', { name: 'Guarded', access_mode: 'gateway', gateway_peer_id: gateway, target_host: '192.168.10.50', listen_port: 33897 })
  ).data.route;
  const linkedBefore = (await call(`/routes/${r.gateway_l4_route_id}`)).data.route;
  const bad = await call(`/rdp/${r.id}`, 'PATCH', { gateway_peer_id: peer, listen_port: 33898 });
  assert.equal(bad.status, 422, JSON.stringify(bad.data));
  assert.match(bad.data.fields!.gateway_peer_id, /not a gateway peer/);
  const bad2 = await call(`/rdp/${r.id}`, 'PATCH', { listen_port: 8080 });
  assert.equal(bad2.status, 409, 'the HTTP listener port (GATEHOUSE_HTTP_PORT)');
  assert.equal(bad2.data.field, 'listen_port');
  assert.deepEqual((await call(`/rdp/${r.id}`)).data.route, r);
  assert.deepEqual((await call(`/routes/${r.gateway_l4_route_id}`)).data.route, linkedBefore);
  assert.equal((await call(`/rdp/${r.id}`, 'PATCH', { description: 'ok now' })).status, 200);
  await call(`/rdp/${r.id}`, 'DELETE');
  const acts = asRows<'Activity'>(await s.deps.db.models.Activity.findAll({ where: { source: 'rdp' }, raw: true }));
  const of = (t: string) => acts.filter((a) => a.event_type === t && JSON.parse(a.details!).rdp_route_id === r.id);
  assert.equal(of('rdp_route_created').length, 1);
  assert.equal(of('rdp_route_updated').length, 1, 'refused writes leave no row');
  assert.equal(of('rdp_route_deleted').length, 1);
  assert.match(of('rdp_route_created')[0].message, /RDP route Guarded created \(gateway\)/);
});
