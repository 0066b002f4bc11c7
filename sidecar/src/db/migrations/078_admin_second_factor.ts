import { DataTypes, type QueryInterface } from 'sequelize';

// The second factor of admin-UI accounts (auth/second-factor.ts): one TOTP per user (the secret sealed
// with the master key; a pending one while an enrolment awaits its first code; the last accepted
// 30-second step, so a code is taken once) and the user's recovery codes (SHA-256 of each, one use).
export const name = '078_admin_second_factor';

export async function up(qi: QueryInterface): Promise<void> {
  await qi.createTable('user_totp', {
    id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
    user_id: { type: DataTypes.INTEGER, allowNull: false, unique: true, references: { model: 'users', key: 'id' }, onDelete: 'CASCADE' },
    secret: { type: DataTypes.TEXT, allowNull: true },
    pending_secret: { type: DataTypes.TEXT, allowNull: true },
    last_step: { type: DataTypes.BIGINT, allowNull: true },
    activated_at: { type: DataTypes.BIGINT, allowNull: true },
    created_at: { type: DataTypes.BIGINT, allowNull: false },
    updated_at: { type: DataTypes.BIGINT, allowNull: false },
  });
  await qi.createTable('user_recovery_codes', {
    id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
    user_id: { type: DataTypes.INTEGER, allowNull: false, references: { model: 'users', key: 'id' }, onDelete: 'CASCADE' },
    code_hash: { type: DataTypes.STRING(64), allowNull: false, unique: true },
    used_at: { type: DataTypes.BIGINT, allowNull: true },
    created_at: { type: DataTypes.BIGINT, allowNull: false },
  });
  await qi.addIndex('user_recovery_codes', ['user_id']);
}

export async function down(qi: QueryInterface): Promise<void> {
  await qi.dropTable('user_recovery_codes');
  await qi.dropTable('user_totp');
}
