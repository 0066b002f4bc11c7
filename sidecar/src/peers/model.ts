// The `peers` and `peer_traffic` tables (migration 002_peers_routes) as Sequelize models, declared
// the one way db/define.ts describes and registered by the peers feature (peers/feature.ts `models`).
// Other features read them through ctx.db.models (the interface, DNS, the proxy snapshot, gateways).
import { DataTypes, type Sequelize } from 'sequelize';
import { defineModel, idColumn, msColumn, tableOpts, type M } from '../db/define.js';

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
  /** what the client routes into the tunnel, comma-separated CIDRs (070); null: the server default */
  client_allowed_ips: string | null;
  /** client_allowed_ips as the config last handed out was made with (070); null: the default */
  config_client_allowed_ips: string | null;
  /** own speed cap, JSON {down_kbit, up_kbit} (076); null: the group's default */
  speed_limit: string | null;
  /** the access window, JSON (072, src/access-windows); null: always open */
  access_schedule: string | null;
  /** own data quota, JSON (079, src/quotas); null: the group's default */
  quota: string | null;
  /** the quota service's state of the current period (079; quotas/service.ts) */
  quota_period_start: number | null;
  quota_period_end: number | null;
  quota_used: number | null;
  quota_limit: number | null;
  quota_offset: number | null;
  quota_grant: number | null;
  quota_state: 'ok' | 'warned' | 'exceeded' | null;
  quota_action: 'disable' | 'throttle' | 'overridden' | null;
  quota_checked_at: number | null;
  created_at: number;
  updated_at: number;
}
export interface PeerTrafficRow {
  id: number;
  peer_id: number;
  resolution: '5m' | '1h' | '1d';
  bucket_start: number;
  rx: number;
  tx: number;
}
declare module '../db/models.js' {
  interface Models {
    Peer: M<PeerRow>;
    PeerTraffic: M<PeerTrafficRow>;
  }
}

export function definePeerModels(s: Sequelize): { Peer: M<PeerRow>; PeerTraffic: M<PeerTrafficRow> } {
  const Peer = defineModel<PeerRow>(
    s,
    'Peer',
    {
      id: idColumn(),
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
      client_allowed_ips: DataTypes.TEXT,
      config_client_allowed_ips: DataTypes.TEXT,
      speed_limit: DataTypes.TEXT,
      access_schedule: DataTypes.TEXT,
      quota: DataTypes.TEXT,
      quota_period_start: DataTypes.BIGINT,
      quota_period_end: DataTypes.BIGINT,
      quota_used: DataTypes.BIGINT,
      quota_limit: DataTypes.BIGINT,
      quota_offset: DataTypes.BIGINT,
      quota_grant: DataTypes.BIGINT,
      quota_state: DataTypes.STRING(16),
      quota_action: DataTypes.STRING(16),
      quota_checked_at: DataTypes.BIGINT,
      created_at: msColumn(),
      updated_at: msColumn(),
    },
    tableOpts('peers'),
  );
  const PeerTraffic = defineModel<PeerTrafficRow>(
    s,
    'PeerTraffic',
    {
      id: idColumn(),
      peer_id: DataTypes.INTEGER,
      resolution: DataTypes.STRING,
      bucket_start: msColumn(),
      rx: DataTypes.BIGINT,
      tx: DataTypes.BIGINT,
    },
    tableOpts('peer_traffic'),
  );
  return { Peer, PeerTraffic };
}
