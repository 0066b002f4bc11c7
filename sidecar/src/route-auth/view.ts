// The in-memory view the forward-auth verify endpoint answers from: domain → route-auth entry
// (route id, configuration, compiled IP filter) and session id → session. The database is read only
// on a miss. Every write of the route-auth service invalidates what it changed; writes to the routes
// table invalidate the domain map through Sequelize hooks (see RouteAuthService.watchRoutes), and a
// domain entry is also reloaded after ROUTE_TTL_MS as a safety net for writes that bypass the model
// (a restore, raw SQL).
//
// A generation counter guards the miss path: a load that started before an invalidation does not
// put its (possibly stale) result into the cache.
import { Op } from 'sequelize';
import type { Models } from '../db/models.js';
import type { RouteRow } from '../routes/model.js';
import type { Clock } from '../util/clock.js';
import { IpMatcher, parseStoredRules, type IpFilterMode } from '../util/ip-rules.js';
import { listColumn, normalizeAuthRow, normalizeSessionRow, type RouteAuthModels, type RouteAuthRow, type RouteAuthSessionRow } from './models.js';
import { findRows, findRow } from '../db/define.js';

export const ROUTE_TTL_MS = 60_000;
/** Unknown session ids are remembered this long (a client retrying a dead cookie costs one query). */
export const NEGATIVE_SESSION_TTL_MS = 30_000;
const MAX_SESSIONS = 100_000;
const MAX_NEGATIVE = 10_000;
const MAX_DOMAINS = 50_000;

export interface RouteInfo {
  id: number;
  domain: string;
  route_type: string;
  enabled: boolean;
  https_enabled: boolean;
  basic_auth: boolean;
  ip_filter_enabled: boolean;
  ip_filter_mode: IpFilterMode;
  ip_filter_rules: string[];
  /** routes.user_ids: the Gatehouse users who may sign in on this route (besides its configured account) */
  user_ids: number[];
}

export interface RouteEntry {
  route: RouteInfo;
  cfg: RouteAuthRow;
  /**
   * A route with basic auth and no route auth: only share links open it (share-links/), there is no
   * login page, and cfg is shareOnlyConfig() (no account, no branding, no session length of its own).
   */
  shareOnly: boolean;
  /** the IP filter to apply, or null when the route has none */
  ip: { mode: IpFilterMode; matcher: IpMatcher } | null;
  cookieName: string;
  loadedAt: number;
}

export interface SessionEntry {
  routeId: number;
  /** X-Auth-Email ('' when the account has no address) */
  email: string;
  authMethod: string;
  expiresAt: number;
  /** the route user (null: the configured account) */
  userId: number | null;
  /** X-Auth-User: the username, or the configured email */
  subject: string;
  /** a share link's session: valid only under this path (share-links/paths.ts); absent or null: the whole route */
  pathPrefix?: string | null;
  /** an oidc sign-in's groups (X-Auth-Groups); absent or empty: none */
  groups?: string[];
}

function parseUserIds(v: unknown): number[] {
  if (Array.isArray(v)) return v.map(Number).filter((n) => Number.isInteger(n) && n > 0);
  if (typeof v !== 'string' || !v) return [];
  try {
    return parseUserIds(JSON.parse(v));
  } catch {
    return [];
  }
}

const toBool = (v: unknown): boolean => v === true || v === 1 || v === '1' || v === 't' || v === 'true';

export function routeInfo(r: RouteRow | Record<string, unknown>): RouteInfo {
  const row = r as Record<string, unknown>;
  return {
    id: Number(row.id),
    domain: String(row.domain).toLowerCase(),
    route_type: String(row.route_type),
    enabled: toBool(row.enabled),
    https_enabled: toBool(row.https_enabled),
    basic_auth: !!row.basic_auth_user || !!row.basic_auth_password_hash,
    ip_filter_enabled: toBool(row.ip_filter_enabled),
    ip_filter_mode: row.ip_filter_mode === 'blacklist' ? 'blacklist' : 'whitelist',
    ip_filter_rules: parseStoredRules(row.ip_filter_rules),
    user_ids: parseUserIds(row.user_ids),
  };
}

