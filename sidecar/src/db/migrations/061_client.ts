import { DataTypes, type QueryInterface } from 'sequelize';

// Desktop clients (owned by src/client-api/): one row per machine that registered with a client
// token (POST /api/v1/client/register), identified by the token and the SHA-256 of the machine
// fingerprint header, with the peer the machine tunnels as and its last heartbeat and status.
// Deleting the token deletes its machines; deleting the peer leaves the machine without one (it
// registers again to get a new peer). api_tokens.split_tunnel: the token's override of the
// split-tunnel ranges (JSON array of IPv4 CIDRs; null = the server default).
const ms = () => ({ type: DataTypes.BIGINT, allowNull: false });

export const name = '061_client';

export async function up(qi: QueryInterface): Promise<void> {
  await qi.createTable('client_machines', {
    id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
    token_id: { type: DataTypes.INTEGER, allowNull: false, references: { model: 'api_tokens', key: 'id' }, onDelete: 'CASCADE' },
    /** SHA-256 (hex) of the X-Machine-Fingerprint header value */
    fingerprint: { type: DataTypes.STRING(64), allowNull: false },
    peer_id: { type: DataTypes.INTEGER, allowNull: true, references: { model: 'peers', key: 'id' }, onDelete: 'SET NULL' },
    /** the machine's own hostname as its client reports it */
    hostname: { type: DataTypes.STRING(255), allowNull: false },
    /** agent | admin: who owns the peer's DNS hostname (admin = the agent's reports are not applied) */
    hostname_source: { type: DataTypes.STRING(8), allowNull: false, defaultValue: 'agent' },
    platform: { type: DataTypes.STRING(64), allowNull: false },
    client_version: { type: DataTypes.STRING(64), allowNull: false },
    last_seen_at: { type: DataTypes.BIGINT, allowNull: true },
    handshake_age_s: { type: DataTypes.INTEGER, allowNull: true },
    rx_bytes: { type: DataTypes.BIGINT, allowNull: true },
    tx_bytes: { type: DataTypes.BIGINT, allowNull: true },
    /** the last POST /client/status body (JSON) */
    status_json: { type: DataTypes.TEXT, allowNull: true },
    status_at: { type: DataTypes.BIGINT, allowNull: true },
    created_at: ms(),
    updated_at: ms(),
  });
  await qi.addIndex('client_machines', ['token_id', 'fingerprint'], { unique: true, name: 'client_machines_token_fingerprint' });
  await qi.addIndex('client_machines', ['peer_id'], { name: 'client_machines_peer' });
  await qi.addColumn('api_tokens', 'split_tunnel', { type: DataTypes.TEXT, allowNull: true });
}

export async function down(qi: QueryInterface): Promise<void> {
  await qi.removeColumn('api_tokens', 'split_tunnel');
  await qi.dropTable('client_machines');
}
