// Per-peer data quotas (src/quotas) on a manual clock with real peer_traffic rows (the poller's own
// addSamples): the period arithmetic in a non-UTC zone, the field's bad input (400/422), the 80 % and
// 100 % events once each, disable and throttle applied and undone the next period (daily, weekly
// with resets_on, monthly at a month's end), an admin's override, the reset and grant endpoints,
// a group's default against a peer's own quota, and the state across a new service (a restart).
process.env.TZ = 'Europe/Berlin';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { apiToken, bearer, startTestServer, type TestServer } from './lib/server.js';
import { manualClock } from '../src/util/clock.js';
import { addSamples } from '../src/peers/traffic.js';
import { periodOf } from '../src/quotas/schema.js';
import { QuotaService } from '../src/quotas/service.js';
import type { DomainEvent } from '../src/events.js';
import type { Refusal } from './lib/api-types.js';

const at = (s: string) => Date.parse(s);
const iso = (t: number) => new Date(t).toISOString();

test('periodOf: daily, weekly and monthly periods in the server time zone (Europe/Berlin), DST and month ends', () => {
  const rows: [Parameters<typeof periodOf>[0], string, string, string][] = [
    // Monday 30 November 2026, 10:00 CET: the day from 00:00 CET (23:00Z the day before)
    [{ period: 'daily', resets_on: null }, '2026-11-30T09:00:00Z', '2026-11-29T23:00:00.000Z', '2026-11-30T23:00:00.000Z'],
    // 00:30 CET belongs to the new day
    [{ period: 'daily', resets_on: null }, '2026-11-30T23:30:00Z', '2026-11-30T23:00:00.000Z', '2026-12-01T23:00:00.000Z'],
    // the day of the spring-forward change has 23 hours
    [{ period: 'daily', resets_on: null }, '2026-03-29T12:00:00Z', '2026-03-28T23:00:00.000Z', '2026-03-29T22:00:00.000Z'],
    // weekly from Monday (default), from Wednesday (3) and from Sunday (7)
    [{ period: 'weekly', resets_on: null }, '2026-11-30T09:00:00Z', '2026-11-29T23:00:00.000Z', '2026-12-06T23:00:00.000Z'],
    [{ period: 'weekly', resets_on: 3 }, '2026-11-30T09:00:00Z', '2026-11-24T23:00:00.000Z', '2026-12-01T23:00:00.000Z'],
    [{ period: 'weekly', resets_on: 7 }, '2026-11-29T10:00:00Z', '2026-11-28T23:00:00.000Z', '2026-12-05T23:00:00.000Z'],
    // monthly from the 1st (default), from the 15th, and from the 31st (the last day of a shorter month)
    [{ period: 'monthly', resets_on: null }, '2026-11-30T09:00:00Z', '2026-10-31T23:00:00.000Z', '2026-11-30T23:00:00.000Z'],
    [{ period: 'monthly', resets_on: 15 }, '2026-11-30T09:00:00Z', '2026-11-14T23:00:00.000Z', '2026-12-14T23:00:00.000Z'],
    [{ period: 'monthly', resets_on: 31 }, '2026-11-30T09:00:00Z', '2026-11-29T23:00:00.000Z', '2026-12-30T23:00:00.000Z'],
    [{ period: 'monthly', resets_on: 31 }, '2027-02-27T09:00:00Z', '2027-01-30T23:00:00.000Z', '2027-02-27T23:00:00.000Z'],
    [{ period: 'monthly', resets_on: 31 }, '2027-02-28T09:00:00Z', '2027-02-27T23:00:00.000Z', '2027-03-30T22:00:00.000Z'],
    [{ period: 'monthly', resets_on: 30 }, '2028-02-29T09:00:00Z', '2028-02-28T23:00:00.000Z', '2028-03-29T22:00:00.000Z'],
    // across the year: December's period runs into January
    [{ period: 'monthly', resets_on: 20 }, '2027-01-05T09:00:00Z', '2026-12-19T23:00:00.000Z', '2027-01-19T23:00:00.000Z'],
  ];
  for (const [q, now, start, end] of rows) {
    const p = periodOf(q, at(now));
    assert.deepEqual([iso(p.start), iso(p.end)], [start, end], `${JSON.stringify(q)} at ${now}`);
  }
});

