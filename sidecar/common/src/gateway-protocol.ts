// The contract between the server (sidecar/src/gateways) and the gateway companion (gateway/):
// token prefixes, the gateway.env keys and their rendering and parsing, the configuration the
// companion receives, and the zod schemas of everything the companion sends. Both sides import it
// from @gatehouse/common; it depends on zod only and does no I/O.
import { z } from 'zod';

/** Gateway API token (companion → server): `gthgw_<43 base64url chars>`, stored as SHA-256 only. */
export const GATEWAY_TOKEN_PREFIX = 'gthgw';
/** Push token (server → companion API): `gthgp_<43 base64url chars>`, stored sealed (the server presents it). */
export const PUSH_TOKEN_PREFIX = 'gthgp';

/** Defaults of the companion's ports and timings (the server writes the effective values into gateway.env). */
export const GATEWAY_DEFAULTS = {
  apiPort: 9876,
  proxyPort: 8080,
  pollIntervalS: 10,
  heartbeatIntervalS: 15,
  statusIntervalS: 60,
  wgInterface: 'gatehouse0',
  keepaliveS: 25,
} as const;

/** Response header the companion sets when it could not reach a route's LAN target (Caddy matches it for Wake-on-LAN). */
export const LAN_ERROR_HEADER = 'X-Gatehouse-Gateway-Error';
export const LAN_ERROR_VALUE = 'lan-unreachable';
/** Request header Caddy sets when it hands a request to the sidecar's waking-up page. */
export const WOL_ROUTE_HEADER = 'X-Gatehouse-Wol-Route';
/** The sidecar's waking-up page (public path; Caddy forwards LAN-unreachable answers of WoL routes there). */
export const WOL_WAIT_PATH = '/gateway-wol/wait';

export const CONFIG_HASH_RE = /^sha256:[0-9a-f]{64}$/;

// ---------------------------------------------------------------------------------------------
// gateway.env

/** Every key of gateway.env, in the order the server writes them. */
export const ENV_KEYS = [
  'GATEHOUSE_SERVER_URL',
  'GATEWAY_PEER_ID',
  'GATEWAY_API_TOKEN',
  'GATEWAY_PUSH_TOKEN',
  'GATEWAY_API_PORT',
  'GATEWAY_PROXY_PORT',
  'GATEWAY_POLL_INTERVAL',
  'GATEWAY_HEARTBEAT_INTERVAL',
  'GATEWAY_WG_PRIVATE_KEY',
  'GATEWAY_WG_ADDRESS',
  'GATEWAY_WG_SERVER_PUBLIC_KEY',
  'GATEWAY_WG_PRESHARED_KEY',
  'GATEWAY_WG_ENDPOINT',
  'GATEWAY_WG_ALLOWED_IPS',
  'GATEWAY_WG_PERSISTENT_KEEPALIVE',
] as const;
export type EnvKey = (typeof ENV_KEYS)[number];

export interface GatewayEnvValues {
  serverUrl: string;
  peerId: number;
  apiToken: string;
  pushToken: string;
  apiPort: number;
  proxyPort: number;
  pollIntervalS: number;
  heartbeatIntervalS: number;
  wg: {
    privateKey: string;
    /** the gateway's tunnel address with prefix, e.g. 10.8.0.5/32 */
    address: string;
    serverPublicKey: string;
    presharedKey?: string;
    /** server host:port */
    endpoint: string;
    /** CIDRs routed into the tunnel (the VPN subnet) */
    allowedIps: string[];
    persistentKeepalive: number;
  };
}

const SAFE_VALUE = /^[A-Za-z0-9_+/=:.,[\]@-]*$/;

/** One KEY=VALUE line; values outside a conservative character set are double-quoted and escaped. */
function envLine(key: string, value: string | number): string {
  const v = String(value);
  if (/[\r\n\0]/.test(v)) throw new Error(`${key}: value must not contain line breaks or NUL`);
  return SAFE_VALUE.test(v) ? `${key}=${v}` : `${key}="${v.replace(/(["\\$`])/g, '\\$1')}"`;
}

