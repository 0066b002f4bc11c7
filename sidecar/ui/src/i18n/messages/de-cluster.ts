// German wordings of the cluster messages (@gatehouse/common/messages/cluster.ts).
import type { Translation } from '@gatehouse/common/messages/define.js';
import type { cluster } from '@gatehouse/common/messages/cluster.js';

export const cluster_de = {
  'cluster.node_joined': (p) => `Cluster-Knoten ${p.name} ist beigetreten${p.address ? ` (${p.address})` : ''}`,
  'cluster.node_lost': (p) => `Cluster-Knoten ${p.name} verloren: kein Lebenszeichen seit ${p.last_seen_at}`,
  'cluster.leader_changed': (p) => `Cluster-Knoten ${p.leader} führt jetzt${p.previous ? ` (vorher ${p.previous})` : ''}`,
  'cluster.licence_required': (p) =>
    `Knoten ${p.name} startet nicht: er wäre ein zweiter aktiver Knoten des Clusters (aktiv: ${p.others.join(', ')}), und dafür braucht es das Lizenzmerkmal cluster. Eine Lizenz damit aktivieren oder den anderen Knoten anhalten`,
  'cluster.node_removed': (p) => `Verlorener Cluster-Knoten ${p.name} aus dem Verzeichnis entfernt`,
  'cluster.node_not_found': (p) => `Kein Cluster-Knoten namens ${p.name}`,
  'cluster.node_is_self': (p) =>
    `Knoten ${p.name} ist der Knoten, der antwortet: ein Knoten kann sich nicht selbst entfernen; ihn anhalten und, sobald er als verloren gilt, von einem anderen Knoten aus entfernen`,
  'cluster.node_is_live': (p) =>
    `Knoten ${p.name} ist aktiv (Lebenszeichen in den letzten ${p.lost_after_s} s): nur ein verlorener Knoten kann entfernt werden; ihn zuerst anhalten und warten, bis er als verloren angezeigt wird`,
  'cluster.field.node_name': () =>
    'muss ein Knotenname sein: 1–63 Buchstaben, Ziffern, Punkte, Binde- oder Unterstriche, am Anfang ein Buchstabe oder eine Ziffer',
} satisfies Translation<typeof cluster>;