let s: TestServer;
let h: Record<string, string>;
// Monday 30 November 2026, 10:00 in Berlin (CET)
const clock = manualClock(at('2026-11-30T09:00:00Z'));
const api = <T = never, P extends string = string, M extends string = 'GET'>(p: P, method?: [T] extends [never] ? M : string, json?: unknown, headers = h) =>
  s.req<T, `/api/v1${P}`, M>(`/api/v1${p}`, { method, headers, ...(json !== undefined ? { json } : {}) });
const events: DomainEvent[] = [];
const quotaEvents = (id: number) =>
  events
    .filter((e) => 'peer_id' in e && e.peer_id === id && (e.type.startsWith('peer_quota_') || e.type === 'peer_enabled' || e.type === 'peer_disabled'))
    .map((e) => e.type);
/** bytes through the peer now: a real 5-minute bucket of peer_traffic, as the poller writes it */
const traffic = (id: number, rx: number, tx: number) => addSamples(s.deps.db.sequelize, [{ peerId: id, rx, tx }], clock());
const peer = async (id: number) => (await api(`/peers/${id}`)).data.peer;
/** one run of the quota job: the clock moves to `t` and then one poll interval on */
const jumpTo = async (t: number) => {
  clock.set(t);
  await clock.advanceAsync(s.deps.wireguard.pollIntervalMs, () => s.deps.scheduler.idle());
};

before(async () => {
  s = await startTestServer({ GATEHOUSE_RATE_LIMIT_ADMIN: '100000' }, { clock, timers: clock.timers });
  h = bearer(await apiToken(s));
  s.deps.events.onAny((e) => void events.push(e));
  await s.deps.quotas.start();
});
after(async () => {
  s.deps.quotas.stop();
  await s?.close();
});

test('bad quota input is a 400 (422 for the rules between fields) naming each field, and nothing changes', async () => {
  const p = (await api('/peers', 'POST', { name: 'quota-bad' })).data.peer;
  const g = (await api('/peer-groups', 'POST', { name: 'quota-bad-group' })).data.group;
  const ok = { bytes: 1000, period: 'daily', action: 'disable' };
  const bad: [unknown, string, number][] = [
    [{ ...ok, bytes: 0 }, 'quota.bytes', 400],
    [{ ...ok, bytes: 1.5 }, 'quota.bytes', 400],
    [{ ...ok, bytes: '1000' }, 'quota.bytes', 400],
    [{ ...ok, period: 'yearly' }, 'quota.period', 400],
    [{ ...ok, action: 'block' }, 'quota.action', 400],
    [{ ...ok, extra: 1 }, 'quota', 400],
    [{ ...ok, period: 'monthly', resets_on: 32 }, 'quota.resets_on', 400],
    [{ ...ok, action: 'throttle', throttle_kbit: 4 }, 'quota.throttle_kbit', 400],
    [{ ...ok, action: 'throttle' }, 'quota.throttle_kbit', 422],
    [{ ...ok, period: 'weekly', resets_on: 8 }, 'quota.resets_on', 422],
    [{ ...ok, period: 'daily', resets_on: 3 }, 'quota.resets_on', 422],
  ];
  for (const [quota, field, status] of bad) {
    for (const [path, method, body] of [
      ['/peers', 'POST', { name: 'quota-bad-new', quota }],
      [`/peers/${p.id}`, 'PUT', { quota }],
      [`/peer-groups/${g.id}`, 'PUT', { quota }],
    ] as const) {
      const r = await api<Refusal>(path, method, body);
      assert.equal(r.status, status, `${method} ${path} ${JSON.stringify(quota)}: ${JSON.stringify(r.data)}`);
      assert.ok(
        Object.keys(r.data.fields!).some((f) => f === field || f.startsWith(`${field}.`)),
        `${field} in ${JSON.stringify(r.data.fields)}`,
      );
    }
  }
  assert.equal((await api('/peers?q=quota-bad-new')).data.total, 0);
  assert.equal((await peer(p.id)).quota, null);
  assert.equal((await api(`/peer-groups/${g.id}`)).data.group.quota, null);

  // grant: a positive whole number of bytes, nothing else
  await api(`/peers/${p.id}`, 'PUT', { quota: ok });
  for (const body of [{}, { bytes: 0 }, { bytes: -5 }, { bytes: 'x' }, { bytes: 10, extra: true }, { bytes: 2 ** 60 }]) {
    const r = await api(`/peers/${p.id}/quota/grant`, 'POST', body);
    assert.equal(r.status, 400, `${JSON.stringify(body)}: ${JSON.stringify(r.data)}`);
    assert.ok(r.data.fields && Object.keys(r.data.fields).length, JSON.stringify(r.data));
  }
  assert.equal((await peer(p.id)).quota_state!.granted_bytes, 0);
  // no quota: 409; no peer: 404
  const plain = (await api('/peers', 'POST', { name: 'quota-none' })).data.peer;
  assert.equal((await api(`/peers/${plain.id}/quota/grant`, 'POST', { bytes: 10 })).status, 409);
  assert.equal((await api(`/peers/${plain.id}/quota/reset`, 'POST')).status, 409);
  assert.equal((await api('/peers/999999/quota/reset', 'POST')).status, 404);
  // authorisation: a read-only token may not reset or grant
  const ro = bearer(await apiToken(s, ['read-only']));
  assert.equal((await api(`/peers/${p.id}/quota/grant`, 'POST', { bytes: 10 }, ro)).status, 403);
  assert.equal((await api(`/peers/${p.id}/quota/reset`, 'POST', undefined, ro)).status, 403);
  assert.equal((await s.req(`/api/v1/peers/${p.id}/quota/reset`, { method: 'POST' })).status, 401);
  await api(`/peers/${p.id}`, 'DELETE');
  await api(`/peers/${plain.id}`, 'DELETE');
});

