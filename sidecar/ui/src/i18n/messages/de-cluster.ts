// German wordings of the cluster messages (@gatehouse/common/messages/cluster.ts).
import type { Translation } from '@gatehouse/common/messages/define.js';
import type { cluster } from '@gatehouse/common/messages/cluster.js';

export const cluster_de = {
  'cluster.node_joined': (p) => `Cluster-Knoten ${p.name} ist beigetreten${p.address ? ` (${p.address})` : ''}`,
  'cluster.node_lost': (p) => `Cluster-Knoten ${p.name} verloren: kein Lebenszeichen seit ${p.last_seen_at}`,
  'cluster.leader_changed': (p) => `Cluster-Knoten ${p.leader} führt jetzt${p.previous ? ` (vorher ${p.previous})` : ''}`,
  'cluster.licence_required': (p) =>
    `Knoten ${p.name} startet nicht: er wäre ein zweiter aktiver Knoten des Clusters (aktiv: ${p.others.join(', ')}), und dafür braucht es das Lizenzmerkmal cluster. Eine Lizenz damit aktivieren oder den anderen Knoten anhalten`,
} satisfies Translation<typeof cluster>;
