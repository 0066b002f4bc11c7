// One descriptor per event kind: what an event of that kind carries (its payload, a zod schema from
// which the DomainEvent union in events.ts is inferred), who receives it on the live stream (its
// scope, or null when it is not streamed), the activity-log row it makes (or none), and whether a
// webhook can subscribe to it (what it means, or none). The stream catalogue
// (events-stream/catalog.ts), the activity log (logs/activity.ts), the webhook kinds
// (webhooks/events.ts), the OpenAPI document and docs/reference/events.md (npm run docs) all read
// these descriptors; a new event kind is one entry here.
//
// Scopes: `peers` covers peer_*, gateway_*, group and tag events and the traffic rates; `routes`
// covers route_*, routes_batch, circuit_*, rdp_*; `logs` the activity rows; `system` the
// WireGuard/Caddy state and backups; `admin` events (users, tokens, settings, licence, webhooks) go
// only to admin sessions and full-access/read-only tokens. The payload of a stream message is the
// event without `type`, plus `at` (epoch ms) when the event has none of its own.
import { z } from 'zod';
import { msg, type Msg } from '@gatehouse/common/messages/index.js';
import { messageRefSchema } from '@gatehouse/common/messages/ref.js';
import { gatewayStatusReason } from '@gatehouse/common/messages/read-back.js';

export type StreamScope = 'peers' | 'routes' | 'logs' | 'system' | 'admin';
export const STREAM_SCOPES: readonly StreamScope[] = ['peers', 'routes', 'logs', 'system', 'admin'];

/** One activity-log entry as the API serves it (GET /api/v1/logs/activity; logs/activity.ts toEntry writes it). */
export const activityEntryView = z.object({
  id: z.number().int(),
  severity: z.string(),
  source: z.string(),
  event_type: z.string(),
  message: z.string().meta({ description: 'the message in English' }),
  code: z.string().nullable().meta({
    description:
      "the stable code of the message (docs/reference/errors.md lists every code); a client words it in its reader's language; null for rows written before codes",
  }),
  params: z.record(z.string(), z.unknown()).nullable().meta({ description: 'the parameters of the message, by name; null when it has none' }),
  details: z.record(z.string(), z.unknown()).nullable(),
  user_id: z.number().int().nullable(),
  ip: z.string().nullable(),
  created_at: z.string().meta({ format: 'date-time' }),
  timestamp: z.number().int().meta({ description: 'created_at as epoch ms' }),
});
/** A row of the activity log as the API shows it (logs/activity.ts writes them). */
export type ActivityEntry = z.infer<typeof activityEntryView>;

export type Severity = 'info' | 'warning' | 'error' | 'critical';

/** A row of the activity log as a writer hands it over (logs/activity.ts stores it). */
export interface ActivityEvent {
  severity?: Severity;
  source: string;
  event_type: string;
  /** the row's message: its code and parameters, and its English text */
  msg: Msg;
  details?: Record<string, unknown>;
  user_id?: number | null;
  ip?: string | null;
}

/** The activity row of an event: event_type defaults to the kind's name. */
export type ActivityOf = Omit<ActivityEvent, 'event_type'> & { event_type?: string };

export interface EventKind<P extends z.ZodType = z.ZodType> {
  /** the payload (the event without `type`) */
  payload: P;
  /** the token scope that receives it on GET /api/v1/events; null: not streamed */
  scope: StreamScope | null;
  /** the payload's fields as the reference lists them; by default from the schema (names and descriptions) */
  fields?: string;
  /** appended to the field list in the reference (when it is sent, what it leaves out) */
  note?: string;
  /** the activity row an event of this kind makes; absent: none */
  activity?(e: z.infer<P>): ActivityOf | null;
  /** what it means, when a webhook can subscribe to it; absent: webhooks do not carry it */
  webhook?: string;
  /** with `webhook`: the area it belongs to, by which the admin app groups the kinds (GET /webhooks/events) */
  area?: WebhookArea;
}

/** The areas of the kinds a webhook can subscribe to, in the order the admin app shows them. */
export const WEBHOOK_AREAS = ['peers', 'gateways', 'routes', 'monitoring', 'rdp', 'users', 'tokens', 'system'] as const;
export type WebhookArea = (typeof WEBHOOK_AREAS)[number];

/** A descriptor; its `webhook` text stays in the type, so that the webhook kinds are a type too (and one with `webhook` needs its `area`). */
const kind = <P extends z.ZodType, W extends string | undefined = undefined>(
  d: EventKind<P> & { webhook?: W } & (W extends string ? { area: WebhookArea } : { area?: undefined }),
): EventKind<P> & { webhook: W } => d as EventKind<P> & { webhook: W };

const actor = z.number().int().nullable().meta({ description: 'user id or null' });
const changed = z.array(z.string()).meta({ description: 'changed field names' });
const ms = (description = 'epoch ms') => z.number().nullable().meta({ description });

const peerOnline = z.object({ peer_id: z.number(), name: z.string(), endpoint: z.string().nullable(), latest_handshake: ms() });
const quotaCount = z.object({
  peer_id: z.number(),
  name: z.string(),
  used_bytes: z.number(),
  limit_bytes: z.number().meta({ description: "the quota's bytes plus this period's grants" }),
  period_start: z.string(),
  period_end: z.string(),
});
const gatewayStatus = z.enum(['online', 'offline', 'unknown']);
const gatewayChange = z.object({
  peer_id: z.number(),
  name: z.string(),
  from: gatewayStatus,
  to: gatewayStatus.meta({ description: 'online|offline|unknown' }),
  reason: z.string(),
  reason_code: messageRefSchema.optional().meta({ description: 'the reason as a message of the catalogue: {code, params}' }),
  last_seen_at: z.number().nullable(),
  at: z.number(),
});
const gatewayActivity = ({ type: _type, ...t }: z.infer<typeof gatewayChange> & { type?: string }): ActivityOf => ({
  severity: t.to === 'offline' ? 'warning' : 'info',
  source: 'gateways',
  msg: msg('gateway.status_changed', { name: t.name, to: t.to, from: t.from, reason: t.reason_code ?? gatewayStatusReason(t.reason) }),
  details: { ...t },
});
const routeBackend = z.object({
  route_id: z.number(),
  domain: z.string(),
  backend: z.string().meta({ description: 'the address Caddy dials (tunnel address:port)' }),
  peer_id: z.number(),
});
const routeCheck = z.object({
  route_id: z.number(),
  domain: z.string(),
  status: z.number().nullable().meta({ description: 'HTTP status or null' }),
  response_ms: z.number().nullable(),
  error: z.string().nullable(),
});
const routeCheckActivity =
  (up: boolean) =>
  (e: z.infer<typeof routeCheck>): ActivityOf => ({
    severity: up ? 'info' : 'warning',
    source: 'monitoring',
    msg: msg(up ? 'route.up' : 'route.down', { domain: e.domain, error: e.error, status: e.status }),
    details: { route_id: e.route_id, status: e.status, response_ms: e.response_ms, error: e.error },
  });
const routeAuthChange = z.object({
  route_id: z.number(),
  domain: z.string(),
  method: z.string(),
  two_factor_method: z.string().nullable(),
  sessions_ended: z.boolean(),
  password_changed: z.boolean(),
  actor,
});
const routeAuthActivity =
  (created: boolean) =>
  (e: z.infer<typeof routeAuthChange>): ActivityOf => ({
    source: 'routes',
    msg: msg(created ? 'route_auth.enabled' : 'route_auth.updated', { domain: e.domain, method: e.method, two_factor_method: e.two_factor_method }),
    details: {
      route_id: e.route_id,
      method: e.method,
      two_factor_method: e.two_factor_method,
      sessions_ended: e.sessions_ended,
      password_changed: e.password_changed,
    },
    user_id: e.actor,
  });
