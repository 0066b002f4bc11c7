// Request and response schemas of the RDP routes API (validation and the OpenAPI document). Field
// syntax only: rules over several fields or the database (access-mode combinations, peers that must
// exist and be gateways, port conflicts, the current key id of an envelope) live in RdpService.
import { z } from 'zod';
import { itemMessageFields, messageRefSchema } from '@gatehouse/common/messages/ref.js';
import { ignoringReadOnly, storedResourceFields } from '../http/input.js';
import { credentialEnvelopeSchema } from '@gatehouse/common/rdp-credentials.js';
import { text, textPattern, UNPROCESSABLE } from '../http/fields.js';
import { fieldIssue } from '../http/messages.js';
import { missingForMode } from './rules.js';
import { DATE_STRING_PATTERN, parseDateString, MAX_DATE_MS } from '../util/dates.js';
import { boolIn, idIn, lanHost, mac, portIn } from '../routes/schema.js';
import { rdpSessionEndReason } from '../event-kinds.js';

export const ACCESS_MODES = ['internal', 'external', 'both', 'gateway'] as const;
export type AccessMode = (typeof ACCESS_MODES)[number];
export const AUDIO_MODES = ['local', 'remote', 'off'] as const;
export type AudioMode = (typeof AUDIO_MODES)[number];
export const COLOR_DEPTHS = [15, 16, 24, 32] as const;
export const ROTATION_STATES = ['none', 'pending'] as const;
export type RotationState = (typeof ROTATION_STATES)[number];

const isoDateTime = z
  .string({ error: 'must be an ISO-8601 date-time such as 2030-01-01T22:00:00Z' })
  .max(40, 'must be an ISO-8601 date-time such as 2030-01-01T22:00:00Z')
  .transform((v, ctx) => {
    const ms = parseDateString(v.trim());
    if (ms === null || ms < 0 || ms > MAX_DATE_MS) {
      ctx.addIssue({ code: 'custom', message: 'must be an ISO-8601 date-time such as 2030-01-01T22:00:00Z' });
      return z.NEVER;
    }
    return new Date(ms).toISOString();
  })
  .meta({ pattern: DATE_STRING_PATTERN, description: 'a date-time (docs/reference/api.md "Conventions": dates; without a zone it is UTC)' });

/** One maintenance window: from < to; stored and returned as UTC ISO-8601. */
export const maintenanceWindowIn = z
  .object({
    from: isoDateTime,
    to: isoDateTime,
    note: text({ max: 500 }).default('').meta({ description: 'shown to a client whose connect is refused inside the window' }),
  })
  .strict()
  .superRefine((w, ctx) => {
    if (Date.parse(w.from) >= Date.parse(w.to)) ctx.addIssue({ code: 'custom', path: ['to'], message: 'must be after from', params: UNPROCESSABLE });
  });
export const maintenanceWindowsIn = z.array(maintenanceWindowIn).max(100, 'at most 100 windows');

export const resolutionIn = z
  .string()
  .trim()
  .regex(
    /^(?:[2-9]\d\d|[1-7]\d{3}|80\d\d|81[0-8]\d|819[0-2])x(?:[2-9]\d\d|[1-7]\d{3}|80\d\d|81[0-8]\d|819[0-2])$/,
    'must be WIDTHxHEIGHT such as 1920x1080, each from 200 to 8192 (or null for full screen)',
  );

// reason: z.union wants a tuple type, and Array.map returns an array
const colorDepthIn = z.union(COLOR_DEPTHS.map((d) => z.literal(d)) as unknown as [z.ZodLiteral<15>, z.ZodLiteral<16>, z.ZodLiteral<24>, z.ZodLiteral<32>], {
  error: 'must be 15, 16, 24 or 32',
});

