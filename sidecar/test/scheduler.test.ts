// The scheduler (util/scheduler.ts) on a manual clock: jobs run when time passes, never overlap,
// log and record their errors, run now, reschedule and stop; no test here sleeps.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { manualClock, systemTimers } from '../src/util/clock.js';
import { Scheduler, WAKE_COALESCE_MS } from '../src/util/scheduler.js';
import type { Logger } from '../src/util/logger.js';
import { RECONCILE_INTERVAL_MS } from '../src/proxy/feature.js';
import { startTestServer } from './lib/server.js';

/** A logger that keeps what it is given (only the two levels the scheduler uses). */
function recordingLog() {
  const lines: { level: string; msg: string; meta: Record<string, unknown> }[] = [];
  const at =
    (level: string) =>
    (msg: string, meta: Record<string, unknown> = {}) =>
      void lines.push({ level, msg, meta });
  // reason: a recording logger with the four methods the code under test calls (winston's Logger has many more)
  return { lines, log: { warn: at('warn'), error: at('error'), info: at('info'), debug: at('debug') } as unknown as Logger };
}

function setup() {
  const clock = manualClock(Date.UTC(2026, 5, 1));
  const { lines, log } = recordingLog();
  const sched = new Scheduler({ log, clock, timers: clock.timers });
  return { clock, lines, sched };
}

test('manual clock: timers fire in due order as time passes, and not before', () => {
  const clock = manualClock(1000);
  const seen: string[] = [];
  clock.timers.after(300, () => seen.push(`c@${clock()}`));
  clock.timers.after(100, () => seen.push(`a@${clock()}`));
  const b = clock.timers.after(200, () => seen.push(`b@${clock()}`));
  clock.timers.after(100, () => seen.push(`a2@${clock()}`));
  clock.advance(99);
  assert.deepEqual(seen, []);
  b.cancel();
  clock.advance(150);
  assert.deepEqual(seen, ['a@1100', 'a2@1100']);
  assert.equal(clock(), 1249);
  assert.equal(clock.pending(), 1);
  clock.advance(1000);
  assert.deepEqual(seen, ['a@1100', 'a2@1100', 'c@1300']);
  assert.equal(clock(), 2249);
  assert.equal(clock.pending(), 0);
});

test('a job runs once per interval, at a fixed rate, and the first run is one interval away', async () => {
  const { clock, sched } = setup();
  const runs: number[] = [];
  const t0 = clock();
  sched.every('count', 1000, () => void runs.push(clock() - t0), { scope: 'per-node' });
  clock.advance(999);
  assert.deepEqual(runs, []);
  await clock.advanceAsync(4001, () => sched.idle());
  assert.deepEqual(runs, [1000, 2000, 3000, 4000, 5000]);
  const info = sched.job('count')!.info();
  assert.equal(info.runs, 5);
  assert.equal(info.every_ms, 1000);
  assert.equal(info.active, true);
  sched.stop();
});

test('a run never overlaps itself: ticks during a busy run are skipped', async () => {
  const { clock, sched } = setup();
  let started = 0;
  let release!: () => void;
  const job = sched.every(
    'slow',
    100,
    () => {
      started++;
      return new Promise<void>((r) => (release = r));
    },
    { scope: 'per-node' },
  );
  clock.advance(100);
  assert.equal(started, 1);
  assert.equal(job.running, true);
  clock.advance(500); // five ticks while the first run is busy
  assert.equal(started, 1);
  release();
  await sched.idle();
  assert.equal(job.running, false);
  clock.advance(100);
  assert.equal(started, 2, 'the schedule goes on after the busy run');
  release();
  await sched.idle();
  sched.stop();
});