const backupTarget = z.enum(['download', 'local', 's3']).meta({ description: 'download|local|s3' });
const backupJob = z.number().nullable().meta({ description: 'null for a manual backup' });
const deliveryStatus = z.enum(['pending', 'delivered', 'failed']).meta({ description: 'pending|delivered|failed' });
/**
 * Why an RDP session ended, the one list the session rows, the API and the events use:
 * - client: the client ended it; lost: no heartbeat in time; disconnected: an admin disconnected it;
 * - route_disabled / route_deleted: its route was disabled or deleted.
 */
export const rdpSessionEndReason = z.enum(['client', 'lost', 'disconnected', 'route_disabled', 'route_deleted']);
const rdpEndReason = rdpSessionEndReason.meta({ description: 'client|lost|disconnected|route_disabled|route_deleted' });
const activityEntry = z.custom<ActivityEntry>().meta({
  description:
    'the activity row as GET /api/v1/logs/activity lists it: id, severity, source, event_type, message, code, params, details, user_id, ip, created_at, timestamp',
});

export const EVENT_KINDS = {
  // peers (peers/service.ts, the WireGuard poller)
  peer_created: kind({
    payload: z.object({ peer_id: z.number(), name: z.string(), address: z.string(), peer_type: z.string(), actor }),
    scope: 'peers',
    activity: (e) => ({
      source: 'peers',
      msg: msg('peer.created', { name: e.name, address: e.address }),
      details: { peer_id: e.peer_id, address: e.address, peer_type: e.peer_type },
      user_id: e.actor,
    }),
    area: 'peers',
    webhook: 'a peer was created',
  }),
  peer_updated: kind({
    payload: z.object({ peer_id: z.number(), name: z.string(), fields: changed, actor }),
    scope: 'peers',
    activity: (e) => ({
      source: 'peers',
      msg: msg('peer.updated', { name: e.name, fields: e.fields }),
      details: { peer_id: e.peer_id, fields: e.fields.map((k) => (k === 'public_key' ? 'keys' : k)) },
      user_id: e.actor,
    }),
    area: 'peers',
    webhook: 'a peer was changed',
  }),
  peer_enabled: kind({
    payload: z.object({ peer_id: z.number(), name: z.string(), actor }),
    scope: 'peers',
    activity: (e) => ({ source: 'peers', msg: msg('peer.enabled', { name: e.name }), details: { peer_id: e.peer_id }, user_id: e.actor }),
    area: 'peers',
    webhook: 'a peer was enabled',
  }),
  peer_disabled: kind({
    payload: z.object({ peer_id: z.number(), name: z.string(), actor }),
    scope: 'peers',
    activity: (e) => ({ source: 'peers', msg: msg('peer.disabled', { name: e.name }), details: { peer_id: e.peer_id }, user_id: e.actor }),
    area: 'peers',
    webhook: 'a peer was disabled',
  }),
  peer_deleted: kind({
    payload: z.object({ peer_id: z.number(), name: z.string(), address: z.string(), actor }),
    scope: 'peers',
    activity: (e) => ({
      source: 'peers',
      msg: msg('peer.deleted', { name: e.name, address: e.address }),
      details: { peer_id: e.peer_id, address: e.address },
      user_id: e.actor,
    }),
    area: 'peers',
    webhook: 'a peer was deleted',
  }),
  peer_config_link_created: kind({
    area: 'peers',
    payload: z.object({
      peer_id: z.number(),
      name: z.string(),
      link_id: z.number(),
      expires_at: z.string().meta({ description: 'ISO' }),
      note: z.string().nullable(),
      actor,
    }),
    scope: 'peers',
    activity: (e) => ({
      source: 'peers',
      msg: msg('peer.config_link_created', { name: e.name, expires_at: e.expires_at, note: e.note }),
      details: { peer_id: e.peer_id, link_id: e.link_id, expires_at: e.expires_at },
      user_id: e.actor,
    }),
    webhook: "a one-time link to a peer's config was made",
  }),
  peer_config_link_used: kind({
    area: 'peers',
    payload: z.object({ peer_id: z.number(), name: z.string(), link_id: z.number(), ip: z.string() }),
    scope: 'peers',
    activity: (e) => ({
      source: 'peers',
      msg: msg('peer.config_link_used', { name: e.name, ip: e.ip }),
      details: { peer_id: e.peer_id, link_id: e.link_id, ip: e.ip },
      user_id: null,
    }),
    webhook: "a peer's config was downloaded through its one-time link",
  }),
  peer_config_link_revoked: kind({
    area: 'peers',
    payload: z.object({ peer_id: z.number(), name: z.string(), link_id: z.number(), actor }),
    scope: 'peers',
    activity: (e) => ({
      source: 'peers',
      msg: msg('peer.config_link_revoked', { name: e.name }),
      details: { peer_id: e.peer_id, link_id: e.link_id },
      user_id: e.actor,
    }),
    webhook: "a one-time link to a peer's config was revoked",
  }),
  peer_expired: kind({
    payload: z.object({ peer_id: z.number(), name: z.string(), expires_at: z.string().meta({ description: 'ISO' }), enabled: z.boolean() }),
    scope: 'peers',
    activity: (e) => ({
      severity: 'warning',
      source: 'peers',
      msg: msg('peer.expired', { name: e.name }),
      details: { peer_id: e.peer_id, name: e.name, expires_at: e.expires_at, enabled: e.enabled },
    }),
    area: 'peers',
    webhook: 'a peer reached its expiry and left the tunnel',
  }),
  peer_online: kind({
    payload: peerOnline,
    scope: 'peers',
    activity: (e) => ({
      source: 'wireguard',
      msg: msg('peer.online', { name: e.name }),
      details: { peer_id: e.peer_id, name: e.name, endpoint: e.endpoint, latestHandshake: e.latest_handshake },
    }),
    area: 'peers',
    webhook: 'a peer made a handshake after being offline',
  }),
  peer_offline: kind({
    payload: peerOnline,
    scope: 'peers',
    activity: (e) => ({
      source: 'wireguard',
      msg: msg('peer.offline', { name: e.name }),
      details: { peer_id: e.peer_id, name: e.name, endpoint: e.endpoint, latestHandshake: e.latest_handshake },
    }),
    area: 'peers',
    webhook: 'a peer has had no handshake for the offline interval',
  }),
  peer_traffic: kind({
    payload: z.object({
      interval_s: z.number(),
      rx_rate: z.number(),
      tx_rate: z.number().meta({ description: 'all peers, bytes/s' }),
      peers: z.array(z.object({ peer_id: z.number(), rx_rate: z.number(), tx_rate: z.number(), total_rx: z.number(), total_tx: z.number() })),
    }),
    scope: 'peers',
    fields:
      'interval_s, rx_rate, tx_rate (all peers, bytes/s), peers [{peer_id, rx_rate, tx_rate, total_rx, total_tx}] (the peers that moved data since the last poll, each once more at 0 when it stops)',
    note: 'no event while all are idle',
  }),

  // peer groups and the tag registry
  peer_group_created: kind({
    payload: z.object({ group_id: z.number(), name: z.string(), actor }),
    scope: 'peers',
    activity: (e) => ({ source: 'peers', msg: msg('group.created', { name: e.name }), details: { group_id: e.group_id }, user_id: e.actor }),
  }),
  peer_group_updated: kind({
    payload: z.object({ group_id: z.number(), name: z.string(), fields: changed, actor }),
    scope: 'peers',
    activity: (e) => ({ source: 'peers', msg: msg('group.updated', { name: e.name }), details: { group_id: e.group_id, fields: e.fields }, user_id: e.actor }),
  }),
  peer_group_deleted: kind({
    payload: z.object({ group_id: z.number(), name: z.string(), peers_ungrouped: z.number(), actor }),
    scope: 'peers',
    activity: (e) => ({
      source: 'peers',
      msg: msg('group.deleted', { name: e.name, peers_ungrouped: e.peers_ungrouped }),
      details: { group_id: e.group_id, peers_ungrouped: e.peers_ungrouped },
      user_id: e.actor,
    }),
  }),
  tag_created: kind({
    payload: z.object({ tag_id: z.number(), name: z.string().meta({ description: 'a new registry name' }), actor }),
    scope: 'peers',
    activity: (e) => ({ source: 'peers', msg: msg('tag.created', { name: e.name }), details: { tag_id: e.tag_id }, user_id: e.actor }),
  }),
  tag_renamed: kind({
    payload: z.object({
      from: z.string(),
      to: z.string(),
      registered: z.boolean().meta({ description: 'is in the registry' }),
      peers_updated: z.number().meta({ description: 'peers that carried it' }),
      actor,
    }),
    scope: 'peers',
    activity: (e) => ({
      source: 'peers',
      msg: msg('tag.renamed', { from: e.from, to: e.to, peers_updated: e.peers_updated }),
      details: { from: e.from, to: e.to, registered: e.registered, peers_updated: e.peers_updated },
      user_id: e.actor,
    }),
  }),
  tag_deleted: kind({
    payload: z.object({
      name: z.string(),
      registered: z.boolean().meta({ description: 'was in the registry' }),
      peers_updated: z.number().meta({ description: 'peers it was stripped from' }),
      actor,
    }),
    scope: 'peers',
    activity: (e) => ({
      source: 'peers',
      msg: msg('tag.deleted', { name: e.name, peers_updated: e.peers_updated }),
      details: { registered: e.registered, peers_updated: e.peers_updated },
      user_id: e.actor,
    }),
  }),

  // home gateways (gateways/service.ts)
  gateway_online: kind({ payload: gatewayChange, scope: 'peers', activity: gatewayActivity, area: 'gateways', webhook: 'a home gateway is online' }),
  gateway_offline: kind({ payload: gatewayChange, scope: 'peers', activity: gatewayActivity, area: 'gateways', webhook: 'a home gateway went offline' }),
  gateway_unknown: kind({ payload: gatewayChange, scope: 'peers', activity: gatewayActivity, area: 'gateways', webhook: "a home gateway's state is unknown" }),

  // accounts and API tokens
  user_created: kind({
    payload: z.object({ user_id: z.number(), username: z.string(), role: z.string(), actor }),
    scope: 'admin',
    activity: (e) => ({ source: 'users', msg: msg('user.created', { username: e.username }), details: { id: e.user_id, role: e.role }, user_id: e.actor }),
    area: 'users',
    webhook: 'an admin-UI user was created',
  }),
  user_updated: kind({
    payload: z.object({
      user_id: z.number(),
      username: z.string(),
      fields: changed.meta({ description: 'changed field names, profile, language and theme changes included; "password" when it was set' }),
      actor,
    }),
    scope: 'admin',
    activity: (e) => ({ source: 'users', msg: msg('user.updated', { username: e.username }), details: { id: e.user_id, fields: e.fields }, user_id: e.actor }),
  }),
  user_deleted: kind({
    payload: z.object({ user_id: z.number(), username: z.string(), actor }),
    scope: 'admin',
    activity: (e) => ({ source: 'users', msg: msg('user.deleted', { username: e.username }), details: { id: e.user_id }, user_id: e.actor }),
    area: 'users',
    webhook: 'an admin-UI user was deleted',
  }),
  token_created: kind({
    payload: z.object({ token_id: z.number(), name: z.string(), scopes: z.array(z.string()), actor }),
    scope: 'admin',
    activity: (e) => ({ source: 'tokens', msg: msg('token.created', { name: e.name }), details: { id: e.token_id, scopes: e.scopes }, user_id: e.actor }),
    area: 'tokens',
    webhook: 'an API token was created',
  }),
  token_revoked: kind({
    payload: z.object({ token_id: z.number(), name: z.string(), actor }),
    scope: 'admin',
    activity: (e) => ({ source: 'tokens', msg: msg('token.revoked', { name: e.name }), details: { id: e.token_id }, user_id: e.actor }),
    area: 'tokens',
    webhook: 'an API token was revoked',
  }),
  token_fingerprint_reset: kind({
    payload: z.object({ token_id: z.number(), name: z.string(), actor }),
    scope: 'admin',
    activity: (e) => ({ source: 'tokens', msg: msg('token.binding_reset', { name: e.name }), details: { id: e.token_id }, user_id: e.actor }),
  }),
  token_updated: kind({
    payload: z.object({
      token_id: z.number(),
      name: z.string(),
      fields: changed.meta({ description: 'changed field names of PATCH /tokens/:id: name, split_tunnel' }),
      actor,
    }),
    scope: 'admin',
    activity: (e) => ({
      source: 'tokens',
      msg: msg('token.updated', { name: e.name, fields: e.fields }),
      details: { id: e.token_id, fields: e.fields },
      user_id: e.actor,
    }),
  }),
  client_registered: kind({
    payload: z.object({
      machine_id: z.number(),
      token_id: z.number(),
      peer_id: z.number(),
      peer_name: z.string(),
      hostname: z.string(),
      platform: z.string(),
      client_version: z.string(),
      new_machine: z.boolean().meta({ description: 'false: a known machine got a new peer' }),
      actor,
    }),
    scope: 'admin',
    activity: (e) => ({
      source: 'clients',
      msg: msg('client.registered', { hostname: e.hostname, platform: e.platform, client_version: e.client_version, peer_name: e.peer_name }),
      details: {
        machine_id: e.machine_id,
        token_id: e.token_id,
        peer_id: e.peer_id,
        hostname: e.hostname,
        platform: e.platform,
        client_version: e.client_version,
        new_machine: e.new_machine,
      },
      user_id: e.actor,
    }),
    area: 'tokens',
    webhook: 'a desktop client registered a machine and got its peer',
  }),

  // server-wide settings
  settings_changed: kind({
    payload: z.discriminatedUnion('section', [
      z.object({ section: z.literal('default_theme'), theme: z.string(), actor }),
      z.object({
        section: z.literal('security'),
        lockout: z.object({ max_attempts: z.number().optional(), duration: z.number().optional() }).optional(),
        second_factor_required: z.boolean().optional(),
        actor,
      }),
      z.object({ section: z.literal('monitoring'), interval_seconds: z.number(), previous: z.number(), actor }),
      z.object({
        section: z.literal('network'),
        public_host: z.string(),
        endpoint: z.string(),
        tls_mode: z.enum(['acme', 'internal']),
        changed: z.array(z.string()),
        actor,
      }),
      z.object({ section: z.literal('network_setup_skipped'), actor }),
      z.object({ section: z.literal('default_site'), mode: z.enum(['default', 'redirect', 'custom_html']), actor }),
    ]),
    scope: 'admin',
    fields:
      'section (default_theme: theme | security: lockout {max_attempts?, duration?}?, second_factor_required? | monitoring: interval_seconds, previous | network: public_host, endpoint, tls_mode (effective), changed (the stored fields that changed) | network_setup_skipped | default_site: mode), actor (user id or null)',
    activity: (e) => {
      const row = { source: 'settings', user_id: e.actor };
      if (e.section === 'default_theme') return { ...row, msg: msg('settings.default_theme', { theme: e.theme }) };
      if (e.section === 'security')
        return e.second_factor_required !== undefined && !e.lockout
          ? { ...row, msg: msg('settings.second_factor_policy', { required: e.second_factor_required }) }
          : {
              ...row,
              msg: msg('settings.lockout'),
              details: { ...e.lockout, ...(e.second_factor_required !== undefined ? { second_factor_required: e.second_factor_required } : {}) },
            };
      if (e.section === 'network')
        return {
          ...row,
          msg: msg('settings.network', { public_host: e.public_host, tls_mode: e.tls_mode }),
          details: { public_host: e.public_host, endpoint: e.endpoint, tls_mode: e.tls_mode, changed: e.changed },
        };
      if (e.section === 'network_setup_skipped') return { ...row, msg: msg('settings.network_setup_skipped') };
      if (e.section === 'default_site') return { ...row, msg: msg('settings.default_site', { mode: e.mode }), details: { mode: e.mode } };
      return {
        ...row,
        msg: msg('settings.monitoring_interval', { interval_seconds: e.interval_seconds }),
        details: { interval_seconds: e.interval_seconds, previous: e.previous },
      };
    },
  }),
  smtp_updated: kind({
    payload: z.object({ host: z.string(), port: z.number(), secure: z.boolean(), user: z.string().nullable(), password_changed: z.boolean(), actor }),
    scope: 'admin',
    activity: (e) => ({
      source: 'settings',
      msg: msg('smtp.saved', { host: e.host, port: e.port }),
      details: { host: e.host, port: e.port, secure: e.secure, user: e.user, password_changed: e.password_changed },
      user_id: e.actor,
    }),
  }),

  // routes
  route_created: kind({
    payload: z.object({ route_id: z.number(), domain: z.string(), route_type: z.string(), actor }),
    scope: 'routes',
    activity: (e) => ({
      source: 'routes',
      msg: msg('route.created', { domain: e.domain }),
      details: { route_id: e.route_id, route_type: e.route_type },
      user_id: e.actor,
    }),
    area: 'routes',
    webhook: 'a route was created',
  }),
  route_updated: kind({
    payload: z.object({ route_id: z.number(), domain: z.string(), fields: changed, actor }),
    scope: 'routes',
    activity: (e) => ({
      source: 'routes',
      msg: msg('route.updated', { domain: e.domain }),
      details: { route_id: e.route_id, fields: e.fields },
      user_id: e.actor,
    }),
    area: 'routes',
    webhook: 'a route was changed',
  }),
  route_enabled: kind({
    payload: z.object({ route_id: z.number(), domain: z.string(), actor }),
    scope: 'routes',
    activity: (e) => ({ source: 'routes', msg: msg('route.enabled', { domain: e.domain }), details: { route_id: e.route_id }, user_id: e.actor }),
    area: 'routes',
    webhook: 'a route was enabled',
  }),
  route_disabled: kind({
    payload: z.object({ route_id: z.number(), domain: z.string(), actor }),
    scope: 'routes',
    activity: (e) => ({ source: 'routes', msg: msg('route.disabled', { domain: e.domain }), details: { route_id: e.route_id }, user_id: e.actor }),
    area: 'routes',
    webhook: 'a route was disabled',
  }),
  route_deleted: kind({
    payload: z.object({ route_id: z.number(), domain: z.string(), actor }),
    scope: 'routes',
    activity: (e) => ({ source: 'routes', msg: msg('route.deleted', { domain: e.domain }), details: { route_id: e.route_id }, user_id: e.actor }),
    area: 'routes',
    webhook: 'a route was deleted',
  }),
  // redirect hosts (redirects/service.ts)
  redirect_host_created: kind({
    payload: z.object({ redirect_host_id: z.number(), domain: z.string(), target_url: z.string(), actor }),
    scope: 'routes',
    activity: (e) => ({
      source: 'routes',
      msg: msg('redirect.created', { domain: e.domain, target_url: e.target_url }),
      details: { redirect_host_id: e.redirect_host_id, target_url: e.target_url },
      user_id: e.actor,
    }),
    area: 'routes',
    webhook: 'a redirect host was created',
  }),
  redirect_host_updated: kind({
    payload: z.object({ redirect_host_id: z.number(), domain: z.string(), fields: changed, actor }),
    scope: 'routes',
    activity: (e) => ({
      source: 'routes',
      msg: msg('redirect.updated', { domain: e.domain }),
      details: { redirect_host_id: e.redirect_host_id, fields: e.fields },
      user_id: e.actor,
    }),
    area: 'routes',
    webhook: 'a redirect host was changed (enabled or disabled too)',
  }),
  redirect_host_deleted: kind({
    payload: z.object({ redirect_host_id: z.number(), domain: z.string(), actor }),
    scope: 'routes',
    activity: (e) => ({
      source: 'routes',
      msg: msg('redirect.deleted', { domain: e.domain }),
      details: { redirect_host_id: e.redirect_host_id },
      user_id: e.actor,
    }),
    area: 'routes',
    webhook: 'a redirect host was deleted',
  }),
  certificate_created: kind({
    payload: z.object({
      certificate_id: z.number(),
      name: z.string(),
      subject_names: z.array(z.string()),
      not_after: z.string().meta({ description: 'ISO' }),
      actor,
    }),
    scope: 'routes',
    activity: (e) => ({
      source: 'routes',
      msg: msg('certificate.created', { name: e.name, names: e.subject_names }),
      details: { certificate_id: e.certificate_id, subject_names: e.subject_names, not_after: e.not_after },
      user_id: e.actor,
    }),
    area: 'routes',
    webhook: 'a custom certificate was uploaded',
  }),
  certificate_replaced: kind({
    payload: z.object({
      certificate_id: z.number(),
      name: z.string(),
      subject_names: z.array(z.string()),
      not_after: z.string().meta({ description: 'ISO' }),
      actor,
    }),
    scope: 'routes',
    activity: (e) => ({
      source: 'routes',
      msg: msg('certificate.replaced', { name: e.name, not_after: e.not_after }),
      details: { certificate_id: e.certificate_id, subject_names: e.subject_names, not_after: e.not_after },
      user_id: e.actor,
    }),
    area: 'routes',
    webhook: 'a custom certificate was replaced (renewed) by an upload',
  }),
  certificate_deleted: kind({
    payload: z.object({ certificate_id: z.number(), name: z.string(), actor }),
    scope: 'routes',
    activity: (e) => ({ source: 'routes', msg: msg('certificate.deleted', { name: e.name }), details: { certificate_id: e.certificate_id }, user_id: e.actor }),
    area: 'routes',
    webhook: 'a custom certificate was deleted',
  }),
  certificate_expiring: kind({
    payload: z.object({
      certificate_id: z.number(),
      name: z.string(),
      not_after: z.string().meta({ description: 'ISO' }),
      days_left: z.number().meta({ description: 'whole days left' }),
      routes: z.array(z.string()).meta({ description: 'the domains of the routes using it' }),
    }),
    scope: 'routes',
    activity: (e) => ({
      severity: 'warning',
      source: 'routes',
      msg: msg('certificate.expiring', { name: e.name, days_left: e.days_left, not_after: e.not_after }),
      details: { certificate_id: e.certificate_id, not_after: e.not_after, days_left: e.days_left, routes: e.routes },
      user_id: null,
    }),
    area: 'routes',
    webhook: 'a custom certificate expires within 14 days (sent once per upload)',
  }),
  routes_batch: kind({
    payload: z.object({
      action: z.enum(['enable', 'disable', 'delete']).meta({ description: 'enable|disable|delete' }),
      route_ids: z.array(z.number()),
      actor,
    }),
    scope: 'routes',
    activity: (e) => ({
      source: 'routes',
      event_type: `routes_batch_${e.action}`,
      msg: msg('route.batch', { action: e.action, count: e.route_ids.length }),
      details: { ids: e.route_ids },
      user_id: e.actor,
    }),
    area: 'routes',
    webhook: 'a batch action (enable, disable, delete) on routes',
  }),
  rdp_route_created: kind({
    payload: z.object({ rdp_route_id: z.number(), name: z.string(), access_mode: z.string(), actor }),
    scope: 'routes',
    activity: (e) => ({
      source: 'rdp',
      msg: msg('rdp.created', { name: e.name, access_mode: e.access_mode }),
      details: { rdp_route_id: e.rdp_route_id, access_mode: e.access_mode },
      user_id: e.actor,
    }),
  }),
  rdp_route_updated: kind({
    payload: z.object({
      rdp_route_id: z.number(),
      name: z.string(),
      fields: changed.meta({ description: 'changed field names; credentials, maintenance_windows, rotation_state for those endpoints' }),
      actor,
    }),
    scope: 'routes',
    activity: (e) => ({
      source: 'rdp',
      msg: msg('rdp.updated', { name: e.name }),
      details: { rdp_route_id: e.rdp_route_id, fields: e.fields },
      user_id: e.actor,
    }),
  }),
  rdp_route_deleted: kind({
    payload: z.object({ rdp_route_id: z.number(), name: z.string(), actor }),
    scope: 'routes',
    activity: (e) => ({ source: 'rdp', msg: msg('rdp.deleted', { name: e.name }), details: { rdp_route_id: e.rdp_route_id }, user_id: e.actor }),
  }),
  rdp_route_toggled: kind({
    payload: z.object({ rdp_route_id: z.number(), name: z.string(), enabled: z.boolean(), actor }),
    scope: 'routes',
    activity: (e) => ({
      source: 'rdp',
      msg: msg('rdp.toggled', { name: e.name, enabled: e.enabled }),
      details: { rdp_route_id: e.rdp_route_id, enabled: e.enabled },
      user_id: e.actor,
    }),
  }),
  route_auth_created: kind({ payload: routeAuthChange, scope: 'routes', activity: routeAuthActivity(true) }),
  route_auth_updated: kind({ payload: routeAuthChange, scope: 'routes', activity: routeAuthActivity(false) }),
  route_auth_deleted: kind({
    payload: z.object({ route_id: z.number(), domain: z.string(), actor }),
    scope: 'routes',
    activity: (e) => ({ source: 'routes', msg: msg('route_auth.removed', { domain: e.domain }), details: { route_id: e.route_id }, user_id: e.actor }),
  }),
  share_link_created: kind({
    area: 'routes',
    payload: z.object({
      route_id: z.number(),
      domain: z.string(),
      link_id: z.number(),
      expires_at: z.string().meta({ description: 'ISO' }),
      max_uses: z.number().nullable(),
      path_prefix: z.string().nullable(),
      note: z.string().nullable(),
      actor,
    }),
    scope: 'routes',
    activity: (e) => ({
      source: 'routes',
      msg: msg('share_link.created', { domain: e.domain, link_id: e.link_id, expires_at: e.expires_at, note: e.note }),
      details: { route_id: e.route_id, link_id: e.link_id, expires_at: e.expires_at, max_uses: e.max_uses, path_prefix: e.path_prefix },
      user_id: e.actor,
    }),
    webhook: 'a share link to a protected route was made',
  }),
  share_link_used: kind({
    area: 'routes',
    payload: z.object({ route_id: z.number(), domain: z.string(), link_id: z.number(), ip: z.string(), uses: z.number() }),
    scope: 'routes',
    activity: (e) => ({
      source: 'route_auth',
      msg: msg('share_link.used', { domain: e.domain, link_id: e.link_id, ip: e.ip }),
      details: { route_id: e.route_id, link_id: e.link_id, ip: e.ip, uses: e.uses },
      ip: e.ip,
      user_id: null,
    }),
    webhook: 'a share link was opened (a visitor got a session on its route)',
  }),
  share_link_revoked: kind({
    area: 'routes',
    payload: z.object({ route_id: z.number(), domain: z.string(), link_id: z.number(), sessions_ended: z.number(), actor }),
    scope: 'routes',
    activity: (e) => ({
      source: 'routes',
      msg: msg('share_link.revoked', { domain: e.domain, link_id: e.link_id }),
      details: { route_id: e.route_id, link_id: e.link_id, sessions_ended: e.sessions_ended },
      user_id: e.actor,
    }),
    webhook: 'a share link was revoked (its sessions ended)',
  }),
  route_up: kind({
    payload: routeCheck,
    scope: 'routes',
    activity: routeCheckActivity(true),
    area: 'monitoring',
    webhook: 'uptime monitoring: a route answers again',
  }),
  route_down: kind({
    payload: routeCheck,
    scope: 'routes',
    activity: routeCheckActivity(false),
    area: 'monitoring',
    webhook: 'uptime monitoring: a route stopped answering',
  }),
  route_backend_down: kind({
    payload: routeBackend,
    scope: 'routes',
    activity: (e) => ({ severity: 'warning', source: 'routes', msg: msg('route.backend_down', { domain: e.domain, backend: e.backend }), details: { ...e } }),
    area: 'monitoring',
    webhook: "a backend of a route failed its health check and left the route's rotation",
  }),
  route_backend_up: kind({
    payload: routeBackend,
    scope: 'routes',
    activity: (e) => ({ source: 'routes', msg: msg('route.backend_up', { domain: e.domain, backend: e.backend }), details: { ...e } }),
    area: 'monitoring',
    webhook: "a backend of a route passes its health check again and is back in the route's rotation",
  }),
  circuit_open: kind({
    payload: z.object({ route_id: z.number(), failure_count: z.number() }),
    scope: 'routes',
    activity: (e) => ({
      severity: 'warning',
      source: 'routes',
      event_type: 'circuit_breaker_open',
      msg: msg('route.breaker_opened', { route_id: e.route_id, failure_count: e.failure_count }),
      details: { route_id: e.route_id, failure_count: e.failure_count },
    }),
    area: 'monitoring',
    webhook: "a route's circuit breaker opened",
  }),
  circuit_closed: kind({
    payload: z.object({ route_id: z.number(), open_seconds: z.number() }),
    scope: 'routes',
    activity: (e) => ({
      source: 'routes',
      event_type: 'circuit_breaker_closed',
      msg: msg('route.breaker_closed', { route_id: e.route_id, open_seconds: e.open_seconds }),
      details: { route_id: e.route_id, open_seconds: e.open_seconds },
    }),
    area: 'monitoring',
    webhook: "a route's circuit breaker closed again",
  }),
  route_access_closed: kind({
    payload: z.object({
      route_id: z.number(),
      domain: z.string(),
      opens_at: z.string().nullable().meta({ description: 'ISO time it opens again; null: never' }),
    }),
    scope: 'routes',
    activity: (e) => ({
      source: 'routes',
      msg: msg('schedule.route_closed', { domain: e.domain, opens_at: e.opens_at }),
      details: { route_id: e.route_id, opens_at: e.opens_at },
    }),
    area: 'routes',
    webhook: 'a route closed at the end of its access window (it answers 403 until it opens)',
  }),
  route_access_opened: kind({
    payload: z.object({
      route_id: z.number(),
      domain: z.string(),
      closes_at: z.string().nullable().meta({ description: 'ISO time it closes again; null: never' }),
    }),
    scope: 'routes',
    activity: (e) => ({ source: 'routes', msg: msg('schedule.route_opened', { domain: e.domain }), details: { route_id: e.route_id, closes_at: e.closes_at } }),
    area: 'routes',
    webhook: 'a route opened at the start of its access window',
  }),
  peer_access_closed: kind({
    payload: z.object({ peer_id: z.number(), name: z.string(), opens_at: z.string().nullable().meta({ description: 'ISO time it opens again; null: never' }) }),
    scope: 'peers',
    activity: (e) => ({
      source: 'peers',
      msg: msg('schedule.peer_closed', { name: e.name, opens_at: e.opens_at }),
      details: { peer_id: e.peer_id, opens_at: e.opens_at },
    }),
    area: 'peers',
    webhook: 'a peer left the tunnel at the end of its access window',
  }),
  peer_access_opened: kind({
    payload: z.object({
      peer_id: z.number(),
      name: z.string(),
      closes_at: z.string().nullable().meta({ description: 'ISO time it closes again; null: never' }),
    }),
    scope: 'peers',
    activity: (e) => ({ source: 'peers', msg: msg('schedule.peer_opened', { name: e.name }), details: { peer_id: e.peer_id, closes_at: e.closes_at } }),
    area: 'peers',
    webhook: 'a peer came back on the tunnel at the start of its access window',
  }),
  // data quotas (quotas/service.ts)
  peer_quota_warning: kind({
    payload: quotaCount,
    scope: 'peers',
    activity: (e) => ({
      severity: 'warning',
      source: 'peers',
      msg: msg('quota.warning', { name: e.name, used: e.used_bytes, limit: e.limit_bytes }),
      details: { peer_id: e.peer_id, used_bytes: e.used_bytes, limit_bytes: e.limit_bytes, period_end: e.period_end },
    }),
    area: 'peers',
    webhook: 'a peer used 80 % of its data quota this period',
  }),
  peer_quota_exceeded: kind({
    payload: quotaCount.extend({
      action_applied: z
        .enum(['disable', 'throttle'])
        .nullable()
        .meta({ description: 'disable|throttle: what the quota did now; null: nothing (already disabled)' }),
    }),
    scope: 'peers',
    activity: (e) => ({
      severity: 'warning',
      source: 'peers',
      msg: msg('quota.exceeded', { name: e.name, used: e.used_bytes, limit: e.limit_bytes, action: e.action_applied }),
      details: { peer_id: e.peer_id, used_bytes: e.used_bytes, limit_bytes: e.limit_bytes, period_end: e.period_end, action_applied: e.action_applied },
    }),
    area: 'peers',
    webhook: 'a peer used its data quota: disabled or throttled until the next period',
  }),
  peer_quota_reset: kind({
    payload: z.object({
      peer_id: z.number(),
      name: z.string(),
      reason: z.enum(['period', 'admin']).meta({ description: "period: a new period started; admin: an admin reset the period's count" }),
      period_start: z.string(),
      period_end: z.string(),
      action_undone: z.enum(['disable', 'throttle']).nullable().meta({ description: 'what the quota had done and was undone; null: nothing' }),
      actor,
    }),
    scope: 'peers',
    activity: (e) => ({
      source: 'peers',
      msg: msg(e.reason === 'admin' ? 'quota.reset_admin' : 'quota.reset_period', { name: e.name }),
      details: { peer_id: e.peer_id, reason: e.reason, period_start: e.period_start, period_end: e.period_end, action_undone: e.action_undone },
      user_id: e.actor,
    }),
    area: 'peers',
    webhook: "a peer's data quota starts from zero: a new period (the quota's action is undone) or an admin's reset",
  }),
  peer_quota_granted: kind({
    payload: z.object({
      peer_id: z.number(),
      name: z.string(),
      bytes: z.number().meta({ description: 'bytes granted now' }),
      granted_bytes: z.number().meta({ description: 'bytes granted this period in all' }),
      period_end: z.string(),
      actor,
    }),
    scope: 'peers',
    activity: (e) => ({
      source: 'peers',
      msg: msg('quota.granted', { name: e.name, bytes: e.bytes }),
      details: { peer_id: e.peer_id, bytes: e.bytes, granted_bytes: e.granted_bytes, period_end: e.period_end },
      user_id: e.actor,
    }),
    area: 'peers',
    webhook: 'an admin granted a peer extra bytes for its data quota this period',
  }),

  // sign-in (not streamed: they reach `logs` readers as activity rows)
  login_failed: kind({
    payload: z.object({ username: z.string(), failures: z.number(), ip: z.string().nullable() }),
    scope: null,
    activity: (e) => ({
      severity: 'warning',
      source: 'auth',
      msg: msg('auth.login_failed', { username: e.username }),
      details: { username: e.username, failures: e.failures },
      ip: e.ip,
    }),
    area: 'users',
    webhook: 'a failed admin sign-in',
  }),
  account_locked: kind({
    payload: z.object({ username: z.string(), failures: z.number(), until: z.number().nullable(), ip: z.string().nullable() }),
    scope: null,
    activity: (e) => ({
      severity: 'warning',
      source: 'auth',
      msg: msg('auth.locked', { username: e.username, failures: e.failures }),
      details: { username: e.username, until: e.until },
      ip: e.ip,
    }),
    area: 'users',
    webhook: 'an admin account was locked after failed sign-ins',
  }),
  user_second_factor_changed: kind({
    payload: z.object({
      user_id: z.number(),
      username: z.string(),
      change: z
        .enum(['totp_enabled', 'totp_removed', 'recovery_codes_renewed', 'reset', 'recovery_code_used', 'passkey_added', 'passkey_renamed', 'passkey_removed'])
        .meta({
          description:
            'totp_enabled: a TOTP was activated (new recovery codes) | totp_removed: the owner removed it | recovery_codes_renewed | reset: an admin or the CLI removed every second factor (TOTP, passkeys, recovery codes) | recovery_code_used: a sign-in spent a recovery code | passkey_added, passkey_renamed, passkey_removed: the owner changed a passkey',
        }),
      actor,
    }),
    scope: 'admin',
    activity: (e) => ({
      severity: e.change === 'reset' || e.change === 'recovery_code_used' ? 'warning' : 'info',
      source: 'auth',
      msg: msg(`second_factor.${e.change}`, { username: e.username }),
      details: { id: e.user_id, change: e.change },
      user_id: e.actor,
    }),
    area: 'users',
    webhook:
      "an admin-UI account's second factor changed (a TOTP activated or removed, a passkey added, renamed or removed, reset, recovery codes renewed or one spent)",
  }),
  /** A Gatehouse user was deleted or got a new password: whatever they signed in to with it ends (route auth). The users service records its own rows. */
  user_credentials_changed: kind({
    payload: z.object({ user_id: z.number(), reason: z.enum(['deleted', 'password']) }),
    scope: null,
  }),
  /**
   * A write to a table that caches are built from, by any writer (services, tests, batch jobs):
   * announced by watchTables() from the one set of model hooks, once when written and once more when
   * the write's transaction commits (a reader may have refilled a cache from pre-commit data).
   */
  rows_changed: kind({
    payload: z.object({
      table: z.enum(['routes', 'peers']),
      destroyed: z.boolean(),
      phase: z.enum(['write', 'commit']),
      keys: z
        .array(z.object({ id: z.number().nullable(), peer_id: z.number().nullable() }))
        .nullable()
        .optional()
        .meta({
          description:
            "the rows written, when the write names them: each row's id and the peer it belongs to (a peer itself, a route's target when the write set it); null: not known, any row may have changed",
        }),
    }),
    scope: null,
  }),

  // the system (the restart, sync and interface messages are logged where they happen)
  activity_recorded: kind({ payload: z.object({ entry: activityEntry }), scope: 'logs' }),
  wireguard_state: kind({
    payload: z.object({
      interface: z.string(),
      running: z.boolean(),
      mode: z.enum(['kernel', 'userspace']).nullable().meta({ description: 'kernel|userspace|null' }),
      error: z.string().nullable().meta({ description: 'last full sync error or null' }),
      reason: z.string().meta({ description: 'interface up, synced, interface missing, sync failed, stopped' }),
    }),
    scope: 'system',
    note: 'when the interface goes up or away or a full sync starts or stops failing',
  }),
  caddy_state: kind({
    payload: z.object({
      running: z.boolean(),
      pid: z.number().nullable(),
      reason: z.string().meta({ description: 'started, restarted, exited (…), stopped' }),
    }),
    scope: 'system',
    note: 'managed Caddy only',
  }),
  config_changed: kind({
    payload: z.object({ target: z.literal('proxy').meta({ description: '"proxy"' }), config_hash: z.string(), reason: z.string().nullable() }),
    scope: 'system',
    note: 'once a new configuration is live',
  }),

  // RDP operations (rdp/status.ts, rdp/sessions.ts)
  rdp_status_changed: kind({
    payload: z.object({
      rdp_route_id: z.number(),
      name: z.string(),
      reachable: z.boolean(),
      previous: z.boolean().meta({ description: 'reachable before' }),
      latency_ms: z.number().nullable(),
      path: z.string().meta({ description: 'internal|external|both|gateway' }),
      error: z.string().nullable(),
      error_code: messageRefSchema
        .nullable()
        .optional()
        .meta({ description: 'error as a message: rdp.check.paths (each path with its reason) or rdp.check.not_checked' }),
    }),
    scope: 'routes',
    note: "when a check's reachability differs from the last",
    activity: (e) => ({
      severity: e.reachable ? 'info' : 'warning',
      source: 'rdp',
      msg: e.reachable
        ? msg('rdp.reachable', { name: e.name, path: e.path, latency_ms: e.latency_ms })
        : msg('rdp.unreachable', { name: e.name, path: e.path, error: e.error, reason: e.error_code ?? null }),
      details: { rdp_route_id: e.rdp_route_id, reachable: e.reachable, previous: e.previous, latency_ms: e.latency_ms, path: e.path, error: e.error },
    }),
    area: 'rdp',
    webhook: "an RDP route's target became reachable or unreachable",
  }),
  rdp_session_started: kind({
    payload: z.object({
      session_id: z.number(),
      rdp_route_id: z.number(),
      name: z.string(),
      client_name: z.string().nullable(),
      peer_id: z.number().nullable(),
      token_id: z.number().nullable(),
      user_id: z.number().nullable(),
      machine_id: z.number().nullable(),
    }),
    scope: 'routes',
    activity: (e) => ({
      source: 'rdp',
      msg: msg('rdp.session_started', { session_id: e.session_id, name: e.name, client_name: e.client_name }),
      details: {
        session_id: e.session_id,
        rdp_route_id: e.rdp_route_id,
        client_name: e.client_name,
        peer_id: e.peer_id,
        token_id: e.token_id,
        user_id: e.user_id,
        machine_id: e.machine_id,
      },
    }),
    area: 'rdp',
    webhook: 'a desktop client started an RDP session',
  }),
  rdp_session_ended: kind({
    payload: z.object({
      session_id: z.number(),
      rdp_route_id: z.number(),
      name: z.string(),
      client_name: z.string().nullable(),
      reason: rdpEndReason,
      duration_s: z.number(),
      actor,
    }),
    scope: 'routes',
    note: 'at the end, a disconnect order answered by a heartbeat, the lost-session sweep, the route disabled or deleted',
    activity: (e) => ({
      severity: e.reason === 'lost' ? 'warning' : 'info',
      source: 'rdp',
      msg: msg('rdp.session_ended', { session_id: e.session_id, name: e.name, reason: e.reason, duration_s: e.duration_s }),
      details: { session_id: e.session_id, rdp_route_id: e.rdp_route_id, client_name: e.client_name, reason: e.reason, duration_s: e.duration_s },
      user_id: e.actor,
    }),
    area: 'rdp',
    webhook: 'an RDP session ended (client, lost, disconnected, route disabled or deleted)',
  }),

  // operations: backups and the licence (backup service, licence service, masterkey/rotation.ts)
  backup_completed: kind({
    payload: z.object({ job_id: backupJob, target: backupTarget, file: z.string().nullable(), bytes: z.number(), duration_ms: z.number() }),
    scope: 'system',
    activity: (e) => ({
      source: 'backup',
      msg: msg('backup.completed', { file: e.file, target: e.target, bytes: e.bytes }),
      details: { job_id: e.job_id, target: e.target, file: e.file, bytes: e.bytes, duration_ms: e.duration_ms },
    }),
    area: 'system',
    webhook: 'a backup was written',
  }),
  backup_failed: kind({
    payload: z.object({ job_id: backupJob, target: backupTarget, error: z.string() }),
    scope: 'system',
    activity: (e) => ({
      severity: 'error',
      source: 'backup',
      msg: msg('backup.failed', { target: e.target, error: e.error }),
      details: { job_id: e.job_id, target: e.target, error: e.error },
    }),
    area: 'system',
    webhook: 'a backup failed',
  }),
  master_key_rotated: kind({
    payload: z.object({
      source: z.enum(['cli', 'api']).meta({ description: 'cli|api' }),
      sealed_values: z.number().meta({ description: 'how many values were re-sealed' }),
      tables: z.record(z.string(), z.number()).meta({ description: 'per table' }),
      hooks: z.array(z.string()).meta({ description: 'names of the hooks run' }),
      actor,
    }),
    scope: 'admin',
    note: 'after the commit and the key file swap',
    activity: (e) => ({
      severity: 'warning',
      source: e.source,
      msg: msg('backup.master_key_rotated', { source: e.source, sealed_values: e.sealed_values }),
      details: { sealed_values: e.sealed_values, tables: e.tables, hooks: e.hooks },
      user_id: e.actor,
    }),
    area: 'system',
    webhook: 'the master key was rotated (every sealed secret re-sealed under a new key)',
  }),
  licence_changed: kind({
    payload: z.object({
      reason: z
        .enum(['activated', 'refreshed', 'expired', 'removed', 'grace_ended', 'revoked'])
        .meta({ description: 'activated|refreshed|expired|removed|grace_ended|revoked' }),
      plan: z.string(),
      features: z.array(z.string()),
      expires_at: ms('epoch ms or null'),
      actor,
    }),
    scope: 'admin',
    activity: (e) => ({
      source: 'license',
      msg: msg('licence.changed', { reason: e.reason, plan: e.plan }),
      details: { reason: e.reason, plan: e.plan, features: e.features, expires_at: e.expires_at },
      user_id: e.actor,
    }),
    area: 'system',
    webhook: 'the licence was activated, refreshed, removed or expired',
  }),

  // the cluster (src/cluster): nodes on one PostgreSQL, and the leader that runs the work done once
  cluster_node_joined: kind({
    payload: z.object({
      name: z.string().meta({ description: 'the node (GATEHOUSE_NODE_NAME)' }),
      address: z.string().nullable(),
      version: z.string(),
      at: z.number(),
    }),
    scope: 'system',
    note: 'Sent by the node that joined, when it starts and when it comes back after it was lost.',
    activity: (e) => ({
      source: 'cluster',
      msg: msg('cluster.node_joined', { name: e.name, address: e.address }),
      details: { name: e.name, address: e.address, version: e.version },
    }),
    area: 'system',
    webhook: 'a node joined the cluster (started, or came back after it was lost)',
  }),
  cluster_node_lost: kind({
    payload: z.object({ name: z.string(), last_seen_at: z.number().meta({ description: 'epoch ms of its last heartbeat' }), at: z.number() }),
    scope: 'system',
    note: 'Sent once by the leader when a node missed its heartbeats (docs/guides/cluster.md).',
    activity: (e) => ({
      severity: 'warning',
      source: 'cluster',
      msg: msg('cluster.node_lost', { name: e.name, last_seen_at: new Date(e.last_seen_at).toISOString() }),
      details: { name: e.name, last_seen_at: e.last_seen_at },
    }),
    area: 'system',
    webhook: 'a node of the cluster stopped sending heartbeats',
  }),
  cluster_leader_changed: kind({
    payload: z.object({
      leader: z.string().meta({ description: 'the node that leads now' }),
      previous: z.string().nullable().meta({ description: 'the node that led before, null when none was recorded' }),
      at: z.number(),
    }),
    scope: 'system',
    note: 'Sent by the new leader when it takes the advisory lock.',
    activity: (e) => ({
      severity: e.previous ? 'warning' : 'info',
      source: 'cluster',
      msg: msg('cluster.leader_changed', { leader: e.leader, previous: e.previous }),
      details: { leader: e.leader, previous: e.previous },
    }),
    area: 'system',
    webhook: 'another node of the cluster became the leader',
  }),
  cluster_node_removed: kind({
    payload: z.object({
      name: z.string().meta({ description: 'the lost node whose row was removed' }),
      last_seen_at: z.number().meta({ description: 'epoch ms of its last heartbeat' }),
      actor,
      at: z.number(),
    }),
    scope: 'system',
    note: 'Sent when an admin removes a lost node from the registry (DELETE /api/v1/cluster/nodes/:name).',
    activity: (e) => ({
      source: 'cluster',
      msg: msg('cluster.node_removed', { name: e.name }),
      details: { name: e.name, last_seen_at: e.last_seen_at },
      user_id: e.actor,
    }),
    area: 'system',
    webhook: 'an admin removed a lost node from the cluster registry',
  }),

  // webhooks: the admin's changes, and the delivery log (not deliverable by webhooks)
  webhook_created: kind({
    payload: z.object({
      webhook_id: z.number(),
      name: z.string(),
      url: z.string(),
      events: z.array(z.string()),
      allow_private: z.boolean().meta({ description: 'an admin allowed it loopback, private ranges and this server' }),
      actor,
    }),
    scope: 'admin',
    activity: (e) => ({
      // a webhook allowed to reach the LAN is the admin's explicit choice: a warning row that says so
      severity: e.allow_private ? 'warning' : 'info',
      source: 'webhooks',
      msg: msg('webhook.created', { name: e.name, event_kinds: e.events.length }),
      details: { webhook_id: e.webhook_id, url: e.url, events: e.events, allow_private: e.allow_private },
      user_id: e.actor,
    }),
  }),
  webhook_updated: kind({
    payload: z.object({
      webhook_id: z.number(),
      name: z.string(),
      fields: changed.meta({ description: 'changed field names; "secret" when it was replaced' }),
      allow_private: z.boolean().meta({ description: 'after the change: an admin allowed it loopback, private ranges and this server' }),
      actor,
    }),
    scope: 'admin',
    activity: (e) => ({
      severity: e.fields.includes('allow_private') && e.allow_private ? 'warning' : 'info',
      source: 'webhooks',
      msg: msg('webhook.updated', { name: e.name, fields: e.fields }),
      details: { webhook_id: e.webhook_id, fields: e.fields, allow_private: e.allow_private },
      user_id: e.actor,
    }),
  }),
  webhook_enabled: kind({
    payload: z.object({ webhook_id: z.number(), name: z.string(), actor }),
    scope: 'admin',
    activity: (e) => ({ source: 'webhooks', msg: msg('webhook.enabled', { name: e.name }), details: { webhook_id: e.webhook_id }, user_id: e.actor }),
  }),
  webhook_disabled: kind({
    payload: z.object({ webhook_id: z.number(), name: z.string(), actor }),
    scope: 'admin',
    activity: (e) => ({ source: 'webhooks', msg: msg('webhook.disabled', { name: e.name }), details: { webhook_id: e.webhook_id }, user_id: e.actor }),
  }),
  webhook_deleted: kind({
    payload: z.object({ webhook_id: z.number(), name: z.string(), actor }),
    scope: 'admin',
    activity: (e) => ({ source: 'webhooks', msg: msg('webhook.deleted', { name: e.name }), details: { webhook_id: e.webhook_id }, user_id: e.actor }),
  }),
  oidc_provider_created: kind({
    payload: z.object({
      provider_id: z.number(),
      name: z.string(),
      issuer: z.string(),
      allow_private: z.boolean().meta({ description: 'an admin allowed it loopback, private ranges and this server' }),
      actor,
    }),
    scope: 'admin',
    activity: (e) => ({
      severity: e.allow_private ? 'warning' : 'info',
      source: 'auth',
      msg: msg('oidc.provider_created', { name: e.name }),
      details: { provider_id: e.provider_id, issuer: e.issuer, allow_private: e.allow_private },
      user_id: e.actor,
    }),
  }),
  oidc_provider_updated: kind({
    payload: z.object({
      provider_id: z.number(),
      name: z.string(),
      fields: changed.meta({ description: 'changed field names; "client_secret" when it was replaced or removed' }),
      allow_private: z.boolean().meta({ description: 'after the change: an admin allowed it loopback, private ranges and this server' }),
      actor,
    }),
    scope: 'admin',
    activity: (e) => ({
      severity: e.fields.includes('allow_private') && e.allow_private ? 'warning' : 'info',
      source: 'auth',
      msg: msg('oidc.provider_updated', { name: e.name, fields: e.fields }),
      details: { provider_id: e.provider_id, fields: e.fields, allow_private: e.allow_private },
      user_id: e.actor,
    }),
  }),
  oidc_provider_deleted: kind({
    payload: z.object({ provider_id: z.number(), name: z.string(), actor }),
    scope: 'admin',
    activity: (e) => ({ source: 'auth', msg: msg('oidc.provider_deleted', { name: e.name }), details: { provider_id: e.provider_id }, user_id: e.actor }),
  }),
  webhook_delivery_updated: kind({
    payload: z.object({
      webhook_id: z.number(),
      delivery_id: z.number(),
      event: z.string(),
      status: deliveryStatus,
      attempts: z.number(),
      response_code: z.number().nullable(),
    }),
    scope: 'admin',
    // the delivery log is the webhook's own (GET /webhooks/:id/deliveries)
    note: 'when a delivery is queued and after each attempt (live only, not an activity row)',
  }),
  webhook_delivery_failed: kind({
    payload: z.object({
      webhook_id: z.number(),
      name: z.string(),
      delivery_id: z.number(),
      event: z.string(),
      attempts: z.number(),
      error: z.string().nullable().meta({ description: 'of the last attempt' }),
    }),
    scope: 'admin',
    note: 'after the last attempt failed',
    activity: (e) => ({
      severity: 'warning',
      source: 'webhooks',
      msg: msg('webhook.delivery_failed', { name: e.name, event: e.event, attempts: e.attempts, error: e.error }),
      details: { webhook_id: e.webhook_id, delivery_id: e.delivery_id, event: e.event, attempts: e.attempts, error: e.error },
    }),
  }),
} satisfies Record<string, EventKind>;

export type EventKinds = typeof EVENT_KINDS;
export type EventType = keyof EventKinds;
export const EVENT_TYPES = Object.keys(EVENT_KINDS) as EventType[];

/** The payload's fields as the reference lists them: from the descriptor, or the schema's keys with their descriptions. */
export function payloadFields(type: EventType): string {
  const d: EventKind = EVENT_KINDS[type];
  let fields = d.fields;
  if (fields === undefined) {
    const shape = (d.payload as z.ZodObject).shape;
    fields = Object.entries(shape)
      .map(([name, s]) => {
        const description = (s as z.ZodType).meta()?.description;
        return description ? `${name} (${description})` : name;
      })
      .join(', ');
  }
  return d.note ? `${fields}; ${d.note}` : fields;
}
