// GET /api/v1/cluster: the nodes of the cluster, their roles and the leader (any node answers the
// same from the registry). Least role: viewer (it names the machines and their addresses, as the
// accounts and backups lists do; no secret); tokens: full-access and read-only only.
// DELETE /api/v1/cluster/nodes/:name: an admin removes a lost node's row (a node gone for good);
// 409 for the node that answers and for a live node, 404 for a name the registry does not hold.
import type { AppContext } from '../app-context.js';
import { actingUserId } from '../http/auth.js';
import { defineEndpoint, type Endpoint } from '../http/registry.js';
import { clusterNodeParams, clusterNodeRemovedResponse, clusterResponse } from './schema.js';

export function clusterEndpoints(ctx: AppContext): Endpoint[] {
  return [
    defineEndpoint({
      method: 'GET',
      path: '/cluster',
      tags: ['system'],
      adminRole: true,
      response: clusterResponse,
      summary:
        'The nodes of the cluster (name, address, role leader|follower, keepalived state, last heartbeat, Caddy configuration hash, version, lost) and the leader; without GATEHOUSE_CLUSTER this node alone, its own leader',
      handler: async () => ctx.cluster.view(),
    }),
    defineEndpoint({
      method: 'DELETE',
      path: '/cluster/nodes/:name',
      tags: ['system'],
      adminRole: true,
      params: clusterNodeParams,
      response: clusterNodeRemovedResponse,
      summary:
        'Remove a lost node from the registry (a node gone for good): only a node that is lost (marked lost, or without a heartbeat for 3 intervals); 409 for a live node or the node that answers, 404 for an unknown name. Event cluster_node_removed. A removed node that starts again joins again',
      handler: async ({ params }, c) => ({ removed: (await ctx.cluster.removeNode(params.name, actingUserId(c.state.principal) ?? null)).name }),
    }),
  ];
}
