// Every setting of the sidecar, read from the environment once at start and validated.
// Each variable is described in VARIABLE_DOCS below (docs/reference/environment.md is generated from
// it: npm run docs) and in configs/gatehouse.env.example.
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { OUTBOUND_USES, type OutboundUse } from './util/outbound.js';
import { NODE_NAME_PATTERN } from './util/node-name.js';

const port = z.coerce.number().int().min(1).max(65535);
const bool = z.enum(['1', '0', 'true', 'false', 'yes', 'no', 'on', 'off']).transform((v) => ['1', 'true', 'yes', 'on'].includes(v));
const positiveInt = z.coerce.number().int().positive();

const cidr4 = z
  .string()
  .regex(/^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\/(\d{1,2})$/, 'must be an IPv4 CIDR such as 10.8.0.0/24')
  .refine((v) => {
    const [ip, bits] = v.split('/');
    return ip.split('.').every((o) => Number(o) <= 255) && Number(bits) >= 8 && Number(bits) <= 30;
  }, 'octets must be 0-255 and the prefix 8-30');

function isCidrOrIp(v: string): boolean {
  const [ip, bits, more] = v.split('/');
  const family = net.isIP(ip);
  if (!family || more !== undefined) return false;
  return bits === undefined || (/^\d{1,3}$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128));
}

const hostPort = z.string().regex(/^[A-Za-z0-9.\-[\]:]+:\d{1,5}$/, 'must be host:port, e.g. 127.0.0.1:2019');

