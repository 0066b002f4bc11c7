// Route resilience, sidecar side, no Caddy: the renderer's retry JSON is RETRY.md's
// character for character; bot_blocker_config / mirror_targets validation; circuit-breaker reports
// (loopback + secret, stored without a proxy reload) and reset (400 when not enabled, re-render
// with reset_at). Golden files for the handler shapes: proxy-render.test.ts.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startTestServer, apiToken, bearer, type TestServer, apiCall } from './lib/server.js';
import type { ProxyService } from '../src/proxy/service.js';
import { breakerSecretPath, retryRoutes } from '../src/proxy/fragments/resilience.js';
import { BreakerMemory } from '../src/proxy/breaker.js';
import { blankRoute, type Route } from '../src/routes/model.js';
import type { ActivityEntry, Route as ApiRoute } from './lib/protocol.js';
import { at, hostMap, objAt, objsAt } from '../../test/lib/json.js';
import type { CaddyHandler } from '../src/proxy/caddy-json.js';

let s: TestServer;
let auth: Record<string, string>;
let peer: number;
const proxy = () => s.deps.proxy as ProxyService;
const call = apiCall(
  () => s,
  () => auth,
);
const secret = () => fs.readFileSync(breakerSecretPath(s.dataDir), 'utf8').trim();
const report = (body: unknown, headers: Record<string, string> = { 'x-gatehouse-secret': secret() }) =>
  s.req('/internal/circuit-breaker', { method: 'POST', headers, json: body });

before(async () => {
  s = await startTestServer({ GATEHOUSE_RATE_LIMIT_ADMIN: '100000' });
  auth = bearer(await apiToken(s));
  const p = await call('/peers', 'POST', { name: 'backend' });
  assert.equal(p.status, 201, JSON.stringify(p.data));
  peer = p.data.peer.id;
});
after(async () => s.close());

test('retry JSON is the one of caddy-modules/RETRY.md', () => {
  const md = fs.readFileSync(path.resolve(import.meta.dirname, '..', '..', 'caddy-modules', 'RETRY.md'), 'utf8');
  const doc = JSON.parse(/```json\n([\s\S]*?)```/.exec(md)![1]);
  const r: Route = { ...blankRoute(0), id: 1, retry_enabled: true, retry_count: 2, retry_status_codes: '502,503' };
  assert.deepEqual(retryRoutes({ handler: 'reverse_proxy', upstreams: [{ dial: '10.8.0.2:8080' }] }, r), doc);
  // Status list: trimmed, 100-599, de-duplicated, in both copies; empty → only the transport-error sets.
  /** A retry route as retryRoutes renders it (the parts read here). */
  type RetryRoute = { handle: { load_balancing: { retry_match: { expression: string }[] } }[] };
  const copies = (x: unknown) => (x as RetryRoute[]).map((rt) => rt.handle[0].load_balancing.retry_match.map((m) => m.expression));
  const [lean2, buffering2] = copies(retryRoutes({ handler: 'reverse_proxy' }, { ...r, retry_status_codes: ' 504, 502,504,600,abc' }));
  assert.equal(lean2[0], '{http.reverse_proxy.status_code} in [504, 502]');
  assert.match(buffering2[0], /^\{http\.reverse_proxy\.status_code\} in \[504, 502\] && /);
  assert.deepEqual(
    copies(retryRoutes({ handler: 'reverse_proxy' }, { ...r, retry_status_codes: '' })).map((c: string[]) => c.length),
    [1, 1],
  );
  // Everything else of the reverse_proxy (transport, handle_response...) is in both copies.
  const full = {
    handler: 'reverse_proxy',
    upstreams: [{ dial: '10.8.0.2:443' }],
    transport: { protocol: 'http', tls: { insecure_skip_verify: true } },
    handle_response: [{ match: { status_code: [502] } }],
  };
  for (const rt of retryRoutes(full, r) as { handle: CaddyHandler[] }[]) {
    const { load_balancing: _lb, request_buffers: _rb, ...rest } = rt.handle[0];
    assert.deepEqual(rest, full);
  }
  assert.equal(retryRoutes({ handler: 'reverse_proxy' }, { ...r, retry_enabled: false }), null);
  assert.equal(retryRoutes({ handler: 'reverse_proxy' }, { ...r, retry_count: 0 }), null);
});

