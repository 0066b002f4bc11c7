// Share links (ctx of the share-links feature): a link that lets whoever opens it into one route with
// route auth or basic auth without signing in, optionally only under a path prefix, until it expires, has been opened
// max_uses times, or is revoked. Only the SHA-256 of the token is stored; the link is shown once.
//
// Opening it (GET /route-auth/share?t=<token> on the route's own domain, share-links/http.ts) counts
// one use in one conditional update (two visitors at once cannot both take the last use), and makes
// an active route-auth session (route_auth_sessions, auth_method `share_link`) valid only on that
// route and under the prefix, for min(the link's remaining time, the route's session length).
// Revoking a link ends the sessions opened with it. Creating, using and revoking are events
// (activity log, webhooks, live stream).
import { Op } from 'sequelize';
import { msg } from '@gatehouse/common/messages/index.js';
import type { Deps } from '../deps.js';
import { newToken, type RouteAuthService } from '../route-auth/service.js';
import type { RouteEntry } from '../route-auth/view.js';
import type { RouteRow } from '../routes/model.js';
import { findRow, findRows } from '../db/define.js';
import { AppError, invalidFields, notFound } from '../util/errors.js';
import { sha256 } from '../util/crypto.js';
import { generateToken } from '../tokens/service.js';
import type { ShareLinkRow } from './model.js';
import {
  DEFAULT_MAX_EXPIRY_DAYS,
  MAX_EXPIRY_SETTING,
  SHARE_TOKEN_PREFIX,
  SHARE_TOKEN_RE,
  type CreateShareLinkInput,
  type ShareLinkView,
  type ShareState,
} from './schema.js';

const DAY = 86_400_000;
const iso = (v: unknown): string | null => (v === null || v === undefined ? null : new Date(Number(v)).toISOString());
const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));
export const SHARE_PATH = '/route-auth/share';
export const SHARE_AUTH_METHOD = 'share_link';

export type OpenResult =
  { ok: true; token: string; maxAgeMs: number; location: string; linkId: number } | { ok: false; state: Exclude<ShareState, 'active'> | 'unknown' };

export class ShareLinksService {
  constructor(
    private readonly deps: Deps,
    private readonly routeAuth: RouteAuthService,
  ) {}

  private get Link() {
    return this.deps.db.models.ShareLink;
  }

  stateOf(r: ShareLinkRow, now = this.deps.clock()): ShareState {
    if (r.revoked_at !== null && r.revoked_at !== undefined) return 'revoked';
    if (Number(r.expires_at) <= now) return 'expired';
    const max = num(r.max_uses);
    if (max !== null && Number(r.uses) >= max) return 'used_up';
    return 'active';
  }

  view(r: ShareLinkRow): ShareLinkView {
    return {
      id: Number(r.id),
      route_id: Number(r.route_id),
      note: r.note ?? null,
      path_prefix: r.path_prefix ?? null,
      max_uses: num(r.max_uses),
      uses: Number(r.uses ?? 0),
      last_used_at: iso(r.last_used_at),
      state: this.stateOf(r),
      created_at: iso(r.created_at)!,
      expires_at: iso(r.expires_at)!,
      revoked_at: iso(r.revoked_at),
      created_by: { user_id: num(r.created_by), username: r.created_by_name ?? null },
    };
  }

  async maxExpiryDays(): Promise<number> {
    const v = await this.deps.settings.get<number>(MAX_EXPIRY_SETTING, DEFAULT_MAX_EXPIRY_DAYS);
    return Number.isInteger(v) && v > 0 ? v : DEFAULT_MAX_EXPIRY_DAYS;
  }

  async setMaxExpiryDays(days: number, actor?: number): Promise<number> {
    await this.deps.settings.set(MAX_EXPIRY_SETTING, days);
    await this.deps.activity.record({
      source: 'settings',
      event_type: 'settings_changed',
      msg: msg('share_link.settings_changed', { max_expiry_days: days }),
      details: { section: 'share_links', max_expiry_days: days },
      user_id: actor ?? null,
    });
    return days;
  }

  private async route(id: number): Promise<RouteRow> {
    const row = await findRow(this.deps.db.models.Route, { where: { id } });
    if (!row) throw notFound(msg('resource.not_found', { what: 'Route' }));
    return row as RouteRow;
  }