/** Variable name → schema and default. The name is the environment variable itself. */
const schema = z.object({
  GATEHOUSE_DATA_DIR: z.string().min(1).default('./data'),
  GATEHOUSE_PORT: port.default(3000),
  GATEHOUSE_BIND: z.string().min(1).default('127.0.0.1'),
  GATEHOUSE_HTTP_PORT: port.default(80),
  GATEHOUSE_HTTPS_PORT: port.default(443),
  GATEHOUSE_CADDY_ADMIN: hostPort.default('127.0.0.1:2019'),
  GATEHOUSE_CADDY_BIN: z.string().optional(),
  /** MB at which Caddy rolls its JSON access log (<data>/caddy/access.log) */
  GATEHOUSE_ACCESS_LOG_ROLL_MB: z.coerce.number().int().min(1).max(1024).default(20),
  GATEHOUSE_MANAGE_CADDY: bool.default(true),
  /** the country database of the routes' country filters (geoip/service.ts) */
  GATEHOUSE_GEOIP_DB: z.string().optional(),
  /** proxies in front of Caddy whose X-Forwarded-For it believes (proxy/fragments/geo.ts) */
  GATEHOUSE_TRUSTED_PROXIES: z
    .string()
    .default('')
    .transform((v) =>
      v
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean),
    )
    .pipe(z.array(z.string().refine(isCidrOrIp, 'each must be an IP address or CIDR range such as 203.0.113.0/24'))),
  /** address Caddy's HTTP, HTTPS and L4 listeners bind to; empty = every interface */
  GATEHOUSE_PROXY_BIND: z
    .string()
    .regex(/^[0-9A-Fa-f.:]*$/, 'must be an IP address such as 127.0.0.1 (empty: every interface)')
    .optional(),
  GATEHOUSE_ADMIN_DOMAIN: z.string().optional(),
  GATEHOUSE_ADMIN_ORIGIN: z
    .string()
    .regex(/^https?:\/\/[a-z0-9.-]+(:\d{1,5})?$/i, 'must be an origin such as https://gate.example.com (scheme, host name, optional port; no path)')
    .optional(),
  GATEHOUSE_TLS: z.enum(['acme', 'internal']).default('internal'),
  GATEHOUSE_ACME_EMAIL: z.string().email().optional(),
  GATEHOUSE_WG_INTERFACE: z
    .string()
    .regex(/^[a-zA-Z0-9_.=+-]{1,15}$/, 'must be a valid interface name (1-15 characters)')
    .default('wg0'),
  GATEHOUSE_WG_PORT: port.default(51820),
  GATEHOUSE_WG_SUBNET: cidr4.default('10.8.0.0/24'),
  GATEHOUSE_WG_MANAGE: bool.default(true),
  GATEHOUSE_WG_DNS: z.string().optional(),
  /** forwarding + MASQUERADE for full-tunnel peers (wireguard/nat.ts): auto, on, off */
  GATEHOUSE_WG_NAT: z.enum(['auto', 'on', 'off']).default('auto'),
  /** seconds between reads of `wg show dump` (handshakes, byte counters, traffic samples) */
  GATEHOUSE_WG_POLL_INTERVAL: positiveInt.default(10),
  /** seconds between full reconciles of the interface from the database (heals drift) */
  GATEHOUSE_WG_RESYNC_INTERVAL: positiveInt.default(300),
  /** the floating address (keepalived, src/cluster/vrrp.ts): see docs/guides/cluster.md */
  GATEHOUSE_VRRP_ADDRESS: z
    .string()
    .refine((v) => v.includes('/') && isCidrOrIp(v), 'must be an address with its prefix such as 203.0.113.10/24')
    .optional(),
  GATEHOUSE_VRRP_INTERFACE: z
    .string()
    .regex(/^[a-zA-Z0-9_.=+-]{1,15}$/, 'must be a valid interface name (1-15 characters)')
    .optional(),
  GATEHOUSE_VRRP_ROUTER_ID: z.coerce.number().int().min(1).max(255).default(51),
  GATEHOUSE_VRRP_PRIORITY: z.coerce.number().int().min(1).max(254).default(100),
  GATEHOUSE_VRRP_PEERS: z
    .string()
    .default('')
    .transform((v) =>
      v
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean),
    )
    .pipe(z.array(z.string().refine((v) => net.isIP(v) !== 0, 'each must be an IP address'))),
  GATEHOUSE_VRRP_STATE_FILE: z.string().optional(),
  GATEHOUSE_VRRP_PID_FILE: z.string().default('/run/keepalived.pid'),
  GATEHOUSE_PUBLIC_HOST: z.string().optional(),
  GATEHOUSE_PUBLIC_IP: z.string().optional(),
  GATEHOUSE_DNS_DOMAIN: z
    .string()
    .regex(/^[a-z0-9.-]+$/, 'must be a DNS zone such as vpn.internal')
    .default('vpn.internal'),
  GATEHOUSE_ADMIN_USER: z.string().min(1).max(64).optional(),
  GATEHOUSE_ADMIN_PASSWORD: z.string().min(8, 'must be at least 8 characters').optional(),
  GATEHOUSE_MASTER_KEY_FILE: z.string().optional(),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL')
    .optional(),
  /** several nodes on one PostgreSQL (src/cluster): see docs/guides/cluster.md */
  GATEHOUSE_CLUSTER: bool.default(false),
  GATEHOUSE_NODE_NAME: z
    .string()
    .regex(NODE_NAME_PATTERN, 'must be 1-63 letters, digits, dots, dashes or underscores, starting with a letter or digit')
    .optional(),
  GATEHOUSE_LOG_LEVEL: z.enum(['error', 'warn', 'info', 'debug']).default('info'),
  GATEHOUSE_SESSION_MAX_AGE: positiveInt.default(12 * 3600 * 1000),
  GATEHOUSE_RATE_LIMIT_LOGIN: positiveInt.default(10),
  GATEHOUSE_RATE_LIMIT_ADMIN: positiveInt.default(1000),
  GATEHOUSE_RATE_LIMIT_CLIENT: positiveInt.default(100),
  GATEHOUSE_RATE_LIMIT_HOSTNAME: positiveInt.default(3),
  GATEHOUSE_TRUST_PROXY: bool.default(true),
  /** home gateways (src/gateways): see docs/guides/gateways.md */
  GATEHOUSE_GATEWAY_SERVER_URL: z
    .string()
    .regex(/^https?:\/\/[^\s/]+(\/[^\s]*)?$/, 'must be an http(s) URL such as http://10.8.0.1:3000')
    .optional(),
  GATEHOUSE_GATEWAY_TUNNEL_LISTEN: bool.default(true),
  GATEHOUSE_GATEWAY_TOKEN_ANY_SOURCE: bool.default(false),
  GATEHOUSE_GATEWAY_API_PORT: port.default(9876),
  GATEHOUSE_GATEWAY_PROXY_PORT: port.default(8080),
  GATEHOUSE_GATEWAY_POLL_INTERVAL: positiveInt.default(10),
  GATEHOUSE_GATEWAY_HEARTBEAT_INTERVAL: positiveInt.default(15),
  GATEHOUSE_GATEWAY_OFFLINE_AFTER: positiveInt.default(60),
  GATEHOUSE_GATEWAY_WOL_TIMEOUT: positiveInt.default(180),
  /** RDP status, sessions and Wake-on-LAN (src/rdp): see docs/guides/rdp.md */
  GATEHOUSE_RDP_STATUS_INTERVAL: positiveInt.max(86_400).default(60),
  GATEHOUSE_RDP_CHECK_TIMEOUT: z.coerce.number().int().min(1).max(60).default(3),
  GATEHOUSE_RDP_SESSION_LOST_AFTER: positiveInt.max(86_400).default(90),
  GATEHOUSE_RDP_WOL_PORT: port.default(9),
  /** server-side fetches (util/outbound.ts): which may reach loopback, private ranges and this server; see docs/guides/security.md */
  GATEHOUSE_OUTBOUND_ALLOW_PRIVATE: z
    .string()
    .default('')
    .transform((v) =>
      v
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean),
    )
    .pipe(z.array(z.enum(OUTBOUND_USES, { error: `each must be one of ${OUTBOUND_USES.join(', ')}` }))),
  /** webhooks (src/webhooks): see docs/guides/webhooks.md */
  GATEHOUSE_WEBHOOK_ALLOW_PRIVATE: bool.default(false),
  GATEHOUSE_WEBHOOK_TIMEOUT: z.coerce.number().int().min(1).max(120).default(10),
  GATEHOUSE_WEBHOOK_RETRY_BASE: z.coerce.number().int().min(1).max(3600).default(10),
  /** licence (src/licence): see docs/guides/licence.md */
  GATEHOUSE_LICENCE_PUBLIC_KEY: z.string().optional(),
  GATEHOUSE_LICENCE_URL: z
    .string()
    .regex(/^https?:\/\/[^\s/]+(\/[^\s]*)?$/, 'must be an http(s) URL such as https://licence.example.com/v1/refresh')
    .optional(),
  GATEHOUSE_LICENCE_GRACE_DAYS: z.coerce.number().int().min(0).max(365).default(14),
  GATEHOUSE_LICENCE_REFRESH_HOURS: positiveInt.max(24 * 30).default(24),
  GATEHOUSE_LICENCE_KEY: z.string().optional(),
  /** desktop clients (src/client-api): what GET /api/v1/client/update announces unless set in the settings */
  GATEHOUSE_CLIENT_VERSION: z
    .string()
    .max(64)
    .regex(/^[A-Za-z0-9.+_-]+$/, 'must be a version such as 1.2.3')
    .optional(),
  GATEHOUSE_CLIENT_DOWNLOAD_URL: z
    .string()
    .max(2048)
    .regex(/^https?:\/\/[^\s/]+(\/\S*)?$/, 'must be an http(s) URL')
    .optional(),
});

