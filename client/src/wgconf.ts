// The client's tunnel configuration: parsed from the wg-quick style text the server renders for a
// peer (@gatehouse/common/wireguard/render.ts renderPeerConfig: [Interface] PrivateKey, Address, DNS,
// MTU; one [Peer] with PublicKey, PresharedKey, Endpoint, AllowedIPs, PersistentKeepalive), checked,
// and turned into what the shared WireGuard driver applies. Pure: no I/O.
import { isWgKey } from '@gatehouse/common/wireguard/keys.js';
import type { WgPeerSpec } from '@gatehouse/common/wireguard/types.js';

export interface TunnelConfig {
  privateKey: string;
  /** interface addresses with prefix, e.g. ["10.8.0.7/32"] */
  addresses: string[];
  /** what the server suggests as resolvers (not applied to the system: shown by `status`) */
  dns: string[];
  mtu: number | null;
  peer: WgPeerSpec & { endpoint: string };
}

export class WgConfigError extends Error {}

const CIDR4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\/(\d{1,2})$/;
const ENDPOINT = /^(?:[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?|\[[0-9A-Fa-f:.]+\]):(\d{1,5})$/;

function cidr(v: string, what: string): string {
  const t = v.includes('/') ? v : `${v}/32`;
  const m = CIDR4.exec(t);
  if (!m || m.slice(1, 5).some((o) => Number(o) > 255) || Number(m[5]) > 32) throw new WgConfigError(`${what}: "${v}" is not an IPv4 address or CIDR`);
  return t;
}

function list(v: string): string[] {
  return v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

/** Parses a wg-quick file (one [Interface], exactly one [Peer]: the server). */
export function parseWgQuick(text: string): TunnelConfig {
  const sections: { name: string; values: Map<string, string> }[] = [];
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.replace(/#.*$/, '').trim();
    if (!line) return;
    const sec = /^\[(\w+)\]$/.exec(line);
    if (sec) {
      sections.push({ name: sec[1].toLowerCase(), values: new Map() });
      return;
    }
    const kv = /^([A-Za-z]+)\s*=\s*(.*)$/.exec(line);
    if (!kv || !sections.length) throw new WgConfigError(`line ${i + 1}: not "Key = value" inside a section`);
    const cur = sections[sections.length - 1].values;
    const key = kv[1].toLowerCase();
    // wg-quick allows repeated Address/DNS/AllowedIPs lines: they add up
    cur.set(key, cur.has(key) && ['address', 'dns', 'allowedips'].includes(key) ? `${cur.get(key)},${kv[2]}` : kv[2]);
  });
  const ifs = sections.filter((s) => s.name === 'interface');
  const peers = sections.filter((s) => s.name === 'peer');
  if (ifs.length !== 1) throw new WgConfigError(`expected one [Interface] section, found ${ifs.length}`);
  if (peers.length !== 1) throw new WgConfigError(`expected one [Peer] section (the server), found ${peers.length}`);
  const i = ifs[0].values;
  const p = peers[0].values;
  return checkTunnelConfig({
    privateKey: i.get('privatekey') ?? '',
    addresses: list(i.get('address') ?? ''),
    dns: list(i.get('dns') ?? ''),
    mtu: i.has('mtu') ? Number(i.get('mtu')) : null,
    peer: {
      publicKey: p.get('publickey') ?? '',
      presharedKey: p.get('presharedkey') || undefined,
      endpoint: p.get('endpoint') ?? '',
      allowedIps: list(p.get('allowedips') ?? ''),
      persistentKeepalive: p.has('persistentkeepalive') ? Number(p.get('persistentkeepalive')) : undefined,
    },
  });
}

/** Checks every value (so nothing malformed reaches wg or ip) and normalizes addresses. */
export function checkTunnelConfig(c: TunnelConfig): TunnelConfig {
  if (!isWgKey(c.privateKey)) throw new WgConfigError('PrivateKey: not a WireGuard key');
  if (!c.addresses.length) throw new WgConfigError('Address: missing');
  const addresses = c.addresses.map((a) => cidr(a, 'Address'));
  if (c.mtu !== null && !(Number.isInteger(c.mtu) && c.mtu >= 576 && c.mtu <= 65535)) throw new WgConfigError('MTU: must be an integer 576-65535');
  const p = c.peer;
  if (!isWgKey(p.publicKey)) throw new WgConfigError('PublicKey: not a WireGuard key');
  if (p.presharedKey !== undefined && !isWgKey(p.presharedKey)) throw new WgConfigError('PresharedKey: not a WireGuard key');
  const ep = ENDPOINT.exec(p.endpoint);
  if (!ep || Number(ep[1]) < 1 || Number(ep[1]) > 65535) throw new WgConfigError('Endpoint: must be host:port');
  if (!p.allowedIps.length) throw new WgConfigError('AllowedIPs: missing');
  const allowedIps = p.allowedIps.map((a) => cidr(a, 'AllowedIPs'));
  const ka = p.persistentKeepalive;
  if (ka !== undefined && !(Number.isInteger(ka) && ka >= 0 && ka <= 65535)) throw new WgConfigError('PersistentKeepalive: must be an integer 0-65535');
  return { ...c, addresses, peer: { ...p, allowedIps, persistentKeepalive: ka || undefined } };
}

/**
 * The routes the interface gets for the peer's AllowedIPs. A default route (0.0.0.0/0) becomes the
 * two halves 0.0.0.0/1 and 128.0.0.0/1, which win over the system's default route without replacing
 * it (the endpoint then needs its own route outside the tunnel: see Tunnel.pinEndpoint).
 */
export function routesFor(allowedIps: string[]): { routes: string[]; fullTunnel: boolean } {
  const routes: string[] = [];
  let fullTunnel = false;
  for (const a of allowedIps) {
    if (a === '0.0.0.0/0') {
      fullTunnel = true;
      routes.push('0.0.0.0/1', '128.0.0.0/1');
    } else if (!routes.includes(a)) routes.push(a);
  }
  return { routes, fullTunnel };
}
