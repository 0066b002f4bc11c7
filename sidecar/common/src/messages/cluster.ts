// Messages of the cluster (src/cluster): its activity rows (a node joined, a node lost, a new leader)
// and the refusal of a second node without the licence feature `cluster`.
import type { Catalogue } from './define.js';

export const cluster = {
  'cluster.node_joined': (p: { name: string; address: string | null }) => `Cluster node ${p.name} joined${p.address ? ` (${p.address})` : ''}`,
  'cluster.node_lost': (p: { name: string; last_seen_at: string }) => `Cluster node ${p.name} lost: no heartbeat since ${p.last_seen_at}`,
  'cluster.leader_changed': (p: { leader: string; previous: string | null }) =>
    `Cluster node ${p.leader} is the leader now${p.previous ? ` (was ${p.previous})` : ''}`,
  'cluster.licence_required': (p: { name: string; others: string[] }) =>
    `Node ${p.name} refuses to start: it would be a second live node of the cluster (live: ${p.others.join(', ')}), and that needs the licence feature cluster. Activate a licence with it, or stop the other node`,
} satisfies Catalogue;
