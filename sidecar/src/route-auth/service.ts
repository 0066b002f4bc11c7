// RouteAuthService (ctx.routeAuth): the route-auth configuration of a route (admin API), TOTP
// setup, branding images, and the server-side sessions the verify endpoint checks.
//
// Rules kept here (docs/guides/protection.md):
// - only HTTP routes (L4 → 400), never together with basic auth on the same route (→ 400);
// - session_max_age one of 1h, 12h, 24h, 7d, 30d (ms);
// - deleting the configuration, or changing its password, email, login method or second factor,
//   ends every session of the route (in the database and in the verify cache);
// - the route's users (routes.user_ids) sign in with their own Gatehouse credentials; deleting a
//   user or changing their password ends their route sessions (watchUsers: the users service's
//   user_credentials_changed event), and removing them from
//   user_ids shuts them out at once (verify checks the route's current user_ids);
// - creating or deleting a configuration goes through the proxy's transact(), so the Caddy
//   configuration (forward auth on/off) and the database change together.
import { msg } from '@gatehouse/common/messages/index.js';
import crypto from 'node:crypto';
import bcrypt from 'bcrypt';
import { newTotpSecret, totpEnrolment, totpStep } from '../util/totp.js';
import { Op, type Transaction } from 'sequelize';
import type { Deps } from '../deps.js';
import type { Models, UserRow } from '../db/models.js';
import type { RouteRow } from '../routes/model.js';
import { AppError, notFound, unprocessable } from '../util/errors.js';
import type { Mailer } from '../smtp/service.js';
import { BrandingStore, fetchImage, mimeOfFile, type BrandingKind } from './branding.js';
import {
  hasRouteAuth,
  listColumn,
  normalizeAuthRow,
  type BrandingColumns,
  normalizeUserTotpRow,
  protectedRouteIds,
  type RouteAuthModels,
  type RouteAuthRow,
  type RouteAuthUserTotpRow,
} from './models.js';
import { type PreviewInput, type RouteAuthInput, type RouteAuthView } from './schema.js';
import { AuthView, routeInfo, type RouteInfo, type SessionEntry } from './view.js';
import { findRows, findRow } from '../db/define.js';
import { FLOW_MAX_AGE_MS } from '../oidc/service.js';

export const BCRYPT_ROUNDS = 12;

/** Whether these sign-in settings ask the visitor for a TOTP code (as the method or the second factor). */
const needsTotp = (method: string, secondFactor: string | null) => method === 'totp' || (hasSecondFactor(method) && secondFactor === 'totp');
/** The methods a second factor can follow: email_password, oidc. */
export const hasSecondFactor = (method: string) => method === 'email_password' || method === 'oidc';
/** A list of method oidc (allowed_emails, allowed_groups) as stored: JSON, each entry once; null when empty. */
const storedList = (v: string[] | undefined): string | null => (v?.length ? JSON.stringify([...new Set(v)]) : null);

export interface SessionMeta {
  ip?: string | null;
  userAgent?: string | null;
}

/** Whose session: the address for X-Auth-Email, the shown name, the route user (null: configured account). */
export interface SessionAccount {
  email: string;
  subject: string;
  userId: number | null;
  /** an oidc sign-in's groups (X-Auth-Groups) */
  groups?: string[];
}

export interface RouteAuthCollaborators {
  /** the route-auth tables (route-auth/models.ts) */
  models: RouteAuthModels;
  /** every configuration write goes through the proxy's transaction */
  proxy: { transact<T>(fn: (t: Transaction, changes: { routes(...ids: number[]): void }) => Promise<T>): Promise<T> };
  mailer: Mailer;
}

export const sha256 = (s: string) => crypto.createHash('sha256').update(s).digest('hex');
export const newToken = () => crypto.randomBytes(32).toString('base64url');

export class RouteAuthService {
  readonly models: Models & RouteAuthModels;
  readonly view: AuthView;
  readonly branding: BrandingStore;
  private codeKey: Buffer;

  readonly mailer: Mailer;
  private readonly proxy: RouteAuthCollaborators['proxy'];

