// Request and response schemas of the webhooks API (validation and the OpenAPI document).
import { z } from 'zod';
import { ignoringReadOnly, storedResourceFields } from '../http/input.js';
import { text, textPattern, queryInt, UNPROCESSABLE } from '../http/fields.js';
import { fieldText } from '../http/messages.js';
import { messageRefSchema } from '@gatehouse/common/messages/ref.js';
import { WEBHOOK_EVENT_INFO, WEBHOOK_EVENTS } from './events.js';
import { WEBHOOK_AREAS } from '../event-kinds.js';

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';
export const DELIVERY_STATUSES: readonly DeliveryStatus[] = ['pending', 'delivered', 'failed'];

export const MAX_RETRY_COUNT = 10;

const webhookUrl = text({ min: 1, max: 2048 })
  .superRefine((v, ctx) => {
    let u: URL;
    try {
      u = new URL(v);
    } catch {
      // the document states the scheme (its pattern); what else makes a URL is beyond a pattern: 422
      ctx.addIssue({ code: 'custom', message: 'must be an http(s) URL such as https://hooks.example.com/gatehouse', params: UNPROCESSABLE });
      return;
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:') ctx.addIssue({ code: 'custom', message: 'must start with http:// or https://' });
    else if (u.username || u.password)
      ctx.addIssue({
        code: 'custom',
        message: 'must not contain a user name or password (the receiver checks the signature instead)',
        params: UNPROCESSABLE,
      });
    else if (!u.hostname) ctx.addIssue({ code: 'custom', message: 'must name a host', params: UNPROCESSABLE });
  })
  .meta({
    pattern: textPattern(false, true).replace(/^\^/, '^[Hh][Tt][Tt][Pp][Ss]?://'),
    description:
      'http(s) URL the events are POSTed to. Refused (422, fields.url) when its host resolves to loopback, a private, link-local or ULA range or this server, unless the webhook has allow_private or the operator set GATEHOUSE_OUTBOUND_ALLOW_PRIVATE=webhooks (or GATEHOUSE_WEBHOOK_ALLOW_PRIVATE=true) for every webhook.',
  });

const eventKind = z.enum(WEBHOOK_EVENTS).meta({ description: `An event kind: ${WEBHOOK_EVENTS.map((k) => `${k} (${WEBHOOK_EVENT_INFO[k]})`).join('; ')}` });
const events = z
  .array(eventKind)
  .min(1, 'choose at least one event kind')
  .max(WEBHOOK_EVENTS.length * 2);
const secret = text({ min: 16, max: 256, trim: false }).meta({
  description: 'HMAC-SHA256 key of the signature (at least 16 characters); stored sealed, never shown again',
});
const retryCount = z
  .number({ error: 'must be a whole number from 0 to 10' })
  .int('must be a whole number from 0 to 10')
  .min(0, 'must be 0 or more')
  .max(MAX_RETRY_COUNT, fieldText('field.at_most', { max: MAX_RETRY_COUNT }));
const name = text({ min: 1, max: 128 });
const allowPrivate = z.boolean({ error: 'must be true or false' }).meta({
  description:
    'this webhook may reach loopback, private ranges and this server (a receiver on the LAN: ntfy, Gotify, Home Assistant); checked when the URL is saved and again at every connection. Only a full-access token or an admin session may set or change it (403 otherwise); every change is an activity row',
});

export const createWebhookBody = z.strictObject({
  name,
  url: webhookUrl,
  events,
  enabled: z.boolean(),
  secret,
  retry_count: retryCount.optional().meta({ description: 'retries after a failed first attempt (0-10, default 3), with exponential back-off' }),
  allow_private: allowPrivate.optional().meta({ description: `${allowPrivate.meta()?.description ?? ''} (default false)` }),
});

/** What PUT /webhooks/:id accepts and ignores besides the writable fields (docs/reference/api.md "Conventions"). */
export const WEBHOOK_READ_ONLY = storedResourceFields('webhook');
export type WebhookInput = z.output<typeof createWebhookBody>;
export const updateWebhookBody = ignoringReadOnly(
  z.strictObject({
    name: name.optional(),
    url: webhookUrl.optional(),
    events: events.optional(),
    enabled: z.boolean().optional(),
    secret: z
      .union([z.literal(''), secret])
      .optional()
      .meta({ description: 'a new secret; omitted or empty keeps the stored one' }),
    retry_count: retryCount.optional(),
    allow_private: allowPrivate.optional(),
  }),
  WEBHOOK_READ_ONLY,
);
export type WebhookPatch = z.output<typeof updateWebhookBody>;

export const deliveriesQuery = z.strictObject({
  status: z.enum(DELIVERY_STATUSES).optional(),
  event: text({ max: 64 }).optional(),
  limit: queryInt(1, 500).default(50),
  offset: queryInt(0, 1_000_000_000).default(0),
});
export type DeliveriesQuery = z.output<typeof deliveriesQuery>;

const isoDate = z.string().meta({ format: 'date-time' });
const status = z.enum(DELIVERY_STATUSES);

const deliveryCounts = z.object({ pending: z.number().int(), delivered: z.number().int(), failed: z.number().int() });
export type DeliveryCounts = z.infer<typeof deliveryCounts>;

export const webhookView = z
  .object({
    id: z.number().int(),
    name: z.string(),
    url: z.string(),
    events: z.array(z.string()),
    enabled: z.boolean(),
    retry_count: z.number().int(),
    allow_private: z.boolean().meta({ description: 'this webhook may reach loopback, private ranges and this server (an admin chose so)' }),
    secret_set: z.boolean(),
    deliveries: deliveryCounts,
    last_delivery: z.object({ id: z.number().int(), event: z.string(), status, response_code: z.number().int().nullable(), at: isoDate.nullable() }).nullable(),
    created_at: isoDate,
    updated_at: isoDate,
  })
  .meta({ description: 'A webhook (never its secret) with the counts of its delivery log' });
export type WebhookView = z.infer<typeof webhookView>;

export const deliveryView = z
  .object({
    id: z.number().int(),
    webhook_id: z.number().int(),
    uid: z.string().meta({ description: 'sent as X-Gatehouse-Delivery; the same on every attempt' }),
    event: z.string(),
    status,
    attempts: z.number().int(),
    max_attempts: z.number().int(),
    next_attempt_at: isoDate.nullable(),
    last_attempt_at: isoDate.nullable(),
    response_code: z.number().int().nullable(),
    last_error: z.string().nullable(),
    last_error_code: messageRefSchema
      .nullable()
      .meta({ description: "last_error as a message: webhook.delivery.* with the receiver's or network's own words as `detail`" }),
    duration_ms: z.number().int().nullable(),
    body: z.string().meta({ description: 'the exact JSON body sent' }),
    created_at: isoDate,
    updated_at: isoDate,
  })
  .meta({ description: 'One delivery of an event to a webhook' });
export type DeliveryView = z.infer<typeof deliveryView>;

export const webhookResponse = z.object({ ok: z.literal(true), webhook: webhookView });
export const webhooksResponse = z.object({ ok: z.literal(true), webhooks: z.array(webhookView) });
export const deliveriesResponse = z.object({ ok: z.literal(true), deliveries: z.array(deliveryView), total: z.number().int() });
export const testResponse = z.object({ ok: z.literal(true), delivery: deliveryView });
export const eventKindsResponse = z.object({
  ok: z.literal(true),
  events: z.array(
    z.object({
      name: z.string(),
      area: z.enum(WEBHOOK_AREAS).meta({ description: 'the area the kind belongs to (the admin app groups the kinds by it); the list is ordered by area' }),
      description: z.string(),
    }),
  ),
});
export const deletedResponse = z.object({ ok: z.literal(true), deleted: z.literal(true) });
