// Query schemas of the logs API (zod): the activity log's filters and exports, the access log's export.
import { z } from 'zod';
import { dateQuery, text, queryInt } from '../http/fields.js';
import { fieldText } from '../http/messages.js';
import { activityEntryView, type Severity } from '../event-kinds.js';

export const SEVERITIES: Severity[] = ['info', 'warning', 'error', 'critical'];

export const activityFilter = z.strictObject({
  severity: z.enum(SEVERITIES).optional(),
  source: text({ max: 32, trim: false }).optional(),
  event_type: text({ max: 64, trim: false }).optional(),
  since: dateQuery.optional(),
  until: dateQuery.optional(),
});
export const exportQuery = activityFilter.extend({ format: z.enum(['csv', 'json']).default('json'), limit: queryInt(1, 100_000).default(10_000) });
export const recentQuery = z.strictObject({ limit: queryInt(1, 100).default(20) });
/** GET /logs/access filters: exact host, method, status, route, client address; a time range. */
export const accessFilter = z.strictObject({
  host: text({ max: 253 })
    .transform((v) => v.toLowerCase())
    .optional(),
  method: z
    .string()
    .regex(/^[A-Za-z]{1,16}$/, 'must be an HTTP method such as GET')
    .transform((v) => v.toUpperCase())
    .optional(),
  status: queryInt(100, 599, fieldText('schema.an_http_status_code')).optional(),
  route_id: queryInt(1, 2_147_483_647, fieldText('schema.a_route_id')).optional(),
  client_ip: text({ max: 64 }).optional(),
  since: dateQuery.optional(),
  until: dateQuery.optional(),
});
export type AccessFilter = z.infer<typeof accessFilter>;
export const accessExportQuery = accessFilter.extend({
  format: z.enum(['csv', 'json'], { error: 'must be csv or json' }).default('json'),
  limit: queryInt(1, 100_000).default(10_000),
});

/** logs/activity.ts toEntry: one activity-log entry as served (declared with the event kinds, whose activity_recorded carries it). */
export { activityEntryView };
export const activityResponse = z.object({
  ok: z.literal(true),
  entries: z.array(activityEntryView),
  total: z.number().int(),
  limit: z.number().int(),
  offset: z.number().int(),
});
export const recentResponse = z.object({ ok: z.literal(true), entries: z.array(activityEntryView) });

const headers = z.record(z.string(), z.array(z.string()));
/** A line of the access log as GET /logs/access serves it: `time` is ts as ISO 8601 (resilience/access-log.ts AccessEntry is this without it). */
export const accessEntryView = z.object({
  id: z.number().int(),
  ts: z.number().int().meta({ description: 'epoch ms' }),
  time: z.string().meta({ format: 'date-time' }),
  route_id: z.number().int().nullable(),
  host: z.string(),
  method: z.string(),
  uri: z.string(),
  status: z.number().int(),
  duration_ms: z.number(),
  size: z.number(),
  upstream: z.string().nullable(),
  client_ip: z.string().nullable(),
  user_agent: z.string().nullable(),
  auth_user: z.string().nullable().meta({ description: "the route-auth account signed in (username, or the route's configured email); null: none" }),
  debug: z.object({ request_headers: headers, response_headers: headers }).nullable().meta({ description: 'headers, for routes with debug_enabled' }),
});
export const accessResponse = z.object({ ok: z.literal(true), entries: z.array(accessEntryView), total: z.number().int() });
