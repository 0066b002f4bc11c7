// The `routes` table (migration 002_peers_routes) as a Sequelize model, registered by the routes
// feature (routes/feature.ts `models`), and the route record in its normalized form (booleans as
// booleans, JSON columns parsed), shared by the routes service (API output) and the proxy renderer
// (Caddy JSON). Rows come from SQLite (0/1 booleans, numbers as strings in some drivers) or
// PostgreSQL (booleans, BIGINT as numbers): rowToRoute() makes both look the same.
import { DataTypes, type Sequelize } from 'sequelize';
import { defineModel, flagColumn, idColumn, msColumn, tableOpts, type M } from '../db/define.js';
import type { RouteView } from './schema.js';
import { EXPOSURE_BLANK, type ExposureAnswer, type Exposure, type ExposureFields } from './exposure.js';
import { backendPeerIds, ENCODINGS, type TrafficSettings } from './traffic.js';
import type { AccessSchedule } from '../access-windows/schema.js';
import { geoFilterColumn, parseGeoFilter, type GeoFilter } from './geo.js';

export interface RouteRow extends ExposureFields {
  id: number;
  domain: string;
  description: string | null;
  route_type: 'http' | 'l4';
  target_kind: 'peer' | 'gateway';
  enabled: boolean;
  peer_id: number | null;
  target_port: string | null;
  target_peer_id: number | null;
  target_lan_host: string | null;
  target_lan_port: number | null;
  wol_enabled: boolean;
  wol_mac: string | null;
  l4_protocol: 'tcp' | 'udp' | null;
  l4_listen_port: number | null;
  l4_tls_mode: 'none' | 'passthrough' | 'terminate' | null;
  https_enabled: boolean;
  backend_https: boolean;
  compress_enabled: boolean;
  bot_blocker_enabled: boolean;
  bot_blocker_mode: string | null;
  bot_blocker_config: string | null;
  monitoring_enabled: boolean;
  ip_filter_enabled: boolean;
  ip_filter_mode: string | null;
  ip_filter_rules: string | null;
  acl_enabled: boolean;
  acl_peer_ids: string | null;
  rate_limit_enabled: boolean;
  rate_limit_requests: number | null;
  rate_limit_window: string | null;
  retry_enabled: boolean;
  retry_count: number | null;
  retry_status_codes: string | null;
  circuit_breaker_enabled: boolean;
  circuit_breaker_threshold: number | null;
  circuit_breaker_timeout: number | null;
  cb_failure_count: number;
  cb_opened_at: number | null;
  mirror_enabled: boolean;
  mirror_targets: string | null;
  debug_enabled: boolean;
  basic_auth_user: string | null;
  basic_auth_password_hash: string | null;
  user_ids: string | null;
  certificate_id: number | null;
  backends: string | null;
  backend_peer_ids: string | null;
  lb_policy: string | null;
  lb_cookie_name: string | null;
  health_check: string | null;
  request_headers: string | null;
  response_headers: string | null;
  compression: string | null;
  access_schedule: string | null;
  geo_filter: string | null;
  created_at: number;
  updated_at: number;
}

declare module '../db/models.js' {
  interface Models {
    Route: M<RouteRow>;
  }
}

