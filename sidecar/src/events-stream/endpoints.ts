// GET /api/v1/events: the live event stream (server-sent events) for the admin UI and API clients.
// Thin: who may read what (catalog.ts), then the stream itself (hub.ts).
import { msg } from '@gatehouse/common/messages/index.js';
import { z } from 'zod';
import type Koa from 'koa';
import type { AppContext } from '../app-context.js';
import { defineEndpoint, type Endpoint } from '../http/registry.js';
import { bearerToken, FINGERPRINT_HEADER, type Principal } from '../http/auth.js';
import { SESSION_COOKIE } from '../http/app.js';
import { AppError, forbidden } from '../util/errors.js';
import { streamScopesFor, streamedEventNames } from './catalog.js';
import { HEARTBEAT_MS, RETRY_MS } from './hub.js';

const eventsQuery = z.strictObject({
  last_event_id: z.string().max(200).optional().describe('Resume after this event id (for EventSource polyfills that cannot send the Last-Event-ID header)'),
});

function describeStream(): string {
  const rows = streamedEventNames().map((e) => `- \`${e.name}\` (scope ${e.scope}): ${e.fields}`);
  return [
    'A text/event-stream. Each message: `id: <boot>-<seq>`, `event: <name>`, `data: <JSON payload>` (every payload has `at`, epoch ms).',
    `Starts with \`retry: ${RETRY_MS}\`; a comment line every ${HEARTBEAT_MS / 1000} s. Reconnect with the Last-Event-ID header (or ?last_event_id=) to get what was missed (the last 1000 events are kept).`,
    '',
    'Control events:',
    '- `ready` (id = the current position): {boot, resumed, at}, after any replay.',
    '- `reset` (id = the current position): {reason: other_run | too_old, at}: the Last-Event-ID is from another run of the server or too old; reload what you show.',
    '',
    'Domain events (who receives them: an admin session, a full-access or read-only token everything; a token with peers, routes, logs or system the events of those scopes; `admin` events only admin sessions and full-access/read-only tokens):',
    ...rows,
  ].join('\n');
}

export function eventStreamEndpoints(deps: AppContext): Endpoint[] {
  return [
    defineEndpoint({
      method: 'GET',
      path: '/events',
      tags: ['events'],
      summary: 'Live events (server-sent events): peer online/offline, route health and circuit breaker, gateway status, activity rows, configuration changes',
      // every valid admin credential passes the registry; which events it gets (or 403) depends on its scopes
      scope: 'any',
      query: eventsQuery,
      rawResponse: { contentType: 'text/event-stream', description: describeStream(), events: streamedEventNames(), strictAccept: true },
      handler: async ({ query }, ctx) => {
        const principal = ctx.state.principal as Principal | undefined;
        const scopes = streamScopesFor(principal);
        if (!scopes.size) throw forbidden(msg('auth.scope_events'));
        if (!ctx.accepts('text/event-stream')) ctx.throw(406, 'This endpoint answers only text/event-stream (send Accept: text/event-stream)');
        const lastEventId = ctx.get('Last-Event-ID') || query.last_event_id || undefined;
        ctx.req.socket.setTimeout(0);
        ctx.req.socket.setNoDelay(true);
        ctx.status = 200;
        ctx.type = 'text/event-stream; charset=utf-8';
        ctx.set('Cache-Control', 'no-cache, no-transform');
        ctx.set('X-Accel-Buffering', 'no');
        ctx.set('Connection', 'close');
        ctx.body = deps.eventStreams.open({ scopes, lastEventId, stillAllowed: stillAllowed(deps, ctx, principal!), done: responseDone(ctx) });
      },
    }),
  ];
}

function responseDone(ctx: Koa.Context): Promise<void> {
  return new Promise((resolve) => ctx.res.once('close', () => resolve()));
}

/** Whether the credential that opened the stream still holds (revoked or expired token, ended session). */
function stillAllowed(deps: AppContext, ctx: Koa.Context, p: Principal): () => Promise<boolean> {
  if (p.kind === 'token') {
    const token = bearerToken(ctx);
    const fingerprint = ctx.get(FINGERPRINT_HEADER) || undefined;
    return async () => {
      try {
        return token !== undefined && (await deps.tokens.verify(token, fingerprint)) !== null;
      } catch (err) {
        if (err instanceof AppError) return false;
        throw err;
      }
    };
  }
  if (p.kind === 'session') {
    const sid = ctx.cookies.get(SESSION_COOKIE, { signed: true });
    return async () => {
      if (!sid) return false;
      const s = await deps.sessions.get(sid);
      return !!s && s.userId === p.userId && (await deps.db.models.User.count({ where: { id: p.userId } })) > 0;
    };
  }
  return async () => false;
}
