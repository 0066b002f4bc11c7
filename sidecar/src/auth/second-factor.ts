// The second factor of admin-UI accounts (every role): one TOTP per account and ten recovery codes,
// shown once when the TOTP is activated or the codes are renewed. A policy setting
// (security.second_factor.required) makes it compulsory: a sign-in without one goes through the
// enrolment page before the session opens. An admin (API) or the operator (CLI
// reset-second-factor) can remove a user's second factor as the way back in. HTTP-free: the sign-in
// steps (auth/endpoints.ts, web/second-factor.ts) and the profile endpoints call it.
import { msg } from '@gatehouse/common/messages/index.js';
import { Op, type Transaction } from 'sequelize';
import type { Database } from '../db/index.js';
import type { Models, UserRecoveryCodeRow, UserTotpRow } from '../db/models.js';
import { findRow, findRows } from '../db/define.js';
import type { Clock } from '../util/clock.js';
import type { MasterKey } from '../util/crypto.js';
import type { SettingsStore } from '../settings/store.js';
import type { EventBus } from '../events.js';
import { AppError, unprocessable } from '../util/errors.js';
import { hashRecoveryCode, newRecoveryCodes, newTotpSecret, normaliseRecoveryCode, totpEnrolment, totpStep } from '../util/totp.js';

export interface SecondFactorStatus {
  totp_active: boolean;
  totp_setup_pending: boolean;
  recovery_codes_left: number;
  /** the policy: every account needs a second factor */
  required: boolean;
}

/** What a sign-in with a correct password still needs: the code, the enrolment the policy asks for, or nothing. */
export type PendingStep = 'totp' | 'enrol' | null;

export type SecondFactorChange = 'totp_enabled' | 'totp_removed' | 'recovery_codes_renewed' | 'reset' | 'recovery_code_used';

export interface TotpSetup {
  secret: string;
  otpauth_url: string;
  qr_code: string;
}

export class SecondFactorService {
  private models: Models;
  constructor(
    private db: Database,
    private crypto: MasterKey,
    private clock: Clock,
    private settings: SettingsStore,
    private events: EventBus,
  ) {
    this.models = db.models;
  }

  async required(): Promise<boolean> {
    return this.settings.get('security.second_factor.required');
  }

  private async row(userId: number): Promise<UserTotpRow | null> {
    return findRow<UserTotpRow>(this.models.UserTotp, { where: { user_id: userId } });
  }

  async totpActive(userId: number): Promise<boolean> {
    return !!(await this.row(userId))?.secret;
  }

  /** The accounts with an active TOTP, among these ids (the users list shows who has one). */
  async activeAmong(userIds: number[]): Promise<Set<number>> {
    if (userIds.length === 0) return new Set();
    const rows = await findRows<UserTotpRow>(this.models.UserTotp, {
      where: { user_id: { [Op.in]: userIds }, secret: { [Op.ne]: null } },
      attributes: ['user_id'],
    });
    return new Set(rows.map((r) => Number(r.user_id)));
  }

  async status(userId: number): Promise<SecondFactorStatus> {
    const row = await this.row(userId);
    const left = await this.models.UserRecoveryCode.count({ where: { user_id: userId, used_at: null } });
    return { totp_active: !!row?.secret, totp_setup_pending: !!row?.pending_secret, recovery_codes_left: left, required: await this.required() };
  }

  async pendingStep(userId: number): Promise<PendingStep> {
    if (await this.totpActive(userId)) return 'totp';
    return (await this.required()) ? 'enrol' : null;
  }

  /**
   * A new secret, pending until activateTotp confirms a code from it. An active TOTP keeps working
   * until then (a new phone is set up this way). Asked again while one is pending, the pending one is
   * shown again when `reuse` (the enrolment page reloaded), else replaced.
   */
  async beginTotp(user: { id: number; username: string }, reuse = false): Promise<TotpSetup> {
    const row = await this.row(user.id);
    const now = this.clock();
    const secret = reuse && row?.pending_secret ? this.crypto.open(row.pending_secret) : newTotpSecret();
    const sealed = this.crypto.seal(secret);
    if (row) await this.models.UserTotp.update({ pending_secret: sealed, updated_at: now }, { where: { id: row.id } });
    else
      await this.models.UserTotp.create({
        user_id: user.id,
        secret: null,
        pending_secret: sealed,
        last_step: null,
        activated_at: null,
        created_at: now,
        updated_at: now,
      });
    return { secret, ...(await totpEnrolment(secret, `Gatehouse:${user.username}`)) };
  }

