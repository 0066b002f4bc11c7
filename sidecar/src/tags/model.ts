// The `tags` table (the tag registry, migration 002_peers_routes) as a Sequelize model, declared the
// one way db/define.ts describes and registered by the tags feature (tags/feature.ts `models`).
import { DataTypes, type Sequelize } from 'sequelize';
import { defineModel, idColumn, msColumn, tableOpts, type M } from '../db/define.js';

export interface TagRow {
  id: number;
  name: string;
  name_lower: string;
  created_at: number;
}
declare module '../db/models.js' {
  interface Models {
    Tag: M<TagRow>;
  }
}

export function defineTagModels(s: Sequelize): { Tag: M<TagRow> } {
  const Tag = defineModel<TagRow>(
    s,
    'Tag',
    { id: idColumn(), name: DataTypes.STRING, name_lower: DataTypes.STRING, created_at: msColumn() },
    tableOpts('tags'),
  );
  return { Tag };
}
