// The login flows of the route-auth pages, without HTTP: each step takes what the visitor sent and
// returns what happened. The HTTP layer (http.ts) turns that into cookies, redirects and pages.
//
// Accounts: the route's configured account (route_auth.email + its bcrypt password / the route's
// TOTP), and the route's users (routes.user_ids): Gatehouse users who sign in with their username
// or email and their own Gatehouse password (argon2id), their own email address for codes, and
// their own TOTP on this route (set up by an admin: totp-setup/totp-verify with user_id). A name
// that is the configured email is the configured account; otherwise a route user whose username
// (or, if unique among the route's users, email) matches. Anyone else is refused like a wrong
// password. Removing a user from user_ids shuts them out at once (verify checks it).
//
// Methods:
// - email_password: account + password.
// - email_code: the visitor asks for a code for an account; when it is the configured address or a
//   route user with an email, a 6-digit code is mailed to that account's address (valid
//   EMAIL_CODE_TTL_MS = 10 min, single use, 5 tries, at most one mail per EMAIL_CODE_RESEND_MS = 60 s
//   per route and account). The answer is the same whether or not the account exists (no probing).
// - totp: a code from the authenticator app (±1 step of 30 s accepted, each step once); on a route
//   with users the form also asks for the account (empty: the configured account).
// - two-factor: email_password first, then an email code (sent right after the password step) or
//   a TOTP code of that account.
// The first step of a two-step login leaves a "pending" session (own cookie, 10 minutes) that only
// the second step accepts; verify never does.
//
// Lockout: every failed step is recorded with deps.lockout (record type 'route_auth', identifier
// `<routeId>:<account key>`: the configured email in lower case, `user:<username>` for a route user
// (whichever name they typed), else what was typed, lower case); a locked identifier is refused
// before anything is checked, even with the right credentials, until the lock expires or an admin
// unlocks it (POST /api/v1/users/unlock {record_type: 'route_auth', username: '<routeId>:<key>'}).
// Success is recorded only when the whole login succeeded (so a known password cannot reset the
// counter of a second factor being guessed).
import { msg } from '@gatehouse/common/messages/index.js';
import crypto from 'node:crypto';
import bcrypt from 'bcrypt';
import { Op } from 'sequelize';
import type { Deps } from '../deps.js';
import type { UserRow } from '../db/models.js';
import { dummyVerify, verifyPassword } from '../util/passwords.js';
import type { Mailer } from '../smtp/service.js';
import { loginMail } from '../web/route-auth/i18n.js';
import type { Lang } from '../web/route-auth/i18n.js';
import { EMAIL_CODE_MAX_ATTEMPTS, EMAIL_CODE_RESEND_MS, EMAIL_CODE_TTL_MS, PENDING_TTL_MS } from './schema.js';
import { BCRYPT_ROUNDS, type RouteAuthService, type SessionAccount, type SessionMeta } from './service.js';
import type { RouteEntry } from './view.js';
import { findRows, findRow } from '../db/define.js';

export type FlowError = 'invalid' | 'locked' | 'code_invalid' | 'totp_not_ready' | 'expired' | 'mail_failed' | 'no_email';

export type FlowResult =
  /** signed in: set the session cookie, clear the pending one, redirect */
  | { kind: 'session'; token: string; maxAgeMs: number }
  /** first step done or code requested: set the pending cookie, show the code form */
  | { kind: 'pending'; token: string; notice: 'code_sent' | 'enter_totp' | 'oidc_totp' }
  /** stay on the code form with a notice (resend) */
  | { kind: 'notice'; notice: 'code_sent' | 'code_wait' }
  | { kind: 'error'; error: FlowError; clearPending?: boolean };

export interface StepContext {
  entry: RouteEntry;
  ip: string;
  userAgent: string;
  lang: Lang;
  /** the pending cookie's value, when present */
  pendingToken?: string;
}

