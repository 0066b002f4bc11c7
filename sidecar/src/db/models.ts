// Sequelize models. Tables are created by migrations (never by sync); models only describe them.
// All times are epoch milliseconds (BIGINT), set by the services from their injectable clock.
// Every model is declared the one way db/define.ts describes. The platform's tables (accounts,
// sessions, tokens, settings, the activity log, peers and routes, which the HTTP kit and most
// features read) are declared here; a feature declares its own tables in its model.ts and registers
// them through its Feature (`models`, feature.ts). defineModels() defines them all once, when the
// database opens (db/index.ts openDatabase).
import { DataTypes, type Sequelize } from 'sequelize';
import { defineModel, flagColumn, idColumn, msColumn, tableOpts } from './define.js';

export type { M } from './define.js';

export interface UserRow {
  id: number;
  username: string;
  email: string | null;
  password_hash: string;
  role: 'admin' | 'user';
  language: 'en' | 'de';
  theme: 'pro' | 'default' | null;
  last_login_at: number | null;
  /** set for a generated password: the next sign-in asks for a new one (GET /password) */
  must_change_password: boolean;
  created_at: number;
  updated_at: number;
}
export interface SessionRow {
  sid: string;
  user_id: number | null;
  data: string;
  expires_at: number;
}
export interface LoginAttemptRow {
  id: number;
  record_type: string;
  identifier: string;
  ip: string | null;
  outcome: 'failure' | 'success' | 'unlock';
  created_at: number;
}
export interface ApiTokenRow {
  id: number;
  name: string;
  token_hash: string;
  token_hint: string;
  scopes: string;
  expires_at: number | null;
  user_id: number | null;
  peer_id: number | null;
  fingerprint: string | null;
  fingerprint_bound_at: number | null;
  last_used_at: number | null;
  created_by: number | null;
  created_at: number;
  /** JSON array of IPv4 CIDRs: the token's split-tunnel override (null = the server default; migration 061) */
  split_tunnel: string | null;
}
export interface SettingRow {
  key: string;
  value: string;
  updated_at: number;
}
export interface ActivityRow {
  id: number;
  severity: string;
  source: string;
  event_type: string;
  message: string;
  code: string | null;
  params: string | null;
  details: string | null;
  user_id: number | null;
  ip: string | null;
  created_at: number;
}

const opts = tableOpts;
const id = idColumn;
const ms = msColumn;

/** A feature's models: its model.ts `define<Thing>Models(sequelize)`, named in its Feature (`models`). */
export type ModelDefiner = (s: Sequelize) => object;

type PlatformModels = ReturnType<typeof definePlatformModels>;

/**
 * Every model by name: the platform's (below), and each feature's, which its model.ts adds to this
 * interface (`declare module '../db/models.js' { interface Models { Thing: M<ThingRow> } }`).
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- the features' model.ts files add their members (declaration merging)
export interface Models extends PlatformModels {}

/** Defines the platform's models and the features' (`features`: their Feature.models), once per database. */
export function defineModels(s: Sequelize, features: readonly ModelDefiner[] = []): Models {
  const models: PlatformModels = definePlatformModels(s);
  for (const define of features) Object.assign(models, define(s));
  return models as Models;
}

function definePlatformModels(s: Sequelize) {
  const User = defineModel<UserRow>(
    s,
    'User',
    {
      id: id(),
      username: DataTypes.STRING,
      email: DataTypes.STRING,
      password_hash: DataTypes.STRING,
      role: DataTypes.STRING,
      language: DataTypes.STRING,
      theme: DataTypes.STRING,
      last_login_at: DataTypes.BIGINT,
      must_change_password: flagColumn(),
      created_at: ms(),
      updated_at: ms(),
    },
    opts('users'),
  );
  const Session = defineModel<SessionRow>(
    s,
    'Session',
    {
      sid: { type: DataTypes.STRING, primaryKey: true },
      user_id: DataTypes.INTEGER,
      data: DataTypes.TEXT,
      expires_at: ms(),
    },
    opts('sessions'),
  );
  const LoginAttempt = defineModel<LoginAttemptRow>(
    s,
    'LoginAttempt',
    {
      id: id(),
      record_type: DataTypes.STRING,
      identifier: DataTypes.STRING,
      ip: DataTypes.STRING,
      outcome: DataTypes.STRING,
      created_at: ms(),
    },
    opts('login_attempts'),
  );
  const ApiToken = defineModel<ApiTokenRow>(
    s,
    'ApiToken',
    {
      id: id(),
      name: DataTypes.STRING,
      token_hash: DataTypes.STRING,
      token_hint: DataTypes.STRING,
      scopes: DataTypes.TEXT,
      expires_at: DataTypes.BIGINT,
      user_id: DataTypes.INTEGER,
      peer_id: DataTypes.INTEGER,
      fingerprint: DataTypes.STRING,
      fingerprint_bound_at: DataTypes.BIGINT,
      last_used_at: DataTypes.BIGINT,
      created_by: DataTypes.INTEGER,
      created_at: ms(),
      split_tunnel: DataTypes.TEXT,
    },
    opts('api_tokens'),
  );
  const Setting = defineModel<SettingRow>(
    s,
    'Setting',
    {
      key: { type: DataTypes.STRING, primaryKey: true },
      value: DataTypes.TEXT,
      updated_at: ms(),
    },
    opts('settings'),
  );
  const Activity = defineModel<ActivityRow>(
    s,
    'Activity',
    {
      id: id(),
      severity: DataTypes.STRING,
      source: DataTypes.STRING,
      event_type: DataTypes.STRING,
      message: DataTypes.TEXT,
      code: DataTypes.STRING,
      params: DataTypes.TEXT,
      details: DataTypes.TEXT,
      user_id: DataTypes.INTEGER,
      ip: DataTypes.STRING,
      created_at: ms(),
    },
    opts('activity_log'),
  );
  return { User, Session, LoginAttempt, ApiToken, Setting, Activity, ...definePeerRouteModels(s) };
}

