import { DataTypes, type QueryInterface } from 'sequelize';

// The shared rate limits of a cluster (http/ratelimit.ts with GATEHOUSE_CLUSTER): rate-limiter-
// flexible's PostgreSQL store keeps one row per limit and client address, `key` = "<limit>:<ip>",
// `points` = requests counted, `expire` = epoch ms when the window ends. The columns are the ones
// the library's own CREATE TABLE would make (RateLimiterPostgres); created here so that the schema
// is the migrations' (the library is told the table exists). Made on SQLite too, where it stays
// empty: a single node counts in memory.
export const name = '084_rate_limits';

export async function up(qi: QueryInterface): Promise<void> {
  await qi.createTable('rate_limits', {
    key: { type: DataTypes.STRING(255), primaryKey: true },
    points: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
    expire: { type: DataTypes.BIGINT, allowNull: true },
  });
}

export async function down(qi: QueryInterface): Promise<void> {
  await qi.dropTable('rate_limits');
}
