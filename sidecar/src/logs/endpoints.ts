import type { AppContext } from '../app-context.js';
import { defineEndpoint, paging, type Endpoint } from '../http/registry.js';
import { sendExport } from '../http/export.js';
import { activityEntryView, activityFilter, activityResponse, exportQuery, recentQuery, recentResponse } from './schema.js';

export function logEndpoints(deps: AppContext): Endpoint[] {
  return [
    defineEndpoint({
      method: 'GET',
      path: '/logs/activity',
      response: activityResponse,
      summary: 'Activity log, newest first, filterable',
      tags: ['logs'],
      query: activityFilter.merge(paging),
      handler: async ({ query }) => {
        const { entries, total } = await deps.activity.query(query);
        return { entries, total, limit: query.limit, offset: query.offset };
      },
    }),
    defineEndpoint({
      method: 'GET',
      path: '/logs/recent',
      response: recentResponse,
      summary: 'Latest activity for the dashboard feed',
      tags: ['logs'],
      query: recentQuery,
      handler: async ({ query }) => ({ entries: (await deps.activity.query({ limit: query.limit })).entries }),
    }),
    defineEndpoint({
      method: 'GET',
      path: '/logs/activity/export',
      summary: 'Activity log as a CSV or JSON download',
      tags: ['logs'],
      query: exportQuery,
      exportRow: activityEntryView,
      handler: async ({ query }, ctx) => {
        const { entries } = await deps.activity.query({ ...query, offset: 0 });
        sendExport(ctx, 'activity-log', query.format, entries, ['id', 'created_at', 'severity', 'source', 'event_type', 'message', 'details', 'user_id', 'ip']);
      },
    }),
  ];
}
