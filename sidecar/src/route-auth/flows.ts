// The login flows of the route-auth pages, without HTTP: each step takes what the visitor sent and
// returns what happened. The HTTP layer (http.ts) turns that into cookies, redirects and pages.
//
// Methods:
// - email_password: email + password (bcrypt).
// - email_code: the visitor asks for a code for an address; when it is the configured address, a
//   6-digit code is mailed (valid EMAIL_CODE_TTL_MS = 10 min, single use, 5 tries, at most one mail
//   per EMAIL_CODE_RESEND_MS = 60 s per route and address). The answer is the same whether or not
//   the address is the configured one (no address probing).
// - totp: a code from the authenticator app (±1 step of 30 s accepted, each step once).
// - two-factor: email_password first, then an email code (sent right after the password step) or
//   a TOTP code.
// The first step of a two-step login leaves a "pending" session (own cookie, 10 minutes) that only
// the second step accepts; verify never does.
//
// Lockout: every failed step is recorded with deps.lockout (record type 'route_auth', identifier
// `<routeId>:<email>`, lower case); a locked identifier is refused before anything is checked, even
// with the right credentials, until the lock expires or an admin unlocks it
// (POST /api/v1/users/unlock {record_type: 'route_auth', username: '<routeId>:<email>'}).
// Success is recorded only when the whole login succeeded (so a known password cannot reset the
// counter of a second factor being guessed).
import crypto from 'node:crypto';
import bcrypt from 'bcrypt';
import { Op } from 'sequelize';
import type { Deps } from '../deps.js';
import type { Mailer } from '../smtp/service.js';
import { loginMail } from '../web/route-auth/i18n.js';
import type { Lang } from '../web/route-auth/i18n.js';
import type { RouteAuthRow } from './models.js';
import { EMAIL_CODE_MAX_ATTEMPTS, EMAIL_CODE_RESEND_MS, EMAIL_CODE_TTL_MS, PENDING_TTL_MS } from './schema.js';
import { BCRYPT_ROUNDS, type RouteAuthService, type SessionMeta } from './service.js';
import type { RouteEntry } from './view.js';

export type FlowError = 'invalid' | 'locked' | 'code_invalid' | 'totp_not_ready' | 'expired' | 'mail_failed';

export type FlowResult =
  /** signed in: set the session cookie, clear the pending one, redirect */
  | { kind: 'session'; token: string; maxAgeMs: number }
  /** first step done or code requested: set the pending cookie, show the code form */
  | { kind: 'pending'; token: string; notice: 'code_sent' | 'enter_totp' }
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

let dummyHash: Promise<string> | undefined;

export class LoginFlows {
  constructor(
    private deps: Deps,
    private svc: RouteAuthService,
  ) {}

  private get mailer(): Mailer | undefined {
    return this.deps.mailer as Mailer | undefined;
  }

  static identifier(routeId: number, email: string): string {
    return `${routeId}:${email.trim().toLowerCase()}`;
  }

  private async locked(routeId: number, email: string): Promise<boolean> {
    return (await this.deps.lockout.state('route_auth', LoginFlows.identifier(routeId, email))).locked;
  }

  /** Records a failure; returns 'locked' when this failure reached the limit. */
  private async fail(c: StepContext, email: string, reason: string, error: FlowError = 'invalid'): Promise<FlowResult> {
    const id = LoginFlows.identifier(c.entry.route.id, email);
    const state = await this.deps.lockout.recordFailure('route_auth', id, c.ip || null);
    await this.deps.activity.record({
      severity: 'warning',
      source: 'route_auth',
      event_type: state.locked ? 'route_auth_locked' : 'route_auth_login_failed',
      message: state.locked ? `Route login ${c.entry.route.domain} locked for ${email} after ${state.failures} failures` : `Failed route login on ${c.entry.route.domain} (${reason})`,
      details: { route_id: c.entry.route.id, email, reason, failures: state.failures },
      ip: c.ip || null,
    });
    return { kind: 'error', error: state.locked ? 'locked' : error };
  }