export const cookieNameFor = (routeId: number) => `gh_ra_${routeId}`;

/**
 * The configuration a share-only entry carries (RouteEntry.shareOnly): no account, no branding, and
 * a session length that never shortens a share link's session (the link's own lifetime bounds it).
 */
export function shareOnlyConfig(routeId: number): RouteAuthRow {
  return {
    id: 0,
    route_id: routeId,
    method: 'email_password',
    two_factor_enabled: false,
    two_factor_method: null,
    email: '',
    password_hash: null,
    totp_secret: null,
    totp_pending_secret: null,
    totp_active: false,
    totp_last_step: null,
    session_max_age: Number.MAX_SAFE_INTEGER,
    pending_method: null,
    pending_two_factor_method: null,
    oidc_provider_id: null,
    allowed_emails: null,
    allowed_groups: null,
    created_at: 0,
    updated_at: 0,
    title: null,
    description: null,
    primary_color: null,
    bg_color: null,
    logo: null,
    bg_image: null,
  };
}

export class AuthView {
  private domains = new Map<string, { entry: RouteEntry | null; at: number }>();
  private sessions = new Map<string, SessionEntry>();
  private negative = new Map<string, number>();
  private inflightDomains = new Map<string, Promise<RouteEntry | null>>();
  private gen = 0;
  private sessionGen = 0;
  /** counters for the benchmark and tests */
  readonly stats = { domainLoads: 0, sessionLoads: 0 };

  constructor(
    private models: Models & RouteAuthModels,
    private clock: Clock,
  ) {}

  // ---- domains ----

  /** Cached entry for a domain: an entry, null (known: no route auth), or undefined (must load). */
  peekDomain(domain: string): RouteEntry | null | undefined {
    const hit = this.domains.get(domain);
    if (!hit) return undefined;
    if (this.clock() - hit.at > ROUTE_TTL_MS) return undefined;
    return hit.entry;
  }

  /** Entry for a route's domain (exact, lower case), loading on a miss. */
  async domain(domain: string): Promise<RouteEntry | null> {
    const d = domain.toLowerCase();
    const hit = this.peekDomain(d);
    if (hit !== undefined) return hit;
    let p = this.inflightDomains.get(d);
    if (!p) {
      const gen = this.gen;
      p = this.loadDomain(d).then((entry) => {
        if (gen === this.gen) {
          if (this.domains.size >= MAX_DOMAINS) this.domains.clear();
          this.domains.set(d, { entry, at: this.clock() });
        }
        return entry;
      });
      this.inflightDomains.set(d, p);
      void p.finally(() => this.inflightDomains.delete(d)).catch(() => undefined);
    }
    return p;
  }

  /**
   * Entry for a request host (the login pages, reached with the visitor's Host): the exact domain,
   * else the one-label wildcard route `*.parent` that covers it.
   */
  async host(host: string): Promise<RouteEntry | null> {
    const h = host.toLowerCase().replace(/\.$/, '');
    const exact = await this.domain(h);
    if (exact || h.startsWith('*.')) return exact;
    const dot = h.indexOf('.');
    if (dot <= 0) return null;
    return this.domain(`*${h.slice(dot)}`);
  }

  private async loadDomain(domain: string): Promise<RouteEntry | null> {
    this.stats.domainLoads++;
    const rows = await findRows(this.models.Route, { where: { domain, route_type: 'http' }, order: [['id', 'ASC']] });
    if (!rows.length) return null;
    const ids = rows.map((r) => Number(r.id));
    const auths = await findRows(this.models.RouteAuth, { where: { route_id: { [Op.in]: ids } } });
    if (!auths.length) {
      // basic auth without route auth: an entry for share links only (never for a wildcard domain)
      const basic = domain.startsWith('*.') ? undefined : rows.map(routeInfo).find((r) => r.basic_auth);
      return basic ? this.entryFor(basic, shareOnlyConfig(basic.id), true) : null;
    }
    const cfg = normalizeAuthRow(auths[0]);
    const row = rows.find((r) => Number(r.id) === cfg.route_id)!;
    return this.entryFor(routeInfo(row), cfg);
  }

