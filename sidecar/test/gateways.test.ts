// Gateways through a real sidecar (SQLite, WireGuard not managed): tokens and gateway.env, the
// companion API and its authentication, config hash and polling, heartbeat validation and storage,
// the status state machine and its events, hostnames, admin views; plus the pure pieces (state
// machine, env rendering, config hash, Caddy JSON of gateway routes).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import http from 'node:http';
import { startTestServer, apiToken, bearer, login, type ReqInit, type TestServer, apiInit } from './lib/server.js';
import { manualClock } from '../src/util/clock.js';
import { deriveStatus, healthVerdict, tickInterval } from '../src/gateways/state.js';
import { parseEnvText, renderGatewayEnv, magicPacket, ENV_KEYS, type Heartbeat } from '@gatehouse/common/gateway-protocol.js';
import { buildGatewayConfig, gatewayConfigHash } from '../src/gateways/config.js';
import { canonicalJson } from '@gatehouse/common/canonical.js';
import { blankRoute, type Route } from '../src/routes/model.js';
import { renderCaddyConfig } from '../src/proxy/render.js';
import type { ProxySettings } from '../src/proxy/render-context.js';
import type { GatewaysService } from '../src/gateways/service.js';
import { waitFor } from '../../test/lib/wait.js';
import type { ActivityEntry, Gateway, GatewayConfigRoute } from './lib/protocol.js';
import { at, hostMap, objAt } from '../../test/lib/json.js';
import type { Row } from './lib/rows.js';

// ------------------------------------------------------------------------------------------ pure

describe('state machine (pure)', () => {
  const th = { offlineAfterMs: 60_000 };
  const hb = (o: Partial<Heartbeat> = {}) =>
    ({
      route_reachability: [],
      overall_healthy: true,
      http_proxy_healthy: true,
      api_healthy: true,
      dns_resolve_ok: true,
      tcp_listeners: [],
      ...o,
    }) as Heartbeat;

  test('verdict: route_reachability is the ground truth, overall_healthy only the fallback', () => {
    // one reachable route wins over a failing self-check
    assert.deepEqual(
      healthVerdict(
        hb({
          overall_healthy: false,
          route_reachability: [
            { route_id: 1, reachable: true, latency_ms: 2 },
            { route_id: 2, reachable: false, latency_ms: null },
          ],
        }),
      ),
      { healthy: true, reason: '1/2 LAN targets reachable', detail: { code: 'lan_reachable', up: 1, total: 2 } },
    );
    // no route reachable loses over a passing self-check
    const down = healthVerdict(hb({ overall_healthy: true, route_reachability: [{ route_id: 1, reachable: false, latency_ms: null }] }));
    assert.equal(down.healthy, false);
    assert.match(down.reason, /none of its 1 LAN target is reachable/);
    // without routes the self-check decides, and the failing parts are named
    assert.equal(healthVerdict(hb()).healthy, true);
    const self = healthVerdict(hb({ overall_healthy: false, http_proxy_healthy: false, tcp_listeners: [{ port: 2222, status: 'error' }] }));
    assert.equal(self.healthy, false);
    assert.match(self.reason, /HTTP proxy, TCP listeners/);
    assert.deepEqual(self.detail, { code: 'self_check_failed', failed: ['http_proxy', 'tcp_listeners'] });
    assert.deepEqual(down.detail, { code: 'lan_unreachable', total: 1 });
  });

  test('status: unknown without heartbeat, online when fresh and healthy, offline when stale or unhealthy', () => {
    const now = 1_000_000;
    assert.equal(deriveStatus({ lastSeenAt: null, healthy: null, healthReason: null }, now, th).status, 'unknown');
    assert.equal(
      deriveStatus({ lastSeenAt: now - 60_000, healthy: true, healthReason: 'x' }, now, th).status,
      'online',
      'exactly offline_after old is still online',
    );
    const stale = deriveStatus({ lastSeenAt: now - 60_001, healthy: true, healthReason: 'x' }, now, th);
    assert.equal(stale.status, 'offline');
    assert.match(stale.reason, /no heartbeat for 60 s \(offline after 60 s\)/);
    const sick = deriveStatus({ lastSeenAt: now - 1000, healthy: false, healthReason: 'none of its 2 LAN targets are reachable' }, now, th);
    assert.equal(sick.status, 'offline');
    assert.match(sick.reason, /heartbeat received, but none of its 2/);
    assert.deepEqual(deriveStatus({ lastSeenAt: now, healthy: true, healthReason: '2/2 LAN targets reachable' }, now, th), {
      status: 'online',
      reason: '2/2 LAN targets reachable',
      detail: { code: 'healthy', health: null },
    });
    // the reason as data, for clients that word it in their own language; the English words come from it
    assert.deepEqual(stale.detail, { code: 'heartbeat_stale', age_s: 60, offline_after_s: 60 });
    const known = deriveStatus({ lastSeenAt: now - 1000, healthy: false, healthReason: 'ignored', health: { code: 'lan_unreachable', total: 2 } }, now, th);
    assert.deepEqual(known.detail, { code: 'unhealthy', health: { code: 'lan_unreachable', total: 2 } });
    assert.equal(known.reason, 'heartbeat received, but none of its 2 LAN targets are reachable');
    assert.deepEqual(deriveStatus({ lastSeenAt: null, healthy: null, healthReason: null }, now, th).detail, { code: 'no_heartbeat' });
  });

  test('evaluation timer: offline_after / 6, between 1 s and 10 s', () => {
    assert.equal(tickInterval({ offlineAfterMs: 60_000 }), 10_000);
    assert.equal(tickInterval({ offlineAfterMs: 600_000 }), 10_000);
    assert.equal(tickInterval({ offlineAfterMs: 3_000 }), 1_000);
    assert.equal(tickInterval({ offlineAfterMs: 12_000 }), 2_000);
  });
});

