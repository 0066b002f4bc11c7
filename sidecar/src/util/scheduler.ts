// The one scheduler for the sidecar's periodic work (WireGuard poll and resync, proxy reconcile,
// access-log ingestion, uptime monitoring, gateway status, route-auth and session housekeeping).
//
// - every(name, ms, run): runs `run` every ms, at a fixed rate from when it was scheduled (like
//   setInterval). A run never overlaps itself: a tick that comes while the last run is still busy is
//   skipped. The timers never keep the process alive.
// - A run that throws or rejects is logged once as "<name> failed" (with the error) and recorded on
//   the job (lastError); the job keeps its schedule.
// - job.runNow(): a run at once, outside the schedule (after the one in flight, if any); resolves
//   when it is done and rejects with its error.
// - job.reschedule(ms): a new interval from now; job.stop() / scheduler.stop(): no further ticks
//   (a run in flight finishes); scheduler.idle(): resolves when no run is in flight, stopped jobs'
//   included (the server waits for it before it closes the database).
// - Time comes from the injected Timers: node's (systemTimers) in production, a manual clock's in
//   tests (util/clock.ts manualClock), so a test advances time and sees jobs run without sleeping.
// - cron(name, rule, run): runs `run` at the wall-clock times of a cron rule (node-schedule: five or six
//   fields, server local time), never overlapping itself, its runs tracked like the others (idle()).
//   These follow the real clock, not the injected Timers (auto-backup jobs: "daily at 03:00").
// - Every job says where it runs (JobOptions.scope, required): 'singleton' work must happen once in a
//   cluster and runs only while this node is the leader (setLeadership; src/cluster/leader.ts), a
//   tick or runNow() on a follower is skipped (counted as `skipped`); 'per-node' work (this node's
//   WireGuard, Caddy, its heartbeat) runs on every node. Without a cluster this node is always the
//   leader, so both run.
// - Taking over (leadershipGained(), told by the cluster service when this node takes the lead):
//   every singleton job runs at once, so work that fell due while no node led (a webhook delivery,
//   a peer's expiry) is done within the takeover and not one interval later; the listeners of
//   onLeadershipGained() run too (the backup jobs make the scheduled runs missed in the gap).
// - Waking the leader: runNow() of a singleton job on a follower cannot run it here; it asks the
//   waker (setWaker: the cluster's change feed) to have the leader run it now (a webhook queued on a
//   follower goes out at once, not at the leader's next safety tick). Asks within 50 ms are sent
//   as one.
import schedule from 'node-schedule';
import type { Logger } from './logger.js';
import { systemClock, systemTimers, type Clock, type TimerHandle, type Timers } from './clock.js';

export interface SchedulerOptions {
  log: Logger;
  clock?: Clock;
  timers?: Timers;
}

/** Where a job runs in a cluster: only on the leader, or on every node (docs/guides/cluster.md#what-runs-once). */
export type JobScope = 'singleton' | 'per-node';

export interface JobOptions {
  /** 'singleton': only on the leader (work that must happen once); 'per-node': on every node. */
  scope: JobScope;
  /** Level of the "<name> failed" line (default warn). */
  errorLevel?: 'warn' | 'error';
}

/** What a job looks like from outside (status pages, tests). */
export interface JobInfo {
  name: string;
  scope: JobScope;
  every_ms: number;
  active: boolean;
  running: boolean;
  runs: number;
  /** ticks and runNow() calls skipped because this node is not the leader (singleton jobs) */
  skipped: number;
  failures: number;
  last_run_at: number | null;
  last_duration_ms: number | null;
  last_error: string | null;
}

/** Asks of followers to run a singleton job within this window go to the leader as one. */
export const WAKE_COALESCE_MS = 50;

export class Job {
  private timer: TimerHandle | null = null;
  private inFlight: Promise<void> | null = null;
  private queued: Promise<void> | null = null;
  private runs = 0;
  private skipped = 0;
  private failures = 0;
  private lastRunAt: number | null = null;
  private lastDurationMs: number | null = null;
  private lastError: string | null = null;

  constructor(
    private readonly owner: Scheduler,
    readonly name: string,
    private interval: number,
    private readonly fn: () => unknown,
    private readonly opts: JobOptions,
  ) {
    if (!(interval > 0) || !Number.isFinite(interval)) throw new Error(`scheduler: job "${name}" needs a positive interval, got ${interval}`);
  }

  get everyMs(): number {
    return this.interval;
  }
  /** Scheduled (not stopped). */
  get active(): boolean {
    return this.timer !== null;
  }
  get running(): boolean {
    return this.inFlight !== null;
  }

