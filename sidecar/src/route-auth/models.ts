// Sequelize models of the route-auth tables (migrations 011_route_auth, 040_route_auth_users,
// 085_route_auth_oidc_flows), declared the one way db/define.ts describes and registered by its
// feature (route-auth/feature.ts `models`).
import { DataTypes, Op, type Sequelize, type Transaction } from 'sequelize';
import { flagColumn, idColumn, msColumn, tableOpts, type M, defineModel, findRows } from '../db/define.js';

export type LoginMethod = 'email_password' | 'email_code' | 'totp' | 'oidc';
export type SecondFactor = 'email_code' | 'totp';

/** The login page's branding as a route auth configuration stores it (its columns). */
export interface BrandingColumns {
  title: string | null;
  description: string | null;
  primary_color: string | null;
  bg_color: string | null;
  logo: string | null;
  bg_image: string | null;
}

export interface RouteAuthRow extends BrandingColumns {
  id: number;
  route_id: number;
  method: LoginMethod;
  two_factor_enabled: boolean;
  two_factor_method: SecondFactor | null;
  email: string;
  password_hash: string | null;
  totp_secret: string | null;
  totp_pending_secret: string | null;
  totp_active: boolean;
  totp_last_step: number | null;
  session_max_age: number;
  /** a switch to TOTP waiting for totp-verify (migration 067): the method it switches to, null when none waits */
  pending_method: LoginMethod | null;
  /** with pending_method email_password: the second factor it switches to (totp), else null */
  pending_two_factor_method: SecondFactor | null;
  /** method oidc (migration 082): the OpenID Connect provider visitors sign in through */
  oidc_provider_id: number | null;
  /** method oidc: JSON array of the e-mail addresses let in (lower case), null: none */
  allowed_emails: string | null;
  /** method oidc: JSON array of the provider's groups let in, null: none */
  allowed_groups: string | null;
  created_at: number;
  updated_at: number;
}

export interface RouteAuthSessionRow {
  id: string;
  route_id: number;
  /** active: the address sent as X-Auth-Email ('' when the account has none); pending: the account key (lockout identifier part) */
  email: string;
  /** the route user signed in (null: the route's own configured account) */
  user_id: number | null;
  /** the name shown for the session: the username, or the configured email */
  subject: string | null;
  stage: 'active' | 'pending';
  auth_method: string;
  expires_at: number;
  created_at: number;
  user_agent: string | null;
  ip: string | null;
  /** the share link the session was opened with (migration 071; null: a sign-in) */
  share_link_id?: number | null;
  /** a share link's path prefix: the session is valid only under it (null: the whole route) */
  path_prefix?: string | null;
  /** an oidc sign-in's groups (migration 082), JSON array; null: none (X-Auth-Groups) */
  groups?: string | null;
}

export interface RouteAuthCodeRow {
  id: number;
  route_id: number;
  email: string;
  code_hash: string;
  expires_at: number;
  used_at: number | null;
  attempts: number;
  sent_at: number;
}

/** The TOTP second factor of one route user on one route (migration 040). */
export interface RouteAuthUserTotpRow {
  id: number;
  route_id: number;
  user_id: number;
  totp_secret: string | null;
  totp_pending_secret: string | null;
  totp_active: boolean;
  totp_last_step: number | null;
  created_at: number;
  updated_at: number;
}

/**
 * A sign-in through OpenID Connect waiting for its callback (migration 085; route-auth/oidc.ts): in
 * the database so that any node may take the callback, and a restart forgets none.
 */
export interface RouteAuthOidcFlowRow {
  /** the OAuth `state` sent to the provider (random) */
  state: string;
  route_id: number;
  /** SHA-256 (hex) of the binding cookie's value */
  binding_hash: string;
  provider_id: number;
  nonce: string;
  /** the PKCE code verifier, sealed under a key derived from the master key (oidc.ts) */
  verifier_enc: string;
  /** the checked rd of the start: where the visitor goes after the sign-in */
  next_url: string;
  redirect_uri: string;
  /** epoch ms of the start */
  created_at: number;
}

