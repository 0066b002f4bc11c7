// The second factor of admin-UI accounts (every role): one TOTP per account, any number of passkeys
// (WebAuthn, @simplewebauthn/server; a passkey is also a whole sign-in without the password), and ten
// recovery codes, shown once when the first factor is added or the codes are renewed. Passkeys are
// bound to the admin UI's origin (config adminOrigin: GATEHOUSE_ADMIN_ORIGIN or
// https://GATEHOUSE_ADMIN_DOMAIN); without one they are refused. A policy setting
// (security.second_factor.required) makes it compulsory: a sign-in without one goes through the
// enrolment page before the session opens. An admin (API) or the operator (CLI
// reset-second-factor) can remove a user's second factor as the way back in. HTTP-free: the sign-in
// steps (auth/endpoints.ts, web/second-factor.ts) and the profile endpoints call it.
import { msg } from '@gatehouse/common/messages/index.js';
import { Op, type Transaction } from 'sequelize';
import type { Database } from '../db/index.js';
import type { Models, UserPasskeyRow, UserRecoveryCodeRow, UserTotpRow } from '../db/models.js';
import { findRow, findRows } from '../db/define.js';
import type { Clock } from '../util/clock.js';
import type { MasterKey } from '../util/crypto.js';
import type { SettingsStore } from '../settings/store.js';
import type { EventBus } from '../events.js';
import { AppError, conflict, notFound, unprocessable } from '../util/errors.js';
import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type AuthenticatorTransportFuture,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
} from '@simplewebauthn/server';
import { isoBase64URL, isoUint8Array } from '@simplewebauthn/server/helpers';
import { hashRecoveryCode, newRecoveryCodes, newTotpSecret, normaliseRecoveryCode, totpEnrolment, totpStep } from '../util/totp.js';
import type { z } from 'zod';
import type { passkeyView as passkeyViewSchema, secondFactorStatus, totpSetupView } from './schema.js';

/** An account's second factors as the API shows them (passkeys: how many; required: the policy). */
export type SecondFactorStatus = z.infer<typeof secondFactorStatus>;

/**
 * What a sign-in with a correct password still needs: a code (`totp`, the account has a TOTP, maybe
 * passkeys too), a passkey (`passkey`, passkeys only; a recovery code does too), the enrolment the
 * policy asks for, or nothing.
 */
export type PendingStep = 'totp' | 'passkey' | 'enrol' | null;

export type SecondFactorChange =
  'totp_enabled' | 'totp_removed' | 'recovery_codes_renewed' | 'reset' | 'recovery_code_used' | 'passkey_added' | 'passkey_renamed' | 'passkey_removed';

/** The WebAuthn relying party: the admin UI's origin and its host name (the RP ID). */
export interface RelyingParty {
  origin: string;
  rpID: string;
}

/** A WebAuthn ceremony waiting for the browser's answer: its challenge, kept in the session (one use, CHALLENGE_MS). */
export interface PasskeyChallenge {
  challenge: string;
  purpose: 'register' | 'second_factor' | 'sign_in';
  userId: number | null;
  at: number;
}
export const CHALLENGE_MS = 5 * 60_000;

export type PasskeyView = z.infer<typeof passkeyViewSchema>;

const passkeyView = (r: UserPasskeyRow): PasskeyView => ({
  id: Number(r.id),
  name: r.name,
  transports: r.transports ? (JSON.parse(r.transports) as string[]) : [],
  created_at: Number(r.created_at),
  last_used_at: r.last_used_at === null ? null : Number(r.last_used_at),
});

/** The relying party of an admin origin (https://host[:port]); undefined without one. */
export function relyingParty(adminOrigin: string | undefined): RelyingParty | undefined {
  if (!adminOrigin) return undefined;
  const u = new URL(adminOrigin);
  return { origin: u.origin, rpID: u.hostname };
}

/** The WebAuthn user handle of an account: opaque bytes, stable per account. */
const userHandle = (userId: number) => isoUint8Array.fromUTF8String(`gatehouse-user-${userId}`);