export type Env = z.infer<typeof schema>;

/** What docs/reference/environment.md says of a variable (generated from here by `npm run docs`). */
export interface VariableDoc {
  /** what it sets, for an operator */
  meaning: string;
  /** the default as a reader should see it (Markdown), when the schema's own default does not say it (an optional variable, a computed default) */
  shownDefault?: string;
  /** the page of docs/ that explains it, relative to docs/ (a #heading allowed) */
  see?: string;
}

/** Every variable's documentation: a variable added to the schema does not compile until it is described here. */
const VARIABLE_DOCS: Record<keyof Env, VariableDoc> = {
  GATEHOUSE_DATA_DIR: { meaning: 'SQLite database, master key, Caddy data, hosts file, logs', see: 'configuration.md' },
  GATEHOUSE_PORT: { meaning: 'admin UI/API, route-auth pages, gateway and client APIs' },
  GATEHOUSE_BIND: { meaning: 'listen address of the sidecar (Caddy publishes it)' },
  GATEHOUSE_HTTP_PORT: { meaning: "Caddy's HTTP listener" },
  GATEHOUSE_HTTPS_PORT: { meaning: "Caddy's HTTPS listener" },
  GATEHOUSE_CADDY_ADMIN: { meaning: 'Caddy admin API (loopback only)' },
  GATEHOUSE_CADDY_BIN: { meaning: 'the custom Caddy binary', shownDefault: '`bin/caddy` of this checkout' },
  GATEHOUSE_ACCESS_LOG_ROLL_MB: {
    meaning: 'size (1–1024 MB) at which Caddy rolls `<data>/caddy/access.log`; 3 rolled files are kept',
    see: 'guides/resilience.md',
  },
  GATEHOUSE_MANAGE_CADDY: { meaning: 'start and supervise Caddy; `false` renders only' },
  GATEHOUSE_PROXY_BIND: { meaning: "address Caddy's public listeners (HTTP, HTTPS, L4) bind to (e.g. `127.0.0.1`)", shownDefault: 'every interface' },
  GATEHOUSE_ADMIN_DOMAIN: { meaning: 'public name of the admin UI behind Caddy (HTTPS)' },
  GATEHOUSE_ADMIN_ORIGIN: {
    meaning:
      'the origin browsers open the admin UI on (`https://gate.example.com`, or `http://localhost:3000`); passkeys are bound to its host name (the WebAuthn RP ID) and checked against it. Without it and without GATEHOUSE_ADMIN_DOMAIN, passkeys are refused',
    shownDefault: '`https://` + GATEHOUSE_ADMIN_DOMAIN',
    see: 'guides/authentication.md#passkeys',
  },
  GATEHOUSE_TLS: {
    meaning: "`acme` (public certificates) or `internal` (Caddy's local CA); the Network settings (admin UI, `PUT /api/v1/settings/network`) override it",
    see: 'guides/peers.md#network-settings-public-host-tls-mode',
  },
  GATEHOUSE_ACME_EMAIL: {
    meaning: 'ACME account contact (optional); the Network settings override it',
    see: 'guides/peers.md#network-settings-public-host-tls-mode',
  },
  GATEHOUSE_WG_INTERFACE: { meaning: 'WireGuard interface name' },
  GATEHOUSE_WG_PORT: { meaning: 'WireGuard UDP port' },
  GATEHOUSE_VRRP_ADDRESS: {
    meaning: 'the floating address keepalived moves between the nodes, with its prefix (`203.0.113.10/24`); peers dial it. Unset: no VRRP state is read',
    see: 'guides/cluster.md#the-floating-address-keepalived',
  },
  GATEHOUSE_VRRP_INTERFACE: {
    meaning: 'the interface keepalived puts the floating address on (`keepalived-config` needs it)',
    see: 'guides/cluster.md#the-floating-address-keepalived',
  },
  GATEHOUSE_VRRP_ROUTER_ID: {
    meaning: 'VRRP virtual router id (1–255): the same on every node, unique on the network segment',
    see: 'guides/cluster.md#the-floating-address-keepalived',
  },
  GATEHOUSE_VRRP_PRIORITY: {
    meaning: "this node's VRRP priority (1–254): the highest takes the address first",
    see: 'guides/cluster.md#the-floating-address-keepalived',
  },
  GATEHOUSE_VRRP_PEERS: {
    meaning: "the other nodes' addresses, comma-separated (unicast VRRP)",
    shownDefault: 'none: multicast',
    see: 'guides/cluster.md#the-floating-address-keepalived',
  },
  GATEHOUSE_VRRP_STATE_FILE: {
    meaning: "the file keepalived's notify command writes this node's state into (MASTER, BACKUP, FAULT, STOP)",
    shownDefault: '`<data>/vrrp.state`',
    see: 'guides/cluster.md#the-floating-address-keepalived',
  },
  GATEHOUSE_VRRP_PID_FILE: {
    meaning: "keepalived's pid file: a dead keepalived makes the state unknown; `none`: not checked (keepalived outside this container)",
    see: 'guides/cluster.md#the-floating-address-keepalived',
  },
  GATEHOUSE_WG_SUBNET: { meaning: 'tunnel subnet (prefix 8–30); the server takes the first address', see: 'guides/peers.md' },
  GATEHOUSE_WG_MANAGE: { meaning: 'bring up and drive the interface; `false` keeps peers in the database only' },
  GATEHOUSE_WG_DNS: { meaning: 'DNS written into peer configs that set none' },
  GATEHOUSE_WG_NAT: {
    meaning:
      "IPv4 forwarding and NAT (iptables MASQUERADE out of the default-route interface) for peers' internet traffic: `auto` while a peer has a full tunnel, `on` always, `off` never (set it up yourself)",
    see: 'guides/peers.md#full-or-split-tunnel-client-allowedips',
  },
  GATEHOUSE_WG_POLL_INTERVAL: { meaning: 'seconds between reads of `wg show dump` (handshakes, counters, traffic, expiry)' },
  GATEHOUSE_WG_RESYNC_INTERVAL: { meaning: 'seconds between full reconciles of the interface from the database (heals drift)' },
  GATEHOUSE_PUBLIC_HOST: {
    meaning:
      "name or IP peers dial; the Network settings (admin UI, `PUT /api/v1/settings/network`) override it; neither set, the machine's host name, with a warning when that cannot be reached from the internet",
    see: 'guides/peers.md#network-settings-public-host-tls-mode',
  },
  GATEHOUSE_PUBLIC_IP: {
    meaning: 'IPv4 that route domains should resolve to (check-dns); the Network settings override it',
    shownDefault: 'detected',
    see: 'guides/peers.md#network-settings-public-host-tls-mode',
  },
  GATEHOUSE_DNS_DOMAIN: { meaning: 'zone of the internal DNS hosts file', see: 'guides/peers.md#internal-dns-data-feature-internal_dns-community-edition' },
  GATEHOUSE_ADMIN_USER: { meaning: 'first admin (empty users table only)', shownDefault: '`admin`' },
  GATEHOUSE_ADMIN_PASSWORD: {
    meaning: "first admin's password (at least 8 characters); unset, a generated one in `<data>/initial-admin-password.txt`, changed at the first sign-in",
    shownDefault: 'generated',
    see: 'getting-started.md#first-sign-in',
  },
  GATEHOUSE_MASTER_KEY_FILE: { meaning: '32-byte key sealing secrets at rest (AES-256-GCM)', shownDefault: '`<data>/master.key`', see: 'guides/master-key.md' },
  DATABASE_URL: { meaning: '`postgres://…` to use PostgreSQL instead of SQLite', see: 'configuration.md#database' },
  GATEHOUSE_CLUSTER: {
    meaning:
      'run this node as one of several on one PostgreSQL (`DATABASE_URL` required): a leader runs the work that must happen once; a second live node needs the licence feature `cluster`',
    see: 'guides/cluster.md',
  },
  GATEHOUSE_NODE_NAME: {
    meaning: "this node's name in the cluster (1–63 letters, digits, `.`, `-`, `_`); unique per node",
    shownDefault: "the machine's host name",
    see: 'guides/cluster.md#nodes-and-the-leader',
  },
  GATEHOUSE_LOG_LEVEL: { meaning: '`error`, `warn`, `info`, `debug` (winston JSON lines)' },
  GATEHOUSE_SESSION_MAX_AGE: { meaning: 'admin session lifetime (ms)' },
  GATEHOUSE_RATE_LIMIT_LOGIN: { meaning: '`/login` requests per IP per 15 min', see: 'guides/authentication.md#rate-limits' },
  GATEHOUSE_RATE_LIMIT_ADMIN: { meaning: 'admin API requests per IP per 15 min' },
  GATEHOUSE_RATE_LIMIT_CLIENT: { meaning: 'client API requests per IP per 15 min' },
  GATEHOUSE_RATE_LIMIT_HOSTNAME: { meaning: '`/api/v1/client/peer/hostname` per IP per minute' },
  GATEHOUSE_GEOIP_DB: {
    meaning:
      "path of a MaxMind-format country database (GeoLite2-Country or DB-IP Lite Country `.mmdb`) for the routes' country filters (`geo_filter`); unset, a route with a country filter is refused",
    see: 'guides/protection.md#country-filter',
  },
  GATEHOUSE_TRUSTED_PROXIES: {
    meaning:
      "comma list of addresses or CIDR ranges of proxies in front of Caddy (a load balancer, a CDN): a request from one of them is judged by the address it forwarded (`X-Forwarded-For`, rightmost untrusted entry) in the routes' IP and country filters; empty, by the connection's source",
    see: 'guides/protection.md#country-filter',
  },
  GATEHOUSE_TRUST_PROXY: { meaning: 'trust `X-Forwarded-For`/`-Proto` from loopback (our Caddy)' },
  GATEHOUSE_GATEWAY_SERVER_URL: {
    meaning: 'server URL written into each `gateway.env`',
    shownDefault: '`http://<tunnel address>:<GATEHOUSE_PORT>`',
    see: 'guides/gateways.md',
  },
  GATEHOUSE_GATEWAY_TUNNEL_LISTEN: { meaning: "also serve the gateway API (only it) on the server's tunnel address" },
  GATEHOUSE_GATEWAY_TOKEN_ANY_SOURCE: {
    meaning:
      "accept gateway tokens on the main listener from any address, not only from their gateway's tunnel address (for companions that reach `GATEHOUSE_GATEWAY_SERVER_URL` outside their tunnel; never on the tunnel listener)",
  },
  GATEHOUSE_GATEWAY_API_PORT: { meaning: 'companion API port for gateway peers without `api_port`' },
  GATEHOUSE_GATEWAY_PROXY_PORT: { meaning: "the companions' HTTP proxy port (Caddy dials it)" },
  GATEHOUSE_GATEWAY_POLL_INTERVAL: { meaning: "seconds between the companions' config checks" },
  GATEHOUSE_GATEWAY_HEARTBEAT_INTERVAL: { meaning: 'seconds between heartbeats' },
  GATEHOUSE_GATEWAY_OFFLINE_AFTER: { meaning: 'seconds without a heartbeat until a gateway is offline' },
  GATEHOUSE_GATEWAY_WOL_TIMEOUT: { meaning: 'seconds the waking-up page waits for a Wake-on-LAN host' },
  GATEHOUSE_RDP_STATUS_INTERVAL: {
    meaning: 'seconds between reachability checks of every RDP route',
    see: 'guides/rdp.md#rdp-status-sessions-and-wake-on-lan',
  },
  GATEHOUSE_RDP_CHECK_TIMEOUT: { meaning: 'seconds (1–60) one RDP reachability check (TCP connect) may take' },
  GATEHOUSE_RDP_SESSION_LOST_AFTER: { meaning: 'seconds without a session heartbeat until an RDP session is closed as `lost`' },
  GATEHOUSE_RDP_WOL_PORT: { meaning: 'UDP port of the Wake-on-LAN packets the server sends directly to an RDP target' },
  GATEHOUSE_OUTBOUND_ALLOW_PRIVATE: {
    meaning: `comma list of the server-side fetches that may reach loopback, private ranges and this server: ${OUTBOUND_USES.map((u) => `\`${u}\``).join(', ')}`,
    shownDefault: 'none',
    see: 'guides/security.md#server-side-requests-request-forgery-guard',
  },
  GATEHOUSE_WEBHOOK_ALLOW_PRIVATE: { meaning: 'the older spelling of `webhooks` in `GATEHOUSE_OUTBOUND_ALLOW_PRIVATE`', see: 'guides/webhooks.md' },
  GATEHOUSE_WEBHOOK_TIMEOUT: { meaning: 'seconds (1–120) one webhook delivery attempt may take' },
  GATEHOUSE_WEBHOOK_RETRY_BASE: { meaning: "seconds (1–3600) before a webhook's first retry; each further retry waits twice as long (at most 1 h)" },
  GATEHOUSE_LICENCE_PUBLIC_KEY: {
    meaning:
      'an additional trusted licence-signing public key (Ed25519 PEM text, base64 of the 32 key bytes, or a file path): for tests and self-signed deployments',
    see: 'guides/licence.md',
  },
  GATEHOUSE_LICENCE_URL: { meaning: 'the licence service `POST /license/refresh` and the daily refresh ask; unset: licences are only verified offline' },
  GATEHOUSE_LICENCE_GRACE_DAYS: { meaning: 'days the last good licence stays in force while the licence service cannot be reached' },
  GATEHOUSE_LICENCE_REFRESH_HOURS: { meaning: 'hours between automatic refreshes (with `GATEHOUSE_LICENCE_URL`)' },
  GATEHOUSE_LICENCE_KEY: {
    meaning:
      'a licence key activated at start when none is stored (unattended installs); after `DELETE /license` remove it too, or it comes back at the next start',
  },
  GATEHOUSE_CLIENT_VERSION: {
    meaning: 'the desktop-client release `GET /api/v1/client/update` announces when `PUT /settings/client` set none',
    see: 'guides/desktop-client.md#desktop-client-api',
  },
  GATEHOUSE_CLIENT_DOWNLOAD_URL: { meaning: 'its download URL (http/https)' },
};

/** The default a variable's schema applies, or undefined (walks defaults, pipes and transforms). */
function schemaDefault(s: z.ZodType): unknown {
  const def = s.def as { type: string; defaultValue?: unknown; in?: z.ZodType; innerType?: z.ZodType };
  if (def.type === 'default') return typeof def.defaultValue === 'function' ? (def.defaultValue as () => unknown)() : def.defaultValue;
  if (def.type === 'pipe' && def.in) return schemaDefault(def.in);
  return undefined;
}

/**
 * Every variable with its default (Markdown: the schema's default as code, or the shown default; null
 * when unset) and meaning, in the schema's order: docs/reference/environment.md.
 */
export function configVariables(): { name: string; default: string | null; meaning: string; see?: string }[] {
  return (Object.keys(schema.shape) as (keyof Env)[])
    .map((name): { name: string; default: string | null; meaning: string; see?: string } => {
      const d = VARIABLE_DOCS[name];
      const fromSchema = schemaDefault(schema.shape[name] as z.ZodType);
      const dflt = d.shownDefault ?? (fromSchema === undefined || fromSchema === '' ? null : `\`${String(fromSchema)}\``);
      return { name, default: dflt, meaning: d.meaning, ...(d.see ? { see: d.see } : {}) };
    })
    .concat(
      Object.entries(DEPRECATED_VARIABLES).map(([old, name]) => ({
        name: old,
        default: null,
        meaning: `deprecated, still read: the older spelling of \`${name}\` (which wins when both are set; the server warns at start)`,
      })),
    );
}

