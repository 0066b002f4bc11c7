// Access windows (src/access-windows): the pure core on a table of instants (DST in Europe/Berlin,
// windows over midnight), the field through the routes and peers APIs (field errors, views, the
// config comment), and the boundary scheduler on a manual clock: events, the rendered closed host,
// the closed page and its count.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { apiToken, bearer, startTestServer, type TestServer, apiCall } from './lib/server.js';
import { manualClock } from '../src/util/clock.js';
import { isOpenAt, nextChange } from '../src/access-windows/schedule.js';
import type { AccessSchedule } from '../src/access-windows/schema.js';
import { CLOSED_PAGE_PATH } from '../src/proxy/fragments/access-window.js';
import { at } from '../../test/lib/json.js';
import type { DomainEvent } from '../src/events.js';
import { waitFor } from '../../test/lib/wait.js';
import type { Refusal } from './lib/api-types.js';

const ALL = [1, 2, 3, 4, 5, 6, 7];
const berlin = (windows: AccessSchedule['windows']): AccessSchedule => ({ timezone: 'Europe/Berlin', windows });
const iso = (t: number | null) => (t === null ? null : new Date(t).toISOString());

test('isOpenAt and nextChange: a table of instants, DST changes and windows over midnight', () => {
  const office = berlin([{ days: [1, 2, 3, 4, 5], from: '08:00', to: '18:00' }]);
  const night = berlin([{ days: [5], from: '22:00', to: '02:00' }]);
  const early = berlin([{ days: ALL, from: '02:30', to: '08:00' }]);
  const rows: [AccessSchedule | null, string, boolean, string | null][] = [
    [null, '2026-03-29T01:30:00Z', true, null],
    // Monday 30 March 2026, CEST (UTC+2): 08:00 local = 06:00Z
    [office, '2026-03-30T05:59:59Z', false, '2026-03-30T06:00:00.000Z'],
    [office, '2026-03-30T06:00:00Z', true, '2026-03-30T16:00:00.000Z'],
    // Friday 27 March (CET, UTC+1) 18:00 = 17:00Z; closed over the weekend (with the DST change) until Monday 08:00 CEST
    [office, '2026-03-27T17:00:00Z', false, '2026-03-30T06:00:00.000Z'],
    // spring forward: 02:30 does not exist on 29 March; the window opens at the jump (03:00 CEST = 01:00Z)
    [early, '2026-03-28T12:00:00Z', false, '2026-03-29T01:00:00.000Z'],
    [early, '2026-03-29T01:00:00Z', true, '2026-03-29T06:00:00.000Z'],
    // fall back (25 October 2026, 03:00 CEST → 02:00 CET): 02:30 CEST (00:30Z) opens, 08:00 CET = 07:00Z closes
    [early, '2026-10-24T12:00:00Z', false, '2026-10-25T00:30:00.000Z'],
    [early, '2026-10-25T00:30:00Z', true, '2026-10-25T01:00:00.000Z'],
    // the repeated hour: 02:00-02:30 CET reads before 02:30 again (closed), 02:30 CET opens again
    [early, '2026-10-25T01:00:00Z', false, '2026-10-25T01:30:00.000Z'],
    [early, '2026-10-25T01:30:00Z', true, '2026-10-25T07:00:00.000Z'],
    // a window over midnight: Friday 22:00 to Saturday 02:00 (CET after 25 October)
    [night, '2026-10-30T20:59:00Z', false, '2026-10-30T21:00:00.000Z'],
    [night, '2026-10-30T23:30:00Z', true, '2026-10-31T01:00:00.000Z'],
    [night, '2026-10-31T01:00:00Z', false, '2026-11-06T21:00:00.000Z'],
    // always open / always closed by its windows: no change
    [{ timezone: 'UTC', windows: [{ days: ALL, from: '00:00', to: '24:00' }] }, '2026-01-01T00:00:00Z', true, null],
  ];
  for (const [s, at, open, next] of rows) {
    const t = Date.parse(at);
    assert.equal(isOpenAt(s, t), open, `${JSON.stringify(s)} at ${at}`);
    assert.equal(iso(nextChange(s, t)), next, `next of ${JSON.stringify(s)} after ${at}`);
  }
});

let s: TestServer;
let h: Record<string, string>;
// Monday 30 November 2026, 07:59:50 in Berlin (CET)
const clock = manualClock(Date.parse('2026-11-30T06:59:50Z'));
const api = apiCall(
  () => s,
  () => h,
);
const events: DomainEvent[] = [];

before(async () => {
  s = await startTestServer({ GATEHOUSE_RATE_LIMIT_ADMIN: '100000' }, { clock, timers: clock.timers });
  h = bearer(await apiToken(s));
  s.deps.events.onAny((e) => void events.push(e));
  await s.deps.accessWindows.start();
});
after(async () => {
  s.deps.accessWindows.stop();
  await s?.close();
});

