import { Op, type QueryInterface } from 'sequelize';

// Reads that follow every route write and look for the few rows of a kind among all routes:
// - the internal routes (exposure 'internal'): the internal DNS names (dns/service.ts) and the
//   exposure part of the proxy snapshot;
// - the routes and peers with an access schedule (access-windows/service.ts).
// Without an index each scanned every route: 28 ms and twice 22 ms of each create at 100,000 routes
// on SQLite. The schedule indexes are partial (only rows that have one), so they cost nothing for
// the rows without.
export const name = '086_route_write_indexes';

export async function up(qi: QueryInterface): Promise<void> {
  await qi.addIndex('routes', ['exposure'], { name: 'routes_exposure' });
  await qi.addIndex('routes', ['access_schedule'], { name: 'routes_access_schedule', where: { access_schedule: { [Op.ne]: null } } });
  await qi.addIndex('peers', ['access_schedule'], { name: 'peers_access_schedule', where: { access_schedule: { [Op.ne]: null } } });
}

export async function down(qi: QueryInterface): Promise<void> {
  await qi.removeIndex('peers', 'peers_access_schedule');
  await qi.removeIndex('routes', 'routes_access_schedule');
  await qi.removeIndex('routes', 'routes_exposure');
}
