// Stored texts of other parties' answers read back as their coded categories (outside.ts): a
// webhook delivery's last_error, a route check's error, the licence's last refresh error. The
// server adds the codes to its views; the admin app reads back the texts that activity rows carry
// as parameters (route.down's error, webhook.delivery_failed's error) to word them too.
import { readBack, type MessageRef } from './index.js';

/** A webhook delivery's error: webhook.delivery.*, the receiver's or network's words as `detail`. */
export function webhookDeliveryError(text: string | null): MessageRef | null {
  if (text === null) return null;
  return readBack(
    text,
    [
      { code: 'webhook.delivery.status', params: { status: 'number' } },
      { code: 'webhook.delivery.timeout', params: { ms: 'number' } },
      { code: 'webhook.delivery.dns', params: { detail: 'text' } },
      { code: 'webhook.delivery.not_allowed' },
      { code: 'webhook.delivery.aborted' },
      { code: 'webhook.delivery.invalid_url' },
      { code: 'webhook.delivery.secret_unreadable' },
    ],
    'webhook.delivery.network',
  );
}

/** A route check's error: route.check.*, the upstream's or network's words as `detail`. */
export function routeCheckError(text: string | null): MessageRef | null {
  if (text === null) return null;
  return readBack(
    text,
    [
      { code: 'route.check.timeout', params: { s: 'number' } },
      { code: 'route.check.tcp_timeout', params: { s: 'number' } },
      { code: 'route.check.no_gateway_target' },
      { code: 'route.check.gateway_not_found' },
      { code: 'route.check.gateway_disabled' },
      { code: 'route.check.no_listen_port' },
    ],
    'route.check.network',
  );
}

/** The licence's last refresh error: licence.service.*, the licence service's words as `detail`. */
export function licenceRefreshError(text: string | null): MessageRef | null {
  if (text === null) return null;
  return readBack(
    text,
    [
      { code: 'licence.service.offline_invalid' },
      { code: 'licence.service.no_key' },
      { code: 'licence.service.bad_key', params: { detail: 'text' } },
      { code: 'licence.service.revoked', params: { detail: 'text' } },
      { code: 'licence.service.refused', params: { detail: 'text' } },
      { code: 'licence.service.unreachable', params: { detail: 'text' } },
      { code: 'licence.service.status_detail', params: { status: 'number', detail: 'text' } },
      { code: 'licence.service.status', params: { status: 'number' } },
    ],
    'licence.service.other',
  );
}

/**
 * An RDP route check's error as stored in activity rows written before they carried its message
 * (rdp.unreachable's `error`): "internal: connection refused; external: ..." read back as
 * rdp.check.paths, each path's reason as its rdp.check.* code (the network's words as `detail`).
 */
export function rdpCheckError(text: string | null): MessageRef | null {
  if (text === null) return null;
  const parts = text.split('; ').map((part) => /^(internal|external|gateway): (.+)$/s.exec(part));
  if (!parts.length || parts.some((m) => !m)) return rdpCheckReason(text);
  return {
    code: 'rdp.check.paths',
    params: { paths: parts.map((m) => ({ path: m![1], reason: rdpCheckReason(m![2]) })) },
  };
}

function rdpCheckReason(text: string): MessageRef {
  return readBack(
    text,
    [
      { code: 'rdp.check.refused' },
      { code: 'rdp.check.timeout', params: { ms: 'number' } },
      { code: 'rdp.check.host_unreachable' },
      { code: 'rdp.check.not_resolved' },
      { code: 'rdp.check.no_address' },
      { code: 'rdp.check.no_gateway' },
      { code: 'rdp.check.no_linked_route' },
      { code: 'rdp.check.not_reported', params: { name: 'text', route_id: 'number' } },
      { code: 'rdp.check.gateway_cannot_reach', params: { name: 'text', host: 'text', port: 'number' } },
      { code: 'rdp.check.gateway_error', params: { detail: 'text' } },
      { code: 'rdp.check.unreachable' },
      { code: 'rdp.check.not_checked' },
    ],
    'rdp.check.network',
  );
}

/**
 * A gateway's status reason as stored by events and activity rows written before they carried its
 * message (gateway_online/offline/unknown without reason_code): the known English texts read back
 * as their gateway.status.* codes; a text no code words is gateway.status.not_recorded with the
 * stored text as `detail`.
 */
export function gatewayStatusReason(text: string): MessageRef {
  const unhealthy = /^heartbeat received, but (.+)$/s.exec(text);
  if (unhealthy)
    return {
      code: 'gateway.status.unhealthy',
      params: { health: unhealthy[1] === 'the gateway reports itself unhealthy' ? null : gatewayHealth(unhealthy[1]) },
    };
  if (text === 'heartbeat received') return { code: 'gateway.status.healthy', params: { health: null } };
  const status = readBack(
    text,
    [
      { code: 'gateway.status.no_tokens' },
      { code: 'gateway.status.no_heartbeat' },
      { code: 'gateway.status.heartbeat_stale', params: { age_s: 'number', offline_after_s: 'number' } },
    ],
    'gateway.status.not_recorded',
  );
  if (status.code !== 'gateway.status.not_recorded') return status;
  // a healthy gateway's reason is its verdict itself
  const health = gatewayHealth(text);
  return health.code === 'gateway.health.reported' ? status : { code: 'gateway.status.healthy', params: { health } };
}

/** A heartbeat's verdict as text: its gateway.health.* code, the companion's own words as gateway.health.reported. */
function gatewayHealth(text: string): MessageRef {
  return readBack(
    text,
    [
      { code: 'gateway.health.lan_reachable', params: { up: 'number', total: 'number' } },
      { code: 'gateway.health.lan_unreachable', params: { total: 'number' } },
      { code: 'gateway.health.self_check_passed' },
    ],
    'gateway.health.reported',
  );
}