  constructor(
    private deps: Deps,
    c: RouteAuthCollaborators,
  ) {
    this.models = { ...deps.db.models, ...c.models };
    this.proxy = c.proxy;
    this.mailer = c.mailer;
    this.view = new AuthView(this.models, deps.clock);
    this.branding = new BrandingStore(deps.config.dataDir);
    this.codeKey = deps.crypto.derive('route-auth-email-code');
  }

  /** Invalidate the verify view on every write to the routes table (domain, IP filter, deletion): the bus's rows_changed. */
  watchRoutes(): void {
    const view = this.view;
    this.deps.events.on('rows_changed', (e) => {
      if (e.table !== 'routes') return;
      view.invalidateRoutes();
      if (e.destroyed) {
        view.dropAllSessions();
        void this.cleanupBranding().catch(() => undefined);
      }
    });
  }

  /** End the route sessions of a Gatehouse user who is deleted or gets a new password (the users service's event). */
  watchUsers(): void {
    this.deps.events.on('user_credentials_changed', async (e) => {
      this.view.dropUserSessions(e.user_id);
      await this.models.RouteAuthSession.destroy({ where: { user_id: e.user_id } });
      this.view.dropUserSessions(e.user_id);
    });
  }

  /** A write of one route's route-auth rows: only that route's hosts are re-rendered (proxy/apply.ts). */
  private async write<T>(routeId: number, fn: (t: Transaction) => Promise<T>): Promise<T> {
    return this.proxy.transact((t, changes) => {
      changes.routes(routeId);
      return fn(t);
    });
  }

  private async route(id: number, transaction?: Transaction): Promise<RouteInfo> {
    const row = (await this.models.Route.findByPk(id, { raw: true, transaction })) as RouteRow | null;
    if (!row) throw notFound(msg('resource.not_found', { what: 'Route' }));
    return routeInfo(row);
  }

  async config(routeId: number, transaction?: Transaction): Promise<RouteAuthRow | null> {
    const row = await findRow(this.models.RouteAuth, { where: { route_id: routeId }, transaction });
    return row ? normalizeAuthRow(row) : null;
  }

  /** For the routes service: refuse basic auth while a route-auth configuration exists. */
  async hasRouteAuth(routeId: number, transaction?: Transaction): Promise<boolean> {
    return hasRouteAuth(this.models, routeId, transaction);
  }

  /** For the renderer's snapshot: ids of the routes that have route auth. */
  async protectedRouteIds(transaction?: Transaction): Promise<Set<number>> {
    return protectedRouteIds(this.models, transaction);
  }

  /** The route's users (routes.user_ids that exist), with their TOTP state on this route. */
  async routeUsers(routeId: number, userIds: number[]): Promise<{ user: UserRow; totp: RouteAuthUserTotpRow | null }[]> {
    if (!userIds.length) return [];
    const users = await findRows(this.models.User, { where: { id: { [Op.in]: userIds } }, order: [['id', 'ASC']] });
    const totps = await findRows(this.models.RouteAuthUserTotp, { where: { route_id: routeId, user_id: { [Op.in]: userIds } } });
    const byUser = new Map(totps.map((t) => [Number(t.user_id), normalizeUserTotpRow(t)]));
    return users.map((u) => ({ user: { ...u, id: Number(u.id) }, totp: byUser.get(Number(u.id)) ?? null }));
  }

  private async apiWithUsers(c: RouteAuthRow): Promise<RouteAuthView> {
    const route = await this.route(c.route_id);
    const users = await this.routeUsers(c.route_id, route.user_ids);
    return {
      ...this.toApi(c),
      /** who can sign in besides the configured account: the route's user_ids */
      users: users.map(({ user, totp }) => ({
        user_id: user.id,
        username: user.username,
        email: user.email,
        totp_active: !!totp?.totp_active,
        totp_setup_pending: !!totp?.totp_pending_secret,
      })),
    };
  }

