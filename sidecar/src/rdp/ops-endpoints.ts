// Thin HTTP mapping of the RDP operations (licence feature remote_desktop, scope `routes`):
// status (aggregate and per route, ?refresh=1 checks now), Wake-on-LAN and its status,
// disconnect-all, per-route history and the export of every route's history. The services are
// ctx.rdpStatus (status.ts), ctx.rdpWol (wol.ts) and ctx.rdpSessions (sessions.ts, history.ts).
// The RDP feature (rdp/feature.ts) mounts them ahead of the RDP routes' endpoints, so /rdp/status
// and /rdp/history/export are matched before /rdp/:id.
import { z } from 'zod';
import { queryBool, queryInt } from '../http/fields.js';
import { fieldText } from '../http/messages.js';
import type { AppContext } from '../app-context.js';
import { actingUserId } from '../http/auth.js';
import { defineEndpoint, type Endpoint } from '../http/registry.js';
import { HISTORY_DEFAULT_LIMIT, HISTORY_MAX_LIMIT } from './history.js';
import { MAX_WOL_TIMEOUT_MS } from './wol.js';
import { disconnectAllResponse, historyExportRow, historyResponse, rdpStatusAllResponse, rdpStatusResponse, wolResponse } from './schema.js';

export const statusQuery = z.strictObject({ refresh: queryBool.optional().meta({ description: 'check now instead of answering the last scheduled result' }) });
export const wolBody = z
  .object({
    timeout_ms: z
      .number()
      .int()
      .min(1000, 'at least 1000 ms')
      .max(MAX_WOL_TIMEOUT_MS, fieldText('field.at_most_ms', { max: MAX_WOL_TIMEOUT_MS }))
      .optional()
      .meta({ description: 'how long GET /rdp/:id/wol/status waits for the host (default 120000)' }),
  })
  .strict();
export const historyQuery = z.strictObject({
  limit: queryInt(1, HISTORY_MAX_LIMIT).default(HISTORY_DEFAULT_LIMIT),
});
export const exportQuery = z.strictObject({ format: z.enum(['csv', 'json'], { error: 'must be csv or json' }).default('json') });

export function rdpOpsEndpoints(deps: AppContext): Endpoint[] {
  const tags = ['rdp'];
  const feature = 'remote_desktop' as const;
  return [
    defineEndpoint({
      method: 'GET',
      path: '/rdp/status',
      response: rdpStatusAllResponse,
      tags,
      feature,
      query: statusQuery,
      summary: 'Status of every RDP route (TCP reachability along its access path, latency, maintenance) with counts; ?refresh=1 checks all now',
      handler: async ({ query }) => ({ ...(await deps.rdpStatus.all(query.refresh ?? false)) }),
    }),
    defineEndpoint({
      method: 'GET',
      path: '/rdp/history/export',
      tags,
      feature,
      query: exportQuery,
      exportRow: historyExportRow,
      summary: 'Session history of every RDP route as a CSV or JSON download',
      handler: async ({ query }, ctx) => {
        const doc = await deps.rdpSessions.export(query.format);
        ctx.type = doc.contentType;
        ctx.attachment(doc.filename);
        ctx.body = doc.body;
      },
    }),
    defineEndpoint({
      method: 'GET',
      path: '/rdp/:id/status',
      response: rdpStatusResponse,
      tags,
      feature,
      query: statusQuery,
      summary: 'Status of one RDP route: the last scheduled check, or a check now with ?refresh=1 (checked at once when it has none yet)',
      handler: async ({ params, query }) => ({ status: await deps.rdpStatus.status(params.id, query.refresh ?? false) }),
    }),
    defineEndpoint({
      method: 'POST',
      path: '/rdp/:id/wol',
      response: wolResponse,
      tags,
      feature,
      body: wolBody,
      summary:
        'Wake-on-LAN: the magic packet through the gateway companion (gateway mode) or as UDP to target_host port 9 (other modes); starts a wake cycle of timeout_ms',
      handler: async ({ params, body }, ctx) => ({
        wol: await deps.rdpWol.wake(params.id, { timeout_ms: body?.timeout_ms, actor: actingUserId(ctx.state.principal) ?? null }),
      }),
    }),
    defineEndpoint({
      method: 'GET',
      path: '/rdp/:id/wol/status',
      response: wolResponse,
      tags,
      feature,
      summary: 'The wake cycle: pending until the host answers (awake) or timeout_ms passes (timeout); each call while pending checks reachability once',
      handler: async ({ params }) => ({ wol: await deps.rdpWol.poll(params.id) }),
    }),
    defineEndpoint({
      method: 'POST',
      path: '/rdp/:id/sessions/disconnect-all',
      response: disconnectAllResponse,
      tags,
      feature,
      summary:
        "Tells every active session's client to drop its RDP connection (the order comes with the client's next session heartbeat; the sessions then end as disconnected); in gateway mode the companion also closes the linked L4 route's live connections",
      handler: async ({ params }, ctx) => ({ ...(await deps.rdpSessions.disconnectAll(params.id, actingUserId(ctx.state.principal) ?? null)) }),
    }),
    defineEndpoint({
      method: 'GET',
      path: '/rdp/:id/history',
      response: historyResponse,
      tags,
      feature,
      query: historyQuery,
      summary: `Session history of one RDP route, newest first (limit 1-${HISTORY_MAX_LIMIT}, default ${HISTORY_DEFAULT_LIMIT}): duration, client, peer, user, end reason`,
      handler: async ({ params, query }) => ({ ...(await deps.rdpSessions.history(params.id, query.limit)) }),
    }),
  ];
}
