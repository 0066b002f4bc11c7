// The apply path's "changed hosts" computation (proxy/apply.ts), pure: a state set from a full
// rendering, plans for the rows of some routes rendered alone by the same renderer, and the rule
// that a plan is a full load exactly when the rest of the configuration (the frame) would change.
// After every plan, the state equals a full rendering of the new rows (hosts and config_hash).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { blankRoute, type Route } from '../src/routes/model.js';
import { AppliedState, proxyConfigHash, type Plan } from '../src/proxy/apply.js';
import { renderCaddyConfig, renderFrame, renderHosts, summarizeHosts } from '../src/proxy/render.js';
import type { ProxySnapshot } from '../src/proxy/render-context.js';
import { goldenPeers, goldenSettings } from './lib/render-fixtures.js';
import { at, hostMap } from '../../test/lib/json.js';

const settings = goldenSettings;
const peers = goldenPeers();
let nextId = 1;
const route = (o: Partial<Route>): Route => ({ ...blankRoute(0), id: nextId++, peer_id: 1, target_port: '8080', ...o }) as Route;
const snap = (routes: Route[], extra: Partial<ProxySnapshot> = {}): ProxySnapshot => ({ settings, routes, peers, metrics: true, ...extra });

function loaded(routes: Route[]): AppliedState {
  const s = new AppliedState();
  const rendered = renderHosts(snap(routes));
  s.setFull(
    renderFrame(settings, summarizeHosts(rendered.maps), rendered, true),
    rendered,
    routes.filter((r) => r.route_type === 'l4').map((r) => r.id),
  );
  return s;
}

/** Plans the change of `ids` from their new rows (rendered alone) and commits it. */
function change(s: AppliedState, all: Route[], ids: number[]): Plan | 'full' {
  const rows = all.filter((r) => ids.includes(r.id));
  const plan = s.planRoutes(settings, renderHosts(snap(rows)), ids, new Set(rows.filter((r) => r.route_type === 'l4').map((r) => r.id)), true);
  if (plan !== 'full') s.commit(plan);
  return plan;
}

/** The state now holds exactly what a full rendering of `all` gives. */
function assertMatches(s: AppliedState, all: Route[]): void {
  const full = renderCaddyConfig(snap(all));
  assert.equal(s.configHash(), proxyConfigHash(full));
  const got = s.config();
  // a server that is not there has no hosts
  const hosts = (cfg: unknown, m: string) => (at(cfg, 'apps', 'http', 'servers', m) === undefined ? {} : hostMap(cfg, m));
  for (const m of ['gatehouse_http', 'gatehouse_https']) {
    const want = hosts(full, m);
    assert.deepEqual(hosts(got, m), want, m);
  }
}

test('create, edit, rename, toggle and delete of plain routes are host puts and deletes of those hosts only', () => {
  const a = route({ domain: 'a.example.com' });
  const tlsA = route({ domain: 'tls.example.com', https_enabled: true });
  let all = [a, tlsA];
  const s = loaded(all);
  assertMatches(s, all);

  const b = route({ domain: 'b.example.com' });
  all = [...all, b];
  let p = change(s, all, [b.id]);
  assert.notEqual(p, 'full');
  assert.deepEqual(Object.keys((p as Plan).changes.maps), ['gatehouse_http']);
  assert.deepEqual(Object.keys((p as Plan).changes.maps.gatehouse_http.put), ['b.example.com']);
  assertMatches(s, all);

  // rename: the old name is deleted, the new one put, in one change set
  const b2 = { ...b, domain: 'b2.example.com', compress_enabled: true };
  all = [a, tlsA, b2];
  p = change(s, all, [b.id]);
  assert.deepEqual((p as Plan).changes.maps.gatehouse_http, {
    put: { 'b2.example.com': hostMap(s.config())['b2.example.com'] },
    delete: ['b.example.com'],
  });
  assertMatches(s, all);

  // HTTPS on: the route moves to the HTTPS map, the HTTP map gets its redirect (no full load: HTTPS hosts exist)
  const b3 = { ...b2, https_enabled: true };
  all = [a, tlsA, b3];
  p = change(s, all, [b.id]);
  assert.notEqual(p, 'full');
  assert.deepEqual(Object.keys((p as Plan).changes.maps).sort(), ['gatehouse_http', 'gatehouse_https']);
  assertMatches(s, all);

  // disabled, then deleted
  all = [a, tlsA, { ...b3, enabled: false }];
  p = change(s, all, [b.id]);
  assert.deepEqual((p as Plan).changes.maps, {
    gatehouse_https: { put: {}, delete: ['b2.example.com'] },
    gatehouse_http: { put: {}, delete: ['b2.example.com'] },
  });
  assertMatches(s, all);
  all = [a, tlsA];
  p = change(s, all, [b.id]);
  assert.equal((p as Plan).count, 0, 'deleting a disabled route changes nothing in Caddy');
  assertMatches(s, all);

  // an unchanged route is no change at all
  assert.equal((change(s, all, [a.id]) as Plan).count, 0);
});

test('what changes the frame is a full load: the first HTTPS host, the last one, a wildcard HTTPS host, an L4 route, metrics', () => {
  const a = route({ domain: 'a.example.com' });
  const s = loaded([a]);
  const tls = route({ domain: 'tls.example.com', https_enabled: true });
  assert.equal(change(s, [a, tls], [tls.id]), 'full', 'the HTTPS server does not exist yet');
  const s2 = loaded([a, tls]);
  const tls2 = route({ domain: 'tls2.example.com', https_enabled: true });
  assert.notEqual(change(s2, [a, tls, tls2], [tls2.id]), 'full', 'a second exact HTTPS name: on-demand certificate, a host put');
  assert.equal(change(loaded([a, tls, tls2]), [a], [tls.id, tls2.id]), 'full', 'the last HTTPS hosts removed: the HTTPS server goes');
  const wild = route({ domain: '*.wild.example.com', https_enabled: true });
  assert.equal(change(s2, [a, tls, tls2, wild], [wild.id]), 'full', 'a wildcard certificate is managed up front');
  const l4 = route({ domain: 'l4.example.com', route_type: 'l4', l4_protocol: 'tcp', l4_listen_port: 7000 } as Partial<Route>);
  assert.equal(change(s2, [a, tls, tls2, l4], [l4.id]), 'full', 'an L4 route is a listener of its own');
  const rendered = renderHosts(snap([a, tls, tls2]));
  assert.equal(s2.planAll(settings, rendered, false), 'full', 'metrics switched off changes every server');
  assert.notEqual(s2.planAll(settings, rendered, true), 'full');
  assert.equal(new AppliedState().planRoutes(settings, rendered, [a.id], new Set(), true), 'full', 'nothing loaded yet');
});

test('a full comparison (planAll) finds exactly the hosts that differ', () => {
  const rs = Array.from({ length: 50 }, (_, i) => route({ domain: `r${i}.example.com` }));
  const s = loaded(rs);
  const changed = rs.map((r, i) => (i === 7 ? { ...r, target_port: '9090' } : r)).filter((_, i) => i !== 9);
  const plan = s.planAll(settings, renderHosts(snap(changed)), true);
  assert.notEqual(plan, 'full');
  assert.deepEqual(Object.keys((plan as Plan).changes.maps.gatehouse_http.put), ['r7.example.com']);
  assert.deepEqual((plan as Plan).changes.maps.gatehouse_http.delete, ['r9.example.com']);
  s.commit(plan as Plan);
  assertMatches(s, changed);
});