export interface Config {
  dataDir: string;
  port: number;
  bind: string;
  httpPort: number;
  httpsPort: number;
  caddyAdmin: string;
  caddyBin: string;
  manageCaddy: boolean;
  /** Size in MB at which Caddy rolls the access log (GATEHOUSE_ACCESS_LOG_ROLL_MB). */
  accessLogRollMb: number;
  /** Bind address of Caddy's HTTP/HTTPS/L4 listeners ('' = every interface). */
  proxyBind: string;
  adminDomain?: string;
  /** The admin UI's origin as browsers see it (GATEHOUSE_ADMIN_ORIGIN, else https://GATEHOUSE_ADMIN_DOMAIN): the passkeys' relying party. */
  adminOrigin?: string;
  tls: 'acme' | 'internal';
  acmeEmail?: string;
  wg: {
    iface: string;
    port: number;
    subnet: string;
    manage: boolean;
    dns?: string;
    nat?: 'auto' | 'on' | 'off';
    pollIntervalMs: number;
    resyncIntervalMs: number;
  };
  /** The floating address (keepalived): what `keepalived-config` renders and `vrrp-state` reads (src/cluster/vrrp.ts). */
  vrrp: {
    address?: string;
    iface?: string;
    routerId: number;
    priority: number;
    peers: string[];
    stateFile: string;
    /** '' = not checked */
    pidFile: string;
  };
  publicHost?: string;
  publicIp?: string;
  dnsDomain: string;
  initialAdmin: { user?: string; password?: string };
  masterKeyFile: string;
  databaseUrl?: string;
  /** Several nodes on one PostgreSQL (src/cluster, docs/guides/cluster.md). */
  cluster: {
    /** GATEHOUSE_CLUSTER: on only with DATABASE_URL (loadConfig refuses it otherwise) */
    enabled: boolean;
    /** GATEHOUSE_NODE_NAME, else the host name */
    nodeName: string;
  };
  logLevel: 'error' | 'warn' | 'info' | 'debug';
  sessionMaxAge: number;
  rateLimits: { login: number; admin: number; client: number; hostname: number };
  /** Trust X-Forwarded-For / X-Forwarded-Proto when the TCP peer is loopback (Caddy on this host). */
  trustProxy: boolean;
  /** The country database file (GATEHOUSE_GEOIP_DB, absolute), unset: none. */
  geoipDb?: string;
  /** Proxies in front of Caddy whose forwarded address it believes (GATEHOUSE_TRUSTED_PROXIES). */
  trustedProxies: string[];
  /** Home gateways: companion ports and timings (seconds unless named ...Ms). */
  gateways: {
    /** GATEHOUSE_SERVER_URL written into gateway.env; default http://<tunnel address>:<port> */
    serverUrl?: string;
    /** also serve the gateway API (only it) on the server's tunnel address at GATEHOUSE_PORT */
    tunnelListen: boolean;
    /**
     * Accept a gateway token on the main listener from any source address. Off (default): a gateway
     * token is accepted only from its own peer's tunnel address, on every listener. The tunnel
     * listener binds tokens to their address regardless.
     */
    tokenAnySource: boolean;
    apiPort: number;
    proxyPort: number;
    pollIntervalS: number;
    heartbeatIntervalS: number;
    offlineAfterMs: number;
    wolTimeoutMs: number;
  };
  /** RDP status checks, session liveness and direct Wake-on-LAN (docs/guides/rdp.md). */
  rdpOps: {
    /** how often every RDP route's reachability is checked */
    statusIntervalMs: number;
    /** time limit of one TCP reachability check */
    checkTimeoutMs: number;
    /** a session without a heartbeat for this long is closed as lost */
    sessionLostAfterMs: number;
    /** UDP port of the magic packets sent directly to a target host */
    wolPort: number;
  };
  /** Server-side fetches (util/outbound.ts, docs/guides/security.md). */
  outbound: {
    /** GATEHOUSE_OUTBOUND_ALLOW_PRIVATE (plus webhooks when GATEHOUSE_WEBHOOK_ALLOW_PRIVATE=true): the uses that may reach loopback, private ranges and this server */
    allowPrivate: OutboundUse[];
  };
  /** Outbound webhooks (docs/guides/webhooks.md). */
  webhooks: {
    /** GATEHOUSE_WEBHOOK_ALLOW_PRIVATE (or webhooks in GATEHOUSE_OUTBOUND_ALLOW_PRIVATE): URLs on loopback, private ranges and this server allowed */
    allowPrivate: boolean;
    /** time limit of one delivery attempt */
    timeoutMs: number;
    /** delay before the first retry; each further retry waits twice as long (capped at 1 h) */
    retryBaseMs: number;
  };
  /** Licence (src/licence): an extra trusted public key (PEM text), the licence service, its grace period, a key activated at start. */
  licence: { publicKey?: string; url?: string; graceDays: number; refreshHours: number; key?: string };
  /** Desktop clients: the release GET /api/v1/client/update announces when the settings name none. */
  client: { version?: string; downloadUrl?: string };
}

