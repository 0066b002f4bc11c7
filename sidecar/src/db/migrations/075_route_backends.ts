import { DataTypes, type QueryInterface } from 'sequelize';

// Several backends per HTTP route, load balancing, active health checks, header operations and the
// compression list (routes/traffic.ts):
// - backends: JSON list of {target_kind, peer_id, target_host, target_port, weight}; null = the
//   route's single target is its only backend. When set, its first entry IS the single target.
// - backend_peer_ids: ",3,5," the peers the backends name (peers/service.ts routesUsing finds a
//   route by any of them with LIKE).
// - lb_policy, lb_cookie_name: the load-balancing policy (null = round_robin).
// - health_check: JSON {path, interval_s, timeout_s, expect_status}; null = no active checks.
// - request_headers, response_headers: JSON {set: {name: value}, delete: [name]}; null = none.
// - compression: JSON list of encodings (zstd, gzip); null = from compress_enabled as before.
export const name = '075_route_backends';

const COLUMNS = [
  ['backends', DataTypes.TEXT],
  ['backend_peer_ids', DataTypes.TEXT],
  ['lb_policy', DataTypes.STRING],
  ['lb_cookie_name', DataTypes.STRING],
  ['health_check', DataTypes.TEXT],
  ['request_headers', DataTypes.TEXT],
  ['response_headers', DataTypes.TEXT],
  ['compression', DataTypes.STRING],
] as const;

export async function up(qi: QueryInterface): Promise<void> {
  for (const [column, type] of COLUMNS) await qi.addColumn('routes', column, { type, allowNull: true });
}

// Plain SQL (see 064_peer_config_endpoint.ts): sequelize's SQLite removeColumn rebuilds the table.
export async function down(qi: QueryInterface): Promise<void> {
  for (const [column] of [...COLUMNS].reverse()) await qi.sequelize.query(`ALTER TABLE routes DROP COLUMN ${column}`);
}
