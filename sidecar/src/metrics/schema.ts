// Response schemas of the metrics folder's JSON endpoints (validation and the OpenAPI document).
import { z } from 'zod';

/** GET /system/resources: the host's CPU, memory, uptime and disk (metrics/resources.ts). */
export const resourcesResponse = z.object({
  ok: z.literal(true),
  cpu: z.object({ cores: z.number().int(), percent: z.number(), model: z.string() }),
  memory: z.object({ total: z.number(), used: z.number(), percent: z.number() }),
  uptime: z.object({
    seconds: z.number().int(),
    days: z.number().int(),
    hours: z.number().int(),
    minutes: z.number().int(),
    formatted: z.string().meta({ description: 'e.g. "3d 4h 12m"' }),
    bootTime: z.string().meta({ description: 'ISO 8601 time the host booted' }),
  }),
  disk: z.object({ total: z.number(), free: z.number(), used: z.number() }),
});
