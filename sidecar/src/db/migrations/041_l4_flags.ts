import type { QueryInterface } from 'sequelize';

// L4 routes no longer take debug_enabled (the trace is the HTTP access log) and UDP routes no longer
// take monitoring_enabled (a UDP service cannot be told up without its own protocol): the routes
// service refuses both with 400. Rows stored before are cleared, so that no stored flag claims an
// effect it does not have and a partial update of such a route is not refused for it.
export const name = '041_l4_flags';

export async function up(qi: QueryInterface): Promise<void> {
  await qi.bulkUpdate('routes', { debug_enabled: false }, { route_type: 'l4', debug_enabled: true });
  await qi.bulkUpdate('routes', { monitoring_enabled: false }, { route_type: 'l4', l4_protocol: 'udp', monitoring_enabled: true });
}
