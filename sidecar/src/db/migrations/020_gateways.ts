import { DataTypes, type QueryInterface } from 'sequelize';

// Home gateways (owned by src/gateways/): one row per gateway peer with its companion tokens, its
// last heartbeat and its derived status. Deleting the peer deletes the row.
const ms = () => ({ type: DataTypes.BIGINT, allowNull: false });

export const name = '020_gateways';

export async function up(qi: QueryInterface): Promise<void> {
  await qi.createTable('gateways', {
    peer_id: { type: DataTypes.INTEGER, primaryKey: true, references: { model: 'peers', key: 'id' }, onDelete: 'CASCADE' },
    /** SHA-256 (hex) of the gateway API token; the token itself is shown once */
    api_token_hash: { type: DataTypes.STRING(64), allowNull: false, unique: true },
    /** the push token (server → companion), sealed with the master key: the server must present it */
    push_token_enc: { type: DataTypes.TEXT, allowNull: false },
    /** first characters of the API token, to tell tokens apart in the UI */
    token_hint: { type: DataTypes.STRING(16), allowNull: false },
    tokens_issued_at: ms(),
    /** epoch ms of the last heartbeat (null: never) */
    last_seen_at: { type: DataTypes.BIGINT, allowNull: true },
    /** the last heartbeat payload, complete, as JSON */
    health: { type: DataTypes.TEXT, allowNull: true },
    /** verdict of the last heartbeat: route_reachability when present, else overall_healthy */
    healthy: { type: DataTypes.BOOLEAN, allowNull: true },
    health_reason: { type: DataTypes.STRING(255), allowNull: true },
    /** config_hash the companion reported in its last heartbeat */
    reported_config_hash: { type: DataTypes.STRING(71), allowNull: true },
    /** online | offline | unknown, as last evaluated (transitions are logged) */
    status: { type: DataTypes.STRING(8), allowNull: false, defaultValue: 'unknown' },
    status_reason: { type: DataTypes.STRING(255), allowNull: true },
    status_changed_at: { type: DataTypes.BIGINT, allowNull: true },
    /** the last POST /gateway/status snapshot {rx_bytes, tx_bytes, active_connections, at} as JSON */
    traffic: { type: DataTypes.TEXT, allowNull: true },
    created_at: ms(),
    updated_at: ms(),
  });
}

export async function down(qi: QueryInterface): Promise<void> {
  await qi.dropTable('gateways');
}