test('bad access_schedule input is a 400 (422 for a time zone or a day twice) naming each field, and nothing changes', async () => {
  const peer = (await api('/peers', 'POST', { name: 'sched-bad' })).data.peer;
  const bad: [unknown, string][] = [
    [{ timezone: 'Mars/Olympus', windows: [{ days: [1], from: '08:00', to: '09:00' }] }, 'access_schedule.timezone'],
    [{ timezone: 'UTC', windows: [{ days: [0, 8], from: '08:00', to: '09:00' }] }, 'access_schedule.windows.0.days.0'],
    [{ timezone: 'UTC', windows: [{ days: [1, 1], from: '08:00', to: '09:00' }] }, 'access_schedule.windows.0.days'],
    [{ timezone: 'UTC', windows: [{ days: [1], from: '24:00', to: '09:00' }] }, 'access_schedule.windows.0.from'],
    [{ timezone: 'UTC', windows: [{ days: [1], from: '8:00', to: '09:00' }] }, 'access_schedule.windows.0.from'],
    [{ timezone: 'UTC', windows: [{ days: [1], from: '08:00', to: '08:00' }] }, 'access_schedule.windows.0.to'],
    [{ timezone: 'UTC', windows: [] }, 'access_schedule.windows'],
    [{ timezone: 'UTC' }, 'access_schedule.windows'],
  ];
  for (const [schedule, field] of bad) {
    for (const [p, m] of [
      ['/routes', 'POST'],
      [`/peers/${peer.id}`, 'PUT'],
    ] as const) {
      const body =
        m === 'POST' ? { domain: 'bad-sched.example.com', peer_id: peer.id, target_port: 80, access_schedule: schedule } : { access_schedule: schedule };
      const r = await api<Refusal>(p, m, body);
      // 422 for what the document's schema cannot state (a known time zone name, each day once, from before 24:00), 400 for the rest
      const semantic =
        field === 'access_schedule.timezone' ||
        (field === 'access_schedule.windows.0.days' && JSON.stringify(schedule).includes('[1,1]')) ||
        JSON.stringify(schedule).includes('"24:00","to":"09:00"');
      assert.equal(r.status, semantic ? 422 : 400, `${m} ${p} ${JSON.stringify(schedule)}: ${JSON.stringify(r.data)}`);
      assert.ok(field in r.data.fields!, `${field} in ${JSON.stringify(r.data.fields)}`);
    }
  }
  assert.equal((await api('/routes')).data.total, 0);
  assert.equal((await api(`/peers/${peer.id}`)).data.peer.access_schedule, null);
  // an L4 route takes a schedule too (closed: no listener on its port)
  const l4 = await api('/routes', 'POST', {
    route_type: 'l4',
    peer_id: peer.id,
    target_port: 22,
    l4_protocol: 'tcp',
    l4_listen_port: 2222,
    access_schedule: berlin([{ days: ALL, from: '08:00', to: '08:01' }]),
  });
  assert.equal(l4.status, 201, JSON.stringify(l4.data));
  assert.equal(l4.data.route.access_state.open, false);
  const l4Servers = async () =>
    Object.values(((await s.deps.proxy.render()) as { apps: { layer4?: { servers: Record<string, { listen: string[] }> } } }).apps.layer4?.servers ?? {});
  assert.ok(!(await l4Servers()).some((v) => v.listen.some((l) => l.endsWith(':2222'))), 'closed: no listener on its port');
  assert.equal((await api(`/routes/${l4.data.route.id}`, 'PUT', { access_schedule: null })).status, 200);
  assert.ok(
    (await l4Servers()).some((v) => v.listen.some((l) => l.endsWith(':2222'))),
    'always open: the listener is back',
  );
  assert.equal((await api(`/routes/${l4.data.route.id}`, 'DELETE')).status, 200);
});