export interface RouteAuthModels {
  RouteAuth: M<RouteAuthRow>;
  RouteAuthSession: M<RouteAuthSessionRow>;
  RouteAuthCode: M<RouteAuthCodeRow>;
  RouteAuthUserTotp: M<RouteAuthUserTotpRow>;
  RouteAuthOidcFlow: M<RouteAuthOidcFlowRow>;
}

const opts = tableOpts;
const ms = msColumn;

declare module '../db/models.js' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- the members are RouteAuthModels' (declaration merging)
  interface Models extends RouteAuthModels {}
}

export function defineRouteAuthModels(s: Sequelize): RouteAuthModels {
  const bool = flagColumn;
  const RouteAuth = defineModel<RouteAuthRow>(
    s,
    'RouteAuth',
    {
      id: idColumn(),
      route_id: DataTypes.INTEGER,
      method: DataTypes.STRING,
      two_factor_enabled: bool(),
      two_factor_method: DataTypes.STRING,
      email: DataTypes.STRING,
      password_hash: DataTypes.STRING,
      totp_secret: DataTypes.TEXT,
      totp_pending_secret: DataTypes.TEXT,
      totp_active: bool(),
      totp_last_step: DataTypes.BIGINT,
      session_max_age: ms(),
      pending_method: DataTypes.STRING,
      pending_two_factor_method: DataTypes.STRING,
      oidc_provider_id: DataTypes.INTEGER,
      allowed_emails: DataTypes.TEXT,
      allowed_groups: DataTypes.TEXT,
      title: DataTypes.STRING,
      description: DataTypes.STRING,
      primary_color: DataTypes.STRING,
      bg_color: DataTypes.STRING,
      logo: DataTypes.STRING,
      bg_image: DataTypes.STRING,
      created_at: ms(),
      updated_at: ms(),
    },
    opts('route_auth'),
  );
  const RouteAuthSession = defineModel<RouteAuthSessionRow>(
    s,
    'RouteAuthSession',
    {
      id: { type: DataTypes.STRING, primaryKey: true },
      route_id: DataTypes.INTEGER,
      email: DataTypes.STRING,
      stage: DataTypes.STRING,
      auth_method: DataTypes.STRING,
      expires_at: ms(),
      created_at: ms(),
      user_agent: DataTypes.STRING,
      ip: DataTypes.STRING,
      user_id: DataTypes.INTEGER,
      subject: DataTypes.STRING,
      share_link_id: DataTypes.INTEGER,
      path_prefix: DataTypes.STRING,
      groups: DataTypes.TEXT,
    },
    opts('route_auth_sessions'),
  );
  const RouteAuthCode = defineModel<RouteAuthCodeRow>(
    s,
    'RouteAuthCode',
    {
      id: idColumn(),
      route_id: DataTypes.INTEGER,
      email: DataTypes.STRING,
      code_hash: DataTypes.STRING,
      expires_at: ms(),
      used_at: DataTypes.BIGINT,
      attempts: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
      sent_at: ms(),
    },
    opts('route_auth_codes'),
  );
  const RouteAuthUserTotp = defineModel<RouteAuthUserTotpRow>(
    s,
    'RouteAuthUserTotp',
    {
      id: idColumn(),
      route_id: DataTypes.INTEGER,
      user_id: DataTypes.INTEGER,
      totp_secret: DataTypes.TEXT,
      totp_pending_secret: DataTypes.TEXT,
      totp_active: bool(),
      totp_last_step: DataTypes.BIGINT,
      created_at: ms(),
      updated_at: ms(),
    },
    opts('route_auth_user_totp'),
  );
  const RouteAuthOidcFlow = defineModel<RouteAuthOidcFlowRow>(
    s,
    'RouteAuthOidcFlow',
    {
      state: { type: DataTypes.STRING, primaryKey: true },
      route_id: DataTypes.INTEGER,
      binding_hash: DataTypes.STRING,
      provider_id: DataTypes.INTEGER,
      nonce: DataTypes.STRING,
      verifier_enc: DataTypes.TEXT,
      next_url: DataTypes.TEXT,
      redirect_uri: DataTypes.TEXT,
      created_at: ms(),
    },
    opts('route_auth_oidc_flows'),
  );
  return { RouteAuth, RouteAuthSession, RouteAuthCode, RouteAuthUserTotp, RouteAuthOidcFlow };
}

