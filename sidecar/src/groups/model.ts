// The `peer_groups` table (migration 002_peers_routes) as a Sequelize model, declared the one way
// db/define.ts describes and registered by the groups feature (groups/feature.ts `models`).
import { DataTypes, type Sequelize } from 'sequelize';
import { defineModel, idColumn, msColumn, tableOpts, type M } from '../db/define.js';

export interface PeerGroupRow {
  id: number;
  name: string;
  color: string | null;
  description: string | null;
  /** the members' default speed cap, JSON {down_kbit, up_kbit} (076); null: none */
  speed_limit: string | null;
  /** the members' default data quota, JSON (079, src/quotas); null: none */
  quota: string | null;
  created_at: number;
  updated_at: number;
}
declare module '../db/models.js' {
  interface Models {
    PeerGroup: M<PeerGroupRow>;
  }
}

export function defineGroupModels(s: Sequelize): { PeerGroup: M<PeerGroupRow> } {
  const PeerGroup = defineModel<PeerGroupRow>(
    s,
    'PeerGroup',
    {
      id: idColumn(),
      name: DataTypes.STRING,
      color: DataTypes.STRING,
      description: DataTypes.STRING,
      speed_limit: DataTypes.TEXT,
      quota: DataTypes.TEXT,
      created_at: msColumn(),
      updated_at: msColumn(),
    },
    tableOpts('peer_groups'),
  );
  return { PeerGroup };
}