test('a route and a peer close and open at their boundaries on the manual clock', async () => {
  const peer = (await api('/peers', 'POST', { name: 'sched-peer', access_schedule: berlin([{ days: ALL, from: '08:00', to: '08:01' }]) })).data.peer;
  assert.deepEqual(peer.access_state, { open: false, next_change_at: '2026-11-30T07:00:00.000Z', closed_answers: 0 });
  const conf = (await api(`/peers/${peer.id}/config`)).data as string;
  assert.match(conf, /# Access window: Mon, Tue, Wed, Thu, Fri, Sat, Sun 08:00–08:01 \(Europe\/Berlin\)/);
  assert.match(conf, /# Now CLOSED; it opens Mon, 30 Nov 2026, 08:00 \(Europe\/Berlin\)/);

  // the route is open until 08:00 and closed until 09:00 (windows over midnight)
  const target = (await api('/peers', 'POST', { name: 'sched-target' })).data.peer;
  const created = await api('/routes', 'POST', {
    domain: 'hours.example.com',
    peer_id: target.id,
    target_port: 80,
    access_schedule: berlin([{ days: ALL, from: '09:00', to: '08:00' }]),
  });
  assert.equal(created.status, 201, JSON.stringify(created.data));
  const route = created.data.route;
  assert.deepEqual(route.access_state, { open: true, next_change_at: '2026-11-30T07:00:00.000Z', closed_answers: 0 });
  await s.deps.accessWindows.idle();
  assert.equal(s.deps.accessWindows.armedFor, Date.parse('2026-11-30T07:00:00Z'));
  const rendered = async () => JSON.stringify(await s.deps.proxy.render());
  assert.ok(!(await rendered()).includes(CLOSED_PAGE_PATH));

  // 08:00 in Berlin: the route closes, the peer opens
  await clock.advanceAsync(11_000, () => s.deps.accessWindows.idle());
  await s.deps.accessWindows.idle();
  const kinds = events.map((e) => e.type);
  assert.ok(kinds.includes('route_access_closed'), kinds.join(','));
  assert.ok(kinds.includes('peer_access_opened'), kinds.join(','));
  const closedEv = events.find((e) => e.type === 'route_access_closed') as Extract<DomainEvent, { type: 'route_access_closed' }>;
  assert.equal(closedEv.opens_at, '2026-11-30T08:00:00.000Z');
  assert.ok((await rendered()).includes(CLOSED_PAGE_PATH));
  assert.equal((await api(`/peers/${peer.id}`)).data.peer.access_state.open, true);

  // the closed page: for Caddy only (loopback + secret), 403 naming the opening time, counted
  const secret = fs.readFileSync(path.join(s.dataDir, 'caddy-report.secret'), 'utf8').trim();
  const outsider = await s.req(CLOSED_PAGE_PATH, { headers: { 'x-gatehouse-route-id': String(route.id) } });
  assert.equal(outsider.status, 404);
  const en = await s.req(CLOSED_PAGE_PATH, { headers: { 'x-gatehouse-secret': secret, 'x-gatehouse-route-id': String(route.id), accept: 'text/html' } });
  assert.equal(en.status, 403);
  assert.match(en.data as string, /It opens again on Mon, 30 Nov 2026, 09:00 \(Europe\/Berlin\)/);
  const de = await s.req(CLOSED_PAGE_PATH, {
    headers: { 'x-gatehouse-secret': secret, 'x-gatehouse-route-id': String(route.id), accept: 'text/html', 'accept-language': 'de-DE,de;q=0.8' },
  });
  assert.match(de.data as string, /Sie ist wieder erreichbar ab Mo\., 30\. Nov\. 2026, 09:00 \(Europe\/Berlin\)/);
  const js = await s.req(CLOSED_PAGE_PATH, { headers: { 'x-gatehouse-secret': secret, 'x-gatehouse-route-id': String(route.id), accept: 'application/json' } });
  assert.equal(at(js.data, 'opens_at'), '2026-11-30T08:00:00.000Z');
  const view = (await api(`/routes/${route.id}`)).data.route;
  assert.deepEqual(view.access_state, { open: false, next_change_at: '2026-11-30T08:00:00.000Z', closed_answers: 3 });
  const prom = await s.deps.metrics.scrape();
  assert.match(prom, new RegExp(`gatehouse_route_closed_answers_total\\{route_id="${route.id}",domain="hours.example.com"\\} 3`));

  // 08:01: the peer closes; 09:00: the route opens
  await clock.advanceAsync(61_000, () => s.deps.accessWindows.idle());
  assert.ok(events.some((e) => e.type === 'peer_access_closed'));
  await clock.advanceAsync(3600_000, () => s.deps.accessWindows.idle());
  assert.ok(events.some((e) => e.type === 'route_access_opened'));
  assert.ok(!(await rendered()).includes(CLOSED_PAGE_PATH));
  // the activity log has the boundaries
  const log = (await api('/logs/activity?limit=50')).data;
  const codes = JSON.stringify(log);
  for (const c of ['schedule.route_closed', 'schedule.route_opened', 'schedule.peer_closed', 'schedule.peer_opened']) assert.ok(codes.includes(c), c);
});

test('a restart reads the schedules again and arms the next boundary', async () => {
  s.deps.accessWindows.stop();
  await s.deps.accessWindows.start();
  await s.deps.accessWindows.idle();
  assert.ok(s.deps.accessWindows.armedFor !== null && s.deps.accessWindows.armedFor > clock());
  // removing a schedule re-arms without it
  const routes = (await api('/routes')).data.routes;
  await api(`/routes/${routes[0].id}`, 'PUT', { access_schedule: null });
  const peers = (await api('/peers?limit=100')).data.peers;
  for (const p of peers) await api(`/peers/${p.id}`, 'PUT', { access_schedule: null });
  await waitFor(
    async () => {
      await s.deps.accessWindows.idle();
      return s.deps.accessWindows.armedFor === null;
    },
    5000,
    'the timer disarmed without schedules',
  );
});
