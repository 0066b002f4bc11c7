// Request-forgery guard for webhook URLs: a webhook must not make the server call itself, loopback,
// or hosts on private networks (the admin API, Caddy's admin API on 127.0.0.1:2019, the peers'
// tunnel addresses, cloud metadata at 169.254.169.254, the LAN behind the server). Checked when a
// webhook is saved and again at every delivery, on the address the request then connects to (the
// name is resolved once per attempt and the connection goes to that checked address, so a DNS
// answer that changes between the check and the connection — rebinding — cannot get past it).
// GATEHOUSE_WEBHOOK_ALLOW_PRIVATE=true turns the guard off (receivers on the LAN; the tests).
import dns from 'node:dns';
import net from 'node:net';
import os from 'node:os';

const blocked = new net.BlockList();
// IPv4
for (const [a, p] of [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local (cloud metadata)
  ['172.16.0.0', 12],
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation
  ['192.168.0.0', 16],
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) blocked.addSubnet(a, p, 'ipv4');
// IPv6
for (const [a, p] of [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['64:ff9b:1::', 48], // local-use NAT64
  ['100::', 64], // discard
  ['2001:db8::', 32], // documentation
  ['fc00::', 7], // unique local (ULA)
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
] as const) blocked.addSubnet(a, p, 'ipv6');

/** The addresses of this machine's interfaces (the server itself, also on public addresses). */
function ownAddresses(): Set<string> {
  const out = new Set<string>();
  for (const list of Object.values(os.networkInterfaces())) for (const i of list ?? []) out.add(normalise(i.address));
  return out;
}

function normalise(ip: string): string {
  const v = ip.replace(/%.*$/, '').toLowerCase();
  // IPv4-mapped and IPv4-compatible IPv6 (::ffff:10.0.0.1) are judged as the IPv4 address
  const m = /^::(?:ffff:)?(\d+\.\d+\.\d+\.\d+)$/.exec(v);
  if (m) return m[1];
  const hex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(v);
  if (hex) {
    const a = parseInt(hex[1], 16), b = parseInt(hex[2], 16);
    return `${a >> 8}.${a & 255}.${b >> 8}.${b & 255}`;
  }
  return v;
}

/** Why this address may not be a webhook target, or null when it may. */
export function addressProblem(ip: string, extra: readonly string[] = []): string | null {
  const a = normalise(ip);
  const family = net.isIPv4(a) ? 'ipv4' : net.isIPv6(a) ? 'ipv6' : null;
  if (!family) return `${ip} is not an IP address`;
  if (blocked.check(a, family)) return `${ip} is a loopback, private, link-local or reserved address`;
  if (ownAddresses().has(a) || extra.map(normalise).includes(a)) return `${ip} is an address of this server`;
  return null;
}

export interface Resolved {
  address: string;
  family: 4 | 6;
}

export type Lookup = (host: string) => Promise<Resolved[]>;
export const systemLookup: Lookup = async (host) => (await dns.promises.lookup(host, { all: true, verbatim: true })).map((r) => ({ address: r.address, family: r.family === 6 ? 6 : 4 }));

export class ForbiddenTarget extends Error {}

/**
 * Resolves the host of a URL and checks every address it resolves to (one bad address refuses the
 * whole name). Returns the addresses to connect to; throws ForbiddenTarget (or the resolver's error).
 */
export async function checkedAddresses(host: string, opts: { allowPrivate: boolean; serverAddresses?: readonly string[]; lookup?: Lookup }): Promise<Resolved[]> {
  const h = host.replace(/^\[|\]$/g, '');
  const list: Resolved[] = net.isIP(h) ? [{ address: h, family: net.isIPv6(h) ? 6 : 4 }] : await (opts.lookup ?? systemLookup)(h);
  if (!list.length) throw new Error(`${host} does not resolve`);
  if (!opts.allowPrivate) {
    for (const r of list) {
      const p = addressProblem(r.address, opts.serverAddresses);
      if (p) throw new ForbiddenTarget(net.isIP(h) ? p : `${host} resolves to ${p}`);
    }
  }
  return list;
}
