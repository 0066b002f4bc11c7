// Which domain events GET /api/v1/events streams, to whom, and what their payloads hold.
//
// - STREAMED names every event type of the bus (events.ts): the token scope that covers it, or null
//   when it is not streamed (internal cache signals; sign-in failures, which reach the stream as
//   activity rows). A new event type does not compile until it is listed here.
// - Scopes (SPEC "Authentication" 2): `peers` covers peer_*, gateway_*, group and tag events and the
//   traffic rates; `routes` covers route_*, routes_batch, circuit_*; `logs` the activity rows;
//   `system` the WireGuard/Caddy state. `admin` events (users, tokens, settings) go only to admin
//   sessions and full-access/read-only tokens. An admin session, a full-access and a read-only
//   token get every streamed event.
// - The payload of a message is the event without `type`, plus `at` (epoch ms) when the event has
//   none of its own. The field lists below feed the OpenAPI document and docs/reference/events.md
//   (generated: npm run docs).
import type { EventType } from '../events.js';
import type { Principal } from '../http/auth.js';

export type StreamScope = 'peers' | 'routes' | 'logs' | 'system' | 'admin';
export const STREAM_SCOPES: readonly StreamScope[] = ['peers', 'routes', 'logs', 'system', 'admin'];

export interface StreamedEvent {
  scope: StreamScope;
  /** The payload's fields, for the OpenAPI document. */
  fields: string;
}

const actor = 'actor (user id or null)';

