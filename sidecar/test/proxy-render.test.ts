// Golden files for the Caddy JSON renderer: one per route shape. Regenerate after an intended
// change with UPDATE_GOLDEN=1 and review the diff. When bin/caddy exists, every golden file is also
// checked by `caddy validate` (modules provisioned, nothing listens), so the shapes are Caddy's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { renderCaddyConfig } from '../src/proxy/render.js';
import type { ProxySettings, ProxySnapshot } from '../src/proxy/render-context.js';
import type { LicensedFeature } from '../src/licence/features.js';
import { canonicalJson, configHash } from '@gatehouse/common/canonical.js';
import { blankRoute, type Route } from '../src/routes/model.js';
import { CADDY, assertCaddyValidates } from '../../test/lib/caddy-env.js';
import { assertGolden, goldenDir } from './lib/golden.js';
import { goldenPeers, goldenSettings } from './lib/render-fixtures.js';
import { arrAt, at, hostMap, objAt } from '../../test/lib/json.js';
import type { CaddyConfig } from '../src/proxy/caddy-json.js';
import type { CustomCertificatePem } from '../src/proxy/render-context.js';
import { GOLDEN_CERT } from './lib/golden-cert.js';
import { CADDY_STORAGE_DSN_ENV, CADDY_STORAGE_TABLE } from '../src/proxy/fragments/storage.js';

const GOLDEN = goldenDir('caddy');

const settings = goldenSettings;

const peers = goldenPeers([[9, { address: '10.8.0.9', enabled: true }]]);

let nextId = 1;
function route(o: Partial<Route>): Route {
  return { ...blankRoute(Date.UTC(2026, 0, 1)), id: nextId++, domain: 'app.example.com', peer_id: 1, target_port: '8080', ...o };
}
/** Route ids start at 1 in every case, so adding a case does not change the others' files. */
function fresh<T>(f: () => T): T {
  nextId = 1;
  return f();
}
const l4 = (o: Partial<Route>) => route({ route_type: 'l4', l4_protocol: 'tcp', l4_listen_port: 2222, l4_tls_mode: 'none', target_port: '22', ...o });

/** The custom certificates the golden cases know (id 7: shop.example.com and *.shop.example.com). */
const goldenCerts = new Map<number, CustomCertificatePem>([[7, { id: 7, certificate_pem: GOLDEN_CERT.chain, private_key_pem: GOLDEN_CERT.key }]]);

