// Query schemas of the logs API (zod): the activity log's filters and exports, the access log's export.
import { z } from 'zod';
import { dateQuery, text } from '../http/fields.js';
import { SEVERITIES } from './activity.js';

export const activityFilter = z.object({
  severity: z.enum(SEVERITIES).optional(),
  source: text({ max: 32, trim: false }).optional(),
  event_type: text({ max: 64, trim: false }).optional(),
  since: dateQuery.optional(),
  until: dateQuery.optional(),
});
export const exportQuery = activityFilter.extend({ format: z.enum(['csv', 'json']).default('json'), limit: z.coerce.number().int().min(1).max(100_000).default(10_000) });
export const recentQuery = z.object({ limit: z.coerce.number().int().min(1).max(100).default(20) });
/** GET /logs/access filters: exact host, method, status, route, client address; a time range. */
export const accessFilter = z.object({
  host: text({ max: 253 }).transform((v) => v.toLowerCase()).optional(),
  method: z.string().regex(/^[A-Za-z]{1,16}$/, 'must be an HTTP method such as GET').transform((v) => v.toUpperCase()).optional(),
  status: z.coerce.number({ error: 'must be an HTTP status code' }).int('must be an HTTP status code').min(100).max(599).optional(),
  route_id: z.coerce.number({ error: 'must be a route id' }).int().positive().optional(),
  client_ip: text({ max: 64 }).optional(),
  since: dateQuery.optional(),
  until: dateQuery.optional(),
});
export type AccessFilter = z.infer<typeof accessFilter>;
export const accessExportQuery = accessFilter.extend({ format: z.enum(['csv', 'json'], { error: 'must be csv or json' }).default('json'), limit: z.coerce.number().int().min(1).max(100_000).default(10_000) });
