// Request and response shapes of the desktop client API (/api/v1/client/*, except the RDP ones in
// src/rdp/client-endpoints.ts), of the admin's view of registered machines and of the client
// settings (split-tunnel default, update announcement). Validation and the OpenAPI document come
// from these objects; docs/guides/desktop-client.md describes the behaviour.
import { z } from 'zod';
import { CONFIG_HASH_RE } from '@gatehouse/common/gateway-protocol.js';
import { parseIPv4 } from '@gatehouse/common/wireguard/ipv4.js';
import { queryInt, text, UNPROCESSABLE } from '../http/fields.js';
import { IPV4_CIDR, LABELS, whole } from '../http/patterns.js';
import { SCOPES } from '../http/scopes.js';
import { chartPoint, hostnameValue } from '../peers/schema.js';
import { fieldIssue, fieldText } from '../http/messages.js';
import { msg } from '@gatehouse/common/messages/index.js';

/** Largest JSON text of a POST /client/status body that is stored. */
export const STATUS_MAX_BYTES = 16 * 1024;

const isoDate = z.string().meta({ format: 'date-time' });
const count = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);

/** An IPv4 CIDR such as 192.168.1.0/24 (host bits are cleared: 192.168.1.7/24 → 192.168.1.0/24). */
export const ipv4Cidr = z
  .string()
  .max(18, 'at most 18 characters')
  .regex(whole(`\\s*${IPV4_CIDR}\\s*`), 'an IPv4 CIDR such as 192.168.1.0/24')
  .transform((v, ctx) => {
    const [ip, bits, extra] = v.trim().split('/');
    const n = parseIPv4(ip);
    if (n === null || extra !== undefined || !/^\d{1,2}$/.test(bits ?? '') || Number(bits) > 32) {
      ctx.addIssue(fieldIssue(msg('field.not_ipv4_cidr', { value: v.slice(0, 20) })));
      return z.NEVER;
    }
    const b = Number(bits);
    const size = 2 ** (32 - b);
    const base = b === 0 ? 0 : Math.floor(n / size) * size;
    return `${[24, 16, 8, 0].map((s) => (base >>> s) & 255).join('.')}/${b}`;
  });

/** The ranges a client routes into the tunnel (its config's AllowedIPs, besides the VPN subnet). */
export const splitTunnelList = z
  .array(ipv4Cidr)
  .min(1, 'at least one CIDR (0.0.0.0/0 for a full tunnel)')
  .max(64, 'at most 64 CIDRs')
  .meta({ description: 'IPv4 CIDRs routed into the tunnel; 0.0.0.0/0 = full tunnel. The VPN subnet is always added.' });

// ---------------------------------------------------------------- requests

const fingerprintValue = z
  .string({ error: (i) => (i.input === undefined ? 'required: the machine fingerprint' : 'must be text') })
  .max(512, 'at most 512 characters')
  .regex(/\S/, 'required: the machine fingerprint')
  .meta({
    description:
      "the machine's fingerprint: a token is bound to the first machine that uses it; with the token it names the machine (hashed, never stored as sent)",
  });
/** The machine endpoints (register, config, heartbeat, ...) need the fingerprint header. */
export const machineHeaders = z.object({ 'X-Machine-Fingerprint': fingerprintValue });
/** The other client endpoints read it when sent (a bound token needs it; `registered`, the own peer). */
export const optionalMachineHeaders = z.object({ 'X-Machine-Fingerprint': fingerprintValue.optional() });

export const registerBody = z.strictObject({
  hostname: text({ min: 1, max: 255 }).meta({ description: "the machine's hostname; the new peer is named after it (made unique)" }),
  platform: text({ min: 1, max: 64 }).meta({ description: 'e.g. linux-x64, windows-x64, darwin-arm64' }),
  client_version: text({ min: 1, max: 64 }),
});
export type RegisterInput = z.infer<typeof registerBody>;

