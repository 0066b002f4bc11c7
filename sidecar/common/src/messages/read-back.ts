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