test('the report secret file exists with mode 0600', () => {
  const st = fs.statSync(breakerSecretPath(s.dataDir));
  assert.equal(st.mode & 0o777, 0o600);
  assert.ok(secret().length >= 32);
});

test('bot_blocker_config and mirror_targets: documented shapes stored normalized; bad input 400 with fields, nothing written', async () => {
  const ok = await call('/routes', 'POST', {
    domain: 'shapes.example.com',
    peer_id: peer,
    target_port: 80,
    bot_blocker_enabled: true,
    bot_blocker_mode: 'tarpit',
    bot_blocker_config: { custom_user_agents: ['^curl/', '^curl/'], allow_paths: ['/.well-known/'], tarpit_delay: '5s' },
    mirror_enabled: true,
    mirror_targets: [{ url: 'HTTP://Mirror.Example.com:8080/' }, { peer_id: peer, port: 9000 }, '10.8.0.9:81'],
  });
  assert.equal(ok.status, 201, JSON.stringify(ok.data));
  assert.deepEqual(ok.data.route.bot_blocker_config, { custom_user_agents: ['^curl/'], allow_paths: ['/.well-known/'], tarpit_delay: '5s' });
  assert.deepEqual(ok.data.route.mirror_targets, [{ url: 'http://mirror.example.com:8080' }, { peer_id: peer, port: 9000 }, { url: 'http://10.8.0.9:81' }]);
  const count = await s.deps.db.models.Route.count();
  const loads = proxy().loads;
  const bad: [Record<string, unknown>, string][] = [
    [{ bot_blocker_mode: 'challenge' }, 'bot_blocker_mode'],
    [{ bot_blocker_config: { strikes: 3 } }, 'bot_blocker_config'],
    [{ bot_blocker_config: { custom_user_agents: ['ok', ''] } }, 'bot_blocker_config.custom_user_agents.1'],
    [{ bot_blocker_config: { tarpit_delay: '61s' } }, 'bot_blocker_config.tarpit_delay'],
    [{ bot_blocker_config: { categories: ['search'] } }, 'bot_blocker_config.categories.0'],
    [{ mirror_targets: [{ url: 'https://mirror.example.com/path' }] }, 'mirror_targets.0'],
    [{ mirror_targets: [{ url: 'ftp://mirror.example.com' }] }, 'mirror_targets.0'],
    [{ mirror_targets: [{ peer_id: peer, port: 0 }] }, 'mirror_targets.0'],
    [{ mirror_targets: ['not a target'] }, 'mirror_targets.0'],
    [{ mirror_enabled: true, mirror_targets: [{ peer_id: 987654, port: 80 }] }, 'mirror_targets'],
  ];
  for (const [extra, field] of bad) {
    const r = await call('/routes', 'POST', { domain: 'bad-shape.example.com', peer_id: peer, target_port: 80, ...extra });
    assert.ok([400, 422].includes(r.status), `${JSON.stringify(extra)}: ${r.status} ${JSON.stringify(r.data)}`);
    assert.ok(
      r.data.fields && Object.keys(r.data.fields).some((k) => k === field || k.startsWith(field)),
      `${JSON.stringify(extra)}: ${JSON.stringify(r.data.fields)}`,
    );
  }
  assert.equal(await s.deps.db.models.Route.count(), count);
  assert.equal(proxy().loads, loads);
});