  /** A new link for a route with route auth or basic auth (404 unknown route, 409 neither, or a wildcard domain, 422 expiry beyond the setting). The token is returned once. */
  async create(routeId: number, input: CreateShareLinkInput, actor?: number): Promise<{ link: ShareLinkView; url: string }> {
    const route = await this.route(routeId);
    const basicAuth = route.route_type === 'http' && !!route.basic_auth_user && !!route.basic_auth_password_hash;
    if (!basicAuth && !(await this.routeAuth.hasRouteAuth(routeId)))
      throw new AppError('conflict', msg('share_link.needs_route_auth'), { route_id: msg('share_link.field.needs_route_auth') });
    const domain = String(route.domain).toLowerCase();
    if (domain.startsWith('*.')) throw new AppError('conflict', msg('share_link.needs_route_auth'), { route_id: msg('share_link.field.wildcard') });
    const now = this.deps.clock();
    const days = await this.maxExpiryDays();
    const expires = Number(input.expires_at);
    if (expires <= now) throw invalidFields({ expires_at: msg('share_link.field.expiry_past') });
    if (expires > now + days * DAY) throw invalidFields({ expires_at: msg('share_link.field.expiry_too_far', { days }) });
    const user = actor ? await findRow(this.deps.db.models.User, { where: { id: actor } }) : null;
    const token = generateToken(SHARE_TOKEN_PREFIX);
    const row = await this.Link.create({
      route_id: routeId,
      token_hash: sha256(token),
      note: input.note ? input.note : null,
      path_prefix: input.path_prefix ?? null,
      max_uses: input.max_uses ?? null,
      uses: 0,
      last_used_at: null,
      created_by: actor ?? null,
      created_by_name: user ? String(user.username) : null,
      created_at: now,
      expires_at: expires,
      revoked_at: null,
    } as ShareLinkRow);
    const link = this.view(row.get({ plain: true }) as ShareLinkRow);
    await this.deps.events.emit({
      type: 'share_link_created',
      route_id: routeId,
      domain,
      link_id: link.id,
      expires_at: link.expires_at,
      max_uses: link.max_uses,
      path_prefix: link.path_prefix,
      note: link.note,
      actor: actor ?? null,
    });
    const scheme = route.https_enabled === true || (route.https_enabled as unknown) === 1 ? 'https' : 'http';
    return { link, url: `${scheme}://${domain}${SHARE_PATH}?t=${token}` };
  }

  async list(routeId: number): Promise<ShareLinkView[]> {
    await this.route(routeId);
    const rows = await findRows(this.Link, { where: { route_id: routeId }, order: [['id', 'DESC']] });
    return rows.map((r) => this.view(r));
  }

  /** Revokes a link and ends the sessions opened with it (a revoked link is answered as it is). */
  async revoke(routeId: number, linkId: number, actor?: number): Promise<ShareLinkView> {
    const route = await this.route(routeId);
    const r = await findRow(this.Link, { where: { id: linkId, route_id: routeId } });
    if (!r) throw notFound(msg('share_link.not_found'));
    if (r.revoked_at !== null && r.revoked_at !== undefined) return this.view(r);
    const now = this.deps.clock();
    await this.Link.update({ revoked_at: now }, { where: { id: linkId, revoked_at: { [Op.is]: null } } });
    const ended = await this.deps.db.models.RouteAuthSession.destroy({ where: { share_link_id: linkId } });
    this.routeAuth.view.dropRouteSessions(routeId);
    await this.deps.events.emit({
      type: 'share_link_revoked',
      route_id: routeId,
      domain: String(route.domain).toLowerCase(),
      link_id: linkId,
      sessions_ended: ended,
      actor: actor ?? null,
    });
    return this.view({ ...r, revoked_at: now });
  }

  /**
   * A visitor opens a link on a route's domain: one use is counted (only while the link is active:
   * one conditional update) and a session limited to the route and the link's prefix is made.
   */
  async open(entry: RouteEntry, token: string, meta: { ip: string; userAgent: string }): Promise<OpenResult> {
    if (!SHARE_TOKEN_RE.test(token)) return { ok: false, state: 'unknown' };
    const r = await findRow(this.Link, { where: { token_hash: sha256(token), route_id: entry.route.id } });
    if (!r) return { ok: false, state: 'unknown' };
    const now = this.deps.clock();
    const state = this.stateOf(r, now);
    if (state !== 'active') return { ok: false, state };
    const id = Number(r.id);
    const [n] = await this.Link.update(
      // reason: Model.update's values are typed by the row (a number); a literal makes the increment one statement
      { uses: this.deps.db.sequelize.literal('uses + 1') as unknown as number, last_used_at: now },
      {
        where: {
          id,
          revoked_at: { [Op.is]: null },
          expires_at: { [Op.gt]: now },
          [Op.or]: [{ max_uses: { [Op.is]: null } }, { max_uses: { [Op.gt]: this.deps.db.sequelize.col('uses') } }],
        },
      },
    );
    if (n !== 1) {
      const again = await findRow(this.Link, { where: { id } });
      const s = again ? this.stateOf(again, now) : 'revoked';
      return { ok: false, state: s === 'active' ? 'used_up' : s };
    }
    const ttl = Math.min(Number(r.expires_at) - now, entry.cfg.session_max_age);
    const sessionToken = newToken();
    const sid = sha256(sessionToken);
    const prefix = r.path_prefix ?? null;
    const subject = `share-link-${id}`;
    await this.deps.db.models.RouteAuthSession.create({
      id: sid,
      route_id: entry.route.id,
      email: '',
      user_id: null,
      subject,
      stage: 'active',
      auth_method: SHARE_AUTH_METHOD,
      expires_at: now + ttl,
      created_at: now,
      user_agent: meta.userAgent ? meta.userAgent.slice(0, 255) : null,
      ip: meta.ip ? meta.ip.slice(0, 64) : null,
      share_link_id: id,
      path_prefix: prefix,
    });
    this.routeAuth.view.putSession(sid, {
      routeId: entry.route.id,
      email: '',
      authMethod: SHARE_AUTH_METHOD,
      expiresAt: now + ttl,
      userId: null,
      subject,
      pathPrefix: prefix,
    });
    await this.deps.events.emit({
      type: 'share_link_used',
      route_id: entry.route.id,
      domain: entry.route.domain,
      link_id: id,
      ip: meta.ip || 'unknown',
      uses: Number(r.uses ?? 0) + 1,
    });
    return { ok: true, token: sessionToken, maxAgeMs: ttl, location: prefix ?? '/', linkId: id };
  }
}
