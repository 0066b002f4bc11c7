import { DataTypes, type QueryInterface } from 'sequelize';

// Share links of route-auth routes (owned by src/share-links/): an admin makes a link that lets
// whoever opens it into one route (optionally only under a path prefix) without signing in, until it
// expires, is used max_uses times or is revoked. Only the SHA-256 of the link's token is stored.
// Deleting the route deletes its links. route_auth_sessions gets share_link_id (the link a session
// came from: revoking the link ends it) and path_prefix (the session is valid only under it).
export const name = '071_share_links';

export async function up(qi: QueryInterface): Promise<void> {
  await qi.createTable('share_links', {
    id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
    route_id: { type: DataTypes.INTEGER, allowNull: false, references: { model: 'routes', key: 'id' }, onDelete: 'CASCADE' },
    /** SHA-256 (hex) of the link's token */
    token_hash: { type: DataTypes.STRING(64), allowNull: false, unique: true },
    note: { type: DataTypes.STRING(200), allowNull: true },
    path_prefix: { type: DataTypes.STRING(512), allowNull: true },
    max_uses: { type: DataTypes.INTEGER, allowNull: true },
    uses: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
    last_used_at: { type: DataTypes.BIGINT, allowNull: true },
    created_by: { type: DataTypes.INTEGER, allowNull: true },
    created_by_name: { type: DataTypes.STRING(255), allowNull: true },
    created_at: { type: DataTypes.BIGINT, allowNull: false },
    expires_at: { type: DataTypes.BIGINT, allowNull: false },
    revoked_at: { type: DataTypes.BIGINT, allowNull: true },
  });
  await qi.addIndex('share_links', ['route_id'], { name: 'share_links_route' });
  await qi.addColumn('route_auth_sessions', 'share_link_id', { type: DataTypes.INTEGER, allowNull: true });
  await qi.addColumn('route_auth_sessions', 'path_prefix', { type: DataTypes.STRING(512), allowNull: true });
}

// Plain SQL (see 064_peer_config_endpoint.ts): sequelize's SQLite removeColumn rebuilds the table.
export async function down(qi: QueryInterface): Promise<void> {
  await qi.sequelize.query('ALTER TABLE route_auth_sessions DROP COLUMN path_prefix');
  await qi.sequelize.query('ALTER TABLE route_auth_sessions DROP COLUMN share_link_id');
  await qi.dropTable('share_links');
}