describe('gateway.env rendering (pure)', () => {
  const values = {
    serverUrl: 'http://10.8.0.1:3000',
    peerId: 7,
    apiToken: 'gthgw_abc-DEF_123',
    pushToken: 'gthgp_xyz',
    apiPort: 9876,
    proxyPort: 8080,
    pollIntervalS: 10,
    heartbeatIntervalS: 15,
    wg: {
      privateKey: 'cPrIvAtE+KeY/0123456789abcdefghijklmnopqrs=',
      address: '10.8.0.7/32',
      serverPublicKey: 'SeRvEr+KeY/0123456789abcdefghijklmnopqrstu=',
      presharedKey: 'PsK+0123456789abcdefghijklmnopqrstuvwxyzAB=',
      endpoint: 'vpn.example.com:51820',
      allowedIps: ['10.8.0.0/24'],
      persistentKeepalive: 25,
    },
  };

  test('every key once, values parse back exactly, comments on top', () => {
    const text = renderGatewayEnv(values, ['generated for "Home NAS"', 'second line\nwith a break']);
    assert.ok(text.startsWith('# generated for "Home NAS"\n# second line with a break\n'));
    const env = parseEnvText(text);
    assert.deepEqual(Object.keys(env), [...ENV_KEYS]);
    assert.equal(env.GATEHOUSE_SERVER_URL, 'http://10.8.0.1:3000');
    assert.equal(env.GATEWAY_API_TOKEN, values.apiToken);
    assert.equal(env.GATEWAY_WG_PRIVATE_KEY, values.wg.privateKey);
    assert.equal(env.GATEWAY_WG_PRESHARED_KEY, values.wg.presharedKey);
    assert.equal(env.GATEWAY_WG_ALLOWED_IPS, '10.8.0.0/24');
    assert.equal(env.GATEWAY_WG_ENDPOINT, 'vpn.example.com:51820');
    for (const line of text.split('\n')) assert.ok(line === '' || line.startsWith('#') || /^[A-Z_]+=/.test(line), `line: ${line}`);
  });

  test('odd values are quoted and survive; line breaks are refused', () => {
    const odd = { ...values, serverUrl: 'http://gw.example.com/api path?x="1"&y=$HOME' };
    assert.equal(parseEnvText(renderGatewayEnv(odd)).GATEHOUSE_SERVER_URL, odd.serverUrl);
    assert.throws(() => renderGatewayEnv({ ...values, apiToken: 'a\nGATEWAY_PUSH_TOKEN=evil' }), /line breaks/);
    assert.deepEqual(parseEnvText('export A=1\nB=\'x # y\'\nC=plain # comment\n# only a comment\n\nD="q\\"uote"'), {
      A: '1',
      B: 'x # y',
      C: 'plain',
      D: 'q"uote',
    });
    assert.throws(() => parseEnvText('NOT A LINE'), /line 1/);
  });

  test('magic packet: 6 x 0xFF then the MAC 16 times', () => {
    const p = magicPacket('aa-bb-cc-dd-ee-0f');
    assert.equal(p.length, 102);
    assert.ok(p.subarray(0, 6).equals(Buffer.alloc(6, 0xff)));
    for (let i = 0; i < 16; i++) assert.equal(p.subarray(6 + i * 6, 12 + i * 6).toString('hex'), 'aabbccddee0f');
    assert.throws(() => magicPacket('aa:bb:cc'), /not a MAC/);
  });
});

describe('gateway config and its hash (pure)', () => {
  let nextId = 1;
  const gwRoute = (o: Partial<Route>): Route => ({
    ...blankRoute(0),
    id: nextId++,
    domain: `r${nextId}.example.com`,
    target_kind: 'gateway',
    target_peer_id: 5,
    target_lan_host: '192.168.1.20',
    target_lan_port: 80,
    ...o,
  });

  test('only its own enabled gateway routes; listeners from L4 routes; hash = sha256: of the canonical JSON', () => {
    const routes = [
      gwRoute({ id: 3, domain: 'nas.example.com', backend_https: true, wol_enabled: true, wol_mac: 'AA:BB:CC:DD:EE:FF' }),
      gwRoute({ id: 1, domain: 'ssh.example.com', route_type: 'l4', l4_protocol: 'tcp', l4_listen_port: 2222, target_lan_port: 22 }),
      gwRoute({ id: 2, domain: 'dns.example.com', route_type: 'l4', l4_protocol: 'udp', l4_listen_port: 5353, target_lan_port: 53 }),
      gwRoute({ id: 4, domain: 'other-gateway.example.com', target_peer_id: 6 }),
      gwRoute({ id: 5, domain: 'off.example.com', enabled: false }),
      { ...blankRoute(0), id: 6, domain: 'peer.example.com', peer_id: 5, target_port: '80' } as Route,
    ];
    const cfg = buildGatewayConfig(5, routes, 8080);
    assert.deepEqual(
      cfg.routes.map((r) => r.id),
      [1, 2, 3],
    );
    assert.deepEqual(cfg.tcp_listeners, [{ route_id: 1, port: 2222, target_host: '192.168.1.20', target_port: 22 }]);
    assert.deepEqual(cfg.udp_listeners, [{ route_id: 2, port: 5353, target_host: '192.168.1.20', target_port: 53 }]);
    assert.deepEqual(cfg.routes[2], {
      id: 3,
      domain: 'nas.example.com',
      route_type: 'http',
      l4_protocol: null,
      target_lan_host: '192.168.1.20',
      target_lan_port: 80,
      listen_port: null,
      backend_https: true,
      wol_enabled: true,
      wol_mac: 'AA:BB:CC:DD:EE:FF',
    });
    const hash = gatewayConfigHash(cfg);
    assert.match(hash, /^sha256:[0-9a-f]{64}$/);
    assert.equal(hash, `sha256:${crypto.createHash('sha256').update(canonicalJson(cfg)).digest('hex')}`);
    // input order does not matter; content does
    assert.equal(gatewayConfigHash(buildGatewayConfig(5, [...routes].reverse(), 8080)), hash);
    assert.notEqual(
      gatewayConfigHash(
        buildGatewayConfig(
          5,
          routes.map((r) => (r.id === 3 ? { ...r, target_lan_port: 81 } : r)),
          8080,
        ),
      ),
      hash,
    );
    assert.notEqual(gatewayConfigHash(buildGatewayConfig(5, routes, 8081)), hash);
  });

  test('Caddy JSON: HTTP route to the companion proxy port with the WoL hand-off, L4 route to the companion listener', () => {
    const settings: ProxySettings = {
      httpPort: 80,
      httpsPort: 443,
      adminListen: '127.0.0.1:2019',
      tls: 'internal',
      sidecarUpstream: '127.0.0.1:3000',
      bind: '',
      dataDir: '/tmp/x',
      gatewayProxyPort: 8088,
      lbCookieKey: 'test-lb-cookie-key',
    };
    const routes = [
      gwRoute({ id: 10, domain: 'nas.example.com', backend_https: true, wol_enabled: true, wol_mac: 'AA:BB:CC:DD:EE:FF' }),
      gwRoute({ id: 11, domain: 'plain.example.com' }),
      gwRoute({ id: 12, domain: 'ssh.example.com', route_type: 'l4', l4_protocol: 'tcp', l4_listen_port: 2222, target_lan_port: 22 }),
      gwRoute({ id: 13, domain: 'dns.example.com', route_type: 'l4', l4_protocol: 'udp', l4_listen_port: 5353, target_lan_port: 53 }),
      gwRoute({ id: 14, domain: 'gone.example.com', target_peer_id: 99 }),
    ];
    const cfg = renderCaddyConfig({ settings, routes, peers: new Map([[5, { address: '10.8.0.5', enabled: true }]]) });
    const hosts = hostMap(cfg);
    const nas = objAt(hosts, 'nas.example.com', 'routes', 0, 'handle', 0);
    assert.equal(nas.handler, 'reverse_proxy');
    assert.deepEqual(nas.upstreams, [{ dial: '10.8.0.5:8088' }]);
    assert.equal(nas.transport, undefined, 'the Caddy → companion hop is plain HTTP; the companion does the TLS hop');
    assert.deepEqual(nas.handle_response, [
      {
        match: { status_code: [502], headers: { 'X-Gatehouse-Gateway-Error': ['lan-unreachable'] } },
        routes: [
          {
            handle: [
              {
                handler: 'reverse_proxy',
                upstreams: [{ dial: '127.0.0.1:3000' }],
                rewrite: { method: 'GET', uri: '/gateway-wol/wait' },
                headers: { request: { set: { 'X-Gatehouse-Wol-Route': ['10'] } } },
              },
            ],
          },
        ],
      },
    ]);
    assert.equal(objAt(hosts, 'plain.example.com', 'routes', 0, 'handle', 0).handle_response, undefined, 'no WoL hand-off without wol_enabled');
    assert.equal(at(hosts, 'gone.example.com', 'routes', 0, 'handle', 0, 'handler'), 'static_response', 'a missing gateway renders as unavailable');
    assert.deepEqual(at(cfg, 'apps', 'layer4', 'servers', 'route_12', 'routes', 0, 'handle', 0, 'upstreams'), [{ dial: ['10.8.0.5:2222'] }]);
    assert.deepEqual(at(cfg, 'apps', 'layer4', 'servers', 'route_13', 'routes', 0, 'handle', 0, 'upstreams'), [{ dial: ['udp/10.8.0.5:5353'] }]);
    // disabled gateway peer: unavailable
    const off = renderCaddyConfig({ settings, routes, peers: new Map([[5, { address: '10.8.0.5', enabled: false }]]) });
    assert.equal(at(hostMap(off), 'nas.example.com', 'routes', 0, 'handle', 0, 'handler'), 'static_response');
    assert.equal(objAt(off, 'apps').layer4, undefined);
  });
});

