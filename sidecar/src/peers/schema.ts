// Request schemas of the peers API (validation and the OpenAPI document come from the same objects).
import { z } from 'zod';
import { itemMessageFields } from '@gatehouse/common/messages/ref.js';
import { ignoringReadOnly, storedResourceFields } from '../http/input.js';
import { codePoints, dateInput, paging, queryBool, searchText, sortValues, text } from '../http/fields.js';
import { HOST_NAME, IPV4, IPV4_CIDR, IPV6, LABELS, whole } from '../http/patterns.js';
import { tagList, tagName } from '../tags/names.js';
import { parseIPv4 } from '@gatehouse/common/wireguard/ipv4.js';
import { fieldIssue, fieldText } from '../http/messages.js';
import { msg } from '@gatehouse/common/messages/index.js';
import { normalizeCidr } from './cidr.js';
import { speedLimit } from '../shaping/schema.js';
import { quota, quotaState, quotaView } from '../quotas/schema.js';
import { accessSchedule, accessScheduleView, accessState } from '../access-windows/schema.js';
import { issuedTokens } from '../gateways/schema.js';

export const NAME_MAX = 64;
export const DESCRIPTION_MAX = 500;

/** Letters and digits of any script, space and . _ - @ ( ) + ' ; starts with a letter or digit. */
const NAME_RE = /^[\p{L}\p{N}][\p{L}\p{N}\p{M} ._@()+'-]*$/u;

export const peerName = z
  .string()
  .refine((v) => codePoints(v) <= NAME_MAX, fieldText('field.max_chars', { max: NAME_MAX }))
  .refine(
    (v) => /^\s*(?:[\p{L}\p{N}][\p{L}\p{N}\p{M} ._@()+'-]*)?\s*$/u.test(v),
    "letters, digits, spaces and . _ - @ ( ) + ' only, starting with a letter or digit",
  )
  .trim()
  .min(1, 'required')
  // after trimming: the pattern above already says it of the value as sent
  .refine((v) => NAME_RE.test(v), "letters, digits, spaces and . _ - @ ( ) + ' only, starting with a letter or digit")
  .meta({ maxLength: NAME_MAX, pattern: "^\\s*[\\p{L}\\p{N}][\\p{L}\\p{N}\\p{M} ._@()+'-]*\\s*$" });

export const description = text({ max: DESCRIPTION_MAX, multiline: true, trim: false });

const HOST_LABEL = /^(?!-)[A-Za-z0-9-]{1,63}(?<!-)$/;
function isDnsEntry(v: string): boolean {
  if (parseIPv4(v) !== null) return true;
  if (v.includes(':')) return /^[0-9A-Fa-f:.]+$/.test(v) && v.length <= 45; // IPv6 server
  const labels = v.split('.');
  return v.length <= 253 && labels.every((l) => HOST_LABEL.test(l)) && !/^\d+$/.test(labels[labels.length - 1]); // search domain (a last label of digits only is a broken IPv4 address)
}

/** DNS servers (and search domains) for the client config: comma-separated IPs or domains. */
const DNS_ITEM = `(?:${IPV4}|${IPV6}|(?=[^,\\s]{1,253}(?:[,\\s]|$))${HOST_NAME})`;
export const dnsList = z
  .string()
  .max(255, 'at most 255 characters')
  .regex(whole(`\\s*(?:${DNS_ITEM})?\\s*(?:,\\s*(?:${DNS_ITEM})?\\s*)*`), 'comma-separated IP addresses (DNS servers) or domains (search domains)')
  .transform((v, ctx) => {
    const items = v
      .split(',')
      .map((x) => x.trim())
      .filter(Boolean);
    for (const i of items) {
      if (!isDnsEntry(i)) {
        ctx.addIssue(fieldIssue(msg('field.not_ip_or_domain', { value: i.slice(0, 60) })));
        return z.NEVER;
      }
    }
    return items.join(', ');
  });

/** A comma-separated (or array) list of IPv4 CIDRs routed to the peer. */
export const allowedIpsList = z
  .union([
    z
      .string()
      .max(1000)
      .regex(whole(`[\\s,]*${IPV4_CIDR}(?:\\s*,[\\s,]*${IPV4_CIDR})*[\\s,]*`), 'comma-separated IPv4 CIDRs such as 10.8.0.5/32'),
    z
      .array(z.string().regex(whole(`\\s*${IPV4_CIDR}\\s*`), 'an IPv4 CIDR such as 192.168.1.0/24'))
      .min(1, 'at least one CIDR')
      .max(64),
  ])
  .transform((v, ctx) => {
    const items = (Array.isArray(v) ? v : v.split(',')).map((x) => x.trim()).filter(Boolean);
    if (!items.length) {
      ctx.addIssue({ code: 'custom', message: 'at least one CIDR' });
      return z.NEVER;
    }
    for (const i of items) {
      const [ip, bits, extra] = i.split('/');
      if (parseIPv4(ip) === null || extra !== undefined || !/^\d{1,2}$/.test(bits ?? '') || Number(bits) > 32) {
        ctx.addIssue(fieldIssue(msg('field.not_ipv4_cidr', { value: i.slice(0, 60) })));
        return z.NEVER;
      }
    }
    return items;
  });

/** An IPv4 or IPv6 CIDR as the OpenAPI document states it (the list below checks and normalises it). */
const CIDR_ANY = `(?:${IPV4_CIDR}|${IPV6}/(?:12[0-8]|1[01]\\d|[1-9]?\\d))`;
export const CLIENT_ALLOWED_IPS_MAX = 64;
/**
 * What the peer's client routes into the tunnel (its config's AllowedIPs): IPv4 and IPv6 CIDRs,
 * normalised (host bits cleared, IPv6 compressed), duplicates removed, in the order given. Every
 * refusal is reported at the list itself (`fields.client_allowed_ips`).
 */
export const clientAllowedIpsList = z
  .array(z.string().meta({ pattern: whole(`\\s*${CIDR_ANY}\\s*`).source, maxLength: 60 }))
  .meta({ maxItems: CLIENT_ALLOWED_IPS_MAX, minItems: 1 })
  .transform((v, ctx) => {
    if (!v.length) {
      ctx.addIssue(fieldIssue(msg('schema.at_least_one_cidr')));
      return z.NEVER;
    }
    if (v.length > CLIENT_ALLOWED_IPS_MAX) {
      ctx.addIssue(fieldIssue(msg('field.max_cidrs', { max: CLIENT_ALLOWED_IPS_MAX })));
      return z.NEVER;
    }
    const out: string[] = [];
    for (const raw of v) {
      const c = raw.length <= 60 ? normalizeCidr(raw.trim()) : null;
      if (c === null) {
        ctx.addIssue(fieldIssue(msg('peer.field.not_cidr', { value: raw.trim().slice(0, 60) })));
        return z.NEVER;
      }
      if (!out.includes(c)) out.push(c);
    }
    return out;
  });

const boolish = z.union([z.boolean(), z.literal(0), z.literal(1)]).transform((v) => v === true || v === 1);
const groupId = z.number().int().positive().nullable();
const keepalive = z.number().int().min(0).max(65535);

const peerQuota = quota.nullable().optional().meta({ description: "the peer's own data quota (wins over its group's); null: the group's default" });

export const createPeerBody = z.strictObject({
  name: peerName,
  description: description.nullable().optional(),
  tags: tagList.optional(),
  group_id: groupId.optional(),
  expires_at: dateInput.nullable().optional(),
  dns: dnsList.nullable().optional(),
  is_gateway: boolish.optional(),
  api_port: z.number().int().min(1).max(65535).nullable().optional(),
  persistent_keepalive: keepalive.nullable().optional(),
  client_allowed_ips: clientAllowedIpsList.nullable().optional().meta({
    description:
      "what the peer's client routes into the tunnel (its config's AllowedIPs): 0.0.0.0/0 and ::/0 = full tunnel; null = the server default (the VPN subnet)",
  }),
  speed_limit: speedLimit.nullable().optional().meta({ description: "the peer's own speed cap (wins over its group's); null: the group's default" }),
  access_schedule: accessSchedule.optional(),
  quota: peerQuota,
});
export type CreatePeerInput = z.infer<typeof createPeerBody>;

/** What PUT /peers/:id accepts and ignores besides the writable fields (docs/reference/api.md "Conventions"). */
export const PEER_READ_ONLY = storedResourceFields('peer');
export const updatePeerBody = ignoringReadOnly(
  z.strictObject({
    name: peerName.optional(),
    description: description.nullable().optional(),
    tags: tagList.optional(),
    group_id: groupId.optional(),
    expires_at: dateInput.nullable().optional(),
    dns: dnsList.nullable().optional(),
    enabled: boolish.optional(),
    allowed_ips: allowedIpsList.optional(),
    api_port: z.number().int().min(1).max(65535).nullable().optional(),
    persistent_keepalive: keepalive.nullable().optional(),
    client_allowed_ips: clientAllowedIpsList
      .nullable()
      .optional()
      .meta({ description: "what the peer's client routes into the tunnel (its config's AllowedIPs); null = the server default (the VPN subnet)" }),
    speed_limit: speedLimit.nullable().optional().meta({ description: "the peer's own speed cap (wins over its group's); null: the group's default" }),
    access_schedule: accessSchedule.optional(),
    quota: peerQuota,
    /** new key pair and preshared key; the old config stops working at once */
    regenerate_keys: z.literal(true).optional(),
  }),
  PEER_READ_ONLY,
);
export type UpdatePeerInput = z.infer<typeof updatePeerBody>;

export const batchBody = z.strictObject({
  action: z.enum(['enable', 'disable', 'delete']),
  ids: z.array(z.number().int().positive()).min(1, 'at least one id').max(1000, 'at most 1000 ids'),
});

/** One DNS name under the zone: labels of letters, digits and hyphens (stored lowercase). */
export const hostnameValue = z
  .string()
  .max(63 * 2 + 1, 'at most 127 characters')
  .regex(whole(`\\s*(?:${LABELS})?\\s*`), 'letters, digits and hyphens, in dot-separated labels of at most 63 characters')
  .trim()
  .transform((v) => v.toLowerCase())
  .refine((v) => v === '' || v.split('.').every((l) => HOST_LABEL.test(l)), 'letters, digits and hyphens, in dot-separated labels of at most 63 characters');

export const hostnameBody = z.strictObject({ hostname: hostnameValue.nullable() });

export const PEER_SORT_KEYS = ['id', 'name', 'created_at', 'last_handshake', 'traffic', 'address'] as const;
export const PEER_SORTS = sortValues(PEER_SORT_KEYS);

export const listPeersQuery = paging.extend({
  q: searchText
    .optional()
    .meta({ description: 'case-insensitive substring of name, description, address, allowed_ips, hostname or tags (% and _ are plain characters)' }),
  group_id: z
    .union(
      [
        z.literal('none'),
        z
          .string()
          .regex(/^[1-9]\d{0,8}$/)
          .transform(Number),
      ],
      { error: 'must be a group id or none' },
    )
    .optional()
    .meta({ description: 'peers of this group; none: peers without a group' }),
  tag: tagName.optional().meta({ description: 'peers carrying this tag (whole entry, case-insensitive)' }),
  online: queryBool.optional().meta({ description: "the peer view's isOnline: enabled, not expired, handshake within the last 180 s" }),
  enabled: queryBool.optional(),
  sort: z
    .enum(PEER_SORTS, { error: fieldText('field.one_of', { values: [...PEER_SORTS] }) })
    .optional()
    .meta({
      description: 'order; a leading - sorts descending; default id. last_handshake: never-connected peers count as oldest; traffic: total_rx + total_tx',
    }),
});
export type ListPeersQuery = z.infer<typeof listPeersQuery>;

export const configQuery = z.strictObject({ download: z.enum(['0', '1', 'true', 'false']).optional() });
export const peerTrafficQuery = z.strictObject({ period: z.enum(['24h', '7d', '30d']).default('24h') });

// Response schemas (the OpenAPI document declares them; test/openapi-responses.test.ts checks real answers against the document).
const isoDate = z.string().meta({ format: 'date-time' });
/** The Peer JSON of the API (peers/view.ts toPeerView). */
export const peerView = z
  .object({
    id: z.number().int(),
    name: z.string(),
    description: z.string().nullable(),
    peer_type: z.enum(['regular', 'gateway']),
    is_gateway: z.boolean(),
    enabled: z.union([z.literal(1), z.literal(0)]),
    allowed_ips: z.string().meta({ description: 'what the server routes to the peer (its own address, plus LAN ranges behind it)' }),
    client_allowed_ips: z
      .array(z.string())
      .nullable()
      .meta({ description: "what the peer's client routes into the tunnel (its config's AllowedIPs); null = the server default (the VPN subnet)" }),
    full_tunnel: z.boolean().meta({ description: "client_allowed_ips holds 0.0.0.0/0 or ::/0: the server forwards and NATs this peer's internet traffic" }),
    address: z.string(),
    public_key: z.string(),
    dns: z.string().nullable(),
    persistent_keepalive: z.number().int().nullable(),
    tags: z.string(),
    group_id: z.number().int().nullable(),
    hostname: z.string().nullable(),
    hostname_source: z.enum(['admin', 'agent']),
    expires_at: isoDate.nullable(),
    expired: z.boolean(),
    api_port: z.number().int().nullable(),
    total_rx: z.number(),
    total_tx: z.number(),
    latestHandshake: z.number().nullable(),
    isOnline: z.boolean(),
    endpoint: z.string().nullable(),
    config_endpoint: z
      .string()
      .nullable()
      .meta({ description: 'the server Endpoint (host:port) written into the config last downloaded or shown for this peer; null: none handed out yet' }),
    config_outdated: z.boolean().meta({
      description:
        "true when the config last handed out carries another Endpoint than this server's now (public host or port changed), or was made before client_allowed_ips changed: the peer needs the new config",
    }),
    speed_limit: speedLimit.nullable().meta({ description: "the peer's own speed cap; null: its group's default applies (see the group)" }),
    access_schedule: accessScheduleView,
    access_state: accessState,
    quota: quotaView.nullable().meta({ description: "the peer's own data quota; null: its group's default applies (see the group)" }),
    quota_state: quotaState,
    created_at: isoDate,
    updated_at: isoDate,
  })
  .meta({ description: 'A peer' });
export type PeerView = z.infer<typeof peerView>;
export const peerListResponse = z.object({
  ok: z.literal(true),
  peers: z.array(peerView),
  total: z.number().int().meta({ description: 'peers matching the filters (all peers without filters)' }),
  total_all: z.number().int().meta({ description: 'all peers, regardless of the filters' }),
  limit: z.number().int(),
  offset: z.number().int(),
});
export const peerResponse = z.object({ ok: z.literal(true), peer: peerView });
export const peerCreatedResponse = z.object({
  ok: z.literal(true),
  peer: peerView,
  gateway: issuedTokens.optional().meta({ description: 'only when is_gateway: the companion tokens and gateway.env, shown once' }),
});
/** DELETE /peers/:id: the deleted peer's id and name. */
export const peerDeletedResponse = z.object({ ok: z.literal(true), deleted: z.object({ id: z.number().int(), name: z.string() }) });
export const peerToggleResponse = z.object({ ok: z.literal(true), peer: peerView, enabled: peerView.shape.enabled });
/** One peer's outcome in a batch. */
const batchResult = z.object({
  id: z.number().int(),
  ok: z.boolean(),
  status: z.number().int().meta({ description: 'the HTTP status the single-peer call would have answered' }),
  error: z.string().optional(),
  ...itemMessageFields,
  enabled: z.union([z.literal(0), z.literal(1)]).optional(),
  deleted: z.boolean().optional(),
});
export type BatchResult = z.infer<typeof batchResult>;
export const peerBatchResponse = z.object({
  ok: z.literal(true),
  action: z.enum(['enable', 'disable', 'delete']),
  results: z.array(batchResult),
  succeeded: z.number().int(),
  failed: z.number().int(),
});
export const peerQrResponse = z.object({ ok: z.literal(true), name: z.string(), qr: z.string().meta({ description: 'PNG data URL' }), config: z.string() });
/** One bucket of a peer's traffic chart (peers/traffic.ts). */
export const chartPoint = z.object({
  timestamp: z.number().int().meta({ description: 'bucket start, epoch ms' }),
  rx: z.number().meta({ description: "bytes received by the server from the peer in the bucket (the peer's upload)" }),
  tx: z.number().meta({ description: "bytes sent by the server to the peer in the bucket (the peer's download)" }),
});
export type ChartPoint = z.infer<typeof chartPoint>;
export const peerTrafficResponse = z.object({
  ok: z.literal(true),
  period: z.enum(['1h', '24h', '7d', '30d']),
  step_ms: z.number().int(),
  from: z.number().int().meta({ description: 'epoch ms' }),
  to: z.number().int().meta({ description: 'epoch ms, exclusive' }),
  points: z.array(chartPoint),
  total_rx: z.number(),
  total_tx: z.number(),
});