const cases: Record<string, { routes: Route[]; settings?: Partial<ProxySettings>; features?: readonly LicensedFeature[]; certificates?: boolean }> = {
  'no-routes': fresh(() => ({ routes: [] })),
  'plain-http': fresh(() => ({ routes: [route({ domain: 'app.example.com' })] })),
  https: fresh(() => ({ routes: [route({ domain: 'secure.example.com', https_enabled: true })] })),
  'https-acme': fresh(() => ({
    routes: [route({ domain: 'secure.example.com', https_enabled: true })],
    settings: { tls: 'acme', acmeEmail: 'ops@example.com', httpPort: 8080, httpsPort: 8443 },
  })),
  'backend-https': fresh(() => ({ routes: [route({ domain: 'nas.example.com', backend_https: true, target_port: '5001' })] })),
  compress: fresh(() => ({ routes: [route({ domain: 'docs.example.com', compress_enabled: true })] })),
  wildcard: fresh(() => ({ routes: [route({ domain: '*.apps.example.com', https_enabled: true, peer_id: 2, target_port: '80' })] })),
  'l4-tcp': fresh(() => ({ routes: [l4({ domain: 'ssh.example.com' })] })),
  'l4-udp': fresh(() => ({ routes: [l4({ domain: 'dns.example.com', l4_protocol: 'udp', l4_listen_port: 5353, target_port: '53' })] })),
  'l4-passthrough': fresh(() => ({ routes: [l4({ domain: 'tls.example.com', l4_tls_mode: 'passthrough', l4_listen_port: 8443, target_port: '443' })] })),
  'l4-terminate': fresh(() => ({ routes: [l4({ domain: 'db.example.com', l4_tls_mode: 'terminate', l4_listen_port: 15432, target_port: '5432' })] })),
  'l4-acl': fresh(() => ({
    routes: [
      l4({ domain: 'ssh.example.com', acl_enabled: true, acl_peer_ids: [2, 3] }),
      l4({ domain: 'dns.example.com', l4_protocol: 'udp', l4_listen_port: 5353, target_port: '53', acl_enabled: true, acl_peer_ids: [] }),
      l4({ domain: 'gone.example.com', l4_listen_port: 2223, acl_enabled: true, acl_peer_ids: [3, 77] }),
    ],
  })),
  'l4-ip-filter': fresh(() => ({
    routes: [
      l4({ domain: 'white.example.com', ip_filter_enabled: true, ip_filter_mode: 'whitelist', ip_filter_rules: ['192.168.1.7/16', '2001:DB8::1/32'] }),
      l4({
        domain: 'black.example.com',
        l4_protocol: 'udp',
        l4_listen_port: 5353,
        target_port: '53',
        ip_filter_enabled: true,
        ip_filter_mode: 'blacklist',
        ip_filter_rules: ['203.0.113.7'],
      }),
      l4({ domain: 'empty-black.example.com', l4_listen_port: 2223, ip_filter_enabled: true, ip_filter_mode: 'blacklist', ip_filter_rules: [] }),
      l4({ domain: 'empty-white.example.com', l4_listen_port: 2224, ip_filter_enabled: true, ip_filter_mode: 'whitelist', ip_filter_rules: [] }),
      l4({
        domain: 'both.example.com',
        l4_listen_port: 8443,
        target_port: '443',
        l4_tls_mode: 'passthrough',
        acl_enabled: true,
        acl_peer_ids: [1],
        ip_filter_enabled: true,
        ip_filter_mode: 'whitelist',
        ip_filter_rules: ['10.8.0.0/24'],
      }),
    ],
  })),
  'admin-domain': fresh(() => ({ routes: [], settings: { adminDomain: 'gatehouse.example.com' } })),
  'bind-and-ports': fresh(() => ({
    routes: [
      route({ domain: 'app.test' }),
      l4({ domain: 'tcp.test', l4_listen_port: 17000 }),
      l4({ domain: 'udp.test', l4_protocol: 'udp', l4_listen_port: 17001 }),
    ],
    settings: { bind: '127.0.0.1', httpPort: 18080, httpsPort: 18443, adminListen: '127.0.0.1:12019' },
  })),
  unavailable: fresh(() => ({
    routes: [
      route({ domain: 'disabled-peer.example.com', peer_id: 3 }),
      route({ domain: 'missing-peer.example.com', peer_id: 77 }),
      route({
        domain: 'gateway.example.com',
        target_kind: 'gateway',
        peer_id: null,
        target_port: null,
        target_peer_id: 9,
        target_lan_host: '192.168.1.10',
        target_lan_port: 80,
      }),
      l4({ domain: 'l4-disabled-peer.example.com', peer_id: 3 }),
      route({ domain: 'switched-off.example.com', enabled: false }),
    ],
  })),
  'bot-blocker': fresh(() => ({
    routes: [
      route({ domain: 'bots.example.com', bot_blocker_enabled: true, bot_blocker_mode: 'block' }),
      route({
        domain: 'tarpit.example.com',
        bot_blocker_enabled: true,
        bot_blocker_mode: 'tarpit',
        bot_blocker_config: {
          tarpit_delay: '5s',
          categories: ['ai_crawler'],
          custom_user_agents: ['^curl/'],
          allow_user_agents: ['my-monitor'],
          block_wordpress_paths: true,
          custom_paths: ['/debug$'],
          allow_paths: ['/.well-known/'],
        },
      }),
    ],
  })),
  mirror: fresh(() => ({
    routes: [
      route({
        domain: 'mirrored.example.com',
        mirror_enabled: true,
        mirror_targets: [{ url: 'http://10.8.0.5:8080' }, { peer_id: 2, port: 9000 }, { peer_id: 3, port: 9000 }, { url: 'https://shadow.example.com' }],
      }),
    ],
  })),
  'circuit-breaker': fresh(() => ({
    routes: [
      route({
        domain: 'cb.example.com',
        circuit_breaker_enabled: true,
        circuit_breaker_threshold: 3,
        circuit_breaker_timeout: 20,
        cb_failure_count: 2,
        cb_opened_at: null,
      }),
    ],
  })),
  // The same route rendered with the licence feature circuit_breaker and without it (the module is
  // left out, nothing else changes; the route keeps its settings, see test/licence.test.ts).
  'circuit-breaker-licensed': fresh(() => ({
    routes: [
      route({
        domain: 'cb.example.com',
        circuit_breaker_enabled: true,
        circuit_breaker_threshold: 3,
        circuit_breaker_timeout: 20,
        cb_failure_count: 2,
        cb_opened_at: null,
      }),
    ],
    features: ['circuit_breaker'],
  })),
  'circuit-breaker-unlicensed': fresh(() => ({
    routes: [
      route({
        domain: 'cb.example.com',
        circuit_breaker_enabled: true,
        circuit_breaker_threshold: 3,
        circuit_breaker_timeout: 20,
        cb_failure_count: 2,
        cb_opened_at: null,
      }),
    ],
    features: ['internal_dns', 'prometheus_metrics', 'remote_desktop'],
  })),
  retry: fresh(() => ({
    routes: [
      route({ domain: 'retry.example.com', retry_enabled: true, retry_count: 2, retry_status_codes: '502, 503,503' }),
      route({ domain: 'retry-transport.example.com', retry_enabled: true, retry_count: 1, retry_status_codes: '' }),
    ],
  })),
  'resilience-all': fresh(() => ({
    routes: [
      route({
        domain: 'all.example.com',
        https_enabled: true,
        compress_enabled: true,
        bot_blocker_enabled: true,
        bot_blocker_mode: 'log',
        mirror_enabled: true,
        mirror_targets: [{ peer_id: 2, port: 8080 }],
        circuit_breaker_enabled: true,
        circuit_breaker_threshold: 5,
        circuit_breaker_timeout: 30,
        cb_failure_count: 5,
        cb_opened_at: Date.UTC(2026, 0, 1),
        retry_enabled: true,
        retry_count: 3,
        retry_status_codes: '502,503,504',
      }),
    ],
  })),
  // a custom certificate for an exact and a wildcard host, next to an automatic HTTPS host and a
  // route naming a certificate without HTTPS (not used); the wildcard is not managed up front
  'custom-certificate': fresh(() => ({
    routes: [
      route({ domain: 'www.shop.example.com', https_enabled: true, certificate_id: 7 }),
      route({ domain: 'auto.example.com', https_enabled: true }),
      route({ domain: '*.apps.example.com', https_enabled: true, peer_id: 2, target_port: '80' }),
      route({ domain: '*.shop.example.com', https_enabled: true, peer_id: 2, target_port: '80', certificate_id: 7 }),
      route({ domain: 'plain.shop.example.com', certificate_id: 7 }),
    ],
    certificates: true,
  })),
  'access-log': fresh(() => ({
    routes: [route({ domain: 'logged.example.com' }), route({ domain: 'secure-logged.example.com', https_enabled: true })],
    settings: { accessLogFile: '/tmp/gatehouse-golden-caddy/access.log' },
  })),
  mixed: fresh(() => ({
    routes: [
      route({ domain: 'b.example.com', https_enabled: true, compress_enabled: true }),
      route({ domain: 'a.example.com', peer_id: 2, target_port: '3000' }),
      route({ domain: 'xn--mnchen-3ya.example.com', https_enabled: true, backend_https: true, target_port: '443' }),
      l4({ domain: 'db.example.com', l4_tls_mode: 'terminate', l4_listen_port: 15432, target_port: '5432' }),
      l4({ domain: 'game.example.com', l4_protocol: 'udp', l4_listen_port: 27015, target_port: '27015', peer_id: 2 }),
    ],
    settings: { adminDomain: 'admin.example.com' },
  })),
  // several backends (routes/traffic.ts, fragments/lb.ts): peer 3 is disabled and left out
  'lb-weighted-health-headers': fresh(() => ({
    routes: [
      route({
        domain: 'lb.example.com',
        https_enabled: true,
        backends: [
          { target_kind: 'peer', peer_id: 1, target_host: null, target_port: 8080, weight: 3 },
          { target_kind: 'peer', peer_id: 2, target_host: null, target_port: 8081, weight: 1 },
          { target_kind: 'peer', peer_id: 3, target_host: null, target_port: 8082, weight: 1 },
        ],
        health_check: { path: '/healthz', interval_s: 5, timeout_s: 2, expect_status: 200 },
        request_headers: { set: { 'X-Client': '{client_ip}', 'X-Route': '{route_domain}#{route_id}' }, delete: ['X-Debug'] },
        response_headers: { set: { 'X-Served-By': 'gatehouse' }, delete: ['Server'] },
        compression: ['gzip'],
        compress_enabled: true,
      }),
    ],
  })),
  'lb-cookie-retries': fresh(() => ({
    routes: [
      route({
        domain: 'sticky.example.com',
        backends: [
          { target_kind: 'peer', peer_id: 1, target_host: null, target_port: 8080, weight: 1 },
          { target_kind: 'peer', peer_id: 2, target_host: null, target_port: 8080, weight: 1 },
        ],
        lb_policy: 'cookie',
        lb_cookie_name: 'app_lb',
        retry_enabled: true,
        retry_count: 2,
        retry_status_codes: '502',
      }),
      route({
        domain: 'hash.example.com',
        backends: [
          { target_kind: 'peer', peer_id: 1, target_host: null, target_port: 80, weight: 1 },
          { target_kind: 'peer', peer_id: 9, target_host: null, target_port: 80, weight: 1 },
        ],
        lb_policy: 'ip_hash',
      }),
    ],
  })),
  // several nodes on one PostgreSQL: Caddy's certificates in the shared storage, whose URL Caddy
  // reads from its environment (fragments/storage.ts), never written into the configuration
  clustered: fresh(() => ({
    routes: [route({ domain: 'shared.example.com', https_enabled: true })],
    settings: { sharedCertificates: true },
  })),
};