/** The text of a complete gateway.env. `comment` lines go on top (each prefixed with "# "). */
export function renderGatewayEnv(v: GatewayEnvValues, comment: string[] = []): string {
  const values: Record<EnvKey, string | number> = {
    GATEHOUSE_SERVER_URL: v.serverUrl,
    GATEWAY_PEER_ID: v.peerId,
    GATEWAY_API_TOKEN: v.apiToken,
    GATEWAY_PUSH_TOKEN: v.pushToken,
    GATEWAY_API_PORT: v.apiPort,
    GATEWAY_PROXY_PORT: v.proxyPort,
    GATEWAY_POLL_INTERVAL: v.pollIntervalS,
    GATEWAY_HEARTBEAT_INTERVAL: v.heartbeatIntervalS,
    GATEWAY_WG_PRIVATE_KEY: v.wg.privateKey,
    GATEWAY_WG_ADDRESS: v.wg.address,
    GATEWAY_WG_SERVER_PUBLIC_KEY: v.wg.serverPublicKey,
    GATEWAY_WG_PRESHARED_KEY: v.wg.presharedKey ?? '',
    GATEWAY_WG_ENDPOINT: v.wg.endpoint,
    GATEWAY_WG_ALLOWED_IPS: v.wg.allowedIps.join(','),
    GATEWAY_WG_PERSISTENT_KEEPALIVE: v.wg.persistentKeepalive,
  };
  const head = comment.map((c) => `# ${c.replace(/[\r\n]+/g, ' ')}`);
  const section = (title: string, keys: EnvKey[]) => [``, `# ${title}`, ...keys.map((k) => envLine(k, values[k]))];
  return (
    [
      ...head,
      ...section("Server API (plain HTTP inside the WireGuard tunnel) and this gateway's identity", ['GATEHOUSE_SERVER_URL', 'GATEWAY_PEER_ID']),
      ...section('Tokens: the API token authenticates this gateway to the server, the push token authenticates the server to this gateway', [
        'GATEWAY_API_TOKEN',
        'GATEWAY_PUSH_TOKEN',
      ]),
      ...section('Companion ports (on the tunnel address) and timings in seconds', [
        'GATEWAY_API_PORT',
        'GATEWAY_PROXY_PORT',
        'GATEWAY_POLL_INTERVAL',
        'GATEWAY_HEARTBEAT_INTERVAL',
      ]),
      ...section('WireGuard tunnel to the server', [
        'GATEWAY_WG_PRIVATE_KEY',
        'GATEWAY_WG_ADDRESS',
        'GATEWAY_WG_SERVER_PUBLIC_KEY',
        'GATEWAY_WG_PRESHARED_KEY',
        'GATEWAY_WG_ENDPOINT',
        'GATEWAY_WG_ALLOWED_IPS',
        'GATEWAY_WG_PERSISTENT_KEEPALIVE',
      ]),
    ]
      .join('\n')
      .replace(/^\n/, '') + '\n'
  );
}

/**
 * Parses env-file text (KEY=VALUE lines, `export ` prefix allowed, # comments, values bare, in
 * single quotes (literal) or double quotes (backslash escapes)). Throws on a malformed line.
 */
export function parseEnvText(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  const lines = text.split(/\r?\n/);
  lines.forEach((raw, i) => {
    const line = raw.trim();
    if (!line || line.startsWith('#')) return;
    const m = /^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$/.exec(line);
    if (!m) throw new Error(`line ${i + 1}: expected KEY=VALUE`);
    let v = m[2];
    if (v.startsWith('"')) {
      const end = /^"((?:[^"\\]|\\.)*)"\s*(#.*)?$/.exec(v);
      if (!end) throw new Error(`line ${i + 1}: unterminated double quote`);
      v = end[1].replace(/\\(.)/g, (_s, c: string) => (c === 'n' ? '\n' : c));
    } else if (v.startsWith("'")) {
      const end = /^'([^']*)'\s*(#.*)?$/.exec(v);
      if (!end) throw new Error(`line ${i + 1}: unterminated single quote`);
      v = end[1];
    } else {
      v = v.replace(/\s+#.*$/, '').trim();
    }
    out[m[1]] = v;
  });
  return out;
}

// ---------------------------------------------------------------------------------------------
// configuration (server → companion)

export const gatewayRouteConfig = z.object({
  id: z.number().int(),
  domain: z.string(),
  route_type: z.enum(['http', 'l4']),
  /** l4 routes: tcp or udp; http routes: null */
  l4_protocol: z.enum(['tcp', 'udp']).nullable(),
  target_lan_host: z.string(),
  target_lan_port: z.number().int(),
  /** l4 routes: the port the companion listens on (its tunnel address); http routes: null (served by the proxy port) */
  listen_port: z.number().int().nullable(),
  /** http routes: speak TLS to the LAN target (certificate not verified, the domain is sent as SNI) */
  backend_https: z.boolean(),
  wol_enabled: z.boolean(),
  wol_mac: z.string().nullable(),
});
export type GatewayRouteConfig = z.infer<typeof gatewayRouteConfig>;

export const gatewayListenerConfig = z.object({
  route_id: z.number().int(),
  port: z.number().int(),
  target_host: z.string(),
  target_port: z.number().int(),
});
export type GatewayListenerConfig = z.infer<typeof gatewayListenerConfig>;

/** What GET /api/v1/gateway/config returns (besides ok and config_hash, which covers everything else). */
export const gatewayConfig = z.object({
  peer_id: z.number().int(),
  proxy_port: z.number().int(),
  routes: z.array(gatewayRouteConfig),
  tcp_listeners: z.array(gatewayListenerConfig),
  udp_listeners: z.array(gatewayListenerConfig),
});
export type GatewayConfig = z.infer<typeof gatewayConfig>;

