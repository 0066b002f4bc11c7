// The typed event bus (events.ts): delivery, envelopes and resume, transactions, the table watch
// that feeds the caches, and the activity rows that come from events.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Op } from 'sequelize';
import { EventBus, type DomainEvent, type Envelope } from '../src/events.js';
import { activityFor } from '../src/logs/activity.js';
import { manualClock } from '../src/util/clock.js';
import type { Logger } from '../src/util/logger.js';
import { startTestServer, login, type TestServer } from './lib/server.js';

function recordingLog() {
  const lines: { msg: string; meta: Record<string, unknown> }[] = [];
  const at = (msg: string, meta: Record<string, unknown> = {}) => void lines.push({ msg, meta });
  // reason: a recording logger with the four methods the code under test calls (winston's Logger has many more)
  return { lines, log: { warn: at, error: at, info: at, debug: at } as unknown as Logger };
}

const clock = manualClock(Date.UTC(2026, 5, 1));
const bus = (keep?: number) => new EventBus({ clock, log: recordingLog().log, keep, boot: 'b1' });
const peerOnline = (peer_id: number): DomainEvent => ({ type: 'peer_online', peer_id, name: `p${peer_id}`, endpoint: null, latest_handshake: null });

test('subscribers get the events of their types, typed, in subscription order; unsubscribe stops them', async () => {
  const b = bus();
  const seen: string[] = [];
  const off = b.on('route_down', (e) => void seen.push(`down:${e.domain}:${e.status}`));
  b.on(['peer_online', 'peer_offline'], (e, env) => void seen.push(`${e.type}:${e.peer_id}@${env.seq}`));
  b.onAny((e) => void seen.push(`any:${e.type}`));
  const env = await b.emit({ type: 'route_down', route_id: 1, domain: 'a.test', status: 502, response_ms: 3, error: null });
  await b.emit(peerOnline(7));
  await b.emit({ type: 'login_failed', username: 'x', failures: 1, ip: null });
  off();
  await b.emit({ type: 'route_down', route_id: 1, domain: 'b.test', status: null, response_ms: null, error: 'refused' });
  assert.deepEqual(seen, ['down:a.test:502', 'any:route_down', 'peer_online:7@2', 'any:peer_online', 'any:login_failed', 'any:route_down']);
  assert.deepEqual(env, {
    id: 'b1-1',
    seq: 1,
    at: clock(),
    event: { type: 'route_down', route_id: 1, domain: 'a.test', status: 502, response_ms: 3, error: null },
  });
  assert.equal(b.lastId, 'b1-4');
});

test('emit waits for async subscribers; a failing subscriber is logged and the others still run', async () => {
  const { lines, log } = recordingLog();
  const b = new EventBus({ clock, log });
  const order: string[] = [];
  b.on('peer_online', async () => {
    await new Promise((r) => setTimeout(r, 5)); // not a condition: a slow subscriber, which emit must wait for
    order.push('slow');
  });
  b.on('peer_online', () => {
    throw new Error('broken subscriber');
  });
  b.on('peer_online', () => void order.push('after'));
  const env = await b.emit(peerOnline(1));
  assert.deepEqual(order, ['slow', 'after']);
  assert.equal(env?.seq, 1);
  assert.equal(lines.length, 1);
  assert.equal(lines[0].msg, 'event subscriber failed');
  assert.equal(lines[0].meta.event, 'peer_online');
  assert.match(String(lines[0].meta.err), /broken subscriber/);
  assert.match(b.boot, /^[0-9a-z]+$/, 'the boot part of the id comes from the clock');
});

test('since(Last-Event-ID): what came after, [] when up to date, null for another run or an id too old', async () => {
  const b = bus(3);
  assert.equal(b.lastId, null);
  assert.deepEqual(b.since('b1-0'), []);
  const ids: string[] = [];
  for (let i = 1; i <= 5; i++) ids.push((await b.emit(peerOnline(i)))!.id);
  assert.deepEqual(ids, ['b1-1', 'b1-2', 'b1-3', 'b1-4', 'b1-5']);
  assert.deepEqual(
    b.since('b1-3')!.map((e: Envelope) => e.seq),
    [4, 5],
  );
  assert.deepEqual(
    b.since('b1-2')!.map((e) => e.seq),
    [3, 4, 5],
    'the oldest kept one follows 2',
  );
  assert.deepEqual(b.since('b1-5'), []);
  assert.equal(b.since('b1-1'), null, 'event 2 is no longer kept: the client must reload');
  assert.equal(b.since('b0-4'), null, 'from another run of the process');
  assert.equal(b.since('b1-9'), null, 'from the future');
  assert.equal(b.since('garbage'), null);
});

let s: TestServer;
before(async () => {
  s = await startTestServer({}, {});
});
after(async () => s.close());

