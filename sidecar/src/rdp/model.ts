// The `rdp_routes`, `rdp_sessions` and `rdp_server_keys` tables (migration 060_rdp) as Sequelize
// models, registered by its feature (rdp/feature.ts `models`). Rows come back raw: booleans may be 0/1 on
// SQLite and BIGINTs strings on PostgreSQL, so read them through rowToRdp() (and Number()).
import { DataTypes, type Sequelize } from 'sequelize';
import { defineModel, flagColumn, idColumn, msColumn, tableOpts, type M } from '../db/define.js';
import type { AccessMode, AudioMode, MaintenanceWindow, RotationState } from './schema.js';
import type { RdpSessionEndReason } from '../events.js';

export interface RdpRouteRow {
  id: number;
  name: string;
  description: string | null;
  enabled: boolean;
  access_mode: AccessMode;
  target_host: string;
  target_port: number;
  target_peer_id: number | null;
  external_host: string | null;
  listen_port: number | null;
  gateway_peer_id: number | null;
  gateway_listen_port: number | null;
  gateway_host: string | null;
  gateway_port: number | null;
  /** JSON of a CredentialEnvelope */
  credentials_envelope: string | null;
  credentials_kid: string | null;
  credentials_updated_at: number | null;
  rotation_state: RotationState;
  rotation_pending_since: number | null;
  wol_enabled: boolean;
  wol_mac: string | null;
  network_level_auth: boolean;
  audio_mode: AudioMode;
  clipboard_enabled: boolean;
  resolution: string | null;
  color_depth: number;
  /** JSON array of MaintenanceWindow */
  maintenance_windows: string;
  /** JSON array of user ids, or null (every client token) */
  allowed_user_ids: string | null;
  gateway_l4_route_id: number | null;
  created_at: number;
  updated_at: number;
}

export interface RdpSessionRow {
  id: number;
  rdp_route_id: number;
  token_id: number | null;
  machine_id: number | null;
  peer_id: number | null;
  user_id: number | null;
  client_name: string | null;
  status: 'active' | 'ended';
  started_at: number;
  last_heartbeat_at: number;
  ended_at: number | null;
  end_reason: RdpSessionEndReason | null;
  disconnect_requested_at: number | null;
}

export interface RdpServerKeyRow {
  kid: string;
  public_key: string;
  private_key_sealed: string;
  created_at: number;
  retired_at: number | null;
}

/** An RDP route as the services use it: booleans, numbers and parsed JSON. */
export interface RdpRoute extends Omit<RdpRouteRow, 'maintenance_windows' | 'allowed_user_ids'> {
  maintenance_windows: MaintenanceWindow[];
  allowed_user_ids: number[] | null;
}

const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));
const bool = (v: unknown): boolean => v === true || v === 1 || v === '1' || v === 't' || v === 'true';

function parseJson<T>(text: string | null, fallback: T): T {
  if (text === null || text === undefined) return fallback;
  try {
    return JSON.parse(text) as T;
  } catch {
    return fallback;
  }
}

export function rowToRdp(r: RdpRouteRow): RdpRoute {
  return {
    ...r,
    id: Number(r.id),
    enabled: bool(r.enabled),
    target_port: Number(r.target_port),
    target_peer_id: num(r.target_peer_id),
    listen_port: num(r.listen_port),
    gateway_peer_id: num(r.gateway_peer_id),
    gateway_listen_port: num(r.gateway_listen_port),
    gateway_port: num(r.gateway_port),
    credentials_updated_at: num(r.credentials_updated_at),
    rotation_pending_since: num(r.rotation_pending_since),
    wol_enabled: bool(r.wol_enabled),
    network_level_auth: bool(r.network_level_auth),
    clipboard_enabled: bool(r.clipboard_enabled),
    color_depth: Number(r.color_depth),
    maintenance_windows: parseJson<MaintenanceWindow[]>(r.maintenance_windows, []),
    allowed_user_ids: parseJson<number[] | null>(r.allowed_user_ids, null),
    gateway_l4_route_id: num(r.gateway_l4_route_id),
    created_at: Number(r.created_at),
    updated_at: Number(r.updated_at),
  };
}

