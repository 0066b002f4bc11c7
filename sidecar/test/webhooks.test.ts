// Webhooks: CRUD, toggle, test, bad input, the secret sealed at rest, and deliveries to a real HTTP
// receiver that verifies every signature, with the retries at the documented times (a manual clock
// drives them), the delivery log, and the queue surviving a restart.
import fs from 'node:fs';
import path from 'node:path';
import { after, before, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import { startTestServer, login, apiToken, bearer, type TestServer, apiInit } from './lib/server.js';
import { startReceiver, type Receiver } from './lib/webhook-receiver.js';
import { manualClock } from '../src/util/clock.js';
import { WEBHOOK_EVENTS } from '../src/webhooks/events.js';
import { retryDelay } from '../src/webhooks/queue.js';
import { send, sign, verifySignature } from '../src/webhooks/sender.js';
import { addressProblem } from '../src/util/outbound.js';
import { waitFor } from '../../test/lib/wait.js';
import type { Row } from './lib/rows.js';
import { jsonBodySchema, resolvedSchema } from './lib/openapi.js';

const SECRET = 'receiver-secret-0123456789';
const clock = manualClock(Date.UTC(2026, 5, 1, 12));
let s: TestServer;
let rx: Receiver;
let h: Record<string, string>;
const api = apiInit(
  () => s,
  () => h,
);
const queue = () => s.deps.webhookQueue;
/** Moves the manual clock, letting every delivery run the timers start finish before time moves on. */
const advance = (ms: number) => clock.advanceAsync(ms, () => queue().idle());
const failLogin = (username: string) =>
  s.req('/login', { method: 'POST', json: { username, password: 'wrong-password' }, headers: { accept: 'application/json' } });

before(async () => {
  s = await startTestServer(
    {
      GATEHOUSE_WEBHOOK_ALLOW_PRIVATE: 'true',
      GATEHOUSE_WEBHOOK_RETRY_BASE: '10',
      GATEHOUSE_WEBHOOK_TIMEOUT: '2',
      GATEHOUSE_RATE_LIMIT_LOGIN: '100000',
      GATEHOUSE_RATE_LIMIT_ADMIN: '100000',
    },
    { clock, timers: clock.timers },
  );
  h = bearer(await apiToken(s, ['webhooks']));
  queue().start();
  rx = await startReceiver(SECRET, { clock });
});
after(async () => {
  await queue().stop();
  await rx.close();
  await s.close();
});
beforeEach(async () => {
  await queue().idle();
  for (const w of (await api('/webhooks')).data.webhooks) await api(`/webhooks/${w.id}`, { method: 'DELETE' });
  rx.got.length = 0;
  rx.script = [];
  rx.status = 200;
});

const create = async (over: Record<string, unknown> = {}) => {
  const r = await api('/webhooks', { method: 'POST', json: { name: 'ops', url: rx.url, events: ['login_failed'], enabled: true, secret: SECRET, ...over } });
  assert.equal(r.status, 201, JSON.stringify(r.data));
  return r.data.webhook;
};

test('create, list, get, update, toggle and delete; the secret is sealed at rest and never shown', async () => {
  const w = await create({ retry_count: 2, events: ['peer_online', 'login_failed', 'peer_online'] });
  assert.deepEqual(w.events, ['peer_online', 'login_failed']);
  assert.equal(w.retry_count, 2);
  assert.equal(w.enabled, true);
  assert.equal(w.secret_set, true);
  assert.ok(!('secret' in w));
  assert.deepEqual(w.deliveries, { pending: 0, delivered: 0, failed: 0 });
  assert.ok(!JSON.stringify((await api('/webhooks')).data).includes(SECRET));
  const row = ((await s.deps.db.models.Webhook.findByPk(w.id, { raw: true })) as Row<'Webhook'> | null)!;
  assert.ok(!JSON.stringify(row).includes(SECRET), 'no plaintext secret in the row');
  assert.equal(s.deps.crypto.open(row.secret_enc), SECRET);

  assert.equal((await api(`/webhooks/${w.id}`)).data.webhook.name, 'ops');
  const u = await api(`/webhooks/${w.id}`, { method: 'PUT', json: { name: 'ops 2', retry_count: 0 } });
  assert.equal(u.status, 200, JSON.stringify(u.data));
  assert.equal(u.data.webhook.name, 'ops 2');
  assert.equal(u.data.webhook.retry_count, 0);
  const kept = ((await s.deps.db.models.Webhook.findByPk(w.id, { raw: true })) as Row<'Webhook'> | null)!;
  assert.equal(s.deps.crypto.open(kept.secret_enc), SECRET, 'an omitted secret is kept');
  await api(`/webhooks/${w.id}`, { method: 'PUT', json: { secret: 'another-secret-abcdefgh' } });
  const replaced = ((await s.deps.db.models.Webhook.findByPk(w.id, { raw: true })) as Row<'Webhook'> | null)!;
  assert.equal(s.deps.crypto.open(replaced.secret_enc), 'another-secret-abcdefgh');

  const t = await api(`/webhooks/${w.id}/toggle`, { method: 'PUT' });
  assert.equal(t.data.webhook.enabled, false);
  assert.equal((await api(`/webhooks/${w.id}/toggle`, { method: 'PUT' })).data.webhook.enabled, true);

  const listed = (await api('/webhooks/events')).data.events as { name: string; area: string; description: string }[];
  const kinds = listed.map((e) => e.name);
  assert.deepEqual(new Set(kinds), new Set(WEBHOOK_EVENTS), 'every webhook kind, once');
  // grouped by area (each area one run, in the documented order), from the descriptors' area
  const runs = listed.map((e) => e.area).filter((a, i, l) => a !== l[i - 1]);
  assert.deepEqual(runs, ['peers', 'gateways', 'routes', 'monitoring', 'rdp', 'users', 'tokens', 'system']);
  const areaOf = Object.fromEntries(listed.map((e) => [e.name, e.area]));
  assert.deepEqual(
    [areaOf.peer_online, areaOf.gateway_offline, areaOf.route_down, areaOf.login_failed, areaOf.token_created, areaOf.backup_failed],
    ['peers', 'gateways', 'monitoring', 'users', 'tokens', 'system'],
  );
  for (const k of [
    'peer_online',
    'peer_offline',
    'peer_created',
    'peer_deleted',
    'peer_expired',
    'route_created',
    'route_updated',
    'route_deleted',
    'route_down',
    'route_up',
    'circuit_open',
    'circuit_closed',
    'gateway_online',
    'gateway_offline',
    'login_failed',
    'account_locked',
    'backup_completed',
    'backup_failed',
    'licence_changed',
  ]) {
    assert.ok(kinds.includes(k), k);
  }

  const d = await api(`/webhooks/${w.id}`, { method: 'DELETE' });
  assert.equal(d.status, 200);
  assert.equal((await api(`/webhooks/${w.id}`)).status, 404);
  assert.equal((await api(`/webhooks/${w.id}`, { method: 'DELETE' })).status, 404);
  const acts = (await s.req('/api/v1/logs/activity?source=webhooks', { headers: bearer(await apiToken(s, ['logs'])) })).data.entries.map(
    (e: { event_type: string }) => e.event_type,
  );
  for (const k of ['webhook_created', 'webhook_updated', 'webhook_disabled', 'webhook_enabled', 'webhook_deleted'])
    assert.ok(acts.includes(k), `activity ${k}: ${acts}`);
});

test('bad input: 400 with fields, nothing written', async () => {
  const good = { name: 'x', url: rx.url, events: ['login_failed'], enabled: true, secret: SECRET };
  const cases: [Record<string, unknown>, string][] = [
    [{ ...good, name: '' }, 'name'],
    [{ ...good, name: 'a\nb' }, 'name'],
    [{ ...good, url: 'ftp://example.com/x' }, 'url'],
    [{ ...good, url: 'not a url' }, 'url'],
    [{ ...good, url: 'http://user:pw@example.com/' }, 'url'],
    [{ ...good, url: `http://e.com/${'a'.repeat(2100)}` }, 'url'],
    [{ ...good, events: [] }, 'events'],
    [{ ...good, events: ['no_such_event'] }, 'events.0'],
    [{ ...good, events: 'login_failed' }, 'events'],
    [{ ...good, enabled: 'yes' }, 'enabled'],
    [{ ...good, secret: 'short' }, 'secret'],
    [{ ...good, secret: undefined }, 'secret'],
    [{ ...good, retry_count: 11 }, 'retry_count'],
    [{ ...good, retry_count: -1 }, 'retry_count'],
    [{ ...good, retry_count: 1.5 }, 'retry_count'],
    [{ ...good, url: 'http://no-such-host.invalid/x' }, 'url'],
  ];
  for (const [body, field] of cases) {
    const r = await api('/webhooks', { method: 'POST', json: body });
    assert.ok([400, 422].includes(r.status), `${JSON.stringify(body).slice(0, 120)}: ${r.status}`);
    assert.equal(r.data.ok, false);
    assert.ok(r.data.fields?.[field], `fields.${field} in ${JSON.stringify(r.data)}`);
  }
  assert.equal(await s.deps.db.models.Webhook.count(), 0, 'nothing written');
  const w = await create();
  for (const [body, field] of [
    [{ events: [] }, 'events'],
    [{ secret: 'short' }, 'secret'],
    [{ url: 'gopher://x' }, 'url'],
    [{ retry_count: 'many' }, 'retry_count'],
  ] as const) {
    const r = await api(`/webhooks/${w.id}`, { method: 'PUT', json: body });
    assert.equal(r.status, 400);
    assert.ok(r.data.fields?.[field], JSON.stringify(r.data));
  }
  assert.deepEqual((await api(`/webhooks/${w.id}`)).data.webhook.events, ['login_failed'], 'unchanged');
  assert.equal((await api('/webhooks/abc')).status, 400);
  assert.equal((await api(`/webhooks/${w.id}/deliveries?status=lost`)).status, 400);
});

test('an event is delivered signed with the exact body; retries come at base, 2×base, ... after each failure; the log shows it', async () => {
  const w = await create({ retry_count: 3 });
  rx.script = [500, 503, 200];
  const t0 = clock();
  const res = await failLogin('mallory');
  assert.equal(res.status, 401);
  await queue().idle();
  assert.equal(rx.got.length, 1);
  let log = (await api(`/webhooks/${w.id}/deliveries`)).data;
  assert.equal(log.total, 1);
  const d0 = log.deliveries[0];
  assert.equal(d0.status, 'pending');
  assert.equal(d0.attempts, 1);
  assert.equal(d0.response_code, 500);
  assert.equal(d0.last_error, 'HTTP 500');
  assert.deepEqual(d0.last_error_code, { code: 'webhook.delivery.status', params: { status: 500 } });
  assert.equal(d0.next_attempt_at, new Date(t0 + 10_000).toISOString());

  await advance(9_999);
  assert.equal(rx.got.length, 1, 'no retry before 10 s');
  await advance(1);
  assert.equal(rx.got.length, 2, 'first retry at 10 s');
  await advance(19_999);
  assert.equal(rx.got.length, 2, 'no second retry before 10 + 20 s');
  await advance(1);
  assert.equal(rx.got.length, 3);
  assert.deepEqual(
    rx.got.map((g) => g.at - t0),
    [0, 10_000, 30_000],
  );
  assert.deepEqual([retryDelay(10_000, 1), retryDelay(10_000, 2), retryDelay(10_000, 3)], [10_000, 20_000, 40_000]);

  for (const g of rx.got) {
    assert.ok(g.signatureValid, `signature of ${g.body}`);
    assert.equal(g.event, 'login_failed');
    assert.equal(g.delivery, d0.uid);
    assert.equal(g.body, d0.body, 'the exact stored body on every attempt');
  }
  assert.deepEqual(rx.got[0].json, {
    id: d0.uid,
    event: 'login_failed',
    created_at: new Date(t0).toISOString(),
    timestamp: t0,
    data: { username: 'mallory', failures: 1, ip: rx.got[0].json!.data.ip },
  });
  log = (await api(`/webhooks/${w.id}/deliveries`)).data;
  assert.equal(log.deliveries[0].status, 'delivered');
  assert.equal(log.deliveries[0].attempts, 3);
  assert.equal(log.deliveries[0].response_code, 200);
  assert.equal(log.deliveries[0].last_error, null);
  assert.equal(log.deliveries[0].next_attempt_at, null);
  assert.deepEqual((await api(`/webhooks/${w.id}`)).data.webhook.deliveries, { pending: 0, delivered: 1, failed: 0 });
  await advance(3_600_000);
  assert.equal(rx.got.length, 3, 'nothing more after delivery');
});

test('after 1 + retry_count failed attempts the delivery is failed, with an activity row', async () => {
  const w = await create({ retry_count: 1 });
  rx.status = 500;
  await failLogin('eve');
  await queue().idle();
  await advance(10_000);
  assert.equal(rx.got.length, 2);
  await advance(3_600_000);
  assert.equal(rx.got.length, 2, 'no third attempt');
  const d = (await api(`/webhooks/${w.id}/deliveries?status=failed`)).data;
  assert.equal(d.total, 1);
  assert.equal(d.deliveries[0].attempts, 2);
  assert.equal(d.deliveries[0].max_attempts, 2);
  assert.equal(d.deliveries[0].last_error, 'HTTP 500');
  const acts = (await s.req('/api/v1/logs/activity?event_type=webhook_delivery_failed', { headers: bearer(await apiToken(s, ['logs'])) })).data.entries;
  assert.ok(acts.some((a) => a.details!.webhook_id === w.id));
});

test('a receiver that does not answer: the attempt times out, and the request that caused the event is not delayed', async () => {
  const w = await create({ retry_count: 0 });
  rx.status = 'hang';
  const t = performance.now();
  const res = await failLogin('slow');
  const took = performance.now() - t;
  assert.equal(res.status, 401);
  assert.ok(took < 2_000, `login answered in ${took} ms`);
  await queue().idle(); // GATEHOUSE_WEBHOOK_TIMEOUT (2 s) ends the attempt
  const d = (await api(`/webhooks/${w.id}/deliveries`)).data.deliveries[0];
  assert.equal(d.status, 'failed');
  assert.match(d.last_error!, /timed out after 2000 ms/);
  assert.deepEqual(d.last_error_code, { code: 'webhook.delivery.timeout', params: { ms: 2000 } });
});

test('only enabled webhooks subscribed to the kind get a delivery', async () => {
  const on = await create({ name: 'on', events: ['login_failed'] });
  const off = await create({ name: 'off', events: ['login_failed'], enabled: false });
  const other = await create({ name: 'other', events: ['peer_created'] });
  await failLogin('x1');
  await queue().idle();
  assert.equal(rx.got.length, 1);
  assert.equal((await api(`/webhooks/${on.id}/deliveries`)).data.total, 1);
  assert.equal((await api(`/webhooks/${off.id}/deliveries`)).data.total, 0);
  assert.equal((await api(`/webhooks/${other.id}/deliveries`)).data.total, 0);
  // toggled on: it gets the next one
  await api(`/webhooks/${off.id}/toggle`, { method: 'PUT' });
  await failLogin('x2');
  await queue().idle();
  assert.equal((await api(`/webhooks/${off.id}/deliveries`)).data.total, 1);
  assert.equal(rx.got.length, 3);
  assert.ok(rx.got.every((g) => g.signatureValid));
});

test('a webhook written to the table by another writer (a backup restore) gets the next event', async () => {
  await failLogin('before'); // an event while there is no webhook
  await queue().idle();
  const now = clock();
  await s.deps.db.models.Webhook.create({
    name: 'restored',
    url: rx.url,
    events: '["login_failed"]',
    enabled: true,
    secret_enc: s.deps.crypto.seal(SECRET),
    retry_count: 0,
    created_at: now,
    updated_at: now,
  });
  await failLogin('after');
  await queue().idle();
  assert.equal(rx.got.length, 1);
  assert.equal(rx.got[0].json!.data.username, 'after');
  assert.ok(rx.got[0].signatureValid);
});

test('POST /webhooks/:id/test sends a signed webhook_test now and answers with the outcome', async () => {
  const w = await create({ enabled: false });
  const ok = await api(`/webhooks/${w.id}/test`, { method: 'POST' });
  assert.equal(ok.status, 200, JSON.stringify(ok.data));
  assert.equal(ok.data.delivery.status, 'delivered');
  assert.equal(ok.data.delivery.response_code, 200);
  assert.equal(rx.got.length, 1);
  assert.equal(rx.got[0].event, 'webhook_test');
  assert.ok(rx.got[0].signatureValid);
  rx.status = 404;
  const bad = await api(`/webhooks/${w.id}/test`, { method: 'POST' });
  assert.equal(bad.data.delivery.status, 'failed');
  assert.equal(bad.data.delivery.response_code, 404);
  assert.equal((await api(`/webhooks/${w.id}/deliveries`)).data.total, 2);
  assert.equal((await api('/webhooks/987654/test', { method: 'POST' })).status, 404);
});

test('a queued delivery stays in the database across a restart and is sent by the next run', async () => {
  const w = await create({ retry_count: 2 });
  rx.status = 502;
  await failLogin('restart');
  await queue().idle();
  assert.equal(rx.got.length, 1);
  const dataDir = s.dataDir;
  const s2Clock = manualClock(clock() + 10_000);
  await queue().stop();
  // a second server on the same data directory (the first keeps its database open; SQLite WAL allows it)
  const s2 = await startTestServer(
    {
      GATEHOUSE_DATA_DIR: dataDir,
      GATEHOUSE_WEBHOOK_ALLOW_PRIVATE: 'true',
      GATEHOUSE_WEBHOOK_RETRY_BASE: '10',
      ...(s.databaseUrl ? { DATABASE_URL: s.databaseUrl } : {}),
    },
    { clock: s2Clock, timers: s2Clock.timers },
  );
  try {
    rx.status = 200;
    s2.deps.webhookQueue.start();
    await s2.deps.webhookQueue.idle();
    assert.equal(rx.got.length, 2, 'the pending retry was sent at start');
    assert.equal(rx.got[1].delivery, rx.got[0].delivery);
    const row = ((await s2.deps.db.models.WebhookDelivery.findOne({ where: { webhook_id: w.id }, raw: true })) as Row<'WebhookDelivery'> | null)!;
    assert.equal(row.status, 'delivered');
    await s2.deps.webhookQueue.stop();
  } finally {
    await s2.close();
    queue().start();
  }
});

test('shutdown does not wait for a slow receiver: the attempt in flight is abandoned (not counted) and made again at the next start', async () => {
  const w = await create({ retry_count: 0 });
  rx.status = 'hang';
  await failLogin('shutdown');
  await waitFor(() => rx.got.length >= 1, 2000, { intervalMs: 20, what: 'the attempt at the receiver' });
  assert.equal(rx.got.length, 1, 'the attempt is in flight');
  const t = performance.now();
  await queue().stop();
  const took = performance.now() - t;
  assert.ok(took < 1_000, `stop took ${took} ms (the attempt's time limit is 2 s)`);
  let row = ((await s.deps.db.models.WebhookDelivery.findOne({ where: { webhook_id: w.id }, raw: true })) as Row<'WebhookDelivery'> | null)!;
  assert.deepEqual([row.status, row.attempts], ['pending', 0]);
  rx.status = 200;
  queue().start();
  await queue().idle();
  assert.equal(rx.got.length, 2);
  assert.equal(rx.got[1].delivery, rx.got[0].delivery);
  row = ((await s.deps.db.models.WebhookDelivery.findOne({ where: { webhook_id: w.id }, raw: true })) as Row<'WebhookDelivery'> | null)!;
  assert.deepEqual([row.status, row.attempts], ['delivered', 1]);
});

test('signature: HMAC-SHA256 over "<timestamp>.<body>"; a changed body, secret or an old timestamp fails', () => {
  const body = '{"a":1}';
  const sig = `sha256=${sign('k'.repeat(16), 1_700_000_000, body)}`;
  const now = 1_700_000_000_000;
  assert.ok(verifySignature('k'.repeat(16), { timestamp: '1700000000', signature: sig }, body, now));
  assert.ok(!verifySignature('k'.repeat(16), { timestamp: '1700000000', signature: sig }, '{"a":2}', now));
  assert.ok(!verifySignature('x'.repeat(16), { timestamp: '1700000000', signature: sig }, body, now));
  assert.ok(!verifySignature('k'.repeat(16), { timestamp: '1700000001', signature: sig }, body, now));
  assert.ok(!verifySignature('k'.repeat(16), { timestamp: '1700000000', signature: sig }, body, now + 301_000));
});

test('request-forgery guard: loopback, private, link-local, ULA and own addresses are refused', () => {
  for (const ip of [
    '127.0.0.1',
    '127.8.9.10',
    '10.1.2.3',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '::1',
    '::',
    'fe80::1',
    'fd12:3456::1',
    'fc00::1',
    '::ffff:127.0.0.1',
    '::ffff:10.0.0.1',
    '::ffff:a00:1',
    '224.0.0.1',
    // IPv4 embedded in IPv6 and the numeric IPv4 forms
    '::7f00:1',
    '::127.0.0.1',
    '::ffff:0:7f00:1',
    '64:ff9b::7f00:1',
    '64:ff9b::a00:1',
    '64:ff9b:1::808:808',
    '2002:7f00:1::1',
    '2002:808:808::1',
    '2001:0:4136:e378:8000:63bf:3fff:fdd2',
    '127.1',
    '0x7f.1',
    '2130706433',
    '0177.0.0.1',
    '0x7f000001',
  ]) {
    assert.ok(addressProblem(ip), `${ip} refused`);
  }
  for (const ip of ['8.8.8.8', '1.1.1.1', '172.32.0.1', '2606:4700:4700::1111', '93.184.216.34', '::ffff:8.8.8.8', '64:ff9b::808:808'])
    assert.equal(addressProblem(ip), null, `${ip} allowed`);
  assert.match(addressProblem('93.184.216.34', ['93.184.216.34'])!, /this server/);
});

test('request-forgery guard at delivery: the connection goes to the address just checked (no rebinding)', async () => {
  // the name resolves to loopback now (it may have looked public when the webhook was saved)
  const refused = await send(
    { url: `http://rebind.test:${rx.port}/hook`, secret: SECRET, event: 'x', uid: 'u1', body: '{}', now: clock() },
    { timeoutMs: 2000, policy: { allowPrivate: false, lookup: async () => [{ address: '127.0.0.1', family: 4 }] }, userAgent: 't' },
  );
  assert.equal(refused.ok, false);
  assert.equal(refused.error, 'not allowed', 'a refused target says nothing more');
  assert.equal(rx.got.length, 0, 'nothing was sent');
  // allowed: the request goes to the looked-up address (the system resolver knows no rebind.test)
  const ok = await send(
    { url: `http://rebind.test:${rx.port}/hook`, secret: SECRET, event: 'x', uid: 'u2', body: '{}', now: clock() },
    { timeoutMs: 2000, policy: { allowPrivate: true, lookup: async () => [{ address: '127.0.0.1', family: 4 }] }, userAgent: 't' },
  );
  assert.equal(ok.ok, true, ok.error ?? '');
  assert.equal(rx.got.length, 1);
});

test('without GATEHOUSE_WEBHOOK_ALLOW_PRIVATE: such URLs get 400 fields.url at create and update, and a stored one is refused at delivery', async () => {
  const g = await startTestServer({ GATEHOUSE_RATE_LIMIT_ADMIN: '100000' });
  try {
    const { cookie, csrf } = await login(g);
    const hh = { cookie, 'x-csrf-token': csrf };
    for (const url of [
      'http://127.0.0.1:9/x',
      'http://localhost/x',
      'http://[::1]/x',
      'http://10.0.0.5/x',
      'http://192.168.178.1/x',
      'http://169.254.169.254/latest/meta-data',
      'http://[fd00::1]/x',
      'http://[::ffff:127.0.0.1]/x',
      'http://0.0.0.0/x',
    ]) {
      const r = await g.req('/api/v1/webhooks', {
        method: 'POST',
        json: { name: 'x', url, events: ['peer_online'], enabled: true, secret: SECRET },
        headers: hh,
      });
      assert.equal(r.status, 422, `${url}: ${r.status}`);
      assert.equal(r.data.fields?.url, 'not allowed', `${url}: ${JSON.stringify(r.data)}`);
    }
    assert.equal(await g.deps.db.models.Webhook.count(), 0);
    // a row that got in (e.g. its name resolved publicly when it was saved) is refused when sent
    const now = Date.now();
    const row = await g.deps.db.models.Webhook.create({
      name: 'stored',
      url: rx.url,
      events: '["peer_online"]',
      enabled: true,
      secret_enc: g.deps.crypto.seal(SECRET),
      retry_count: 0,
      created_at: now,
      updated_at: now,
    });
    const id = (row.get({ plain: true }) as { id: number }).id;
    const u = await g.req(`/api/v1/webhooks/${id}`, { method: 'PUT', json: { url: 'http://127.0.0.2/x' }, headers: hh });
    assert.equal(u.status, 422);
    assert.ok(u.data.fields!.url);
    const t = await g.req(`/api/v1/webhooks/${id}/test`, { method: 'POST', headers: hh });
    assert.equal(t.data.delivery.status, 'failed');
    assert.equal(t.data.delivery.last_error, 'not allowed');
    assert.deepEqual(t.data.delivery.last_error_code, { code: 'webhook.delivery.not_allowed' });
    assert.equal(rx.got.length, 0, 'the receiver got nothing');
  } finally {
    await g.close();
  }
});

test('allow_private: a LAN receiver per webhook, by an admin only (403 for a webhooks token), 400 on bad input, an activity row, honoured at delivery', async () => {
  const g = await startTestServer({ GATEHOUSE_RATE_LIMIT_ADMIN: '100000', GATEHOUSE_RATE_LIMIT_LOGIN: '100000' });
  const lan = await startReceiver(SECRET); // on loopback, with the real clock
  try {
    const full = bearer(await apiToken(g, ['full-access']));
    const scoped = bearer(await apiToken(g, ['webhooks']));
    const call = <T = never, P extends string = string, M extends string = 'GET'>(
      p: P,
      headers: Record<string, string>,
      method?: [T] extends [never] ? M : string,
      json?: unknown,
    ) => g.req<T, `/api/v1${P}`, M>(`/api/v1${p}`, { method, json, headers });
    const body = { name: 'ntfy', url: lan.url, events: ['login_failed'], enabled: true, secret: SECRET };
    const count = () => g.deps.db.models.Webhook.count();

    // bad input: 400 with fields, nothing written
    for (const v of ['yes', 1, null]) {
      const r = await call('/webhooks', full, 'POST', { ...body, allow_private: v });
      assert.equal(r.status, 400, `${String(v)}: ${r.status}`);
      assert.ok(r.data.fields?.allow_private, JSON.stringify(r.data));
    }
    assert.equal(await count(), 0);
    // without the choice the loopback receiver is refused; a token with the webhooks scope may not make the choice
    assert.equal((await call('/webhooks', full, 'POST', body)).status, 422);
    const denied = await call('/webhooks', scoped, 'POST', { ...body, allow_private: true });
    assert.equal(denied.status, 403, JSON.stringify(denied.data));
    assert.match(denied.data.error!, /allow_private/);
    assert.equal(await count(), 0, 'nothing written');

    // a full-access token makes the choice: stored, shown, an activity row (a warning), delivered to the LAN receiver
    const c = await call('/webhooks', full, 'POST', { ...body, allow_private: true });
    assert.equal(c.status, 201, JSON.stringify(c.data));
    const id: number = c.data.webhook.id;
    assert.equal(c.data.webhook.allow_private, true);
    assert.equal((await call(`/webhooks/${id}`, scoped)).data.webhook.allow_private, true);
    const rows = async (type: string) =>
      (await call(`/logs/activity?source=webhooks&event_type=${type}`, full)).data.entries.filter((e) => e.details?.webhook_id === id);
    const [made] = await rows('webhook_created');
    assert.equal(made.details?.allow_private, true);
    assert.equal(made.severity, 'warning');
    const t = await call(`/webhooks/${id}/test`, full, 'POST');
    assert.equal(t.data.delivery.status, 'delivered', JSON.stringify(t.data.delivery));
    assert.equal(lan.got.length, 1);
    assert.ok(lan.got[0].signatureValid);
    // a real event goes through the queue to the LAN receiver too
    g.deps.webhookQueue.start();
    const bad = await g.req('/login', { method: 'POST', json: { username: 'nobody', password: 'wrong-password' }, headers: { accept: 'application/json' } });
    assert.equal(bad.status, 401);
    await waitFor(() => lan.got.some((x) => x.event === 'login_failed'), 10_000);

    // the webhooks token may edit other fields, and send back the value it read, but not change the choice
    const renamed = await call(`/webhooks/${id}`, scoped, 'PUT', { name: 'ntfy 2', allow_private: true });
    assert.equal(renamed.status, 200, JSON.stringify(renamed.data));
    const off = await call(`/webhooks/${id}`, scoped, 'PUT', { allow_private: false });
    assert.equal(off.status, 403);
    assert.equal((await call(`/webhooks/${id}`, full, 'PUT', { allow_private: 'no' })).status, 400);
    // taking the choice back while the URL is on loopback: the URL no longer passes (422), nothing changed
    const back = await call(`/webhooks/${id}`, full, 'PUT', { allow_private: false });
    assert.equal(back.status, 422, JSON.stringify(back.data));
    assert.equal(back.data.fields?.url, 'not allowed');
    assert.equal((await call(`/webhooks/${id}`, full)).data.webhook.allow_private, true, 'unchanged');

    // a webhook without the choice (a row that got in) is refused at delivery: the check at connect time honours the same flag
    const now = Date.now();
    const plain = await g.deps.db.models.Webhook.create({
      name: 'plain',
      url: lan.url,
      events: '["login_failed"]',
      enabled: true,
      secret_enc: g.deps.crypto.seal(SECRET),
      retry_count: 0,
      allow_private: false,
      created_at: now,
      updated_at: now,
    });
    const plainId = (plain.get({ plain: true }) as { id: number }).id;
    const before = lan.got.length;
    const refused = await call(`/webhooks/${plainId}/test`, full, 'POST');
    assert.equal(refused.data.delivery.status, 'failed');
    assert.equal(refused.data.delivery.last_error, 'not allowed');
    assert.equal(lan.got.length, before, 'the receiver got nothing');
    // an admin session turns it on for that webhook: an activity row with the changed field, then delivered
    const { cookie, csrf } = await login(g);
    const on = await call(`/webhooks/${plainId}`, { cookie, 'x-csrf-token': csrf }, 'PUT', { allow_private: true });
    assert.equal(on.status, 200, JSON.stringify(on.data));
    const [changed] = await (async () => {
      const all = (await call(`/logs/activity?source=webhooks&event_type=webhook_updated`, full)).data.entries;
      return all.filter((e) => e.details?.webhook_id === plainId);
    })();
    assert.deepEqual([changed.severity, changed.details?.fields, changed.details?.allow_private], ['warning', ['allow_private'], true]);
    assert.equal((await call(`/webhooks/${plainId}/test`, full, 'POST')).data.delivery.status, 'delivered');
  } finally {
    await g.deps.webhookQueue.stop();
    await lan.close();
    await g.close();
  }
});

test('OpenAPI: every webhooks answer matches the response schema the document declares (strict for the webhook and delivery records)', async () => {
  const doc = (await api('/openapi.json')).data;
  const matches = (p: string, method: string, res: { status: number; data: unknown }) => {
    const schema = jsonBodySchema(doc, p, method, res.status);
    assert.ok(schema, `${method} ${p} declares ${res.status}`);
    const schema2 = z.fromJSONSchema(resolvedSchema(doc, schema));
    const r = schema2.safeParse(res.data);
    assert.ok(r.success, `${method} ${p} ${res.status}: ${JSON.stringify(r.error?.issues)}`);
    return schema2;
  };
  const created = await api('/webhooks', { method: 'POST', json: { name: 'oa', url: rx.url, events: ['login_failed'], enabled: true, secret: SECRET } });
  matches('/api/v1/webhooks', 'post', created);
  const id = created.data.webhook.id;
  matches('/api/v1/webhooks/{id}/test', 'post', await api(`/webhooks/${id}/test`, { method: 'POST' }));
  matches('/api/v1/webhooks', 'get', await api('/webhooks'));
  matches('/api/v1/webhooks/events', 'get', await api('/webhooks/events'));
  const one = await api(`/webhooks/${id}`);
  const oneSchema = matches('/api/v1/webhooks/{id}', 'get', one);
  assert.equal(
    oneSchema.safeParse({ ...one.data, webhook: { ...one.data.webhook, secret: 'x' } }).success,
    false,
    'an extra field (a secret) would be refused',
  );
  const { url: _url, ...noUrl } = one.data.webhook;
  assert.equal(oneSchema.safeParse({ ...one.data, webhook: noUrl }).success, false, 'a missing field is refused');
  matches('/api/v1/webhooks/{id}', 'put', await api(`/webhooks/${id}`, { method: 'PUT', json: { name: 'oa2' } }));
  matches('/api/v1/webhooks/{id}/toggle', 'put', await api(`/webhooks/${id}/toggle`, { method: 'PUT' }));
  matches('/api/v1/webhooks/{id}/deliveries', 'get', await api(`/webhooks/${id}/deliveries`));
  matches('/api/v1/webhooks', 'post', await api('/webhooks', { method: 'POST', json: { name: '' } }));
  matches('/api/v1/webhooks/{id}', 'get', await api('/webhooks/987654'));
  matches('/api/v1/webhooks/{id}', 'delete', await api(`/webhooks/${id}`, { method: 'DELETE' }));
});

test('docs/reference/events.md names every event kind a webhook can subscribe to', () => {
  const doc = fs.readFileSync(path.resolve(import.meta.dirname, '..', '..', 'docs', 'reference', 'events.md'), 'utf8');
  const section = doc.slice(doc.indexOf('\n## Webhook event kinds\n'));
  for (const k of WEBHOOK_EVENTS) assert.ok(section.includes(`\`${k}\``), `docs/reference/events.md documents ${k}`);
});