/** One account that can sign in on a route. */
export interface Account {
  /** lockout identifier part and email-code key: the configured email, or `user:<username>` */
  key: string;
  /** shown name (X-Auth-User, access log, trace): the configured email or the username */
  subject: string;
  /** where codes go and what X-Auth-Email carries (null: none) */
  email: string | null;
  /** the route user (null: the configured account) */
  userId: number | null;
  /** bcrypt (configured account) or argon2id/bcrypt (Gatehouse user) */
  passwordHash: string | null;
  /** a visitor signed in through the route's OIDC provider: their groups (X-Auth-Groups) */
  groups?: string[];
}

let dummyHash: Promise<string> | undefined;

export class LoginFlows {
  constructor(
    private deps: Deps,
    private svc: RouteAuthService,
  ) {}

  private get mailer(): Mailer {
    return this.svc.mailer;
  }

  static identifier(routeId: number, key: string): string {
    return `${routeId}:${key.trim().toLowerCase()}`;
  }

  static userKey(username: string): string {
    return `user:${username.toLowerCase()}`;
  }

  private configAccount(entry: RouteEntry): Account {
    const email = entry.cfg.email.toLowerCase();
    return { key: email, subject: entry.cfg.email, email: entry.cfg.email, userId: null, passwordHash: entry.cfg.password_hash };
  }

  private userAccount(u: UserRow): Account {
    return { key: LoginFlows.userKey(u.username), subject: u.username, email: u.email || null, userId: Number(u.id), passwordHash: u.password_hash };
  }

  private async routeUsers(entry: RouteEntry): Promise<UserRow[]> {
    const ids = entry.route.user_ids;
    if (!ids.length) return [];
    return await findRows(this.svc.models.User, { where: { id: { [Op.in]: ids } } });
  }

  /** The account a typed name (email or username, any case) belongs to, or null. */
  async resolve(entry: RouteEntry, nameIn: string): Promise<Account | null> {
    const name = nameIn.trim().toLowerCase();
    if (!name) return null;
    if (name === entry.cfg.email.toLowerCase()) return this.configAccount(entry);
    const users = await this.routeUsers(entry);
    const byName = users.find((u) => u.username.toLowerCase() === name);
    if (byName) return this.userAccount(byName);
    const byEmail = users.filter((u) => !!u.email && u.email.toLowerCase() === name);
    return byEmail.length === 1 ? this.userAccount(byEmail[0]) : null;
  }

  /** The account of a pending session (its key and user id), if it is still allowed on the route. */
  private async pendingAccount(
    entry: RouteEntry,
    pending: { email: string; userId: number | null; authMethod: string; subject: string; groups: string[] },
  ): Promise<Account | null> {
    // signed in through the provider, the second factor to come: the account is what the provider said
    if (pending.authMethod.startsWith('oidc+'))
      return entry.cfg.method === 'oidc' ? LoginFlows.oidcAccount(pending.email, pending.subject, pending.groups) : null;
    if (pending.userId === null) return pending.email === entry.cfg.email.toLowerCase() ? this.configAccount(entry) : null;
    if (!entry.route.user_ids.includes(pending.userId)) return null;
    const u = (await this.svc.models.User.findByPk(pending.userId, { raw: true })) as UserRow | null;
    if (!u) return null;
    const acct = this.userAccount(u);
    return acct.key === pending.email ? acct : null;
  }

  private async locked(routeId: number, key: string): Promise<boolean> {
    return (await this.deps.lockout.state('route_auth', LoginFlows.identifier(routeId, key))).locked;
  }

  /** Records a failure; returns 'locked' when this failure reached the limit. */
  private async fail(c: StepContext, key: string, reason: string, error: FlowError = 'invalid', acct?: Account | null): Promise<FlowResult> {
    const id = LoginFlows.identifier(c.entry.route.id, key);
    const state = await this.deps.lockout.recordFailure('route_auth', id, c.ip || null);
    const who = acct ? acct.subject : key;
    await this.deps.activity.record({
      severity: 'warning',
      source: 'route_auth',
      event_type: state.locked ? 'route_auth_locked' : 'route_auth_login_failed',
      msg: state.locked
        ? msg('route_auth.locked', { domain: c.entry.route.domain, who, failures: state.failures })
        : msg('route_auth.login_failed', { domain: c.entry.route.domain, reason }),
      details: { route_id: c.entry.route.id, email: key, user: who, ...(acct?.userId ? { user_id: acct.userId } : {}), reason, failures: state.failures },
      ip: c.ip || null,
    });
    return { kind: 'error', error: state.locked ? 'locked' : error };
  }

