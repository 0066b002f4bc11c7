// Wake-on-LAN: the magic packet (6 × 0xFF, then the MAC 16 times) as UDP broadcast on the LAN that
// holds the target. The broadcast address is computed from this host's interfaces: the one whose
// IPv4 subnet contains the target (resolved when it is a name) gives <network>|~<mask>, which the
// kernel sends out of exactly that interface. Without a matching interface the limited broadcast
// 255.255.255.255 is used. GATEWAY_WOL_BROADCAST overrides the choice.
import dns from 'node:dns';
import net from 'node:net';
import os from 'node:os';
import { sendMagicPackets } from '@gatehouse/common/wol.js';

const ip2n = (ip: string) => ip.split('.').reduce((a, o) => (a << 8) + Number(o), 0) >>> 0;
const n2ip = (n: number) => [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');

/** The broadcast address of the local IPv4 subnet that contains `ip`, or null. */
export function broadcastFor(ip: string, ifaces: NodeJS.Dict<os.NetworkInterfaceInfo[]> = os.networkInterfaces()): string | null {
  if (net.isIPv4(ip) === false) return null;
  const target = ip2n(ip);
  let best: { prefix: number; bcast: string } | null = null;
  for (const list of Object.values(ifaces)) {
    for (const a of list ?? []) {
      if (a.family !== 'IPv4' || a.internal) continue;
      const mask = ip2n(a.netmask);
      if (mask === 0xffffffff) continue; // a /32 (e.g. the tunnel address) has no LAN behind it
      if ((ip2n(a.address) & mask) >>> 0 !== (target & mask) >>> 0) continue;
      const prefix = a.cidr ? Number(a.cidr.split('/')[1]) : 0;
      if (!best || prefix > best.prefix) best = { prefix, bcast: n2ip(((ip2n(a.address) & mask) | (~mask >>> 0)) >>> 0) };
    }
  }
  return best?.bcast ?? null;
}

export interface WolResult {
  mac: string;
  sent_to: string[];
  packets: number;
  bytes: number;
}

/** Where the packet for `targetHost` goes (see the top of this file). */
export async function wolDestinations(targetHost: string | undefined, override: string[]): Promise<string[]> {
  if (override.length) return override;
  if (targetHost) {
    let ip = targetHost;
    if (!net.isIP(targetHost)) {
      try {
        ip = (await dns.promises.lookup(targetHost, { family: 4 })).address;
      } catch {
        ip = '';
      }
    }
    const b = ip ? broadcastFor(ip) : null;
    if (b) return [b];
  }
  return ['255.255.255.255'];
}

export async function sendWol(
  mac: string,
  opts: { targetHost?: string; override?: string[]; port?: number; count?: number; spacingMs?: number } = {},
): Promise<WolResult> {
  const to = await wolDestinations(opts.targetHost, opts.override ?? []);
  const port = opts.port ?? 9;
  const count = opts.count ?? 3;
  const bytes = await sendMagicPackets(mac, to, { port, count, spacingMs: opts.spacingMs ?? 100, family: 'udp4' });
  return { mac: mac.replace(/[:-]/g, '').toUpperCase().match(/../g)!.join(':'), sent_to: to.map((a) => `${a}:${port}`), packets: count * to.length, bytes };
}