  toApi(c: RouteAuthRow): Omit<RouteAuthView, 'users'> {
    const v = c.updated_at;
    return {
      route_id: c.route_id,
      method: c.method,
      two_factor_enabled: c.two_factor_enabled,
      two_factor_method: c.two_factor_enabled ? c.two_factor_method : null,
      email: c.email,
      password_set: !!c.password_hash,
      totp_active: c.totp_active,
      totp_setup_pending: !!c.totp_pending_secret,
      pending_method: c.pending_method,
      pending_two_factor_method: c.pending_method ? c.pending_two_factor_method : null,
      session_max_age: c.session_max_age,
      oidc_provider_id: c.method === 'oidc' || c.pending_method === 'oidc' ? c.oidc_provider_id : null,
      allowed_emails: listColumn(c.allowed_emails),
      allowed_groups: listColumn(c.allowed_groups),
      title: c.title,
      description: c.description,
      primary_color: c.primary_color,
      bg_color: c.bg_color,
      /** where the login page serves them (on the route's own domain) */
      logo: c.logo ? `/route-auth/branding/logo?v=${v}` : null,
      bg_image: c.bg_image ? `/route-auth/branding/bg-image?v=${v}` : null,
      created_at: new Date(c.created_at).toISOString(),
      updated_at: new Date(c.updated_at).toISOString(),
    };
  }

  async get(routeId: number): Promise<RouteAuthView | null> {
    await this.route(routeId);
    const c = await this.config(routeId);
    return c ? this.apiWithUsers(c) : null;
  }

  private usable(route: RouteInfo, field = 'method'): void {
    if (route.route_type !== 'http') throw new AppError('conflict', msg('route_auth.http_only'), { [field]: msg('route_auth.field.l4_route') });
    if (route.basic_auth) throw new AppError('conflict', msg('route_auth.basic_auth'), { [field]: msg('route_auth.field.basic_auth') });
  }

