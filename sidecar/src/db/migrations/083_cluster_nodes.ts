import { DataTypes, type QueryInterface } from 'sequelize';

// The node registry of a cluster (src/cluster, docs/guides/cluster.md): one row per node that ever
// joined, named by GATEHOUSE_NODE_NAME. Each node refreshes its own row (heartbeat); the leader marks
// a node unseen for a few heartbeats as lost (lost_at) and announces it once. leader_since is set on
// the node that took the leader's advisory lock (and cleared on the others); vrrp_state is the
// node's keepalived state as last reported (master|backup, null: unknown).
export const name = '083_cluster_nodes';

export async function up(qi: QueryInterface): Promise<void> {
  await qi.createTable('cluster_nodes', {
    name: { type: DataTypes.STRING(63), primaryKey: true },
    address: { type: DataTypes.STRING(255), allowNull: true },
    version: { type: DataTypes.STRING(64), allowNull: false },
    started_at: { type: DataTypes.BIGINT, allowNull: false },
    last_seen_at: { type: DataTypes.BIGINT, allowNull: false },
    config_hash: { type: DataTypes.STRING(128), allowNull: true },
    vrrp_state: { type: DataTypes.STRING(16), allowNull: true },
    leader_since: { type: DataTypes.BIGINT, allowNull: true },
    lost_at: { type: DataTypes.BIGINT, allowNull: true },
  });
}

export async function down(qi: QueryInterface): Promise<void> {
  await qi.dropTable('cluster_nodes');
}
