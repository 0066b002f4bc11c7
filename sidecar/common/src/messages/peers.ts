// Messages of peers, peer groups and tags: refusals and activity rows.
import type { Catalogue, MessageRef, Words } from './define.js';

const peer = (name: string) => `Peer "${name}"`;

export const peers = {
  'peer.not_found': () => 'Peer not found',
  'peer.name_taken': (p: { name: string }) => `A peer named "${p.name}" already exists`,
  'peer.subnet_full': (p: { subnet: string; capacity: number }) =>
    `The VPN subnet ${p.subnet} is full: all ${p.capacity} peer addresses are in use. Delete peers or use a larger GATEHOUSE_WG_SUBNET.`,
  'peer.allowed_ips_overlap': (p: { cidr: string; other: string; peer: string }) => `${p.cidr} overlaps ${p.other}, routed to peer "${p.peer}"`,
  'peer.in_use': (p: { name: string; routes: string[] }) =>
    `${peer(p.name)} is used by ${p.routes.length === 1 ? 'route' : 'routes'} ${p.routes.join(', ')}: delete or re-target ${p.routes.length === 1 ? 'it' : 'them'} first`,
  'peer.no_private_key': (p: { name: string }) => `${peer(p.name)} has no stored private key, so no config can be built`,
  'peer.hostname_taken': (p: { hostname: string; peer: string }) => `Hostname "${p.hostname}" is already used by peer "${p.peer}"`,
  'peer.hostname_admin_set': () => 'the hostname was set by an admin and agent reports do not replace it',
  // field messages
  'peer.field.name_taken': () => 'a peer with this name already exists',
  'peer.field.no_such_group': () => 'no such peer group',
  'peer.field.gateway_only_create': () => 'only for gateway peers (is_gateway: true)',
  'peer.field.gateway_only': () => 'only for gateway peers',
  'peer.field.own_address_missing': (p: { address: string }) => `must include the peer's own address ${p.address}`,
  'peer.field.overlaps_subnet': (p: { cidr: string; subnet: string }) =>
    `${p.cidr} overlaps the VPN subnet ${p.subnet}; only the peer's own address may lie inside it`,
  'peer.field.not_cidr': (p: { value: string }) => `"${p.value}" is not a CIDR such as 192.168.1.0/24 or fd00::/64`,
  'peer.field.client_allowed_ips_regular_only': () => 'only for regular peers: a gateway routes the VPN subnet',
  'peer.field.hostname_reserved': (p: { hostname: string }) => `"${p.hostname}" is reserved for the zone itself`,
  'peer.field.hostname_taken': (p: { peer: string }) => `already used by peer "${p.peer}"`,
  // activity
  'peer.created': (p: { name: string; address: string }) => `${peer(p.name)} created (${p.address})`,
  'peer.updated': (p: { name: string; fields: string[] }) => `${peer(p.name)} updated (${p.fields.join(', ')})`,
  'peer.enabled': (p: { name: string }) => `${peer(p.name)} enabled`,
  'peer.disabled': (p: { name: string }) => `${peer(p.name)} disabled`,
  'peer.deleted': (p: { name: string; address: string }) => `${peer(p.name)} deleted (${p.address})`,
  'peer.expired': (p: { name: string }) => `${peer(p.name)} expired and was removed from the tunnel`,
  'peer.online': (p: { name: string }) => `${peer(p.name)} is online`,
  'peer.offline': (p: { name: string }) => `${peer(p.name)} is offline`,
  'peer.apply_failed': (p: { name: string }) => `Applying peer "${p.name}" to the WireGuard interface failed; a full resync retries it`,
  'peer.hostname_set': (p: { name: string; fqdn: string }) => `Hostname of peer "${p.name}" set to ${p.fqdn}`,
  'peer.hostname_removed': (p: { name: string }) => `Admin hostname of peer "${p.name}" removed`,
  'peer.hostname_reported': (p: { name: string; hostname: string | null }) => `Peer "${p.name}" reported hostname ${p.hostname ?? '(none)'}`,
  'peer.config_link_created': (p: { name: string; expires_at: string; note: string | null }) =>
    `One-time config link made for ${peer(p.name)}${p.note ? ` (${p.note})` : ''}, open until ${p.expires_at}`,
  'peer.config_link_used': (p: { name: string; ip: string }) => `The config of ${peer(p.name)} was downloaded through its one-time link from ${p.ip}`,
  'peer.config_link_revoked': (p: { name: string }) => `A one-time config link of ${peer(p.name)} was revoked`,

  'group.not_found': () => 'Peer group not found',
  'group.name_taken': (p: { name: string }) => `A peer group named "${p.name}" already exists`,
  'group.field.name_taken': () => 'a group with this name already exists',
  'group.created': (p: { name: string }) => `Peer group "${p.name}" created`,
  'group.updated': (p: { name: string }) => `Peer group "${p.name}" updated`,
  'group.deleted': (p: { name: string; peers_ungrouped: number }) => `Peer group "${p.name}" deleted (${p.peers_ungrouped} peers ungrouped)`,

  'tag.not_found': (p: { name: string }) => `Tag "${p.name}" not found`,
  'tag.name_taken': (p: { name: string }) => `A tag "${p.name}" exists already`,
  'tag.field.invalid_tag': (p: { tag: string; reason: MessageRef }, w: Words) => `tag "${p.tag}": ${w(p.reason)}`,
  'tag.field.name_taken': () => 'another tag has this name',
  'tag.field.forbidden_characters': () => 'must not contain a comma, <, >, double quote, line feed, carriage return or tab',
  'tag.field.space_at_end': () => 'must not start or end with a space',
  'tag.field.too_many': (p: { max: number }) => `at most ${p.max} tags`,
  'tag.created': (p: { name: string }) => `Tag "${p.name}" registered`,
  'tag.renamed': (p: { from: string; to: string; peers_updated: number }) => `Tag "${p.from}" renamed to "${p.to}" (on ${p.peers_updated} peers)`,
  'tag.deleted': (p: { name: string; peers_updated: number }) => `Tag "${p.name}" deleted (removed from ${p.peers_updated} peers)`,
} satisfies Catalogue;