  private async succeed(c: StepContext, acct: Account, authMethod: string): Promise<FlowResult> {
    const { entry } = c;
    await this.deps.lockout.recordSuccess('route_auth', LoginFlows.identifier(entry.route.id, acct.key), c.ip || null);
    const meta: SessionMeta = { ip: c.ip, userAgent: c.userAgent };
    const account: SessionAccount = { email: acct.email ?? '', subject: acct.subject, userId: acct.userId, groups: acct.groups };
    const token = await this.svc.createSession(entry.route.id, account, 'active', authMethod, entry.cfg.session_max_age, meta);
    if (c.pendingToken) await this.svc.destroySession(entry.route.id, c.pendingToken);
    await this.deps.activity.record({
      source: 'route_auth',
      event_type: 'route_auth_login',
      msg: msg('route_auth.signed_in', { who: acct.subject, domain: entry.route.domain, method: authMethod }),
      details: { route_id: entry.route.id, email: acct.email, user: acct.subject, ...(acct.userId ? { user_id: acct.userId } : {}), method: authMethod },
      ip: c.ip || null,
    });
    return { kind: 'session', token, maxAgeMs: entry.cfg.session_max_age };
  }

  /** A pending session for an account key (the account may not exist: same answer either way). */
  private async startPending(c: StepContext, key: string, userId: number | null, authMethod: string): Promise<string> {
    if (c.pendingToken) await this.svc.destroySession(c.entry.route.id, c.pendingToken);
    return this.svc.createSession(c.entry.route.id, { email: key, subject: key, userId }, 'pending', authMethod, PENDING_TTL_MS, {
      ip: c.ip,
      userAgent: c.userAgent,
    });
  }

  /** The account of a visitor the route's OIDC provider let in: key their address (else oidc:<subject>). */
  static oidcAccount(key: string, subject: string, groups: string[]): Account {
    return { key, subject, email: key.startsWith('oidc:') ? null : key, userId: null, passwordHash: null, groups };
  }

  /**
   * Method oidc, after the provider let the visitor in (oidc.ts): the session, or with the route's
   * second factor a pending login (a code mailed to the provider's address now, or the route's
   * TOTP) that code() finishes.
   */
  async oidc(c: StepContext, who: { subject: string; email: string | null; groups: string[]; shown: string }): Promise<FlowResult> {
    const cfg = c.entry.cfg;
    const acct = LoginFlows.oidcAccount(who.email ?? `oidc:${who.subject}`, who.shown, who.groups);
    if (await this.locked(cfg.route_id, acct.key)) return { kind: 'error', error: 'locked' };
    if (!cfg.two_factor_enabled) return this.succeed(c, acct, 'oidc');
    const factor = cfg.two_factor_method === 'totp' ? 'totp' : 'email_code';
    if (factor === 'email_code' && !acct.email) return { kind: 'error', error: 'no_email' };
    if (c.pendingToken) await this.svc.destroySession(cfg.route_id, c.pendingToken);
    const token = await this.svc.createSession(
      cfg.route_id,
      { email: acct.key, subject: acct.subject, userId: null, groups: acct.groups },
      'pending',
      `oidc+${factor}`,
      PENDING_TTL_MS,
      { ip: c.ip, userAgent: c.userAgent },
    );
    if (factor === 'email_code') {
      const sent = await this.sendCode(c, acct);
      if (sent === 'failed') return { kind: 'error', error: 'mail_failed' };
    }
    return { kind: 'pending', token, notice: factor === 'totp' ? 'oidc_totp' : 'code_sent' };
  }