  private async succeed(c: StepContext, email: string, authMethod: string): Promise<FlowResult> {
    const { entry } = c;
    await this.deps.lockout.recordSuccess('route_auth', LoginFlows.identifier(entry.route.id, email), c.ip || null);
    const meta: SessionMeta = { ip: c.ip, userAgent: c.userAgent };
    const token = await this.svc.createSession(entry.route.id, entry.cfg.email, 'active', authMethod, entry.cfg.session_max_age, meta);
    if (c.pendingToken) await this.svc.destroySession(entry.route.id, c.pendingToken);
    await this.deps.activity.record({ source: 'route_auth', event_type: 'route_auth_login', message: `Signed in to ${entry.route.domain} (${authMethod})`, details: { route_id: entry.route.id, email: entry.cfg.email, method: authMethod }, ip: c.ip || null });
    return { kind: 'session', token, maxAgeMs: entry.cfg.session_max_age };
  }

  private async startPending(c: StepContext, email: string, authMethod: string): Promise<string> {
    if (c.pendingToken) await this.svc.destroySession(c.entry.route.id, c.pendingToken);
    return this.svc.createSession(c.entry.route.id, email, 'pending', authMethod, PENDING_TTL_MS, { ip: c.ip, userAgent: c.userAgent });
  }

  /** email_password (alone, or as the first factor). */
  async password(c: StepContext, emailIn: string, password: string): Promise<FlowResult> {
    const cfg = c.entry.cfg;
    const email = emailIn.trim().toLowerCase();
    if (cfg.method !== 'email_password') return { kind: 'error', error: 'invalid' };
    if (!email || !password) return this.fail(c, email || '-', 'empty credentials');
    if (await this.locked(cfg.route_id, email)) return { kind: 'error', error: 'locked' };
    const match = email === cfg.email.toLowerCase() && !!cfg.password_hash;
    // Compare against a dummy hash for unknown addresses: the time does not tell which one is configured.
    dummyHash ??= bcrypt.hash('gatehouse-route-auth-dummy', BCRYPT_ROUNDS);
    const ok = await bcrypt.compare(password.slice(0, 200), match ? cfg.password_hash! : await dummyHash);
    if (!ok || !match) return this.fail(c, email, 'wrong email or password');
    if (!cfg.two_factor_enabled) return this.succeed(c, email, 'email_password');
    const factor = cfg.two_factor_method === 'totp' ? 'totp' : 'email_code';
    const token = await this.startPending(c, email, `email_password+${factor}`);
    if (factor === 'email_code') {
      const sent = await this.sendCode(c, email);
      if (sent === 'failed') return { kind: 'error', error: 'mail_failed' };
    }
    return { kind: 'pending', token, notice: factor === 'totp' ? 'enter_totp' : 'code_sent' };
  }

