// Messages of per-peer data quotas (src/quotas): field messages of the quota field and the activity
// rows of its events (80 %, 100 %, a new period, an admin's reset and grant).
import type { Catalogue } from './define.js';

/** A byte count for a person: 1.5 GB, 300 MB, 12 kB, 512 B (decimal units). */
export function quotaBytes(n: number): string {
  const units = ['B', 'kB', 'MB', 'GB', 'TB', 'PB'];
  let v = n;
  let i = 0;
  while (v >= 1000 && i < units.length - 1) {
    v /= 1000;
    i++;
  }
  return `${i === 0 ? v : v >= 100 ? Math.round(v) : Math.round(v * 10) / 10} ${units[i]}`;
}

export const quotas = {
  'quota.field.throttle_kbit_required': () => 'required when the action is throttle (the speed in kbit/s)',
  'quota.field.resets_on_weekly': () => 'must be an ISO weekday 1 (Monday) to 7 (Sunday) for a weekly period',
  'quota.field.resets_on_daily': () => 'a daily period starts at midnight: leave resets_on out',
  'quota.no_quota': () => 'This peer has no data quota (neither its own nor its group’s)',
  'quota.warning': (p: { name: string; used: number; limit: number }) =>
    `Peer ${p.name} used 80 % of its data quota (${quotaBytes(p.used)} of ${quotaBytes(p.limit)})`,
  'quota.exceeded': (p: { name: string; used: number; limit: number; action: 'disable' | 'throttle' | null }) =>
    `Peer ${p.name} used its data quota (${quotaBytes(p.used)} of ${quotaBytes(p.limit)})${p.action === 'disable' ? ': disabled until the next period' : p.action === 'throttle' ? ': throttled until the next period' : ''}`,
  'quota.reset_period': (p: { name: string }) => `Data quota of peer ${p.name}: a new period started, its count starts at zero`,
  'quota.reset_admin': (p: { name: string }) => `Data quota of peer ${p.name}: the period's count was reset to zero`,
  'quota.granted': (p: { name: string; bytes: number }) => `Data quota of peer ${p.name}: ${quotaBytes(p.bytes)} granted for this period`,
} satisfies Catalogue;
