import { DataTypes, type QueryInterface } from 'sequelize';

// The passkeys (WebAuthn credentials) of admin-UI accounts (auth/second-factor.ts): a second factor
// after the password, or the whole sign-in (a discoverable credential). The credential id and the
// COSE public key are base64url; `counter` is the authenticator's signature counter (a clone shows
// as a counter that does not grow); `transports` a JSON array of the browser's hints.
export const name = '081_user_passkeys';

export async function up(qi: QueryInterface): Promise<void> {
  await qi.createTable('user_passkeys', {
    id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
    user_id: { type: DataTypes.INTEGER, allowNull: false, references: { model: 'users', key: 'id' }, onDelete: 'CASCADE' },
    credential_id: { type: DataTypes.STRING(1024), allowNull: false, unique: true },
    public_key: { type: DataTypes.TEXT, allowNull: false },
    counter: { type: DataTypes.BIGINT, allowNull: false, defaultValue: 0 },
    transports: { type: DataTypes.TEXT, allowNull: true },
    name: { type: DataTypes.STRING(64), allowNull: false },
    created_at: { type: DataTypes.BIGINT, allowNull: false },
    last_used_at: { type: DataTypes.BIGINT, allowNull: true },
  });
  await qi.addIndex('user_passkeys', ['user_id']);
}

export async function down(qi: QueryInterface): Promise<void> {
  await qi.dropTable('user_passkeys');
}
