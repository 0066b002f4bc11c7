// Time for the sidecar: a clock (epoch milliseconds) and the timers that periodic work runs on
// (util/scheduler.ts). Both are injectable: tests pass manualClock(), whose time moves only when the
// test says so and whose timers fire when that time passes their due time, without sleeping.

/** Injectable clock: epoch milliseconds. Tests pass a controllable one. */
export type Clock = () => number;
export const systemClock: Clock = () => Date.now();

/** An armed one-shot timer. */
export interface TimerHandle {
  cancel(): void;
}

/** Where one-shot timers are armed: node's timers, or a manual clock's queue. */
export interface Timers {
  /** Calls fn once, ms from now. */
  after(ms: number, fn: () => void): TimerHandle;
}

/** node's setTimeout, unref'd: a pending timer never keeps the process alive. */
export const systemTimers: Timers = {
  after(ms, fn) {
    const t = setTimeout(fn, Math.max(0, ms));
    t.unref();
    return { cancel: () => clearTimeout(t) };
  },
};

export interface ManualClock extends Clock {
  /** Moves time forward by ms, firing every timer that falls due on the way, in due order. */
  advance(ms: number): void;
  /**
   * Like advance(), but after each timer that fires awaits settle() (e.g. the scheduler's idle()),
   * so async work started by one timer finishes before time moves on to the next.
   */
  advanceAsync(ms: number, settle?: () => Promise<unknown>): Promise<void>;
  /** Sets the time (forward or back) without firing timers. */
  set(ms: number): void;
  /** Timers driven by this clock. */
  readonly timers: Timers;
  /** How many timers are armed and not yet fired. */
  pending(): number;
}

export function manualClock(start = Date.UTC(2026, 0, 1)): ManualClock {
  let now = start;
  let seq = 0;
  // Armed timers; fired in due order, and in arming order at equal due times.
  const queue: { due: number; seq: number; fn: () => void }[] = [];
  const next = (until: number) => {
    let best = -1;
    for (let i = 0; i < queue.length; i++) {
      const t = queue[i];
      if (t.due > until) continue;
      if (best < 0 || t.due < queue[best].due || (t.due === queue[best].due && t.seq < queue[best].seq)) best = i;
    }
    return best < 0 ? null : queue.splice(best, 1)[0];
  };
  const c = (() => now) as ManualClock;
  c.advance = (ms: number) => {
    const target = now + ms;
    for (let t = next(target); t; t = next(target)) {
      now = Math.max(now, t.due);
      t.fn();
    }
    now = target;
  };
  c.advanceAsync = async (ms: number, settle?: () => Promise<unknown>) => {
    const target = now + ms;
    for (let t = next(target); t; t = next(target)) {
      now = Math.max(now, t.due);
      t.fn();
      await (settle ? settle() : Promise.resolve());
    }
    now = target;
  };
  c.set = (ms: number) => {
    now = ms;
  };
  c.pending = () => queue.length;
  Object.defineProperty(c, 'timers', {
    value: {
      after(ms: number, fn: () => void): TimerHandle {
        const entry = { due: now + Math.max(0, ms), seq: seq++, fn };
        queue.push(entry);
        return {
          cancel: () => {
            const i = queue.indexOf(entry);
            if (i >= 0) queue.splice(i, 1);
          },
        };
      },
    } satisfies Timers,
  });
  return c;
}