export const configCheckQuery = z.strictObject({
  hash: z.string().regex(CONFIG_HASH_RE, 'must be sha256: followed by 64 hex digits').optional().meta({ description: 'the config_hash the client holds' }),
});

export const heartbeatBody = z.strictObject({
  handshake_age_s: z
    .number()
    .int()
    .min(0)
    .max(10 * 365 * 86400)
    .nullable()
    .meta({ description: 'seconds since the last WireGuard handshake (null: none yet)' }),
  rx_bytes: count,
  tx_bytes: count,
  hostname: text({ min: 1, max: 255 }).optional().meta({ description: "the machine's hostname, when it changed" }),
});
export type HeartbeatInput = z.infer<typeof heartbeatBody>;

/** Any JSON object of at most STATUS_MAX_BYTES; the known fields are validated when present. */
export const statusBody = z
  .looseObject({
    os: text({ max: 128 }).optional(),
    os_version: text({ max: 128 }).optional(),
    uptime_s: count.optional(),
    tunnel: z.looseObject({ up: z.boolean().optional(), interface: text({ max: 64 }).optional(), endpoint: text({ max: 255 }).optional() }).optional(),
  })
  .meta({
    description: `Detailed device status: any JSON object of at most ${STATUS_MAX_BYTES} bytes, stored as the machine's last status (os, os_version, uptime_s, tunnel {up, interface, endpoint} are checked when present)`,
  });

export const hostnameReportBody = z.strictObject({
  hostname: hostnameValue.nullable().meta({ description: 'the DNS name to publish for this peer under the internal zone; empty or null clears an agent name' }),
});

export const peerInfoQuery = z.strictObject({ peerId: queryInt(1, 2_147_483_647, fieldText('schema.a_peer_id')) });

export const trafficQuery = z.strictObject({ period: z.enum(['1h', '24h', '7d', '30d']).default('24h') });

const DOMAIN_LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;
export const dnsCheckQuery = z.strictObject({
  domain: z
    .string()
    .max(253, 'at most 253 characters')
    .regex(whole(`\\s*${LABELS}\\.?\\s*`), 'a DNS name: letters, digits and hyphens in dot-separated labels of at most 63 characters')
    .trim()
    .min(1, 'required')
    .transform((v) => v.toLowerCase().replace(/\.$/, ''))
    .refine((v) => v.split('.').every((l) => DOMAIN_LABEL.test(l)), 'a DNS name: letters, digits and hyphens in dot-separated labels of at most 63 characters'),
});

export const clientSettingsBody = z
  .strictObject({
    split_tunnel: splitTunnelList.nullable().meta({ description: 'the server default; null = only the VPN subnet' }),
    update: z
      .strictObject({
        version: text({ min: 1, max: 64 }),
        download_url: z
          .string()
          .max(2048)
          .regex(/^https?:\/\/[^\s/]+(\/\S*)?$/, 'must be an http(s) URL'),
        notes: text({ max: 4000, multiline: true }).nullable().optional(),
      })
      .nullable()
      .meta({ description: 'what GET /client/update announces; null = the environment (GATEHOUSE_CLIENT_VERSION, GATEHOUSE_CLIENT_DOWNLOAD_URL)' }),
  })
  .partial()
  .refine((v) => Object.keys(v).length > 0, { message: 'nothing to update', params: UNPROCESSABLE });

export const machinesQuery = z.strictObject({
  delete_peer: z.enum(['true', 'false', '1', '0']).optional().meta({ description: "also delete the machine's peer (default false: the peer is kept)" }),
});

// ---------------------------------------------------------------- responses