test('transient events: delivered with an envelope, never kept for since(), and they do not make kept ones look too old', async () => {
  const b = bus(2);
  const seen: Envelope[] = [];
  b.onAny((_e, env) => void seen.push(env));
  const traffic: DomainEvent = { type: 'peer_traffic', interval_s: 10, rx_rate: 1, tx_rate: 2, peers: [] };
  await b.emit(traffic, { transient: true });
  await b.emit(traffic, { transient: true });
  assert.deepEqual(
    seen.map((e) => [e.id, e.transient ?? false]),
    [
      ['b1-1', true],
      ['b1-2', true],
    ],
  );
  assert.deepEqual(b.since('b1-0'), [], 'nothing to replay, and not a reset');
  await b.emit(peerOnline(1));
  await b.emit(traffic, { transient: true });
  await b.emit(peerOnline(2));
  assert.deepEqual(
    b.since('b1-0')!.map((e) => e.seq),
    [3, 5],
  );
  assert.deepEqual(
    b.since('b1-4')!.map((e) => e.seq),
    [5],
  );
  await b.emit(peerOnline(3)); // keep = 2: event 3 leaves the ring
  assert.deepEqual(
    b.since('b1-3')!.map((e) => e.seq),
    [5, 6],
  );
  assert.deepEqual(
    b.since('b1-4')!.map((e) => e.seq),
    [5, 6],
  );
  assert.equal(b.since('b1-2'), null, 'event 3 is gone');
});

test('with a transaction, an event is delivered when it commits, and never when it rolls back', async () => {
  const events = s.deps.events;
  const seen: number[] = [];
  const off = events.on('peer_online', (e) => void seen.push(e.peer_id));
  try {
    await s.deps.db.sequelize.transaction(async (t) => {
      assert.equal(await events.emit(peerOnline(1), { transaction: t }), null);
      assert.deepEqual(seen, [], 'not before the commit');
    });
    assert.deepEqual(seen, [1]);
    await assert.rejects(
      s.deps.db.sequelize.transaction(async (t) => {
        await events.emit(peerOnline(2), { transaction: t });
        throw new Error('rolled back');
      }),
      /rolled back/,
    );
    assert.deepEqual(seen, [1]);
  } finally {
    off();
  }
});

test('every write to routes and peers, by any writer, is one rows_changed at the write and one at its commit', async () => {
  const seen: string[] = [];
  const off = s.deps.events.on('rows_changed', (e) => void seen.push(`${e.table}:${e.destroyed ? 'destroy' : 'write'}:${e.phase}`));
  try {
    const now = s.deps.clock();
    const { Route } = s.deps.db.models;
    const created = await Route.create({
      domain: 'watch.example.test',
      route_type: 'http',
      target_kind: 'peer',
      enabled: true,
      created_at: now,
      updated_at: now,
    });
    const id = Number(created.get('id'));
    assert.ok(seen.includes('routes:write:write'), seen.join());
    seen.length = 0;
    await s.deps.db.sequelize.transaction(async (t) => {
      await Route.update({ enabled: false }, { where: { id }, transaction: t });
      assert.deepEqual(seen, ['routes:write:write'], 'at the write, inside the transaction');
    });
    assert.deepEqual(seen, ['routes:write:write', 'routes:write:commit']);
    seen.length = 0;
    await Route.destroy({ where: { id } });
    await s.deps.db.models.Peer.update({ updated_at: now }, { where: { id: -1 } });
    assert.deepEqual(seen, ['routes:destroy:write', 'peers:write:write']);
  } finally {
    off();
  }
});

test('rows_changed names the rows a write touched when it can: id and peer, else null', async () => {
  const { cookie, csrf } = await login(s);
  const peerId = async (name: string) => {
    const r = await s.req('/api/v1/peers', { method: 'POST', json: { name }, headers: { cookie, 'x-csrf-token': csrf } });
    assert.equal(r.status, 201, JSON.stringify(r.data));
    return Number(r.data.peer.id);
  };
  const [p77, p78] = [await peerId('keys-peer-1'), await peerId('keys-peer-2')];
  const seen: unknown[] = [];
  const off = s.deps.events.on('rows_changed', (e) => void (e.phase === 'write' && e.table === 'routes' ? seen.push(e.keys) : undefined));
  try {
    const now = s.deps.clock();
    const { Route } = s.deps.db.models;
    const row = { route_type: 'http', target_kind: 'gateway', target_peer_id: p77, enabled: true, created_at: now, updated_at: now } as const;
    const created = await Route.create({ ...row, domain: 'keys-1.example.test' });
    const id = Number(created.get('id'));
    const other = Number((await Route.create({ ...row, domain: 'keys-2.example.test', target_peer_id: null })).get('id'));
    assert.deepEqual(seen.slice(0, 1), [[{ id, peer_id: p77 }]]);
    seen.length = 0;
    await Route.update({ enabled: false }, { where: { id } });
    await Route.update({ target_peer_id: p78 }, { where: { id: { [Op.in]: [id, other] } } });
    await Route.update({ enabled: true }, { where: { domain: 'keys-1.example.test' } });
    await Route.destroy({ where: { id: [id, other] } });
    const peerKeys: unknown[] = [];
    const offPeers = s.deps.events.on('rows_changed', (e) => void (e.table === 'peers' && e.phase === 'write' ? peerKeys.push(e.keys) : undefined));
    await s.deps.db.models.Peer.update({ updated_at: now }, { where: { id: p77 } });
    offPeers();
    assert.deepEqual(peerKeys, [[{ id: p77, peer_id: p77 }]]);
    assert.deepEqual(seen, [
      [{ id, peer_id: null }],
      [
        { id, peer_id: p78 },
        { id: other, peer_id: p78 },
      ],
      null,
      [
        { id, peer_id: null },
        { id: other, peer_id: null },
      ],
    ]);
  } finally {
    off();
  }
});

