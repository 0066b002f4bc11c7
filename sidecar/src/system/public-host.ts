// "This server's public host": the name or address peers dial (the Endpoint of every peer config,
// the gateway companion's env) and desktop clients get for gateway-mode RDP. Computed here and
// nowhere else (ctx.publicHost, a platform service). Three sources, first one set wins: the Network
// settings stored in the database (GET/PUT /api/v1/settings/network, settings key `network`),
// GATEHOUSE_PUBLIC_HOST, this machine's hostname. The same holds for the rest of the Network
// settings: the public IPv4 (what route domains should resolve to: the DNS check, and an address
// server-side fetches never reach), the TLS mode and the ACME e-mail the Caddy renderer uses (stored
// value, else GATEHOUSE_PUBLIC_IP / GATEHOUSE_TLS / GATEHOUSE_ACME_EMAIL). The stored values are read
// once at start (load()) and again after every save and every restore; reads are synchronous.
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
import type { PublicHostInfo, PublicHostProblem } from './schema.js';
import type { NetworkBody, TLS_MODES } from '../settings/schema.js';
import type { SettingsStore } from '../settings/store.js';

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

type PublicHostSource = PublicHostInfo['source'];
export type TlsMode = (typeof TLS_MODES)[number];

/** The settings key of the stored Network settings (a JSON object; travels in backups with the settings table). */
export const NETWORK_SETTING = 'network';
/** Set when an admin skipped the first-sign-in Network step (the step is not shown again). */
export const NETWORK_SETUP_SKIPPED = 'network.setup_skipped';

/** What PUT /settings/network stores, every field set: null = fall back to the environment (and the hostname). */
export type StoredNetwork = Required<NetworkBody>;

export interface NetworkConfig {
  publicHost?: string;
  publicIp?: string;
  tls?: TlsMode;
  acmeEmail?: string;
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

/** ctx.publicHost: this server's public host (and the rest of the Network settings), in one place. */
export class PublicHost {
  private stored: StoredNetwork | null = null;
  private skipped = false;

  constructor(
    private readonly config: NetworkConfig,
    private readonly hostname: () => string = os.hostname,
    private readonly settings: SettingsStore | null = null,
  ) {}

  /** Reads the stored Network settings (at start, after a save and after a restore). */
  async load(): Promise<void> {
    if (!this.settings) return;
    const v = await this.settings.get<StoredNetwork | null>(NETWORK_SETTING, null);
    this.stored =
      v && typeof v === 'object'
        ? { public_host: v.public_host ?? null, public_ip: v.public_ip ?? null, tls_mode: v.tls_mode ?? null, acme_email: v.acme_email ?? null }
        : null;
    this.skipped = (await this.settings.get<boolean>(NETWORK_SETUP_SKIPPED, false)) === true;
  }

  /** Stores the Network settings (every field; null = fall back) and reads them back. */
  async save(v: StoredNetwork): Promise<void> {
    if (!this.settings) throw new Error('PublicHost: no settings store');
    await this.settings.set(NETWORK_SETTING, v);
    await this.load();
  }

  /** Remembers that an admin skipped the first-sign-in Network step. */
  async skipSetup(): Promise<void> {
    if (!this.settings) throw new Error('PublicHost: no settings store');
    await this.settings.set(NETWORK_SETUP_SKIPPED, true);
    await this.load();
  }

  /** The stored values (null fields fall back); null when the Network settings were never saved. */
  storedValues(): StoredNetwork | null {
    return this.stored ? { ...this.stored } : null;
  }

  /**
   * The first-sign-in Network step: `saved` once the settings were saved, `skipped` once an admin
   * skipped the step, `env` when GATEHOUSE_PUBLIC_HOST is set (the operator chose already), else `pending`.
   */
  setup(): 'saved' | 'skipped' | 'env' | 'pending' {
    if (this.stored) return 'saved';
    if (this.skipped) return 'skipped';
    return this.envHost() ? 'env' : 'pending';
  }

  private envHost(): string | null {
    const h = this.config.publicHost?.trim();
    return h ? unbracket(h) : null;
  }

  /** The host set for this server (stored setting, else GATEHOUSE_PUBLIC_HOST), or null when the hostname fallback applies. */
  configured(): string | null {
    return this.stored?.public_host ? unbracket(this.stored.public_host) : this.envHost();
  }

  current(): PublicHostInfo {
    const fromSettings = this.stored?.public_host ? unbracket(this.stored.public_host) : null;
    const fromEnv = this.envHost();
    const source: PublicHostSource = fromSettings ? 'settings' : fromEnv ? 'env' : 'hostname';
    const host = fromSettings ?? fromEnv ?? unbracket(this.hostname().trim());
    const c = classifyHost(host);
    const warning =
      source === 'hostname' && !c.public
        ? `GATEHOUSE_PUBLIC_HOST is not set, so peer configs use this machine's hostname "${host}" as their endpoint, and that is ${WHY[c.problem!]} the internet cannot resolve: peers outside this network cannot connect. Set this server's public DNS name or IP address in Settings → Network (or in GATEHOUSE_PUBLIC_HOST).`
        : null;
    return { host, source, internet_resolvable: c.public, problem: c.problem, warning };
  }

  /** The hostname fallback (what applies when neither the settings nor the environment name a host). */
  suggestion(): string {
    return unbracket(this.hostname().trim());
  }

  /**
   * This server's public IPv4 (what route domains should resolve to): the stored setting, else
   * GATEHOUSE_PUBLIC_IP, else the public host when that is an IPv4 address; null when none says
   * (the DNS check then takes the first non-internal interface address).
   */
  publicIp(): { value: string | null; source: 'settings' | 'env' | 'public_host' | null } {
    if (this.stored?.public_ip) return { value: this.stored.public_ip, source: 'settings' };
    if (this.config.publicIp) return { value: this.config.publicIp, source: 'env' };
    const host = this.current().host;
    if (ipaddr.IPv4.isValidFourPartDecimal(host)) return { value: host, source: 'public_host' };
    return { value: null, source: null };
  }

  /** The TLS mode Caddy's certificates use: the stored setting, else GATEHOUSE_TLS (default internal). */
  tls(): { value: TlsMode; source: 'settings' | 'env' } {
    if (this.stored?.tls_mode) return { value: this.stored.tls_mode, source: 'settings' };
    return { value: this.config.tls ?? 'internal', source: 'env' };
  }

  /** The ACME account e-mail: the stored setting, else GATEHOUSE_ACME_EMAIL; null: none (Caddy registers without a contact). */
  acmeEmail(): { value: string | null; source: 'settings' | 'env' | null } {
    if (this.stored?.acme_email) return { value: this.stored.acme_email, source: 'settings' };
    if (this.config.acmeEmail) return { value: this.config.acmeEmail, source: 'env' };
    return { value: null, source: null };
  }
}

function unbracket(h: string): string {
  return h.startsWith('[') && h.endsWith(']') && ipaddr.IPv6.isValid(h.slice(1, -1)) ? h.slice(1, -1) : h;
}
