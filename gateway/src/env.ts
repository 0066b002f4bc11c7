// The companion's settings: the gateway.env the server generated (GATEHOUSE_SERVER_URL, tokens,
// ports, tunnel parts), plus optional local settings. Variables already in the process environment
// win over the file (docker run -e, systemd Environment=), like every env-file loader does.
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { isWgKey } from '@gatehouse/common/wireguard/keys.js';
import { GATEWAY_DEFAULTS, GATEWAY_TOKEN_PREFIX, PUSH_TOKEN_PREFIX, parseEnvText, type GatewayEnvValues } from '@gatehouse/common/gateway-protocol.js';

const port = z.coerce.number().int().min(1).max(65535);
const seconds = z.coerce.number().positive().max(86_400);
const bool = z.enum(['1', '0', 'true', 'false', 'yes', 'no', 'on', 'off']).transform((v) => ['1', 'true', 'yes', 'on'].includes(v));
const wgKey = z.string().refine(isWgKey, 'must be a WireGuard key (base64 of 32 bytes)');
const cidr = z.string().regex(/^\d{1,3}(\.\d{1,3}){3}\/\d{1,2}$/, 'must be an IPv4 CIDR such as 10.8.0.5/32');

const schema = z.object({
  // ---- written by the server (gateway.env)
  GATEHOUSE_SERVER_URL: z.string().regex(/^https?:\/\/[^\s/]+(\/\S*)?$/, 'must be an http(s) URL'),
  GATEWAY_PEER_ID: z.coerce.number().int().positive(),
  GATEWAY_API_TOKEN: z.string().startsWith(`${GATEWAY_TOKEN_PREFIX}_`, `must start with ${GATEWAY_TOKEN_PREFIX}_`),
  GATEWAY_PUSH_TOKEN: z.string().startsWith(`${PUSH_TOKEN_PREFIX}_`, `must start with ${PUSH_TOKEN_PREFIX}_`),
  GATEWAY_API_PORT: port.default(GATEWAY_DEFAULTS.apiPort),
  GATEWAY_PROXY_PORT: port.default(GATEWAY_DEFAULTS.proxyPort),
  GATEWAY_POLL_INTERVAL: seconds.default(GATEWAY_DEFAULTS.pollIntervalS),
  GATEWAY_HEARTBEAT_INTERVAL: seconds.default(GATEWAY_DEFAULTS.heartbeatIntervalS),
  GATEWAY_WG_PRIVATE_KEY: wgKey.optional(),
  GATEWAY_WG_ADDRESS: cidr,
  GATEWAY_WG_SERVER_PUBLIC_KEY: wgKey.optional(),
  GATEWAY_WG_PRESHARED_KEY: z.union([wgKey, z.literal('')]).optional(),
  GATEWAY_WG_ENDPOINT: z
    .string()
    .regex(/^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):\d{1,5}$/, 'must be host:port')
    .optional(),
  GATEWAY_WG_ALLOWED_IPS: z.string().optional(),
  GATEWAY_WG_PERSISTENT_KEEPALIVE: z.coerce.number().int().min(0).max(65535).default(GATEWAY_DEFAULTS.keepaliveS),
  // ---- local settings (optional; not in the generated file)
  /** false: the tunnel is managed outside the companion (wg-quick on the host); GATEWAY_WG_* is then only read for the address */
  GATEWAY_WG_MANAGE: bool.default(true),
  GATEWAY_WG_INTERFACE: z
    .string()
    .regex(/^[a-zA-Z0-9_.=+-]{1,15}$/, 'must be an interface name of 1-15 characters')
    .default(GATEWAY_DEFAULTS.wgInterface),
  /** UDP port of the tunnel; default: any free port (the gateway dials out, nothing needs to reach it) */
  GATEWAY_WG_LISTEN_PORT: port.optional(),
  /** where the API, the HTTP proxy and the L4 listeners bind; default: the tunnel address */
  GATEWAY_BIND: z
    .string()
    .refine((v) => net.isIP(v) !== 0, 'must be an IP address')
    .optional(),
  /** last configuration, kept across restarts so the LAN stays served while the server is down */
  GATEWAY_STATE_FILE: z.string().optional(),
  GATEWAY_HOSTNAME: z.string().max(253).optional(),
  /** comma-separated broadcast addresses for Wake-on-LAN (default: the broadcast address of the LAN holding the target) */
  GATEWAY_WOL_BROADCAST: z.string().optional(),
  GATEWAY_WOL_PORT: port.default(9),
  /** ms to wait for a LAN target to accept a connection */
  GATEWAY_LAN_CONNECT_TIMEOUT: z.coerce.number().int().min(100).max(120_000).default(5000),
  /** ms per reachability probe */
  GATEWAY_PROBE_TIMEOUT: z.coerce.number().int().min(100).max(60_000).default(2000),
  GATEWAY_STATUS_INTERVAL: seconds.default(GATEWAY_DEFAULTS.statusIntervalS),
  /** ceiling of the retry back-off after errors (s) */
  GATEWAY_MAX_BACKOFF: seconds.default(300),
  /** filesystem whose usage the heartbeat reports */
  GATEWAY_DISK_PATH: z.string().default('/'),
  GATEWAY_LOG_LEVEL: z.enum(['error', 'warn', 'info', 'debug']).default('info'),
});

/**
 * The companion's settings: the values the server writes into gateway.env (GatewayEnvValues; the
 * intervals here in ms), where the WireGuard keys may be missing when WireGuard is not managed here,
 * plus the companion's own GATEWAY_* settings.
 */
