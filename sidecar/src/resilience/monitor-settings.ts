// The stored uptime monitoring interval (setting monitoring_interval_seconds).
import type { SettingsStore } from '../settings/store.js';
import { DEFAULT_MONITOR_INTERVAL_S } from './monitor.js';
import { MAX_MONITOR_INTERVAL_S, MIN_MONITOR_INTERVAL_S } from './schema.js';

export const MONITOR_INTERVAL_KEY = 'monitoring_interval_seconds';

/** The stored interval, or the default when it is missing or out of range. */
export async function monitorInterval(deps: { settings: SettingsStore }): Promise<number> {
  const v = Number(await deps.settings.get(MONITOR_INTERVAL_KEY, DEFAULT_MONITOR_INTERVAL_S));
  return Number.isInteger(v) && v >= MIN_MONITOR_INTERVAL_S && v <= MAX_MONITOR_INTERVAL_S ? v : DEFAULT_MONITOR_INTERVAL_S;
}
