// Golden files for route protection in the rendered Caddy configuration (peer ACL, IP filter, rate
// limit, basic auth, route auth / forward auth), plus the order of the pieces in each host's route
// list. Regenerate after an intended change with UPDATE_GOLDEN=1 and review the diff. When bin/caddy
// exists the files are also checked by `caddy validate` (the rate_limit and authentication modules
// are provisioned, so the shapes are Caddy's).
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
import { at, hostMap, objAt, objsAt, type JsonObject } from '../../test/lib/json.js';

const GOLDEN = goldenDir('caddy');

const settings = goldenSettings;

const peers = goldenPeers([[4, { address: 'fd00::5/128', enabled: true }]]);

// bcrypt of 's3cret-pass' (cost 10), as the routes service stores it.
const HASH = '$2b$10$Slaf7HnKLa/qA3Epge0ryOSL7eeFlnHt1S0MCBQjzozHL3TPp3KfW';

function route(id: number, o: Partial<Route>): Route {
  return { ...blankRoute(Date.UTC(2026, 0, 1)), id, domain: 'app.example.com', peer_id: 1, target_port: '8080', ...o };
}

const cases: Record<string, { routes: Route[]; protectedRouteIds?: number[] }> = {
  'protection-basic-auth': {
    routes: [route(1, { domain: 'basic.example.com', https_enabled: true, basic_auth_user: 'alice', basic_auth_password_hash: HASH, compress_enabled: true })],
  },
  'protection-route-auth': {
    routes: [route(1, { domain: 'login.example.com', https_enabled: true }), route(2, { domain: 'open.example.com', https_enabled: true })],
    protectedRouteIds: [1],
  },
  'protection-acl': {
    routes: [
      // peer 3 is disabled: not in the allowed list; 77 does not exist
      route(1, { domain: 'acl.example.com', acl_enabled: true, acl_peer_ids: [2, 3, 4, 77] }),
      route(2, { domain: 'nobody.example.com', acl_enabled: true, acl_peer_ids: [] }),
    ],
  },
  'protection-ip-filter': {
    routes: [
      route(1, {
        domain: 'white.example.com',
        ip_filter_enabled: true,
        ip_filter_mode: 'whitelist',
        ip_filter_rules: ['192.168.0.0/16', '10.8.0.3', '2001:db8::/32'],
      }),
      route(2, { domain: 'black.example.com', ip_filter_enabled: true, ip_filter_mode: 'blacklist', ip_filter_rules: ['203.0.113.7', '198.51.100.0/24'] }),
      route(3, { domain: 'empty-black.example.com', ip_filter_enabled: true, ip_filter_mode: 'blacklist', ip_filter_rules: [] }),
      // route auth: the IP filter runs in the sidecar's verify, not in Caddy
      route(4, {
        domain: 'verify-filter.example.com',
        https_enabled: true,
        ip_filter_enabled: true,
        ip_filter_mode: 'whitelist',
        ip_filter_rules: ['192.168.0.0/16'],
      }),
    ],
    protectedRouteIds: [4],
  },
  'protection-rate-limit': {
    routes: [
      route(1, {
        domain: 'basic-limited.example.com',
        https_enabled: true,
        basic_auth_user: 'alice',
        basic_auth_password_hash: HASH,
        rate_limit_enabled: true,
        rate_limit_requests: 10,
        rate_limit_window: '1m',
      }),
      route(2, { domain: 'login-limited.example.com', https_enabled: true, rate_limit_enabled: true, rate_limit_requests: 100, rate_limit_window: '15m' }),
      route(3, { domain: 'limited.example.com', rate_limit_enabled: true, rate_limit_requests: 5, rate_limit_window: '1h' }),
    ],
    protectedRouteIds: [2],
  },
  'protection-all': {
    routes: [
      route(1, {
        domain: 'all.example.com',
        https_enabled: true,
        acl_enabled: true,
        acl_peer_ids: [1],
        ip_filter_enabled: true,
        ip_filter_mode: 'whitelist',
        ip_filter_rules: ['10.8.0.0/24'],
        rate_limit_enabled: true,
        rate_limit_requests: 3,
        rate_limit_window: '30s',
        compress_enabled: true,
      }),
      route(2, {
        domain: 'all-basic.example.com',
        https_enabled: true,
        acl_enabled: true,
        acl_peer_ids: [1, 2],
        rate_limit_enabled: true,
        rate_limit_requests: 3,
        rate_limit_window: '1m',
        basic_auth_user: 'bob',
        basic_auth_password_hash: HASH,
      }),
    ],
    protectedRouteIds: [1],
  },
};

function snapshotFor(name: string): ProxySnapshot {
  const c = cases[name];
  return { settings, routes: c.routes, peers, protectedRouteIds: new Set(c.protectedRouteIds ?? []) };
}

