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
export const accessExportQuery = z.object({ format: z.enum(['csv', 'json'], { error: 'must be csv or json' }).default('json'), limit: z.coerce.number().int().min(1).max(100_000).default(10_000) });