test('daily disable: 80 % and 100 % once each, the peer off at 100 %, back on the next day', async () => {
  const created = await api('/peers', 'POST', { name: 'quota-daily', quota: { bytes: 1000, period: 'daily', action: 'disable' } });
  assert.equal(created.status, 201, JSON.stringify(created.data));
  const p = created.data.peer;
  assert.deepEqual(p.quota, { bytes: 1000, period: 'daily', resets_on: null, action: 'disable', throttle_kbit: null });
  assert.equal(p.quota_state!.state, 'ok');
  assert.equal(p.quota_state!.period_start, '2026-11-29T23:00:00.000Z');
  // traffic of yesterday does not count
  clock.set(at('2026-11-29T22:50:00Z'));
  await traffic(p.id, 5000, 5000);
  clock.set(at('2026-11-30T09:00:00Z'));
  await traffic(p.id, 400, 300);
  await jumpTo(clock());
  let v = await peer(p.id);
  assert.deepEqual([v.quota_state!.used_bytes, v.quota_state!.limit_bytes, v.quota_state!.percent, v.quota_state!.state], [700, 1000, 70, 'ok']);
  assert.deepEqual(quotaEvents(p.id), []);

  await traffic(p.id, 100, 50); // 850: 85 %
  await jumpTo(clock());
  await jumpTo(clock());
  v = await peer(p.id);
  assert.equal(v.quota_state!.state, 'warned');
  assert.deepEqual(quotaEvents(p.id), ['peer_quota_warning']);
  assert.equal(v.enabled, 1);

  await traffic(p.id, 100, 100); // 1050
  await jumpTo(clock());
  await jumpTo(clock());
  v = await peer(p.id);
  assert.deepEqual([v.enabled, v.quota_state!.state, v.quota_state!.action_applied, v.quota_state!.used_bytes], [0, 'exceeded', 'disable', 1050]);
  assert.deepEqual(quotaEvents(p.id), ['peer_quota_warning', 'peer_disabled', 'peer_quota_exceeded']);
  const exceeded = events.find((e) => e.type === 'peer_quota_exceeded' && e.peer_id === p.id);
  assert.deepEqual(exceeded, {
    type: 'peer_quota_exceeded',
    peer_id: p.id,
    name: 'quota-daily',
    used_bytes: 1050,
    limit_bytes: 1000,
    period_start: '2026-11-29T23:00:00.000Z',
    period_end: '2026-11-30T23:00:00.000Z',
    action_applied: 'disable',
  });
  // the activity log has both rows
  const log = (await api('/logs/activity?limit=50')).data.entries;
  const mine = log.filter((e) => e.details?.peer_id === p.id).map((e) => `${e.event_type}:${e.code}`);
  assert.ok(mine.includes('peer_quota_warning:quota.warning') && mine.includes('peer_quota_exceeded:quota.exceeded'), mine.join(', '));

  // the next day (00:00:30 CET): on again, the count from zero
  await jumpTo(at('2026-11-30T23:00:30Z') - s.deps.wireguard.pollIntervalMs);
  v = await peer(p.id);
  assert.deepEqual([v.enabled, v.quota_state!.state, v.quota_state!.action_applied, v.quota_state!.used_bytes], [1, 'ok', null, 0]);
  assert.equal(v.quota_state!.period_start, '2026-11-30T23:00:00.000Z');
  assert.deepEqual(quotaEvents(p.id), ['peer_quota_warning', 'peer_disabled', 'peer_quota_exceeded', 'peer_enabled', 'peer_quota_reset']);
  const reset = [...events].reverse().find((e) => e.type === 'peer_quota_reset' && e.peer_id === p.id);
  assert.equal(reset?.type === 'peer_quota_reset' && `${reset.reason}:${reset.action_undone}`, 'period:disable');
  await api(`/peers/${p.id}`, 'DELETE');
});

