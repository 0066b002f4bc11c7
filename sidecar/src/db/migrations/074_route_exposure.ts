import { DataTypes, type QueryInterface } from 'sequelize';

// routes.exposure: public (every visitor, as before) or internal (only clients whose connection comes
// from the tunnel subnet or a gateway's routed LAN; src/routes/exposure.ts, proxy/fragments/exposure.ts).
// routes.exposure_answer: what everyone else gets from an internal route: not_found | page | redirect
// (null: not_found). exposure_page: the admin's page (HTML or text); exposure_redirect_url: the
// redirect target. Both stay stored when another answer is chosen.
export const name = '074_route_exposure';

export async function up(qi: QueryInterface): Promise<void> {
  await qi.addColumn('routes', 'exposure', { type: DataTypes.STRING(16), allowNull: false, defaultValue: 'public' });
  await qi.addColumn('routes', 'exposure_answer', { type: DataTypes.STRING(16), allowNull: true });
  await qi.addColumn('routes', 'exposure_page', { type: DataTypes.TEXT, allowNull: true });
  await qi.addColumn('routes', 'exposure_redirect_url', { type: DataTypes.TEXT, allowNull: true });
}

// Plain SQL (see 064_peer_config_endpoint.ts): sequelize's SQLite removeColumn rebuilds the table.
export async function down(qi: QueryInterface): Promise<void> {
  for (const c of ['exposure_redirect_url', 'exposure_page', 'exposure_answer', 'exposure']) await qi.sequelize.query(`ALTER TABLE routes DROP COLUMN ${c}`);
}
