// Golden files for redirect hosts and the default site (proxy/fragments/redirects.ts): a redirect
// host on both servers, next to a route; the three default-site modes as the host maps' fallback.
// Regenerate after an intended change with UPDATE_GOLDEN=1 and review the diff; with bin/caddy,
// `caddy validate` checks every file.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { renderCaddyConfig, renderHosts } from '../src/proxy/render.js';
import type { ProxySnapshot } from '../src/proxy/render-context.js';
import { blankRoute, type Route } from '../src/routes/model.js';
import type { DefaultSite } from '../src/redirects/schema.js';
import type { RedirectTarget } from '../src/proxy/fragments/redirects.js';
import { escapePlaceholders, redirectLocation } from '../src/proxy/fragments/redirects.js';
import { CADDY, assertCaddyValidates } from '../../test/lib/caddy-env.js';
import { assertGolden, goldenDir } from './lib/golden.js';
import { goldenPeers, goldenSettings } from './lib/render-fixtures.js';
import { at, objAt, objsAt } from '../../test/lib/json.js';

const GOLDEN = goldenDir('caddy');
const peers = goldenPeers([[9, { address: '10.8.0.9', enabled: true }]]);
const route = (o: Partial<Route>): Route => ({ ...blankRoute(Date.UTC(2026, 0, 1)), id: 1, domain: 'app.example.com', peer_id: 1, target_port: '8080', ...o });
const rh = (o: Partial<RedirectTarget>): RedirectTarget => ({
  domain: 'old.example.com',
  target_url: 'https://new.example.com/',
  preserve_path: true,
  status_code: 301,
  enabled: true,
  ...o,
});

const cases: Record<string, { routes?: Route[]; redirectHosts?: RedirectTarget[]; defaultSite?: DefaultSite }> = {
  'redirect-hosts': {
    routes: [route({ domain: 'app.example.com', https_enabled: true })],
    redirectHosts: [
      rh({}),
      rh({ domain: 'promo.example.com', target_url: 'https://shop.example.org/summer?utm=promo', preserve_path: false, status_code: 302 }),
      rh({ domain: 'off.example.com', enabled: false }),
    ],
    defaultSite: { mode: 'default', redirect_url: null, html: null },
  },
  'default-site-redirect': { defaultSite: { mode: 'redirect', redirect_url: 'https://www.example.org/', html: null } },
  'default-site-custom-html': {
    routes: [route({ domain: 'app.example.com' })],
    defaultSite: { mode: 'custom_html', redirect_url: null, html: '<!doctype html><title>Nothing here</title><p>{http.request.host}</p>\n' },
  },
};

const snapshotFor = (name: string): ProxySnapshot => ({
  settings: goldenSettings,
  routes: cases[name].routes ?? [],
  peers,
  ...(cases[name].redirectHosts ? { redirectHosts: cases[name].redirectHosts } : {}),
  ...(cases[name].defaultSite ? { defaultSite: cases[name].defaultSite } : {}),
});

for (const name of Object.keys(cases)) {
  test(`golden: ${name}`, () => {
    assertGolden(path.join(GOLDEN, `${name}.json`), JSON.stringify(renderCaddyConfig(snapshotFor(name)), null, 2) + '\n');
  });
}

test('a redirect host is the same entry on both servers and has no owner; the fallback is on both servers', () => {
  const r = renderHosts(snapshotFor('redirect-hosts'));
  assert.deepEqual(r.maps.gatehouse_http['old.example.com'], r.maps.gatehouse_https['old.example.com']);
  assert.equal(r.maps.gatehouse_http['off.example.com'], undefined, 'disabled: not rendered');
  assert.deepEqual([...r.owners.keys()], [1], 'only the route owns hosts');
  const cfg = renderCaddyConfig(snapshotFor('redirect-hosts'));
  const fb = (s: string) => objAt(cfg, 'apps', 'http', 'servers', s, 'routes', 0, 'handle', 0).fallback;
  assert.deepEqual(fb('gatehouse_http'), fb('gatehouse_https'));
  assert.equal(at(objsAt(fb('gatehouse_http'), 'routes').at(-1), 'handle', 0, 'status_code'), 404);
});

test('without a default site in the snapshot there is no fallback (the module answers its own plain 404)', () => {
  const cfg = renderCaddyConfig({ settings: goldenSettings, routes: [], peers });
  assert.equal(objAt(cfg, 'apps', 'http', 'servers', 'gatehouse_http', 'routes', 0, 'handle', 0).fallback, undefined);
});

test('Location: the path and query appended without a double slash; braces escaped so Caddy reads no placeholder', () => {
  assert.equal(redirectLocation({ target_url: 'https://n.example.com/', preserve_path: true }), 'https://n.example.com{http.request.uri}');
  assert.equal(redirectLocation({ target_url: 'https://n.example.com/a/b/', preserve_path: true }), 'https://n.example.com/a/b{http.request.uri}');
  assert.equal(redirectLocation({ target_url: 'https://n.example.com/x?y=1', preserve_path: false }), 'https://n.example.com/x?y=1');
  assert.equal(escapePlaceholders('a{b}c\\{d'), 'a\\{b\\}c\\\\{d');
});

test(
  'caddy validate accepts the redirect golden files',
  { skip: fs.existsSync(CADDY) ? false : `no ${CADDY}: build it with bash scripts/build-caddy.sh` },
  () => {
    assertCaddyValidates(GOLDEN, Object.keys(cases));
  },
);
