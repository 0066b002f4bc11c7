// OpenAPI 3.1 document generated from the endpoint declarations and their zod schemas.
import { z } from 'zod';
import { fullPath, scopeForPath, type Endpoint } from './registry.js';
import { APP_VERSION } from '../version.js';

function toJsonSchema(s: z.ZodType): Record<string, unknown> {
  const js = z.toJSONSchema(s, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  delete js.$schema;
  return js;
}

export function openApiDocument(endpoints: Endpoint[]): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const e of endpoints) {
    const p = fullPath(e).replace(/:([A-Za-z_]+)/g, '{$1}');
    const op: Record<string, unknown> = {
      summary: e.summary,
      tags: e.tags ?? [e.path.split('/')[1] || 'misc'],
      operationId: `${e.method.toLowerCase()}${p.replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ? c.toUpperCase() : ''))}`,
    };
    const params: Record<string, unknown>[] = [...p.matchAll(/\{([A-Za-z_]+)\}/g)].map((m) => ({ name: m[1], in: 'path', required: true, schema: m[1] === 'id' ? { type: 'integer', minimum: 1 } : { type: 'string' } }));
    if (e.query) {
      const js = toJsonSchema(e.query) as { properties?: Record<string, unknown>; required?: string[] };
      for (const [name, schema] of Object.entries(js.properties ?? {})) params.push({ name, in: 'query', required: js.required?.includes(name) ?? false, schema });
    }
    if (params.length) op.parameters = params;
    if (e.body) {
      const schema = toJsonSchema(e.body);
      op.requestBody = { required: true, content: { 'application/json': { schema }, ...(e.auth === 'public' ? { 'application/x-www-form-urlencoded': { schema } } : {}) } };
    } else if (e.multipart) {
      op.requestBody = { required: true, content: { 'multipart/form-data': { schema: { type: 'object', properties: { [e.multipart.field]: { type: 'string', format: 'binary' } } } } } };
    }
    const ok = String(e.status ?? 200);
    op.responses = {
      [ok]: { description: 'Success: {ok: true, ...}', content: { 'application/json': { schema: { $ref: '#/components/schemas/Ok' } } } },
      '400': { description: 'Validation error', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
      ...(e.auth !== 'public' ? { '401': { description: 'Not authenticated' }, '403': { description: 'Scope, role or CSRF refused' } } : {}),
      '429': { description: 'Rate limit exceeded' },
    };
    if (e.auth === 'admin') {
      const scope = e.scope !== undefined ? e.scope : scopeForPath(e.path);
      op.security = [{ session: [] }, { bearer: [] }, { apiTokenHeader: [] }, { apiKeyHeader: [] }];
      op['x-required-scope'] = e.adminRole ? 'full-access (admin role for sessions)' : scope ?? 'full-access';
    } else if (e.auth === 'gateway') op.security = [{ gatewayBearer: [] }];
    else if (e.auth === 'client') op.security = [{ bearer: [] }];
    else op.security = [];
    (paths[p] ??= {})[e.method.toLowerCase()] = op;
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Gatehouse API', version: APP_VERSION, description: 'Reverse-proxy and WireGuard gateway manager. /api/* is an alias of /api/v1/*.' },
    servers: [{ url: '/' }],
    paths,
    components: {
      securitySchemes: {
        session: { type: 'apiKey', in: 'cookie', name: 'gatehouse_sid', description: 'Admin UI session; writes also need the X-CSRF-Token header' },
        bearer: { type: 'http', scheme: 'bearer', description: 'API token gth_…' },
        apiTokenHeader: { type: 'apiKey', in: 'header', name: 'X-API-Token' },
        apiKeyHeader: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
        gatewayBearer: { type: 'http', scheme: 'bearer', description: 'Gateway companion token' },
      },
      schemas: {
        Ok: { type: 'object', properties: { ok: { const: true } }, required: ['ok'], additionalProperties: true },
        Error: { type: 'object', properties: { ok: { const: false }, error: { type: 'string' }, fields: { type: 'object', additionalProperties: { type: 'string' } } }, required: ['ok', 'error'] },
      },
    },
  };
}