export function defineRouteModels(s: Sequelize): { Route: M<RouteRow> } {
  const Route = defineModel<RouteRow>(
    s,
    'Route',
    {
      id: idColumn(),
      domain: DataTypes.STRING,
      description: DataTypes.STRING,
      route_type: DataTypes.STRING,
      target_kind: DataTypes.STRING,
      enabled: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: true },
      peer_id: DataTypes.INTEGER,
      target_port: DataTypes.STRING,
      target_peer_id: DataTypes.INTEGER,
      target_lan_host: DataTypes.STRING,
      target_lan_port: DataTypes.INTEGER,
      wol_enabled: flagColumn(),
      wol_mac: DataTypes.STRING,
      l4_protocol: DataTypes.STRING,
      l4_listen_port: DataTypes.INTEGER,
      l4_tls_mode: DataTypes.STRING,
      https_enabled: flagColumn(),
      backend_https: flagColumn(),
      compress_enabled: flagColumn(),
      bot_blocker_enabled: flagColumn(),
      bot_blocker_mode: DataTypes.STRING,
      bot_blocker_config: DataTypes.TEXT,
      monitoring_enabled: flagColumn(),
      ip_filter_enabled: flagColumn(),
      ip_filter_mode: DataTypes.STRING,
      ip_filter_rules: DataTypes.TEXT,
      acl_enabled: flagColumn(),
      acl_peer_ids: DataTypes.TEXT,
      rate_limit_enabled: flagColumn(),
      rate_limit_requests: DataTypes.INTEGER,
      rate_limit_window: DataTypes.STRING,
      retry_enabled: flagColumn(),
      retry_count: DataTypes.INTEGER,
      retry_status_codes: DataTypes.STRING,
      circuit_breaker_enabled: flagColumn(),
      circuit_breaker_threshold: DataTypes.INTEGER,
      circuit_breaker_timeout: DataTypes.INTEGER,
      cb_failure_count: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
      cb_opened_at: DataTypes.BIGINT,
      mirror_enabled: flagColumn(),
      mirror_targets: DataTypes.TEXT,
      debug_enabled: flagColumn(),
      basic_auth_user: DataTypes.STRING,
      basic_auth_password_hash: DataTypes.STRING,
      user_ids: DataTypes.TEXT,
      certificate_id: DataTypes.INTEGER,
      exposure: { type: DataTypes.STRING, allowNull: false, defaultValue: 'public' },
      exposure_answer: DataTypes.STRING,
      exposure_page: DataTypes.TEXT,
      exposure_redirect_url: DataTypes.TEXT,
      // several backends, headers, compression (migration 075, routes/traffic.ts)
      backends: DataTypes.TEXT,
      backend_peer_ids: DataTypes.TEXT,
      lb_policy: DataTypes.STRING,
      lb_cookie_name: DataTypes.STRING,
      health_check: DataTypes.TEXT,
      request_headers: DataTypes.TEXT,
      response_headers: DataTypes.TEXT,
      compression: DataTypes.STRING,
      access_schedule: DataTypes.TEXT,
      geo_filter: DataTypes.TEXT,
      created_at: msColumn(),
      updated_at: msColumn(),
    },
    tableOpts('routes'),
  );
  return { Route };
}

export type RouteType = 'http' | 'l4';
export type TargetKind = 'peer' | 'gateway';
export type L4Protocol = 'tcp' | 'udp';
export type L4TlsMode = 'none' | 'passthrough' | 'terminate';
export type BotBlockerMode = 'block' | 'log' | 'tarpit';
export type IpFilterMode = 'whitelist' | 'blacklist';

/** exposure fields: routes/exposure.ts */
export interface Route extends ExposureFields, TrafficSettings {
  id: number;
  domain: string;
  description: string | null;
  route_type: RouteType;
  target_kind: TargetKind;
  enabled: boolean;
  peer_id: number | null;
  target_port: string | null;
  target_peer_id: number | null;
  target_lan_host: string | null;
  target_lan_port: number | null;
  wol_enabled: boolean;
  wol_mac: string | null;
  l4_protocol: L4Protocol | null;
  l4_listen_port: number | null;
  l4_tls_mode: L4TlsMode | null;
  https_enabled: boolean;
  backend_https: boolean;
  compress_enabled: boolean;
  bot_blocker_enabled: boolean;
  bot_blocker_mode: BotBlockerMode | null;
  bot_blocker_config: Record<string, unknown> | null;
  monitoring_enabled: boolean;
  ip_filter_enabled: boolean;
  ip_filter_mode: IpFilterMode | null;
  ip_filter_rules: string[];
  acl_enabled: boolean;
  acl_peer_ids: number[];
  rate_limit_enabled: boolean;
  rate_limit_requests: number | null;
  rate_limit_window: string | null;
  retry_enabled: boolean;
  retry_count: number | null;
  retry_status_codes: string | null;
  circuit_breaker_enabled: boolean;
  circuit_breaker_threshold: number | null;
  circuit_breaker_timeout: number | null;
  cb_failure_count: number;
  cb_opened_at: number | null;
  mirror_enabled: boolean;
  /** {url} (origin) or {peer_id, port}: routes/schema.ts. */
  mirror_targets: ({ url: string } | { peer_id: number; port: number })[];
  debug_enabled: boolean;
  basic_auth_user: string | null;
  /** bcrypt hash; never leaves the service (toApi drops it). */
  basic_auth_password_hash: string | null;
  user_ids: number[];
  /** the custom certificate the route is served with (src/certificates); null: the automatic one */
  certificate_id: number | null;
  /** the access window (src/access-windows); null: always open */
  access_schedule: AccessSchedule | null;
  /** the country filter (routes/geo.ts); null: none */
  geo_filter: GeoFilter | null;
  created_at: number;
  updated_at: number;
}

