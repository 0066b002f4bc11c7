import { DataTypes, type QueryInterface } from 'sequelize';

// Route-auth sign-ins through OpenID Connect that wait for their callback (route-auth/oidc.ts): one
// row per started sign-in, keyed by its `state`, so that in a cluster the callback may reach another
// node than the start, and a restart forgets none. The PKCE verifier is sealed under a key derived
// from the master key; the binding cookie is kept as its SHA-256 only. A callback takes its row with a delete (single
// use); rows older than the flows' maximum age are pruned. Transient: not backed up.
export const name = '085_route_auth_oidc_flows';

export async function up(qi: QueryInterface): Promise<void> {
  await qi.createTable('route_auth_oidc_flows', {
    state: { type: DataTypes.STRING(128), primaryKey: true },
    route_id: { type: DataTypes.INTEGER, allowNull: false },
    binding_hash: { type: DataTypes.STRING(64), allowNull: false },
    provider_id: { type: DataTypes.INTEGER, allowNull: false },
    nonce: { type: DataTypes.STRING(128), allowNull: false },
    verifier_enc: { type: DataTypes.TEXT, allowNull: false },
    next_url: { type: DataTypes.TEXT, allowNull: false },
    redirect_uri: { type: DataTypes.TEXT, allowNull: false },
    created_at: { type: DataTypes.BIGINT, allowNull: false },
  });
  await qi.addIndex('route_auth_oidc_flows', ['created_at'], { name: 'route_auth_oidc_flows_created_at' });
}

export async function down(qi: QueryInterface): Promise<void> {
  await qi.dropTable('route_auth_oidc_flows');
}