  entryFor(route: RouteInfo, cfg: RouteAuthRow, shareOnly = false): RouteEntry {
    return {
      route,
      cfg,
      shareOnly,
      ip: route.ip_filter_enabled ? { mode: route.ip_filter_mode, matcher: new IpMatcher(route.ip_filter_rules) } : null,
      cookieName: cookieNameFor(route.id),
      loadedAt: this.clock(),
    };
  }

  /** Forget every domain entry (a route or route-auth configuration changed). */
  invalidateRoutes(): void {
    this.gen++;
    this.domains.clear();
  }

  // ---- sessions ----

  /** Cached session: an entry, null (known unknown), or undefined (must load). */
  peekSession(id: string): SessionEntry | null | undefined {
    const s = this.sessions.get(id);
    if (s) return s;
    const neg = this.negative.get(id);
    if (neg !== undefined) {
      if (this.clock() - neg < NEGATIVE_SESSION_TTL_MS) return null;
      this.negative.delete(id);
    }
    return undefined;
  }

  async session(id: string): Promise<SessionEntry | null> {
    const hit = this.peekSession(id);
    if (hit !== undefined) return hit;
    const gen = this.sessionGen;
    this.stats.sessionLoads++;
    const row = await findRow(this.models.RouteAuthSession, { where: { id, stage: 'active' } });
    const entry = row ? toSessionEntry(row) : null;
    if (gen === this.sessionGen) {
      if (entry) this.putSession(id, entry);
      else {
        if (this.negative.size >= MAX_NEGATIVE) this.negative.clear();
        this.negative.set(id, this.clock());
      }
    }
    return entry;
  }

  putSession(id: string, s: SessionEntry): void {
    if (this.sessions.size >= MAX_SESSIONS) {
      // drop the oldest tenth (Map keeps insertion order); they reload from the database on use
      let n = Math.ceil(MAX_SESSIONS / 10);
      for (const k of this.sessions.keys()) {
        this.sessions.delete(k);
        if (--n <= 0) break;
      }
    }
    this.negative.delete(id);
    this.sessions.set(id, s);
  }

  dropSession(id: string): void {
    this.sessionGen++;
    this.onDropped?.();
    this.sessions.delete(id);
  }

  /** Forget every session of a route (configuration deleted, credentials changed). */
  dropRouteSessions(routeId: number): void {
    this.sessionGen++;
    this.onDropped?.();
    for (const [k, s] of this.sessions) if (s.routeId === routeId) this.sessions.delete(k);
  }

  /** Forget every session of one route user (user deleted or password changed). */
  dropUserSessions(userId: number): void {
    this.sessionGen++;
    this.onDropped?.();
    for (const [k, s] of this.sessions) if (s.userId === userId) this.sessions.delete(k);
  }

  dropAllSessions(): void {
    this.forgetSessions();
    this.onDropped?.();
  }

  /** Every cached session forgotten (they reload from the database on use), without telling onDropped: another node ended one. */
  forgetSessions(): void {
    this.sessionGen++;
    this.sessions.clear();
    this.negative.clear();
  }

  /** Told when sessions were dropped here because they ended (the cluster's change feed: the other nodes forget theirs). */
  onDropped: (() => void) | null = null;

  /** Drop expired sessions from memory (the database rows are pruned by the service). */
  pruneExpired(now: number): void {
    for (const [k, s] of this.sessions) if (s.expiresAt <= now) this.sessions.delete(k);
    for (const [k, at] of this.negative) if (now - at >= NEGATIVE_SESSION_TTL_MS) this.negative.delete(k);
  }
}

export function toSessionEntry(row: RouteAuthSessionRow): SessionEntry {
  const r = normalizeSessionRow(row);
  return {
    routeId: r.route_id,
    email: r.email,
    authMethod: r.auth_method,
    expiresAt: r.expires_at,
    userId: r.user_id,
    subject: r.subject ?? r.email,
    pathPrefix: r.path_prefix ?? null,
    groups: listColumn(r.groups),
  };
}
