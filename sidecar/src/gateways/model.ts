// The `gateways` table (migration 020_gateways) as a Sequelize model, next to the only code that
// uses it, declared the one way db/define.ts describes and registered by its feature (gateways/feature.ts `models`).
import { DataTypes, type Sequelize } from 'sequelize';
import { defineModel, msColumn, tableOpts, type M } from '../db/define.js';

export interface GatewayRow {
  peer_id: number;
  api_token_hash: string;
  push_token_enc: string;
  token_hint: string;
  tokens_issued_at: number;
  last_seen_at: number | null;
  health: string | null;
  healthy: boolean | null;
  health_reason: string | null;
  reported_config_hash: string | null;
  status: 'online' | 'offline' | 'unknown';
  status_reason: string | null;
  status_changed_at: number | null;
  traffic: string | null;
  created_at: number;
  updated_at: number;
}

declare module '../db/models.js' {
  interface Models {
    Gateway: M<GatewayRow>;
  }
}

export function defineGatewayModels(s: Sequelize): { Gateway: M<GatewayRow> } {
  const Gateway = defineModel<GatewayRow>(
    s,
    'Gateway',
    {
      peer_id: { type: DataTypes.INTEGER, primaryKey: true },
      api_token_hash: DataTypes.STRING,
      push_token_enc: DataTypes.TEXT,
      token_hint: DataTypes.STRING,
      tokens_issued_at: DataTypes.BIGINT,
      last_seen_at: DataTypes.BIGINT,
      health: DataTypes.TEXT,
      healthy: DataTypes.BOOLEAN,
      health_reason: DataTypes.STRING,
      reported_config_hash: DataTypes.STRING,
      status: DataTypes.STRING,
      status_reason: DataTypes.STRING,
      status_changed_at: DataTypes.BIGINT,
      traffic: DataTypes.TEXT,
      created_at: msColumn(),
      updated_at: msColumn(),
    },
    tableOpts('gateways'),
  );
  return { Gateway };
}
