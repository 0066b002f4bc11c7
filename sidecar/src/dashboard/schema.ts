// Query and response schemas of the dashboard API (zod; validation and the OpenAPI document).
import { z } from 'zod';

export const trafficQuery = z.strictObject({ period: z.enum(['1h', '24h', '7d']).default('24h') });

export const statsResponse = z.object({
  ok: z.literal(true),
  peers: z.object({
    total: z.number().int().meta({ description: 'every peer, enabled or not' }),
    online: z.number().int().meta({ description: 'enabled, unexpired peers with a handshake in the online window' }),
  }),
  routes: z.object({
    active: z.number().int().meta({ description: 'enabled routes' }),
    total: z.number().int().meta({ description: 'every route, enabled or not' }),
  }),
  monitoring: z.object({ total: z.number().int(), up: z.number().int(), down: z.number().int() }),
  traffic: z.object({
    today: z.number().meta({ description: 'bytes since local midnight, both directions' }),
    todayUpload: z.number().meta({ description: 'bytes received from peers since local midnight' }),
    todayDownload: z.number().meta({ description: 'bytes sent to peers since local midnight' }),
    uploadRate: z.number().meta({ description: 'bytes/s received from peers over the last poll interval' }),
    downloadRate: z.number().meta({ description: 'bytes/s sent to peers over the last poll interval' }),
  }),
  wireguard: z.object({ running: z.boolean() }),
  latency: z.number().nullable().meta({ description: 'ms: mean response time of the monitored backends that are up, else one database round trip' }),
});

export const trafficResponse = z.object({
  ok: z.literal(true),
  period: z.enum(['1h', '24h', '7d']),
  step_ms: z.number().int().meta({ description: 'width of one point: 5 minutes (1h), 1 hour (24h), 6 hours (7d)' }),
  from: z.number().int().meta({ description: 'start of the first point, epoch ms' }),
  to: z.number().int().meta({ description: 'end of the last point (exclusive), epoch ms' }),
  points: z
    .array(
      z.object({
        timestamp: z.number().int().meta({ description: 'start of the point, epoch ms' }),
        rx: z.number().meta({ description: 'bytes received from peers (their upload) in the point' }),
        tx: z.number().meta({ description: 'bytes sent to peers (their download) in the point' }),
      }),
    )
    .meta({ description: 'oldest first, one per step, empty steps as zeros: 12 (1h), 24 (24h), 28 (7d)' }),
  total_rx: z.number(),
  total_tx: z.number(),
});
