// Key/value settings (JSON values) with typed defaults. Cached in memory; every write goes
// through set(), which updates the cache.
import type { Models } from '../db/models.js';
import type { Clock } from '../util/clock.js';
import { findRowByPk, findRows } from '../db/define.js';

export const SETTING_DEFAULTS = {
  'security.lockout.max_attempts': 5,
  /** minutes an account stays locked; also the window in which failures are counted */
  'security.lockout.duration': 15,
  /** every admin-UI account needs a second factor (TOTP): a sign-in without one enrols first (auth/second-factor.ts) */
  'security.second_factor.required': false as boolean,
  'ui.default_theme': 'default' as 'pro' | 'default',
  'ui.default_language': 'en' as 'en' | 'de',
};
export type SettingKey = keyof typeof SETTING_DEFAULTS;

export class SettingsStore {
  private cache = new Map<string, unknown>();
  private loaded = false;
  /** Told the key of every write once it is stored (the cluster's change feed: the other nodes drop their caches). */
  onWrite: ((key: string) => void) | null = null;
  constructor(
    private models: Models,
    private clock: Clock,
  ) {}

  private async load(): Promise<void> {
    if (this.loaded) return;
    const rows = await findRows(this.models.Setting);
    for (const r of rows) {
      try {
        this.cache.set(r.key, JSON.parse(r.value));
      } catch {
        /* ignore a corrupt value: the default applies */
      }
    }
    this.loaded = true;
  }

  async get<K extends SettingKey>(key: K): Promise<(typeof SETTING_DEFAULTS)[K]>;
  async get<T>(key: string, fallback: T): Promise<T>;
  async get(key: string, fallback?: unknown): Promise<unknown> {
    await this.load();
    if (this.cache.has(key)) return this.cache.get(key);
    return key in SETTING_DEFAULTS ? SETTING_DEFAULTS[key as SettingKey] : fallback;
  }

  async set(key: string, value: unknown): Promise<void> {
    await this.load();
    await this.models.Setting.upsert({ key, value: JSON.stringify(value), updated_at: this.clock() });
    this.cache.set(key, value);
    this.onWrite?.(key);
  }

  /**
   * Stores value unless the key already has one in the database (another node of a cluster may have
   * stored it first, after this node's cache was loaded): returns the value that stays, and caches it.
   */
  async setIfAbsent<T>(key: string, value: T): Promise<T> {
    await this.load();
    await this.models.Setting.bulkCreate([{ key, value: JSON.stringify(value), updated_at: this.clock() }], { ignoreDuplicates: true });
    const row = await findRowByPk(this.models.Setting, key);
    const stored = row ? (JSON.parse(row.value) as T) : value;
    this.cache.set(key, stored);
    return stored;
  }

  /** A key's value as the database holds it now (not the cache), with its stored text for compareAndSet (null: no row). */
  async current<T>(key: string, fallback: T): Promise<{ value: T; text: string | null }> {
    const row = await findRowByPk(this.models.Setting, key);
    if (!row) return { value: fallback, text: null };
    try {
      return { value: JSON.parse(row.value) as T, text: row.value };
    } catch {
      return { value: fallback, text: row.value };
    }
  }

  /**
   * Writes value only while the stored text is still `text` (null: while the key has no row), as one
   * statement: of two nodes that read the same value and race, one writes. Resolves whether it wrote.
   */
  async compareAndSet(key: string, text: string | null, value: unknown): Promise<boolean> {
    await this.load();
    const next = JSON.stringify(value);
    let wrote: boolean;
    if (text === null) {
      // no row yet: whichever node inserts first wins (setIfAbsent), this one if the value that stays is its own
      wrote = JSON.stringify(await this.setIfAbsent(key, value)) === next;
    } else {
      const [n] = await this.models.Setting.update({ value: next, updated_at: this.clock() }, { where: { key, value: text } });
      wrote = n > 0;
    }
    if (!wrote) {
      this.cache.delete(key);
      this.loaded = false;
      return false;
    }
    this.cache.set(key, value);
    this.onWrite?.(key);
    return true;
  }

  async delete(key: string): Promise<void> {
    await this.models.Setting.destroy({ where: { key } });
    this.cache.delete(key);
    this.onWrite?.(key);
  }

  /** Forget the cache (after a restore). */
  invalidate(): void {
    this.cache.clear();
    this.loaded = false;
  }
}