  /** POST /routes/:id/auth: create or replace. Omitted optional fields keep their stored values; null clears. */
  async save(routeId: number, input: RouteAuthInput, actor?: number): Promise<RouteAuthView> {
    const pre = await this.route(routeId);
    this.usable(pre);
    const needsMail = input.method === 'email_code' || (input.two_factor_enabled && input.two_factor_method === 'email_code');
    if (needsMail && !(await this.mailer.configured())) {
      const field = input.method === 'email_code' ? 'method' : 'two_factor_method';
      throw new AppError('conflict', msg('route_auth.smtp_needed'), { [field]: msg('route_auth.field.smtp_needed') });
    }
    if (input.method === 'oidc') await this.checkProvider(input.oidc_provider_id ?? 0);
    const existing = await this.config(routeId);
    const needsPassword = input.method === 'email_password';
    if (needsPassword && !input.password && !existing?.password_hash)
      throw unprocessable(msg('route_auth.password_required'), { password: msg('field.required') });
    // Slow or remote work before the transaction: hashing, fetching branding URLs.
    const passwordHash = input.password ? await bcrypt.hash(input.password, BCRYPT_ROUNDS) : undefined;
    const fetched: Partial<Record<BrandingKind, Uint8Array>> = {};
    if (input.logo_url) fetched.logo = await fetchImage(input.logo_url, 'logo_url', this.deps.outbound('branding'));
    if (input.bg_image_url) fetched.bg_image = await fetchImage(input.bg_image_url, 'bg_image_url', this.deps.outbound('branding'));

    const newFiles: string[] = [];
    const oldFiles: string[] = [];
    for (const kind of ['logo', 'bg_image'] as const) {
      const data = fetched[kind];
      if (data) newFiles.push(this.branding.write(routeId, kind, data, kind === 'logo' ? 'logo_url' : 'bg_image_url'));
    }
    let ended = false;
    let created = false;
    try {
      await this.write(routeId, async (t) => {
        const route = await this.route(routeId, t);
        this.usable(route);
        const cur = await this.config(routeId, t);
        const now = this.deps.clock();
        const requested = {
          method: input.method,
          twoFactor: hasSecondFactor(input.method) && !!input.two_factor_enabled,
          secondFactor: hasSecondFactor(input.method) && input.two_factor_enabled ? (input.two_factor_method ?? null) : null,
        };
        const oidc = input.method === 'oidc';
        // A switch to TOTP waits for totp-verify while the configuration's TOTP is not active: the
        // current method stays in force (visitors keep signing in with it) and the requested one is
        // stored as pending. A new configuration, or one that already uses TOTP, takes it at once.
        const waits =
          !!cur &&
          needsTotp(requested.method, requested.secondFactor) &&
          !cur.totp_active &&
          !needsTotp(cur.method, cur.two_factor_enabled ? cur.two_factor_method : null);
        const method = waits ? cur!.method : requested.method;
        const twoFactor = waits ? cur!.two_factor_enabled : requested.twoFactor;
        const keep = <K extends keyof RouteAuthRow>(k: K, v: RouteAuthRow[K] | undefined): RouteAuthRow[K] | null =>
          v === undefined ? (cur ? cur[k] : null) : v;
        const values: Partial<RouteAuthRow> = {
          route_id: routeId,
          method,
          two_factor_enabled: twoFactor,
          two_factor_method: waits ? (cur!.two_factor_enabled ? cur!.two_factor_method : null) : requested.secondFactor,
          pending_method: waits ? requested.method : null,
          pending_two_factor_method: waits ? requested.secondFactor : null,
          email: input.email,
          password_hash: passwordHash ?? cur?.password_hash ?? null,
          session_max_age: input.session_max_age,
          oidc_provider_id: oidc ? (input.oidc_provider_id ?? null) : null,
          allowed_emails: oidc ? storedList(input.allowed_emails) : null,
          allowed_groups: oidc ? storedList(input.allowed_groups) : null,
          title: keep('title', input.title),
          description: keep('description', input.description),
          primary_color: keep('primary_color', input.primary_color),
          bg_color: keep('bg_color', input.bg_color),
          updated_at: now,
        };
        let i = 0;
        for (const kind of ['logo', 'bg_image'] as const) {
          const url = kind === 'logo' ? input.logo_url : input.bg_image_url;
          if (fetched[kind]) {
            values[kind] = newFiles[i++];
            if (cur?.[kind]) oldFiles.push(cur[kind]!);
          } else if (url === null) {
            values[kind] = null;
            if (cur?.[kind]) oldFiles.push(cur[kind]!);
          }
        }
        if (cur) {
          ended =
            passwordHash !== undefined ||
            cur.email !== input.email ||
            cur.method !== method ||
            cur.two_factor_enabled !== twoFactor ||
            (twoFactor && cur.two_factor_method !== values.two_factor_method) ||
            // who may sign in through the provider changed: sessions of those no longer let in end
            (cur.oidc_provider_id ?? null) !== values.oidc_provider_id ||
            (cur.allowed_emails ?? null) !== values.allowed_emails ||
            (cur.allowed_groups ?? null) !== values.allowed_groups;
          await this.models.RouteAuth.update(values, { where: { route_id: routeId }, transaction: t });
          if (ended) {
            await this.models.RouteAuthSession.destroy({ where: { route_id: routeId }, transaction: t });
            await this.models.RouteAuthCode.destroy({ where: { route_id: routeId }, transaction: t });
          }
        } else {
          created = true;
          await this.models.RouteAuth.create({ ...values, totp_active: false, created_at: now }, { transaction: t });
        }
      });
    } catch (err) {
      for (const f of newFiles) this.branding.remove(f);
      throw err;
    } finally {
      this.view.invalidateRoutes();
      if (ended) this.view.dropRouteSessions(routeId);
    }
    for (const f of oldFiles) this.branding.remove(f);
    await this.deps.events.emit({
      type: created ? 'route_auth_created' : 'route_auth_updated',
      route_id: routeId,
      domain: pre.domain,
      method: input.method,
      two_factor_method: input.two_factor_enabled ? (input.two_factor_method ?? null) : null,
      sessions_ended: ended,
      password_changed: passwordHash !== undefined,
      actor: actor ?? null,
    });
    return this.apiWithUsers((await this.config(routeId))!);
  }

