// The `peer_config_links` table (migration 066_peer_config_links) as a Sequelize model, registered
// by its feature (config-links/feature.ts `models`).
import { DataTypes, type Sequelize } from 'sequelize';
import { defineModel, idColumn, msColumn, tableOpts, type M } from '../db/define.js';

export interface PeerConfigLinkRow {
  id: number;
  peer_id: number;
  /** SHA-256 hex of the link's token */
  token_hash: string;
  note: string | null;
  created_by: number | null;
  created_at: number;
  expires_at: number;
  used_at: number | null;
  used_ip: string | null;
  revoked_at: number | null;
}

declare module '../db/models.js' {
  interface Models {
    PeerConfigLink: M<PeerConfigLinkRow>;
  }
}

export function defineConfigLinkModels(s: Sequelize): { PeerConfigLink: M<PeerConfigLinkRow> } {
  const PeerConfigLink = defineModel<PeerConfigLinkRow>(
    s,
    'PeerConfigLink',
    {
      id: idColumn(),
      peer_id: DataTypes.INTEGER,
      token_hash: DataTypes.STRING,
      note: DataTypes.STRING,
      created_by: DataTypes.INTEGER,
      created_at: msColumn(),
      expires_at: msColumn(),
      used_at: DataTypes.BIGINT,
      used_ip: DataTypes.STRING,
      revoked_at: DataTypes.BIGINT,
    },
    tableOpts('peer_config_links'),
  );
  return { PeerConfigLink };
}
