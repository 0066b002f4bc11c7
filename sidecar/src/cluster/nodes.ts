// The node registry: the cluster_nodes table (migration 083_cluster_nodes) as a Sequelize model,
// registered by the cluster feature (cluster/feature.ts `models`). Each node writes only its own row
// (join, heartbeat); the leader marks lost nodes (lost_at) and records itself (leader_since).
import { DataTypes, type Sequelize } from 'sequelize';
import { defineModel, tableOpts, type M } from '../db/define.js';

export interface ClusterNodeRow {
  /** GATEHOUSE_NODE_NAME */
  name: string;
  address: string | null;
  version: string;
  started_at: number;
  last_seen_at: number;
  /** the hash of the Caddy configuration this node loaded last (null before its first load) */
  config_hash: string | null;
  /** keepalived's state as last reported: master|backup; null: unknown */
  vrrp_state: string | null;
  /** set on the node that took the leader's lock, when it took it; null on the others */
  leader_since: number | null;
  /** when the leader announced this node lost (null: live, or not yet noticed) */
  lost_at: number | null;
}

declare module '../db/models.js' {
  interface Models {
    ClusterNode: M<ClusterNodeRow>;
  }
}

export function defineClusterModels(s: Sequelize): { ClusterNode: M<ClusterNodeRow> } {
  const ClusterNode = defineModel<ClusterNodeRow>(
    s,
    'ClusterNode',
    {
      name: { type: DataTypes.STRING, primaryKey: true },
      address: DataTypes.STRING,
      version: DataTypes.STRING,
      started_at: DataTypes.BIGINT,
      last_seen_at: DataTypes.BIGINT,
      config_hash: DataTypes.STRING,
      vrrp_state: DataTypes.STRING,
      leader_since: DataTypes.BIGINT,
      lost_at: DataTypes.BIGINT,
    },
    tableOpts('cluster_nodes'),
  );
  return { ClusterNode };
}
