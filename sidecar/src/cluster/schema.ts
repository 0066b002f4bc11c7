// The shapes of GET /api/v1/cluster and DELETE /api/v1/cluster/nodes/:name (declared once; the admin
// app infers its types from them).
import { z } from 'zod';
import { NODE_NAME_PATTERN } from '../util/node-name.js';
import { fieldText } from '../http/messages.js';

export const clusterRole = z.enum(['leader', 'follower']).meta({ description: 'leader|follower' });
export const vrrpState = z.enum(['master', 'backup', 'unknown']).meta({ description: 'master|backup|unknown (keepalived)' });

export const clusterNodeView = z.object({
  name: z.string().meta({ description: 'GATEHOUSE_NODE_NAME' }),
  address: z.string().nullable().meta({ description: "the node's address (GATEHOUSE_PUBLIC_IP, else its first non-loopback IPv4)" }),
  role: clusterRole,
  vrrp: vrrpState,
  last_seen_at: z.number().meta({ description: 'epoch ms of its last heartbeat' }),
  config_hash: z.string().nullable().meta({ description: 'the hash of the Caddy configuration it loaded last' }),
  version: z.string(),
  lost: z.boolean().meta({ description: 'no heartbeat for 3 intervals: the node is down or cut off' }),
});
export type ClusterNodeView = z.infer<typeof clusterNodeView>;

export const clusterResponse = z.object({
  ok: z.literal(true),
  enabled: z.boolean().meta({ description: 'GATEHOUSE_CLUSTER: without it, this node alone, its own leader' }),
  node: z.string().meta({ description: 'the node that answered' }),
  nodes: z.array(clusterNodeView),
  leader: z.string().nullable().meta({ description: 'the leading node (null: none recorded yet, e.g. moments after the leader died)' }),
});
export type ClusterResponse = z.infer<typeof clusterResponse>;

/** DELETE /api/v1/cluster/nodes/:name: the node's name as GATEHOUSE_NODE_NAME allows it. */
export const clusterNodeParams = z.object({
  name: z
    .string()
    .regex(NODE_NAME_PATTERN, fieldText('cluster.field.node_name'))
    .meta({ description: 'the node (GATEHOUSE_NODE_NAME): 1-63 letters, digits, dots, dashes or underscores' }),
});

export const clusterNodeRemovedResponse = z.object({
  ok: z.literal(true),
  removed: z.string().meta({ description: 'the name of the lost node whose row was removed' }),
});
export type ClusterNodeRemovedResponse = z.infer<typeof clusterNodeRemovedResponse>;
