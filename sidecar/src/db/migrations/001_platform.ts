import { DataTypes, type QueryInterface } from 'sequelize';

const ms = () => ({ type: DataTypes.BIGINT, allowNull: false });

export const name = '001_platform';

export async function up(qi: QueryInterface): Promise<void> {
  await qi.createTable('users', {
    id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
    username: { type: DataTypes.STRING(64), allowNull: false, unique: true },
    email: { type: DataTypes.STRING(254), allowNull: true },
    password_hash: { type: DataTypes.STRING(255), allowNull: false },
    role: { type: DataTypes.STRING(16), allowNull: false, defaultValue: 'admin' },
    language: { type: DataTypes.STRING(2), allowNull: false, defaultValue: 'en' },
    theme: { type: DataTypes.STRING(16), allowNull: true },
    last_login_at: { type: DataTypes.BIGINT, allowNull: true },
    created_at: ms(),
    updated_at: ms(),
  });
  await qi.createTable('sessions', {
    sid: { type: DataTypes.STRING(64), primaryKey: true },
    user_id: { type: DataTypes.INTEGER, allowNull: true },
    data: { type: DataTypes.TEXT, allowNull: false },
    expires_at: ms(),
  });
  await qi.addIndex('sessions', ['expires_at']);
  await qi.addIndex('sessions', ['user_id']);
  await qi.createTable('login_attempts', {
    id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
    record_type: { type: DataTypes.STRING(16), allowNull: false },
    identifier: { type: DataTypes.STRING(320), allowNull: false },
    ip: { type: DataTypes.STRING(64), allowNull: true },
    outcome: { type: DataTypes.STRING(16), allowNull: false },
    created_at: ms(),
  });
  await qi.addIndex('login_attempts', ['record_type', 'identifier', 'created_at']);
  await qi.createTable('api_tokens', {
    id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
    name: { type: DataTypes.STRING(128), allowNull: false },
    token_hash: { type: DataTypes.STRING(64), allowNull: false, unique: true },
    token_hint: { type: DataTypes.STRING(16), allowNull: false },
    scopes: { type: DataTypes.TEXT, allowNull: false },
    expires_at: { type: DataTypes.BIGINT, allowNull: true },
    user_id: { type: DataTypes.INTEGER, allowNull: true },
    peer_id: { type: DataTypes.INTEGER, allowNull: true },
    fingerprint: { type: DataTypes.STRING(64), allowNull: true },
    fingerprint_bound_at: { type: DataTypes.BIGINT, allowNull: true },
    last_used_at: { type: DataTypes.BIGINT, allowNull: true },
    created_by: { type: DataTypes.INTEGER, allowNull: true },
    created_at: ms(),
  });
  await qi.createTable('settings', {
    key: { type: DataTypes.STRING(128), primaryKey: true },
    value: { type: DataTypes.TEXT, allowNull: false },
    updated_at: ms(),
  });
  await qi.createTable('activity_log', {
    id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
    severity: { type: DataTypes.STRING(16), allowNull: false },
    source: { type: DataTypes.STRING(32), allowNull: false },
    event_type: { type: DataTypes.STRING(64), allowNull: false },
    message: { type: DataTypes.TEXT, allowNull: false },
    details: { type: DataTypes.TEXT, allowNull: true },
    user_id: { type: DataTypes.INTEGER, allowNull: true },
    ip: { type: DataTypes.STRING(64), allowNull: true },
    created_at: ms(),
  });
  await qi.addIndex('activity_log', ['created_at']);
  await qi.addIndex('activity_log', ['event_type']);
}

export async function down(qi: QueryInterface): Promise<void> {
  for (const t of ['activity_log', 'settings', 'api_tokens', 'login_attempts', 'sessions', 'users']) await qi.dropTable(t);
}
