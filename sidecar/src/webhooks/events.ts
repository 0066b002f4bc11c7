// The event kinds a webhook can subscribe to: domain events of the bus (events.ts), by their type
// name, each with what it means. The payload a receiver gets under `data` is the event's fields as
// docs/reference/events.md lists them (without `type`). The test delivery (POST /webhooks/:id/test) has
// the kind TEST_EVENT and cannot be subscribed to.
import type { EventType } from '../events.js';

export const WEBHOOK_EVENT_INFO = {
  peer_created: 'a peer was created',
  peer_updated: 'a peer was changed',
  peer_enabled: 'a peer was enabled',
  peer_disabled: 'a peer was disabled',
  peer_deleted: 'a peer was deleted',
  peer_expired: 'a peer reached its expiry and left the tunnel',
  peer_online: 'a peer made a handshake after being offline',
  peer_offline: 'a peer has had no handshake for the offline interval',
  route_created: 'a route was created',
  route_updated: 'a route was changed',
  route_enabled: 'a route was enabled',
  route_disabled: 'a route was disabled',
  route_deleted: 'a route was deleted',
  routes_batch: 'a batch action (enable, disable, delete) on routes',
  route_up: 'uptime monitoring: a route answers again',
  route_down: 'uptime monitoring: a route stopped answering',
  circuit_open: "a route's circuit breaker opened",
  circuit_closed: "a route's circuit breaker closed again",
  gateway_online: 'a home gateway is online',
  gateway_offline: 'a home gateway went offline',
  gateway_unknown: "a home gateway's state is unknown",
  login_failed: 'a failed admin sign-in',
  account_locked: 'an admin account was locked after failed sign-ins',
  user_created: 'an admin-UI user was created',
  user_deleted: 'an admin-UI user was deleted',
  token_created: 'an API token was created',
  token_revoked: 'an API token was revoked',
  client_registered: 'a desktop client registered a machine and got its peer',
  backup_completed: 'a backup was written',
  backup_failed: 'a backup failed',
  licence_changed: 'the licence was activated, refreshed, removed or expired',
  master_key_rotated: 'the master key was rotated (every sealed secret re-sealed under a new key)',
  rdp_status_changed: "an RDP route's target became reachable or unreachable",
  rdp_session_started: 'a desktop client started an RDP session',
  rdp_session_ended: 'an RDP session ended (client, lost, disconnected, route disabled or deleted)',
} as const satisfies Partial<Record<EventType, string>>;

export type WebhookEvent = keyof typeof WEBHOOK_EVENT_INFO;
export const WEBHOOK_EVENTS = Object.keys(WEBHOOK_EVENT_INFO) as [WebhookEvent, ...WebhookEvent[]];

/** The kind of the delivery POST /webhooks/:id/test sends. */
export const TEST_EVENT = 'webhook_test';

export function isWebhookEvent(t: string): t is WebhookEvent {
  return Object.prototype.hasOwnProperty.call(WEBHOOK_EVENT_INFO, t);
}
