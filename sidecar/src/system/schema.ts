// Schemas of the system endpoints (GET /health, GET /api/v1/openapi.json) and their pieces; only zod
// is imported, so that other request and response schemas (and browsers) can use them.
import { z } from 'zod';

/** Why a host cannot be reached from the internet, judged by its form (system/public-host.ts). */
export const PUBLIC_HOST_PROBLEMS = [
  'empty',
  'single_label',
  'local_suffix',
  'invalid_name',
  'loopback_ip',
  'private_ip',
  'link_local_ip',
  'not_global_ip',
] as const;
export type PublicHostProblem = (typeof PUBLIC_HOST_PROBLEMS)[number];

/** The host peers dial, where it comes from, and whether the internet can reach it (system/public-host.ts). */
export const publicHostInfo = z
  .object({
    host: z.string().meta({ description: 'what peer configs (Endpoint = host:port) and gateway-mode RDP use now' }),
    source: z.enum(['settings', 'env', 'hostname']).meta({
      description:
        "settings: the Network settings (PUT /settings/network); env: GATEHOUSE_PUBLIC_HOST; hostname: neither set, this machine's hostname is the fallback",
    }),
    internet_resolvable: z.boolean().meta({
      description:
        'judged by its form: false for a single-label name, a local-only suffix (.local, .lan, .internal, .home.arpa, ...), a private, loopback or link-local IP',
    }),
    problem: z.enum(PUBLIC_HOST_PROBLEMS).nullable().meta({ description: 'why it is not internet-resolvable; null when it may be' }),
    warning: z.string().nullable().meta({
      description:
        'set when the hostname fallback is not internet-resolvable (also logged at start); the admin UI shows it on the dashboard and the peer config',
    }),
  })
  .meta({ description: "This server's public host: what peers dial" });
export type PublicHostInfo = z.infer<typeof publicHostInfo>;

/** GET /health: 200 when every check is ok (503 {ok: false, ...} otherwise); version, uptime and the checks only for loopback callers. */
export const healthResponse = z.object({
  ok: z.literal(true),
  version: z.string().optional(),
  uptime_s: z.number().int().optional(),
  checks: z
    .record(z.string(), z.looseObject({ ok: z.boolean() }))
    .optional()
    .meta({ description: 'database and each health check, with their details' }),
});

/** GET /api/v1/openapi.json answers the document itself. */
export const openApiDocumentResponse = z.object({
  openapi: z.literal('3.1.0'),
  info: z.object({ title: z.string(), version: z.string(), description: z.string() }),
  servers: z.array(z.object({ url: z.string() })),
  paths: z.record(z.string(), z.record(z.string(), z.looseObject({ responses: z.record(z.string(), z.unknown()) }))),
  components: z.looseObject({ securitySchemes: z.record(z.string(), z.unknown()), schemas: z.record(z.string(), z.unknown()) }),
});