// ------------------------------------------------------------------------------------------ API

const clock = manualClock(Date.UTC(2026, 5, 1));
let s: TestServer;
let h: Record<string, string>;
const api = apiInit(
  () => s,
  () => h,
);
const gwReq = <T = never, P extends string = string, M extends string = 'GET'>(token: string, p: P, init: ReqInit<[T] extends [never] ? M : string> = {}) =>
  s.req<T, `/api/v1/gateway${P}`, M>(`/api/v1/gateway${p}`, {
    ...init,
    headers: { ...bearer(token), ...(init.headers as Record<string, string> | undefined) },
  });
const gateways = () => s.deps.gateways as GatewaysService;

function heartbeat(o: Partial<Heartbeat> = {}): Heartbeat {
  return {
    uptime_s: 120,
    http_proxy_healthy: true,
    api_healthy: true,
    dns_resolve_ok: true,
    overall_healthy: true,
    tcp_listeners: [],
    wg_handshake_age_s: 5,
    route_reachability: [],
    hostname: 'home-gw',
    config_hash: null,
    telemetry: {
      gateway_version: '0.1.0',
      node_version: 'v20.0.0',
      wg_tools_version: 'wireguard-tools v1.0.20210914',
      cpu_cores: 4,
      cpu_load_avg: [0.1, 0.2, 0.3],
      mem_total: 8e9,
      mem_free: 4e9,
      mem_used: 4e9,
      disk: { total: 1e11, free: 5e10, used: 5e10 },
      os_platform: 'linux',
      os_release: '6.1.0',
      arch: 'x64',
      dns_resolvers: ['192.168.1.1'],
      default_gateway_ip: '192.168.1.1',
    },
    ...o,
  } as Heartbeat;
}

async function createGateway(name: string, extra: Record<string, unknown> = {}) {
  const r = await api('/peers', { method: 'POST', json: { name, is_gateway: true, ...extra } });
  assert.equal(r.status, 201, JSON.stringify(r.data));
  return { peer: r.data.peer, gateway: r.data.gateway! };
}

async function createRoute(json: Record<string, unknown>) {
  const r = await api('/routes', { method: 'POST', json });
  assert.equal(r.status, 201, JSON.stringify(r.data));
  return r.data.route;
}

before(async () => {
  s = await startTestServer(
    {
      GATEHOUSE_WG_SUBNET: '10.78.0.0/24',
      GATEHOUSE_PUBLIC_HOST: 'vpn.example.test',
      GATEHOUSE_WG_PORT: '51998',
      GATEHOUSE_PORT: '3999',
      GATEHOUSE_RATE_LIMIT_ADMIN: '100000',
      GATEHOUSE_GATEWAY_OFFLINE_AFTER: '60',
    },
    { clock },
  );
  h = bearer(await apiToken(s));
});
after(async () => s.close());

describe('creation, gateway.env and tokens', () => {
  test('POST /peers with is_gateway returns the peer and gateway {apiToken, pushToken, envContent}; a regular peer gets none', async () => {
    const { peer, gateway } = await createGateway('Home NAS gateway', { api_port: 9100 });
    assert.equal(peer.peer_type, 'gateway');
    assert.equal(peer.api_port, 9100);
    assert.match(gateway.apiToken, /^gthgw_[A-Za-z0-9_-]{43}$/);
    assert.match(gateway.pushToken, /^gthgp_[A-Za-z0-9_-]{43}$/);
    const env = parseEnvText(gateway.envContent);
    assert.equal(env.GATEHOUSE_SERVER_URL, 'http://10.78.0.1:3999', 'through the tunnel, at the server tunnel address and GATEHOUSE_PORT');
    assert.equal(env.GATEWAY_PEER_ID, String(peer.id));
    assert.equal(env.GATEWAY_API_TOKEN, gateway.apiToken);
    assert.equal(env.GATEWAY_PUSH_TOKEN, gateway.pushToken);
    assert.equal(env.GATEWAY_API_PORT, '9100');
    assert.equal(env.GATEWAY_PROXY_PORT, '8080');
    assert.equal(env.GATEWAY_WG_ADDRESS, `${peer.address}/32`);
    assert.equal(env.GATEWAY_WG_ENDPOINT, 'vpn.example.test:51998');
    assert.equal(env.GATEWAY_WG_ALLOWED_IPS, '10.78.0.0/24');
    // the tunnel parts are exactly those of the peer's own client config
    const conf = (await api(`/peers/${peer.id}/config`)).data as string;
    assert.ok(conf.includes(`PrivateKey = ${env.GATEWAY_WG_PRIVATE_KEY}`));
    assert.ok(conf.includes(`PresharedKey = ${env.GATEWAY_WG_PRESHARED_KEY}`));
    assert.ok(conf.includes(`PublicKey = ${env.GATEWAY_WG_SERVER_PUBLIC_KEY}`));
    // stored: the API token only as SHA-256, the push token sealed
    const row = ((await gateways().Gateway.findByPk(peer.id, { raw: true })) as Row<'Gateway'> | null)!;
    assert.equal(row.api_token_hash, crypto.createHash('sha256').update(gateway.apiToken).digest('hex'));
    assert.ok(!JSON.stringify(row).includes(gateway.pushToken) && !JSON.stringify(row).includes(gateway.apiToken));
    assert.equal(s.deps.crypto.open(row.push_token_enc), gateway.pushToken);
    const regular = await api('/peers', { method: 'POST', json: { name: 'plain laptop' } });
    assert.equal(regular.data.gateway, undefined);
  });

  test('rotate: fresh tokens and env, old tokens refused at once; 404 for a regular peer and for none', async () => {
    const { peer, gateway } = await createGateway('rotating gw');
    assert.equal((await gwReq(gateway.apiToken, '/config')).status, 200);
    // warm the verification cache, then rotate
    const r = await api(`/peers/${peer.id}/gateway-env/rotate`, { method: 'POST' });
    assert.equal(r.status, 200, JSON.stringify(r.data));
    assert.notEqual(r.data.gateway.apiToken, gateway.apiToken);
    assert.notEqual(r.data.gateway.pushToken, gateway.pushToken);
    assert.equal(parseEnvText(r.data.gateway.envContent).GATEWAY_API_TOKEN, r.data.gateway.apiToken);
    // the file's comments send a reader to the admin UI first, the API as the alternative
    const head = r.data.gateway.envContent
      .split('\n')
      .filter((l: string) => l.startsWith('#'))
      .join('\n');
    assert.match(head, /admin UI: Gateways → this gateway → Rotate tokens/);
    assert.ok(head.includes(`POST /api/v1/peers/${peer.id}/gateway-env/rotate`), head);
    assert.equal((await gwReq(gateway.apiToken, '/config')).status, 401, 'old token dead at once');
    assert.equal((await gwReq(gateway.apiToken, '/config/check')).status, 401);
    assert.equal((await gwReq(r.data.gateway.apiToken, '/config')).status, 200);
    const regular = (await api('/peers', { method: 'POST', json: { name: 'regular for rotate' } })).data.peer;
    const bad = await api(`/peers/${regular.id}/gateway-env/rotate`, { method: 'POST' });
    assert.equal(bad.status, 404, 'a regular peer has no gateway side');
    assert.match(bad.data.error!, /not a gateway peer/);
    assert.equal((await api('/peers/999999/gateway-env/rotate', { method: 'POST' })).status, 404);
    const ev = await api('/logs/activity?event_type=gateway_tokens_rotated');
    assert.ok(ev.data.entries?.some?.((e: ActivityEntry) => e.details!.peer_id === peer.id) ?? JSON.stringify(ev.data).includes(`"peer_id":${peer.id}`));
  });
});

