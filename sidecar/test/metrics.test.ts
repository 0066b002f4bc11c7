// GET /metrics: who may read it (session; token with scope system, full-access or read-only; the
// query parameter token on this path only), the series after activity through the API and the
// route-auth verify path, the licence gate, and that a ?token= never reaches the logs.
// (Caddy's per-route series and a real Prometheus scrape: test/e2e/metrics-prometheus.test.ts.)
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import winston from 'winston';
import { startTestServer, apiToken, bearer, login, type TestServer, apiCall } from './lib/server.js';
import { parsePromText, type Sample } from '../src/metrics/prom-text.js';
import { routeSeriesFromCaddy } from '../src/metrics/service.js';
import { rawRequest } from './route-auth-helpers.js';
import type { FeatureGate, LicensedFeature } from '../src/licence/features.js';
import type { DeliveryStatus } from '../src/webhooks/schema.js';
import type { Refusal } from './lib/api-types.js';

const off = new Set<LicensedFeature>();
const gate: FeatureGate = { isEnabled: (f) => !off.has(f) };
const logged: string[] = [];
const log = winston.createLogger({
  level: 'debug',
  format: winston.format.json(),
  transports: [new winston.transports.Stream({ stream: new Writable({ write: (chunk, _e, cb) => (logged.push(String(chunk)), cb()) }) })],
});

let s: TestServer;
let full: string;
const tok: Record<string, string> = {};

before(async () => {
  s = await startTestServer({ GATEHOUSE_RATE_LIMIT_ADMIN: '100000', GATEHOUSE_RATE_LIMIT_LOGIN: '100000' }, { featureGate: gate, log });
  full = await apiToken(s);
  for (const sc of ['system', 'read-only', 'peers', 'routes', 'logs']) tok[sc] = await apiToken(s, [sc]);
});
after(async () => s.close());

const api = apiCall(
  () => s,
  () => bearer(full),
);

