import { DataTypes, type QueryInterface } from 'sequelize';

// Route auth for the route's users (routes.user_ids, the users allowed on the route), and what
// the access log keeps about a request:
// - route_auth_user_totp: the TOTP second factor of one Gatehouse user on one route (secret sealed
//   like the configuration's own; pending until confirmed with a code);
// - route_auth_sessions.user_id / subject: whose session it is (user_id null: the route's own
//   configured account) and the name shown for it (the username, or the configured email);
// - access_log.auth_user: who was signed in (route auth) for a request; access_log.debug: request
//   and response headers of requests to routes with debug_enabled (JSON, credentials redacted).
export const name = '040_route_auth_users';

export async function up(qi: QueryInterface): Promise<void> {
  await qi.createTable('route_auth_user_totp', {
    id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
    route_id: { type: DataTypes.INTEGER, allowNull: false, references: { model: 'routes', key: 'id' }, onDelete: 'CASCADE' },
    user_id: { type: DataTypes.INTEGER, allowNull: false, references: { model: 'users', key: 'id' }, onDelete: 'CASCADE' },
    totp_secret: { type: DataTypes.TEXT, allowNull: true },
    totp_pending_secret: { type: DataTypes.TEXT, allowNull: true },
    totp_active: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
    totp_last_step: { type: DataTypes.BIGINT, allowNull: true },
    created_at: { type: DataTypes.BIGINT, allowNull: false },
    updated_at: { type: DataTypes.BIGINT, allowNull: false },
  });
  await qi.addIndex('route_auth_user_totp', ['route_id', 'user_id'], { unique: true, name: 'route_auth_user_totp_unique' });
  await qi.addColumn('route_auth_sessions', 'user_id', { type: DataTypes.INTEGER, allowNull: true });
  await qi.addColumn('route_auth_sessions', 'subject', { type: DataTypes.STRING(254), allowNull: true });
  await qi.addIndex('route_auth_sessions', ['user_id']);
  await qi.addColumn('access_log', 'auth_user', { type: DataTypes.STRING(254), allowNull: true });
  await qi.addColumn('access_log', 'debug', { type: DataTypes.TEXT, allowNull: true });
}

export async function down(qi: QueryInterface): Promise<void> {
  await qi.removeColumn('access_log', 'debug');
  await qi.removeColumn('access_log', 'auth_user');
  await qi.removeIndex('route_auth_sessions', ['user_id']);
  await qi.removeColumn('route_auth_sessions', 'subject');
  await qi.removeColumn('route_auth_sessions', 'user_id');
  await qi.dropTable('route_auth_user_totp');
}
