// Pure WireGuard renderers and tunnel-address helpers. No I/O: the same input always gives the same
// text, so a hash of the output is a stable config hash.
//
// - renderServerConfig(spec): what `wg setconf` / `wg syncconf` accept (no Address: that is
//   wg-quick's, the driver sets the address with `ip`).
// - renderPeerConfig(opts): a wg-quick style client file, the one a user downloads or scans.
// - parseSubnet / serverAddress / serverInterfaceAddress / allocateAddress / capacity / inSubnet:
//   IPv4 tunnel addressing (network, server = first host, peers after it, broadcast unused).
//
// Every value is checked before it is written, so nothing can add a line to the file.
import { validation } from '../errors.js';
import { msg, refOf, type Msg } from '../messages/index.js';
import { isWgKey } from './keys.js';
import type { WgInterfaceSpec, WgPeerSpec } from './types.js';
import { formatIPv4, parseIPv4 } from './ipv4.js';

export { formatIPv4, parseIPv4 };

// ---------------------------------------------------------------- IPv4 addressing

export interface Subnet {
  /** normalized, e.g. "10.8.0.0/24" */
  cidr: string;
  /** network address, e.g. "10.8.0.0" */
  network: string;
  prefix: number;
  /** network address as an unsigned 32-bit integer */
  base: number;
  /** number of addresses in the block, network and broadcast included */
  size: number;
}

/** Parses an IPv4 CIDR such as "10.8.0.0/24" (host bits are cleared). Throws on bad input. */
export function parseSubnet(cidr: string): Subnet {
  const [ip, bits, extra] = String(cidr).split('/');
  const addr = parseIPv4(ip ?? '');
  const prefix = /^\d{1,2}$/.test(bits ?? '') ? Number(bits) : NaN;
  if (addr === null || extra !== undefined || !(prefix >= 0 && prefix <= 32)) {
    throw validation(msg('wireguard.subnet_invalid', { cidr: String(cidr) }), { subnet: msg('wireguard.field.subnet_cidr') });
  }
  const size = 2 ** (32 - prefix);
  const base = prefix === 0 ? 0 : (addr & ((0xffffffff << (32 - prefix)) >>> 0)) >>> 0;
  const network = formatIPv4(base);
  return { cidr: `${network}/${prefix}`, network, prefix, base, size };
}

function toSubnet(subnet: string | Subnet): Subnet {
  return typeof subnet === 'string' ? parseSubnet(subnet) : subnet;
}

/** How many peer addresses the subnet holds: every host address except the server's. */
export function capacity(subnet: string | Subnet): number {
  const s = toSubnet(subnet);
  return s.prefix >= 31 ? 0 : s.size - 3;
}

/** The server's tunnel address: the first host of the subnet ("10.8.0.1"). */
export function serverAddress(subnet: string | Subnet): string {
  const s = toSubnet(subnet);
  if (s.prefix >= 31) throw validation(msg('wireguard.subnet_too_small', { cidr: s.cidr }), { subnet: msg('wireguard.field.prefix_too_long') });
  return formatIPv4(s.base + 1);
}

/** The server's interface address with the subnet's prefix ("10.8.0.1/24"), for WgInterfaceSpec.address. */
export function serverInterfaceAddress(subnet: string | Subnet): string {
  const s = toSubnet(subnet);
  return `${serverAddress(s)}/${s.prefix}`;
}

/** True when ip ("10.8.0.7" or "10.8.0.7/32") lies inside the subnet. */
export function inSubnet(ip: string, subnet: string | Subnet): boolean {
  const s = toSubnet(subnet);
  const n = parseIPv4(ip.split('/')[0]);
  return n !== null && n >= s.base && n < s.base + s.size;
}

/**
 * The lowest free peer address ("10.8.0.2"), or null when the subnet is full. `taken` holds the
 * addresses in use, bare or with a prefix ("10.8.0.2" or "10.8.0.2/32"); the network address, the
 * server's address and the broadcast address are never handed out.
 */
