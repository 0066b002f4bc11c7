import { DataTypes, type QueryInterface } from 'sequelize';

// RDP routes (owned by src/rdp/, licence feature remote_desktop): the routes, their sessions (history
// is kept per route: deleting the route deletes it) and the server's RSA key pairs for the credential
// envelopes (@gatehouse/common/rdp-credentials). Exactly one key row has retired_at null: the current
// key. Credentials are stored only as the client-side encrypted envelope, never in clear.
const ms = () => ({ type: DataTypes.BIGINT, allowNull: false });
const msNull = () => ({ type: DataTypes.BIGINT, allowNull: true });

export const name = '060_rdp';

export async function up(qi: QueryInterface): Promise<void> {
  await qi.createTable('rdp_routes', {
    id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
    name: { type: DataTypes.STRING(128), allowNull: false, unique: true },
    description: { type: DataTypes.STRING(500), allowNull: true },
    enabled: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: true },
    /** internal | external | both | gateway */
    access_mode: { type: DataTypes.STRING(16), allowNull: false },
    target_host: { type: DataTypes.STRING(253), allowNull: false },
    target_port: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 3389 },
    /** internal/both: the VPN peer the target is (target_host then defaults to its tunnel IP) */
    target_peer_id: { type: DataTypes.INTEGER, allowNull: true, references: { model: 'peers', key: 'id' }, onDelete: 'SET NULL' },
    /** both: the public address (target_host stays the internal one) */
    external_host: { type: DataTypes.STRING(253), allowNull: true },
    /** gateway: the server's public TCP port of the linked L4 route; external/both: the public port the client uses */
    listen_port: { type: DataTypes.INTEGER, allowNull: true },
    gateway_peer_id: { type: DataTypes.INTEGER, allowNull: true, references: { model: 'peers', key: 'id' }, onDelete: 'SET NULL' },
    /** the companion's listener port for the linked route (derived, read-only) */
    gateway_listen_port: { type: DataTypes.INTEGER, allowNull: true },
    /** optional RD gateway pair, passed to the client in the connect profile */
    gateway_host: { type: DataTypes.STRING(253), allowNull: true },
    gateway_port: { type: DataTypes.INTEGER, allowNull: true },
    /** the JSON envelope of @gatehouse/common/rdp-credentials, never anything else */
    credentials_envelope: { type: DataTypes.TEXT, allowNull: true },
    credentials_kid: { type: DataTypes.STRING(16), allowNull: true },
    credentials_updated_at: msNull(),
    /** none | pending (after a master-key rotation, until an admin re-enters the credentials and acks) */
    rotation_state: { type: DataTypes.STRING(8), allowNull: false, defaultValue: 'none' },
    rotation_pending_since: msNull(),
    wol_enabled: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
    wol_mac: { type: DataTypes.STRING(17), allowNull: true },
    network_level_auth: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: true },
    /** local | remote | off */
    audio_mode: { type: DataTypes.STRING(8), allowNull: false, defaultValue: 'local' },
    clipboard_enabled: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: true },
    /** WIDTHxHEIGHT; null = full screen */
    resolution: { type: DataTypes.STRING(11), allowNull: true },
    /** 15 | 16 | 24 | 32 */
    color_depth: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 32 },
    /** JSON array of {from, to, note} (ISO-8601) */
    maintenance_windows: { type: DataTypes.TEXT, allowNull: false, defaultValue: '[]' },
    /** JSON array of user ids; null = every client token */
    allowed_user_ids: { type: DataTypes.TEXT, allowNull: true },
    /** gateway mode: the L4 TCP route this RDP route owns */
    gateway_l4_route_id: { type: DataTypes.INTEGER, allowNull: true, references: { model: 'routes', key: 'id' }, onDelete: 'SET NULL' },
    created_at: ms(),
    updated_at: ms(),
  });
  await qi.addIndex('rdp_routes', ['gateway_l4_route_id'], { name: 'rdp_routes_l4_route' });

  await qi.createTable('rdp_sessions', {
    id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
    rdp_route_id: { type: DataTypes.INTEGER, allowNull: false, references: { model: 'rdp_routes', key: 'id' }, onDelete: 'CASCADE' },
    token_id: { type: DataTypes.INTEGER, allowNull: true },
    machine_id: { type: DataTypes.INTEGER, allowNull: true },
    peer_id: { type: DataTypes.INTEGER, allowNull: true },
    user_id: { type: DataTypes.INTEGER, allowNull: true },
    /** the client's host name */
    client_name: { type: DataTypes.STRING(255), allowNull: true },
    /** active | ended */
    status: { type: DataTypes.STRING(8), allowNull: false, defaultValue: 'active' },
    started_at: ms(),
    last_heartbeat_at: ms(),
    ended_at: msNull(),
    /** client | lost | disconnected | route_disabled | route_deleted */
    end_reason: { type: DataTypes.STRING(16), allowNull: true },
    disconnect_requested_at: msNull(),
  });
  await qi.addIndex('rdp_sessions', ['rdp_route_id', 'id'], { name: 'rdp_sessions_route' });
  await qi.addIndex('rdp_sessions', ['status', 'last_heartbeat_at'], { name: 'rdp_sessions_status' });

  await qi.createTable('rdp_server_keys', {
    /** first 16 hex digits of SHA-256 over the public key (SPKI DER) */
    kid: { type: DataTypes.STRING(16), primaryKey: true },
    /** base64 SPKI DER */
    public_key: { type: DataTypes.TEXT, allowNull: false },
    /** base64 PKCS#8 DER, sealed with the master key (util/crypto.ts) */
    private_key_sealed: { type: DataTypes.TEXT, allowNull: false },
    created_at: ms(),
    retired_at: msNull(),
  });
}

export async function down(qi: QueryInterface): Promise<void> {
  await qi.dropTable('rdp_server_keys');
  await qi.dropTable('rdp_sessions');
  await qi.dropTable('rdp_routes');
}