  /** email_password (alone, or as the first factor). `nameIn`: the configured email, or a route user's username or email. */
  async password(c: StepContext, nameIn: string, password: string): Promise<FlowResult> {
    const cfg = c.entry.cfg;
    const name = nameIn.trim().toLowerCase().slice(0, 254);
    if (cfg.method !== 'email_password') return { kind: 'error', error: 'invalid' };
    if (!name || !password) return this.fail(c, name || '-', 'empty credentials');
    const acct = await this.resolve(c.entry, name);
    const key = acct?.key ?? name;
    if (await this.locked(cfg.route_id, key)) return { kind: 'error', error: 'locked' };
    let ok = false;
    if (acct?.userId) {
      ok = !!acct.passwordHash && (await verifyPassword(acct.passwordHash, password.slice(0, 1024)));
    } else if (acct) {
      ok = !!acct.passwordHash && (await bcrypt.compare(password.slice(0, 200), acct.passwordHash));
    } else if (c.entry.route.user_ids.length) {
      // Unknown name on a route with users: the time of a Gatehouse-user check, so it tells nothing.
      await dummyVerify(password.slice(0, 1024));
    } else {
      // Compare against a dummy hash for unknown addresses: the time does not tell which one is configured.
      dummyHash ??= bcrypt.hash('gatehouse-route-auth-dummy', BCRYPT_ROUNDS);
      await bcrypt.compare(password.slice(0, 200), await dummyHash);
    }
    if (!ok || !acct) return this.fail(c, key, 'wrong email or password', 'invalid', acct);
    if (!cfg.two_factor_enabled) return this.succeed(c, acct, 'email_password');
    const factor = cfg.two_factor_method === 'totp' ? 'totp' : 'email_code';
    if (factor === 'email_code' && !acct.email) return { kind: 'error', error: 'no_email' };
    const token = await this.startPending(c, acct.key, acct.userId, `email_password+${factor}`);
    if (factor === 'email_code') {
      const sent = await this.sendCode(c, acct);
      if (sent === 'failed') return { kind: 'error', error: 'mail_failed' };
    }
    return { kind: 'pending', token, notice: factor === 'totp' ? 'enter_totp' : 'code_sent' };
  }

  /** email_code, step 1: ask for a code. Same answer for any name. */
  async requestCode(c: StepContext, nameIn: string): Promise<FlowResult> {
    const cfg = c.entry.cfg;
    const name = nameIn.trim().toLowerCase();
    if (cfg.method !== 'email_code') return { kind: 'error', error: 'invalid' };
    if (!name || name.length > 254 || (!name.includes('@') && !c.entry.route.user_ids.length)) return { kind: 'error', error: 'invalid' };
    const acct = await this.resolve(c.entry, name);
    const key = acct?.key ?? name;
    if (await this.locked(cfg.route_id, key)) return { kind: 'error', error: 'locked' };
    const token = await this.startPending(c, key, acct?.userId ?? null, 'email_code');
    if (acct?.email) {
      const sent = await this.sendCode(c, acct);
      if (sent === 'failed') return { kind: 'error', error: 'mail_failed' };
    }
    return { kind: 'pending', token, notice: 'code_sent' };
  }

  /** Resend the email code of the pending login (throttled). */
  async resend(c: StepContext): Promise<FlowResult> {
    const cfg = c.entry.cfg;
    const pending = await this.svc.pendingSession(cfg.route_id, c.pendingToken);
    if (!pending) return { kind: 'error', error: 'expired', clearPending: true };
    const usesMail = cfg.method === 'email_code' || (cfg.two_factor_enabled && cfg.two_factor_method === 'email_code');
    if (!usesMail) return { kind: 'error', error: 'invalid' };
    if (await this.locked(cfg.route_id, pending.email)) return { kind: 'error', error: 'locked' };
    const acct = await this.pendingAccount(c.entry, pending);
    if (!acct?.email) return { kind: 'notice', notice: 'code_sent' };
    const sent = await this.sendCode(c, acct);
    if (sent === 'failed') return { kind: 'error', error: 'mail_failed' };
    return { kind: 'notice', notice: sent === 'throttled' ? 'code_wait' : 'code_sent' };
  }

