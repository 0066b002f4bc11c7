import type { QueryInterface } from 'sequelize';

// Usernames are unique without regard to case ("Admin" beside "admin" is refused): a unique index on
// lower(username), the same expression on SQLite and PostgreSQL. An older database that already
// holds two names differing only in case keeps them (the index is not created then; the users
// service refuses new ones either way, and sign-in matches such a name only exactly).
export const name = '062_username_nocase';

export async function up(qi: QueryInterface): Promise<void> {
  const [dupes] = await qi.sequelize.query('SELECT lower(username) AS n FROM users GROUP BY lower(username) HAVING count(*) > 1');
  if ((dupes as unknown[]).length > 0) return;
  await qi.sequelize.query('CREATE UNIQUE INDEX users_username_nocase ON users (lower(username))');
}

export async function down(qi: QueryInterface): Promise<void> {
  await qi.sequelize.query('DROP INDEX IF EXISTS users_username_nocase');
}
