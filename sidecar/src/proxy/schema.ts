// Response schemas of GET /caddy/status and POST /caddy/reload (the OpenAPI document).
import { z } from 'zod';

const mode = z.enum(['caddy', 'render-only']);
/** proxy/supervisor.ts CaddyProcessStatus + managed + proxy/service.ts ProxyStatus. */
export const caddyStatusResponse = z.object({
  ok: z.literal(true),
  running: z.boolean(),
  pid: z.number().int().nullable(),
  uptime_s: z.number().int().nullable(),
  admin_api: z.string(),
  restarts: z.number().int(),
  managed: z.boolean().meta({ description: 'the sidecar supervises the Caddy process' }),
  mode,
  config_hash: z.string().nullable(),
  last_load_at: z.string().meta({ format: 'date-time' }).nullable(),
  last_error: z.string().nullable(),
  loads: z.number().int(),
  batches: z.number().int(),
});
export const caddyReloadResponse = z.object({ ok: z.literal(true), loaded: z.boolean(), config_hash: z.string().nullable(), mode });
