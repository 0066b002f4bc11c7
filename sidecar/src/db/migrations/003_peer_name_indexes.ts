import type { QueryInterface } from 'sequelize';

// Peer and group names are unique regardless of case ("Laptop" and "laptop" would be confusing in
// lists, file names and DNS). Expression indexes on LOWER(name) work on SQLite (3.9+) and PostgreSQL.
export const name = '003_peer_name_indexes';

export async function up(qi: QueryInterface): Promise<void> {
  await qi.sequelize.query('CREATE UNIQUE INDEX peers_name_lower_unique ON peers (LOWER(name))');
  await qi.sequelize.query('CREATE UNIQUE INDEX peer_groups_name_lower_unique ON peer_groups (LOWER(name))');
  await qi.sequelize.query('CREATE INDEX peers_hostname_lower ON peers (LOWER(hostname))');
}

export async function down(qi: QueryInterface): Promise<void> {
  await qi.sequelize.query('DROP INDEX peers_hostname_lower');
  await qi.sequelize.query('DROP INDEX peer_groups_name_lower_unique');
  await qi.sequelize.query('DROP INDEX peers_name_lower_unique');
}