export function allocateAddress(subnet: string | Subnet, taken: Iterable<string>): string | null {
  const s = toSubnet(subnet);
  if (capacity(s) === 0) return null;
  const used = new Set<number>();
  for (const t of taken) {
    const n = parseIPv4(String(t).split('/')[0]);
    if (n !== null) used.add(n);
  }
  const last = s.base + s.size - 2; // broadcast excluded
  for (let n = s.base + 2; n <= last; n++) if (!used.has(n)) return formatIPv4(n);
  return null;
}

// ---------------------------------------------------------------- value checks

const CIDR_RE = /^(?:\d{1,3}(?:\.\d{1,3}){3}\/\d{1,2}|[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*\/\d{1,3})$/;
const ENDPOINT_RE = /^(?:[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?|\[[0-9A-Fa-f:.]+\]):(\d{1,5})$/;
const DNS_RE = /^[A-Za-z0-9](?:[A-Za-z0-9.:-]{0,252}[A-Za-z0-9.])?$/;
const IFACE_RE = /^[a-zA-Z0-9_.=+-]{1,15}$/;

function isCidr(v: string): boolean {
  if (!CIDR_RE.test(v)) return false;
  const [ip, bits] = v.split('/');
  if (ip.includes(':')) return Number(bits) <= 128;
  return parseIPv4(ip) !== null && Number(bits) <= 32;
}

function bad(field: string, message: Msg): never {
  throw validation(msg('wireguard.invalid_value', { field, reason: refOf(message) }), { [field]: message });
}

function checkKey(field: string, v: string | undefined, optional = false): void {
  if (v === undefined && optional) return;
  if (!isWgKey(v)) bad(field, msg('wireguard.field.key'));
}

function checkCidrs(field: string, list: string[]): void {
  if (!Array.isArray(list)) bad(field, msg('wireguard.field.cidr_list'));
  for (const c of list) if (typeof c !== 'string' || !isCidr(c)) bad(field, msg('wireguard.field.not_cidr', { value: String(c) }));
}

function checkEndpoint(field: string, v: string | undefined, optional = false): void {
  if (v === undefined && optional) return;
  const m = typeof v === 'string' ? ENDPOINT_RE.exec(v) : null;
  if (!m || Number(m[1]) < 1 || Number(m[1]) > 65535) bad(field, msg('wireguard.field.host_port'));
}

function checkInt(field: string, v: number | undefined, min: number, max: number): void {
  if (v === undefined) return;
  if (!Number.isInteger(v) || v < min || v > max) bad(field, msg('wireguard.field.integer_range', { min, max }));
}

function checkPeer(p: WgPeerSpec, i: number): void {
  checkKey(`peers[${i}].publicKey`, p.publicKey);
  checkKey(`peers[${i}].presharedKey`, p.presharedKey, true);
  checkCidrs(`peers[${i}].allowedIps`, p.allowedIps);
  checkEndpoint(`peers[${i}].endpoint`, p.endpoint, true);
  checkInt(`peers[${i}].persistentKeepalive`, p.persistentKeepalive, 0, 65535);
}

// ---------------------------------------------------------------- server

function peerSection(p: WgPeerSpec): string[] {
  const lines = ['[Peer]', `PublicKey = ${p.publicKey}`];
  if (p.presharedKey) lines.push(`PresharedKey = ${p.presharedKey}`);
  if (p.allowedIps.length) lines.push(`AllowedIPs = ${p.allowedIps.join(', ')}`);
  if (p.endpoint) lines.push(`Endpoint = ${p.endpoint}`);
  if (p.persistentKeepalive) lines.push(`PersistentKeepalive = ${p.persistentKeepalive}`);
  return lines;
}

/** One peer's section as `wg setconf` reads it (exported for tests and for diagnostics). */
export function renderPeerSection(peer: WgPeerSpec): string {
  checkPeer(peer, 0);
  return peerSection(peer).join('\n') + '\n';
}

/** The interface config for `wg setconf` / `wg syncconf`: [Interface] and one [Peer] per peer, in order. */
export function renderServerConfig(spec: WgInterfaceSpec): string {
  if (!IFACE_RE.test(spec.iface ?? '')) bad('iface', msg('wireguard.field.iface'));
  checkKey('privateKey', spec.privateKey);
  checkInt('listenPort', spec.listenPort, 1, 65535);
  if (spec.listenPort === undefined) bad('listenPort', msg('wireguard.field.is_required'));
  spec.peers.forEach(checkPeer);
  const keys = new Set<string>();
  for (const p of spec.peers) {
    if (keys.has(p.publicKey)) bad('peers', msg('wireguard.field.key_twice', { key: p.publicKey }));
    keys.add(p.publicKey);
  }
  const blocks = [['[Interface]', `PrivateKey = ${spec.privateKey}`, `ListenPort = ${spec.listenPort}`], ...spec.peers.map(peerSection)];
  return blocks.map((b) => b.join('\n')).join('\n\n') + '\n';
}

// ---------------------------------------------------------------- client

export interface PeerConfigOptions {
  privateKey: string;
  /** the peer's tunnel address, e.g. "10.8.0.2/32" (a bare address gets /32) */
  address: string;
  /** DNS servers (and search domains) for wg-quick's DNS line */
  dns?: string | string[];
  serverPublicKey: string;
  presharedKey?: string;
  /** the server's public host:port */
  endpoint: string;
  /** what the peer routes into the tunnel; default: [subnet] */
  allowedIps?: string[];
  /** the server's subnet, the default for allowedIps */
  subnet?: string;
  /** seconds; default 25, 0 leaves the line out */
  persistentKeepalive?: number;
  /** optional MTU line */
  mtu?: number;
  /** comment lines written above [Interface] ("# " added; a line break inside a line is replaced by a space) */
  comment?: string[];
}

/** A wg-quick style client config ([Interface] PrivateKey, Address, DNS; [Peer] ...). */
export function renderPeerConfig(o: PeerConfigOptions): string {
  checkKey('privateKey', o.privateKey);
  checkKey('serverPublicKey', o.serverPublicKey);
  checkKey('presharedKey', o.presharedKey, true);
  const address = typeof o.address === 'string' && !o.address.includes('/') ? `${o.address}/32` : o.address;
  if (typeof address !== 'string' || !isCidr(address)) bad('address', msg('wireguard.field.address'));
  checkEndpoint('endpoint', o.endpoint);
  const allowed = o.allowedIps ?? (o.subnet !== undefined ? [parseSubnet(o.subnet).cidr] : undefined);
  if (!allowed || allowed.length === 0) bad('allowedIps', msg('wireguard.field.allowed_ips'));
  checkCidrs('allowedIps', allowed);
  const dns = o.dns === undefined ? [] : (Array.isArray(o.dns) ? o.dns : o.dns.split(',')).map((d) => d.trim()).filter(Boolean);
  for (const d of dns) if (!DNS_RE.test(d)) bad('dns', msg('wireguard.field.dns', { value: d }));
  const keepalive = o.persistentKeepalive ?? 25;
  checkInt('persistentKeepalive', keepalive, 0, 65535);
  checkInt('mtu', o.mtu, 576, 65535);

  const iface = ['[Interface]', `PrivateKey = ${o.privateKey}`, `Address = ${address}`];
  if (dns.length) iface.push(`DNS = ${dns.join(', ')}`);
  if (o.mtu) iface.push(`MTU = ${o.mtu}`);
  const peer = ['[Peer]', `PublicKey = ${o.serverPublicKey}`];
  if (o.presharedKey) peer.push(`PresharedKey = ${o.presharedKey}`);
  peer.push(`Endpoint = ${o.endpoint}`, `AllowedIPs = ${allowed.join(', ')}`);
  if (keepalive) peer.push(`PersistentKeepalive = ${keepalive}`);
  const head = (o.comment ?? []).map((c) => `# ${c.replace(/[\r\n]+/g, ' ')}`.trimEnd());
  return `${head.length ? `${head.join('\n')}\n` : ''}${iface.join('\n')}\n\n${peer.join('\n')}\n`;
}
