import { DataTypes, type QueryInterface } from 'sequelize';

// Route-auth method `oidc` (route-auth/oidc.ts): visitors of a route sign in through an OpenID
// Connect provider. The route's configuration names the provider and who of its users may in (the
// e-mail addresses and groups, JSON arrays); a route-auth session keeps the groups it was opened
// with, which the forward-auth verify passes to the backend as X-Auth-Groups.
export const name = '082_route_auth_oidc';

export async function up(qi: QueryInterface): Promise<void> {
  await qi.addColumn('route_auth', 'oidc_provider_id', { type: DataTypes.INTEGER, allowNull: true });
  await qi.addColumn('route_auth', 'allowed_emails', { type: DataTypes.TEXT, allowNull: true });
  await qi.addColumn('route_auth', 'allowed_groups', { type: DataTypes.TEXT, allowNull: true });
  await qi.addColumn('route_auth_sessions', 'groups', { type: DataTypes.TEXT, allowNull: true });
}

export async function down(qi: QueryInterface): Promise<void> {
  await qi.removeColumn('route_auth_sessions', 'groups');
  await qi.removeColumn('route_auth', 'allowed_groups');
  await qi.removeColumn('route_auth', 'allowed_emails');
  await qi.removeColumn('route_auth', 'oidc_provider_id');
}
