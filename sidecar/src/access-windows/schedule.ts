// Access windows, the pure core: whether a schedule is open at an instant, and the next instant its
// state changes. No I/O, no clock of its own; time zones through Intl (the IANA database of the ICU
// that node and the browsers ship).
//
// A schedule is judged by the wall clock of its timezone: at instant t it is open when one of its
// windows covers the local weekday (1 = Monday … 7 = Sunday, ISO 8601) and the local time of day.
// - from < to: open on the window's days from `from` (inclusive) to `to` (exclusive); `to` may be
//   "24:00" (the end of the day).
// - from > to: the window crosses midnight: open from `from` on one of its days until `to` on the
//   next day (a Friday 22:00–02:00 window is open Friday 22:00 to Saturday 02:00).
// - DST: the state follows the local wall clock. When clocks go forward (Europe/Berlin, last
//   Sunday of March, 02:00 → 03:00) a boundary inside the skipped hour takes effect at the jump;
//   when they go back (last Sunday of October, 03:00 → 02:00) the repeated hour is judged twice
//   as it reads on the clock each time.
// `null` (no schedule) is always open.

import type { AccessSchedule } from './schema.js';
import { minutesOf } from './time.js';

const MINUTE = 60_000;
const DAY_MS = 86_400_000;
/** How far ahead nextChange looks: a week and a day covers every weekly pattern and a DST change. */
const HORIZON_MS = 8 * DAY_MS;

const formatters = new Map<string, Intl.DateTimeFormat>();
function formatter(tz: string): Intl.DateTimeFormat {
  let f = formatters.get(tz);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: tz,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(tz, f);
  }
  return f;
}

/** The local wall clock of an instant in a time zone. */
export interface Local {
  /** ISO weekday, 1 = Monday … 7 = Sunday */
  weekday: number;
  /** whole minutes since local midnight */
  minute: number;
  /** local time minus UTC, in ms */
  offset: number;
}

export function localOf(t: number, tz: string): Local {
  const p: Record<string, number> = {};
  for (const part of formatter(tz).formatToParts(new Date(t))) if (part.type !== 'literal') p[part.type] = Number(part.value);
  const wall = Date.UTC(p.year, p.month - 1, p.day, p.hour % 24, p.minute, p.second);
  const sec = Math.floor(t / 1000) * 1000;
  const weekday = ((new Date(Date.UTC(p.year, p.month - 1, p.day)).getUTCDay() + 6) % 7) + 1;
  return { weekday, minute: (p.hour % 24) * 60 + p.minute, offset: wall - sec };
}

const prevDay = (d: number) => (d === 1 ? 7 : d - 1);

/** Whether the schedule is open at instant t (epoch ms). null: always open. */
export function isOpenAt(schedule: AccessSchedule | null, t: number): boolean {
  if (!schedule) return true;
  const { weekday, minute } = localOf(t, schedule.timezone);
  for (const w of schedule.windows) {
    const from = minutesOf(w.from);
    const to = minutesOf(w.to);
    if (from < to) {
      if (w.days.includes(weekday) && minute >= from && minute < to) return true;
    } else if (from > to) {
      if (w.days.includes(weekday) && minute >= from) return true;
      if (w.days.includes(prevDay(weekday)) && minute < to) return true;
    }
  }
  return false;
}

/** The first instant in (a, b] whose UTC offset differs from a's (b's offset differs from a's). */
function transitionBetween(a: number, b: number, tz: string): number {
  const off = localOf(a, tz).offset;
  // offsets change on whole minutes: search minute-aligned instants (a's minute has a's offset)
  let lo = Math.floor(a / MINUTE) * MINUTE;
  let hi = b;
  while (hi - lo > MINUTE) {
    const mid = lo + Math.floor((hi - lo) / MINUTE / 2) * MINUTE;
    if (localOf(mid, tz).offset === off) lo = mid;
    else hi = mid;
  }
  return hi;
}

/**
 * The next instant after t at which the schedule's state (isOpenAt) differs from its state at t,
 * or null when it never changes (no schedule, or one that is always open or always closed).
 */
export function nextChange(schedule: AccessSchedule | null, t: number): number | null {
  if (!schedule || schedule.windows.length === 0) return null;
  const tz = schedule.timezone;
  const now = isOpenAt(schedule, t);
  const bounds = [...new Set(schedule.windows.flatMap((w) => [minutesOf(w.from), minutesOf(w.to) % 1440]))].map((m) => m * MINUTE);
  let cur = t;
  while (cur - t <= HORIZON_MS) {
    const l = localOf(cur, tz);
    const wallMs = (((cur + l.offset) % DAY_MS) + DAY_MS) % DAY_MS;
    let delta = DAY_MS;
    for (const b of bounds) {
      const d = (((b - wallMs) % DAY_MS) + DAY_MS) % DAY_MS;
      if (d > 0 && d < delta) delta = d;
    }
    let next = cur + delta;
    // the offset changed on the way: the wall clock jumped, the state may change at the jump
    if (localOf(next, tz).offset !== l.offset) next = transitionBetween(cur, next, tz);
    if (isOpenAt(schedule, next) !== now) return next;
    cur = next;
  }
  return null;
}

/** The state of a schedule at t: open or not, and when that changes (null: never). */
export function scheduleState(schedule: AccessSchedule | null, t: number): { open: boolean; next_change_at: number | null } {
  return { open: isOpenAt(schedule, t), next_change_at: schedule ? nextChange(schedule, t) : null };
}

/** A route's or peer's access_state in the API (access-windows/schema.ts accessState). */
export function accessStateOf(
  schedule: AccessSchedule | null,
  now: number,
  closedAnswers = 0,
): { open: boolean; next_change_at: string | null; closed_answers: number } {
  const s = scheduleState(schedule, now);
  return { open: s.open, next_change_at: s.next_change_at === null ? null : new Date(s.next_change_at).toISOString(), closed_answers: closedAnswers };
}

const parsed = new Map<string, AccessSchedule | null>();
/** A stored access_schedule (JSON text, or already parsed) → the schedule; null/empty/unreadable: none. */
export function parseSchedule(v: unknown): AccessSchedule | null {
  if (v === null || v === undefined || v === '') return null;
  if (typeof v !== 'string') return v as AccessSchedule;
  let s = parsed.get(v);
  if (s === undefined) {
    try {
      s = JSON.parse(v) as AccessSchedule;
    } catch {
      s = null;
    }
    if (parsed.size > 10_000) parsed.clear();
    parsed.set(v, s);
  }
  return s;
}