/** A registered machine. */
export const machineView = z
  .object({
    id: z.number().int(),
    token_id: z.number().int(),
    peer_id: z.number().int().nullable(),
    peer_name: z.string().nullable(),
    peer_address: z.string().nullable(),
    hostname: z.string(),
    hostname_source: z.enum(['agent', 'admin']),
    platform: z.string(),
    client_version: z.string(),
    last_seen_at: isoDate.nullable(),
    handshake_age_s: z.number().int().nullable(),
    rx_bytes: z.number().nullable(),
    tx_bytes: z.number().nullable(),
    status: z.record(z.string(), z.unknown()).nullable().meta({ description: 'the last POST /client/status body' }),
    status_at: isoDate.nullable(),
    created_at: isoDate,
  })
  .meta({ description: 'A machine registered with a client token' });

export type MachineView = z.infer<typeof machineView>;

const peerBrief = z.object({ id: z.number().int(), name: z.string(), address: z.string(), enabled: z.boolean() });

export const pingResponse = z.object({
  ok: z.literal(true),
  version: z.string().meta({ description: 'server version' }),
  api: z.literal('v1'),
  server_time: z.number().int().meta({ description: 'epoch ms' }),
  registered: z.boolean().meta({ description: 'this machine (token + fingerprint) is registered' }),
});

export const permissionsResponse = z.object({
  ok: z.literal(true),
  token: z.object({ id: z.number().int(), name: z.string(), scopes: z.array(z.enum(SCOPES)), expires_at: isoDate.nullable(), fingerprint_bound: z.boolean() }),
  user: z.object({ id: z.number().int(), username: z.string() }).nullable().meta({ description: 'the user the token acts as (bound user, else its creator)' }),
  bound_peer_id: z.number().int().nullable().meta({ description: 'the peer an admin bound the token to (register uses it instead of creating one)' }),
  machine: z.object({ id: z.number().int(), peer_id: z.number().int().nullable() }).nullable(),
  can: z.object({
    register: z.boolean(),
    tunnel: z.boolean().meta({ description: 'has a peer: config, config/check, heartbeat, traffic' }),
    hostname: z.boolean().meta({ description: 'peer/hostname is applied (internal DNS licensed and the peer has no admin hostname)' }),
    rdp: z.boolean().meta({ description: 'the licence has remote_desktop' }),
    dns_check: z.literal(true),
  }),
  features: z.object({ remote_desktop: z.boolean(), internal_dns: z.boolean() }),
});

export const registerResponse = z.object({
  ok: z.literal(true),
  created: z.boolean().meta({ description: 'true (201) when this machine registered now; false (200) when it was registered already' }),
  machine: machineView,
  peer: peerBrief,
  config_hash: z.string(),
});

export const configResponse = z.object({
  ok: z.literal(true),
  peer_id: z.number().int(),
  filename: z.string(),
  config: z.string().meta({ description: 'the wg-quick configuration text' }),
  config_hash: z.string().meta({ description: '"sha256:" + SHA-256 (hex) of exactly the config text' }),
  allowed_ips: z.array(z.string()),
});

export const configCheckResponse = z.object({ ok: z.literal(true), changed: z.literal(true), config_hash: z.string() });

export const heartbeatResponse = z.object({
  ok: z.literal(true),
  config_hash: z.string().meta({ description: 'the current config_hash (a client that holds another fetches GET /client/config)' }),
  server_time: z.number().int(),
});

export const statusResponse = z.object({ ok: z.literal(true), stored_bytes: z.number().int(), status_at: isoDate });

export const hostnameReportResponse = z.object({
  ok: z.literal(true),
  applied: z.boolean(),
  reason: z.string().optional(),
  hostname: z.string().nullable().meta({ description: "the peer's hostname now" }),
  hostname_source: z.enum(['admin', 'agent']).nullable(),
  fqdn: z.string().nullable(),
});

export const peerInfoResponse = z.object({
  ok: z.literal(true),
  peer: z.object({
    id: z.number().int(),
    name: z.string(),
    address: z.string(),
    hostname: z.string().nullable(),
    fqdn: z.string().nullable(),
    online: z.boolean(),
    is_gateway: z.boolean(),
  }),
});

