// German wordings of peers, groups, tags, the licence and the WireGuard interface (@gatehouse/common/messages).
import type { Translation } from '@gatehouse/common/messages/define.js';
import type { peers } from '@gatehouse/common/messages/peers.js';
import type { licence } from '@gatehouse/common/messages/licence.js';
import type { wireguard } from '@gatehouse/common/messages/wireguard.js';

const peer = (name: string) => `Peer "${name}"`;

export const peers_de = {
  'peer.not_found': () => 'Peer nicht gefunden',
  'peer.name_taken': (p) => `Ein Peer namens "${p.name}" existiert bereits`,
  'peer.subnet_full': (p) =>
    `Das VPN-Subnetz ${p.subnet} ist voll: alle ${p.capacity} Peer-Adressen sind vergeben. Löschen Sie Peers oder wählen Sie ein größeres GATEHOUSE_WG_SUBNET.`,
  'peer.allowed_ips_overlap': (p) => `${p.cidr} überschneidet sich mit ${p.other}, das zu Peer "${p.peer}" geroutet wird`,
  'peer.in_use': (p) =>
    `${peer(p.name)} wird von ${p.routes.length === 1 ? 'Route' : 'den Routen'} ${p.routes.join(', ')} verwendet: zuerst löschen oder umstellen`,
  'peer.no_private_key': (p) => `${peer(p.name)} hat keinen gespeicherten privaten Schlüssel, daher lässt sich keine Konfiguration erstellen`,
  'peer.hostname_taken': (p) => `Der Hostname "${p.hostname}" wird bereits von Peer "${p.peer}" verwendet`,
  'peer.hostname_admin_set': () => 'der Hostname wurde von einem Admin gesetzt und wird durch Agent-Meldungen nicht ersetzt',
  'peer.field.name_taken': () => 'ein Peer mit diesem Namen existiert bereits',
  'peer.field.no_such_group': () => 'diese Peer-Gruppe gibt es nicht',
  'peer.field.gateway_only_create': () => 'nur für Gateway-Peers (is_gateway: true)',
  'peer.field.gateway_only': () => 'nur für Gateway-Peers',
  'peer.field.not_cidr': (p) => `"${p.value}" ist kein CIDR wie 192.168.1.0/24 oder fd00::/64`,
  'peer.field.client_allowed_ips_regular_only': () => 'nur für normale Peers: ein Gateway leitet das VPN-Subnetz',
  'peer.field.own_address_missing': (p) => `muss die eigene Adresse des Peers ${p.address} enthalten`,
  'peer.field.overlaps_subnet': (p) => `${p.cidr} überschneidet sich mit dem VPN-Subnetz ${p.subnet}; nur die eigene Adresse des Peers darf darin liegen`,
  'peer.field.hostname_reserved': (p) => `"${p.hostname}" ist für die Zone selbst reserviert`,
  'peer.field.hostname_taken': (p) => `bereits von Peer "${p.peer}" verwendet`,
  'peer.created': (p) => `${peer(p.name)} angelegt (${p.address})`,
  'peer.updated': (p) => `${peer(p.name)} geändert (${p.fields.join(', ')})`,
  'peer.enabled': (p) => `${peer(p.name)} aktiviert`,
  'peer.disabled': (p) => `${peer(p.name)} deaktiviert`,
  'peer.deleted': (p) => `${peer(p.name)} gelöscht (${p.address})`,
  'peer.expired': (p) => `${peer(p.name)} ist abgelaufen und wurde aus dem Tunnel entfernt`,
  'peer.online': (p) => `${peer(p.name)} ist online`,
  'peer.offline': (p) => `${peer(p.name)} ist offline`,
  'peer.apply_failed': (p) =>
    `Peer "${p.name}" konnte nicht auf die WireGuard-Schnittstelle angewendet werden; eine vollständige Synchronisierung versucht es erneut`,
  'peer.hostname_set': (p) => `Hostname von Peer "${p.name}" auf ${p.fqdn} gesetzt`,
  'peer.hostname_removed': (p) => `Admin-Hostname von Peer "${p.name}" entfernt`,
  'peer.hostname_reported': (p) => `Peer "${p.name}" meldet den Hostnamen ${p.hostname ?? '(keinen)'}`,
  'peer.config_link_created': (p) => `Einmal-Link zur Konfiguration von ${peer(p.name)} erstellt${p.note ? ` (${p.note})` : ''}, gültig bis ${p.expires_at}`,
  'peer.config_link_used': (p) => `Die Konfiguration von ${peer(p.name)} wurde über ihren Einmal-Link von ${p.ip} heruntergeladen`,
  'peer.config_link_revoked': (p) => `Ein Einmal-Link zur Konfiguration von ${peer(p.name)} wurde widerrufen`,
  'group.not_found': () => 'Peer-Gruppe nicht gefunden',
  'group.name_taken': (p) => `Eine Peer-Gruppe namens "${p.name}" existiert bereits`,
  'group.field.name_taken': () => 'eine Gruppe mit diesem Namen existiert bereits',
  'group.created': (p) => `Peer-Gruppe "${p.name}" angelegt`,
  'group.updated': (p) => `Peer-Gruppe "${p.name}" geändert`,
  'group.deleted': (p) => `Peer-Gruppe "${p.name}" gelöscht (${p.peers_ungrouped} Peers ohne Gruppe)`,
  'tag.not_found': (p) => `Tag "${p.name}" nicht gefunden`,
  'tag.name_taken': (p) => `Ein Tag "${p.name}" existiert bereits`,
  'tag.field.invalid_tag': (p, w) => `Tag "${p.tag}": ${w(p.reason)}`,
  'tag.field.name_taken': () => 'ein anderes Tag hat diesen Namen',
  'tag.field.forbidden_characters': () => 'darf kein Komma, <, >, doppeltes Anführungszeichen, Zeilenvorschub, Wagenrücklauf oder Tabulator enthalten',
  'tag.field.space_at_end': () => 'darf nicht mit einem Leerzeichen beginnen oder enden',
  'tag.field.too_many': (p) => `höchstens ${p.max} Tags`,
  'tag.created': (p) => `Tag "${p.name}" registriert`,
  'tag.renamed': (p) => `Tag "${p.from}" in "${p.to}" umbenannt (bei ${p.peers_updated} Peers)`,
  'tag.deleted': (p) => `Tag "${p.name}" gelöscht (bei ${p.peers_updated} Peers entfernt)`,
} satisfies Translation<typeof peers>;