test('rendered chain order: bot blocker, encode, mirror, circuit breaker, then the two retrying reverse_proxy routes', async () => {
  const r = await call('/routes', 'POST', {
    domain: 'chain.example.com',
    peer_id: peer,
    target_port: 80,
    bot_blocker_enabled: true,
    compress_enabled: true,
    mirror_enabled: true,
    mirror_targets: [{ url: 'http://127.0.0.1:9' }],
    circuit_breaker_enabled: true,
    retry_enabled: true,
  });
  assert.equal(r.status, 201, JSON.stringify(r.data));
  const routes = objsAt(hostMap(await proxy().render()), 'chain.example.com', 'routes');
  assert.equal(routes.length, 3);
  const chain = objsAt(routes[0], 'handle');
  assert.equal(routes[0].match, undefined);
  assert.deepEqual(
    chain.map((h) => h.handler),
    ['gatehouse_botblock', 'encode', 'gatehouse_mirror', 'gatehouse_circuit_breaker'],
  );
  const cb = chain[3];
  assert.equal(cb.route_id, String(r.data.route.id));
  assert.equal(cb.threshold, 5);
  assert.equal(cb.timeout, 30);
  assert.equal(cb.report_url, `http://127.0.0.1:${s.deps.config.port}/internal/circuit-breaker`);
  assert.equal(cb.report_secret, `{file.${breakerSecretPath(s.dataDir)}}`);
  assert.deepEqual(routes[1].match, [{ method: ['GET', 'HEAD', 'OPTIONS', 'DELETE'], gatehouse_bodiless: {} }]);
  assert.equal(routes[2].match, undefined);
  assert.deepEqual(
    routes
      .slice(1)
      .map((rt) => [
        objsAt(rt, 'handle').length,
        at(rt, 'handle', 0, 'handler'),
        objAt(rt, 'handle', 0, 'load_balancing').retries,
        at(rt, 'handle', 0, 'request_buffers'),
      ]),
    [
      [1, 'reverse_proxy', 3, undefined],
      [1, 'reverse_proxy', 3, 65536],
    ],
  );
});

test('circuit-breaker reports: 404 without the secret, stored with it, no proxy reload, visible in GET /routes/:id', async () => {
  const c = await call('/routes', 'POST', {
    domain: 'cb.example.com',
    peer_id: peer,
    target_port: 80,
    circuit_breaker_enabled: true,
    circuit_breaker_threshold: 3,
  });
  assert.equal(c.status, 201, JSON.stringify(c.data));
  const id = c.data.route.id;
  const before = JSON.stringify(await proxy().render());
  const loads = proxy().loads;
  const openedAt = Date.now();
  const body = { route_id: String(id), state: 'open', failure_count: 3, opened_at: openedAt, at: openedAt };
  assert.equal((await report(body, {})).status, 404);
  assert.equal((await report(body, { 'x-gatehouse-secret': 'x'.repeat(43) })).status, 404);
  assert.equal((await report(body, { 'x-gatehouse-secret': secret(), ...auth })).status, 200);
  let g = await call(`/routes/${id}`);
  assert.equal(g.data.route.cb_failure_count, 3);
  assert.equal(g.data.route.cb_opened_at, openedAt);
  // An older report (out of order) is ignored; a bad report is 400.
  assert.equal((await report({ ...body, state: 'closed', failure_count: 0, opened_at: 0, at: openedAt - 1 })).data.applied, false);
  assert.equal((await report({ ...body, state: 'weird' })).status, 400);
  g = await call(`/routes/${id}`);
  assert.equal(g.data.route.cb_failure_count, 3);
  // No reload, and the rendering does not change either (the reconcile loop would reload otherwise).
  assert.equal(proxy().loads, loads);
  assert.equal(JSON.stringify(await proxy().render()), before);
  const events = async () =>
    (await call('/logs/activity?source=routes&limit=50')).data.entries
      .filter((e: ActivityEntry) => e.details?.route_id === id && String(e.event_type).startsWith('circuit_breaker_'))
      .map((e: ActivityEntry) => e.event_type);
  assert.deepEqual(await events(), ['circuit_breaker_open']);
  // half-open, then a successful trial closes it: one circuit_breaker_closed event with the open time
  assert.equal((await report({ ...body, state: 'half_open', at: openedAt + 30_000 })).data.applied, true);
  assert.equal((await report({ ...body, state: 'closed', failure_count: 0, opened_at: 0, at: openedAt + 31_000 })).data.applied, true);
  assert.equal((await call(`/routes/${id}`)).data.route.cb_opened_at, null);
  assert.deepEqual(await events(), ['circuit_breaker_closed', 'circuit_breaker_open']);
  const closed = (await call('/logs/activity?source=routes&limit=50')).data.entries.find((e: ActivityEntry) => e.event_type === 'circuit_breaker_closed');
  assert.equal(closed!.details!.open_seconds, 31);
  // a closed report while already closed is no new event
  assert.equal((await report({ ...body, state: 'closed', failure_count: 0, opened_at: 0, at: openedAt + 32_000 })).data.applied, true);
  assert.deepEqual(await events(), ['circuit_breaker_closed', 'circuit_breaker_open']);
  // open again (as before) for the seed check below
  assert.equal((await report({ ...body, at: openedAt + 33_000 })).data.applied, true);
  assert.equal(proxy().loads, loads);
  // After Caddy restarts empty, the stored state is the seed.
  proxy().invalidate();
  const cb = objsAt(objsAt(hostMap(await proxy().render()), 'cb.example.com', 'routes').at(-1), 'handle').find(
    (h) => h.handler === 'gatehouse_circuit_breaker',
  )!;
  assert.equal(cb.failure_count, 3);
  assert.equal(cb.opened_at, openedAt);
  await proxy().apply({ force: true });
});