test('a failing run is logged once as "<name> failed" and recorded; the job keeps its schedule', async () => {
  const { clock, lines, sched } = setup();
  let n = 0;
  sched.every(
    'flaky thing',
    50,
    () => {
      n++;
      if (n === 1) throw new Error('boom');
      if (n === 2) return Promise.reject(new Error('async boom'));
    },
    { scope: 'per-node', errorLevel: 'error' },
  );
  await clock.advanceAsync(50, () => sched.idle());
  assert.deepEqual(lines, [{ level: 'error', msg: 'flaky thing failed', meta: { err: 'Error: boom' } }]);
  assert.equal(sched.job('flaky thing')!.info().last_error, 'boom');
  await clock.advanceAsync(50, () => sched.idle());
  assert.equal(lines.length, 2);
  assert.equal(lines[1].meta.err, 'Error: async boom');
  await clock.advanceAsync(50, () => sched.idle());
  assert.equal(n, 3);
  assert.equal(lines.length, 2);
  const info = sched.job('flaky thing')!.info();
  assert.equal(info.last_error, null, 'a good run clears the last error');
  assert.equal(info.failures, 2);
  assert.equal(info.runs, 3);
  sched.stop();
});

test('run now: at once, after the run in flight, rejecting with the error; unknown names reject', async () => {
  const { clock, sched, lines } = setup();
  const order: string[] = [];
  let release!: () => void;
  let fail = false;
  const job = sched.every(
    'work',
    60_000,
    async () => {
      order.push(`start@${clock()}`);
      if (fail) throw new Error('nope');
      await new Promise<void>((r) => (release = r));
      order.push('end');
    },
    { scope: 'per-node' },
  );
  const first = job.runNow();
  const second = sched.runNow('work');
  const third = job.runNow(); // coalesced with the queued one
  assert.equal(second, third);
  assert.deepEqual(order, [`start@${clock()}`], 'the second waits for the first');
  release();
  await first;
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(order, [`start@${clock()}`, 'end', `start@${clock()}`], 'the queued run starts when the first ends');
  release();
  await second;
  assert.equal(order.length, 4);
  assert.equal(job.info().runs, 2);
  fail = true;
  await assert.rejects(job.runNow(), /nope/);
  assert.equal(lines.at(-1)!.msg, 'work failed');
  await assert.rejects(sched.runNow('missing'), /no job named "missing"/);
  sched.stop();
});

test('reschedule counts the new interval from now; stop ends the ticks and frees the name', async () => {
  const { clock, sched } = setup();
  let runs = 0;
  const job = sched.every('tick', 1000, () => void runs++, { scope: 'per-node' });
  clock.advance(600);
  job.reschedule(300);
  clock.advance(299);
  assert.equal(runs, 0);
  await clock.advanceAsync(1, () => sched.idle());
  assert.equal(runs, 1);
  await clock.advanceAsync(900, () => sched.idle());
  assert.equal(runs, 4);
  job.stop();
  assert.equal(job.active, false);
  assert.equal(sched.job('tick'), undefined);
  clock.advance(10_000);
  assert.equal(runs, 4);
  assert.equal(clock.pending(), 0);
  assert.throws(() => sched.every('x', 0, () => undefined, { scope: 'per-node' }), /positive interval/);
  const again = sched.every('tick', 10, () => void runs++, { scope: 'per-node' });
  assert.throws(() => sched.every('tick', 10, () => undefined, { scope: 'per-node' }), /already scheduled/);
  assert.throws(() => job.reschedule(5), /already scheduled/, 'a stopped job cannot take back a name now in use');
  clock.advance(10);
  assert.equal(runs, 5);
  sched.stop();
  assert.deepEqual(sched.list(), []);
  assert.equal(again.active, false);
  assert.equal(clock.pending(), 0);
});

test('system timers: a job runs on node time, and stop ends it', async () => {
  const { log } = recordingLog();
  const sched = new Scheduler({ log, timers: systemTimers });
  let runs = 0;
  const hold = setInterval(() => undefined, 1000); // the scheduler's timers are unref'd: keep the test alive
  const done = new Promise<void>((resolve) => {
    sched.every(
      'real',
      5,
      () => {
        if (++runs === 3) resolve();
      },
      { scope: 'per-node' },
    );
  });
  await done;
  sched.stop();
  const after = runs;
  await new Promise((r) => setTimeout(r, 30)); // not a condition: proves no run follows the stop (real timers)
  clearInterval(hold);
  assert.equal(runs, after);
});