function snapshotFor(name: string): ProxySnapshot {
  const c = cases[name];
  return {
    settings: { ...settings, ...c.settings },
    routes: c.routes,
    peers,
    ...(c.features ? { features: c.features } : {}),
    ...(c.certificates ? { certificates: goldenCerts } : {}),
  };
}

test('without the licence feature circuit_breaker only the breaker module is left out of the route', () => {
  const withIt = renderCaddyConfig(snapshotFor('circuit-breaker-licensed'));
  const without = renderCaddyConfig(snapshotFor('circuit-breaker-unlicensed'));
  const text = (c: unknown) => JSON.stringify(c);
  assert.match(text(withIt), /gatehouse_circuit_breaker/);
  assert.doesNotMatch(text(without), /gatehouse_circuit_breaker/);
  // licensed = the unrestricted rendering (no feature list) of the same route
  assert.equal(text(withIt), text(renderCaddyConfig(snapshotFor('circuit-breaker'))));
  // the only difference: the breaker handler in the route's chain
  const strip = (c: CaddyConfig) => JSON.parse(text(c).replace(/\{"handler":"gatehouse_circuit_breaker"[^{}]*(\{[^{}]*\}[^{}]*)*\},?/g, ''));
  assert.deepEqual(strip(withIt), strip(without));
});