describe('authentication of the companion API', () => {
  let token: string;
  let peerId: number;
  before(async () => {
    const g = await createGateway('auth gw');
    token = g.gateway.apiToken;
    peerId = g.peer.id;
  });

  test('the gateway token works under /api/v1/gateway/* (and the /api alias) only', async () => {
    assert.equal((await gwReq(token, '/config')).status, 200);
    assert.equal((await s.req('/api/gateway/config', { headers: bearer(token) })).status, 200);
    for (const p of ['/peers', `/peers/${peerId}`, '/gateways', '/routes', '/tokens', `/peers/${peerId}/gateway-info`]) {
      assert.equal((await s.req(`/api/v1${p}`, { headers: bearer(token) })).status, 401, `gateway token on ${p}`);
    }
    assert.equal((await s.req('/api/v1/peers', { method: 'POST', headers: bearer(token), json: { name: 'x' } })).status, 401);
  });

  test('admin tokens, sessions, no token, garbage and other gateways cannot act as a gateway', async () => {
    assert.equal((await gwReq(h.authorization.slice(7), '/config')).status, 401, 'admin API token');
    const { cookie } = await login(s);
    assert.equal((await s.req('/api/v1/gateway/config', { headers: { cookie } })).status, 401, 'admin session');
    assert.equal((await s.req('/api/v1/gateway/config')).status, 401, 'nothing');
    assert.equal((await gwReq('gthgw_' + 'A'.repeat(43), '/config')).status, 401, 'unknown gateway token');
    assert.equal((await gwReq('not-a-token', '/heartbeat', { method: 'POST', json: heartbeat() })).status, 401);
    // a token is bound to its peer: each gateway sees its own configuration only
    const other = await createGateway('auth gw 2');
    const a = (await gwReq(token, '/config')).data;
    const b = (await gwReq(other.gateway.apiToken, '/config')).data;
    assert.equal(a.peer_id, peerId);
    assert.equal(b.peer_id, other.peer.id);
  });

  test('a disabled gateway peer is refused at once; enabled again it works', async () => {
    assert.equal((await gwReq(token, '/config')).status, 200);
    assert.equal((await api(`/peers/${peerId}/toggle`, { method: 'PUT' })).status, 200);
    assert.equal((await gwReq(token, '/config')).status, 401);
    await api(`/peers/${peerId}/toggle`, { method: 'PUT' });
    assert.equal((await gwReq(token, '/config')).status, 200);
  });
});

