import type Koa from 'koa';
import type { AppContext } from '../app-context.js';
import { defineEndpoint, paging, type Endpoint } from '../http/registry.js';
import { toCsv } from '../util/csv.js';
import { activityFilter, activityResponse, exportQuery, recentQuery, recentResponse } from './schema.js';

/** Sends rows as a CSV or JSON attachment. */
export function sendExport(ctx: Koa.Context, name: string, format: 'csv' | 'json', rows: Record<string, unknown>[], columns: string[]): void {
  const stamp = new Date().toISOString().slice(0, 19).replace(/[:T]/g, '-');
  if (format === 'csv') {
    ctx.type = 'text/csv; charset=utf-8';
    ctx.attachment(`${name}-${stamp}.csv`);
    ctx.body = toCsv(rows, columns);
  } else {
    ctx.type = 'application/json; charset=utf-8';
    ctx.attachment(`${name}-${stamp}.json`);
    ctx.body = JSON.stringify(rows, null, 2);
  }
}

export function logEndpoints(deps: AppContext): Endpoint[] {
  return [
    defineEndpoint({
      method: 'GET', path: '/logs/activity', response: activityResponse, summary: 'Activity log, newest first, filterable', tags: ['logs'],
      query: activityFilter.merge(paging),
      handler: async ({ query }) => {
        const { entries, total } = await deps.activity.query(query);
        return { entries, total, limit: query.limit, offset: query.offset };
      },
    }),
    defineEndpoint({
      method: 'GET', path: '/logs/recent', response: recentResponse, summary: 'Latest activity for the dashboard feed', tags: ['logs'],
      query: recentQuery,
      handler: async ({ query }) => ({ entries: (await deps.activity.query({ limit: query.limit })).entries }),
    }),
    defineEndpoint({
      method: 'GET', path: '/logs/activity/export', summary: 'Activity log as a CSV or JSON download', tags: ['logs'],
      query: exportQuery,
      handler: async ({ query }, ctx) => {
        const { entries } = await deps.activity.query({ ...query, offset: 0 });
        sendExport(ctx, 'activity-log', query.format, entries as unknown as Record<string, unknown>[], ['id', 'created_at', 'severity', 'source', 'event_type', 'message', 'details', 'user_id', 'ip']);
      },
    }),
  ];
}