for (const name of Object.keys(cases)) {
  test(`golden: ${name}`, () => {
    const rendered = JSON.stringify(renderCaddyConfig(snapshotFor(name)), null, 2) + '\n';
    assertGolden(path.join(GOLDEN, `${name}.json`), rendered);
  });
}

test('invariants of every rendering: admin on loopback, no persistence, no trust-store install, grace period, one hostroute handler per server', () => {
  for (const name of Object.keys(cases)) {
    const cfg = renderCaddyConfig(snapshotFor(name));
    assert.equal(at(cfg, 'admin', 'listen'), snapshotFor(name).settings.adminListen, name);
    assert.equal(at(cfg, 'admin', 'config', 'persist'), false, name);
    assert.equal(at(cfg, 'apps', 'pki', 'certificate_authorities', 'local', 'install_trust'), false, name);
    assert.equal(at(cfg, 'apps', 'http', 'grace_period'), '10s', name);
    for (const [sname, srv] of Object.entries(objAt(cfg, 'apps', 'http', 'servers'))) {
      assert.equal(arrAt(srv, 'routes').length, 1, `${name}/${sname}`);
      assert.deepEqual(
        arrAt(srv, 'routes', 0, 'handle').map((h) => at(h, 'handler')),
        ['gatehouse_hostroute'],
        `${name}/${sname}`,
      );
      assert.deepEqual(at(srv, 'automatic_https'), { disable: true });
    }
  }
});

