// The `redirect_hosts` table (migration 068_redirect_hosts) as a Sequelize model, declared the one
// way db/define.ts describes and registered by the redirects feature (redirects/feature.ts `models`).
import { DataTypes, type Sequelize } from 'sequelize';
import { defineModel, idColumn, msColumn, tableOpts, type M } from '../db/define.js';

export interface RedirectHostRow {
  id: number;
  domain: string;
  target_url: string;
  preserve_path: boolean;
  status_code: number;
  enabled: boolean;
  description: string | null;
  created_at: number;
  updated_at: number;
}
declare module '../db/models.js' {
  interface Models {
    RedirectHost: M<RedirectHostRow>;
  }
}

export function defineRedirectModels(s: Sequelize): { RedirectHost: M<RedirectHostRow> } {
  const RedirectHost = defineModel<RedirectHostRow>(
    s,
    'RedirectHost',
    {
      id: idColumn(),
      domain: { type: DataTypes.STRING(253), allowNull: false },
      target_url: { type: DataTypes.STRING(2048), allowNull: false },
      preserve_path: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: true },
      status_code: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 301 },
      enabled: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: true },
      description: { type: DataTypes.STRING(500), allowNull: true },
      created_at: msColumn(),
      updated_at: msColumn(),
    },
    tableOpts('redirect_hosts'),
  );
  return { RedirectHost };
}