export class ConfigError extends Error {}

/** GATEHOUSE_LICENCE_PUBLIC_KEY: PEM text or base64 as is, or the path of a file holding it. */
function readKeySetting(v: string): string {
  if (v.includes('-----BEGIN') || /^[A-Za-z0-9+/]{43}=$/.test(v.trim())) return v;
  try {
    return fs.readFileSync(v, 'utf8');
  } catch (err) {
    throw new ConfigError(`invalid configuration:\n  GATEHOUSE_LICENCE_PUBLIC_KEY: neither a PEM public key nor a readable file (${(err as Error).message})`);
  }
}

/** Reads and validates the environment. Throws ConfigError naming every bad variable. */
/**
 * Older names still read, each with the name that replaced it (docs/reference/environment.md lists
 * them). The new name wins when both are set; the server logs a deprecation warning for each old one
 * in use (deprecatedVariablesIn).
 */
export const DEPRECATED_VARIABLES = {
  GATEHOUSE_LICENSE_PUBLIC_KEY: 'GATEHOUSE_LICENCE_PUBLIC_KEY',
  GATEHOUSE_LICENSE_URL: 'GATEHOUSE_LICENCE_URL',
  GATEHOUSE_LICENSE_GRACE_DAYS: 'GATEHOUSE_LICENCE_GRACE_DAYS',
  GATEHOUSE_LICENSE_REFRESH_HOURS: 'GATEHOUSE_LICENCE_REFRESH_HOURS',
  GATEHOUSE_LICENSE_KEY: 'GATEHOUSE_LICENCE_KEY',
} as const satisfies Record<string, keyof Env>;

