// The reverse proxy's access log (ingested from Caddy's JSON log by resilience/access-log.ts, ctx.accessLog):
// GET /logs/access and /logs/access/export.
import type { AppContext } from '../app-context.js';
import { defineEndpoint, paging, type Endpoint } from '../http/registry.js';
import { sendExport } from '../http/export.js';
import { accessEntryView, accessExportQuery, accessFilter, accessResponse } from '../logs/schema.js';

const ACCESS_COLUMNS = [
  'id',
  'ts',
  'route_id',
  'host',
  'method',
  'uri',
  'status',
  'duration_ms',
  'size',
  'upstream',
  'client_ip',
  'user_agent',
  'auth_user',
] as const;
const withTime = <T extends { ts: number }>(e: T) => ({ ...e, time: new Date(e.ts).toISOString() });

export function accessLogEndpoints(deps: AppContext): Endpoint[] {
  const access = () => deps.accessLog;
  return [
    defineEndpoint({
      method: 'GET',
      path: '/logs/access',
      response: accessResponse,
      summary: 'Access log of the reverse proxy, newest first; filters host, method, status, route_id, client_ip, since, until (exact values); limit, offset',
      tags: ['logs'],
      query: accessFilter.merge(paging),
      handler: async ({ query }) => {
        await access().poll();
        const r = await access().list(query);
        return { entries: r.entries.map(withTime), total: r.total };
      },
    }),
    defineEndpoint({
      method: 'GET',
      path: '/logs/access/export',
      summary: 'Access log as a CSV or JSON download (format=csv|json, limit, and the filters of GET /logs/access)',
      tags: ['logs'],
      query: accessExportQuery,
      exportRow: accessEntryView,
      handler: async ({ query }, ctx) => {
        await access().poll();
        const { entries } = await access().list({ ...query, offset: 0 });
        sendExport(ctx, 'access-log', query.format, entries.map(withTime), ['time', ...ACCESS_COLUMNS]);
      },
    }),
  ];
}
