// "This server's public host": the name or address peers dial (the Endpoint of every peer config,
// the gateway companion's env) and desktop clients get for gateway-mode RDP. Computed here and
// nowhere else (ctx.publicHost, a platform service): GATEHOUSE_PUBLIC_HOST when set, otherwise this
// machine's hostname. A later Network settings screen that overrides the environment plugs in here
// (a third source) and every consumer follows.
//
// classifyHost() judges by form alone whether the internet could resolve or reach a host (there is
// no network access to ask, and a start must not wait for DNS): a single-label name, a name under a
// suffix that never resolves publicly (.local, .lan, .internal, .home.arpa, ...), and an IP literal
// that is not global unicast (private, loopback, link-local, carrier-grade NAT, unique-local, ...)
// cannot be. A dotted name under any other suffix may be.
//
// With the hostname fallback and a host the internet cannot resolve, current().warning says so:
// logged at start (app-context.ts), shown on the dashboard and the peer config screen of the admin
// UI from GET /api/v1/settings/app `app.public_host` (docs/guides/peers.md).
import os from 'node:os';
import ipaddr from 'ipaddr.js';
import type { PublicHostProblem } from './schema.js';

export type { PublicHostProblem } from './schema.js';

/**
 * Suffixes that never resolve on the public internet: mDNS (.local), special-use names (RFC 6761:
 * .localhost, .test, .invalid, .example; RFC 8375 .home.arpa; .internal, reserved by ICANN for
 * private use) and the suffixes home routers and company networks hand out (.lan, .home, .corp, ...).
 */
export const LOCAL_SUFFIXES = [
  'local',
  'localhost',
  'localdomain',
  'lan',
  'home',
  'home.arpa',
  'internal',
  'intranet',
  'corp',
  'private',
  'test',
  'invalid',
  'example',
] as const;

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

export interface HostClass {
  /** false: the internet cannot resolve or reach it (by its form) */
  public: boolean;
  problem: PublicHostProblem | null;
}

/** Whether the internet could resolve (a name) or reach (an IP literal, brackets allowed) this host, by its form. */
export function classifyHost(input: string): HostClass {
  const h = input.trim().toLowerCase().replace(/\.$/, '');
  const no = (problem: PublicHostProblem): HostClass => ({ public: false, problem });
  if (!h) return no('empty');
  const raw = h.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  if (ipaddr.IPv6.isValid(raw) || ipaddr.IPv4.isValidFourPartDecimal(raw)) {
    let addr = ipaddr.parse(raw);
    if (addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress()) addr = (addr as ipaddr.IPv6).toIPv4Address();
    const range = addr.range();
    if (range === 'unicast') return { public: true, problem: null };
    if (range === 'loopback' || range === 'unspecified') return no('loopback_ip');
    if (range === 'private' || range === 'uniqueLocal' || range === 'carrierGradeNat') return no('private_ip');
    if (range === 'linkLocal') return no('link_local_ip');
    return no('not_global_ip');
  }
  const labels = h.split('.');
  if (!labels.every((l) => LABEL.test(l))) return no('invalid_name');
  if (labels.length === 1) return no(h === 'localhost' ? 'local_suffix' : 'single_label');
  // all digits in the last label: a shortened or odd IPv4 form (10.1, 127.1), never a public name
  if (/^\d+$/.test(labels[labels.length - 1])) return no('not_global_ip');
  if (LOCAL_SUFFIXES.some((s) => h === s || h.endsWith(`.${s}`))) return no('local_suffix');
  return { public: true, problem: null };
}

export type PublicHostSource = 'env' | 'hostname';

export interface PublicHostInfo {
  /** what peers dial and desktop clients get (no brackets around an IPv6 address) */
  host: string;
  /** env: GATEHOUSE_PUBLIC_HOST; hostname: unset, this machine's hostname is used */
  source: PublicHostSource;
  /** by its form: false when the internet cannot resolve or reach the host */
  internet_resolvable: boolean;
  problem: PublicHostProblem | null;
  /** set when the hostname fallback is a host the internet cannot resolve: what to do about it (English; the UI words it from `problem`) */
  warning: string | null;
}

const WHY: Record<PublicHostProblem, string> = {
  empty: 'empty',
  single_label: 'a single-label name',
  local_suffix: 'a name under a local-only suffix',
  invalid_name: 'not a valid DNS name',
  loopback_ip: 'a loopback address',
  private_ip: 'a private address',
  link_local_ip: 'a link-local address',
  not_global_ip: 'not a global address',
};

/** ctx.publicHost: this server's public host, in one place. */
export class PublicHost {
  constructor(
    private readonly config: { publicHost?: string },
    private readonly hostname: () => string = os.hostname,
  ) {}

  /** The host set for this server (GATEHOUSE_PUBLIC_HOST), or null when the hostname fallback applies. */
  configured(): string | null {
    const h = this.config.publicHost?.trim();
    return h ? unbracket(h) : null;
  }

  current(): PublicHostInfo {
    const configured = this.configured();
    const source: PublicHostSource = configured ? 'env' : 'hostname';
    const host = configured ?? unbracket(this.hostname().trim());
    const c = classifyHost(host);
    const warning =
      source === 'hostname' && !c.public
        ? `GATEHOUSE_PUBLIC_HOST is not set, so peer configs use this machine's hostname "${host}" as their endpoint, and that is ${WHY[c.problem!]} the internet cannot resolve: peers outside this network cannot connect. Set GATEHOUSE_PUBLIC_HOST to this server's public DNS name or IP address.`
        : null;
    return { host, source, internet_resolvable: c.public, problem: c.problem, warning };
  }
}

function unbracket(h: string): string {
  return h.startsWith('[') && h.endsWith(']') && ipaddr.IPv6.isValid(h.slice(1, -1)) ? h.slice(1, -1) : h;
}