test('plain routes only on HTTP, HTTPS routes on HTTPS with a redirect on HTTP, certificates only for TLS names', () => {
  const cfg = renderCaddyConfig(snapshotFor('mixed'));
  const plain = hostMap(cfg, 'gatehouse_http');
  const tls = hostMap(cfg, 'gatehouse_https');
  assert.deepEqual(Object.keys(tls).sort(), ['admin.example.com', 'b.example.com', 'xn--mnchen-3ya.example.com']);
  assert.equal(at(plain, 'b.example.com', 'routes', 0, 'handle', 0, 'status_code'), 308);
  assert.deepEqual(at(plain, 'a.example.com', 'routes', 0, 'handle'), [
    { handler: 'vars', gatehouse_upstream: '10.8.0.3:3000' },
    { handler: 'invoke', name: 'gatehouse_proxy' },
  ]);
  // A reverse_proxy with options of its own (here the TLS transport) is not shared.
  assert.equal(at(tls, 'xn--mnchen-3ya.example.com', 'routes', 0, 'handle', 0, 'handler'), 'reverse_proxy');
  for (const srv of ['gatehouse_http', 'gatehouse_https']) {
    assert.deepEqual(objAt(cfg, 'apps', 'http', 'servers', srv).named_routes, {
      gatehouse_proxy: { handle: [{ handler: 'reverse_proxy', upstreams: [{ dial: '{http.vars.gatehouse_upstream}' }], stream_close_delay: '60s' }] },
    });
  }
  assert.equal(tls['a.example.com'], undefined);
  // Exact HTTPS names get their certificates on demand, allowed by the host map (tls.permission.gatehouse_hostroute);
  // names that are not host-map keys (layer4 TLS termination) and wildcards are managed up front.
  assert.deepEqual(objAt(cfg, 'apps', 'tls', 'certificates').automate, ['db.example.com']);
  assert.deepEqual(objAt(cfg, 'apps', 'tls', 'automation').policies, [
    { subjects: ['db.example.com'], issuers: [{ module: 'internal' }] },
    { issuers: [{ module: 'internal' }], on_demand: true },
  ]);
  assert.deepEqual(objAt(cfg, 'apps', 'tls', 'automation').on_demand, { permission: { module: 'gatehouse_hostroute' } });
  assert.deepEqual(
    Object.keys(objAt(cfg, 'apps', 'layer4', 'servers')),
    cases.mixed.routes.filter((r) => r.route_type === 'l4').map((r) => `route_${r.id}`),
  );
});

test('the rendering is deterministic and the hash ignores key order', () => {
  const a = renderCaddyConfig(snapshotFor('mixed'));
  const b = renderCaddyConfig({ ...snapshotFor('mixed'), routes: [...cases.mixed.routes].reverse() });
  assert.equal(configHash(a), configHash(b));
  assert.equal(canonicalJson({ b: 1, a: [{ d: 2, c: '<' }] }), '{"a":[{"c":"<","d":2}],"b":1}');
  assert.equal(configHash({ x: 1, y: 2 }), configHash(JSON.parse('{"y":2,"x":1}')));
  assert.notEqual(configHash(a), configHash(renderCaddyConfig(snapshotFor('plain-http'))));
});

test('caddy validate accepts every golden file', { skip: fs.existsSync(CADDY) ? false : `no ${CADDY}: build it with bash scripts/build-caddy.sh` }, () => {
  // the clustered file's storage reaches its database while Caddy provisions (the internal CA): below
  assertCaddyValidates(
    GOLDEN,
    Object.keys(cases).filter((n) => n !== 'clustered'),
  );
});

test(
  'the clustered rendering: the certificate storage on PostgreSQL, its URL only in the environment; caddy validate provisions it on a real database',
  {
    skip: !fs.existsSync(CADDY)
      ? `no ${CADDY}: build it with bash scripts/build-caddy.sh`
      : !process.env.TEST_DATABASE_URL
        ? 'TEST_DATABASE_URL is not set'
        : false,
  },
  async () => {
    const cfg = renderCaddyConfig(snapshotFor('clustered'));
    assert.deepEqual(cfg.storage, { module: 'gatehouse_postgres', dsn: `{env.${CADDY_STORAGE_DSN_ENV}}` });
    assert.equal(renderCaddyConfig(snapshotFor('https')).storage, undefined);
    const { freshPgDatabase } = await import('./lib/server.js');
    const dsn = await freshPgDatabase(process.env.TEST_DATABASE_URL!);
    assertCaddyValidates(GOLDEN, ['clustered'], { [CADDY_STORAGE_DSN_ENV]: dsn });
    // provisioning created the module's tables in that database and put the internal CA there
    const { default: pg } = await import('pg');
    const client = new pg.Client({ connectionString: dsn });
    await client.connect();
    try {
      const rows = (await client.query(`SELECT key FROM ${CADDY_STORAGE_TABLE} WHERE key LIKE 'pki/authorities/local/%' ORDER BY key`)).rows as {
        key: string;
      }[];
      assert.ok(
        rows.some((r) => r.key === 'pki/authorities/local/root.crt'),
        JSON.stringify(rows),
      );
    } finally {
      await client.end();
    }
  },
);