  /** The code step: email code (method email_code, or second factor) or TOTP (second factor). */
  async code(c: StepContext, codeIn: string): Promise<FlowResult> {
    const cfg = c.entry.cfg;
    const pending = await this.svc.pendingSession(cfg.route_id, c.pendingToken);
    if (!pending) return { kind: 'error', error: 'expired', clearPending: true };
    const code = codeIn.replace(/\s+/g, '');
    if (await this.locked(cfg.route_id, pending.email)) return { kind: 'error', error: 'locked' };
    const acct = await this.pendingAccount(c.entry, pending);
    if (pending.authMethod.startsWith('oidc+')) {
      // the route's second factor after its provider: the factor must still be the one it started with
      if (!acct || !cfg.two_factor_enabled || pending.authMethod !== `oidc+${cfg.two_factor_method}`)
        return { kind: 'error', error: 'expired', clearPending: true };
      if (cfg.two_factor_method === 'totp') {
        if (!cfg.totp_active) return { kind: 'error', error: 'totp_not_ready' };
        if (!(await this.svc.checkTotp(cfg, code))) return this.fail(c, acct.key, 'wrong TOTP code', 'code_invalid', acct);
      } else if (!(await this.useCode(cfg.route_id, acct.key, code))) return this.fail(c, acct.key, 'wrong or expired email code', 'code_invalid', acct);
      return this.succeed(c, acct, pending.authMethod);
    }
    const totp = cfg.two_factor_enabled && cfg.two_factor_method === 'totp' && pending.authMethod === 'email_password+totp';
    if (totp) {
      // The password step only starts a pending login for an existing account.
      if (!acct) return { kind: 'error', error: 'expired', clearPending: true };
      if (acct.userId !== null) {
        if (!(await this.svc.userTotpActive(cfg.route_id, acct.userId))) return { kind: 'error', error: 'totp_not_ready' };
        if (!(await this.svc.checkUserTotp(cfg.route_id, acct.userId, code))) return this.fail(c, acct.key, 'wrong TOTP code', 'code_invalid', acct);
      } else {
        if (!cfg.totp_active) return { kind: 'error', error: 'totp_not_ready' };
        if (!(await this.svc.checkTotp(cfg, code))) return this.fail(c, acct.key, 'wrong TOTP code', 'code_invalid', acct);
      }
      return this.succeed(c, acct, pending.authMethod);
    }
    const expected =
      cfg.method === 'email_code' ? 'email_code' : cfg.two_factor_enabled && cfg.two_factor_method === 'email_code' ? 'email_password+email_code' : null;
    if (!expected || pending.authMethod !== expected) return { kind: 'error', error: 'expired', clearPending: true };
    // An unknown name had no code sent: every code is wrong (and counts), like a wrong one.
    if (!acct || !(await this.useCode(cfg.route_id, pending.email, code)))
      return this.fail(c, pending.email, 'wrong or expired email code', 'code_invalid', acct);
    return this.succeed(c, acct, pending.authMethod);
  }

  /**
   * Method totp: one code from the app. `nameIn` (the form's account field, on routes with users):
   * empty or the configured email → the route's TOTP; a route user → that user's TOTP.
   */
  async totp(c: StepContext, codeIn: string, nameIn = ''): Promise<FlowResult> {
    const cfg = c.entry.cfg;
    if (cfg.method !== 'totp') return { kind: 'error', error: 'invalid' };
    const name = nameIn.trim().toLowerCase().slice(0, 254);
    const acct = name ? await this.resolve(c.entry, name) : this.configAccount(c.entry);
    const key = acct?.key ?? name;
    if (await this.locked(cfg.route_id, key)) return { kind: 'error', error: 'locked' };
    const code = codeIn.replace(/\s+/g, '');
    if (!acct) return this.fail(c, key, 'unknown account', 'code_invalid');
    if (acct.userId !== null) {
      if (!(await this.svc.userTotpActive(cfg.route_id, acct.userId))) return { kind: 'error', error: 'totp_not_ready' };
      if (!(await this.svc.checkUserTotp(cfg.route_id, acct.userId, code))) return this.fail(c, acct.key, 'wrong TOTP code', 'code_invalid', acct);
      return this.succeed(c, acct, 'totp');
    }
    if (!cfg.totp_active) return { kind: 'error', error: 'totp_not_ready' };
    if (!(await this.svc.checkTotp(cfg, code))) return this.fail(c, acct.key, 'wrong TOTP code', 'code_invalid', acct);
    return this.succeed(c, acct, 'totp');
  }

