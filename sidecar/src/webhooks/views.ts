// What the API shows of webhooks and deliveries (never the secret).
import { isoOrNull as iso } from '../util/dates.js';
import { asBool } from '../db/define.js';
import type { WebhookDeliveryRow, WebhookRow } from './model.js';
import type { DeliveryCounts, DeliveryView, WebhookView } from './schema.js';
import { webhookDeliveryError } from '@gatehouse/common/messages/read-back.js';

export function webhookView(r: WebhookRow, counts: DeliveryCounts, last: WebhookDeliveryRow | null): WebhookView {
  return {
    id: r.id,
    name: r.name,
    url: r.url,
    events: JSON.parse(r.events),
    enabled: !!r.enabled,
    retry_count: Number(r.retry_count),
    allow_private: asBool(r.allow_private),
    secret_set: !!r.secret_enc,
    deliveries: counts,
    last_delivery: last
      ? { id: last.id, event: last.event, status: last.status, response_code: last.response_code, at: iso(last.last_attempt_at ?? last.created_at) }
      : null,
    created_at: iso(r.created_at)!,
    updated_at: iso(r.updated_at)!,
  };
}

export function deliveryView(r: WebhookDeliveryRow): DeliveryView {
  return {
    id: r.id,
    webhook_id: r.webhook_id,
    uid: r.uid,
    event: r.event,
    status: r.status,
    attempts: Number(r.attempts),
    max_attempts: Number(r.max_attempts),
    next_attempt_at: iso(r.next_attempt_at),
    last_attempt_at: iso(r.last_attempt_at),
    response_code: r.response_code === null ? null : Number(r.response_code),
    last_error: r.last_error,
    last_error_code: webhookDeliveryError(r.last_error),
    duration_ms: r.duration_ms === null ? null : Number(r.duration_ms),
    body: r.body,
    created_at: iso(r.created_at)!,
    updated_at: iso(r.updated_at)!,
  };
}
