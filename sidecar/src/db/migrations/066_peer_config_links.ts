import { DataTypes, type QueryInterface } from 'sequelize';

// One-time download links for a peer's client config (owned by src/config-links/): an admin makes a
// link, sends it to the peer's user, and the first download uses it up. Only the SHA-256 of the
// link's token is stored. Deleting the peer deletes its links.
export const name = '066_peer_config_links';

export async function up(qi: QueryInterface): Promise<void> {
  await qi.createTable('peer_config_links', {
    id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
    peer_id: { type: DataTypes.INTEGER, allowNull: false, references: { model: 'peers', key: 'id' }, onDelete: 'CASCADE' },
    /** SHA-256 (hex) of the link's token */
    token_hash: { type: DataTypes.STRING(64), allowNull: false, unique: true },
    note: { type: DataTypes.STRING(200), allowNull: true },
    created_by: { type: DataTypes.INTEGER, allowNull: true },
    created_at: { type: DataTypes.BIGINT, allowNull: false },
    expires_at: { type: DataTypes.BIGINT, allowNull: false },
    used_at: { type: DataTypes.BIGINT, allowNull: true },
    used_ip: { type: DataTypes.STRING(64), allowNull: true },
    revoked_at: { type: DataTypes.BIGINT, allowNull: true },
  });
  await qi.addIndex('peer_config_links', ['peer_id'], { name: 'peer_config_links_peer' });
}

export async function down(qi: QueryInterface): Promise<void> {
  await qi.dropTable('peer_config_links');
}
