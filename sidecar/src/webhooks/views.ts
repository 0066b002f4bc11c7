// What the API shows of webhooks and deliveries (never the secret).
import { isoOrNull as iso } from '../util/dates.js';
import type { DeliveryStatus, WebhookDeliveryRow, WebhookRow } from './model.js';

export interface DeliveryCounts {
  pending: number;
  delivered: number;
  failed: number;
}

export interface WebhookView {
  id: number;
  name: string;
  url: string;
  events: string[];
  enabled: boolean;
  retry_count: number;
  /** always true: a webhook has a secret; it is never shown */
  secret_set: boolean;
  deliveries: DeliveryCounts;
  last_delivery: { id: number; event: string; status: DeliveryStatus; response_code: number | null; at: string | null } | null;
  created_at: string;
  updated_at: string;
}

export interface DeliveryView {
  id: number;
  webhook_id: number;
  uid: string;
  event: string;
  status: DeliveryStatus;
  attempts: number;
  max_attempts: number;
  next_attempt_at: string | null;
  last_attempt_at: string | null;
  response_code: number | null;
  last_error: string | null;
  duration_ms: number | null;
  /** the exact body sent */
  body: string;
  created_at: string;
  updated_at: string;
}

export function webhookView(r: WebhookRow, counts: DeliveryCounts, last: WebhookDeliveryRow | null): WebhookView {
  return {
    id: r.id,
    name: r.name,
    url: r.url,
    events: JSON.parse(r.events),
    enabled: !!r.enabled,
    retry_count: Number(r.retry_count),
    secret_set: !!r.secret_enc,
    deliveries: counts,
    last_delivery: last ? { id: last.id, event: last.event, status: last.status, response_code: last.response_code, at: iso(last.last_attempt_at ?? last.created_at) } : null,
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
    duration_ms: r.duration_ms === null ? null : Number(r.duration_ms),
    body: r.body,
    created_at: iso(r.created_at)!,
    updated_at: iso(r.updated_at)!,
  };
}