/** A route with every setting off: the base a create is merged onto. */
export function blankRoute(now: number): Omit<Route, 'id'> {
  return {
    domain: '',
    description: null,
    route_type: 'http',
    target_kind: 'peer',
    enabled: true,
    peer_id: null,
    target_port: null,
    target_peer_id: null,
    target_lan_host: null,
    target_lan_port: null,
    wol_enabled: false,
    wol_mac: null,
    l4_protocol: null,
    l4_listen_port: null,
    l4_tls_mode: null,
    https_enabled: false,
    backend_https: false,
    compress_enabled: false,
    bot_blocker_enabled: false,
    bot_blocker_mode: null,
    bot_blocker_config: null,
    monitoring_enabled: false,
    ip_filter_enabled: false,
    ip_filter_mode: null,
    ip_filter_rules: [],
    acl_enabled: false,
    acl_peer_ids: [],
    rate_limit_enabled: false,
    rate_limit_requests: null,
    rate_limit_window: null,
    retry_enabled: false,
    retry_count: null,
    retry_status_codes: null,
    circuit_breaker_enabled: false,
    circuit_breaker_threshold: null,
    circuit_breaker_timeout: null,
    cb_failure_count: 0,
    cb_opened_at: null,
    mirror_enabled: false,
    mirror_targets: [],
    debug_enabled: false,
    basic_auth_user: null,
    basic_auth_password_hash: null,
    user_ids: [],
    certificate_id: null,
    ...EXPOSURE_BLANK,
    backends: [],
    lb_policy: null,
    lb_cookie_name: null,
    health_check: null,
    request_headers: null,
    response_headers: null,
    compression: [],
    access_schedule: null,
    geo_filter: null,
    created_at: now,
    updated_at: now,
  };
}

const toBool = (v: unknown): boolean => v === true || v === 1 || v === '1' || v === 't' || v === 'true';
const toNum = (v: unknown): number | null => (v === null || v === undefined || v === '' ? null : Number(v));

function parseJson<T>(v: unknown, fallback: T): T {
  if (v === null || v === undefined || v === '') return fallback;
  if (typeof v !== 'string') return v as T;
  try {
    return JSON.parse(v) as T;
  } catch {
    return fallback;
  }
}

/** A database row (raw: true) → the normalized route. */
export function rowToRoute(row: RouteRow | Record<string, unknown>): Route {
  const r = row as Record<string, unknown>;
  return routeFrom((k) => r[k]);
}

/** A row given as an array of column values (in the order of `columns`) → the normalized route. */
export function valuesToRoute(columns: Record<string, number>, values: unknown[]): Route {
  return routeFrom((k) => values[columns[k]]);
}

