// GET /api/v1/cluster: the nodes of the cluster, their roles and the leader (any node answers the
// same from the registry). Least role: viewer (it names the machines and their addresses, as the
// accounts and backups lists do; no secret); tokens: full-access and read-only only.
import type { AppContext } from '../app-context.js';
import { defineEndpoint, type Endpoint } from '../http/registry.js';
import { clusterResponse } from './schema.js';

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
  ];
}