test('the activity rows of domain events come from the events, and every row is announced as activity_recorded', async () => {
  const recorded: { id: number; event_type: string }[] = [];
  const off = s.deps.events.on('activity_recorded', (e) => void recorded.push({ id: e.entry.id, event_type: e.entry.event_type }));
  try {
    await s.deps.events.emit({ type: 'route_down', route_id: 99, domain: 'gone.example.test', status: 503, response_ms: 12.5, error: null });
    await s.deps.events.emit({
      type: 'gateway_offline',
      peer_id: 5,
      name: 'nas',
      from: 'online',
      to: 'offline',
      reason: 'no heartbeat for 61 s',
      last_seen_at: 1,
      at: 2,
    });
    const { entries } = await s.deps.activity.query({ limit: 2 });
    assert.deepEqual(
      entries.map((e) => [e.severity, e.source, e.event_type, e.message, e.details]),
      [
        [
          'warning',
          'gateways',
          'gateway_offline',
          'Gateway "nas" is offline (was online): no heartbeat for 61 s',
          { peer_id: 5, name: 'nas', from: 'online', to: 'offline', reason: 'no heartbeat for 61 s', last_seen_at: 1, at: 2 },
        ],
        ['warning', 'monitoring', 'route_down', 'Route gone.example.test is down (HTTP 503)', { route_id: 99, status: 503, response_ms: 12.5, error: null }],
      ],
    );
    assert.deepEqual(recorded, entries.map((e) => ({ id: e.id, event_type: e.event_type })).reverse());
  } finally {
    off();
  }
  // events that are not activity rows
  assert.equal(activityFor({ type: 'rows_changed', table: 'routes', destroyed: false, phase: 'write' }), null);
  assert.equal(activityFor({ type: 'config_changed', target: 'proxy', config_hash: 'x', reason: null }), null);
});

test('an API action emits its domain event once, and it makes exactly one activity row', async () => {
  const { cookie, csrf } = await login(s);
  const seen: DomainEvent[] = [];
  const off = s.deps.events.onAny(
    (e) => void (e.type.startsWith('route') || e.type.startsWith('peer') || e.type === 'config_changed' ? seen.push(e) : undefined),
  );
  try {
    const peer = await s.req('/api/v1/peers', { method: 'POST', json: { name: 'evt-peer' }, headers: { cookie, 'x-csrf-token': csrf } });
    assert.equal(peer.status, 201, JSON.stringify(peer.data));
    const r = await s.req('/api/v1/routes', {
      method: 'POST',
      json: { domain: 'evt.example.test', peer_id: peer.data.peer.id, target_port: 8080 },
      headers: { cookie, 'x-csrf-token': csrf },
    });
    assert.equal(r.status, 201, JSON.stringify(r.data));
    const types = seen.map((e) => e.type).filter((t) => t !== 'rows_changed');
    assert.deepEqual(types, ['peer_created', 'config_changed', 'route_created'], 'the new route is a new proxy configuration, committed before route_created');
    const cfg = seen.find((e) => e.type === 'config_changed');
    assert.deepEqual(cfg, {
      type: 'config_changed',
      target: 'proxy',
      config_hash: (s.deps.proxy as { status(): { config_hash: string } }).status().config_hash,
      reason: null,
    });
    const created = seen.find((e) => e.type === 'route_created');
    assert.deepEqual(created, { type: 'route_created', route_id: r.data.route.id, domain: 'evt.example.test', route_type: 'http', actor: 1 });
    const rows = (await s.deps.activity.query({ event_type: 'route_created' })).entries.filter((e) => e.details?.route_id === r.data.route.id);
    assert.equal(rows.length, 1);
    assert.equal(rows[0].message, 'Route evt.example.test created');
    assert.equal(rows[0].user_id, 1);
  } finally {
    off();
  }
});
