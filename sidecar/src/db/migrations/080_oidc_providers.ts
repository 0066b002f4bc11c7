import { DataTypes, type QueryInterface } from 'sequelize';

// OpenID Connect providers for the admin sign-in (src/oidc): the provider's issuer and client (the
// client secret sealed with the master key), the claims that name the user, the mapping of groups
// and e-mail addresses to roles; and the accounts linked to a provider's subject (one row per
// provider and subject), made by just-in-time creation or by a verified e-mail address.
export const name = '080_oidc_providers';

export async function up(qi: QueryInterface): Promise<void> {
  await qi.createTable('oidc_providers', {
    id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
    name: { type: DataTypes.STRING(64), allowNull: false, unique: true },
    issuer: { type: DataTypes.STRING(2048), allowNull: false },
    client_id: { type: DataTypes.STRING(512), allowNull: false },
    client_secret_enc: { type: DataTypes.TEXT, allowNull: true },
    scopes: { type: DataTypes.TEXT, allowNull: false },
    username_claim: { type: DataTypes.STRING(128), allowNull: false },
    email_claim: { type: DataTypes.STRING(128), allowNull: false },
    groups_claim: { type: DataTypes.STRING(128), allowNull: false },
    enabled: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: true },
    jit_create: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
    role_mappings: { type: DataTypes.TEXT, allowNull: false },
    allow_password_for_sso_users: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: true },
    allow_private: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
    created_at: { type: DataTypes.BIGINT, allowNull: false },
    updated_at: { type: DataTypes.BIGINT, allowNull: false },
  });
  await qi.createTable('oidc_identities', {
    id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
    provider_id: { type: DataTypes.INTEGER, allowNull: false, references: { model: 'oidc_providers', key: 'id' }, onDelete: 'CASCADE' },
    subject: { type: DataTypes.STRING(255), allowNull: false },
    user_id: { type: DataTypes.INTEGER, allowNull: false, references: { model: 'users', key: 'id' }, onDelete: 'CASCADE' },
    created_at: { type: DataTypes.BIGINT, allowNull: false },
    last_login_at: { type: DataTypes.BIGINT, allowNull: true },
  });
  await qi.addIndex('oidc_identities', ['provider_id', 'subject'], { unique: true });
  await qi.addIndex('oidc_identities', ['user_id']);
}

export async function down(qi: QueryInterface): Promise<void> {
  await qi.dropTable('oidc_identities');
  await qi.dropTable('oidc_providers');
}
