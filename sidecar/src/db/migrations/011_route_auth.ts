import { DataTypes, type QueryInterface } from 'sequelize';

// Route auth (the login-page tier of per-route authentication): one configuration per route, the
// server-side sessions of its visitors, and the one-time email codes. Owned by src/route-auth/.
const ms = () => ({ type: DataTypes.BIGINT, allowNull: false });
const bool = (d = false) => ({ type: DataTypes.BOOLEAN, allowNull: false, defaultValue: d });
const routeRef = () => ({ type: DataTypes.INTEGER, allowNull: false, references: { model: 'routes', key: 'id' }, onDelete: 'CASCADE' });

export const name = '011_route_auth';

export async function up(qi: QueryInterface): Promise<void> {
  await qi.createTable('route_auth', {
    id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
    route_id: { ...routeRef(), unique: true },
    method: { type: DataTypes.STRING(16), allowNull: false },
    two_factor_enabled: bool(),
    two_factor_method: { type: DataTypes.STRING(16), allowNull: true },
    email: { type: DataTypes.STRING(254), allowNull: false },
    password_hash: { type: DataTypes.STRING(100), allowNull: true },
    /** sealed base32 secret of the active TOTP, and of a setup not yet confirmed */
    totp_secret: { type: DataTypes.TEXT, allowNull: true },
    totp_pending_secret: { type: DataTypes.TEXT, allowNull: true },
    totp_active: bool(),
    /** last accepted 30-second step: a code is accepted once (no replay within its window) */
    totp_last_step: { type: DataTypes.BIGINT, allowNull: true },
    session_max_age: ms(),
    title: { type: DataTypes.STRING(100), allowNull: true },
    description: { type: DataTypes.STRING(500), allowNull: true },
    primary_color: { type: DataTypes.STRING(7), allowNull: true },
    bg_color: { type: DataTypes.STRING(7), allowNull: true },
    /** file names under <dataDir>/branding/ */
    logo: { type: DataTypes.STRING(128), allowNull: true },
    bg_image: { type: DataTypes.STRING(128), allowNull: true },
    created_at: ms(),
    updated_at: ms(),
  });
  await qi.createTable('route_auth_sessions', {
    /** SHA-256 (hex) of the random cookie value; the value itself is never stored */
    id: { type: DataTypes.STRING(64), primaryKey: true },
    route_id: routeRef(),
    email: { type: DataTypes.STRING(254), allowNull: false },
    /** 'active' (verify lets it through) or 'pending' (first step of a two-step login done) */
    stage: { type: DataTypes.STRING(16), allowNull: false },
    auth_method: { type: DataTypes.STRING(32), allowNull: false },
    expires_at: ms(),
    created_at: ms(),
    user_agent: { type: DataTypes.STRING(255), allowNull: true },
    ip: { type: DataTypes.STRING(64), allowNull: true },
  });
  await qi.addIndex('route_auth_sessions', ['route_id']);
  await qi.addIndex('route_auth_sessions', ['expires_at']);
  await qi.createTable('route_auth_codes', {
    id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
    route_id: routeRef(),
    email: { type: DataTypes.STRING(254), allowNull: false },
    /** HMAC-SHA-256 of the code under a key derived from the master key */
    code_hash: { type: DataTypes.STRING(64), allowNull: false },
    expires_at: ms(),
    used_at: { type: DataTypes.BIGINT, allowNull: true },
    attempts: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
    sent_at: ms(),
  });
  await qi.addIndex('route_auth_codes', ['route_id', 'email', 'sent_at']);
}

export async function down(qi: QueryInterface): Promise<void> {
  for (const t of ['route_auth_codes', 'route_auth_sessions', 'route_auth']) await qi.dropTable(t);
}