test("an admin's toggle wins: a peer re-enabled stays on this period, one the admin turned off stays off the next", async () => {
  clock.set(at('2026-12-01T09:00:00Z'));
  const p = (await api('/peers', 'POST', { name: 'quota-admin', quota: { bytes: 1000, period: 'daily', action: 'disable' } })).data.peer;
  await traffic(p.id, 2000, 0);
  await jumpTo(clock());
  assert.equal((await peer(p.id)).enabled, 0);
  // the admin turns it on again: the quota leaves it on for the rest of the day
  await api(`/peers/${p.id}/toggle`, 'PUT');
  await traffic(p.id, 2000, 0);
  await jumpTo(clock());
  let v = await peer(p.id);
  assert.deepEqual([v.enabled, v.quota_state!.state, v.quota_state!.action_applied], [1, 'exceeded', null]);
  // the next day it goes over again and is turned off again; then the admin turns it off too (already off) and
  // on again, and off: the admin's last word (off) stays the next day
  clock.set(at('2026-12-02T09:00:00Z'));
  await traffic(p.id, 2000, 0);
  await jumpTo(clock());
  assert.equal((await peer(p.id)).enabled, 0);
  await api(`/peers/${p.id}/toggle`, 'PUT'); // on (override)
  await api(`/peers/${p.id}/toggle`, 'PUT'); // off by the admin
  await jumpTo(at('2026-12-02T23:00:30Z') - s.deps.wireguard.pollIntervalMs);
  v = await peer(p.id);
  assert.deepEqual([v.enabled, v.quota_state!.state, v.quota_state!.used_bytes], [0, 'ok', 0]);
  await api(`/peers/${p.id}`, 'DELETE');
});