  /** DELETE /routes/:id/auth: removes the configuration, its sessions, codes and branding files. */
  async remove(routeId: number, actor?: number): Promise<boolean> {
    const route = await this.route(routeId);
    let removed: RouteAuthRow | null = null;
    try {
      removed = await this.write(routeId, async (t) => {
        const cur = await this.config(routeId, t);
        if (!cur) return null;
        await this.models.RouteAuthSession.destroy({ where: { route_id: routeId }, transaction: t });
        await this.models.RouteAuthCode.destroy({ where: { route_id: routeId }, transaction: t });
        await this.models.RouteAuth.destroy({ where: { route_id: routeId }, transaction: t });
        return cur;
      });
    } finally {
      this.view.invalidateRoutes();
      this.view.dropRouteSessions(routeId);
    }
    if (!removed) return false;
    this.branding.remove(removed.logo);
    this.branding.remove(removed.bg_image);
    await this.deps.events.emit({ type: 'route_auth_deleted', route_id: routeId, domain: route.domain, actor: actor ?? null });
    return true;
  }

  /** Method oidc: the provider must exist and be enabled (422 fields.oidc_provider_id). */
  private async checkProvider(id: number): Promise<void> {
    const p = id > 0 ? await findRow(this.models.OidcProvider, { where: { id }, attributes: ['enabled'] }) : null;
    if (!p || !(p.enabled === true || Number(p.enabled) === 1))
      throw unprocessable(msg('route_auth.oidc_provider'), { oidc_provider_id: msg('route_auth.field.oidc_provider') });
  }

  private async requireConfig(routeId: number): Promise<{ route: RouteInfo; cfg: RouteAuthRow }> {
    const route = await this.route(routeId);
    const cfg = await this.config(routeId);
    if (!cfg) throw new AppError('conflict', msg('route_auth.not_configured'), { route_auth: msg('route_auth.field.not_configured') });
    return { route, cfg };
  }

  /** A user of the route (in its user_ids and existing), for the per-user TOTP endpoints; 400 otherwise. */
  private async routeUser(route: RouteInfo, userId: number): Promise<UserRow> {
    const row = route.user_ids.includes(userId) ? ((await this.models.User.findByPk(userId, { raw: true })) as UserRow | null) : null;
    if (!row) throw unprocessable(msg('route_auth.not_route_user'), { user_id: msg('route_auth.field.not_route_user') });
    return { ...row, id: Number(row.id) };
  }

  private async userTotp(routeId: number, userId: number): Promise<RouteAuthUserTotpRow | null> {
    const row = await findRow(this.models.RouteAuthUserTotp, { where: { route_id: routeId, user_id: userId } });
    return row ? normalizeUserTotpRow(row) : null;
  }

  /**
   * POST /routes/:id/auth/totp-setup {user_id?}: a new secret for a SAVED configuration (or, with
   * user_id, for that user of the route), kept pending until totp-verify confirms a code from it
   * (an active TOTP keeps working until then).
   */
  async totpSetup(routeId: number, actor?: number, userId?: number): Promise<{ secret: string; otpauth_url: string; qr_code: string }> {
    const { route, cfg } = await this.requireConfig(routeId);
    const user = userId === undefined ? null : await this.routeUser(route, userId);
    const secret = newTotpSecret();
    const { otpauth_url, qr_code } = await totpEnrolment(secret, `${route.domain}:${user ? user.username : cfg.email}`);
    const now = this.deps.clock();
    const sealed = this.deps.crypto.seal(secret);
    if (user) {
      const cur = await this.userTotp(routeId, user.id);
      if (cur) await this.models.RouteAuthUserTotp.update({ totp_pending_secret: sealed, updated_at: now }, { where: { id: cur.id } });
      else
        await this.models.RouteAuthUserTotp.create({
          route_id: routeId,
          user_id: user.id,
          totp_secret: null,
          totp_pending_secret: sealed,
          totp_active: false,
          totp_last_step: null,
          created_at: now,
          updated_at: now,
        });
    } else {
      await this.models.RouteAuth.update({ totp_pending_secret: sealed, updated_at: now }, { where: { route_id: routeId } });
      this.view.invalidateRoutes();
    }
    await this.deps.activity.record({
      source: 'routes',
      event_type: 'route_auth_totp_setup',
      msg: msg('route_auth.totp_setup', { domain: route.domain, username: user ? user.username : null }),
      details: { route_id: routeId, ...(user ? { user_id: user.id } : {}) },
      user_id: actor,
    });
    return { secret, otpauth_url, qr_code };
  }

  /** The 30-second step a code matches (±TOTP_WINDOW around now), or null. */
  totpStep(secretBase32: string, token: string): number | null {
    return totpStep(secretBase32, token, this.deps.clock());
  }

