// Response schemas of /api/v1/wg/* (the OpenAPI document).
import { z } from 'zod';

/** GET /wg/status (WgStatus in wireguard/service.ts is inferred from it). */
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
  nat: z
    .object({
      mode: z.enum(['auto', 'on', 'off']).meta({ description: 'GATEHOUSE_WG_NAT' }),
      wanted: z.boolean().meta({ description: 'mode on, or auto with at least one full-tunnel peer' }),
      active: z.boolean().meta({ description: 'the forwarding and MASQUERADE rules are in place' }),
      out_interface: z.string().nullable().meta({ description: "the default-route interface peers' internet traffic leaves by" }),
      forwarding: z.boolean().nullable().meta({ description: 'net.ipv4.ip_forward as last read; null: not read' }),
      error: z.string().nullable(),
      rules: z.array(z.string()).meta({ description: 'the rules as iptables -S prints them' }),
    })
    .nullable()
    .meta({ description: "forwarding and NAT for full-tunnel peers' internet traffic; null when the interface is not managed" }),
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