export interface PeerGroupRow {
  id: number;
  name: string;
  color: string | null;
  description: string | null;
  created_at: number;
  updated_at: number;
}
export interface PeerRow {
  id: number;
  name: string;
  description: string | null;
  peer_type: 'regular' | 'gateway';
  enabled: boolean;
  public_key: string;
  private_key_enc: string | null;
  preshared_key_enc: string | null;
  address: string;
  allowed_ips: string;
  dns: string | null;
  persistent_keepalive: number | null;
  tags: string;
  group_id: number | null;
  hostname: string | null;
  hostname_source: 'admin' | 'agent' | null;
  hostname_updated_at: number | null;
  expires_at: number | null;
  api_port: number | null;
  total_rx: number;
  total_tx: number;
  last_raw_rx: number;
  last_raw_tx: number;
  latest_handshake: number | null;
  endpoint: string | null;
  /** the Endpoint of the config last handed out (064_peer_config_endpoint); null: none since */
  config_endpoint: string | null;
  created_at: number;
  updated_at: number;
}
export interface TagRow {
  id: number;
  name: string;
  name_lower: string;
  created_at: number;
}
export interface PeerTrafficRow {
  id: number;
  peer_id: number;
  resolution: '5m' | '1h' | '1d';
  bucket_start: number;
  rx: number;
  tx: number;
}
export interface RouteRow {
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
  created_at: number;
  updated_at: number;
}

function definePeerRouteModels(s: Sequelize) {
  const b = flagColumn;
  const PeerGroup = defineModel<PeerGroupRow>(
    s,
    'PeerGroup',
    {
      id: id(),
      name: DataTypes.STRING,
      color: DataTypes.STRING,
      description: DataTypes.STRING,
      created_at: ms(),
      updated_at: ms(),
    },
    opts('peer_groups'),
  );
  const Peer = defineModel<PeerRow>(
    s,
    'Peer',
    {
      id: id(),
      name: DataTypes.STRING,
      description: DataTypes.STRING,
      peer_type: DataTypes.STRING,
      enabled: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: true },
      public_key: DataTypes.STRING,
      private_key_enc: DataTypes.TEXT,
      preshared_key_enc: DataTypes.TEXT,
      address: DataTypes.STRING,
      allowed_ips: DataTypes.STRING,
      dns: DataTypes.STRING,
      persistent_keepalive: DataTypes.INTEGER,
      tags: DataTypes.TEXT,
      group_id: DataTypes.INTEGER,
      hostname: DataTypes.STRING,
      hostname_source: DataTypes.STRING,
      hostname_updated_at: DataTypes.BIGINT,
      expires_at: DataTypes.BIGINT,
      api_port: DataTypes.INTEGER,
      total_rx: DataTypes.BIGINT,
      total_tx: DataTypes.BIGINT,
      last_raw_rx: DataTypes.BIGINT,
      last_raw_tx: DataTypes.BIGINT,
      latest_handshake: DataTypes.BIGINT,
      endpoint: DataTypes.STRING,
      config_endpoint: DataTypes.STRING(300),
      created_at: ms(),
      updated_at: ms(),
    },
    opts('peers'),
  );
  const Tag = defineModel<TagRow>(s, 'Tag', { id: id(), name: DataTypes.STRING, name_lower: DataTypes.STRING, created_at: ms() }, opts('tags'));
  const PeerTraffic = defineModel<PeerTrafficRow>(
    s,
    'PeerTraffic',
    {
      id: id(),
      peer_id: DataTypes.INTEGER,
      resolution: DataTypes.STRING,
      bucket_start: ms(),
      rx: DataTypes.BIGINT,
      tx: DataTypes.BIGINT,
    },
    opts('peer_traffic'),
  );
  const Route = defineModel<RouteRow>(
    s,
    'Route',
    {
      id: id(),
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
      wol_enabled: b(),
      wol_mac: DataTypes.STRING,
      l4_protocol: DataTypes.STRING,
      l4_listen_port: DataTypes.INTEGER,
      l4_tls_mode: DataTypes.STRING,
      https_enabled: b(),
      backend_https: b(),
      compress_enabled: b(),
      bot_blocker_enabled: b(),
      bot_blocker_mode: DataTypes.STRING,
      bot_blocker_config: DataTypes.TEXT,
      monitoring_enabled: b(),
      ip_filter_enabled: b(),
      ip_filter_mode: DataTypes.STRING,
      ip_filter_rules: DataTypes.TEXT,
      acl_enabled: b(),
      acl_peer_ids: DataTypes.TEXT,
      rate_limit_enabled: b(),
      rate_limit_requests: DataTypes.INTEGER,
      rate_limit_window: DataTypes.STRING,
      retry_enabled: b(),
      retry_count: DataTypes.INTEGER,
      retry_status_codes: DataTypes.STRING,
      circuit_breaker_enabled: b(),
      circuit_breaker_threshold: DataTypes.INTEGER,
      circuit_breaker_timeout: DataTypes.INTEGER,
      cb_failure_count: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
      cb_opened_at: DataTypes.BIGINT,
      mirror_enabled: b(),
      mirror_targets: DataTypes.TEXT,
      debug_enabled: b(),
      basic_auth_user: DataTypes.STRING,
      basic_auth_password_hash: DataTypes.STRING,
      user_ids: DataTypes.TEXT,
      created_at: ms(),
      updated_at: ms(),
    },
    opts('routes'),
  );
  return { PeerGroup, Peer, Tag, PeerTraffic, Route };
}