  /** POST /routes/:id/auth/totp-verify {token, user_id?}: activates the pending secret. */
  async totpVerify(routeId: number, token: string, actor?: number, userId?: number): Promise<RouteAuthView> {
    const { route, cfg } = await this.requireConfig(routeId);
    const user = userId === undefined ? null : await this.routeUser(route, userId);
    const pending = user ? ((await this.userTotp(routeId, user.id))?.totp_pending_secret ?? null) : cfg.totp_pending_secret;
    if (!pending) throw new AppError('conflict', msg('route_auth.no_totp_setup'), { token: msg('route_auth.field.no_totp_setup') });
    const step = this.totpStep(this.deps.crypto.open(pending), token);
    if (step === null) throw unprocessable(msg('route_auth.code_mismatch'), { token: msg('route_auth.field.invalid_code') });
    const values = { totp_secret: pending, totp_pending_secret: null, totp_active: true, totp_last_step: step, updated_at: this.deps.clock() };
    let switched = false;
    if (user) await this.models.RouteAuthUserTotp.update(values, { where: { route_id: routeId, user_id: user.id } });
    else {
      // A switch to TOTP that waited for this verification takes effect now; like any change of the
      // login method it ends the route's sessions.
      const to = cfg.pending_method;
      switched = to !== null;
      await this.write(routeId, async (t) => {
        await this.models.RouteAuth.update(
          to
            ? {
                ...values,
                method: to,
                two_factor_enabled: cfg.pending_two_factor_method !== null,
                two_factor_method: cfg.pending_two_factor_method,
                pending_method: null,
                pending_two_factor_method: null,
              }
            : values,
          { where: { route_id: routeId }, transaction: t },
        );
        if (to) {
          await this.models.RouteAuthSession.destroy({ where: { route_id: routeId }, transaction: t });
          await this.models.RouteAuthCode.destroy({ where: { route_id: routeId }, transaction: t });
        }
      }).finally(() => {
        this.view.invalidateRoutes();
        if (to) this.view.dropRouteSessions(routeId);
      });
    }
    await this.deps.activity.record({
      source: 'routes',
      event_type: 'route_auth_totp_activated',
      msg: msg('route_auth.totp_activated', { domain: route.domain, username: user ? user.username : null }),
      details: { route_id: routeId, ...(user ? { user_id: user.id } : {}), ...(switched ? { method: cfg.pending_method } : {}) },
      user_id: actor,
    });
    return this.apiWithUsers((await this.config(routeId))!);
  }

  /** Checks a TOTP code at login and records its step (a code is accepted once). */
  async checkTotp(cfg: RouteAuthRow, token: string): Promise<boolean> {
    if (!cfg.totp_active || !cfg.totp_secret || !/^\d{6}$/.test(token)) return false;
    const step = this.totpStep(this.deps.crypto.open(cfg.totp_secret), token);
    if (step === null) return false;
    // Atomic replay guard: only one request can move totp_last_step past this step.
    const [n] = await this.models.RouteAuth.update(
      { totp_last_step: step },
      { where: { route_id: cfg.route_id, [Op.or]: [{ totp_last_step: null }, { totp_last_step: { [Op.lt]: step } }] } },
    );
    if (n > 0) this.view.invalidateRoutes();
    return n > 0;
  }

  /** Whether a route user has an active TOTP on the route. */
  async userTotpActive(routeId: number, userId: number): Promise<boolean> {
    return !!(await this.userTotp(routeId, userId))?.totp_active;
  }

  /** Checks a route user's TOTP code at login (each step once, like checkTotp). */
  async checkUserTotp(routeId: number, userId: number, token: string): Promise<boolean> {
    const t = await this.userTotp(routeId, userId);
    if (!t?.totp_active || !t.totp_secret || !/^\d{6}$/.test(token)) return false;
    const step = this.totpStep(this.deps.crypto.open(t.totp_secret), token);
    if (step === null) return false;
    const [n] = await this.models.RouteAuthUserTotp.update(
      { totp_last_step: step },
      { where: { id: t.id, [Op.or]: [{ totp_last_step: null }, { totp_last_step: { [Op.lt]: step } }] } },
    );
    return n > 0;
  }