export function rdpToRow(r: Omit<RdpRoute, 'id'>): Omit<RdpRouteRow, 'id'> {
  return {
    ...r,
    maintenance_windows: JSON.stringify(r.maintenance_windows),
    allowed_user_ids: r.allowed_user_ids === null ? null : JSON.stringify(r.allowed_user_ids),
  };
}

declare module '../db/models.js' {
  interface Models {
    RdpRoute: M<RdpRouteRow>;
    RdpSession: M<RdpSessionRow>;
    RdpServerKey: M<RdpServerKeyRow>;
  }
}

export function defineRdpModels(s: Sequelize): { RdpRoute: M<RdpRouteRow>; RdpSession: M<RdpSessionRow>; RdpServerKey: M<RdpServerKeyRow> } {
  const RdpRoute = defineModel<RdpRouteRow>(
    s,
    'RdpRoute',
    {
      id: idColumn(),
      name: DataTypes.STRING,
      description: DataTypes.STRING,
      enabled: { ...flagColumn(), defaultValue: true },
      access_mode: DataTypes.STRING,
      target_host: DataTypes.STRING,
      target_port: DataTypes.INTEGER,
      target_peer_id: DataTypes.INTEGER,
      external_host: DataTypes.STRING,
      listen_port: DataTypes.INTEGER,
      gateway_peer_id: DataTypes.INTEGER,
      gateway_listen_port: DataTypes.INTEGER,
      gateway_host: DataTypes.STRING,
      gateway_port: DataTypes.INTEGER,
      credentials_envelope: DataTypes.TEXT,
      credentials_kid: DataTypes.STRING,
      credentials_updated_at: DataTypes.BIGINT,
      rotation_state: DataTypes.STRING,
      rotation_pending_since: DataTypes.BIGINT,
      wol_enabled: flagColumn(),
      wol_mac: DataTypes.STRING,
      network_level_auth: { ...flagColumn(), defaultValue: true },
      audio_mode: DataTypes.STRING,
      clipboard_enabled: { ...flagColumn(), defaultValue: true },
      resolution: DataTypes.STRING,
      color_depth: DataTypes.INTEGER,
      maintenance_windows: DataTypes.TEXT,
      allowed_user_ids: DataTypes.TEXT,
      gateway_l4_route_id: DataTypes.INTEGER,
      created_at: msColumn(),
      updated_at: msColumn(),
    },
    tableOpts('rdp_routes'),
  );
  const RdpSession = defineModel<RdpSessionRow>(
    s,
    'RdpSession',
    {
      id: idColumn(),
      rdp_route_id: DataTypes.INTEGER,
      token_id: DataTypes.INTEGER,
      machine_id: DataTypes.INTEGER,
      peer_id: DataTypes.INTEGER,
      user_id: DataTypes.INTEGER,
      client_name: DataTypes.STRING,
      status: DataTypes.STRING,
      started_at: msColumn(),
      last_heartbeat_at: msColumn(),
      ended_at: DataTypes.BIGINT,
      end_reason: DataTypes.STRING,
      disconnect_requested_at: DataTypes.BIGINT,
    },
    tableOpts('rdp_sessions'),
  );
  const RdpServerKey = defineModel<RdpServerKeyRow>(
    s,
    'RdpServerKey',
    {
      kid: { type: DataTypes.STRING, primaryKey: true },
      public_key: DataTypes.TEXT,
      private_key_sealed: DataTypes.TEXT,
      created_at: msColumn(),
      retired_at: DataTypes.BIGINT,
    },
    tableOpts('rdp_server_keys'),
  );
  return { RdpRoute, RdpSession, RdpServerKey };
}