export const trafficResponse = z.object({
  ok: z.literal(true),
  peer_id: z.number().int(),
  period: z.enum(['1h', '24h', '7d', '30d']),
  step_ms: z.number().int(),
  from: z.number().int(),
  to: z.number().int(),
  points: z.array(chartPoint),
  total_rx: z.number(),
  total_tx: z.number(),
});

export const serviceView = z.object({
  route_id: z.number().int(),
  name: z.string().meta({ description: 'the domain (HTTP) or the domain label of the L4 route' }),
  description: z.string().nullable(),
  route_type: z.enum(['http', 'l4']),
  protocol: z.enum(['http', 'https', 'tcp', 'udp']),
  url: z.string().nullable().meta({ description: 'http(s)://domain for HTTP routes' }),
  host: z.string().meta({ description: 'the host to connect to' }),
  port: z.number().int().nullable(),
  access: z.enum(['acl', 'user', 'open']).meta({
    description: "acl: the route's ACL lists this client's peer; user: the route lists the token's user (route sign-in); open: no ACL and no sign-in",
  }),
  requires_login: z.boolean(),
});
export const servicesResponse = z.object({ ok: z.literal(true), peer_id: z.number().int().nullable(), services: z.array(serviceView) });

export const dnsCheckResponse = z.object({
  ok: z.literal(true),
  domain: z.string(),
  found: z.boolean(),
  source: z.enum(['internal', 'system']).meta({ description: "internal: a name of the internal DNS zone (peer hostnames); system: the server's resolver" }),
  addresses: z.array(z.object({ address: z.string(), family: z.union([z.literal(4), z.literal(6)]) })),
  error: z.string().nullable().meta({ description: 'why nothing was found (e.g. ENOTFOUND, ETIMEOUT)' }),
  duration_ms: z.number().int(),
});

/** The split tunnel a token's desktop client gets. */
const splitTunnel = z.object({
  allowed_ips: z.array(z.string()).meta({ description: 'what the config routes into the tunnel: the VPN subnet plus the effective ranges' }),
  ranges: z.array(z.string()).meta({ description: 'the effective ranges (without the VPN subnet)' }),
  source: z
    .enum(['token', 'server', 'default'])
    .meta({ description: "token: the token's override; server: the server default setting; default: none set (VPN subnet only)" }),
  full_tunnel: z.boolean(),
  vpn_subnet: z.string(),
});
export type SplitTunnel = z.infer<typeof splitTunnel>;
export const splitTunnelResponse = z.object({ ok: z.literal(true), ...splitTunnel.shape });

/** The desktop client version the server announces. */
const updateInfo = z.object({
  version: z.string(),
  download_url: z.string().nullable(),
  notes: z.string().nullable(),
  source: z.enum(['settings', 'env', 'server']).meta({
    description: 'settings: PUT /settings/client; env: GATEHOUSE_CLIENT_VERSION/GATEHOUSE_CLIENT_DOWNLOAD_URL; server: nothing configured, the server version',
  }),
});
export type UpdateInfo = z.infer<typeof updateInfo>;
export const updateResponse = z.object({ ok: z.literal(true), ...updateInfo.shape });

export const machinesResponse = z.object({ ok: z.literal(true), machines: z.array(machineView) });
export const machineDeletedResponse = z.object({
  ok: z.literal(true),
  deleted: z.object({ id: z.number().int(), peer_deleted: z.boolean(), peer_id: z.number().int().nullable() }),
});

export const clientSettingsResponse = z.object({
  ok: z.literal(true),
  client: z.object({
    split_tunnel: z.array(z.string()).nullable(),
    update: z.object({ version: z.string(), download_url: z.string(), notes: z.string().nullable() }).nullable(),
    env_update: z.object({ version: z.string().nullable(), download_url: z.string().nullable() }),
  }),
});
