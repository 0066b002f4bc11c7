// Response schemas of GET /caddy/status and POST /caddy/reload (the OpenAPI document).
import { z } from 'zod';
import { messageRefSchema } from '@gatehouse/common/messages/ref.js';

const mode = z.enum(['caddy', 'render-only']);
/** The Caddy process as the supervisor (proxy/supervisor.ts) sees it. */
const caddyProcessStatus = z.object({
  running: z.boolean(),
  pid: z.number().int().nullable(),
  uptime_s: z.number().int().nullable(),
  admin_api: z.string(),
  restarts: z.number().int(),
});
export type CaddyProcessStatus = z.infer<typeof caddyProcessStatus>;
/** What the proxy service (proxy/service.ts) last gave Caddy. */
const proxyStatus = z.object({
  mode,
  config_hash: z.string().nullable().meta({ description: 'hash of the configuration Caddy was last given (render-only: last rendered)' }),
  last_load_at: z.string().meta({ format: 'date-time' }).nullable(),
  last_error: z.string().nullable().meta({ description: "the last failed load's or host change's error: Caddy's (or the network's) own text" }),
  last_error_code: messageRefSchema
    .nullable()
    .meta({ description: 'last_error as a message: caddy.error.rejected, .unreachable, .timeout or .other, the text as `detail`' }),
  loads: z.number().int(),
  batches: z.number().int(),
});
export type ProxyStatus = z.infer<typeof proxyStatus>;
export const caddyStatusResponse = z.object({
  ok: z.literal(true),
  ...caddyProcessStatus.shape,
  managed: z.boolean().meta({ description: 'the sidecar supervises the Caddy process' }),
  ...proxyStatus.shape,
});
export const caddyReloadResponse = z.object({ ok: z.literal(true), loaded: z.boolean(), config_hash: z.string().nullable(), mode });
