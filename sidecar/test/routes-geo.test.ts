// Country filter (geo_filter) through the routes API and the renderer, and the country database
// (GATEHOUSE_GEOIP_DB) of GET /system/geoip: codes checked (400 with fields, nothing written), a
// filter refused while no database is there (422 fields.geo_filter, message code), saved and
// rendered in the protection order (ACL → IP filter → country filter) on HTTP and L4 routes, and
// the trusted proxies of GATEHOUSE_TRUSTED_PROXIES on the HTTP servers with the IP filter then
// judging client_ip. The test writes its own MMDB file (test/lib/geoip.ts).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTestServer, apiToken, bearer, type TestServer, callOn } from './lib/server.js';
import type { ProxyService } from '../src/proxy/service.js';
import { at, hostMap, objAt, objsAt, str } from '../../test/lib/json.js';
import { writeTestMmdb } from '../../test/lib/geoip.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-geo-'));
const dbFile = path.join(dir, 'country.mmdb');
let s: TestServer; // with the database
let bare: TestServer; // without one
let auth: Record<string, string>;
let bareAuth: Record<string, string>;
let peer: number;

/** call(server, headers, path, method?, json?): the API of either server (callOn). */
const call = callOn;
const proxy = () => s.deps.proxy as ProxyService;

before(async () => {
  await writeTestMmdb(dbFile, { '127.0.0.1': 'DE', '10.20.0.0/16': 'FR' }, { epoch: 1767225600 });
  s = await startTestServer({ GATEHOUSE_GEOIP_DB: dbFile, GATEHOUSE_TRUSTED_PROXIES: '192.0.2.10, 2001:db8::/64', GATEHOUSE_RATE_LIMIT_ADMIN: '100000' });
  bare = await startTestServer({ GATEHOUSE_RATE_LIMIT_ADMIN: '100000' });
  auth = bearer(await apiToken(s));
  bareAuth = bearer(await apiToken(bare));
  peer = (await call(s, auth, '/peers', 'POST', { name: 'geo-a' })).data.peer.id;
});
after(async () => {
  await s?.close();
  await bare?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

test('GET /system/geoip: the database as its metadata says (type, source, build date), or why there is none', async () => {
  const r = await call(s, auth, '/system/geoip');
  assert.equal(r.status, 200, JSON.stringify(r.data));
  const g = r.data.geoip;
  assert.equal(g.configured, true);
  assert.equal(g.present, true);
  assert.equal(g.path, dbFile);
  assert.equal(g.database_type, 'GeoLite2-Country');
  assert.equal(g.source, 'maxmind');
  assert.equal(g.built_at, '2026-01-01T00:00:00.000Z');
  assert.equal(g.ip_version, 6);
  assert.equal(g.error, null);
  assert.ok(g.size_bytes! > 0);

  const none = await call(bare, bareAuth, '/system/geoip');
  assert.equal(none.status, 200);
  assert.equal(none.data.geoip.configured, false);
  assert.equal(none.data.geoip.present, false);

  // a file that is not a database, and a missing one: configured, not present, with the reason
  const junk = path.join(dir, 'junk.mmdb');
  fs.writeFileSync(junk, 'not a database');
  const { GeoipService } = await import('../src/geoip/service.js');
  const j = new GeoipService(junk).status();
  assert.equal(j.present, false);
  assert.match(j.error ?? '', /not a MaxMind-format database/);
  const m = new GeoipService(path.join(dir, 'missing.mmdb')).status();
  assert.equal(m.present, false);
  assert.match(m.error ?? '', /ENOENT/);
  // a DB-IP file is told by its type
  const dbip = path.join(dir, 'dbip.mmdb');
  await writeTestMmdb(dbip, { '127.0.0.1': 'AT' }, { type: 'DBIP-Country-Lite' });
  assert.equal(new GeoipService(dbip).status().source, 'dbip');
});

test('bad geo_filter bodies: 400 with fields, nothing written or rendered', async () => {
  const base = { domain: 'geo-bad.example.com', peer_id: peer, target_port: 80 };
  const count = await s.deps.db.models.Route.count();
  const loads = proxy().loads;
  for (const [gf, field] of [
    [{ mode: 'allow', countries: ['DE', 'XX'] }, 'geo_filter.countries.1'],
    [{ mode: 'allow', countries: ['DEU'] }, 'geo_filter.countries.0'],
    [{ mode: 'allow', countries: [] }, 'geo_filter.countries'],
    [{ mode: 'block', countries: ['DE'] }, 'geo_filter.mode'],
    [{ mode: 'deny', countries: ['DE'], extra: 1 }, 'geo_filter'],
    [{ mode: 'deny', countries: 'DE' }, 'geo_filter.countries'],
    ['DE', 'geo_filter'],
  ] as const) {
    const r = await call(s, auth, '/routes', 'POST', { ...base, geo_filter: gf });
    // two letters that name no country: more than the document's pattern says, so 422; the rest 400
    assert.equal(r.status, JSON.stringify(gf).includes('"XX"') ? 422 : 400, `${JSON.stringify(gf)} → ${r.status} ${JSON.stringify(r.data)}`);
    assert.ok(
      Object.keys(r.data.fields ?? {}).some((k) => k === field || k.startsWith(`${field}.`)),
      `${JSON.stringify(gf)}: want fields.${field}, got ${JSON.stringify(r.data.fields)}`,
    );
  }
  const xx = await call(s, auth, '/routes', 'POST', { ...base, geo_filter: { mode: 'allow', countries: ['XX'] } });
  assert.equal(xx.data.field_codes?.['geo_filter.countries.0']?.code, 'route.field.geo_unknown_country', JSON.stringify(xx.data));
  assert.equal(await s.deps.db.models.Route.count(), count, 'nothing was written');
  assert.equal(proxy().loads, loads, 'nothing was rendered');
});

test('a country filter without a database is refused (422 fields.geo_filter with its message code); null is fine', async () => {
  const barePeer = (await call(bare, bareAuth, '/peers', 'POST', { name: 'geo-bare' })).data.peer.id;
  const body = {
    peer_id: barePeer,
    target_port: 22,
    geo_filter: { mode: 'deny', countries: ['RU'] },
    route_type: 'l4',
    l4_protocol: 'tcp',
    l4_listen_port: 4455,
  };
  const r = await call(bare, bareAuth, '/routes', 'POST', body);
  assert.equal(r.status, 422, JSON.stringify(r.data));
  assert.equal(r.data.field_codes?.geo_filter?.code, 'route.field.geo_no_database', JSON.stringify(r.data));
  assert.match(r.data.fields!.geo_filter, /GATEHOUSE_GEOIP_DB/);
  assert.equal(await bare.deps.db.models.Route.count(), 0);
  const ok = await call(bare, bareAuth, '/routes', 'POST', { ...body, geo_filter: null });
  assert.equal(ok.status, 201, JSON.stringify(ok.data));
  assert.equal(ok.data.route.geo_filter, null);
});

test('HTTP route: saved normalized, rendered after the IP filter; trusted proxies make both judge client_ip; removing it', async () => {
  const r = await call(s, auth, '/routes', 'POST', {
    domain: 'geo.example.com',
    peer_id: peer,
    target_port: 80,
    ip_filter_enabled: true,
    ip_filter_mode: 'blacklist',
    ip_filter_rules: ['198.51.100.7'],
    geo_filter: { mode: 'allow', countries: ['fr', ' DE ', 'FR'] },
  });
  assert.equal(r.status, 201, JSON.stringify(r.data));
  const id = r.data.route.id;
  assert.deepEqual(r.data.route.geo_filter, { mode: 'allow', countries: ['DE', 'FR'] });
  assert.deepEqual((await call(s, auth, `/routes/${id}`)).data.route.geo_filter, { mode: 'allow', countries: ['DE', 'FR'] });

  const cfg = await proxy().render();
  const srv = objAt(cfg, 'apps', 'http', 'servers', 'gatehouse_http');
  assert.deepEqual(srv.trusted_proxies, { ranges: ['192.0.2.10', '2001:db8::/64'], source: 'static' });
  assert.equal(srv.trusted_proxies_strict, 1);
  const entry = objsAt(hostMap(cfg), 'geo.example.com', 'routes');
  assert.deepEqual(entry[0].match, [{ client_ip: { ranges: ['198.51.100.7'] } }], 'IP filter first, on client_ip');
  const geo = entry[1];
  assert.equal(at(geo, 'handle', 0, 'status_code'), 403);
  const m = objAt(geo, 'match', 0, 'not', 0, 'gatehouse_geo');
  assert.deepEqual(m.countries, ['DE', 'FR']);
  assert.equal(m.db, dbFile);
  assert.match(str(m.version), /^\d+-/);
  assert.match(str(objsAt(entry[2], 'handle').at(-1)?.handler), /^(reverse_proxy|invoke)$/);

  // deny mode matches the listed countries directly
  const u = await call(s, auth, `/routes/${id}`, 'PUT', { geo_filter: { mode: 'deny', countries: ['CN'] }, ip_filter_enabled: false });
  assert.equal(u.status, 200, JSON.stringify(u.data));
  const e2 = objAt(hostMap(await proxy().render()), 'geo.example.com');
  assert.deepEqual(at(e2, 'routes', 0, 'match'), [{ gatehouse_geo: { countries: ['CN'], db: dbFile, version: m.version } }]);

  // null removes it: the route is a plain one again
  const off = await call(s, auth, `/routes/${id}`, 'PUT', { geo_filter: null });
  assert.equal(off.data.route.geo_filter, null);
  const e3 = objsAt(hostMap(await proxy().render()), 'geo.example.com', 'routes');
  assert.equal(e3.length, 1);
  assert.match(str(objsAt(e3[0], 'handle').at(-1)?.handler), /^(reverse_proxy|invoke)$/);
});

test('L4 route: the layer4 server closes refused connections (ACL → country filter → proxy); the file going away fails closed', async () => {
  const r = await call(s, auth, '/routes', 'POST', {
    route_type: 'l4',
    l4_protocol: 'tcp',
    l4_listen_port: 4456,
    peer_id: peer,
    target_port: 22,
    acl_enabled: true,
    acl_peer_ids: [peer],
    geo_filter: { mode: 'deny', countries: ['FR'] },
  });
  assert.equal(r.status, 201, JSON.stringify(r.data));
  const srv = objAt(await proxy().render(), 'apps', 'layer4', 'servers', `route_${r.data.route.id}`);
  assert.ok(at(srv, 'routes', 0, 'match', 0, 'not', 0, 'remote_ip'), 'ACL first');
  assert.deepEqual(at(srv, 'routes', 1, 'handle'), [{ handler: 'close' }]);
  assert.deepEqual(at(srv, 'routes', 1, 'match', 0, 'gatehouse_geo', 'countries'), ['FR']);
  assert.equal(at(srv, 'routes', 2, 'handle', 0, 'handler'), 'proxy');

  // the database removed after the route was saved: the route refuses everyone rather than serve unfiltered
  const moved = `${dbFile}.away`;
  fs.renameSync(dbFile, moved);
  try {
    const gone = objAt(await proxy().render(), 'apps', 'layer4', 'servers', `route_${r.data.route.id}`);
    assert.deepEqual(at(gone, 'routes', 1), { handle: [{ handler: 'close' }] });
    const st = await call(s, auth, '/system/geoip');
    assert.equal(st.data.geoip.present, false);
    assert.equal(st.data.geoip.routes_with_filter, 1);
  } finally {
    fs.renameSync(moved, dbFile);
  }
});
