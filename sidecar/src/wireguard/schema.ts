// Response schemas of /api/v1/wg/* (the OpenAPI document).
import { z } from 'zod';

/** wireguard/service.ts WgStatus. */
export const wgStatusResponse = z.object({
  ok: z.literal(true),
  managed: z.boolean(),
  running: z.boolean(),
  interface: z.string(),
  mode: z.enum(['kernel', 'userspace']).nullable(),
  listen_port: z.number().int(),
  public_key: z.string(),
  address: z.string(),
  subnet: z.string(),
  endpoint: z.string(),
  peer_count: z.number().int(),
  online: z.number().int(),
  last_poll_at: z.string().meta({ format: 'date-time' }).nullable(),
  last_sync_at: z.string().meta({ format: 'date-time' }).nullable(),
  peers: z.array(
    z.object({
      id: z.number().int().nullable(),
      name: z.string().nullable(),
      public_key: z.string(),
      endpoint: z.string().nullable(),
      allowed_ips: z.array(z.string()),
      latestHandshake: z.number().int().nullable().meta({ description: 'epoch ms' }),
      isOnline: z.boolean(),
      transfer_rx: z.number(),
      transfer_tx: z.number(),
    }),
  ),
});
export const wgRestartResponse = z.object({ ok: z.literal(true), restarted: z.object({ peers: z.number().int(), ms: z.number().int() }) });
