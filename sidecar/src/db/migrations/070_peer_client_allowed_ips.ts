import { DataTypes, type QueryInterface } from 'sequelize';

// peers.client_allowed_ips: what the peer's client routes into the tunnel (its config's AllowedIPs),
// comma-separated normalised CIDRs; null = the server default (the VPN subnet), as before this column.
// peers.config_client_allowed_ips: client_allowed_ips as it was when the config last handed out was
// made (null = the default): when they differ the peer view says config_outdated (peers/view.ts).
export const name = '070_peer_client_allowed_ips';

export async function up(qi: QueryInterface): Promise<void> {
  await qi.addColumn('peers', 'client_allowed_ips', { type: DataTypes.TEXT, allowNull: true });
  await qi.addColumn('peers', 'config_client_allowed_ips', { type: DataTypes.TEXT, allowNull: true });
}

// Plain SQL (see 064_peer_config_endpoint.ts): sequelize's SQLite removeColumn rebuilds the table.
export async function down(qi: QueryInterface): Promise<void> {
  await qi.sequelize.query('ALTER TABLE peers DROP COLUMN config_client_allowed_ips');
  await qi.sequelize.query('ALTER TABLE peers DROP COLUMN client_allowed_ips');
}
