// CIDRs of a peer's client config (client_allowed_ips): IPv4 and IPv6, normalised.
import ipaddr from 'ipaddr.js';
import { parseIPv4 } from '@gatehouse/common/wireguard/ipv4.js';

/** The default routes: a list holding one of them is a full tunnel. */
export const FULL_TUNNEL_V4 = '0.0.0.0/0';
export const FULL_TUNNEL_V6 = '::/0';

/**
 * "10.1.2.3/24" → "10.1.2.0/24", "FD00:0:0::1/64" → "fd00::/64"; null when not a CIDR. IPv4 in
 * dotted decimal only (no "10.1/16", no octal), IPv6 without a zone.
 */
export function normalizeCidr(v: string): string | null {
  const slash = v.indexOf('/');
  if (slash < 0 || v.includes('%')) return null;
  const ip = v.slice(0, slash);
  const bits = v.slice(slash + 1);
  if (!/^\d{1,3}$/.test(bits)) return null;
  const prefix = Number(bits);
  if (!ip.includes(':')) {
    if (parseIPv4(ip) === null || prefix > 32) return null;
    return `${ipaddr.IPv4.networkAddressFromCIDR(`${ip}/${prefix}`).toString()}/${prefix}`;
  }
  if (!ipaddr.IPv6.isValid(ip) || prefix > 128) return null;
  return `${ipaddr.IPv6.networkAddressFromCIDR(`${ip}/${prefix}`).toRFC5952String()}/${prefix}`;
}

/** Stored form (comma-separated, null = the server default) → the API's list. */
export function parseClientAllowedIps(stored: string | null | undefined): string[] | null {
  if (!stored) return null;
  return stored
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);
}

export function isFullTunnel(list: readonly string[] | null | undefined): boolean {
  return !!list && (list.includes(FULL_TUNNEL_V4) || list.includes(FULL_TUNNEL_V6));
}