/** A route's first matcher as a label: its kinds in brackets, with the kinds under `not`. */
function matchLabel(r: JsonObject): string {
  if (!r.match) return '';
  const m = objAt(r, 'match', 0);
  return `[${Object.keys(m).join(',')}${m.not ? `:${Object.keys(objAt(m, 'not', 0)).join(',')}` : ''}]`;
}
/** A host's route list as a sequence of labels: the handlers in order, a matcher kind in brackets. */
function shape(entry: unknown): string[] {
  return objsAt(entry, 'routes').flatMap((r) => {
    const m = matchLabel(r);
    return objsAt(r, 'handle').map(
      (h) =>
        `${m}${h.handler}${h.handler === 'static_response' ? `:${h.status_code}` : ''}${h.handler === 'reverse_proxy' && h.rewrite ? ':forward_auth' : ''}`,
    );
  });
}

for (const name of Object.keys(cases)) {
  test(`golden: ${name}`, () => {
    const rendered = JSON.stringify(renderCaddyConfig(snapshotFor(name)), null, 2) + '\n';
    assertGolden(path.join(GOLDEN, `${name}.json`), rendered);
  });
}

test('basic auth: Caddy authentication handler with the stored bcrypt hash, before the proxy; HTTP only redirects', () => {
  const cfg = renderCaddyConfig(snapshotFor('protection-basic-auth'));
  const entry = hostMap(cfg, 'gatehouse_https')['basic.example.com'];
  // the share-link page and forward auth (cookie only), then the basic auth unless a share link let the request in
  assert.deepEqual(shape(entry), ['[path]reverse_proxy', '[header_regexp]reverse_proxy:forward_auth', '[not:vars]authentication', 'encode', 'vars', 'invoke']);
  const [page, shared, basic] = objsAt(entry, 'routes');
  assert.deepEqual(page.match, [{ path: ['/route-auth/share'] }]);
  assert.deepEqual(at(page, 'handle', 0, 'headers', 'request', 'set', 'X-Route-Domain'), ['basic.example.com']);
  const id = snapshotFor('protection-basic-auth').routes.find((r) => r.domain === 'basic.example.com')!.id;
  assert.deepEqual(shared.match, [{ header_regexp: { Cookie: { pattern: `(^|;)\\s*gh_ra_${id}=` } } }]);
  const fa = objAt(shared, 'handle', 0);
  assert.deepEqual(
    objsAt(fa, 'handle_response').map((r) => r.match),
    [{ status_code: [204] }, { status_code: [200] }],
  );
  // 204 sets the variable the basic auth's matcher reads; 200 does not
  const sets = (r: JsonObject) => objsAt(r, 'routes').some((x) => objsAt(x, 'handle').some((h) => h.handler === 'vars' && h.gatehouse_shared === '1'));
  assert.deepEqual(objsAt(fa, 'handle_response').map(sets), [true, false]);
  assert.deepEqual(basic.match, [{ not: [{ vars: { gatehouse_shared: ['1'] } }] }]);
  const auth = objAt(basic, 'handle', 0);
  assert.deepEqual(at(auth, 'providers', 'http_basic', 'accounts'), [{ username: 'alice', password: HASH }]);
  assert.equal(at(auth, 'providers', 'http_basic', 'hash', 'algorithm'), 'bcrypt');
  assert.deepEqual(shape(hostMap(cfg, 'gatehouse_http')['basic.example.com']), ['static_response:308']);
  assert.ok(!JSON.stringify(cfg).includes('s3cret-pass'));
});

test('route auth: exactly the route-auth pages to the sidecar, forward auth to /route-auth/verify for the rest; other routes untouched', () => {
  const cfg = renderCaddyConfig(snapshotFor('protection-route-auth'));
  const hosts = hostMap(cfg, 'gatehouse_https');
  assert.deepEqual(shape(hosts['login.example.com']), ['[path]reverse_proxy', 'reverse_proxy:forward_auth', 'vars', 'invoke']);
  const [pages, main] = objsAt(hosts, 'login.example.com', 'routes');
  assert.deepEqual(pages.match, [
    {
      path: [
        '/route-auth/login',
        '/route-auth/logout',
        '/route-auth/assets/login.css',
        '/route-auth/branding/logo',
        '/route-auth/branding/bg-image',
        '/route-auth/share',
        '/route-auth/oidc/start',
        '/route-auth/oidc/callback',
      ],
    },
  ]);
  assert.deepEqual(at(pages, 'handle', 0, 'upstreams'), [{ dial: '127.0.0.1:3000' }]);
  assert.deepEqual(at(pages, 'handle', 0, 'headers', 'request', 'set', 'X-Route-Domain'), ['login.example.com']);
  const fa = objAt(main, 'handle', 0);
  assert.deepEqual(fa.rewrite, { method: 'GET', uri: '/route-auth/verify' });
  assert.deepEqual(at(fa, 'headers', 'request', 'set', 'X-Route-Domain'), ['login.example.com']);
  assert.deepEqual(fa.upstreams, [{ dial: '127.0.0.1:3000' }]);
  assert.deepEqual(shape(hosts['open.example.com']), ['vars', 'invoke']);
  // Without the protected ids (no route-auth feature), nothing is protected.
  const bare = renderCaddyConfig({ ...snapshotFor('protection-route-auth'), protectedRouteIds: undefined });
  assert.deepEqual(shape(hostMap(bare, 'gatehouse_https')['login.example.com']), ['vars', 'invoke']);
});

