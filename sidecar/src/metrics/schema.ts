// Response schemas of the metrics folder's JSON endpoints (validation and the OpenAPI document).
import { z } from 'zod';

/** GET /system/resources: the host's CPU, memory, uptime and disk (metrics/resources.ts). */
/** A length of time as the system screen shows it: whole seconds and its days, hours and minutes. */
const uptimeParts = z.object({
  seconds: z.number().int(),
  days: z.number().int(),
  hours: z.number().int(),
  minutes: z.number().int(),
  formatted: z.string().meta({ description: 'e.g. "3d 4h 12m"' }),
});

export const resourcesResponse = z.object({
  ok: z.literal(true),
  cpu: z.object({ cores: z.number().int(), percent: z.number(), model: z.string() }),
  memory: z.object({ total: z.number(), used: z.number(), percent: z.number() }),
  uptime: uptimeParts
    .extend({ bootTime: z.string().meta({ description: 'ISO 8601 time the host booted' }) })
    .meta({ description: "the host's uptime (since it booted); Gatehouse's own is gatehouse_uptime" }),
  gatehouse_uptime: uptimeParts
    .extend({ startTime: z.string().meta({ description: 'ISO 8601 time the Gatehouse process started' }) })
    .meta({ description: "Gatehouse's own uptime: since this sidecar process started" }),
  disk: z
    .object({
      total: z.number().meta({ description: 'size of the filesystem holding the data directory (bytes)' }),
      free: z.number().meta({ description: 'same as available (kept for compatibility)' }),
      used: z.number().meta({ description: 'bytes in use' }),
      available: z.number().meta({ description: 'bytes Gatehouse (an unprivileged process) may still write' }),
      reserved: z.number().meta({ description: 'free bytes reserved for root (not available to Gatehouse); used + available + reserved = total' }),
    })
    .meta({ description: 'the filesystem holding the data directory' }),
});
