import { DataTypes, type QueryInterface } from 'sequelize';

// A switch of a route's sign-in to TOTP (method totp, or the TOTP second factor) waits for the TOTP
// set-up to be verified: until then the route keeps its current method, so visitors are not locked
// out by a TOTP nobody can answer yet. The requested method waits in these columns
// (route-auth/service.ts save and totpVerify).
export const name = '067_route_auth_pending_method';

export async function up(qi: QueryInterface): Promise<void> {
  await qi.addColumn('route_auth', 'pending_method', { type: DataTypes.STRING(32), allowNull: true });
  await qi.addColumn('route_auth', 'pending_two_factor_method', { type: DataTypes.STRING(32), allowNull: true });
}

export async function down(qi: QueryInterface): Promise<void> {
  await qi.removeColumn('route_auth', 'pending_two_factor_method');
  await qi.removeColumn('route_auth', 'pending_method');
}
