// Golden files of the Caddy rendering with the licence feature prometheus_metrics (ProxySnapshot.metrics):
// Caddy's per-host HTTP metrics on, each server's host map behind a host matcher of exactly its
// names, then an empty host map for every other host (proxy/fragments/metrics.ts). Without the
// feature the rendering is the one of proxy-render.test.ts (checked below). When bin/caddy exists
// the files are also checked by `caddy validate`.
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

test('metrics on: per-host metrics, host matcher of exactly the served names, then an empty host map; off: one host-map route and no metrics', () => {
  const snap = snapshots()['metrics-mixed'];
  const cfg = renderCaddyConfig(snap) as any;
  assert.deepEqual(cfg.apps.http.metrics, { per_host: true });
  for (const name of ['gatehouse_http', 'gatehouse_https']) {
    const routes = cfg.apps.http.servers[name].routes;
    assert.equal(routes.length, 2, name);
    const hosts = Object.keys(routes[0].handle[0].hosts).sort();
    assert.deepEqual(routes[0].match, [{ host: hosts }], name);
    assert.deepEqual(routes[1], { handle: [{ handler: 'gatehouse_hostroute', hosts: {} }] }, name);
  }
  assert.deepEqual(cfg.apps.http.servers.gatehouse_https.routes[0].match[0].host, ['*.apps.example.com', 'admin.example.com', 'b.example.com']);
  assert.ok(!cfg.apps.http.servers.gatehouse_http.routes[0].match[0].host.includes('off.example.com'));
  const off = renderCaddyConfig({ ...snap, metrics: false }) as any;
  assert.equal(off.apps.http.metrics, undefined);
  for (const srv of Object.values<any>(off.apps.http.servers)) {
    assert.equal(srv.routes.length, 1);
    assert.equal(srv.routes[0].match, undefined);
  }
  // servers on other ports: each exact name also with its port (Caddy labels the Host header as sent)
  const ports = renderCaddyConfig(snapshots()['metrics-ports']) as any;
  assert.deepEqual(ports.apps.http.servers.gatehouse_http.routes[0].match[0].host, ['*.apps.example.com', 'a.example.com', 'b.example.com', 'a.example.com:8080', 'b.example.com:8080']);
  assert.deepEqual(ports.apps.http.servers.gatehouse_https.routes[0].match[0].host, ['*.apps.example.com', 'b.example.com', 'b.example.com:8443']);
  // with no host at all there is nothing to match: the one route as before, metrics still on
  const empty = renderCaddyConfig(snapshots()['metrics-no-routes']) as any;
  assert.deepEqual(empty.apps.http.metrics, { per_host: true });
  assert.equal(empty.apps.http.servers.gatehouse_http.routes.length, 1);
});

test('caddy validate accepts the metrics golden files', { skip: fs.existsSync(CADDY) ? false : `no ${CADDY}: build it with bash scripts/build-caddy.sh` }, () => {
  assertCaddyValidates(GOLDEN, Object.keys(snapshots()));
});