/** The deprecated names set in env, each with its replacement (for the start-up warning). */
export function deprecatedVariablesIn(env: NodeJS.ProcessEnv = process.env): { name: string; use: string }[] {
  return Object.entries(DEPRECATED_VARIABLES)
    .filter(([old]) => env[old] !== undefined && env[old] !== '')
    .map(([name, use]) => ({ name, use }));
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const picked: Record<string, string> = {};
  for (const key of Object.keys(schema.shape)) {
    const v = env[key];
    if (v !== undefined && v !== '') picked[key] = v;
  }
  for (const [old, name] of Object.entries(DEPRECATED_VARIABLES)) {
    const v = env[old];
    if (v !== undefined && v !== '' && picked[name] === undefined) picked[name] = v;
  }
  const parsed = schema.safeParse(picked);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${String(i.path[0])}=${JSON.stringify(picked[String(i.path[0])] ?? '')}: ${i.message}`);
    throw new ConfigError(`invalid configuration:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  if (e.GATEHOUSE_CLUSTER && !e.DATABASE_URL) {
    throw new ConfigError(
      'invalid configuration:\n  GATEHOUSE_CLUSTER=true needs DATABASE_URL (PostgreSQL): the nodes of a cluster share one PostgreSQL database; SQLite is one node only',
    );
  }
  const nodeName = e.GATEHOUSE_NODE_NAME ?? os.hostname();
  if (!NODE_NAME_PATTERN.test(nodeName)) {
    throw new ConfigError(
      `invalid configuration:\n  GATEHOUSE_NODE_NAME: unset, and the host name ${JSON.stringify(nodeName)} is not a valid node name; set GATEHOUSE_NODE_NAME`,
    );
  }
  const dataDir = path.resolve(e.GATEHOUSE_DATA_DIR);
  const repoRoot = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..', '..');
  return {
    dataDir,
    port: e.GATEHOUSE_PORT,
    bind: e.GATEHOUSE_BIND,
    httpPort: e.GATEHOUSE_HTTP_PORT,
    httpsPort: e.GATEHOUSE_HTTPS_PORT,
    caddyAdmin: e.GATEHOUSE_CADDY_ADMIN,
    caddyBin: e.GATEHOUSE_CADDY_BIN ?? path.join(repoRoot, 'bin', 'caddy'),
    manageCaddy: e.GATEHOUSE_MANAGE_CADDY,
    accessLogRollMb: e.GATEHOUSE_ACCESS_LOG_ROLL_MB,
    proxyBind: e.GATEHOUSE_PROXY_BIND ?? '',
    adminDomain: e.GATEHOUSE_ADMIN_DOMAIN,
    adminOrigin: e.GATEHOUSE_ADMIN_ORIGIN?.toLowerCase() ?? (e.GATEHOUSE_ADMIN_DOMAIN ? `https://${e.GATEHOUSE_ADMIN_DOMAIN.toLowerCase()}` : undefined),
    tls: e.GATEHOUSE_TLS,
    acmeEmail: e.GATEHOUSE_ACME_EMAIL,
    wg: {
      iface: e.GATEHOUSE_WG_INTERFACE,
      port: e.GATEHOUSE_WG_PORT,
      subnet: e.GATEHOUSE_WG_SUBNET,
      manage: e.GATEHOUSE_WG_MANAGE,
      dns: e.GATEHOUSE_WG_DNS,
      nat: e.GATEHOUSE_WG_NAT,
      pollIntervalMs: e.GATEHOUSE_WG_POLL_INTERVAL * 1000,
      resyncIntervalMs: e.GATEHOUSE_WG_RESYNC_INTERVAL * 1000,
    },
    vrrp: {
      address: e.GATEHOUSE_VRRP_ADDRESS,
      iface: e.GATEHOUSE_VRRP_INTERFACE,
      routerId: e.GATEHOUSE_VRRP_ROUTER_ID,
      priority: e.GATEHOUSE_VRRP_PRIORITY,
      peers: e.GATEHOUSE_VRRP_PEERS,
      stateFile: e.GATEHOUSE_VRRP_STATE_FILE ? path.resolve(e.GATEHOUSE_VRRP_STATE_FILE) : path.join(dataDir, 'vrrp.state'),
      pidFile: e.GATEHOUSE_VRRP_PID_FILE === 'none' ? '' : path.resolve(e.GATEHOUSE_VRRP_PID_FILE),
    },
    publicHost: e.GATEHOUSE_PUBLIC_HOST,
    publicIp: e.GATEHOUSE_PUBLIC_IP,
    dnsDomain: e.GATEHOUSE_DNS_DOMAIN,
    initialAdmin: { user: e.GATEHOUSE_ADMIN_USER, password: e.GATEHOUSE_ADMIN_PASSWORD },
    masterKeyFile: e.GATEHOUSE_MASTER_KEY_FILE ? path.resolve(e.GATEHOUSE_MASTER_KEY_FILE) : path.join(dataDir, 'master.key'),
    databaseUrl: e.DATABASE_URL,
    cluster: { enabled: e.GATEHOUSE_CLUSTER, nodeName },
    logLevel: e.GATEHOUSE_LOG_LEVEL,
    sessionMaxAge: e.GATEHOUSE_SESSION_MAX_AGE,
    rateLimits: {
      login: e.GATEHOUSE_RATE_LIMIT_LOGIN,
      admin: e.GATEHOUSE_RATE_LIMIT_ADMIN,
      client: e.GATEHOUSE_RATE_LIMIT_CLIENT,
      hostname: e.GATEHOUSE_RATE_LIMIT_HOSTNAME,
    },
    trustProxy: e.GATEHOUSE_TRUST_PROXY,
    geoipDb: e.GATEHOUSE_GEOIP_DB ? path.resolve(e.GATEHOUSE_GEOIP_DB) : undefined,
    trustedProxies: e.GATEHOUSE_TRUSTED_PROXIES,
    gateways: {
      serverUrl: e.GATEHOUSE_GATEWAY_SERVER_URL,
      tunnelListen: e.GATEHOUSE_GATEWAY_TUNNEL_LISTEN,
      tokenAnySource: e.GATEHOUSE_GATEWAY_TOKEN_ANY_SOURCE,
      apiPort: e.GATEHOUSE_GATEWAY_API_PORT,
      proxyPort: e.GATEHOUSE_GATEWAY_PROXY_PORT,
      pollIntervalS: e.GATEHOUSE_GATEWAY_POLL_INTERVAL,
      heartbeatIntervalS: e.GATEHOUSE_GATEWAY_HEARTBEAT_INTERVAL,
      offlineAfterMs: e.GATEHOUSE_GATEWAY_OFFLINE_AFTER * 1000,
      wolTimeoutMs: e.GATEHOUSE_GATEWAY_WOL_TIMEOUT * 1000,
    },
    rdpOps: {
      statusIntervalMs: e.GATEHOUSE_RDP_STATUS_INTERVAL * 1000,
      checkTimeoutMs: e.GATEHOUSE_RDP_CHECK_TIMEOUT * 1000,
      sessionLostAfterMs: e.GATEHOUSE_RDP_SESSION_LOST_AFTER * 1000,
      wolPort: e.GATEHOUSE_RDP_WOL_PORT,
    },
    outbound: {
      allowPrivate: [...new Set<OutboundUse>([...e.GATEHOUSE_OUTBOUND_ALLOW_PRIVATE, ...(e.GATEHOUSE_WEBHOOK_ALLOW_PRIVATE ? (['webhooks'] as const) : [])])],
    },
    webhooks: {
      allowPrivate: e.GATEHOUSE_WEBHOOK_ALLOW_PRIVATE || e.GATEHOUSE_OUTBOUND_ALLOW_PRIVATE.includes('webhooks'),
      timeoutMs: e.GATEHOUSE_WEBHOOK_TIMEOUT * 1000,
      retryBaseMs: e.GATEHOUSE_WEBHOOK_RETRY_BASE * 1000,
    },
    licence: {
      publicKey: e.GATEHOUSE_LICENCE_PUBLIC_KEY === undefined ? undefined : readKeySetting(e.GATEHOUSE_LICENCE_PUBLIC_KEY),
      url: e.GATEHOUSE_LICENCE_URL,
      graceDays: e.GATEHOUSE_LICENCE_GRACE_DAYS,
      refreshHours: e.GATEHOUSE_LICENCE_REFRESH_HOURS,
      key: e.GATEHOUSE_LICENCE_KEY,
    },
    client: { version: e.GATEHOUSE_CLIENT_VERSION, downloadUrl: e.GATEHOUSE_CLIENT_DOWNLOAD_URL },
  };
}

/** The variables, for documentation checks (the example env file must name each). */
export const CONFIG_VARIABLES = Object.keys(schema.shape);
