import type { QueryInterface } from 'sequelize';

// The internal routes (exposure 'internal') are read after every route write: the internal DNS
// names (dns/service.ts) and the exposure part of the proxy snapshot. Without an index that read
// scans every route (28 ms at 100,000 routes on SQLite, on each create); with it, it reads only the
// few internal ones.
export const name = '086_routes_exposure_index';

export async function up(qi: QueryInterface): Promise<void> {
  await qi.addIndex('routes', ['exposure'], { name: 'routes_exposure' });
}

export async function down(qi: QueryInterface): Promise<void> {
  await qi.removeIndex('routes', 'routes_exposure');
}