async function scrape(): Promise<{ text: string; samples: Sample[] }> {
  const r = await s.req('/metrics', { headers: bearer(tok.system) });
  assert.equal(r.status, 200, String(r.data));
  assert.match(r.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
  return { text: r.data as string, samples: parsePromText(r.data as string) };
}
const value = (samples: Sample[], name: string, labels: Record<string, string> = {}) =>
  samples.filter((x) => x.name === name && Object.entries(labels).every(([k, v]) => x.labels[k] === v)).map((x) => x.value);

test('authorization: session, token with scope system, full-access or read-only (header or ?token=); 401 without, 403 with another scope; ?token= only on /metrics', async () => {
  assert.equal((await s.req('/metrics')).status, 401);
  const anon = await s.req<Refusal>('/metrics', { headers: { accept: 'application/json' } });
  assert.equal(anon.data.ok, false);
  assert.equal((await s.req('/metrics', { headers: bearer('gth_' + 'y'.repeat(43)) })).status, 401);
  for (const sc of ['peers', 'routes', 'logs']) {
    const r = await s.req<Refusal>('/metrics', { headers: bearer(tok[sc]) });
    assert.equal(r.status, 403, `scope ${sc}: ${r.status}`);
    assert.equal(r.data.ok, false);
    const q = await s.req(`/metrics?token=${encodeURIComponent(tok[sc])}`);
    assert.equal(q.status, 403, `?token= with scope ${sc}: ${q.status}`);
  }
  for (const t of [tok.system, tok['read-only'], full]) {
    assert.equal((await s.req('/metrics', { headers: bearer(t) })).status, 200);
    assert.equal((await s.req('/metrics', { headers: { 'x-api-token': t } })).status, 200);
    assert.equal((await s.req(`/metrics?token=${encodeURIComponent(t)}`)).status, 200);
  }
  assert.equal((await s.req(`/metrics?token=${'gth_' + 'z'.repeat(43)}`)).status, 401);
  // two token parameters: no token at all
  assert.equal((await s.req(`/metrics?token=${tok.system}&token=${tok.system}`)).status, 401);
  const session = await login(s);
  assert.equal((await s.req('/metrics', { headers: { cookie: session.cookie } })).status, 200);
  // the query parameter is not a credential anywhere else
  assert.equal((await s.req(`/api/v1/peers?token=${encodeURIComponent(full)}`)).status, 401);
  assert.equal((await s.req(`/api/v1/system/resources?token=${encodeURIComponent(full)}`)).status, 401);
  // the /api/v1 alias does not exist for it
  assert.equal((await s.req('/api/v1/metrics', { headers: bearer(full) })).status, 404);
  // an Accept that excludes text/plain
  assert.equal((await s.req('/metrics', { headers: { ...bearer(full), accept: 'application/json' } })).status, 406);
  // no token given in a query parameter is in any log line
  const all = logged.join('');
  for (const t of [tok.system, tok['read-only'], full, ...['peers', 'routes', 'logs'].map((sc) => tok[sc])]) {
    assert.ok(!all.includes(t), 'a token reached the log');
    assert.ok(!all.includes(t.slice(4, 24)), 'a part of a token reached the log');
  }
});

test('licence feature prometheus_metrics off: 403 {ok:false, error, feature}, with a valid token too', async () => {
  off.add('prometheus_metrics');
  try {
    const r = await s.req<Refusal>('/metrics', { headers: { ...bearer(full), accept: 'application/json' } });
    assert.equal(r.status, 403);
    assert.equal(r.data.feature, 'prometheus_metrics');
    assert.equal((await s.req(`/metrics?token=${encodeURIComponent(tok.system)}`)).status, 403);
  } finally {
    off.clear();
  }
  assert.equal((await s.req('/metrics', { headers: bearer(full) })).status, 200);
});

test('series after activity: peers total/online, per-peer bytes and handshake age, routes by type and state, breakers, route-auth outcomes, webhook deliveries, process metrics', async () => {
  const mk = async (name: string) => {
    const r = await api('/peers', 'POST', { name });
    assert.equal(r.status, 201, JSON.stringify(r.data));
    return r.data.peer.id as number;
  };
  const a = await mk('alpha');
  const b = await mk("beta (o'brien)");
  await mk('gamma');
  const now = s.deps.clock();
  // what the WireGuard poller writes after a handshake and traffic (the real tunnel: e2e test)
  await s.deps.db.models.Peer.update({ latest_handshake: now - 30_000, total_rx: 1234, total_tx: 5678 }, { where: { id: a } });
  await s.deps.db.models.Peer.update({ latest_handshake: now - 600_000, total_rx: 10, total_tx: 20 }, { where: { id: b } });

  const r1 = await api('/routes', 'POST', { domain: 'one.example.com', peer_id: a, target_port: 8080 });
  assert.equal(r1.status, 201, JSON.stringify(r1.data));
  const r2 = await api('/routes', 'POST', { domain: 'two.example.com', peer_id: a, target_port: 8081, circuit_breaker_enabled: true });
  assert.equal(r2.status, 201, JSON.stringify(r2.data));
  const r3 = await api('/routes', 'POST', {
    domain: 'ssh.example.com',
    route_type: 'l4',
    l4_protocol: 'tcp',
    l4_listen_port: 2222,
    peer_id: a,
    target_port: 22,
  });
  assert.equal(r3.status, 201, JSON.stringify(r3.data));
  assert.equal((await api(`/routes/${r1.data.route.id}/toggle`, 'PUT', {})).status, 200);
  await s.deps.db.models.Route.update({ cb_failure_count: 5, cb_opened_at: now }, { where: { id: r2.data.route.id } });

  // route auth on route 2, then Caddy's forward-auth subrequests: not signed in, a wrong method
  const ra = await api(`/routes/${r2.data.route.id}/auth`, 'POST', {
    method: 'email_password',
    email: 'a@b.test',
    password: 'secret-pass-1',
    session_max_age: 86_400_000,
  });
  assert.equal(ra.status, 200, JSON.stringify(ra.data));
  const before = (await scrape()).samples;
  const loginRequired0 = value(before, 'gatehouse_route_auth_verify_total', { outcome: 'login_required' })[0];
  const notAllowed0 = value(before, 'gatehouse_route_auth_verify_total', { outcome: 'method_not_allowed' })[0];
  for (let i = 0; i < 3; i++) {
    const v = await rawRequest(s.port, 'GET', '/route-auth/verify', {
      'x-route-domain': 'two.example.com',
      'x-forwarded-uri': '/x',
      'x-forwarded-proto': 'https',
    });
    assert.equal(v.status, 302);
  }
  assert.equal((await rawRequest(s.port, 'POST', '/route-auth/verify', { 'x-route-domain': 'two.example.com' })).status, 405);

  const { text, samples } = await scrape();
  assert.deepEqual(value(samples, 'gatehouse_peers'), [3]);
  assert.deepEqual(value(samples, 'gatehouse_peers_online'), [1]);
  assert.deepEqual(value(samples, 'gatehouse_peer_online', { peer: 'alpha' }), [1]);
  assert.deepEqual(value(samples, 'gatehouse_peer_online', { peer: "beta (o'brien)" }), [0]);
  assert.deepEqual(value(samples, 'gatehouse_peer_receive_bytes_total', { peer_id: String(a) }), [1234]);
  assert.deepEqual(value(samples, 'gatehouse_peer_transmit_bytes_total', { peer_id: String(a) }), [5678]);
  const age = value(samples, 'gatehouse_peer_last_handshake_age_seconds', { peer_id: String(a) })[0];
  assert.ok(age >= 30 && age < 60, `handshake age ${age}`);
  assert.deepEqual(value(samples, 'gatehouse_peer_last_handshake_age_seconds', { peer: 'gamma' }), [], 'no handshake: no age');
  assert.deepEqual(value(samples, 'gatehouse_routes', { type: 'http', state: 'enabled' }), [1]);
  assert.deepEqual(value(samples, 'gatehouse_routes', { type: 'http', state: 'disabled' }), [1]);
  assert.deepEqual(value(samples, 'gatehouse_routes', { type: 'l4', state: 'enabled' }), [1]);
  assert.deepEqual(value(samples, 'gatehouse_circuit_breaker_open', { domain: 'two.example.com' }), [1]);
  assert.deepEqual(value(samples, 'gatehouse_circuit_breaker_failures', { route_id: String(r2.data.route.id) }), [5]);
  assert.equal(value(samples, 'gatehouse_route_auth_verify_total', { outcome: 'login_required' })[0], loginRequired0 + 3);
  assert.equal(value(samples, 'gatehouse_route_auth_verify_total', { outcome: 'method_not_allowed' })[0], notAllowed0 + 1);
  assert.match(text, /^# TYPE gatehouse_route_auth_verify_total counter$/m);
  assert.match(text, /^# TYPE gatehouse_peer_receive_bytes_total counter$/m);
  assert.match(text, /^# TYPE gatehouse_proxy_apply_duration_seconds histogram$/m);
  // no Caddy and no tunnel managed by this server: those series are absent, not zero
  assert.deepEqual(value(samples, 'gatehouse_caddy_metrics_up'), []);
  assert.deepEqual(value(samples, 'gatehouse_wireguard_up'), []);
  // prom-client's process metrics
  assert.ok(value(samples, 'process_resident_memory_bytes')[0] > 0);
  assert.ok(value(samples, 'nodejs_heap_size_total_bytes')[0] > 0);

  // the webhook delivery log by status (rows as the webhook queue writes them)
  assert.deepEqual(value(samples, 'gatehouse_webhook_deliveries').length, 3);
  const { Webhook, WebhookDelivery } = s.deps.db.models;
  const hook = await Webhook.create({
    name: 'm',
    url: 'http://127.0.0.1:9/x',
    events: '["peer_created"]',
    enabled: true,
    secret_enc: 'x',
    retry_count: 3,
    created_at: now,
    updated_at: now,
  });
  const delivery = (status: DeliveryStatus, i: number) => ({
    webhook_id: hook.get('id') as number,
    uid: `u${i}`,
    event: 'peer_created',
    body: '{}',
    status,
    attempts: 1,
    max_attempts: 3,
    created_at: now,
    updated_at: now,
  });
  await WebhookDelivery.bulkCreate((['pending', 'delivered', 'delivered', 'failed', 'delivered'] as const).map(delivery));
  const hooks = (await scrape()).samples;
  assert.deepEqual(value(hooks, 'gatehouse_webhook_deliveries', { status: 'pending' }), [
    1 + value(samples, 'gatehouse_webhook_deliveries', { status: 'pending' })[0],
  ]);
  assert.deepEqual(value(hooks, 'gatehouse_webhook_deliveries', { status: 'delivered' }), [
    3 + value(samples, 'gatehouse_webhook_deliveries', { status: 'delivered' })[0],
  ]);
  assert.deepEqual(value(hooks, 'gatehouse_webhook_deliveries', { status: 'failed' }), [
    1 + value(samples, 'gatehouse_webhook_deliveries', { status: 'failed' })[0],
  ]);

  // a deleted peer disappears from the per-peer series
  assert.equal((await api(`/peers/${b}`, 'DELETE')).status, 200);
  const later = (await scrape()).samples;
  assert.deepEqual(value(later, 'gatehouse_peers'), [2]);
  assert.deepEqual(value(later, 'gatehouse_peer_online', { peer_id: String(b) }), []);
});

test("Caddy samples fold into per-route series: hosts mapped to routes (with a port, wildcards too), _other and unknown hosts left out, only the host map's observations, summed over server and method", () => {
  const text = [
    '# TYPE caddy_http_requests_total counter',
    'caddy_http_requests_total{handler="gatehouse_hostroute",host="one.example.com",server="gatehouse_http"} 3',
    'caddy_http_requests_total{handler="gatehouse_hostroute",host="one.example.com:8443",server="gatehouse_https"} 4',
    'caddy_http_requests_total{handler="gatehouse_hostroute",host="a.apps.example.com",server="gatehouse_https"} 2',
    'caddy_http_requests_total{handler="gatehouse_hostroute",host="_other",server="gatehouse_http"} 9',
    'caddy_http_requests_total{handler="reverse_proxy",host="one.example.com",server="gatehouse_http"} 3',
    'caddy_http_requests_total{handler="gatehouse_hostroute",host="admin.example.com",server="gatehouse_https"} 9',
    'caddy_http_request_duration_seconds_bucket{code="200",handler="gatehouse_hostroute",host="one.example.com",method="GET",server="gatehouse_http",le="0.1"} 2',
    'caddy_http_request_duration_seconds_bucket{code="200",handler="gatehouse_hostroute",host="one.example.com",method="POST",server="gatehouse_http",le="0.1"} 1',
    'caddy_http_request_duration_seconds_bucket{code="200",handler="gatehouse_hostroute",host="one.example.com",method="GET",server="gatehouse_http",le="+Inf"} 3',
    'caddy_http_request_duration_seconds_bucket{code="200",handler="gatehouse_hostroute",host="one.example.com",method="POST",server="gatehouse_http",le="+Inf"} 1',
    'caddy_http_request_duration_seconds_sum{code="200",handler="gatehouse_hostroute",host="one.example.com",method="GET",server="gatehouse_http"} 0.25',
    'caddy_http_request_duration_seconds_count{code="200",handler="gatehouse_hostroute",host="one.example.com",method="GET",server="gatehouse_http"} 3',
    'caddy_http_request_duration_seconds_count{code="200",handler="gatehouse_hostroute",host="one.example.com",method="POST",server="gatehouse_http"} 1',
    'caddy_http_request_duration_seconds_count{code="502",handler="gatehouse_hostroute",host="one.example.com",method="GET",server="gatehouse_http"} 1 1700000000000',
  ].join('\n');
  const byDomain = new Map([
    ['one.example.com', { id: 1, domain: 'one.example.com' }],
    ['*.apps.example.com', { id: 7, domain: '*.apps.example.com' }],
  ]);
  const { requests, duration } = routeSeriesFromCaddy(parsePromText(text), byDomain);
  assert.deepEqual(requests, [
    { labels: { route_id: 1, domain: 'one.example.com' }, value: 7 },
    { labels: { route_id: 7, domain: '*.apps.example.com' }, value: 2 },
  ]);
  assert.deepEqual(
    duration.map((d) => [d.metricName, d.labels.code, d.labels.le, d.value]),
    [
      ['gatehouse_route_request_duration_seconds_bucket', '200', '0.1', 3],
      ['gatehouse_route_request_duration_seconds_bucket', '200', '+Inf', 4],
      ['gatehouse_route_request_duration_seconds_sum', '200', undefined, 0.25],
      ['gatehouse_route_request_duration_seconds_count', '200', undefined, 4],
      ['gatehouse_route_request_duration_seconds_count', '502', undefined, 1],
    ],
  );
  // escaped label values and malformed lines
  const odd = parsePromText('m{a="x\\"y\\\\z",b="n\\nl"} 1\nbroken{a="x" 2\nm 3 123\nm{} NaN\n');
  assert.deepEqual(odd, [
    { name: 'm', labels: { a: 'x"y\\z', b: 'n\nl' }, value: 1 },
    { name: 'm', labels: {}, value: 3 },
  ]);
});

test("the host map's own samples (gatehouse_hostroute_*, what the renderer turns on) fold into the same per-route series: by host key (a wildcard key as configured), summed over servers; _other and the admin domain left out", () => {
  const text = [
    '# TYPE gatehouse_hostroute_requests_total counter',
    'gatehouse_hostroute_requests_total{host="one.example.com",server="gatehouse_http"} 3',
    'gatehouse_hostroute_requests_total{host="one.example.com",server="gatehouse_https"} 4',
    'gatehouse_hostroute_requests_total{host="*.apps.example.com",server="gatehouse_https"} 2',
    'gatehouse_hostroute_requests_total{host="_other",server="gatehouse_http"} 9',
    'gatehouse_hostroute_requests_total{host="admin.example.com",server="gatehouse_https"} 9',
    '# TYPE gatehouse_hostroute_request_duration_seconds histogram',
    'gatehouse_hostroute_request_duration_seconds_bucket{code="200",host="one.example.com",server="gatehouse_http",le="0.1"} 2',
    'gatehouse_hostroute_request_duration_seconds_bucket{code="200",host="one.example.com",server="gatehouse_https",le="0.1"} 1',
    'gatehouse_hostroute_request_duration_seconds_bucket{code="200",host="one.example.com",server="gatehouse_http",le="+Inf"} 3',
    'gatehouse_hostroute_request_duration_seconds_bucket{code="200",host="one.example.com",server="gatehouse_https",le="+Inf"} 1',
    'gatehouse_hostroute_request_duration_seconds_sum{code="200",host="one.example.com",server="gatehouse_http"} 0.25',
    'gatehouse_hostroute_request_duration_seconds_count{code="200",host="one.example.com",server="gatehouse_http"} 3',
    'gatehouse_hostroute_request_duration_seconds_count{code="200",host="one.example.com",server="gatehouse_https"} 1',
    'gatehouse_hostroute_request_duration_seconds_count{code="101",host="*.apps.example.com",server="gatehouse_https"} 2',
    'gatehouse_hostroute_request_duration_seconds_count{code="404",host="_other",server="gatehouse_http"} 9',
  ].join('\n');
  const byDomain = new Map([
    ['one.example.com', { id: 1, domain: 'one.example.com' }],
    ['*.apps.example.com', { id: 7, domain: '*.apps.example.com' }],
  ]);
  const { requests, duration } = routeSeriesFromCaddy(parsePromText(text), byDomain);
  assert.deepEqual(requests, [
    { labels: { route_id: 1, domain: 'one.example.com' }, value: 7 },
    { labels: { route_id: 7, domain: '*.apps.example.com' }, value: 2 },
  ]);
  assert.deepEqual(
    duration.map((d) => [d.metricName, d.labels.route_id, d.labels.code, d.labels.le, d.value]),
    [
      ['gatehouse_route_request_duration_seconds_bucket', 1, '200', '0.1', 3],
      ['gatehouse_route_request_duration_seconds_bucket', 1, '200', '+Inf', 4],
      ['gatehouse_route_request_duration_seconds_sum', 1, '200', undefined, 0.25],
      ['gatehouse_route_request_duration_seconds_count', 1, '200', undefined, 4],
      ['gatehouse_route_request_duration_seconds_count', 7, '101', undefined, 2],
    ],
  );
});