  /** email_code, step 1: ask for a code. Same answer for any address. */
  async requestCode(c: StepContext, emailIn: string): Promise<FlowResult> {
    const cfg = c.entry.cfg;
    const email = emailIn.trim().toLowerCase();
    if (cfg.method !== 'email_code') return { kind: 'error', error: 'invalid' };
    if (!email || email.length > 254 || !email.includes('@')) return { kind: 'error', error: 'invalid' };
    if (await this.locked(cfg.route_id, email)) return { kind: 'error', error: 'locked' };
    const token = await this.startPending(c, email, 'email_code');
    if (email === cfg.email.toLowerCase()) {
      const sent = await this.sendCode(c, email);
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
    if (pending.email !== cfg.email.toLowerCase()) return { kind: 'notice', notice: 'code_sent' };
    const sent = await this.sendCode(c, pending.email);
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
    const totp = cfg.two_factor_enabled && cfg.two_factor_method === 'totp' && pending.authMethod === 'email_password+totp';
    if (totp) {
      if (!cfg.totp_active) return { kind: 'error', error: 'totp_not_ready' };
      if (!(await this.svc.checkTotp(cfg, code))) return this.fail(c, pending.email, 'wrong TOTP code', 'code_invalid');
      return this.succeed(c, pending.email, pending.authMethod);
    }
    const expected = cfg.method === 'email_code' ? 'email_code' : cfg.two_factor_enabled && cfg.two_factor_method === 'email_code' ? 'email_password+email_code' : null;
    if (!expected || pending.authMethod !== expected) return { kind: 'error', error: 'expired', clearPending: true };
    if (!(await this.useCode(cfg, pending.email, code))) return this.fail(c, pending.email, 'wrong or expired email code', 'code_invalid');
    return this.succeed(c, pending.email, pending.authMethod);
  }

  /** Method totp: one code from the app. The identifier is the configured address. */
  async totp(c: StepContext, codeIn: string): Promise<FlowResult> {
    const cfg = c.entry.cfg;
    if (cfg.method !== 'totp') return { kind: 'error', error: 'invalid' };
    if (await this.locked(cfg.route_id, cfg.email)) return { kind: 'error', error: 'locked' };
    if (!cfg.totp_active) return { kind: 'error', error: 'totp_not_ready' };
    if (!(await this.svc.checkTotp(cfg, codeIn.replace(/\s+/g, '')))) return this.fail(c, cfg.email, 'wrong TOTP code', 'code_invalid');
    return this.succeed(c, cfg.email, 'totp');
  }

  /** Mails a new code unless one went out less than EMAIL_CODE_RESEND_MS ago. */
  private async sendCode(c: StepContext, email: string): Promise<'sent' | 'throttled' | 'failed'> {
    const { RouteAuthCode } = this.svc.models;
    const routeId = c.entry.route.id;
    const now = this.deps.clock();
    const recent = await RouteAuthCode.count({ where: { route_id: routeId, email, sent_at: { [Op.gt]: now - EMAIL_CODE_RESEND_MS } } });
    if (recent > 0) return 'throttled';
    const code = String(crypto.randomInt(0, 1_000_000)).padStart(6, '0');
    // A new code replaces the older ones.
    await RouteAuthCode.update({ used_at: now }, { where: { route_id: routeId, email, used_at: null } });
    await RouteAuthCode.create({ route_id: routeId, email, code_hash: this.svc.codeHash(routeId, email, code), expires_at: now + EMAIL_CODE_TTL_MS, used_at: null, attempts: 0, sent_at: now });
    const mail = loginMail(c.lang, { code, domain: c.entry.route.domain, title: c.entry.cfg.title, minutes: EMAIL_CODE_TTL_MS / 60_000 });
    try {
      if (!this.mailer) throw new Error('no mailer');
      await this.mailer.send(email, mail.subject, mail.text, mail.html);
      return 'sent';
    } catch (err) {
      // Undo the throttle: the code was not delivered.
      await RouteAuthCode.destroy({ where: { route_id: routeId, email, sent_at: now } });
      this.deps.log.warn('route auth: sending the login code failed', { route_id: routeId, err: String((err as Error)?.message ?? err) });
      await this.deps.activity.record({ severity: 'error', source: 'route_auth', event_type: 'route_auth_mail_failed', message: `Login code mail for ${c.entry.route.domain} failed`, details: { route_id: routeId, error: String((err as Error)?.message ?? err) } });
      return 'failed';
    }
  }

  /** Checks and consumes the current code of route+email. Wrong tries count; the 5th burns the code. */
  private async useCode(cfg: RouteAuthRow, email: string, code: string): Promise<boolean> {
    const { RouteAuthCode } = this.svc.models;
    const now = this.deps.clock();
    const row = (await RouteAuthCode.findOne({
      where: { route_id: cfg.route_id, email, used_at: null, expires_at: { [Op.gt]: now }, attempts: { [Op.lt]: EMAIL_CODE_MAX_ATTEMPTS } },
      order: [['id', 'DESC']],
      raw: true,
    })) as unknown as { id: number; code_hash: string; attempts: number } | null;
    if (!row) return false;
    const given = Buffer.from(this.svc.codeHash(cfg.route_id, email, /^\d{6}$/.test(code) ? code : 'x'), 'hex');
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
