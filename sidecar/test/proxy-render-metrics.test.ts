// Golden files of the Caddy rendering with the licence feature prometheus_metrics (ProxySnapshot.metrics):
// each server's one route is its host map counting per host (`metrics: true`), with nothing in front
// of it (proxy/fragments/metrics.ts). Without the feature the rendering is the one of
// proxy-render.test.ts (checked below). When bin/caddy exists the files are also checked by
// `caddy validate`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { renderCaddyConfig } from '../src/proxy/render.js';
import type { ProxySnapshot } from '../src/proxy/render-context.js';
import { blankRoute, type Route } from '../src/routes/model.js';
import { CADDY, assertCaddyValidates } from '../../test/lib/caddy-env.js';
import { assertGolden, goldenDir } from './lib/golden.js';
import { goldenPeers, goldenSettings } from './lib/render-fixtures.js';
import { arrAt, at, hostMap, objAt } from '../../test/lib/json.js';

const GOLDEN = goldenDir('caddy');
const peers = goldenPeers();

let nextId = 1;
function route(o: Partial<Route>): Route {
  return { ...blankRoute(Date.UTC(2026, 0, 1)), id: nextId++, domain: 'app.example.com', peer_id: 1, target_port: '8080', ...o };
}

function snapshots(): Record<string, ProxySnapshot> {
  nextId = 1;
  const mixed = [
    route({ domain: 'b.example.com', https_enabled: true }),
    route({ domain: 'a.example.com', peer_id: 2, target_port: '3000' }),
    route({ domain: '*.apps.example.com', https_enabled: true }),
    route({ domain: 'off.example.com', enabled: false }),
    route({ domain: 'ssh.example.com', route_type: 'l4', l4_protocol: 'tcp', l4_listen_port: 2222, l4_tls_mode: 'none', target_port: '22' }),
  ];
  return {
    'metrics-no-routes': { settings: goldenSettings, routes: [], peers, metrics: true },
    'metrics-mixed': { settings: { ...goldenSettings, adminDomain: 'admin.example.com' }, routes: mixed, peers, metrics: true },
    'metrics-ports': { settings: { ...goldenSettings, httpPort: 8080, httpsPort: 8443 }, routes: mixed, peers, metrics: true },
  };
}

for (const [name, snap] of Object.entries(snapshots())) {
  test(`golden: ${name}`, () => {
    assertGolden(path.join(GOLDEN, `${name}.json`), JSON.stringify(renderCaddyConfig(snap), null, 2) + '\n');
  });
}

test('metrics on: each server one route, its host map counting per host, no host matcher, no Caddy per-host metrics; off: the same route without metrics', () => {
  for (const name of ['metrics-mixed', 'metrics-ports', 'metrics-no-routes']) {
    const snap = snapshots()[name];
    const cfg = renderCaddyConfig(snap);
    assert.equal(at(cfg, 'apps', 'http', 'metrics'), undefined, name);
    const off = renderCaddyConfig({ ...snap, metrics: false });
    assert.deepEqual(Object.keys(objAt(cfg, 'apps', 'http', 'servers')), Object.keys(objAt(off, 'apps', 'http', 'servers')), name);
    for (const [sname, srv] of Object.entries(objAt(cfg, 'apps', 'http', 'servers'))) {
      assert.equal(arrAt(srv, 'routes').length, 1, `${name}/${sname}`);
      assert.equal(at(srv, 'routes', 0, 'match'), undefined, `${name}/${sname}`);
      const { handler, metrics, hosts, ...rest } = objAt(srv, 'routes', 0, 'handle', 0);
      assert.deepEqual({ handler, metrics, rest }, { handler: 'gatehouse_hostroute', metrics: true, rest: {} }, `${name}/${sname}`);
      // the same hosts as without metrics, and nothing else differs
      assert.deepEqual(hosts, hostMap(off, sname), `${name}/${sname}`);
      assert.deepEqual(at(off, 'apps', 'http', 'servers', sname, 'routes'), [{ handle: [{ handler: 'gatehouse_hostroute', hosts }] }], `${name}/${sname}`);
    }
    assert.deepEqual({ ...cfg, apps: { ...objAt(cfg, 'apps'), http: undefined } }, { ...off, apps: { ...objAt(off, 'apps'), http: undefined } }, name);
  }
  const mixed = renderCaddyConfig(snapshots()['metrics-mixed']);
  assert.deepEqual(Object.keys(hostMap(mixed, 'gatehouse_https')).sort(), ['*.apps.example.com', 'admin.example.com', 'b.example.com']);
  assert.ok(!('off.example.com' in hostMap(mixed, 'gatehouse_http')));
});

test(
  'caddy validate accepts the metrics golden files',
  { skip: fs.existsSync(CADDY) ? false : `no ${CADDY}: build it with bash scripts/build-caddy.sh` },
  () => {
    assertCaddyValidates(GOLDEN, Object.keys(snapshots()));
  },
);
