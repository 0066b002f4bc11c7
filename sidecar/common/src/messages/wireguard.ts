// Messages of the WireGuard interface: its configuration refused by the renderer, and its activity rows.
import type { Catalogue, MessageRef } from './define.js';

export const wireguard = {
  'wireguard.subnet_invalid': (p: { cidr: string }) => `"${p.cidr}" is not an IPv4 subnet such as 10.8.0.0/24`,
  'wireguard.subnet_too_small': (p: { cidr: string }) => `subnet ${p.cidr} is too small`,
  /** the renderer refused a value of the configuration it was given */
  'wireguard.invalid_value': (p: { field: string; reason: MessageRef }, w) => `invalid WireGuard ${p.field}: ${w(p.reason)}`,
  'wireguard.not_managed': () => 'The WireGuard interface is not managed by this service (GATEHOUSE_WG_MANAGE=false)',
  'wireguard.field.subnet_cidr': () => 'must be an IPv4 CIDR such as 10.8.0.0/24',
  'wireguard.field.prefix_too_long': () => 'prefix must be 30 or shorter',
  'wireguard.field.key': () => 'must be a WireGuard key (base64 of 32 bytes)',
  'wireguard.field.cidr_list': () => 'must be a list of CIDRs',
  'wireguard.field.not_cidr': (p: { value: string }) => `"${p.value}" is not a CIDR`,
  'wireguard.field.host_port': () => 'must be host:port',
  'wireguard.field.integer_range': (p: { min: number; max: number }) => `must be an integer ${p.min}-${p.max}`,
  'wireguard.field.iface': () => 'must be an interface name of 1-15 characters',
  'wireguard.field.is_required': () => 'is required',
  'wireguard.field.key_twice': (p: { key: string }) => `public key ${p.key} appears twice`,
  'wireguard.field.address': () => 'must be an address such as 10.8.0.2/32',
  'wireguard.field.allowed_ips': () => 'give allowedIps or the server subnet',
  'wireguard.field.dns': (p: { value: string }) => `"${p.value}" is not a DNS server address or search domain`,
  // activity
  'wireguard.server_key_created': () => 'WireGuard server key generated',
  'wireguard.restarted': (p: { iface: string; peers: number }) => `WireGuard interface ${p.iface} restarted with ${p.peers} peers`,
} satisfies Catalogue;