/** Every writable RDP route field by its API name (create requires name, access_mode). */
export const rdpFields = z.strictObject({
  name: text({ min: 1, max: 128 }),
  description: text({ max: 500, multiline: true }).nullable(),
  enabled: boolIn,
  access_mode: z.enum(ACCESS_MODES, { error: 'must be internal, external, both or gateway' }),
  target_host: lanHost.meta({
    description:
      "the RDP host: an IP address or host name (internal/both: defaults to the tunnel IP of target_peer_id; gateway: the host on the gateway's LAN)",
  }),
  target_port: portIn.meta({ description: 'default 3389' }),
  target_peer_id: idIn.nullable().meta({ description: 'internal/both: the VPN peer that is the target' }),
  external_host: lanHost.nullable().meta({ description: 'both: the public address (target_host stays the internal one)' }),
  listen_port: portIn.nullable().meta({
    description: 'gateway: the public TCP port of the linked L4 route (required); external/both: the public port the client uses (default target_port)',
  }),
  gateway_peer_id: idIn.nullable().meta({ description: 'gateway: the gateway peer whose LAN holds the target' }),
  gateway_host: lanHost.nullable().meta({ description: 'optional remote desktop gateway host (with gateway_port)' }),
  gateway_port: portIn.nullable(),
  wol_enabled: boolIn,
  wol_mac: mac.nullable(),
  network_level_auth: boolIn,
  audio_mode: z.enum(AUDIO_MODES, { error: 'must be local, remote or off' }),
  clipboard_enabled: boolIn,
  resolution: resolutionIn.nullable(),
  color_depth: colorDepthIn,
  maintenance_windows: maintenanceWindowsIn,
  allowed_user_ids: z
    .array(idIn)
    .max(1000, 'at most 1000 users')
    .nullable()
    .meta({ description: 'null: every client token; else only tokens whose user is listed' }),
  credentials: credentialEnvelopeSchema
    .nullable()
    .meta({ description: 'the envelope made in the browser for GET /rdp/pubkey (scheme RSA-OAEP-256+A256GCM); null clears stored credentials' }),
});
export type RdpInput = Partial<z.infer<typeof rdpFields>>;

export const createRdpBody = rdpFields
  .partial()
  .extend({
    name: z
      .string({ error: (i) => (i.input === undefined ? 'required' : 'must be text') })
      .meta({ minLength: 1, maxLength: 128, pattern: textPattern(false, true) })
      .pipe(text({ min: 1, max: 128 })),
    access_mode: z.enum(ACCESS_MODES, { error: (i) => (i.input === undefined ? 'required' : 'must be internal, external, both or gateway') }),
  })
  // Every field the access mode makes required is named in the same answer as the other fields'
  // errors, so an empty form learns them all at once (this check also runs when other fields
  // failed); alone they are 422, as the document cannot state them.
  .superRefine(
    (v, ctx) => {
      for (const [field, m] of Object.entries(missingForMode(v))) ctx.addIssue(fieldIssue(m, { path: [field], params: UNPROCESSABLE }));
    },
    { when: (payload) => typeof payload.value === 'object' && payload.value !== null && !Array.isArray(payload.value) },
  );
/** What PATCH /rdp/:id accepts and ignores besides the writable fields (docs/reference/api.md "Conventions"). */
export const RDP_READ_ONLY = storedResourceFields('RDP route');
export const updateRdpBody = ignoringReadOnly(rdpFields.partial(), RDP_READ_ONLY).refine((v) => Object.keys(v).length > 0, {
  message: 'nothing to update',
  params: UNPROCESSABLE,
});

export const rdpBatchBody = z.strictObject({
  action: z.enum(['enable', 'disable', 'delete'], { error: 'must be enable, disable or delete' }),
  ids: z.array(idIn).min(1, 'at least one id').max(1000, 'at most 1000 ids'),
});

export const credentialsBody = z.strictObject({ credentials: credentialEnvelopeSchema });
export const maintenanceBody = z.strictObject({ windows: maintenanceWindowsIn });

// --- responses ---

const nInt = z.number().int().nullable();
const isoDate = z.string().meta({ format: 'date-time' });
const windowView = z.object({ from: isoDate, to: isoDate, note: z.string() });
/** A maintenance window as stored and shown: from and to as ISO-8601 date-times. */
export type MaintenanceWindow = z.infer<typeof windowView>;