const LICENCE_REASON = {
  activated: 'aktiviert',
  refreshed: 'aktualisiert',
  expired: 'abgelaufen',
  removed: 'entfernt',
  grace_ended: 'Kulanzfrist beendet',
  revoked: 'widerrufen',
} as const;

export const licence_de = {
  'licence.feature_required': (p) => `Dafür ist die Lizenzfunktion ${p.feature} nötig`,
  'licence.limit_reached': (p) =>
    `Die Lizenz erlaubt höchstens ${p.max} ${p.what === 'peers' ? 'Peers' : 'Routen'}; entfernen Sie einen Eintrag oder erweitern Sie die Lizenz`,
  'licence.key_refused': (p, w) => `Lizenzschlüssel abgelehnt: ${w(p.reason)}`,
  'licence.none_stored': () => 'Es ist keine Lizenz gespeichert: aktivieren Sie zuerst einen Schlüssel',
  'licence.key.malformed': (p) => `Kein Gatehouse-Lizenzschlüssel: erwartet ${p.prefix}.<Schlüssel-ID>.<Dokument>.<Signatur>`,
  'licence.key.unknown_signer': (p) =>
    `Der Schlüssel wurde mit einem Schlüssel signiert, dem dieser Server nicht vertraut (Schlüssel-ID ${p.kid}; vertraut: ${p.trusted.join(', ') || 'keiner'})`,
  'licence.key.bad_signature': () => 'Die Signatur passt nicht zum Dokument: der Schlüssel wurde verändert oder beschädigt',
  'licence.key.not_json': () => 'Das signierte Dokument ist kein JSON',
  'licence.key.not_understood': (p) => `Das signierte Dokument ist keine Lizenz, die diese Version versteht: ${p.issues}`,
  'licence.key.expired': (p) => `Die Lizenz ${p.id} ist am ${p.expired_at} abgelaufen`,
  'licence.key.not_yet_valid': (p) => `Die Lizenz ${p.id} gilt ab ${p.issued_at}, später als die Uhr dieses Servers`,
  'licence.changed': (p) => `Lizenz ${LICENCE_REASON[p.reason]}: Plan ${p.plan}`,
} satisfies Translation<typeof licence>;

export const wireguard_de = {
  'wireguard.subnet_invalid': (p) => `"${p.cidr}" ist kein IPv4-Subnetz wie 10.8.0.0/24`,
  'wireguard.subnet_too_small': (p) => `Subnetz ${p.cidr} ist zu klein`,
  'wireguard.invalid_value': (p, w) => `ungültiger WireGuard-Wert ${p.field}: ${w(p.reason)}`,
  'wireguard.not_managed': () => 'Die WireGuard-Schnittstelle wird nicht von diesem Dienst verwaltet (GATEHOUSE_WG_MANAGE=false)',
  'wireguard.field.subnet_cidr': () => 'muss ein IPv4-CIDR wie 10.8.0.0/24 sein',
  'wireguard.field.prefix_too_long': () => 'das Präfix muss 30 oder kürzer sein',
  'wireguard.field.key': () => 'muss ein WireGuard-Schlüssel sein (Base64 von 32 Bytes)',
  'wireguard.field.cidr_list': () => 'muss eine Liste von CIDRs sein',
  'wireguard.field.not_cidr': (p) => `"${p.value}" ist kein CIDR`,
  'wireguard.field.host_port': () => 'muss host:port sein',
  'wireguard.field.integer_range': (p) => `muss eine ganze Zahl von ${p.min} bis ${p.max} sein`,
  'wireguard.field.iface': () => 'muss ein Schnittstellenname mit 1–15 Zeichen sein',
  'wireguard.field.is_required': () => 'ist erforderlich',
  'wireguard.field.key_twice': (p) => `der öffentliche Schlüssel ${p.key} kommt zweimal vor`,
  'wireguard.field.address': () => 'muss eine Adresse wie 10.8.0.2/32 sein',
  'wireguard.field.allowed_ips': () => 'allowedIps oder das Server-Subnetz angeben',
  'wireguard.field.dns': (p) => `"${p.value}" ist weder eine DNS-Serveradresse noch eine Suchdomain`,
  'wireguard.server_key_created': () => 'WireGuard-Serverschlüssel erzeugt',
  'wireguard.restarted': (p) => `WireGuard-Schnittstelle ${p.iface} mit ${p.peers} Peers neu gestartet`,
} satisfies Translation<typeof wireguard>;
