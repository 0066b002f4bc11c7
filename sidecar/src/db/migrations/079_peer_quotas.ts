import { DataTypes, type QueryInterface } from 'sequelize';

// Per-peer data quotas (src/quotas):
// - peers.quota and peer_groups.quota: JSON text {bytes, period, resets_on, action, throttle_kbit};
//   on a peer null = the group's default applies (quotas/schema.ts).
// - the quota service's state of the current period on the peer row, so that a restart keeps it:
//   quota_period_start/_end (epoch ms, local periods; null: no quota counted yet), quota_used
//   (bytes counted at the last check), quota_limit (bytes incl. grants), quota_offset (bytes
//   counted before an admin's reset this period), quota_grant (bytes granted this period),
//   quota_state (ok | warned | exceeded: which events were sent this period), quota_action (what
//   the quota did: disable | throttle; overridden: an admin re-enabled the peer it disabled) and
//   quota_checked_at (epoch ms).
export const name = '079_peer_quotas';

const COLUMNS = [
  ['quota', DataTypes.TEXT],
  ['quota_period_start', DataTypes.BIGINT],
  ['quota_period_end', DataTypes.BIGINT],
  ['quota_used', DataTypes.BIGINT],
  ['quota_limit', DataTypes.BIGINT],
  ['quota_offset', DataTypes.BIGINT],
  ['quota_grant', DataTypes.BIGINT],
  ['quota_state', DataTypes.STRING(16)],
  ['quota_action', DataTypes.STRING(16)],
  ['quota_checked_at', DataTypes.BIGINT],
] as const;

export async function up(qi: QueryInterface): Promise<void> {
  for (const [column, type] of COLUMNS) await qi.addColumn('peers', column, { type, allowNull: true });
  await qi.addColumn('peer_groups', 'quota', { type: DataTypes.TEXT, allowNull: true });
}

// Plain SQL (see 064_peer_config_endpoint.ts): sequelize's SQLite removeColumn rebuilds the table.
export async function down(qi: QueryInterface): Promise<void> {
  await qi.sequelize.query('ALTER TABLE peer_groups DROP COLUMN quota');
  for (const [column] of [...COLUMNS].reverse()) await qi.sequelize.query(`ALTER TABLE peers DROP COLUMN ${column}`);
}