test('the sidecar runs its periodic work on the scheduler, at the configured intervals, on the clock it is given', async () => {
  const clock = manualClock(Date.now());
  const s = await startTestServer({ GATEHOUSE_WG_POLL_INTERVAL: '5' }, { clock, timers: clock.timers, startFeatures: true });
  try {
    const jobs = new Map(s.deps.scheduler.list().map((j) => [j.name, j]));
    assert.deepEqual(Object.fromEntries([...jobs].map(([n, j]) => [n, j.every_ms])), {
      'session housekeeping': 3_600_000,
      'WireGuard poll': s.deps.config.wg.pollIntervalMs,
      'peer expiry': s.deps.config.wg.pollIntervalMs,
      'proxy reconcile': RECONCILE_INTERVAL_MS,
      'certificate expiry check': 3_600_000,
      'route auth prune': 3_600_000,
      'gateway status evaluation': 10_000,
      'access log ingestion': 1000,
      'uptime monitoring': 30_000,
      'licence-check': 60_000,
      'webhook deliveries': 30_000,
      'rdp status check': s.deps.config.rdpOps.statusIntervalMs,
      'rdp session sweep': 30_000,
      'Data quotas': s.deps.config.wg.pollIntervalMs,
    });
    // what must happen once in a cluster runs only on the leader (docs/guides/cluster.md#what-runs-once)
    assert.deepEqual(Object.fromEntries([...jobs].map(([n, j]) => [n, j.scope])), {
      'session housekeeping': 'singleton',
      'WireGuard poll': 'per-node',
      'peer expiry': 'singleton',
      'proxy reconcile': 'per-node',
      'certificate expiry check': 'singleton',
      'route auth prune': 'singleton',
      'gateway status evaluation': 'singleton',
      'access log ingestion': 'per-node',
      'uptime monitoring': 'singleton',
      'licence-check': 'per-node',
      'webhook deliveries': 'singleton',
      'rdp status check': 'singleton',
      'rdp session sweep': 'singleton',
      'Data quotas': 'singleton',
    });
    assert.equal(s.deps.config.rdpOps.statusIntervalMs, 60_000, 'RDP status every GATEHOUSE_RDP_STATUS_INTERVAL (60 s)');
    assert.equal(s.deps.config.wg.pollIntervalMs, 5000, 'the poll interval comes from its variable');
    // the webhook queue runs once at start: deliveries queued before a restart go out at once; so does the
    // RDP status check (the list shows each route's reachability right after a start)
    await s.deps.scheduler.idle();
    assert.deepEqual(Object.fromEntries([...s.deps.scheduler.list()].filter((j) => j.runs !== 0).map((j) => [j.name, j.runs])), {
      'webhook deliveries': 1,
      'rdp status check': 1,
    });
    await clock.advanceAsync(30_000, () => s.deps.scheduler.idle());
    const runs = Object.fromEntries(s.deps.scheduler.list().map((j) => [j.name, j.runs]));
    assert.deepEqual(runs, {
      'session housekeeping': 0,
      'WireGuard poll': 6,
      'peer expiry': 6,
      'proxy reconcile': 3,
      'certificate expiry check': 0,
      'route auth prune': 0,
      'gateway status evaluation': 3,
      'access log ingestion': 30,
      'uptime monitoring': 1,
      'licence-check': 0,
      'webhook deliveries': 2,
      'rdp status check': 1,
      'rdp session sweep': 1,
      'Data quotas': 6,
    });
    assert.ok(
      s.deps.scheduler.list().every((j) => j.last_error === null),
      JSON.stringify(s.deps.scheduler.list()),
    );
  } finally {
    await s.close();
  }
  assert.deepEqual(s.deps.scheduler.list(), [], 'every job stops with the server');
  assert.equal(clock.pending(), 0);
});