/** An RDP route as every API returns it: credentials only as has_credentials/credentials_kid/credentials_updated_at. */
export const rdpRouteView = z
  .object({
    id: z.number().int(),
    name: z.string(),
    description: z.string().nullable(),
    enabled: z.boolean(),
    access_mode: z.enum(ACCESS_MODES),
    target_host: z.string(),
    target_port: z.number().int(),
    target_peer_id: nInt,
    external_host: z.string().nullable(),
    listen_port: nInt,
    gateway_peer_id: nInt,
    gateway_listen_port: nInt.meta({ description: "gateway mode: the companion's listener port for the linked route (read-only)" }),
    gateway_host: z.string().nullable(),
    gateway_port: nInt,
    has_credentials: z.boolean(),
    credentials_kid: z.string().nullable(),
    credentials_updated_at: isoDate.nullable(),
    rotation_state: z.enum(ROTATION_STATES),
    rotation_pending_since: isoDate.nullable(),
    wol_enabled: z.boolean(),
    wol_mac: z.string().nullable(),
    network_level_auth: z.boolean(),
    audio_mode: z.enum(AUDIO_MODES),
    clipboard_enabled: z.boolean(),
    resolution: z.string().nullable(),
    color_depth: z.number().int(),
    maintenance_windows: z.array(windowView),
    allowed_user_ids: z.array(z.number().int()).nullable(),
    gateway_l4_route_id: nInt.meta({ description: 'gateway mode: the linked L4 TCP route (owned by this RDP route)' }),
    created_at: isoDate,
    updated_at: isoDate,
  })
  .meta({ description: 'An RDP route (its credentials never, only whether they are stored)' });
export type RdpRouteView = z.infer<typeof rdpRouteView>;

export const rdpRouteResponse = z.object({ ok: z.literal(true), route: rdpRouteView });
export const rdpRoutesResponse = z.object({ ok: z.literal(true), routes: z.array(rdpRouteView), total: z.number().int() });
export const rdpToggleResponse = z.object({ ok: z.literal(true), route: rdpRouteView, enabled: z.boolean() });
export const rdpBatchResponse = z.object({
  ok: z.literal(true),
  results: z.array(z.object({ id: z.number().int(), ok: z.boolean(), error: z.string().optional(), ...itemMessageFields })),
  succeeded: z.number().int(),
  failed: z.number().int(),
});
export const pubkeyResponse = z.object({
  ok: z.literal(true),
  kid: z.string().meta({ description: 'first 16 hex digits of SHA-256 over the public key (SPKI DER)' }),
  public_key: z.string().meta({ description: 'base64 SPKI DER of the RSA-OAEP (SHA-256) public key' }),
  alg: z.string().meta({ description: 'the envelope scheme: RSA-OAEP-256+A256GCM' }),
});
/** An RDP route's stored credentials (ciphertext only). */
export const storedCredentials = z.object({
  route_id: z.number().int(),
  credentials: credentialEnvelopeSchema.nullable().meta({ description: 'the stored envelope (ciphertext only), null when none' }),
  credentials_kid: z.string().nullable(),
  credentials_updated_at: isoDate.nullable(),
  rotation_state: z.enum(ROTATION_STATES),
});
export type StoredCredentials = z.infer<typeof storedCredentials>;
export const credentialsResponse = z.object({ ok: z.literal(true), ...storedCredentials.shape });
export const maintenanceResponse = z.object({
  ok: z.literal(true),
  route_id: z.number().int(),
  windows: z.array(windowView),
  active: windowView.nullable().meta({ description: 'the window in force now, if any' }),
});
export const rotationPendingResponse = z.object({
  ok: z.literal(true),
  current_kid: z.string(),
  routes: z.array(rdpRouteView),
});

