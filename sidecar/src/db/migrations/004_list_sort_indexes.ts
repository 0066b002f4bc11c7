import type { QueryInterface } from 'sequelize';

// Sort orders of GET /peers and GET /routes (peers/list.ts, routes/list.ts) that would otherwise read
// every row to find one page: creation time, latest handshake and traffic (the same expression the
// list orders by, so both SQLite and PostgreSQL can use it). Name order already has
// peers_name_lower_unique (003), domain order routes_domain (002).
export const name = '004_list_sort_indexes';

export async function up(qi: QueryInterface): Promise<void> {
  await qi.sequelize.query('CREATE INDEX peers_created_at ON peers (created_at)');
  await qi.sequelize.query('CREATE INDEX peers_latest_handshake ON peers (latest_handshake)');
  await qi.sequelize.query('CREATE INDEX peers_traffic ON peers ((total_rx + total_tx))');
  await qi.sequelize.query('CREATE INDEX routes_created_at ON routes (created_at)');
}

export async function down(qi: QueryInterface): Promise<void> {
  for (const i of ['routes_created_at', 'peers_traffic', 'peers_latest_handshake', 'peers_created_at']) await qi.sequelize.query(`DROP INDEX ${i}`);
}
