// The event kinds a webhook can subscribe to: the domain events whose descriptor (event-kinds.ts)
// says what they mean to a webhook, by their type name. The payload a receiver gets under `data` is the event's fields as
// docs/reference/events.md lists them (without `type`). The test delivery (POST /webhooks/:id/test) has
// the kind TEST_EVENT and cannot be subscribed to.
import { EVENT_KINDS, EVENT_TYPES, WEBHOOK_AREAS, type EventKind, type EventKinds, type WebhookArea } from '../event-kinds.js';

/** The kinds whose descriptor (event-kinds.ts) says what they mean to a webhook. */
type Eligible = { [K in keyof EventKinds]: EventKinds[K]['webhook'] extends string ? K : never }[keyof EventKinds];

export const WEBHOOK_EVENT_INFO = Object.fromEntries(
  EVENT_TYPES.flatMap((t) => {
    const webhook: string | undefined = (EVENT_KINDS[t] as { webhook?: string }).webhook;
    return webhook === undefined ? [] : [[t, webhook]];
  }),
) as Record<Eligible, string>;

export type WebhookEvent = keyof typeof WEBHOOK_EVENT_INFO;
export const WEBHOOK_EVENTS = Object.keys(WEBHOOK_EVENT_INFO) as [WebhookEvent, ...WebhookEvent[]];

/** The area of each webhook kind (its descriptor's `area`, which kind() requires beside `webhook`). */
export const WEBHOOK_EVENT_AREA = Object.fromEntries(
  WEBHOOK_EVENTS.map((t) => {
    const d: EventKind = EVENT_KINDS[t];
    if (!d.area) throw new Error(`event kind ${t}: a webhook kind needs an area (event-kinds.ts)`);
    return [t, d.area];
  }),
) as Record<WebhookEvent, WebhookArea>;

/** The webhook kinds as GET /webhooks/events lists them: grouped by area (WEBHOOK_AREAS order), each area in descriptor order. */
export const WEBHOOK_EVENT_LIST = WEBHOOK_AREAS.flatMap((area) =>
  WEBHOOK_EVENTS.filter((name) => WEBHOOK_EVENT_AREA[name] === area).map((name) => ({ name, area, description: WEBHOOK_EVENT_INFO[name] })),
);

/** The kind of the delivery POST /webhooks/:id/test sends. */
export const TEST_EVENT = 'webhook_test';

export function isWebhookEvent(t: string): t is WebhookEvent {
  return Object.prototype.hasOwnProperty.call(WEBHOOK_EVENT_INFO, t);
}