export type TotpSetup = z.infer<typeof totpSetupView>;

export class SecondFactorService {
  private models: Models;
  constructor(
    private db: Database,
    private crypto: MasterKey,
    private clock: Clock,
    private settings: SettingsStore,
    private events: EventBus,
    private rp?: RelyingParty,
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
    return {
      totp_active: !!row?.secret,
      totp_setup_pending: !!row?.pending_secret,
      passkeys: await this.passkeyCount(userId),
      recovery_codes_left: left,
      required: await this.required(),
    };
  }

  async pendingStep(userId: number): Promise<PendingStep> {
    if (await this.totpActive(userId)) return 'totp';
    if ((await this.passkeyCount(userId)) > 0) return 'passkey';
    return (await this.required()) ? 'enrol' : null;
  }

  /** How many second factors the account has (an active TOTP counts one, each passkey one). */
  private async factorCount(userId: number): Promise<number> {
    return ((await this.totpActive(userId)) ? 1 : 0) + (await this.passkeyCount(userId));
  }

  private passkeyCount(userId: number): Promise<number> {
    return this.models.UserPasskey.count({ where: { user_id: userId } });
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

  /**
   * Removes the TOTP (the owner, with the password checked by the caller), and the recovery codes when
   * no passkey remains. Refused while the policy requires a second factor and no passkey remains.
   */
  async removeTotp(user: { id: number; username: string }, actor: number | null): Promise<void> {
    if (!(await this.row(user.id))) throw new AppError('conflict', msg('second_factor.none'));
    const passkeys = await this.passkeyCount(user.id);
    if (passkeys === 0 && (await this.required())) throw new AppError('conflict', msg('second_factor.required_by_policy'));
    if (passkeys === 0) await this.clear(user.id);
    else await this.models.UserTotp.destroy({ where: { user_id: user.id } });
    await this.changed(user, 'totp_removed', actor);
  }

  /** New recovery codes (the earlier ones end); only with a second factor (a TOTP or a passkey). */
  async renewRecoveryCodes(user: { id: number; username: string }, actor: number | null): Promise<string[]> {
    if ((await this.factorCount(user.id)) === 0) throw new AppError('conflict', msg('second_factor.none'));
    const codes = newRecoveryCodes();
    await this.db.sequelize.transaction((transaction) => this.replaceCodes(user.id, codes, transaction));
    await this.changed(user, 'recovery_codes_renewed', actor);
    return codes;
  }

  /** The way back in (an admin through the API, the operator through the CLI): every second factor of the user removed, whatever the policy. Whether there was one. */
  async reset(user: { id: number; username: string }, actor: number | null): Promise<boolean> {
    const had =
      (await this.row(user.id)) !== null ||
      (await this.models.UserRecoveryCode.count({ where: { user_id: user.id } })) > 0 ||
      (await this.passkeyCount(user.id)) > 0;
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
    await this.models.UserPasskey.destroy({ where: { user_id: userId } });
  }

  // ---- passkeys ----

  /** The relying party, or 409 saying which setting is missing. */
  private relyingParty(): RelyingParty {
    if (!this.rp) throw conflict(msg('passkey.no_origin'));
    return this.rp;
  }

  private passkeyRows(userId: number): Promise<UserPasskeyRow[]> {
    return findRows<UserPasskeyRow>(this.models.UserPasskey, { where: { user_id: userId }, order: [['id', 'ASC']] });
  }

  async passkeys(userId: number): Promise<PasskeyView[]> {
    return (await this.passkeyRows(userId)).map(passkeyView);
  }

  private async ownPasskey(userId: number, id: number): Promise<UserPasskeyRow> {
    // another account's passkey is "not found" as much as a missing one
    const row = await findRow<UserPasskeyRow>(this.models.UserPasskey, { where: { id, user_id: userId } });
    if (!row) throw notFound(msg('passkey.unknown'));
    return row;
  }

  /** Options for navigator.credentials.create(): a discoverable credential (so it can be the whole sign-in), none of the account's own again. */
  async registrationOptions(user: { id: number; username: string }): Promise<{ options: PublicKeyCredentialCreationOptionsJSON; challenge: PasskeyChallenge }> {
    const rp = this.relyingParty();
    const options = await generateRegistrationOptions({
      rpName: 'Gatehouse',
      rpID: rp.rpID,
      userName: user.username,
      userID: userHandle(user.id),
      attestationType: 'none',
      excludeCredentials: (await this.passkeyRows(user.id)).map((r) => ({
        id: r.credential_id,
        transports: passkeyView(r).transports as AuthenticatorTransportFuture[],
      })),
      authenticatorSelection: { residentKey: 'required', userVerification: 'preferred' },
    });
    return { options, challenge: { challenge: options.challenge, purpose: 'register', userId: user.id, at: this.clock() } };
  }

  /**
   * Verifies the browser's answer to registrationOptions (its challenge from the session) and stores
   * the passkey. The account's first second factor also gets ten recovery codes (returned, shown once).
   */
  async addPasskey(
    user: { id: number; username: string },
    name: string,
    credential: RegistrationResponseJSON,
    challenge: PasskeyChallenge | undefined,
  ): Promise<{ passkey: PasskeyView; recovery_codes?: string[] }> {
    const rp = this.relyingParty();
    const pending = this.liveChallenge(challenge, 'register', user.id);
    let verified;
    try {
      verified = await verifyRegistrationResponse({
        response: credential,
        expectedChallenge: pending.challenge,
        expectedOrigin: rp.origin,
        expectedRPID: rp.rpID,
        requireUserVerification: false,
      });
    } catch {
      verified = undefined;
    }
    if (!verified?.verified || !verified.registrationInfo) throw unprocessable(msg('passkey.rejected'), { credential: msg('passkey.field.rejected') });
    const cred = verified.registrationInfo.credential;
    if (await findRow(this.models.UserPasskey, { where: { credential_id: cred.id } }))
      throw conflict(msg('passkey.registered_already'), undefined, { credential: msg('passkey.registered_already') });
    const first = (await this.factorCount(user.id)) === 0;
    const codes = first ? newRecoveryCodes() : undefined;
    const now = this.clock();
    const row = await this.db.sequelize.transaction(async (transaction) => {
      const created = await this.models.UserPasskey.create(
        {
          user_id: user.id,
          credential_id: cred.id,
          public_key: isoBase64URL.fromBuffer(cred.publicKey),
          counter: cred.counter,
          transports: JSON.stringify(credential.response.transports ?? cred.transports ?? []),
          name,
          created_at: now,
          last_used_at: null,
        },
        { transaction },
      );
      if (codes) await this.replaceCodes(user.id, codes, transaction);
      return created.get({ plain: true });
    });
    await this.changed(user, 'passkey_added', user.id);
    return { passkey: passkeyView(row), ...(codes ? { recovery_codes: codes } : {}) };
  }

  async renamePasskey(user: { id: number; username: string }, id: number, name: string): Promise<PasskeyView> {
    const row = await this.ownPasskey(user.id, id);
    await this.models.UserPasskey.update({ name }, { where: { id: row.id } });
    await this.changed(user, 'passkey_renamed', user.id);
    return passkeyView({ ...row, name });
  }

  /** Removes one passkey (the owner, password checked by the caller); refused under the policy when it is the last second factor. */
  async removePasskey(user: { id: number; username: string }, id: number): Promise<void> {
    const row = await this.ownPasskey(user.id, id);
    const factors = await this.factorCount(user.id);
    if (factors <= 1 && (await this.required())) throw conflict(msg('second_factor.last_factor_required'));
    await this.models.UserPasskey.destroy({ where: { id: row.id } });
    // the recovery codes stand in for a second factor: none left, none kept
    if (factors <= 1) await this.models.UserRecoveryCode.destroy({ where: { user_id: user.id } });
    await this.changed(user, 'passkey_removed', user.id);
  }

  /**
   * Options for navigator.credentials.get(): for the second step of a sign-in (`userId`: the
   * account's passkeys allowed), or for a sign-in without a password (any discoverable passkey,
   * user verification required).
   */
  async authenticationOptions(userId: number | null): Promise<{ options: PublicKeyCredentialRequestOptionsJSON; challenge: PasskeyChallenge }> {
    const rp = this.relyingParty();
    const rows = userId === null ? [] : await this.passkeyRows(userId);
    if (userId !== null && rows.length === 0) throw conflict(msg('passkey.none'));
    const options = await generateAuthenticationOptions({
      rpID: rp.rpID,
      allowCredentials: rows.map((r) => ({ id: r.credential_id, transports: passkeyView(r).transports as AuthenticatorTransportFuture[] })),
      userVerification: userId === null ? 'required' : 'preferred',
    });
    return { options, challenge: { challenge: options.challenge, purpose: userId === null ? 'sign_in' : 'second_factor', userId, at: this.clock() } };
  }

  /**
   * Checks the browser's answer to authenticationOptions: the passkey's account when it verifies (its
   * counter and last use moved on), else null. A known passkey that fails names its account
   * (`failedUserId`) so that the failure counts toward that account's lockout.
   */
  async checkPasskey(
    credential: AuthenticationResponseJSON,
    challenge: PasskeyChallenge | undefined,
    purpose: 'second_factor' | 'sign_in',
    userId: number | null,
  ): Promise<{ userId: number | null; ok: boolean }> {
    const rp = this.relyingParty();
    const pending = this.liveChallenge(challenge, purpose, userId);
    const row = await findRow<UserPasskeyRow>(this.models.UserPasskey, { where: { credential_id: credential.id } });
    if (!row || (userId !== null && Number(row.user_id) !== userId)) return { userId, ok: false };
    const owner = Number(row.user_id);
    if (purpose === 'sign_in' && credential.response.userHandle !== undefined && credential.response.userHandle !== isoBase64URL.fromBuffer(userHandle(owner)))
      return { userId: owner, ok: false };
    let verified;
    try {
      verified = await verifyAuthenticationResponse({
        response: credential,
        expectedChallenge: pending.challenge,
        expectedOrigin: rp.origin,
        expectedRPID: rp.rpID,
        credential: {
          id: row.credential_id,
          publicKey: isoBase64URL.toBuffer(row.public_key),
          counter: Number(row.counter),
          transports: passkeyView(row).transports as AuthenticatorTransportFuture[],
        },
        requireUserVerification: purpose === 'sign_in',
      });
    } catch {
      verified = undefined;
    }
    if (!verified?.verified) return { userId: owner, ok: false };
    // Atomic against a replayed assertion racing this one: the counter moves only forward (0 stays 0 for authenticators without one).
    const newCounter = verified.authenticationInfo.newCounter;
    const [n] = await this.models.UserPasskey.update(
      { counter: newCounter, last_used_at: this.clock() },
      { where: { id: row.id, ...(newCounter > 0 ? { counter: { [Op.lt]: newCounter } } : {}) } },
    );
    return { userId: owner, ok: n > 0 };
  }

  /** The session's challenge when it is for this purpose (and account) and recent; else 409. */
  private liveChallenge(c: PasskeyChallenge | undefined, purpose: PasskeyChallenge['purpose'], userId: number | null): PasskeyChallenge {
    if (!c || c.purpose !== purpose || c.userId !== userId || this.clock() - c.at > CHALLENGE_MS) throw conflict(msg('passkey.no_challenge'));
    return c;
  }

  private async changed(user: { id: number; username: string }, change: SecondFactorChange, actor: number | null): Promise<void> {
    await this.events.emit({ type: 'user_second_factor_changed', user_id: user.id, username: user.username, change, actor });
  }
}