  /** Activates the pending secret with a code from it; returns the new recovery codes (shown once; earlier ones end). */
  async activateTotp(user: { id: number; username: string }, token: string, actor: number | null): Promise<string[]> {
    const row = await this.row(user.id);
    if (!row?.pending_secret) throw new AppError('conflict', msg('second_factor.no_setup'), { token: msg('second_factor.field.no_setup') });
    const step = totpStep(this.crypto.open(row.pending_secret), token, this.clock());
    if (step === null) throw unprocessable(msg('second_factor.code_mismatch'), { token: msg('second_factor.field.invalid_code') });
    const now = this.clock();
    const codes = newRecoveryCodes();
    await this.db.sequelize.transaction(async (transaction) => {
      await this.models.UserTotp.update(
        { secret: row.pending_secret, pending_secret: null, last_step: step, activated_at: now, updated_at: now },
        { where: { id: row.id }, transaction },
      );
      await this.replaceCodes(user.id, codes, transaction);
    });
    await this.changed(user, 'totp_enabled', actor);
    return codes;
  }

  /** Removes the TOTP and the recovery codes (the owner, with the password checked by the caller). Refused while the policy requires a second factor. */
  async removeTotp(user: { id: number; username: string }, actor: number | null): Promise<void> {
    if (!(await this.row(user.id))) throw new AppError('conflict', msg('second_factor.none'));
    if (await this.required()) throw new AppError('conflict', msg('second_factor.required_by_policy'));
    await this.clear(user.id);
    await this.changed(user, 'totp_removed', actor);
  }

  /** New recovery codes (the earlier ones end); only with an active TOTP. */
  async renewRecoveryCodes(user: { id: number; username: string }, actor: number | null): Promise<string[]> {
    if (!(await this.totpActive(user.id))) throw new AppError('conflict', msg('second_factor.none'));
    const codes = newRecoveryCodes();
    await this.db.sequelize.transaction((transaction) => this.replaceCodes(user.id, codes, transaction));
    await this.changed(user, 'recovery_codes_renewed', actor);
    return codes;
  }

  /** The way back in (an admin through the API, the operator through the CLI): every second factor of the user removed, whatever the policy. Whether there was one. */
  async reset(user: { id: number; username: string }, actor: number | null): Promise<boolean> {
    const had = (await this.row(user.id)) !== null || (await this.models.UserRecoveryCode.count({ where: { user_id: user.id } })) > 0;
    await this.clear(user.id);
    await this.changed(user, 'reset', actor);
    return had;
  }

  /**
   * The second step of a sign-in: a 6-digit code of the active TOTP (each 30-second step taken once)
   * or an unused recovery code (spent by this call). Which one matched, or null.
   */
  async check(user: { id: number; username: string }, code: string): Promise<'totp' | 'recovery_code' | null> {
    const trimmed = code.replace(/\s/g, '');
    if (/^\d{6}$/.test(trimmed)) {
      const row = await this.row(user.id);
      if (!row?.secret) return null;
      const step = totpStep(this.crypto.open(row.secret), trimmed, this.clock());
      if (step === null) return null;
      // Atomic replay guard: only one request can move last_step past this step.
      const [n] = await this.models.UserTotp.update(
        { last_step: step },
        { where: { id: row.id, [Op.or]: [{ last_step: null }, { last_step: { [Op.lt]: step } }] } },
      );
      return n > 0 ? 'totp' : null;
    }
    const normalised = normaliseRecoveryCode(code);
    if (!normalised) return null;
    const [n] = await this.models.UserRecoveryCode.update(
      { used_at: this.clock() },
      { where: { user_id: user.id, code_hash: hashRecoveryCode(normalised), used_at: null } },
    );
    if (n === 0) return null;
    await this.changed(user, 'recovery_code_used', user.id);
    return 'recovery_code';
  }

  private async replaceCodes(userId: number, codes: string[], transaction: Transaction): Promise<void> {
    const now = this.clock();
    await this.models.UserRecoveryCode.destroy({ where: { user_id: userId }, transaction });
    await this.models.UserRecoveryCode.bulkCreate(
      codes.map((c) => ({ user_id: userId, code_hash: hashRecoveryCode(normaliseRecoveryCode(c)!), used_at: null, created_at: now })) as UserRecoveryCodeRow[],
      { transaction },
    );
  }

  private async clear(userId: number): Promise<void> {
    await this.models.UserRecoveryCode.destroy({ where: { user_id: userId } });
    await this.models.UserTotp.destroy({ where: { user_id: userId } });
  }

  private async changed(user: { id: number; username: string }, change: SecondFactorChange, actor: number | null): Promise<void> {
    await this.events.emit({ type: 'user_second_factor_changed', user_id: user.id, username: user.username, change, actor });
  }
}
