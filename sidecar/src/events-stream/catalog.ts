// Which domain events GET /api/v1/events streams, to whom, and what their payloads hold: a view of
// the event descriptors (event-kinds.ts: each kind's scope and payload), for the stream, the OpenAPI
// document and the tests.
// - STREAMED: every event type of the bus with the token scope that covers it, or null when it is
//   not streamed (internal cache signals; sign-in failures, which reach the stream as activity rows).
// - An admin session, a full-access and a read-only token get every streamed event; `admin` events
//   go only to admin sessions and full-access/read-only tokens.
import { roleAtLeast } from '@gatehouse/common/roles.js';
import { EVENT_KINDS, EVENT_TYPES, STREAM_SCOPES, payloadFields, type EventType, type StreamScope } from '../event-kinds.js';
import type { Principal } from '../http/auth.js';

export { STREAM_SCOPES, type StreamScope };

export interface StreamedEvent {
  scope: StreamScope;
  /** The payload's fields, for the OpenAPI document. */
  fields: string;
}

export const STREAMED: Record<EventType, StreamedEvent | null> = Object.fromEntries(
  EVENT_TYPES.map((t) => {
    const scope: StreamScope | null = EVENT_KINDS[t].scope;
    return [t, scope === null ? null : { scope, fields: payloadFields(t) }];
  }),
) as Record<EventType, StreamedEvent | null>;

/** The stream scopes a caller receives; empty = may not open the stream. */
export function streamScopesFor(p: Principal | undefined): Set<StreamScope> {
  if (!p) return new Set();
  // the admin events (accounts, tokens, backups) reach the roles that may read those: viewer and up
  if (p.kind === 'session') return new Set(roleAtLeast(p.role, 'viewer') ? STREAM_SCOPES : STREAM_SCOPES.filter((s) => s !== 'admin'));
  if (p.kind !== 'token') return new Set();
  if (p.boundRole && !roleAtLeast(p.boundRole, 'viewer'))
    return new Set(
      STREAM_SCOPES.filter((s) => s !== 'admin' && (p.scopes.includes('full-access') || p.scopes.includes('read-only') || (p.scopes as string[]).includes(s))),
    );
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
  return (Object.entries(STREAMED) as [EventType, StreamedEvent | null][])
    .filter(([, v]) => v !== null)
    .map(([name, v]) => ({ name, scope: v!.scope, fields: v!.fields }));
}