function routeFrom(get: (column: string) => unknown): Route {
  return {
    id: Number(get('id')),
    domain: String(get('domain')),
    description: (get('description') as string | null) ?? null,
    route_type: get('route_type') as RouteType,
    target_kind: (get('target_kind') as TargetKind) ?? 'peer',
    enabled: toBool(get('enabled')),
    peer_id: toNum(get('peer_id')),
    target_port: get('target_port') === null || get('target_port') === undefined ? null : String(get('target_port')),
    target_peer_id: toNum(get('target_peer_id')),
    target_lan_host: (get('target_lan_host') as string | null) ?? null,
    target_lan_port: toNum(get('target_lan_port')),
    wol_enabled: toBool(get('wol_enabled')),
    wol_mac: (get('wol_mac') as string | null) ?? null,
    l4_protocol: (get('l4_protocol') as L4Protocol | null) ?? null,
    l4_listen_port: toNum(get('l4_listen_port')),
    l4_tls_mode: (get('l4_tls_mode') as L4TlsMode | null) ?? null,
    https_enabled: toBool(get('https_enabled')),
    backend_https: toBool(get('backend_https')),
    compress_enabled: toBool(get('compress_enabled')),
    bot_blocker_enabled: toBool(get('bot_blocker_enabled')),
    bot_blocker_mode: (get('bot_blocker_mode') as BotBlockerMode | null) ?? null,
    bot_blocker_config: parseJson<Record<string, unknown> | null>(get('bot_blocker_config'), null),
    monitoring_enabled: toBool(get('monitoring_enabled')),
    ip_filter_enabled: toBool(get('ip_filter_enabled')),
    ip_filter_mode: (get('ip_filter_mode') as IpFilterMode | null) ?? null,
    ip_filter_rules: parseJson<string[]>(get('ip_filter_rules'), []),
    acl_enabled: toBool(get('acl_enabled')),
    acl_peer_ids: parseJson<number[]>(get('acl_peer_ids'), []),
    rate_limit_enabled: toBool(get('rate_limit_enabled')),
    rate_limit_requests: toNum(get('rate_limit_requests')),
    rate_limit_window: (get('rate_limit_window') as string | null) ?? null,
    retry_enabled: toBool(get('retry_enabled')),
    retry_count: toNum(get('retry_count')),
    retry_status_codes: (get('retry_status_codes') as string | null) ?? null,
    circuit_breaker_enabled: toBool(get('circuit_breaker_enabled')),
    circuit_breaker_threshold: toNum(get('circuit_breaker_threshold')),
    circuit_breaker_timeout: toNum(get('circuit_breaker_timeout')),
    cb_failure_count: toNum(get('cb_failure_count')) ?? 0,
    cb_opened_at: toNum(get('cb_opened_at')),
    mirror_enabled: toBool(get('mirror_enabled')),
    mirror_targets: parseJson<Route['mirror_targets']>(get('mirror_targets'), []),
    debug_enabled: toBool(get('debug_enabled')),
    basic_auth_user: (get('basic_auth_user') as string | null) ?? null,
    basic_auth_password_hash: (get('basic_auth_password_hash') as string | null) ?? null,
    user_ids: parseJson<number[]>(get('user_ids'), []),
    certificate_id: toNum(get('certificate_id')),
    exposure: get('exposure') === 'internal' ? 'internal' : ('public' as Exposure),
    exposure_answer: (get('exposure_answer') as ExposureAnswer | null) ?? null,
    exposure_page: (get('exposure_page') as string | null) ?? null,
    exposure_redirect_url: (get('exposure_redirect_url') as string | null) ?? null,
    backends: parseJson<Route['backends']>(get('backends'), []),
    lb_policy: (get('lb_policy') as Route['lb_policy']) ?? null,
    lb_cookie_name: (get('lb_cookie_name') as string | null) ?? null,
    health_check: parseJson<Route['health_check']>(get('health_check'), null),
    request_headers: parseJson<Route['request_headers']>(get('request_headers'), null),
    response_headers: parseJson<Route['response_headers']>(get('response_headers'), null),
    // rows from before migration 075: the encode list compress_enabled meant
    compression: parseJson<Route['compression'] | null>(get('compression'), null) ?? (toBool(get('compress_enabled')) ? [...ENCODINGS] : []),
    access_schedule: parseJson<AccessSchedule | null>(get('access_schedule'), null),
    geo_filter: parseGeoFilter(get('geo_filter')),
    created_at: Number(get('created_at')),
    updated_at: Number(get('updated_at')),
  };
}

/** The normalized route → column values for an insert or update (JSON columns as text). */
export function routeToRow(r: Omit<Route, 'id'>): Omit<RouteRow, 'id'> {
  return {
    ...r,
    bot_blocker_config: r.bot_blocker_config === null ? null : JSON.stringify(r.bot_blocker_config),
    ip_filter_rules: r.ip_filter_rules.length ? JSON.stringify(r.ip_filter_rules) : null,
    acl_peer_ids: r.acl_peer_ids.length ? JSON.stringify(r.acl_peer_ids) : null,
    mirror_targets: r.mirror_targets.length ? JSON.stringify(r.mirror_targets) : null,
    user_ids: r.user_ids.length ? JSON.stringify(r.user_ids) : null,
    backends: r.backends.length ? JSON.stringify(r.backends) : null,
    backend_peer_ids: backendPeerIds(r.backends),
    health_check: r.health_check === null ? null : JSON.stringify(r.health_check),
    request_headers: r.request_headers === null ? null : JSON.stringify(r.request_headers),
    response_headers: r.response_headers === null ? null : JSON.stringify(r.response_headers),
    compression: JSON.stringify(r.compression),
    access_schedule: r.access_schedule ? JSON.stringify(r.access_schedule) : null,
    geo_filter: geoFilterColumn(r.geo_filter),
  };
}

/**
 * The API's route object: every field by its API name; the basic-auth password is never returned.
 * rdp_route_id: the RDP route that owns this route (its gateway-mode linked L4 route), else null.
 */
export function toApi(r: Route, rdpRouteId: number | null = null): Omit<RouteView, 'route_auth' | 'certificate' | 'access_state'> {
  const { basic_auth_password_hash, created_at, updated_at, ...rest } = r;
  return {
    ...rest,
    lb_policy: r.lb_policy ?? 'round_robin',
    rdp_route_id: rdpRouteId,
    basic_auth_password: null,
    basic_auth_password_set: basic_auth_password_hash !== null,
    created_at: new Date(created_at).toISOString(),
    updated_at: new Date(updated_at).toISOString(),
  };
}