  /** Arms the next tick, interval ms from now. */
  arm(): void {
    this.timer?.cancel();
    this.timer = this.owner.timers.after(this.interval, () => {
      this.arm();
      if (!this.inFlight && this.mayRun()) void this.run().catch(() => undefined);
    });
  }

  get scope(): JobScope {
    return this.opts.scope;
  }

  /** A singleton job runs only on the leader; a skipped run is counted. */
  private mayRun(): boolean {
    if (this.opts.scope === 'per-node' || this.owner.isLeader()) return true;
    this.skipped++;
    return false;
  }

  /**
   * A run at once (after the run in flight, if one is); rejects with the run's error. A singleton job
   * on a follower: skipped (resolves), and the leader is asked to run it (unless `wake` is false:
   * the answer to such an ask).
   */
  runNow(o: { wake?: boolean } = {}): Promise<void> {
    if (!this.mayRun()) {
      if (o.wake !== false) this.owner.wakeLeader(this.name);
      return Promise.resolve();
    }
    if (!this.inFlight) return this.run();
    this.queued ??= this.inFlight
      .catch(() => undefined)
      .then(() => {
        this.queued = null;
        return this.run();
      });
    return this.queued;
  }

  /** A new interval, counted from now; arms the job when it was stopped. */
  reschedule(everyMs: number): void {
    if (!(everyMs > 0) || !Number.isFinite(everyMs)) throw new Error(`scheduler: job "${this.name}" needs a positive interval, got ${everyMs}`);
    this.interval = everyMs;
    this.owner.adopt(this);
    this.arm();
  }

  /** No further ticks; a run in flight finishes. */
  stop(): void {
    this.timer?.cancel();
    this.timer = null;
    this.owner.forget(this);
  }

  /** Resolves when no run of this job is in flight. */
  async idle(): Promise<void> {
    while (this.inFlight || this.queued) await (this.queued ?? this.inFlight)!.catch(() => undefined);
  }

  info(): JobInfo {
    return {
      name: this.name,
      scope: this.opts.scope,
      every_ms: this.interval,
      active: this.active,
      running: this.running,
      runs: this.runs,
      skipped: this.skipped,
      failures: this.failures,
      last_run_at: this.lastRunAt,
      last_duration_ms: this.lastDurationMs,
      last_error: this.lastError,
    };
  }

  private run(): Promise<void> {
    const clock = this.owner.clock;
    const t0 = clock();
    this.runs++;
    this.lastRunAt = t0;
    // fn is called synchronously, and may finish (throw) before p is assigned below
    let finished = false;
    const p = (async () => {
      try {
        await this.fn();
        this.lastError = null;
      } catch (err) {
        this.failures++;
        this.lastError = String((err as Error)?.message ?? err);
        this.owner.log[this.opts.errorLevel ?? 'warn'](`${this.name} failed`, { err: String(err) });
        throw err;
      } finally {
        this.lastDurationMs = clock() - t0;
        this.inFlight = null;
        finished = true;
      }
    })();
    if (!finished) {
      this.inFlight = p;
      this.owner.track(p);
    }
    return p;
  }
}

/** A cron job of the scheduler (Scheduler.cron). */
export interface CronHandle {
  name: string;
  /** epoch ms of the next run (null: none) */
  next(): number | null;
  cancel(): void;
}

export class Scheduler {
  readonly log: Logger;
  readonly clock: Clock;
  readonly timers: Timers;
  private readonly jobs = new Map<string, Job>();
  private readonly running = new Set<Promise<void>>();
  private leader: () => boolean = () => true;
  private waker: ((jobs: string[]) => void) | null = null;
  private wakes = new Set<string>();
  private wakeTimer: TimerHandle | null = null;
  private readonly gainedListeners: (() => unknown)[] = [];

  constructor(o: SchedulerOptions) {
    this.log = o.log;
    this.clock = o.clock ?? systemClock;
    this.timers = o.timers ?? systemTimers;
  }

  /** The gate singleton jobs consult at each run: whether this node leads (default: always, one node). */
  setLeadership(isLeader: () => boolean): void {
    this.leader = isLeader;
  }

  /** Whether singleton jobs run here now. */
  isLeader(): boolean {
    return this.leader();
  }

  /** Who asks the leader to run a singleton job now (the cluster's change feed); null: nobody (one node). */
  setWaker(waker: ((jobs: string[]) => void) | null): void {
    this.waker = waker;
  }

  /** @internal a follower's runNow() of a singleton job: the leader is asked (coalesced over WAKE_COALESCE_MS). */
  wakeLeader(name: string): void {
    if (!this.waker) return;
    this.wakes.add(name);
    this.wakeTimer ??= this.timers.after(WAKE_COALESCE_MS, () => {
      this.wakeTimer = null;
      const names = [...this.wakes];
      this.wakes.clear();
      this.waker?.(names);
    });
  }

