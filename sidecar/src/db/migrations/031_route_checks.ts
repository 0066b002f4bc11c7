import { DataTypes, type QueryInterface } from 'sequelize';

// Uptime monitoring (src/resilience/monitor.ts): one row per check of a route's backend.
export const name = '031_route_checks';

export async function up(qi: QueryInterface): Promise<void> {
  await qi.createTable('route_checks', {
    id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
    route_id: { type: DataTypes.INTEGER, allowNull: false, references: { model: 'routes', key: 'id' }, onDelete: 'CASCADE' },
    checked_at: { type: DataTypes.BIGINT, allowNull: false },
    up: { type: DataTypes.BOOLEAN, allowNull: false },
    /** HTTP status of the backend's answer (null: no answer) */
    status: { type: DataTypes.INTEGER, allowNull: true },
    response_ms: { type: DataTypes.DOUBLE, allowNull: true },
    error: { type: DataTypes.STRING(255), allowNull: true },
  });
  await qi.addIndex('route_checks', ['route_id', 'id']);
}

export async function down(qi: QueryInterface): Promise<void> {
  await qi.dropTable('route_checks');
}
