import { DataTypes, type QueryInterface } from 'sequelize';

// A user whose password was generated (the first admin without GATEHOUSE_ADMIN_PASSWORD, or
// `npm run cli -- reset-admin-password`) must choose a new one at the next sign-in: the login sends
// them to GET /password, and GET /api/v1/session reports the flag. Changing the password clears it.
export const name = '005_user_must_change_password';

export async function up(qi: QueryInterface): Promise<void> {
  await qi.addColumn('users', 'must_change_password', { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false });
}