describe('configuration polling', () => {
  test('config lists its routes and listeners; check answers 304 until a route write changes the hash', async () => {
    const g = await createGateway('poll gw');
    const t = g.gateway.apiToken;
    const first = await gwReq(t, '/config');
    assert.equal(first.status, 200);
    assert.deepEqual(first.data.routes, []);
    assert.equal(first.data.proxy_port, 8080);
    const h0 = first.data.config_hash;
    assert.match(h0, /^sha256:[0-9a-f]{64}$/);
    assert.equal((await gwReq(t, `/config/check?hash=${h0}`)).status, 304);
    const noHash = await gwReq(t, '/config/check');
    assert.equal(noHash.status, 200);
    assert.equal(noHash.data.config_hash, h0);

    const web = await createRoute({
      domain: 'nas.poll.example.com',
      target_kind: 'gateway',
      target_peer_id: g.peer.id,
      target_lan_host: '192.168.50.10',
      target_lan_port: 5000,
      wol_enabled: true,
      wol_mac: 'aa-bb-cc-dd-ee-01',
    });
    const ssh = await createRoute({
      domain: 'ssh.poll.example.com',
      route_type: 'l4',
      l4_protocol: 'tcp',
      l4_listen_port: 42022,
      target_kind: 'gateway',
      target_peer_id: g.peer.id,
      target_lan_host: '192.168.50.11',
      target_lan_port: 22,
    });
    const changed = await gwReq(t, `/config/check?hash=${h0}`);
    assert.equal(changed.status, 200);
    assert.equal(changed.data.changed, true);
    const h1 = changed.data.config_hash;
    assert.notEqual(h1, h0);
    const cfg = (await gwReq(t, '/config')).data;
    assert.equal(cfg.config_hash, h1);
    assert.deepEqual(
      cfg.routes.map((r: GatewayConfigRoute) => [r.id, r.domain, r.route_type, r.target_lan_host, r.target_lan_port, r.listen_port, r.wol_enabled, r.wol_mac]),
      [
        [web.id, 'nas.poll.example.com', 'http', '192.168.50.10', 5000, null, true, 'AA:BB:CC:DD:EE:01'],
        [ssh.id, 'ssh.poll.example.com', 'l4', '192.168.50.11', 22, 42022, false, null],
      ],
    );
    assert.deepEqual(cfg.tcp_listeners, [{ route_id: ssh.id, port: 42022, target_host: '192.168.50.11', target_port: 22 }]);
    assert.equal((await gwReq(t, `/config/check?hash=${h1}`)).status, 304);
    // toggle (another service's write path) changes it, and back
    await api(`/routes/${ssh.id}/toggle`, { method: 'PUT' });
    const h2 = (await gwReq(t, `/config/check?hash=${h1}`)).data.config_hash;
    assert.ok(h2 && h2 !== h1);
    await api(`/routes/${ssh.id}/toggle`, { method: 'PUT' });
    assert.equal((await gwReq(t, `/config/check?hash=${h1}`)).status, 304, 'same routes, same hash');
    // an update of a LAN target and a delete change it too
    await api(`/routes/${web.id}`, { method: 'PUT', json: { target_lan_port: 5001 } });
    const h3 = (await gwReq(t, `/config/check?hash=${h1}`)).data.config_hash;
    assert.ok(h3 && h3 !== h1);
    await api(`/routes/${web.id}`, { method: 'DELETE' });
    await api(`/routes/${ssh.id}`, { method: 'DELETE' });
    assert.equal((await gwReq(t, `/config/check?hash=${h0}`)).status, 304, 'back to no routes: the first hash again');
    // a bad hash is a 400 with fields
    const bad = await gwReq(t, '/config/check?hash=md5:123');
    assert.equal(bad.status, 400);
    assert.ok(bad.data.fields!.hash);
  });

  test('a route write re-reads only the gateways it touches: create, toggle of a disabled route, move, delete', async () => {
    const [a, b, c] = [await createGateway('touch gw a'), await createGateway('touch gw b'), await createGateway('touch gw c')];
    const hash = async (g: typeof a) => (await gwReq(g.gateway.apiToken, '/config/check')).data.config_hash as string;
    const reads = () => ({ ...gateways().configs.reads });
    const [a0, b0, c0] = [await hash(a), await hash(b), await hash(c)];
    const route = await createRoute({
      domain: 'touch.example.com',
      target_kind: 'gateway',
      target_peer_id: a.peer.id,
      target_lan_host: '192.168.60.10',
      target_lan_port: 80,
    });
    let before = reads();
    const a1 = await hash(a);
    assert.notEqual(a1, a0);
    assert.equal(await hash(b), b0);
    assert.equal(await hash(c), c0);
    assert.deepEqual(reads(), { all: before.all, one: before.one + 1 }, 'one read, of gateway a only');

    // disabled, then enabled by a write that names only the id and `enabled`: the route's gateway is still found
    await api(`/routes/${route.id}/toggle`, { method: 'PUT' });
    assert.equal(await hash(a), a0, 'disabled: a has no served route');
    await api(`/routes/${route.id}/toggle`, { method: 'PUT' });
    assert.equal(await hash(a), a1);

    // moved from a to b: both change, c is not read
    await api(`/routes/${route.id}`, { method: 'PUT', json: { target_peer_id: b.peer.id } });
    before = reads();
    assert.equal(await hash(a), a0);
    assert.notEqual(await hash(b), b0);
    assert.equal(await hash(c), c0);
    assert.deepEqual(reads(), { all: before.all, one: before.one + 2 });

    await api(`/routes/${route.id}`, { method: 'DELETE' });
    assert.equal(await hash(b), b0);
    assert.equal(await hash(a), a0);
    // a write the hooks cannot attribute (not by id) still drops every entry
    await s.deps.db.models.Route.update({ updated_at: clock() }, { where: { target_kind: 'gateway' } });
    before = reads();
    assert.equal(await hash(c), c0);
    assert.equal(reads().all, before.all + 1, 'a whole refill after a write not by id');
  });

  test('the early fast path of config/check answers exactly like the declared endpoint', async () => {
    const { createApp } = await import('../src/http/app.js');
    const { gatewayApiEndpoints } = await import('../src/gateways/endpoints.js');
    const http = await import('node:http');
    const app = createApp(s.deps, gatewayApiEndpoints(s.deps)); // the registry chain only, no fast path
    const srv = http.createServer(app.callback());
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
    try {
      const plainUrl = `http://127.0.0.1:${(srv.address() as import('node:net').AddressInfo).port}`;
      const g = await createGateway('fast path gw');
      const current = (await gwReq(g.gateway.apiToken, '/config')).data.config_hash;
      const cases: [string, Record<string, string>][] = [
        [`?hash=${current}`, bearer(g.gateway.apiToken)],
        [`?hash=sha256:${'a'.repeat(64)}`, bearer(g.gateway.apiToken)],
        ['', bearer(g.gateway.apiToken)],
        ['?hash=nope', bearer(g.gateway.apiToken)],
        [`?hash=${current}`, bearer('gthgw_wrong')],
        [`?hash=${current}`, {}],
        [`?hash=${current}`, h],
        [`?hash=${current}`, { 'x-api-token': g.gateway.apiToken }],
      ];
      for (const [q, headers] of cases) {
        const fast = await s.req(`/api/v1/gateway/config/check${q}`, { headers });
        const plain = await fetch(`${plainUrl}/api/v1/gateway/config/check${q}`, { headers });
        const text = await plain.text();
        assert.equal(fast.status, plain.status, `${q} ${JSON.stringify(headers)}`);
        assert.deepEqual(fast.data === '' ? '' : fast.data, text === '' ? '' : JSON.parse(text), q);
      }
    } finally {
      srv.close();
    }
  });

  test('POST /gateway/status stores a traffic snapshot without counting as a heartbeat; probe echoes', async () => {
    const g = await createGateway('status gw');
    const t = g.gateway.apiToken;
    const st = await gwReq(t, '/status', { method: 'POST', json: { rx_bytes: 1000, tx_bytes: 2000, active_connections: 3 } });
    assert.equal(st.status, 200, JSON.stringify(st.data));
    const view = (await api('/gateways')).data.gateways.find((x: Gateway) => x.peer_id === g.peer.id);
    assert.deepEqual(view!.traffic, { rx_bytes: 1000, tx_bytes: 2000, active_connections: 3, at: clock() });
    assert.equal(view!.last_seen_at, null, 'not a heartbeat');
    assert.equal(view!.status, 'unknown');
    const bad = await gwReq(t, '/status', { method: 'POST', json: { rx_bytes: -1, tx_bytes: 'x' } });
    assert.equal(bad.status, 400);
    assert.ok(bad.data.fields!.rx_bytes && bad.data.fields!.tx_bytes && bad.data.fields!.active_connections);
    assert.deepEqual((await api('/gateways')).data.gateways.find((x: Gateway) => x.peer_id === g.peer.id)!.traffic, view!.traffic, 'nothing changed');
    const payload = { nonce: crypto.randomBytes(8).toString('hex'), nested: { list: [1, 2, 3], text: 'ümlaut ✓' } };
    const echo = await gwReq(t, '/probe', { method: 'POST', json: payload });
    assert.equal(echo.status, 200);
    assert.deepEqual(echo.data.echo, payload);
    assert.equal(echo.data.peer_id, g.peer.id);
  });

  test('POST /gateway/probe echoes a text or binary body byte for byte', async () => {
    const g = await createGateway('probe gw');
    const t = g.gateway.apiToken;
    const binary = crypto.randomBytes(64 * 1024);
    binary[0] = 0;
    binary[1] = 0xff;
    for (const [type, body] of [
      ['application/octet-stream', binary],
      ['text/plain; charset=utf-8', Buffer.from('ping ümlaut ✓\n\u0000end', 'utf8')],
      ['application/x-www-form-urlencoded', Buffer.from('a=1&b=%C3%BC')],
    ] as [string, Buffer][]) {
      const res = await fetch(`${s.url}/api/v1/gateway/probe`, { method: 'POST', body: new Uint8Array(body), headers: { ...bearer(t), 'content-type': type } });
      assert.equal(res.status, 200, type);
      const back = Buffer.from(await res.arrayBuffer());
      assert.ok(back.equals(body), `${type}: ${back.length} bytes back of ${body.length}`);
      assert.equal(res.headers.get('content-type'), type);
      assert.equal(res.headers.get('x-probe-bytes'), String(body.length));
      assert.equal(res.headers.get('x-probe-sha256'), crypto.createHash('sha256').update(body).digest('hex'));
      assert.equal(res.headers.get('x-probe-peer-id'), String(g.peer.id));
      assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
    }
    const empty = await fetch(`${s.url}/api/v1/gateway/probe`, { method: 'POST', headers: bearer(t) });
    assert.equal(empty.status, 200);
    assert.equal((await empty.arrayBuffer()).byteLength, 0);
    const big = await fetch(`${s.url}/api/v1/gateway/probe`, {
      method: 'POST',
      body: Buffer.alloc(1024 * 1024 + 1),
      headers: { ...bearer(t), 'content-type': 'application/octet-stream' },
    });
    assert.equal(big.status, 413);
    assert.equal((await big.json()).ok, false);
    const anon = await fetch(`${s.url}/api/v1/gateway/probe`, { method: 'POST', body: 'x', headers: { 'content-type': 'text/plain' } });
    assert.equal(anon.status, 401);
  });
});