test('weekly throttle from Wednesday: the speed cap while exceeded, lifted the next Wednesday; survives a new service', async () => {
  clock.set(at('2026-12-07T09:00:00Z')); // Monday 7 December; the period began Wednesday 2 December
  const p = (
    await api('/peers', 'POST', {
      name: 'quota-weekly',
      speed_limit: { down_kbit: 50_000, up_kbit: null },
      quota: { bytes: 10_000, period: 'weekly', resets_on: 3, action: 'throttle', throttle_kbit: 512 },
    })
  ).data.peer;
  assert.equal(p.quota_state!.period_start, '2026-12-01T23:00:00.000Z');
  assert.equal(p.quota_state!.period_end, '2026-12-08T23:00:00.000Z');
  // traffic from Wednesday counts, Tuesday's does not
  clock.set(at('2026-12-01T22:55:00Z'));
  await traffic(p.id, 9000, 0);
  clock.set(at('2026-12-02T08:00:00Z'));
  await traffic(p.id, 6000, 4000);
  await jumpTo(at('2026-12-07T09:00:00Z'));
  let v = await peer(p.id);
  assert.deepEqual([v.enabled, v.quota_state!.state, v.quota_state!.action_applied, v.quota_state!.used_bytes], [1, 'exceeded', 'throttle', 10_000]);
  const cap = async () => (await s.deps.shaping.caps()).find((c) => c.peer_id === p.id);
  assert.deepEqual(await cap(), { peer_id: p.id, address: p.address, down_kbit: 512, up_kbit: 512 });
  assert.deepEqual(quotaEvents(p.id), ['peer_quota_warning', 'peer_quota_exceeded']);

  // a restart: a new service reads the state from the database (no events again, the throttle set again)
  s.deps.quotas.stop();
  await s.deps.shaping.setThrottles(new Map());
  assert.deepEqual(await cap(), { peer_id: p.id, address: p.address, down_kbit: 50_000, up_kbit: null });
  const again = new QuotaService(s.deps, s.deps.peers, s.deps.shaping, { intervalMs: s.deps.wireguard.pollIntervalMs });
  await again.start();
  try {
    assert.deepEqual(await cap(), { peer_id: p.id, address: p.address, down_kbit: 512, up_kbit: 512 });
    assert.deepEqual(quotaEvents(p.id), ['peer_quota_warning', 'peer_quota_exceeded']);
    // the next Wednesday 00:00 CET: the throttle is lifted, the own speed cap stays
    await jumpTo(at('2026-12-08T23:00:05Z') - s.deps.wireguard.pollIntervalMs);
    v = await peer(p.id);
    assert.deepEqual([v.quota_state!.state, v.quota_state!.action_applied, v.quota_state!.used_bytes], ['ok', null, 0]);
    assert.deepEqual(await cap(), { peer_id: p.id, address: p.address, down_kbit: 50_000, up_kbit: null });
    assert.deepEqual(quotaEvents(p.id), ['peer_quota_warning', 'peer_quota_exceeded', 'peer_quota_reset']);
  } finally {
    again.stop();
    await s.deps.quotas.start();
  }
  await api(`/peers/${p.id}`, 'DELETE');
});

