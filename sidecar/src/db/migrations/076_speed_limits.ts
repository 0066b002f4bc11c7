import { DataTypes, type QueryInterface } from 'sequelize';

// peers.speed_limit and peer_groups.speed_limit: a speed cap as JSON text {down_kbit, up_kbit}
// (kbit/s, each null = that direction not capped); on a peer null = the group's default applies
// (shaping/schema.ts). Enforced with traffic control on the WireGuard interface (shaping/tc.ts).
export const name = '076_speed_limits';

export async function up(qi: QueryInterface): Promise<void> {
  await qi.addColumn('peers', 'speed_limit', { type: DataTypes.TEXT, allowNull: true });
  await qi.addColumn('peer_groups', 'speed_limit', { type: DataTypes.TEXT, allowNull: true });
}

// Plain SQL (see 064_peer_config_endpoint.ts): sequelize's SQLite removeColumn rebuilds the table.
export async function down(qi: QueryInterface): Promise<void> {
  await qi.sequelize.query('ALTER TABLE peer_groups DROP COLUMN speed_limit');
  await qi.sequelize.query('ALTER TABLE peers DROP COLUMN speed_limit');
}