test('a singleton job runs only on the leader: a follower skips its ticks and runNow, and runs it at its next tick once it leads; per-node jobs run everywhere', async () => {
  const { clock, sched } = setup();
  let leader = false;
  sched.setLeadership(() => leader);
  const runs = { once: 0, here: 0 };
  const once = sched.every('once', 1000, () => void runs.once++, { scope: 'singleton' });
  sched.every('here', 1000, () => void runs.here++, { scope: 'per-node' });
  await clock.advanceAsync(3000, () => sched.idle());
  await once.runNow();
  assert.deepEqual(runs, { once: 0, here: 3 });
  assert.equal(once.info().skipped, 4);
  assert.equal(once.info().scope, 'singleton');
  leader = true;
  await clock.advanceAsync(1000, () => sched.idle());
  assert.deepEqual(runs, { once: 1, here: 4 });
  leader = false;
  await clock.advanceAsync(1000, () => sched.idle());
  assert.deepEqual(runs, { once: 1, here: 5 }, 'leadership lost: no further run');
  sched.stop();
});

test('taking the lead runs every singleton job at once and calls the listeners; a follower asks the leader through the waker, coalesced', async () => {
  const { clock, sched } = setup();
  let leader = false;
  sched.setLeadership(() => leader);
  const runs = { a: 0, b: 0, node: 0, listener: 0 };
  const a = sched.every('a', 60_000, () => void runs.a++, { scope: 'singleton' });
  sched.every('b', 60_000, () => void runs.b++, { scope: 'singleton' });
  sched.every('node', 60_000, () => void runs.node++, { scope: 'per-node' });
  sched.onLeadershipGained(() => void runs.listener++);
  const asked: string[][] = [];
  sched.setWaker((jobs) => asked.push(jobs));
  // a follower: runNow() is skipped here and asked of the leader, three asks within the window as one
  await a.runNow();
  await a.runNow();
  await sched.job('b')!.runNow();
  assert.deepEqual(asked, []);
  await clock.advanceAsync(WAKE_COALESCE_MS, () => sched.idle());
  assert.deepEqual(asked, [['a', 'b']]);
  // the answer to an ask does not ask again
  await a.runNow({ wake: false });
  await clock.advanceAsync(WAKE_COALESCE_MS, () => sched.idle());
  assert.equal(asked.length, 1);
  assert.deepEqual(runs, { a: 0, b: 0, node: 0, listener: 0 });
  // taking the lead: the singleton jobs run now (not one interval later), the per-node one keeps its schedule
  leader = true;
  await sched.leadershipGained();
  assert.deepEqual(runs, { a: 1, b: 1, node: 0, listener: 1 });
  sched.stop();
});

test('idle() waits for the runs of stopped jobs too, and gives up after its timeout', async () => {
  const { clock, sched } = setup();
  let release!: () => void;
  const job = sched.every('held', 100, () => new Promise<void>((r) => (release = r)), { scope: 'per-node' });
  clock.advance(100);
  job.stop();
  assert.equal(await sched.idle(20), false, 'the stopped job is still running');
  let done = false;
  const idle = sched.idle().then((v) => (done = v));
  await new Promise((r) => setImmediate(r));
  assert.equal(done, false);
  release();
  await idle;
  assert.equal(done, true);
  assert.equal(await sched.idle(20), true);
});

test('closing the server stops every job and waits for a run in flight before the database closes', async () => {
  const s = await startTestServer({}, {});
  let release!: () => void;
  const outcome: string[] = [];
  const job = s.deps.scheduler.every(
    'slow database job',
    3_600_000,
    async () => {
      await new Promise<void>((r) => (release = r));
      try {
        await s.deps.db.models.Peer.count();
        outcome.push('query ran');
      } catch (err) {
        outcome.push(`query failed: ${String(err)}`);
      }
    },
    { scope: 'per-node' },
  );
  const run = job.runNow();
  const closed = s.close();
  await new Promise((r) => setTimeout(r, 50)); // not a condition: proves close waits for the running job
  assert.deepEqual(outcome, [], 'close is waiting');
  release();
  await run;
  await closed;
  assert.deepEqual(outcome, ['query ran']);
  assert.deepEqual(s.deps.scheduler.list(), []);
});