const int = z.number().int();
const epochMs = z.number().int().meta({ description: 'epoch milliseconds' });
/** An RDP session with its peer's name and its user's name, as GET /rdp/:id/history lists it. */
export const historyEntry = z.object({
  id: int,
  rdp_route_id: int,
  status: z.enum(['active', 'ended']),
  started_at: epochMs,
  last_heartbeat_at: epochMs,
  ended_at: epochMs.nullable(),
  end_reason: rdpSessionEndReason.nullable(),
  duration_s: z.number().int().meta({ description: 'seconds from start to end (to now while active)' }),
  disconnect_requested_at: epochMs.nullable(),
  client_name: z.string().nullable(),
  token_id: int.nullable(),
  machine_id: int.nullable(),
  peer_id: int.nullable(),
  peer_name: z.string().nullable(),
  user_id: int.nullable(),
  username: z.string().nullable(),
});
export type HistoryEntry = z.infer<typeof historyEntry>;
/** A session as the API shows it (without the names). */
export type RdpSession = Omit<HistoryEntry, 'peer_name' | 'username'>;
const isoTime = z.string().meta({ format: 'date-time' });
/**
 * One row of GET /rdp/history/export: a history entry with its route's name and its times as ISO
 * 8601, in the file's column order (the fields it shares with the entry are the entry's).
 */
const entry = historyEntry.shape;
export const historyExportRow = z.object({
  session_id: entry.id,
  rdp_route_id: entry.rdp_route_id,
  route_name: z.string(),
  status: entry.status,
  started_at: isoTime,
  ended_at: isoTime.nullable(),
  last_heartbeat_at: isoTime,
  duration_s: entry.duration_s,
  end_reason: entry.end_reason,
  client_name: entry.client_name,
  machine_id: entry.machine_id,
  token_id: entry.token_id,
  peer_id: entry.peer_id,
  peer_name: entry.peer_name,
  user_id: entry.user_id,
  username: entry.username,
  disconnect_requested_at: isoTime.nullable(),
});
export type ExportRow = z.infer<typeof historyExportRow>;
export const historyResponse = z.object({ ok: z.literal(true), rdp_route_id: int, name: z.string(), total: z.number().int(), sessions: z.array(historyEntry) });

// ---- Operations (rdp/ops-endpoints.ts): status, Wake-on-LAN, disconnect-all
const accessMode = z.enum(['internal', 'external', 'both', 'gateway']);
const maintenance = z
  .object({ from: z.string(), to: z.string(), note: z.string() })
  .nullable()
  .meta({ description: 'the maintenance window in force now (connect is refused meanwhile), or null' });

const pathCheck = z.object({
  path: z.enum(['internal', 'external', 'gateway']).meta({
    description:
      "internal: TCP connect from the server through the tunnel; external: TCP connect to the public address; gateway: the companion's report for the linked L4 route",
  }),
  host: z.string().nullable(),
  port: z.number().int().nullable(),
  reachable: z.boolean(),
  latency_ms: z.number().nullable(),
  error: z.string().nullable(),
  error_code: messageRefSchema.nullable().meta({ description: "error as a message: rdp.check.* with the host's or network's own words as `detail`" }),
});
export type PathCheck = z.infer<typeof pathCheck>;

/** The gateway of a gateway-mode route and its status; l4_route_id: the linked L4 route whose reachability the companion reports. */
const gatewayState = z.object({
  peer_id: int,
  name: z.string(),
  status: z.enum(['online', 'offline', 'unknown']),
  status_reason: z.string(),
  last_seen_at: epochMs.nullable(),
  l4_route_id: int.nullable(),
});
export type GatewayState = z.infer<typeof gatewayState>;

export const rdpRouteStatus = z.object({
  rdp_route_id: int,
  name: z.string(),
  enabled: z.boolean(),
  path: accessMode.meta({ description: "the route's access mode: which paths were checked" }),
  reachable: z.boolean().meta({ description: 'true when any checked path answers' }),
  latency_ms: z
    .number()
    .nullable()
    .meta({ description: 'best latency of the reachable paths (TCP connect time; for gateway mode what the companion reports)' }),
  checked_at: epochMs,
  paths: z.array(pathCheck),
  gateway: gatewayState.nullable().meta({ description: 'gateway mode: the gateway and its status' }),
  maintenance,
  error: z.string().nullable(),
  error_code: messageRefSchema.nullable().meta({ description: 'error as a message: rdp.check.paths (each path with its reason) or rdp.check.not_checked' }),
});