test('monthly on the 31st: the period ends on the last day of February; reset and grant lift the action and are logged', async () => {
  clock.set(at('2027-02-20T09:00:00Z'));
  const p = (await api('/peers', 'POST', { name: 'quota-monthly', quota: { bytes: 1000, period: 'monthly', resets_on: 31, action: 'disable' } })).data.peer;
  assert.deepEqual([p.quota_state!.period_start, p.quota_state!.period_end], ['2027-01-30T23:00:00.000Z', '2027-02-27T23:00:00.000Z']);
  await traffic(p.id, 600, 600);
  await jumpTo(clock());
  assert.deepEqual([(await peer(p.id)).enabled, (await peer(p.id)).quota_state!.state], [0, 'exceeded']);

  // grant 500 bytes: 1200 of 1500 = 80 %, the peer on again (warned, no new warning)
  const granted = await api(`/peers/${p.id}/quota/grant`, 'POST', { bytes: 500 });
  assert.equal(granted.status, 200, JSON.stringify(granted.data));
  let v = granted.data.peer;
  assert.deepEqual(
    [v.enabled, v.quota_state!.state, v.quota_state!.limit_bytes, v.quota_state!.granted_bytes, v.quota_state!.action_applied],
    [1, 'warned', 1500, 500, null],
  );
  await traffic(p.id, 400, 0); // 1600 of 1500: off again, a second exceeded event
  await jumpTo(clock());
  assert.equal((await peer(p.id)).enabled, 0);

  // reset: the count from zero, on again
  const reset = await api(`/peers/${p.id}/quota/reset`, 'POST');
  assert.equal(reset.status, 200, JSON.stringify(reset.data));
  v = reset.data.peer;
  assert.deepEqual([v.enabled, v.quota_state!.state, v.quota_state!.used_bytes, v.quota_state!.action_applied], [1, 'ok', 0, null]);
  await traffic(p.id, 100, 0);
  await jumpTo(clock());
  assert.equal((await peer(p.id)).quota_state!.used_bytes, 100);
  // straight from under 80 % to 100 %: both events (after the action)
  assert.deepEqual(quotaEvents(p.id), [
    'peer_disabled',
    'peer_quota_warning',
    'peer_quota_exceeded',
    'peer_enabled',
    'peer_quota_granted',
    'peer_disabled',
    'peer_quota_exceeded',
    'peer_enabled',
    'peer_quota_reset',
  ]);
  const log = (await api('/logs/activity?limit=100')).data.entries;
  const admin = log.filter((e) => e.details?.peer_id === p.id && (e.code === 'quota.granted' || e.code === 'quota.reset_admin'));
  assert.equal(admin.length, 2);
  assert.ok(admin.every((e) => e.user_id !== null));

  // 28 February 00:00 CET: a new period (the 31st falls on February's last day); grant and offset are gone
  await jumpTo(at('2027-02-27T23:00:05Z') - s.deps.wireguard.pollIntervalMs);
  v = await peer(p.id);
  assert.deepEqual(
    [v.quota_state!.period_start, v.quota_state!.period_end, v.quota_state!.used_bytes, v.quota_state!.granted_bytes, v.quota_state!.limit_bytes],
    ['2027-02-27T23:00:00.000Z', '2027-03-30T22:00:00.000Z', 0, 0, 1000],
  );
  await api(`/peers/${p.id}`, 'DELETE');
});

test("a group's default counts for its members; a member's own quota wins; removing it undoes the action", async () => {
  clock.set(at('2027-03-10T09:00:00Z'));
  const g = (await api('/peer-groups', 'POST', { name: 'quota-group', quota: { bytes: 1000, period: 'daily', action: 'throttle', throttle_kbit: 256 } })).data
    .group;
  assert.equal(g.quota!.throttle_kbit, 256);
  const member = (await api('/peers', 'POST', { name: 'quota-member', group_id: g.id })).data.peer;
  const own = (await api('/peers', 'POST', { name: 'quota-own', group_id: g.id, quota: { bytes: 5000, period: 'daily', action: 'disable' } })).data.peer;
  assert.deepEqual([member.quota, member.quota_state!.source, member.quota_state!.limit_bytes], [null, 'group', 1000]);
  assert.deepEqual([own.quota_state!.source, own.quota_state!.limit_bytes], ['peer', 5000]);
  await traffic(member.id, 1200, 0);
  await traffic(own.id, 1200, 0);
  await jumpTo(clock());
  const m = await peer(member.id);
  const o = await peer(own.id);
  assert.deepEqual([m.quota_state!.state, m.quota_state!.action_applied], ['exceeded', 'throttle']);
  assert.deepEqual([o.quota_state!.state, o.enabled], ['ok', 1]);
  assert.equal((await s.deps.shaping.caps()).find((c) => c.peer_id === member.id)?.down_kbit, 256);
  // the group's quota raised: under 80 % again, the throttle lifted
  await api(`/peer-groups/${g.id}`, 'PUT', { quota: { bytes: 10_000, period: 'daily', action: 'throttle', throttle_kbit: 256 } });
  assert.deepEqual([(await peer(member.id)).quota_state!.state, (await peer(member.id)).quota_state!.limit_bytes], ['ok', 10_000]);
  assert.equal(
    (await s.deps.shaping.caps()).find((c) => c.peer_id === member.id),
    undefined,
  );
  // the group's quota removed: no quota state at all
  await api(`/peer-groups/${g.id}`, 'PUT', { quota: null });
  assert.equal((await peer(member.id)).quota_state, null);
  assert.equal((await peer(own.id)).quota_state!.source, 'peer');
  for (const id of [member.id, own.id]) await api(`/peers/${id}`, 'DELETE');
  await api(`/peer-groups/${g.id}`, 'DELETE');
});