  // ---- branding ----

  async setBranding(routeId: number, kind: BrandingKind, data: Uint8Array, actor?: number): Promise<RouteAuthView> {
    const { route, cfg } = await this.requireConfig(routeId);
    const name = this.branding.write(routeId, kind, data, 'file');
    try {
      await this.models.RouteAuth.update({ [kind]: name, updated_at: this.deps.clock() }, { where: { route_id: routeId } });
    } catch (err) {
      this.branding.remove(name);
      throw err;
    }
    this.branding.remove(cfg[kind]);
    this.view.invalidateRoutes();
    await this.deps.activity.record({
      source: 'routes',
      event_type: 'route_auth_branding',
      msg: msg('route_auth.branding_uploaded', { kind: kind === 'logo' ? 'logo' : 'background', domain: route.domain }),
      details: { route_id: routeId, kind, bytes: data.length },
      user_id: actor,
    });
    return this.apiWithUsers((await this.config(routeId))!);
  }

  async deleteBranding(routeId: number, kind: BrandingKind, actor?: number): Promise<RouteAuthView> {
    const { route, cfg } = await this.requireConfig(routeId);
    if (cfg[kind]) {
      await this.models.RouteAuth.update({ [kind]: null, updated_at: this.deps.clock() }, { where: { route_id: routeId } });
      this.branding.remove(cfg[kind]);
      this.view.invalidateRoutes();
      await this.deps.activity.record({
        source: 'routes',
        event_type: 'route_auth_branding',
        msg: msg('route_auth.branding_removed', { kind: kind === 'logo' ? 'logo' : 'background', domain: route.domain }),
        details: { route_id: routeId, kind },
        user_id: actor,
      });
    }
    return this.apiWithUsers((await this.config(routeId))!);
  }

  /** A stored branding image for the admin API: its file and type (404 when the route has none). */
  async brandingImage(routeId: number, kind: BrandingKind): Promise<{ file: string; mime: string }> {
    await this.route(routeId);
    const name = (await this.config(routeId))?.[kind] ?? null;
    const file = this.branding.file(name);
    const mime = name ? mimeOfFile(name) : null;
    if (!file || !mime) throw notFound(msg('resource.not_found', { what: kind === 'logo' ? 'Logo' : 'Background image' }));
    return { file, mime };
  }

  /**
   * What the admin preview of the login page shows (GET /routes/:id/auth/preview): the stored
   * branding with the unsaved values of `input` over it, the step a visitor sees first (or the one
   * asked for), and whether the route has users. Works before a configuration is saved.
   */
  async preview(
    routeId: number,
    input: PreviewInput,
  ): Promise<{
    domain: string;
    step: PreviewInput['step'] & string;
    accounts: boolean;
    provider: string | null;
    branding: BrandingColumns & { version: number };
  }> {
    const route = await this.route(routeId);
    const cfg = await this.config(routeId);
    const pick = <K extends 'title' | 'description' | 'primary_color' | 'bg_color'>(k: K) => (input[k] !== undefined ? input[k] : (cfg?.[k] ?? null));
    const method = input.method ?? cfg?.method ?? 'email_password';
    const step = input.step ?? (method === 'email_code' ? 'request_code' : method === 'totp' ? 'totp' : method === 'oidc' ? 'oidc' : 'password');
    return {
      domain: route.domain,
      step,
      accounts: route.user_ids.length > 0,
      provider: cfg?.oidc_provider_id ? ((await this.providerName(cfg.oidc_provider_id)) ?? null) : null,
      branding: {
        title: pick('title'),
        description: pick('description'),
        primary_color: pick('primary_color'),
        bg_color: pick('bg_color'),
        logo: cfg?.logo ?? null,
        bg_image: cfg?.bg_image ?? null,
        version: cfg?.updated_at ?? 0,
      },
    };
  }

  /** The name of an OIDC provider (the login page's "Sign in with <name>"), or null when it is gone. */
  async providerName(id: number): Promise<string | null> {
    const p = await findRow(this.models.OidcProvider, { where: { id }, attributes: ['name'] });
    return p ? String(p.name) : null;
  }

