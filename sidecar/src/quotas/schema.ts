// Per-peer data quotas (zod; browser-safe: the admin app checks its form with it): the `quota` field
// of peers and peer groups, the derived `quota_state` of the peer view, the bodies of the reset and
// grant endpoints, and the period arithmetic (periodOf), in the server's time zone.
import { z } from 'zod';
import { UNPROCESSABLE } from '../http/fields.js';
import { fieldIssue } from '../http/messages.js';
import { msg } from '@gatehouse/common/messages/index.js';
import { KBIT_MAX, KBIT_MIN } from '../shaping/schema.js';

export const QUOTA_PERIODS = ['daily', 'weekly', 'monthly'] as const;
export const QUOTA_ACTIONS = ['disable', 'throttle'] as const;
export const QUOTA_STATES = ['ok', 'warned', 'exceeded'] as const;
/** The share of the limit at which the warning is sent. */
export const WARN_AT = 0.8;
/** The largest byte count (the largest whole number a JSON number carries exactly, about 9 PB). */
export const BYTES_MAX = Number.MAX_SAFE_INTEGER;

const byteCount = z.number().int().min(1).max(BYTES_MAX);

/**
 * `quota`: bytes per period (rx + tx as the poller counts them, both directions together); at 80 %
 * a warning, at 100 % the action until the next period. On a peer, null means its group's default
 * applies; an object is the peer's own and wins.
 */
export const quota = z
  .strictObject({
    bytes: byteCount.meta({ description: 'bytes per period, received and sent together' }),
    period: z.enum(QUOTA_PERIODS).meta({ description: "daily (from midnight), weekly or monthly; in the server's time zone" }),
    resets_on: z.number().int().min(1).max(31).nullable().optional().meta({
      description:
        'weekly: the ISO weekday the period starts on (1 = Monday … 7 = Sunday, default 1); monthly: the day of the month (1 to 31, default 1; past the end of a shorter month: its last day); daily: none',
    }),
    action: z.enum(QUOTA_ACTIONS).meta({ description: 'at 100 %: disable (the peer leaves the tunnel) or throttle (capped at throttle_kbit both ways)' }),
    throttle_kbit: z
      .number()
      .int()
      .min(KBIT_MIN)
      .max(KBIT_MAX)
      .nullable()
      .optional()
      .meta({ description: 'kbit/s both ways while throttled; required with action throttle' }),
  })
  .superRefine((q, ctx) => {
    if (q.action === 'throttle' && (q.throttle_kbit === undefined || q.throttle_kbit === null))
      ctx.addIssue(fieldIssue(msg('quota.field.throttle_kbit_required'), { path: ['throttle_kbit'], params: UNPROCESSABLE }));
    if (typeof q.resets_on === 'number') {
      if (q.period === 'weekly' && q.resets_on > 7)
        ctx.addIssue(fieldIssue(msg('quota.field.resets_on_weekly'), { path: ['resets_on'], params: UNPROCESSABLE }));
      if (q.period === 'daily') ctx.addIssue(fieldIssue(msg('quota.field.resets_on_daily'), { path: ['resets_on'], params: UNPROCESSABLE }));
    }
  })
  .meta({ description: 'a data quota per period; at 80 % a warning, at 100 % the action until the next period' });
export type QuotaInput = z.input<typeof quota>;

/** A quota as stored and answered: every key present. */
export const quotaView = z
  .object({
    bytes: z.number().int(),
    period: z.enum(QUOTA_PERIODS),
    resets_on: z.number().int().nullable(),
    action: z.enum(QUOTA_ACTIONS),
    throttle_kbit: z.number().int().nullable(),
  })
  .meta({ description: 'a data quota per period' });
export type Quota = z.infer<typeof quotaView>;

/** The derived state a peer view carries (stored by the quota service at its last check). */
export const quotaState = z
  .object({
    source: z.enum(['peer', 'group']).meta({ description: "whose quota counts: the peer's own or its group's default" }),
    used_bytes: z.number().int().meta({ description: 'bytes counted this period (after an admin reset: since the reset)' }),
    limit_bytes: z.number().int().meta({ description: "the quota's bytes plus the bytes granted this period" }),
    granted_bytes: z.number().int().meta({ description: 'bytes granted this period' }),
    period_start: z.string().meta({ format: 'date-time' }),
    period_end: z.string().meta({ format: 'date-time' }),
    percent: z.number().meta({ description: 'used_bytes / limit_bytes × 100, one decimal' }),
    state: z.enum(QUOTA_STATES).meta({ description: 'ok, warned (80 % reached this period) or exceeded (100 %)' }),
    action_applied: z.enum(QUOTA_ACTIONS).nullable().meta({ description: 'what the quota does to the peer now; null: nothing' }),
    checked_at: z.string().meta({ format: 'date-time', description: 'when the quota service counted last' }),
  })
  .nullable()
  .meta({ description: 'use against the data quota this period; null: no quota (own or group)' });
export type QuotaState = z.infer<typeof quotaState>;