describe('heartbeats and the status state machine', () => {
  test('invalid heartbeats: 400 with fields, nothing stored', async () => {
    const g = await createGateway('bad hb gw');
    const t = g.gateway.apiToken;
    const cases: [unknown, string[]][] = [
      [{}, ['uptime_s', 'overall_healthy', 'telemetry', 'hostname']],
      [{ ...heartbeat(), uptime_s: -5 }, ['uptime_s']],
      [{ ...heartbeat(), overall_healthy: 'yes' }, ['overall_healthy']],
      [
        { ...heartbeat(), route_reachability: [{ route_id: 0, reachable: 'no', latency_ms: -1 }] },
        ['route_reachability.0.route_id', 'route_reachability.0.reachable', 'route_reachability.0.latency_ms'],
      ],
      [{ ...heartbeat(), config_hash: 'md5:abc' }, ['config_hash']],
      [{ ...heartbeat(), tcp_listeners: [{ port: 70000, status: 'listening' }] }, ['tcp_listeners.0.port']],
      [{ ...heartbeat(), telemetry: { ...heartbeat().telemetry, cpu_load_avg: [1, 2] } }, ['telemetry.cpu_load_avg']],
      [{ ...heartbeat(), telemetry: { ...heartbeat().telemetry, disk: { total: 'big' } } }, ['telemetry.disk.total']],
    ];
    for (const [body, fields] of cases) {
      const r = await gwReq(t, '/heartbeat', { method: 'POST', json: body });
      assert.equal(r.status, 400, JSON.stringify(body).slice(0, 80));
      for (const f of fields) assert.ok(r.data.fields?.[f], `field ${f} in ${JSON.stringify(r.data.fields)}`);
    }
    await gateways().flushHeartbeats(); // heartbeat rows are written in batches: nothing may be pending either
    const row = ((await gateways().Gateway.findByPk(g.peer.id, { raw: true })) as Row<'Gateway'> | null)!;
    assert.equal(row.last_seen_at, null);
    assert.equal(row.health, null);
    assert.equal(row.status, 'unknown');
    const peer = (await api(`/peers/${g.peer.id}`)).data.peer;
    assert.equal(peer.hostname, null);
  });

  test('unknown → online → offline (silence) → online → offline (no LAN target reachable), one event per transition', async () => {
    const g = await createGateway('state gw');
    const t = g.gateway.apiToken;
    const route = await createRoute({
      domain: 'state.example.com',
      target_kind: 'gateway',
      target_peer_id: g.peer.id,
      target_lan_host: '192.168.9.9',
      target_lan_port: 80,
    });
    const events = async () =>
      ((await api(`/logs/activity?source=gateways&limit=1000`)).data.entries as ActivityEntry[])
        .filter((e) => e.details?.peer_id === g.peer.id && /^gateway_(online|offline|unknown)$/.test(e.event_type))
        .map((e) => e.event_type)
        .reverse();
    const info = async () => (await api(`/peers/${g.peer.id}/gateway-info`)).data.gateway;
    assert.equal((await info()).status, 'unknown');
    assert.equal((await info()).health, null);

    const cfgHash = (await gwReq(t, '/config')).data.config_hash;
    const hb = heartbeat({
      config_hash: cfgHash,
      hostname: 'State-GW',
      route_reachability: [{ route_id: route.id, reachable: true, latency_ms: 1.5 }],
      extra_field: { kept: true },
    } as Partial<Heartbeat>);
    const r = await gwReq(t, '/heartbeat', { method: 'POST', json: hb });
    assert.equal(r.status, 200, JSON.stringify(r.data));
    assert.equal(r.data.status, 'online');
    assert.equal(r.data.config_changed, false);
    assert.deepEqual(r.data.hostname, { applied: true });
    let i = await info();
    assert.equal(i.status, 'online');
    assert.equal(i.last_seen_at, clock());
    assert.deepEqual(i.health!.route_reachability, [{ route_id: route.id, reachable: true, latency_ms: 1.5 }]);
    assert.equal(i.health!.uptime_s, 120);
    assert.deepEqual(i.health!.telemetry, hb.telemetry);
    const list = (await api('/gateways')).data.gateways.find((x: Gateway) => x.peer_id === g.peer.id);
    assert.deepEqual(list!.health, JSON.parse(JSON.stringify(hb)), 'the whole payload, extra fields included');
    assert.equal(list!.config_in_sync, true);
    assert.equal(list!.hostname, 'state-gw');
    assert.deepEqual(list!.routes, [
      { id: route.id, domain: 'state.example.com', route_type: 'http', target_lan_host: '192.168.9.9', target_lan_port: 80, enabled: true, wol_enabled: false },
    ]);
    for (const k of ['peer_id', 'name', 'hostname', 'ip', 'api_port', 'status', 'last_seen_at', 'health', 'routes']) assert.ok(k in list!, k);
    assert.equal(list!.ip, g.peer.address);
    assert.equal(list!.api_port, 9876);

    // silence: online until offline_after has passed, then offline on the next evaluation
    clock.advance(60_000);
    assert.equal(await gateways().evaluateAll(), 0);
    assert.equal((await info()).status, 'online');
    clock.advance(1);
    assert.equal(await gateways().evaluateAll(), 1);
    assert.equal(await gateways().evaluateAll(), 0, 'logged once');
    i = await info();
    assert.equal(i.status, 'offline');
    assert.match(i.status_reason, /no heartbeat for 60 s/);
    assert.deepEqual(i.status_detail, { code: 'heartbeat_stale', age_s: 60, offline_after_s: 60 });
    assert.deepEqual(i.status_reason_code, { code: 'gateway.status.heartbeat_stale', params: { age_s: 60, offline_after_s: 60 } });

    // back: a heartbeat moves it online at once
    assert.equal((await gwReq(t, '/heartbeat', { method: 'POST', json: hb })).data.status, 'online');
    // the LAN target stops answering: offline although heartbeats arrive (ground truth)
    const down = await gwReq(t, '/heartbeat', {
      method: 'POST',
      json: { ...hb, route_reachability: [{ route_id: route.id, reachable: false, latency_ms: null }] },
    });
    assert.equal(down.data.status, 'offline');
    assert.match(down.data.status_reason, /none of its 1 LAN target is reachable/);
    const listed = (await api('/gateways')).data.gateways.find((x: Gateway) => x.peer_id === g.peer.id);
    assert.deepEqual(listed!.status_detail, { code: 'unhealthy', health: { code: 'lan_unreachable', total: 1 } }, 'the list gives the reason as data too');
    assert.deepEqual(
      listed!.status_reason_code,
      { code: 'gateway.status.unhealthy', params: { health: { code: 'gateway.health.lan_unreachable', params: { total: 1 } } } },
      'and as a message of the catalogue',
    );
    assert.deepEqual(await events(), ['gateway_online', 'gateway_offline', 'gateway_online', 'gateway_offline']);
    // a stale config hash is reported back
    const stale = await gwReq(t, '/heartbeat', { method: 'POST', json: { ...hb, config_hash: `sha256:${'0'.repeat(64)}` } });
    assert.equal(stale.data.config_changed, true);
    assert.equal(stale.data.config_hash, cfgHash);
  });

  test('gateway status rows stored without the reason as a message are read back as coded reasons (gateway.status.*, else not_recorded)', async () => {
    const peerId = 990_001;
    const base = { severity: 'warning', source: 'gateways', event_type: 'gateway_offline', user_id: null, ip: null };
    const before = { peer_id: peerId, name: 'old gw', from: 'online' as const, to: 'offline' as const, last_seen_at: null, at: clock() };
    // a row written before activity rows had codes: the English message and the event as details
    await s.deps.db.models.Activity.create({
      ...base,
      message: 'Gateway "old gw" is offline (was online): no heartbeat for 95 s (offline after 90 s)',
      code: null,
      params: null,
      details: JSON.stringify({ ...before, reason: 'no heartbeat for 95 s (offline after 90 s)' }),
      created_at: clock(),
    });
    // an event without reason_code (as older servers emitted them): its reason text is read back when the row is made
    await s.deps.events.emit({ type: 'gateway_offline', ...before, reason: 'heartbeat received, but none of its 2 LAN targets are reachable' });
    // a row whose reason was kept as an unworded text, and one no code words
    await s.deps.db.models.Activity.create({
      ...base,
      message: 'Gateway "old gw" is offline (was online): switched off by hand',
      code: 'gateway.status_changed',
      params: JSON.stringify({ name: 'old gw', to: 'offline', from: 'online', reason: { code: 'field.unworded', params: { text: 'switched off by hand' } } }),
      details: JSON.stringify({ ...before, reason: 'switched off by hand' }),
      created_at: clock(),
    });
    const rows = ((await api('/logs/activity?source=gateways&limit=1000')).data.entries as ActivityEntry[]).filter((e) => e.details?.peer_id === peerId);
    const reasons = rows.map((e) => [e.code, (e.params as { reason?: unknown } | null)?.reason]).reverse();
    assert.deepEqual(reasons, [
      ['gateway.status_changed', { code: 'gateway.status.heartbeat_stale', params: { age_s: 95, offline_after_s: 90 } }],
      ['gateway.status_changed', { code: 'gateway.status.unhealthy', params: { health: { code: 'gateway.health.lan_unreachable', params: { total: 2 } } } }],
      ['gateway.status_changed', { code: 'gateway.status.not_recorded', params: { detail: 'switched off by hand' } }],
    ]);
    assert.equal(rows.at(-1)!.message, 'Gateway "old gw" is offline (was online): no heartbeat for 95 s (offline after 90 s)', 'the stored text is kept');
    assert.deepEqual(rows.at(-1)!.params, { name: 'old gw', to: 'offline', from: 'online', reason: reasons[0][1] });
  });

  test('a heartbeat is answered before its row is written; readers see it at once; the batch stores it', async () => {
    const g = await createGateway('batched gw');
    const t = g.gateway.apiToken;
    const cfgHash = (await gwReq(t, '/config')).data.config_hash;
    const r = await gwReq(t, '/heartbeat', { method: 'POST', json: heartbeat({ config_hash: cfgHash }) });
    assert.equal(r.status, 200, JSON.stringify(r.data));
    const seen = clock();
    assert.equal((await api(`/peers/${g.peer.id}/gateway-info`)).data.gateway.last_seen_at, seen, 'the admin view has it before it is stored');
    await gateways().flushHeartbeats();
    const row = ((await gateways().Gateway.findByPk(g.peer.id, { raw: true })) as Row<'Gateway'> | null)!;
    assert.equal(Number(row.last_seen_at), seen);
    assert.equal(row.reported_config_hash, cfgHash);
    assert.equal(JSON.parse(row.health!).config_hash, cfgHash);
  });

  test('transition listeners hear every transition through the one emit function', async () => {
    const seen: string[] = [];
    gateways().onTransition((tr) => {
      seen.push(`${tr.name}:${tr.from}->${tr.to}`);
    });
    const g = await createGateway('listener gw');
    await gwReq(g.gateway.apiToken, '/heartbeat', { method: 'POST', json: heartbeat({ hostname: '' }) });
    clock.advance(61_000);
    await gateways().evaluateAll();
    assert.ok(seen.includes('listener gw:unknown->online'), seen.join());
    assert.ok(seen.includes('listener gw:online->offline'), seen.join());
  });

  test('hostname: agent reports set and change it; an admin hostname is sticky', async () => {
    const g = await createGateway('host gw');
    const t = g.gateway.apiToken;
    const peer = async () => (await api(`/peers/${g.peer.id}`)).data.peer;
    await gwReq(t, '/heartbeat', { method: 'POST', json: heartbeat({ hostname: 'nas-one' }) });
    assert.deepEqual([(await peer()).hostname, (await peer()).hostname_source], ['nas-one', 'agent']);
    await gwReq(t, '/heartbeat', { method: 'POST', json: heartbeat({ hostname: 'nas-two' }) });
    assert.equal((await peer()).hostname, 'nas-two');
    const set = await api(`/peers/${g.peer.id}/hostname`, { method: 'PATCH', json: { hostname: 'admin-name' } });
    assert.equal(set.status, 200, JSON.stringify(set.data));
    const r = await gwReq(t, '/heartbeat', { method: 'POST', json: heartbeat({ hostname: 'nas-three' }) });
    assert.equal(r.status, 200);
    assert.equal(r.data.hostname.applied, false);
    assert.deepEqual([(await peer()).hostname, (await peer()).hostname_source], ['admin-name', 'admin']);
    // an invalid name does not fail the heartbeat
    await api(`/peers/${g.peer.id}/hostname`, { method: 'PATCH', json: { hostname: '' } });
    const inv = await gwReq(t, '/heartbeat', { method: 'POST', json: heartbeat({ hostname: 'bad_name!' }) });
    assert.equal(inv.status, 200);
    assert.equal(inv.data.hostname.applied, false);
  });

  test('gateway-info: 404 for a regular peer and for none; GET /gateways lists gateway peers only', async () => {
    const regular = (await api('/peers', { method: 'POST', json: { name: 'regular for info' } })).data.peer;
    const r = await api(`/peers/${regular.id}/gateway-info`);
    assert.equal(r.status, 404);
    assert.equal((await api('/peers/999999/gateway-info')).status, 404);
    const all = (await api('/gateways')).data.gateways;
    assert.ok(all.length >= 1);
    assert.ok(!all.some((x: Gateway) => x.peer_id === regular.id));
  });

  test('deleting a gateway peer removes its gateway row and kills its token', async () => {
    const g = await createGateway('doomed gw');
    assert.equal((await gwReq(g.gateway.apiToken, '/config')).status, 200);
    assert.equal((await api(`/peers/${g.peer.id}`, { method: 'DELETE' })).status, 200);
    assert.equal((await gwReq(g.gateway.apiToken, '/config')).status, 401);
    assert.equal(await gateways().Gateway.findByPk(g.peer.id), null);
  });
});

