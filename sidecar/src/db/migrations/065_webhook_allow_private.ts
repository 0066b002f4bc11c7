import { DataTypes, type QueryInterface } from 'sequelize';

// A webhook may reach loopback, private ranges and this server (a LAN receiver: ntfy, Gotify, Home
// Assistant) when an admin chose so for that webhook: allow_private. The operator's
// GATEHOUSE_OUTBOUND_ALLOW_PRIVATE=webhooks still allows it for every webhook.
export const name = '065_webhook_allow_private';

export async function up(qi: QueryInterface): Promise<void> {
  await qi.addColumn('webhooks', 'allow_private', { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false });
}

export async function down(qi: QueryInterface): Promise<void> {
  await qi.removeColumn('webhooks', 'allow_private');
}
