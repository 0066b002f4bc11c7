import { DataTypes, type QueryInterface } from 'sequelize';

// routes.geo_filter: the route's country filter as JSON text {mode: allow|deny, countries: [ISO
// 3166-1 alpha-2]} (routes/geo.ts); null = none.
export const name = '073_route_geo_filter';

export async function up(qi: QueryInterface): Promise<void> {
  await qi.addColumn('routes', 'geo_filter', { type: DataTypes.TEXT, allowNull: true });
}

// Plain SQL (see 064_peer_config_endpoint.ts): sequelize's SQLite removeColumn rebuilds the table.
export async function down(qi: QueryInterface): Promise<void> {
  await qi.sequelize.query('ALTER TABLE routes DROP COLUMN geo_filter');
}
