// The `share_links` table (migration 071_share_links) as a Sequelize model, registered by its
// feature (share-links/feature.ts `models`).
import { DataTypes, type Sequelize } from 'sequelize';
import { defineModel, idColumn, msColumn, tableOpts, type M } from '../db/define.js';

export interface ShareLinkRow {
  id: number;
  route_id: number;
  /** SHA-256 hex of the link's token */
  token_hash: string;
  note: string | null;
  path_prefix: string | null;
  max_uses: number | null;
  uses: number;
  last_used_at: number | null;
  created_by: number | null;
  created_by_name: string | null;
  created_at: number;
  expires_at: number;
  revoked_at: number | null;
}

declare module '../db/models.js' {
  interface Models {
    ShareLink: M<ShareLinkRow>;
  }
}

export function defineShareLinkModels(s: Sequelize): { ShareLink: M<ShareLinkRow> } {
  const ShareLink = defineModel<ShareLinkRow>(
    s,
    'ShareLink',
    {
      id: idColumn(),
      route_id: DataTypes.INTEGER,
      token_hash: DataTypes.STRING,
      note: DataTypes.STRING,
      path_prefix: DataTypes.STRING,
      max_uses: DataTypes.INTEGER,
      uses: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
      last_used_at: DataTypes.BIGINT,
      created_by: DataTypes.INTEGER,
      created_by_name: DataTypes.STRING,
      created_at: msColumn(),
      expires_at: msColumn(),
      revoked_at: DataTypes.BIGINT,
    },
    tableOpts('share_links'),
  );
  return { ShareLink };
}
