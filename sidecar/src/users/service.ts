// Admin-UI users: accounts, passwords (argon2id), login with lockout, profile.
import { msg } from '@gatehouse/common/messages/index.js';
import crypto from 'node:crypto';
import fs from 'node:fs';
import { Op, UniqueConstraintError, fn, col, where as sqlWhere } from 'sequelize';
import type { Models, UserRow } from '../db/models.js';
import { AppError, conflict, notFound, unprocessable, type FieldMessages } from '../util/errors.js';
import type { Clock } from '../util/clock.js';
import { dummyVerify, hashPassword, needsRehash, verifyPassword } from '../util/passwords.js';
import type { LockoutService } from '../auth/lockout.js';
import { storedSid } from '../http/session-store.js';
import type { ActivityLog } from '../logs/activity.js';
import type { EventBus } from '../events.js';
import type { Role, userView } from './schema.js';
import type { z } from 'zod';
import { findRows, findRow } from '../db/define.js';

/** A user as the API shows it (must_change_password: the password was generated, the user must choose a new one). */
export type PublicUser = z.infer<typeof userView>;

export function publicUser(u: UserRow): PublicUser {
  return {
    id: u.id,
    username: u.username,
    email: u.email,
    role: u.role,
    language: u.language,
    theme: u.theme,
    last_login_at: u.last_login_at === null ? null : Number(u.last_login_at),
    must_change_password: Boolean(u.must_change_password),
    created_at: new Date(Number(u.created_at)).toISOString(),
    updated_at: new Date(Number(u.updated_at)).toISOString(),
  };
}

export function generatePassword(): string {
  return crypto.randomBytes(18).toString('base64url');
}

/** The file in the data directory that holds a generated first admin password (app-context.ts bootstrapAdmin). */
export const INITIAL_PASSWORD_FILE = 'initial-admin-password.txt';

export interface UsersOptions {
  /** <dataDir>/initial-admin-password.txt: removed once the user it names has changed the password */
  initialPasswordFile?: string;
}

/** Where-clause: the username, compared without regard to case (the unique index of migration 062). */
const nameInAnyCase = (username: string) => sqlWhere(fn('lower', col('username')), username.toLowerCase());

export class UsersService {
  constructor(
    private models: Models,
    private clock: Clock,
    private lockout: LockoutService,
    private activity: ActivityLog,
    private events: EventBus,
    private opts: UsersOptions = {},
  ) {}

  async count(): Promise<number> {
    return this.models.User.count();
  }

  async list(): Promise<PublicUser[]> {
    const rows = await findRows(this.models.User, { order: [['id', 'ASC']] });
    return rows.map(publicUser);
  }

  async getRow(id: number): Promise<UserRow> {
    const row = (await this.models.User.findByPk(id, { raw: true })) as UserRow | null;
    if (!row) throw notFound(msg('resource.not_found', { what: 'User' }));
    return row;
  }

  async get(id: number): Promise<PublicUser> {
    return publicUser(await this.getRow(id));
  }

  /**
   * The body's fields the stored users refuse, all at once: a name another user has in any case, the
   * last admin's role taken away (update only). For a body whose schema refused other fields too
   * (storedChecks) and before a create or update.
   */
  async storedProblems(input: { username?: unknown; role?: unknown }, exceptId?: number): Promise<FieldMessages> {
    const f: FieldMessages = {};
    if (typeof input.username === 'string' && input.username.trim() !== '') {
      const other = (await this.models.User.findOne({ where: nameInAnyCase(input.username.trim()), raw: true })) as UserRow | null;
      if (other && other.id !== exceptId) f.username = msg('user.field.in_use');
    }
    if (exceptId !== undefined && typeof input.role === 'string' && input.role !== 'admin') {
      const row = (await this.models.User.findByPk(exceptId, { raw: true })) as UserRow | null;
      if (row?.role === 'admin' && (await this.adminCount()) <= 1) f.role = msg('user.field.one_admin_remains');
    }
    return f;
  }

  /** 409 when another user has this name in any case ("Admin" beside "admin"). */
  private async refuseNameInUse(username: string, exceptId?: number): Promise<void> {
    const other = (await this.models.User.findOne({ where: nameInAnyCase(username), raw: true })) as UserRow | null;
    if (other && other.id !== exceptId)
      throw new AppError('conflict', msg('user.name_taken_any_case', { username: other.username }), { username: msg('user.field.in_use') });
  }

  /**
   * The user a sign-in names: the exact name, else the one user whose name differs only in case
   * (never a guess between two such names, which only an older database can hold).
   */
  private async findForSignIn(username: string): Promise<UserRow | null> {
    const exact = await findRow(this.models.User, { where: { username } });
    if (exact) return exact;
    const rows = await findRows<UserRow>(this.models.User, { where: nameInAnyCase(username), limit: 2 });
    return rows.length === 1 ? rows[0] : null;
  }