/** A request to a sidecar listener from a chosen local address (127.0.0.0/8 is all local on Linux). */
function callFrom(base: string, from: string, method: string, p: string, headers: Record<string, string>, body?: string): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const r = http.request(
      `${base}${p}`,
      {
        method,
        localAddress: from,
        headers: { ...headers, ...(body !== undefined ? { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) } : {}) },
        agent: false,
      },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    r.on('error', reject);
    r.end(body);
  });
}

describe('a gateway token works only from its tunnel address, on every listener', () => {
  test('main listener (the default): every companion endpoint answers the token from its own tunnel address, directly or as our Caddy forwards it, and refuses it (401) from any other address', async (t) => {
    const n = 100 + ((process.pid + 37) % 100);
    const srv = await startTestServer({
      GATEHOUSE_WG_SUBNET: `127.81.${n}.0/24`,
      GATEHOUSE_GATEWAY_TOKEN_ANY_SOURCE: 'false',
      GATEHOUSE_RATE_LIMIT_ADMIN: '100000',
    });
    t.after(() => srv.close());
    const admin = bearer(await apiToken(srv));
    const mk = async (name: string) => (await srv.req('/api/v1/peers', { method: 'POST', json: { name, is_gateway: true }, headers: admin })).data;
    const a = await mk('bound gw a');
    const b = await mk('bound gw b');
    const addrA: string = a.peer.address;
    assert.match(addrA, new RegExp(`^127\\.81\\.${n}\\.`));
    const tok = bearer(a.gateway!.apiToken);
    const endpoints = srv.endpoints.filter((e) => e.auth === 'gateway');
    assert.ok(endpoints.length >= 5);
    const body = (p: string) =>
      p === '/gateway/status'
        ? JSON.stringify({ rx_bytes: 1, tx_bytes: 2, active_connections: 0 })
        : p === '/gateway/probe'
          ? JSON.stringify({ x: 1 })
          : undefined;
    for (const e of endpoints) {
      const p = `/api/v1${e.path}`;
      const go = (from: string, headers: Record<string, string> = {}) =>
        callFrom(srv.url, from, e.method, p, { ...tok, ...headers }, e.method === 'GET' ? undefined : body(e.path));
      const own = await go(addrA);
      if (e.path !== '/gateway/heartbeat') assert.ok(own === 200 || own === 304, `${e.method} ${p} from its tunnel address: ${own}`);
      else assert.equal(own, 400, 'a heartbeat without a body: past authentication, refused by validation');
      assert.equal(await go('127.0.0.1'), 401, `${e.method} ${p} from 127.0.0.1`);
      assert.equal(await go(b.peer.address), 401, `${e.method} ${p} from another gateway's tunnel address`);
      // through our Caddy (loopback, X-Forwarded-For: the last entry is the one Caddy appended)
      const viaCaddy = await go('127.0.0.1', { 'x-forwarded-for': `198.51.100.7, ${addrA}` });
      assert.ok(viaCaddy !== 401, `${e.method} ${p} forwarded for its tunnel address: ${viaCaddy}`);
      assert.equal(await go('127.0.0.1', { 'x-forwarded-for': `${addrA}, 198.51.100.7` }), 401, `${e.method} ${p} forwarded for another address`);
    }
    // the fast path of the idle poll checks the address too
    const check = `/api/v1/gateway/config/check?hash=sha256:${'0'.repeat(64)}`;
    assert.equal(await callFrom(srv.url, addrA, 'GET', check, tok), 200);
    assert.equal(await callFrom(srv.url, '127.0.0.1', 'GET', check, tok), 401);
  });

  test('GATEHOUSE_GATEWAY_TOKEN_ANY_SOURCE=true lifts the binding on the main listener only', async (t) => {
    const n = 100 + ((process.pid + 71) % 100);
    const net = await import('node:net');
    const free = await new Promise<number>((r) => {
      const x = net.createServer().listen(0, '127.0.0.1', () => {
        const p = (x.address() as import('node:net').AddressInfo).port;
        x.close(() => r(p));
      });
    });
    const srv = await startTestServer(
      {
        GATEHOUSE_WG_SUBNET: `127.82.${n}.0/24`,
        GATEHOUSE_PORT: String(free),
        GATEHOUSE_BIND: '127.0.0.1',
        GATEHOUSE_GATEWAY_TOKEN_ANY_SOURCE: 'true',
        GATEHOUSE_RATE_LIMIT_ADMIN: '100000',
      },
      { startFeatures: true },
    );
    t.after(() => srv.close());
    const listener = srv.deps.gatewayTunnelListener as { listening: boolean };
    await waitFor(() => listener.listening, 2000, { intervalMs: 20, what: 'the tunnel listener' });
    assert.equal(listener.listening, true);
    const g = (await srv.req('/api/v1/peers', { method: 'POST', json: { name: 'any-source gw', is_gateway: true }, headers: bearer(await apiToken(srv)) }))
      .data;
    const tok = bearer(g.gateway!.apiToken);
    assert.equal(await callFrom(srv.url, '127.0.0.1', 'GET', '/api/v1/gateway/config', tok), 200, 'main listener: any source');
    const tunnel = `http://127.82.${n}.1:${free}`;
    assert.equal(await callFrom(tunnel, g.peer.address, 'GET', '/api/v1/gateway/config', tok), 200, 'tunnel listener: from its address');
    assert.equal(await callFrom(tunnel, '127.0.0.1', 'GET', '/api/v1/gateway/config', tok), 401, 'tunnel listener: still bound');
  });
});