  /** Removes branding files no configuration references (after routes were deleted). */
  async cleanupBranding(): Promise<number> {
    const rows = await findRows(this.models.RouteAuth, { attributes: ['logo', 'bg_image'] });
    const keep = new Set<string>();
    for (const r of rows) {
      if (r.logo) keep.add(r.logo);
      if (r.bg_image) keep.add(r.bg_image);
    }
    return this.branding.removeOrphans(keep);
  }

  // ---- sessions ----

  /** A new session; returns the cookie value (only its SHA-256 is stored). */
  async createSession(
    routeId: number,
    who: SessionAccount | string,
    stage: 'active' | 'pending',
    authMethod: string,
    ttlMs: number,
    meta: SessionMeta = {},
  ): Promise<string> {
    // a plain string: the configured account with that address
    const account: SessionAccount = typeof who === 'string' ? { email: who, subject: who, userId: null } : who;
    const token = newToken();
    const id = sha256(token);
    const now = this.deps.clock();
    const expires_at = now + ttlMs;
    await this.models.RouteAuthSession.create({
      id,
      route_id: routeId,
      email: account.email,
      user_id: account.userId,
      subject: account.subject,
      groups: account.groups?.length ? JSON.stringify(account.groups) : null,
      stage,
      auth_method: authMethod,
      expires_at,
      created_at: now,
      user_agent: meta.userAgent ? meta.userAgent.slice(0, 255) : null,
      ip: meta.ip ? meta.ip.slice(0, 64) : null,
    });
    if (stage === 'active')
      this.view.putSession(id, {
        routeId,
        email: account.email,
        authMethod,
        expiresAt: expires_at,
        userId: account.userId,
        subject: account.subject,
        groups: account.groups ?? [],
      });
    return token;
  }

  /** The pending (first step done) session behind a cookie value, or null. */
  async pendingSession(
    routeId: number,
    token: string | undefined,
  ): Promise<{ id: string; email: string; authMethod: string; userId: number | null; subject: string; groups: string[] } | null> {
    if (!token) return null;
    const id = sha256(token);
    const row = await findRow(this.models.RouteAuthSession, { where: { id, route_id: routeId, stage: 'pending' } });
    if (!row || Number(row.expires_at) <= this.deps.clock()) return null;
    return {
      id,
      email: String(row.email),
      authMethod: String(row.auth_method),
      userId: row.user_id === null || row.user_id === undefined ? null : Number(row.user_id),
      subject: row.subject === null || row.subject === undefined ? String(row.email) : String(row.subject),
      groups: listColumn(row.groups),
    };
  }

  /** The active session behind a cookie value for this route, or null (cached). */
  async activeSession(routeId: number, token: string | undefined): Promise<SessionEntry | null> {
    if (!token) return null;
    const s = await this.view.session(sha256(token));
    return s && s.routeId === routeId && s.expiresAt > this.deps.clock() ? s : null;
  }

  async destroySessionById(id: string): Promise<void> {
    await this.models.RouteAuthSession.destroy({ where: { id } });
    this.view.dropSession(id);
  }

  /** Logout: this device's session only. */
  async destroySession(routeId: number, token: string | undefined): Promise<boolean> {
    if (!token) return false;
    const id = sha256(token);
    const n = await this.models.RouteAuthSession.destroy({ where: { id, route_id: routeId } });
    this.view.dropSession(id);
    return n > 0;
  }

  /** Hourly: expired sessions, old codes, and OIDC sign-ins whose callback never came (oidc.ts). */
  async prune(): Promise<void> {
    const now = this.deps.clock();
    await this.models.RouteAuthSession.destroy({ where: { expires_at: { [Op.lte]: now } } });
    await this.models.RouteAuthCode.destroy({ where: { expires_at: { [Op.lte]: now - 86_400_000 } } });
    await this.models.RouteAuthOidcFlow.destroy({ where: { created_at: { [Op.lt]: now - FLOW_MAX_AGE_MS } } });
    this.view.pruneExpired(now);
  }

  // ---- email codes ----

  codeHash(routeId: number, email: string, code: string): string {
    return crypto.createHmac('sha256', this.codeKey).update(`${routeId}:${email}:${code}`).digest('hex');
  }
}