export const STREAMED: Record<EventType, StreamedEvent | null> = {
  peer_created: { scope: 'peers', fields: `peer_id, name, address, peer_type, ${actor}` },
  peer_updated: { scope: 'peers', fields: `peer_id, name, fields (changed field names), ${actor}` },
  peer_enabled: { scope: 'peers', fields: `peer_id, name, ${actor}` },
  peer_disabled: { scope: 'peers', fields: `peer_id, name, ${actor}` },
  peer_deleted: { scope: 'peers', fields: `peer_id, name, address, ${actor}` },
  peer_expired: { scope: 'peers', fields: 'peer_id, name, expires_at (ISO), enabled' },
  peer_online: { scope: 'peers', fields: 'peer_id, name, endpoint, latest_handshake (epoch ms)' },
  peer_offline: { scope: 'peers', fields: 'peer_id, name, endpoint, latest_handshake (epoch ms)' },
  peer_traffic: { scope: 'peers', fields: 'interval_s, rx_rate, tx_rate (all peers, bytes/s), peers [{peer_id, rx_rate, tx_rate, total_rx, total_tx}] (the peers that moved data since the last poll, each once more at 0 when it stops); no event while all are idle' },
  peer_group_created: { scope: 'peers', fields: `group_id, name, ${actor}` },
  peer_group_updated: { scope: 'peers', fields: `group_id, name, fields (changed field names), ${actor}` },
  peer_group_deleted: { scope: 'peers', fields: `group_id, name, peers_ungrouped, ${actor}` },
  tag_created: { scope: 'peers', fields: `tag_id, name (a new registry name), ${actor}` },
  tag_renamed: { scope: 'peers', fields: `from, to, registered (is in the registry), peers_updated (peers that carried it), ${actor}` },
  tag_deleted: { scope: 'peers', fields: `name, registered (was in the registry), peers_updated (peers it was stripped from), ${actor}` },
  gateway_online: { scope: 'peers', fields: 'peer_id, name, from, to (online|offline|unknown), reason, last_seen_at, at' },
  gateway_offline: { scope: 'peers', fields: 'peer_id, name, from, to (online|offline|unknown), reason, last_seen_at, at' },
  gateway_unknown: { scope: 'peers', fields: 'peer_id, name, from, to (online|offline|unknown), reason, last_seen_at, at' },
  user_created: { scope: 'admin', fields: `user_id, username, role, ${actor}` },
  user_updated: { scope: 'admin', fields: `user_id, username, fields (changed field names, profile, language and theme changes included; "password" when it was set), ${actor}` },
  user_deleted: { scope: 'admin', fields: `user_id, username, ${actor}` },
  token_created: { scope: 'admin', fields: `token_id, name, scopes, ${actor}` },
  token_revoked: { scope: 'admin', fields: `token_id, name, ${actor}` },
  token_fingerprint_reset: { scope: 'admin', fields: `token_id, name, ${actor}` },
  token_updated: { scope: 'admin', fields: `token_id, name, fields (changed field names of PATCH /tokens/:id: name, split_tunnel), ${actor}` },
  client_registered: { scope: 'admin', fields: `machine_id, token_id, peer_id, peer_name, hostname, platform, client_version, new_machine (false: a known machine got a new peer), ${actor}` },
  settings_changed: { scope: 'admin', fields: `section (default_theme: theme | security: lockout {max_attempts?, duration?} | monitoring: interval_seconds, previous), ${actor}` },
  smtp_updated: { scope: 'admin', fields: `host, port, secure, user, password_changed, ${actor}` },
  route_created: { scope: 'routes', fields: `route_id, domain, route_type, ${actor}` },
  route_updated: { scope: 'routes', fields: `route_id, domain, fields (changed field names), ${actor}` },
  route_enabled: { scope: 'routes', fields: `route_id, domain, ${actor}` },
  route_disabled: { scope: 'routes', fields: `route_id, domain, ${actor}` },
  route_deleted: { scope: 'routes', fields: `route_id, domain, ${actor}` },
  routes_batch: { scope: 'routes', fields: `action (enable|disable|delete), route_ids, ${actor}` },
  rdp_route_created: { scope: 'routes', fields: `rdp_route_id, name, access_mode, ${actor}` },
  rdp_route_updated: { scope: 'routes', fields: `rdp_route_id, name, fields (changed field names; credentials, maintenance_windows, rotation_state for those endpoints), ${actor}` },
  rdp_route_deleted: { scope: 'routes', fields: `rdp_route_id, name, ${actor}` },
  rdp_route_toggled: { scope: 'routes', fields: `rdp_route_id, name, enabled, ${actor}` },
  route_auth_created: { scope: 'routes', fields: `route_id, domain, method, two_factor_method, sessions_ended, password_changed, ${actor}` },
  route_auth_updated: { scope: 'routes', fields: `route_id, domain, method, two_factor_method, sessions_ended, password_changed, ${actor}` },
  route_auth_deleted: { scope: 'routes', fields: `route_id, domain, ${actor}` },
  route_up: { scope: 'routes', fields: 'route_id, domain, status (HTTP status or null), response_ms, error' },
  route_down: { scope: 'routes', fields: 'route_id, domain, status (HTTP status or null), response_ms, error' },
  circuit_open: { scope: 'routes', fields: 'route_id, failure_count' },
  circuit_closed: { scope: 'routes', fields: 'route_id, open_seconds' },
  activity_recorded: { scope: 'logs', fields: 'entry (the activity row as GET /api/v1/logs/activity lists it: id, severity, source, event_type, message, details, user_id, ip, created_at, timestamp)' },
  wireguard_state: { scope: 'system', fields: 'interface, running, mode (kernel|userspace|null), error (last full sync error or null), reason (interface up, synced, interface missing, sync failed, stopped); when the interface goes up or away or a full sync starts or stops failing' },
  caddy_state: { scope: 'system', fields: 'running, pid, reason (started, restarted, exited (…), stopped); managed Caddy only' },
  config_changed: { scope: 'system', fields: 'target ("proxy"), config_hash, reason; once a new configuration is live' },
  rdp_status_changed: { scope: 'routes', fields: 'rdp_route_id, name, reachable, previous (reachable before), latency_ms, path (internal|external|both|gateway), error; when a check\'s reachability differs from the last' },
  rdp_session_started: { scope: 'routes', fields: 'session_id, rdp_route_id, name, client_name, peer_id, token_id, user_id, machine_id' },
  rdp_session_ended: { scope: 'routes', fields: `session_id, rdp_route_id, name, client_name, reason (client|lost|disconnected|route_disabled|route_deleted), duration_s, ${actor}; at the end, a disconnect order answered by a heartbeat, the lost-session sweep, the route disabled or deleted` },
  backup_completed: { scope: 'system', fields: 'job_id (null for a manual backup), target (download|local|s3), file, bytes, duration_ms' },
  backup_failed: { scope: 'system', fields: 'job_id (null for a manual backup), target (download|local|s3), error' },
  master_key_rotated: { scope: 'admin', fields: `source (cli|api), sealed_values (how many values were re-sealed), tables (per table), hooks (names of the hooks run), ${actor}; after the commit and the key file swap` },
  licence_changed: { scope: 'admin', fields: `reason (activated|refreshed|expired|removed|grace_ended|revoked), plan, features, expires_at (epoch ms or null), ${actor}` },
  webhook_created: { scope: 'admin', fields: `webhook_id, name, url, events, ${actor}` },
  webhook_updated: { scope: 'admin', fields: `webhook_id, name, fields (changed field names; "secret" when it was replaced), ${actor}` },
  webhook_enabled: { scope: 'admin', fields: `webhook_id, name, ${actor}` },
  webhook_disabled: { scope: 'admin', fields: `webhook_id, name, ${actor}` },
  webhook_deleted: { scope: 'admin', fields: `webhook_id, name, ${actor}` },
  webhook_delivery_updated: { scope: 'admin', fields: 'webhook_id, delivery_id, event, status (pending|delivered|failed), attempts, response_code; when a delivery is queued and after each attempt (live only, not an activity row)' },
  webhook_delivery_failed: { scope: 'admin', fields: 'webhook_id, name, delivery_id, event, attempts, error (of the last attempt); after the last attempt failed' },
  // not streamed: cache signals, and sign-in failures (they reach `logs` readers as activity rows)
  rows_changed: null,
  login_failed: null,
  account_locked: null,
  user_credentials_changed: null,
};

/** The stream scopes a caller receives; empty = may not open the stream. */
export function streamScopesFor(p: Principal | undefined): Set<StreamScope> {
  if (!p) return new Set();
  if (p.kind === 'session') return new Set(p.role === 'admin' ? STREAM_SCOPES : STREAM_SCOPES.filter((s) => s !== 'admin'));
  if (p.kind !== 'token') return new Set();
  if (p.scopes.includes('full-access') || p.scopes.includes('read-only')) return new Set(STREAM_SCOPES);
  return new Set(STREAM_SCOPES.filter((s) => s !== 'admin' && (p.scopes as string[]).includes(s)));
}

/** Whether a caller with these stream scopes receives events of this type. */
export function receives(scopes: Set<StreamScope>, type: EventType): boolean {
  const s = STREAMED[type];
  return s !== null && scopes.has(s.scope);
}

/** The SSE event names and their payloads (OpenAPI document). */
export function streamedEventNames(): { name: string; scope: StreamScope; fields: string }[] {
  return (Object.entries(STREAMED) as [EventType, StreamedEvent | null][]).filter(([, v]) => v !== null).map(([name, v]) => ({ name, scope: v!.scope, fields: v!.fields }));
}