type ServerWgValues = GatewayEnvValues['wg'];
export interface CompanionEnv extends Pick<GatewayEnvValues, 'serverUrl' | 'peerId' | 'apiToken' | 'pushToken' | 'apiPort' | 'proxyPort'> {
  envFile: string | null;
  pollIntervalMs: number;
  heartbeatIntervalMs: number;
  statusIntervalMs: number;
  maxBackoffMs: number;
  wg: Pick<ServerWgValues, 'address' | 'presharedKey' | 'allowedIps' | 'persistentKeepalive'> &
    Partial<Pick<ServerWgValues, 'privateKey' | 'serverPublicKey' | 'endpoint'>> & {
      manage: boolean;
      iface: string;
      listenPort?: number;
    };
  bind: string;
  stateFile: string | null;
  hostname: string;
  wolBroadcast: string[];
  wolPort: number;
  lanConnectTimeoutMs: number;
  probeTimeoutMs: number;
  diskPath: string;
  logLevel: 'error' | 'warn' | 'info' | 'debug';
}

export class EnvError extends Error {}

/** Reads the env file (when given) under the process environment and validates everything. */
export function loadEnv(envFile: string | null, processEnv: NodeJS.ProcessEnv = process.env): CompanionEnv {
  let fileValues: Record<string, string> = {};
  if (envFile) {
    let text: string;
    try {
      text = fs.readFileSync(envFile, 'utf8');
    } catch (err) {
      throw new EnvError(`cannot read ${envFile}: ${(err as Error).message}`);
    }
    try {
      fileValues = parseEnvText(text);
    } catch (err) {
      throw new EnvError(`${envFile}: ${(err as Error).message}`);
    }
  }
  const picked: Record<string, string> = {};
  for (const key of Object.keys(schema.shape)) {
    const v = processEnv[key] ?? fileValues[key];
    if (v !== undefined && v !== '') picked[key] = v;
  }
  const r = schema.safeParse(picked);
  if (!r.success) {
    const lines = r.error.issues.map((i) => `  ${String(i.path[0])}: ${i.message}`);
    throw new EnvError(`invalid gateway settings${envFile ? ` (${envFile})` : ''}:\n${lines.join('\n')}`);
  }
  const e = r.data;
  if (e.GATEWAY_WG_MANAGE) {
    const missing = (['GATEWAY_WG_PRIVATE_KEY', 'GATEWAY_WG_SERVER_PUBLIC_KEY', 'GATEWAY_WG_ENDPOINT', 'GATEWAY_WG_ALLOWED_IPS'] as const).filter((k) => !e[k]);
    if (missing.length) throw new EnvError(`invalid gateway settings: ${missing.join(', ')} required to bring up the tunnel (or set GATEWAY_WG_MANAGE=false)`);
  }
  const allowedIps = (e.GATEWAY_WG_ALLOWED_IPS ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const c of allowedIps)
    if (!/^\d{1,3}(\.\d{1,3}){3}\/\d{1,2}$/.test(c)) throw new EnvError(`invalid gateway settings: GATEWAY_WG_ALLOWED_IPS: "${c}" is not an IPv4 CIDR`);
  const defaultState = envFile ? path.join(path.dirname(path.resolve(envFile)), 'gateway-state.json') : null;
  return {
    envFile,
    serverUrl: e.GATEHOUSE_SERVER_URL.replace(/\/+$/, ''),
    peerId: e.GATEWAY_PEER_ID,
    apiToken: e.GATEWAY_API_TOKEN,
    pushToken: e.GATEWAY_PUSH_TOKEN,
    apiPort: e.GATEWAY_API_PORT,
    proxyPort: e.GATEWAY_PROXY_PORT,
    pollIntervalMs: Math.round(e.GATEWAY_POLL_INTERVAL * 1000),
    heartbeatIntervalMs: Math.round(e.GATEWAY_HEARTBEAT_INTERVAL * 1000),
    statusIntervalMs: Math.round(e.GATEWAY_STATUS_INTERVAL * 1000),
    maxBackoffMs: Math.round(e.GATEWAY_MAX_BACKOFF * 1000),
    wg: {
      manage: e.GATEWAY_WG_MANAGE,
      iface: e.GATEWAY_WG_INTERFACE,
      listenPort: e.GATEWAY_WG_LISTEN_PORT,
      privateKey: e.GATEWAY_WG_PRIVATE_KEY,
      address: e.GATEWAY_WG_ADDRESS,
      serverPublicKey: e.GATEWAY_WG_SERVER_PUBLIC_KEY,
      presharedKey: e.GATEWAY_WG_PRESHARED_KEY || undefined,
      endpoint: e.GATEWAY_WG_ENDPOINT,
      allowedIps,
      persistentKeepalive: e.GATEWAY_WG_PERSISTENT_KEEPALIVE,
    },
    bind: e.GATEWAY_BIND ?? e.GATEWAY_WG_ADDRESS.split('/')[0],
    stateFile: e.GATEWAY_STATE_FILE ?? defaultState,
    hostname: e.GATEWAY_HOSTNAME ?? os.hostname(),
    wolBroadcast: (e.GATEWAY_WOL_BROADCAST ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    wolPort: e.GATEWAY_WOL_PORT,
    lanConnectTimeoutMs: e.GATEWAY_LAN_CONNECT_TIMEOUT,
    probeTimeoutMs: e.GATEWAY_PROBE_TIMEOUT,
    diskPath: e.GATEWAY_DISK_PATH,
    logLevel: e.GATEWAY_LOG_LEVEL,
  };
}