export type RdpRouteStatus = z.infer<typeof rdpRouteStatus>;

/** The counts over every RDP route's status. */
const statusSummary = z.object({
  total: z.number().int(),
  enabled: z.number().int(),
  disabled: z.number().int(),
  reachable: z.number().int(),
  unreachable: z.number().int(),
  in_maintenance: z.number().int(),
});
export type StatusSummary = z.infer<typeof statusSummary>;

export const rdpStatusResponse = z.object({ ok: z.literal(true), status: rdpRouteStatus });
export const rdpStatusAllResponse = z.object({
  ok: z.literal(true),
  summary: statusSummary,
  routes: z.array(rdpRouteStatus),
});

export const wakeCycle = z.object({
  rdp_route_id: int,
  state: z.enum(['idle', 'pending', 'awake', 'timeout']).meta({
    description: 'idle: no packet sent since the server started; pending: waiting for the host; awake: it answers; timeout: it did not within timeout_ms',
  }),
  via: z.enum(['gateway', 'direct']).meta({ description: 'gateway: through the companion; direct: UDP from this server' }),
  mac: z.string(),
  sent_to: z.array(z.string()).meta({ description: "where the packets went (direct: host:port; gateway: the companion's answer sent_to)" }),
  sent_at: z.number().int(),
  timeout_ms: z.number().int(),
  deadline: z.number().int(),
  awake_at: epochMs.nullable(),
  last_check_at: epochMs.nullable(),
  latency_ms: z.number().nullable(),
  last_error: z.string().nullable(),
  last_error_code: messageRefSchema.nullable().meta({ description: "last_error as a message: rdp.check.* with the host's or network's own words as `detail`" }),
});
export const wolResponse = z.object({ ok: z.literal(true), wol: wakeCycle });

export const disconnectAllResponse = z.object({
  ok: z.literal(true),
  count: z.number().int().meta({ description: 'active sessions told to disconnect' }),
  session_ids: z.array(int),
  server_side: z.object({
    method: z.enum(['gateway', 'marker']).meta({
      description:
        "gateway: the companion was asked to close the linked L4 route's live connections; marker: the order waits for the clients' heartbeats only (internal, external, both)",
    }),
    closed_connections: z.number().int().nullable().meta({ description: 'connections the companion closed (null: not asked, or it failed)' }),
    error: z.string().nullable(),
  }),
});
/** What disconnect-all did beyond the marker (rdp/sessions.ts killConnections). */
export type ServerSideKill = z.output<typeof disconnectAllResponse>['server_side'];

/** POST /client/rdp/:id/heartbeat: keep the session alive, or the order to drop it. */
export const clientRdpHeartbeatResponse = z.object({
  ok: z.literal(true),
  session_id: int,
  disconnect: z.boolean().meta({ description: 'true: drop the RDP connection now' }),
  reason: rdpSessionEndReason.nullable().meta({ description: 'why (with disconnect, or when the session has ended): the end reason' }),
  message: z.string().nullable().meta({ description: 'the reason in words' }),
  status: z.enum(['active', 'ended']),
  lost_after_s: z.number().int().meta({ description: 'the longest the client may wait between heartbeats before the session counts as lost (s)' }),
});
type HeartbeatBody = Omit<z.output<typeof clientRdpHeartbeatResponse>, 'ok'>;
/** The heartbeat's answer, as the session service gives it: an active session's has no reason or message (the endpoint sends null). */
export type HeartbeatAnswer = Omit<HeartbeatBody, 'reason' | 'message'> & Partial<Pick<HeartbeatBody, 'reason' | 'message'>>;
