// Messages of the cluster (src/cluster): its activity rows (a node joined, a node lost, a new leader,
// a lost node removed), the refusal of a second node without the licence feature `cluster`, and the
// refusals of DELETE /cluster/nodes/:name.
import type { Catalogue } from './define.js';

export const cluster = {
  'cluster.node_joined': (p: { name: string; address: string | null }) => `Cluster node ${p.name} joined${p.address ? ` (${p.address})` : ''}`,
  'cluster.node_lost': (p: { name: string; last_seen_at: string }) => `Cluster node ${p.name} lost: no heartbeat since ${p.last_seen_at}`,
  'cluster.leader_changed': (p: { leader: string; previous: string | null }) =>
    `Cluster node ${p.leader} is the leader now${p.previous ? ` (was ${p.previous})` : ''}`,
  'cluster.licence_required': (p: { name: string; others: string[] }) =>
    `Node ${p.name} refuses to start: it would be a second live node of the cluster (live: ${p.others.join(', ')}), and that needs the licence feature cluster. Activate a licence with it, or stop the other node`,
  'cluster.node_removed': (p: { name: string }) => `Lost cluster node ${p.name} removed from the registry`,
  'cluster.node_not_found': (p: { name: string }) => `No cluster node named ${p.name}`,
  'cluster.node_is_self': (p: { name: string }) =>
    `Node ${p.name} is the node that answered: a node cannot remove itself; stop it, and remove it from another node once it is lost`,
  'cluster.node_is_live': (p: { name: string; lost_after_s: number }) =>
    `Node ${p.name} is live (it sent a heartbeat within the last ${p.lost_after_s} s): only a lost node can be removed; stop it first and wait until it shows as lost`,
  'cluster.field.node_name': () => 'must be a node name: 1-63 letters, digits, dots, dashes or underscores, starting with a letter or digit',
} satisfies Catalogue;