export const grantBody = z.strictObject({
  bytes: byteCount.meta({ description: 'extra bytes for this period (added to what was granted before)' }),
});

/** A stored quota column (JSON text) → the API value; anything unreadable is no quota. */
export function parseQuota(v: unknown): Quota | null {
  if (v === null || v === undefined || v === '') return null;
  try {
    const r = quota.safeParse(typeof v === 'string' ? JSON.parse(v) : v);
    return r.success ? normalizeQuota(r.data) : null;
  } catch {
    return null;
  }
}
function normalizeQuota(q: z.output<typeof quota>): Quota {
  return {
    bytes: q.bytes,
    period: q.period,
    resets_on: q.period === 'daily' ? null : (q.resets_on ?? null),
    action: q.action,
    throttle_kbit: q.throttle_kbit ?? null,
  };
}
export const storeQuota = (v: z.output<typeof quota> | null): string | null => (v ? JSON.stringify(normalizeQuota(v)) : null);

/** The quota that applies to a peer: its own, else its group's default. */
export function effectiveQuota(own: Quota | null, group: Quota | null): (Quota & { source: 'peer' | 'group' }) | null {
  if (own) return { ...own, source: 'peer' };
  if (group) return { ...group, source: 'group' };
  return null;
}

/**
 * The period holding `now` (epoch ms), [start, end), in the process's local time zone (TZ):
 * daily from midnight; weekly from midnight of the ISO weekday resets_on (default Monday);
 * monthly from midnight of the day resets_on (default 1; in a shorter month its last day).
 */
export function periodOf(q: Pick<Quota, 'period' | 'resets_on'>, now: number): { start: number; end: number } {
  const d = new Date(now);
  const y = d.getFullYear();
  const m = d.getMonth();
  const day = d.getDate();
  if (q.period === 'daily') return { start: new Date(y, m, day).getTime(), end: new Date(y, m, day + 1).getTime() };
  if (q.period === 'weekly') {
    const iso = ((d.getDay() + 6) % 7) + 1;
    const back = (iso - (q.resets_on ?? 1) + 7) % 7;
    return { start: new Date(y, m, day - back).getTime(), end: new Date(y, m, day - back + 7).getTime() };
  }
  const r = q.resets_on ?? 1;
  // the reset day of month `mm` of year y (months past 11 or below 0 roll into the next or last year)
  const resetIn = (mm: number) => new Date(y, mm, Math.min(r, new Date(y, mm + 1, 0).getDate())).getTime();
  const here = resetIn(m);
  return here <= now ? { start: here, end: resetIn(m + 1) } : { start: resetIn(m - 1), end: here };
}

/** ok / warned / exceeded for a count against a limit. */
export function levelOf(used: number, limit: number): (typeof QUOTA_STATES)[number] {
  if (used >= limit) return 'exceeded';
  return used >= limit * WARN_AT ? 'warned' : 'ok';
}

/** The peer row's quota columns the view reads (079). */
export interface QuotaColumns {
  quota: string | null;
  quota_period_start: number | null;
  quota_period_end: number | null;
  quota_used: number | null;
  quota_limit: number | null;
  quota_grant: number | null;
  quota_state: string | null;
  quota_action: string | null;
  quota_checked_at: number | null;
}
export const QUOTA_VIEW_ATTRS = [
  'quota',
  'quota_period_start',
  'quota_period_end',
  'quota_used',
  'quota_limit',
  'quota_grant',
  'quota_state',
  'quota_action',
  'quota_checked_at',
] as const satisfies readonly (keyof QuotaColumns)[];

const n = (v: unknown) => Number(v ?? 0);
/** quota_state of the peer view, from what the quota service stored at its last check (null: no quota counted). */
export function quotaStateOf(r: QuotaColumns): QuotaState {
  if (r.quota_period_start === null || r.quota_period_start === undefined || r.quota_limit === null || r.quota_limit === undefined) return null;
  const used = n(r.quota_used);
  const limit = n(r.quota_limit);
  const state = (QUOTA_STATES as readonly string[]).includes(r.quota_state ?? '') ? (r.quota_state as (typeof QUOTA_STATES)[number]) : 'ok';
  return {
    source: r.quota ? 'peer' : 'group',
    used_bytes: used,
    limit_bytes: limit,
    granted_bytes: n(r.quota_grant),
    period_start: new Date(n(r.quota_period_start)).toISOString(),
    period_end: new Date(n(r.quota_period_end)).toISOString(),
    percent: limit > 0 ? Math.round((used / limit) * 1000) / 10 : 0,
    state,
    action_applied: r.quota_action === 'disable' || r.quota_action === 'throttle' ? r.quota_action : null,
    checked_at: new Date(n(r.quota_checked_at)).toISOString(),
  };
}

/** The state columns of a peer without a counted quota (a new peer; a quota removed). */
export const NO_QUOTA_STATE = {
  quota_period_start: null,
  quota_period_end: null,
  quota_used: null,
  quota_limit: null,
  quota_offset: null,
  quota_grant: null,
  quota_state: null,
  quota_action: null,
  quota_checked_at: null,
} as const;