  /** `mustChangePassword` marks a generated password (the first admin's): the next sign-in asks for a new one. */
  async create(
    input: { username: string; email?: string | null; password: string; role: Role; language?: 'en' | 'de'; mustChangePassword?: boolean },
    actor?: number,
  ): Promise<PublicUser> {
    const now = this.clock();
    await this.refuseNameInUse(input.username);
    try {
      const row = await this.models.User.create({
        username: input.username,
        email: input.email ?? null,
        password_hash: await hashPassword(input.password),
        role: input.role,
        language: input.language ?? 'en',
        theme: null,
        last_login_at: null,
        must_change_password: input.mustChangePassword ?? false,
        created_at: now,
        updated_at: now,
      });
      const u = publicUser(row.get({ plain: true }) as UserRow);
      await this.events.emit({ type: 'user_created', user_id: u.id, username: u.username, role: u.role, actor: actor ?? null });
      return u;
    } catch (err) {
      if (err instanceof UniqueConstraintError) throw conflict(msg('user.name_taken', { username: input.username }));
      throw err;
    }
  }

  async update(
    id: number,
    patch: { username?: string; email?: string | null; password?: string; role?: Role; language?: 'en' | 'de'; theme?: 'pro' | 'default' | null },
    actor?: number,
  ): Promise<PublicUser> {
    const row = await this.getRow(id);
    // a name in use and the last admin's role in one answer (409 when the name is in use)
    const f = await this.storedProblems(patch, id);
    if (f.username) throw new AppError('conflict', msg('user.name_taken_any_case', { username: String(patch.username) }), f);
    if (f.role) throw unprocessable(msg('user.last_admin_role'), f);
    const values: Partial<UserRow> = { updated_at: this.clock() };
    if (patch.username !== undefined) values.username = patch.username;
    if (patch.email !== undefined) values.email = patch.email;
    if (patch.role !== undefined) values.role = patch.role;
    if (patch.language !== undefined) values.language = patch.language;
    if (patch.theme !== undefined) values.theme = patch.theme;
    if (patch.password !== undefined) values.password_hash = await hashPassword(patch.password);
    try {
      await this.models.User.update(values, { where: { id } });
    } catch (err) {
      if (err instanceof UniqueConstraintError) throw conflict(msg('user.name_taken', { username: String(patch.username) }));
      throw err;
    }
    if (patch.password !== undefined) await this.models.Session.destroy({ where: { user_id: id } });
    if (patch.password !== undefined) await this.events.emit({ type: 'user_credentials_changed', user_id: id, reason: 'password' });
    await this.events.emit({
      type: 'user_updated',
      user_id: id,
      username: values.username ?? row.username,
      fields: Object.keys(patch)
        .filter((k) => k !== 'password')
        .concat(patch.password ? ['password'] : []),
      actor: actor ?? null,
    });
    return this.get(id);
  }

  private async adminCount(): Promise<number> {
    return this.models.User.count({ where: { role: 'admin' } });
  }

  async remove(id: number, actor?: number): Promise<void> {
    const row = await this.getRow(id);
    if (actor === id) throw new AppError('conflict', msg('user.delete_self'), { id: msg('user.field.delete_self') });
    if (row.role === 'admin' && (await this.adminCount()) <= 1)
      throw new AppError('conflict', msg('user.last_admin_delete'), { id: msg('user.field.one_admin_remains') });
    await this.models.Session.destroy({ where: { user_id: id } });
    await this.models.User.destroy({ where: { id } });
    await this.events.emit({ type: 'user_credentials_changed', user_id: id, reason: 'deleted' });
    await this.events.emit({ type: 'user_deleted', user_id: id, username: row.username, actor: actor ?? null });
  }

  /**
   * Sets a new random password and returns it once; ends the user's sessions. Somebody else has seen
   * that password (the admin who reset it, or whoever ran the CLI's reset-admin-password), so the
   * user's next sign-in asks for a new one (must_change_password), as with the generated first password.
   */
  async resetPassword(id: number, actor?: number): Promise<string> {
    const row = await this.getRow(id);
    const password = generatePassword();
    await this.models.User.update({ password_hash: await hashPassword(password), updated_at: this.clock(), must_change_password: true }, { where: { id } });
    // The initial password file of this user no longer holds a working password.
    this.removeInitialPasswordFile(row.username);
    await this.models.Session.destroy({ where: { user_id: id } });
    await this.events.emit({ type: 'user_credentials_changed', user_id: id, reason: 'password' });
    await this.activity.record({
      severity: 'warning',
      source: 'users',
      event_type: 'user_password_reset',
      msg: msg('user.password_reset', { username: row.username }),
      details: { id },
      user_id: actor,
    });
    return password;
  }