  /** Runs when this node takes the lead (after the singleton jobs' runs are started). */
  onLeadershipGained(fn: () => unknown): void {
    this.gainedListeners.push(fn);
  }

  /**
   * This node has just taken the lead: every singleton job runs now and the listeners are called.
   * Resolves when all of them are done (a failure is logged by its job; a listener's here).
   */
  async leadershipGained(): Promise<void> {
    const runs = [...this.jobs.values()].filter((j) => j.scope === 'singleton').map((j) => j.runNow({ wake: false }).catch(() => undefined));
    for (const fn of this.gainedListeners) {
      try {
        await fn();
      } catch (err) {
        this.log.warn('taking the lead: a listener failed', { err: String(err) });
      }
    }
    await Promise.all(runs);
  }

  /**
   * Runs fn every everyMs from now on (first run everyMs from now). The name identifies the job
   * (one active job per name) and heads its error line: "<name> failed".
   */
  every(name: string, everyMs: number, fn: () => unknown, opts: JobOptions): Job {
    if (this.jobs.has(name)) throw new Error(`scheduler: a job named "${name}" is already scheduled`);
    const job = new Job(this, name, everyMs, fn, opts);
    this.jobs.set(name, job);
    job.arm();
    return job;
  }

  job(name: string): Job | undefined {
    return this.jobs.get(name);
  }

  list(): JobInfo[] {
    return [...this.jobs.values()].map((j) => j.info());
  }

  /** Runs the named job at once; rejects when there is no such job or the run fails. */
  runNow(name: string): Promise<void> {
    const job = this.jobs.get(name);
    if (!job) return Promise.reject(new Error(`scheduler: no job named "${name}"`));
    return job.runNow();
  }

  /**
   * Resolves true when no job, stopped ones included, has a run in flight (runs queued by runNow
   * included); false when timeoutMs (node time) passes first.
   */
  async idle(timeoutMs?: number): Promise<boolean> {
    const all = (async () => {
      for (;;) {
        const jobs = [...this.jobs.values()].filter((j) => j.running);
        if (!this.running.size && !jobs.length) return true;
        await Promise.all([...[...this.running].map((p) => p.catch(() => undefined)), ...jobs.map((j) => j.idle())]);
      }
    })();
    if (timeoutMs === undefined) return all;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<boolean>((r) => (timer = setTimeout(() => r(false), timeoutMs)));
    try {
      return await Promise.race([all, late]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** @internal every run in flight, of active and stopped jobs */
  track(p: Promise<void>): void {
    this.running.add(p);
    void p.catch(() => undefined).finally(() => this.running.delete(p));
  }

  /** Stops every job (runs in flight finish). */
  stop(): void {
    this.wakeTimer?.cancel();
    this.wakeTimer = null;
    for (const j of [...this.jobs.values()]) j.stop();
    for (const c of [...this.crons.values()]) c.cancel();
  }

  private readonly crons = new Map<string, CronHandle>();

  /**
   * Runs fn at the times of a cron rule (one cron job per name; scheduling a name again replaces it).
   * A run that comes while the last one is busy is skipped; errors are logged as "<name> failed".
   */
  cron(name: string, rule: string, fn: () => unknown, opts: JobOptions): CronHandle {
    this.crons.get(name)?.cancel();
    let inFlight: Promise<void> | null = null;
    const job = schedule.scheduleJob(name, rule, () => {
      if (inFlight || (opts.scope === 'singleton' && !this.isLeader())) return;
      inFlight = (async () => {
        try {
          await fn();
        } catch (err) {
          this.log[opts.errorLevel ?? 'warn'](`${name} failed`, { err: String(err) });
        } finally {
          inFlight = null;
        }
      })();
      this.track(inFlight);
    });
    if (!job) throw new Error(`scheduler: "${rule}" is not a cron rule`);
    const handle: CronHandle = {
      name,
      next: () => job.nextInvocation()?.getTime() ?? null,
      cancel: () => {
        job.cancel();
        if (this.crons.get(name) === handle) this.crons.delete(name);
      },
    };
    this.crons.set(name, handle);
    return handle;
  }

  /** @internal a rescheduled job takes its name again */
  adopt(job: Job): void {
    const other = this.jobs.get(job.name);
    if (other && other !== job) throw new Error(`scheduler: a job named "${job.name}" is already scheduled`);
    this.jobs.set(job.name, job);
  }

  /** @internal a stopped job gives its name back */
  forget(job: Job): void {
    if (this.jobs.get(job.name) === job) this.jobs.delete(job.name);
  }
}