/**
 * The port the companion listens on for an L4 gateway route: the route's own public listen port.
 * Public L4 ports are unique per protocol across all routes, so they are unique per gateway too;
 * the companion binds them on its tunnel address only.
 */
export function gatewayListenPort(route: { route_type: string; l4_listen_port: number | null }): number | null {
  return route.route_type === 'l4' ? route.l4_listen_port : null;
}

// ---------------------------------------------------------------------------------------------
// what the companion sends

const nonNegInt = z.number().int().min(0);
const nonNeg = z.number().min(0);
const shortText = (max = 128) => z.string().max(max);

export const telemetrySchema = z.looseObject({
  gateway_version: shortText(64),
  node_version: shortText(64),
  wg_tools_version: shortText(128).nullable(),
  cpu_cores: z.number().int().min(1).max(4096),
  cpu_load_avg: z.tuple([nonNeg, nonNeg, nonNeg]),
  mem_total: nonNeg,
  mem_free: nonNeg,
  mem_used: nonNeg,
  disk: z.looseObject({ total: nonNeg, free: nonNeg, used: nonNeg }).nullable(),
  os_platform: shortText(64),
  os_release: shortText(128),
  arch: shortText(32),
  dns_resolvers: z.array(shortText(64)).max(32),
  default_gateway_ip: shortText(64).nullable(),
});

/**
 * POST /api/v1/gateway/heartbeat. Every field of the API's heartbeat payload is required.
 * Nullable where the companion cannot know yet: wg_handshake_age_s (no handshake so far),
 * config_hash (no configuration received yet), route latency_ms (target unreachable).
 * Unknown extra fields are kept (the payload is stored whole).
 */
export const heartbeatSchema = z
  .looseObject({
    uptime_s: nonNegInt,
    http_proxy_healthy: z.boolean(),
    api_healthy: z.boolean(),
    dns_resolve_ok: z.boolean(),
    overall_healthy: z.boolean(),
    tcp_listeners: z.array(z.looseObject({ port: z.number().int().min(1).max(65535), status: shortText(32) })).max(10_000),
    wg_handshake_age_s: nonNegInt.nullable(),
    route_reachability: z.array(z.looseObject({ route_id: z.number().int().positive(), reachable: z.boolean(), latency_ms: nonNeg.nullable() })).max(10_000),
    hostname: shortText(253),
    config_hash: z.string().regex(CONFIG_HASH_RE, 'must be sha256: followed by 64 hex digits').nullable(),
    telemetry: telemetrySchema,
  })
  .refine((v) => JSON.stringify(v).length <= 256 * 1024, 'the heartbeat must be at most 256 KB of JSON');
export type Heartbeat = z.infer<typeof heartbeatSchema>;

/** POST /api/v1/gateway/status: a traffic snapshot (not a heartbeat). */
export const statusSchema = z.strictObject({
  rx_bytes: nonNegInt,
  tx_bytes: nonNegInt,
  active_connections: nonNegInt,
});
export type GatewayTrafficStatus = z.infer<typeof statusSchema>;

/** The companion API's Wake-on-LAN request (server → companion, push token). */
export const wolRequestSchema = z.object({
  mac: z.string().regex(/^[0-9A-Fa-f]{2}([:-]?)[0-9A-Fa-f]{2}(\1[0-9A-Fa-f]{2}){4}$/, 'must be a MAC address'),
  /** the LAN host to wake: its subnet's broadcast address is used when the companion has an interface on it */
  target_host: z.string().max(253).optional(),
  route_id: z.number().int().positive().optional(),
  /** packets to send (spaced 100 ms apart; magic packets are not acknowledged) */
  count: z.number().int().min(1).max(10).optional(),
});
export type WolRequest = z.infer<typeof wolRequestSchema>;

/**
 * The companion API's disconnect request (server → companion, push token): close every live
 * connection of the route's TCP listener (RDP disconnect-all in gateway mode); the listener stays.
 */
export const disconnectRequestSchema = z.object({ route_id: z.number().int().positive() });
export type DisconnectRequest = z.infer<typeof disconnectRequestSchema>;

/** "AA:BB:CC:DD:EE:FF" (or with dashes / without separators) → the 102-byte magic packet: 6 × 0xFF, then the MAC 16 times. */
export function magicPacket(mac: string): Buffer {
  const hex = mac.replace(/[:-]/g, '');
  if (!/^[0-9A-Fa-f]{12}$/.test(hex)) throw new Error(`not a MAC address: ${mac}`);
  const m = Buffer.from(hex, 'hex');
  const out = Buffer.alloc(6 + 16 * 6, 0xff);
  for (let i = 0; i < 16; i++) m.copy(out, 6 + i * 6);
  return out;
}