  /**
   * The user's own password change: needs the current password, refuses the same one again, clears
   * must_change_password, removes the initial password file when it names this user, and ends every
   * session of the user except `keepSid` (the cookie's session id of the one the change was made from).
   */
  /** A wrong current password as a field message, for a change whose new password the schema refused (storedChecks): one answer names both. */
  async currentPasswordProblem(id: number, current: unknown): Promise<FieldMessages> {
    if (typeof current !== 'string' || current === '') return {};
    const row = (await this.models.User.findByPk(id, { raw: true })) as UserRow | null;
    return row && !(await verifyPassword(row.password_hash, current)) ? { current: msg('field.does_not_match') } : {};
  }

  async changePassword(id: number, current: string, next: string, keepSid?: string): Promise<void> {
    const row = await this.getRow(id);
    if (!(await verifyPassword(row.password_hash, current))) throw unprocessable(msg('auth.current_password_wrong'), { current: msg('field.does_not_match') });
    if (next === current) throw unprocessable(msg('auth.password_unchanged'), { next: msg('user.field.differ_from_current') });
    await this.models.User.update({ password_hash: await hashPassword(next), must_change_password: false, updated_at: this.clock() }, { where: { id } });
    await this.models.Session.destroy({ where: keepSid ? { user_id: id, sid: { [Op.ne]: storedSid(keepSid) } } : { user_id: id } });
    this.removeInitialPasswordFile(row.username);
    await this.events.emit({ type: 'user_credentials_changed', user_id: id, reason: 'password' });
    await this.activity.record({ source: 'auth', event_type: 'password_changed', msg: msg('auth.password_changed', { username: row.username }), user_id: id });
  }

  /** Deletes the generated first-admin password file if it names `username` (its password is no longer valid). */
  private removeInitialPasswordFile(username: string): void {
    const file = this.opts.initialPasswordFile;
    if (!file) return;
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch {
      return;
    }
    if (/^username: (.*)$/m.exec(text)?.[1]?.trim() === username) fs.rmSync(file, { force: true });
  }

  /**
   * Username + password login with lockout. Throws AppError 'locked' (even for the right
   * password while locked) or 'unauthorized'. Migrates a bcrypt hash to argon2id on success.
   */
  /** A password sign-in in one step (an account without a second factor): checkPassword, then completeSignIn. */
  async authenticate(username: string, password: string, ip: string | null): Promise<PublicUser> {
    return this.completeSignIn(await this.checkPassword(username, password, ip), ip);
  }

  /** 423-style refusal while the lockout holds this name (every step of a sign-in checks it). */
  async refuseLocked(username: string): Promise<void> {
    const state = await this.lockout.state('admin', username);
    if (state.locked) {
      throw new AppError('locked', msg('auth.account_locked'), undefined, {
        locked_until: new Date(state.until!).toISOString(),
        retry_after: Math.ceil((state.until! - this.clock()) / 1000),
      });
    }
  }

  /**
   * The password step of a sign-in: the account when the password is right. Nothing is recorded as a
   * success yet (a second factor may follow, and only a completed sign-in resets the failure count);
   * a hash with outdated parameters is upgraded here, where the password is at hand.
   */
  async checkPassword(username: string, password: string, ip: string | null): Promise<UserRow> {
    await this.refuseLocked(username);
    const row = await this.findForSignIn(username);
    const ok = row ? await verifyPassword(row.password_hash, password) : (await dummyVerify(password), false);
    if (!row || !ok) {
      await this.signInFailed(username, ip);
      throw new AppError('unauthorized', msg('auth.invalid_login'));
    }
    if (needsRehash(row.password_hash)) {
      const password_hash = await hashPassword(password);
      await this.models.User.update({ password_hash }, { where: { id: row.id } });
      row.password_hash = password_hash;
    }
    return row;
  }

  /** A refused step of a sign-in (password or second factor): counted for the lockout, with its events. */
  async signInFailed(username: string, ip: string | null): Promise<void> {
    const after = await this.lockout.recordFailure('admin', username, ip);
    await this.events.emit({ type: 'login_failed', username, failures: after.failures, ip });
    if (after.locked) await this.events.emit({ type: 'account_locked', username, failures: after.failures, until: after.until ?? null, ip });
  }

  /** Every step of a sign-in passed: the success resets the failure count; last_login_at and the activity row. */
  async completeSignIn(row: UserRow, ip: string | null): Promise<PublicUser> {
    await this.lockout.recordSuccess('admin', row.username, ip);
    const values: Partial<UserRow> = { last_login_at: this.clock() };
    await this.models.User.update(values, { where: { id: row.id } });
    await this.activity.record({ source: 'auth', event_type: 'login', msg: msg('auth.signed_in', { username: row.username }), user_id: row.id, ip });
    return publicUser({ ...row, ...values } as UserRow);
  }
}
