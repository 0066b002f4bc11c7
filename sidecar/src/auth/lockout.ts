// Per-identifier lockout over the login_attempts table. Shared by the admin login (record type
// `admin`, identifier = username) and route auth (record type `route_auth`).
//
// Rule: failures are counted since the later of (now - duration) and the last success or manual
// unlock for that identifier. When the count reaches max_attempts the identifier is locked until
// (time of the failure that reached the limit + duration). Attempts made while locked are not
// counted, so the lock lifts exactly `duration` after it started.
import { Op } from 'sequelize';
import type { LoginAttemptRow, Models } from '../db/models.js';
import type { Clock } from '../util/clock.js';
import type { SettingsStore } from '../settings/store.js';
import { findRows } from '../db/define.js';

export type RecordType = 'admin' | 'route_auth';

export interface LockState {
  locked: boolean;
  /** epoch ms when the lock lifts */
  until: number | null;
  failures: number;
  max_attempts: number;
}

export class LockoutService {
  constructor(
    private models: Models,
    private settings: SettingsStore,
    private clock: Clock,
  ) {}

  async policy(): Promise<{ maxAttempts: number; durationMs: number }> {
    const maxAttempts = await this.settings.get('security.lockout.max_attempts');
    const minutes = await this.settings.get('security.lockout.duration');
    return { maxAttempts, durationMs: minutes * 60_000 };
  }

  private key(identifier: string): string {
    return identifier.trim().toLowerCase();
  }

  async state(type: RecordType, identifier: string): Promise<LockState> {
    const { maxAttempts, durationMs } = await this.policy();
    const now = this.clock();
    const id = this.key(identifier);
    const lastReset = (await this.models.LoginAttempt.findOne({
      where: { record_type: type, identifier: id, outcome: { [Op.in]: ['success', 'unlock'] } },
      order: [['id', 'DESC']],
      raw: true,
    })) as LoginAttemptRow | null;
    // Rows are ordered by id (insertion order), so a reset in the same millisecond still counts.
    const failures = await findRows(this.models.LoginAttempt, {
      where: {
        record_type: type,
        identifier: id,
        outcome: 'failure',
        created_at: { [Op.gt]: now - durationMs },
        ...(lastReset ? { id: { [Op.gt]: lastReset.id } } : {}),
      },
      order: [['id', 'ASC']],
      attributes: ['created_at'],
    });
    if (failures.length >= maxAttempts) {
      const until = Number(failures[maxAttempts - 1].created_at) + durationMs;
      if (until > now) return { locked: true, until, failures: failures.length, max_attempts: maxAttempts };
    }
    return { locked: false, until: null, failures: failures.length, max_attempts: maxAttempts };
  }

  async recordFailure(type: RecordType, identifier: string, ip: string | null): Promise<LockState> {
    await this.models.LoginAttempt.create({ record_type: type, identifier: this.key(identifier), ip, outcome: 'failure', created_at: this.clock() });
    return this.state(type, identifier);
  }

  async recordSuccess(type: RecordType, identifier: string, ip: string | null): Promise<void> {
    await this.models.LoginAttempt.create({ record_type: type, identifier: this.key(identifier), ip, outcome: 'success', created_at: this.clock() });
  }

  /** Manual unlock by an admin (API or CLI). Returns whether the identifier was locked. */
  async unlock(type: RecordType, identifier: string): Promise<boolean> {
    const before = await this.state(type, identifier);
    await this.models.LoginAttempt.create({ record_type: type, identifier: this.key(identifier), ip: null, outcome: 'unlock', created_at: this.clock() });
    return before.locked;
  }

  /** Currently locked identifiers of a type (for the admin UI). */
  async locked(type: RecordType): Promise<{ identifier: string; until: number }[]> {
    const { durationMs } = await this.policy();
    const rows = await findRows(this.models.LoginAttempt, {
      where: { record_type: type, outcome: 'failure', created_at: { [Op.gte]: this.clock() - durationMs } },
      attributes: ['identifier'],
      group: ['identifier'],
    });
    const out: { identifier: string; until: number }[] = [];
    for (const r of rows) {
      const s = await this.state(type, r.identifier);
      if (s.locked && s.until) out.push({ identifier: r.identifier, until: s.until });
    }
    return out;
  }

  /** Drop rows older than a day beyond the window (called by the housekeeping job). */
  async prune(): Promise<number> {
    const { durationMs } = await this.policy();
    return this.models.LoginAttempt.destroy({ where: { created_at: { [Op.lt]: this.clock() - durationMs - 86_400_000 } } });
  }
}