describe('the companion API on the tunnel address', () => {
  test('serves only /api/v1/gateway/*, and a token only from its own gateway address', async (t) => {
    const n = 100 + (process.pid % 100);
    const net = await import('node:net');
    const http = await import('node:http');
    const free = await new Promise<number>((r) => {
      const srv = net.createServer().listen(0, '127.0.0.1', () => {
        const p = (srv.address() as import('node:net').AddressInfo).port;
        srv.close(() => r(p));
      });
    });
    const t2 = await startTestServer(
      { GATEHOUSE_WG_SUBNET: `127.80.${n}.0/24`, GATEHOUSE_PORT: String(free), GATEHOUSE_BIND: '127.0.0.1', GATEHOUSE_RATE_LIMIT_ADMIN: '100000' },
      { startFeatures: true },
    );
    t.after(() => t2.close());
    const admin = bearer(await apiToken(t2));
    const listener = t2.deps.gatewayTunnelListener as { listening: boolean; address: string };
    await waitFor(() => listener.listening, 2000, { intervalMs: 20, what: 'the tunnel listener' });
    assert.equal(listener.listening, true);
    assert.equal(listener.address, `127.80.${n}.1`);
    const g = await t2.req('/api/v1/peers', { method: 'POST', json: { name: 'tunnel gw', is_gateway: true }, headers: admin });
    const env = parseEnvText(g.data.gateway!.envContent);
    assert.equal(env.GATEHOUSE_SERVER_URL, `http://127.80.${n}.1:${free}`);
    const call = (p: string, from: string, headers: Record<string, string>) =>
      new Promise<number>((resolve, reject) => {
        const req = http.request(`${env.GATEHOUSE_SERVER_URL}${p}`, { localAddress: from, headers, agent: false }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on('error', reject);
        req.end();
      });
    const gw = bearer(env.GATEWAY_API_TOKEN);
    assert.equal(await call('/api/v1/gateway/config', g.data.peer.address, gw), 200, 'from its own tunnel address');
    assert.equal(await call('/api/v1/gateway/config', '127.0.0.1', gw), 401, 'the same token from another address');
    assert.equal(await call('/api/v1/gateway/config/check', g.data.peer.address, gw), 200);
    assert.equal(await call('/api/v1/gateway/config/check', '127.0.0.1', gw), 401, 'the fast path checks the address too');
    assert.equal(await call('/api/v1/peers', g.data.peer.address, admin), 404, 'no admin API on the tunnel');
    assert.equal(await call('/health', g.data.peer.address, {}), 404);
    assert.equal(await call('/login', g.data.peer.address, {}), 404);
  });
});