  /** Mails a new code to the account's address unless one went out less than EMAIL_CODE_RESEND_MS ago. */
  private async sendCode(c: StepContext, acct: Account): Promise<'sent' | 'throttled' | 'failed'> {
    const { RouteAuthCode } = this.svc.models;
    const routeId = c.entry.route.id;
    const key = acct.key;
    const now = this.deps.clock();
    const recent = await RouteAuthCode.count({ where: { route_id: routeId, email: key, sent_at: { [Op.gt]: now - EMAIL_CODE_RESEND_MS } } });
    if (recent > 0) return 'throttled';
    const code = String(crypto.randomInt(0, 1_000_000)).padStart(6, '0');
    // A new code replaces the older ones.
    await RouteAuthCode.update({ used_at: now }, { where: { route_id: routeId, email: key, used_at: null } });
    await RouteAuthCode.create({
      route_id: routeId,
      email: key,
      code_hash: this.svc.codeHash(routeId, key, code),
      expires_at: now + EMAIL_CODE_TTL_MS,
      used_at: null,
      attempts: 0,
      sent_at: now,
    });
    const mail = loginMail(c.lang, { code, domain: c.entry.route.domain, title: c.entry.cfg.title, minutes: EMAIL_CODE_TTL_MS / 60_000 });
    try {
      if (!acct.email) throw new Error('the account has no email address');
      await this.mailer.send(acct.email, mail.subject, mail.text, mail.html);
      return 'sent';
    } catch (err) {
      // Undo the throttle: the code was not delivered.
      await RouteAuthCode.destroy({ where: { route_id: routeId, email: key, sent_at: now } });
      this.deps.log.warn('route auth: sending the login code failed', { route_id: routeId, err: String((err as Error)?.message ?? err) });
      await this.deps.activity.record({
        severity: 'error',
        source: 'route_auth',
        event_type: 'route_auth_mail_failed',
        msg: msg('route_auth.mail_failed', { domain: c.entry.route.domain }),
        details: { route_id: routeId, error: String((err as Error)?.message ?? err) },
      });
      return 'failed';
    }
  }

  /** Checks and consumes the current code of route+account. Wrong tries count; the 5th burns the code. */
  private async useCode(routeId: number, key: string, code: string): Promise<boolean> {
    const { RouteAuthCode } = this.svc.models;
    const now = this.deps.clock();
    const row = await findRow(RouteAuthCode, {
      where: { route_id: routeId, email: key, used_at: null, expires_at: { [Op.gt]: now }, attempts: { [Op.lt]: EMAIL_CODE_MAX_ATTEMPTS } },
      order: [['id', 'DESC']],
    });
    if (!row) return false;
    const given = Buffer.from(this.svc.codeHash(routeId, key, /^\d{6}$/.test(code) ? code : 'x'), 'hex');
    const ok = crypto.timingSafeEqual(given, Buffer.from(row.code_hash, 'hex'));
    if (ok) {
      // Single use, also under concurrent posts: only one update finds used_at still null.
      const [n] = await RouteAuthCode.update({ used_at: now }, { where: { id: row.id, used_at: null } });
      return n > 0;
    }
    const attempts = Number(row.attempts) + 1;
    await RouteAuthCode.update({ attempts, ...(attempts >= EMAIL_CODE_MAX_ATTEMPTS ? { used_at: now } : {}) }, { where: { id: row.id } });
    return false;
  }
}
