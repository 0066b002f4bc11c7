import { DataTypes, type QueryInterface } from 'sequelize';

// Redirect hosts (owned by src/redirects/): a domain that answers every request with a redirect to
// another URL (301, 302, 307 or 308), optionally keeping the request's path and query. A domain is
// either a route's or a redirect host's, never both (redirects/service.ts, routes/service.ts).
// The default site (what unknown host names get) is a setting (key `default_site`), not a table.
export const name = '068_redirect_hosts';

export async function up(qi: QueryInterface): Promise<void> {
  await qi.createTable('redirect_hosts', {
    id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
    domain: { type: DataTypes.STRING(253), allowNull: false, unique: true },
    target_url: { type: DataTypes.STRING(2048), allowNull: false },
    preserve_path: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: true },
    status_code: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 301 },
    enabled: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: true },
    description: { type: DataTypes.STRING(500), allowNull: true },
    created_at: { type: DataTypes.BIGINT, allowNull: false },
    updated_at: { type: DataTypes.BIGINT, allowNull: false },
  });
}

export async function down(qi: QueryInterface): Promise<void> {
  await qi.dropTable('redirect_hosts');
}
