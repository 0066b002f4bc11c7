import { DataTypes, type QueryInterface } from 'sequelize';

// peers.config_endpoint: the Endpoint (host:port) written into the config last handed out for the
// peer (the admin's download, QR code or config view, a desktop client's config, a gateway's env).
// When this server's endpoint changes (Network settings, GATEHOUSE_PUBLIC_HOST, GATEHOUSE_WG_PORT),
// a peer whose config carries another endpoint shows config_outdated (peers/view.ts). Null: no
// config handed out since this column exists (older peers are not flagged: nothing is known).
export const name = '064_peer_config_endpoint';

export async function up(qi: QueryInterface): Promise<void> {
  await qi.addColumn('peers', 'config_endpoint', { type: DataTypes.STRING(300), allowNull: true });
}

// Plain SQL (SQLite 3.35+ and PostgreSQL): sequelize's SQLite removeColumn rebuilds the table from
// its description, which fails on the expression index peers has (lower(name)).
export async function down(qi: QueryInterface): Promise<void> {
  await qi.sequelize.query('ALTER TABLE peers DROP COLUMN config_endpoint');
}