test('circuit-breaker reset: 400 when not enabled (nothing changed), otherwise zeroed and re-rendered with reset_at', async () => {
  const plain = await call('/routes', 'POST', { domain: 'nocb.example.com', peer_id: peer, target_port: 80 });
  const loads0 = proxy().loads;
  const r400 = await call(`/routes/${plain.data.route.id}/circuit-breaker/reset`, 'POST', {});
  assert.equal(r400.status, 409, 'the breaker is off on this route: a state, not a bad request');
  assert.ok(r400.data.fields!.circuit_breaker_enabled);
  assert.equal(proxy().loads, loads0);
  assert.equal((await call('/routes/987654/circuit-breaker/reset', 'POST', {})).status, 404);

  const id = (await call('/routes?limit=100')).data.routes.find((x: ApiRoute) => x.domain === 'cb.example.com')!.id;
  const t0 = Date.now();
  const res = await call(`/routes/${id}/circuit-breaker/reset`, 'POST', {});
  assert.equal(res.status, 200, JSON.stringify(res.data));
  assert.equal(proxy().loads, loads0 + 1);
  const g = await call(`/routes/${id}`);
  assert.equal(g.data.route.cb_failure_count, 0);
  assert.equal(g.data.route.cb_opened_at, null);
  const cb = objsAt(objsAt(hostMap(await proxy().render()), 'cb.example.com', 'routes').at(-1), 'handle').find(
    (h) => h.handler === 'gatehouse_circuit_breaker',
  )!;
  assert.equal(cb.failure_count, 0);
  assert.equal(cb.opened_at, 0);
  const resetAt = Number(cb.reset_at);
  assert.ok(resetAt >= t0 && resetAt <= Date.now());
});

test('BreakerMemory: pins seeds until Caddy is fresh or the breaker comes back', () => {
  const m = new BreakerMemory();
  const r: Route = { ...blankRoute(0), id: 7, circuit_breaker_enabled: true, cb_failure_count: 1, cb_opened_at: null };
  assert.deepEqual(m.seeds([r], false).get(7), { failure_count: 1, opened_at: 0, reset_at: 0 });
  assert.deepEqual(m.seeds([{ ...r, cb_failure_count: 4 }], false).get(7), { failure_count: 1, opened_at: 0, reset_at: 0 });
  assert.deepEqual(m.seeds([{ ...r, cb_failure_count: 4 }], true).get(7), { failure_count: 4, opened_at: 0, reset_at: 0 });
  m.seeds([], false);
  assert.deepEqual(m.seeds([{ ...r, cb_failure_count: 2 }], false).get(7), { failure_count: 2, opened_at: 0, reset_at: 0 });
  m.reset(7, 123);
  assert.deepEqual(m.seeds([{ ...r, cb_failure_count: 2 }], false).get(7), { failure_count: 0, opened_at: 0, reset_at: 123 });
});