/** For the routes service: whether a route has a route-auth configuration (basic auth is refused then). */
export async function hasRouteAuth(m: RouteAuthModels, routeId: number, transaction?: Transaction): Promise<boolean> {
  return (await m.RouteAuth.count({ where: { route_id: routeId }, transaction })) > 0;
}

/** For the renderer's snapshot: ids of the routes that have route auth. */
export async function protectedRouteIds(m: RouteAuthModels, transaction?: Transaction): Promise<Set<number>> {
  const rows = await findRows(m.RouteAuth, { attributes: ['route_id'], transaction });
  return new Set(rows.map((r) => Number(r.route_id)));
}

/** The route logins of these routes in brief (the routes list's route_auth), by route id. */
export async function routeAuthSummaries(
  m: RouteAuthModels,
  routeIds: number[],
): Promise<Map<number, { method: LoginMethod; two_factor_method: SecondFactor | null; pending_method: LoginMethod | null }>> {
  const rows = await findRows(m.RouteAuth, {
    where: { route_id: { [Op.in]: routeIds } },
    attributes: ['route_id', 'method', 'two_factor_enabled', 'two_factor_method', 'pending_method'],
  });
  return new Map(
    rows.map((r) => [
      Number(r.route_id),
      { method: r.method, two_factor_method: toBool(r.two_factor_enabled) ? (r.two_factor_method ?? null) : null, pending_method: r.pending_method ?? null },
    ]),
  );
}

const toBool = (v: unknown): boolean => v === true || v === 1 || v === '1' || v === 't' || v === 'true';
const toNum = (v: unknown): number | null => (v === null || v === undefined || v === '' ? null : Number(v));

/** Normalize a raw row as the driver returns it (SQLite 0/1, PostgreSQL booleans; BIGINT as strings on PostgreSQL). */
export function normalizeAuthRow(r: RouteAuthRow): RouteAuthRow {
  return {
    ...r,
    id: Number(r.id),
    route_id: Number(r.route_id),
    two_factor_enabled: toBool(r.two_factor_enabled),
    totp_active: toBool(r.totp_active),
    totp_last_step: toNum(r.totp_last_step),
    session_max_age: Number(r.session_max_age),
    pending_method: r.pending_method ?? null,
    pending_two_factor_method: r.pending_two_factor_method ?? null,
    oidc_provider_id: toNum(r.oidc_provider_id),
    allowed_emails: r.allowed_emails ?? null,
    allowed_groups: r.allowed_groups ?? null,
    created_at: Number(r.created_at),
    updated_at: Number(r.updated_at),
  };
}

export function normalizeSessionRow(r: RouteAuthSessionRow): RouteAuthSessionRow {
  return {
    ...r,
    route_id: Number(r.route_id),
    user_id: toNum(r.user_id),
    subject: r.subject === null || r.subject === undefined ? null : String(r.subject),
    share_link_id: toNum(r.share_link_id),
    path_prefix: r.path_prefix ?? null,
    groups: r.groups ?? null,
    expires_at: Number(r.expires_at),
    created_at: Number(r.created_at),
  };
}

export function normalizeUserTotpRow(r: RouteAuthUserTotpRow): RouteAuthUserTotpRow {
  return {
    ...r,
    id: Number(r.id),
    route_id: Number(r.route_id),
    user_id: Number(r.user_id),
    totp_active: toBool(r.totp_active),
    totp_last_step: toNum(r.totp_last_step),
    created_at: Number(r.created_at),
    updated_at: Number(r.updated_at),
  };
}

/** A JSON list column (allowed_emails, allowed_groups, a session's groups) as strings; [] for null or anything else. */
export function listColumn(v: string | null | undefined): string[] {
  if (!v) return [];
  try {
    const a: unknown = JSON.parse(v);
    return Array.isArray(a) ? a.filter((x): x is string => typeof x === 'string') : [];
  } catch {
    return [];
  }
}
