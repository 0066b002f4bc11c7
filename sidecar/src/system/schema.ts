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
