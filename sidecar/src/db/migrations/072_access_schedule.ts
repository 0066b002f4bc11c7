import { DataTypes, type QueryInterface } from 'sequelize';

// routes.access_schedule, peers.access_schedule: the access window (src/access-windows), JSON text
// {timezone, windows: [{days, from, to}]}; null = always open, as before this column.
export const name = '072_access_schedule';

export async function up(qi: QueryInterface): Promise<void> {
  await qi.addColumn('routes', 'access_schedule', { type: DataTypes.TEXT, allowNull: true });
  await qi.addColumn('peers', 'access_schedule', { type: DataTypes.TEXT, allowNull: true });
}

// Plain SQL (see 064_peer_config_endpoint.ts): sequelize's SQLite removeColumn rebuilds the table.
export async function down(qi: QueryInterface): Promise<void> {
  await qi.sequelize.query('ALTER TABLE peers DROP COLUMN access_schedule');
  await qi.sequelize.query('ALTER TABLE routes DROP COLUMN access_schedule');
}