test("peer ACL: 403 unless the source is an enabled listed peer's tunnel address; first in the list", () => {
  const cfg = renderCaddyConfig(snapshotFor('protection-acl'));
  const hosts = hostMap(cfg, 'gatehouse_http');
  assert.deepEqual(shape(hosts['acl.example.com']), ['[not:remote_ip]static_response:403', 'vars', 'invoke']);
  assert.deepEqual(at(hosts, 'acl.example.com', 'routes', 0, 'match', 0, 'not', 0, 'remote_ip', 'ranges'), ['10.8.0.3', 'fd00::5']);
  assert.deepEqual(shape(hosts['nobody.example.com']), ['static_response:403', 'vars', 'invoke']);
});

test('IP filter: whitelist and blacklist in Caddy; for route-auth routes it is left to verify', () => {
  const cfg = renderCaddyConfig(snapshotFor('protection-ip-filter'));
  const hosts = hostMap(cfg, 'gatehouse_http');
  assert.deepEqual(shape(hosts['white.example.com']), ['[not:remote_ip]static_response:403', 'vars', 'invoke']);
  assert.deepEqual(at(hosts, 'white.example.com', 'routes', 0, 'match', 0, 'not', 0, 'remote_ip', 'ranges'), ['192.168.0.0/16', '10.8.0.3', '2001:db8::/32']);
  assert.deepEqual(shape(hosts['black.example.com']), ['[remote_ip]static_response:403', 'vars', 'invoke']);
  assert.deepEqual(at(hosts, 'black.example.com', 'routes', 0, 'match', 0, 'remote_ip', 'ranges'), ['203.0.113.7', '198.51.100.0/24']);
  assert.deepEqual(shape(hosts['empty-black.example.com']), ['vars', 'invoke']);
  assert.deepEqual(shape(hostMap(cfg, 'gatehouse_https')['verify-filter.example.com']), [
    '[path]reverse_proxy',
    'reverse_proxy:forward_auth',
    'vars',
    'invoke',
  ]);
});

test('rate limit: before basic auth (and for unprotected routes), after forward auth for route auth', () => {
  const cfg = renderCaddyConfig(snapshotFor('protection-rate-limit'));
  const tls = hostMap(cfg, 'gatehouse_https');
  assert.deepEqual(shape(tls['basic-limited.example.com']), [
    '[path]reverse_proxy',
    'rate_limit',
    '[header_regexp]reverse_proxy:forward_auth',
    '[not:vars]authentication',
    'vars',
    'invoke',
  ]);
  assert.deepEqual(shape(tls['login-limited.example.com']), ['[path]reverse_proxy', 'reverse_proxy:forward_auth', 'rate_limit', 'vars', 'invoke']);
  assert.deepEqual(shape(hostMap(cfg, 'gatehouse_http')['limited.example.com']), ['rate_limit', 'vars', 'invoke']);
  const zone = at(tls, 'basic-limited.example.com', 'routes', 1, 'handle', 0, 'rate_limits', 'gatehouse_route_1');
  assert.deepEqual(zone, { key: '{http.request.remote.host}', max_events: 10, window: 60e9 });
  assert.equal(at(tls, 'login-limited.example.com', 'routes', 1, 'handle', 1, 'rate_limits', 'gatehouse_route_2', 'window'), 15 * 60e9);
});

test('everything at once keeps the order ACL → IP filter → rate limit → auth → rate limit → rest', () => {
  const cfg = renderCaddyConfig(snapshotFor('protection-all'));
  const tls = hostMap(cfg, 'gatehouse_https');
  // route auth: no IP filter in Caddy, the limit after forward auth
  assert.deepEqual(shape(tls['all.example.com']), [
    '[not:remote_ip]static_response:403',
    '[path]reverse_proxy',
    'reverse_proxy:forward_auth',
    'rate_limit',
    'encode',
    'vars',
    'invoke',
  ]);
  assert.deepEqual(shape(tls['all-basic.example.com']), [
    '[not:remote_ip]static_response:403',
    '[path]reverse_proxy',
    'rate_limit',
    '[header_regexp]reverse_proxy:forward_auth',
    '[not:vars]authentication',
    'vars',
    'invoke',
  ]);
});

test(
  'caddy validate accepts every protection golden file',
  { skip: fs.existsSync(CADDY) ? false : `no ${CADDY}: build it with bash scripts/build-caddy.sh` },
  () => {
    assertCaddyValidates(GOLDEN, Object.keys(cases));
  },
);
