// OpenAPI 3.1 document generated from the endpoint declarations and their zod schemas.
import { z } from 'zod';
import { fullPath, leastRole, MAX_ID, scopeForPath, SECRETS_SCOPE, type Endpoint } from './registry.js';
import { APP_VERSION } from '../version.js';
import { SERVED_OUTSIDE_REGISTRY, servedPathOperation } from './served-paths.js';
import { LICENSED_FEATURES } from './feature-gate.js';
import { CSRF_FIELD, readOnlyNames, type SchemaNode } from './input.js';

/** A request schema is what a client may send (io 'input': defaults make keys optional); a response schema what the server sends (io 'output'). */
function toJsonSchema(s: z.ZodType, io: 'input' | 'output' = 'input'): Record<string, unknown> {
  const js = z.toJSONSchema(s, { io, unrepresentable: 'any' }) as Record<string, unknown>;
  delete js.$schema;
  return js;
}

/** A redirect's short body (Koa: a link for clients that accept HTML, else text). */
export const REDIRECT_CONTENT = { 'text/html': { schema: { type: 'string' } }, 'text/plain': { schema: { type: 'string' } } };

// Every error body carries its message twice: `error`, the English text, and `code` with `params`,
// the same message as data (the catalogue of @gatehouse/common/messages; docs/reference/errors.md
// lists the codes), which a client words in its reader's language. Field messages likewise:
// `fields` (English) and `field_codes` (code and params per field).
const MESSAGE_PROPERTIES = {
  error: { type: 'string', description: 'the message in English' },
  code: {
    type: 'string',
    description:
      "the stable code of the message (docs/reference/errors.md lists every code and its parameters); a client words it in its reader's language and shows `error` for a code it does not know",
  },
  params: { type: 'object', additionalProperties: true, description: 'the parameters of the message, by name (absent when it has none)' },
};
const FIELDS_PROPERTY = {
  type: 'object',
  additionalProperties: { type: 'string' },
  description: 'each refused field (a dotted path for nested ones, `_` for the body as a whole) → why, in English',
};
const FIELD_CODES_PROPERTY = {
  type: 'object',
  description: 'the same fields as `fields`, each with its message as data: {code, params?}',
  additionalProperties: {
    type: 'object',
    properties: { code: { type: 'string' }, params: { type: 'object', additionalProperties: true } },
    required: ['code'],
  },
};

const errorRef = (name = 'Error') => ({ content: { 'application/json': { schema: { $ref: `#/components/schemas/${name}` } } } });

/** Path prefixes (relative to /api/v1) whose writes go through Caddy or another upstream and can answer 502. */
const UPSTREAM_PREFIXES = ['/routes', '/rdp', '/caddy', '/smtp', '/gateways'];

/** The error statuses an endpoint can answer besides 400/401/403/429, derived from what it is. */
function errorResponses(e: Endpoint): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (/:([A-Za-z_]+)/.test(e.path)) out['404'] = { description: 'No such resource (or unknown path)', ...errorRef() };
  if (e.auth === 'admin' && e.method !== 'GET')
    out['409'] = {
      description:
        'Conflict with the current state: a duplicate name, domain or port, a resource still in use. Route conflicts name the field and the route that holds the value.',
      ...errorRef('Conflict'),
    };
  if (e.rawResponse?.strictAccept) out['406'] = { description: `The request's Accept header does not allow ${e.rawResponse.contentType}`, ...errorRef() };
  if (e.method !== 'GET' && !e.ownBody)
    out['415'] = {
      description: `The body is not JSON${e.auth === 'public' ? ' or a form' : ''}${e.multipart ? ' or multipart/form-data' : ''} (by its Content-Type)`,
      ...errorRef(),
    };
  if (e.multipart) out['413'] = { description: `Upload larger than ${e.multipart.maxBytes} bytes`, ...errorRef() };
  if (e.path === '/login') {
    out['401'] = { description: 'Invalid username or password', ...errorRef() };
    out['423'] = { description: 'Account locked after too many failed logins', ...errorRef('Locked') };
  }
  if ((e.method !== 'GET' && (e.body || e.query || e.multipart)) || (e.auth === 'client' && e.method !== 'GET')) {
    out['422'] = {
      description:
        'Valid by this document, but not carried out: a rule no schema can state (a combination of fields, or of the request with the stored record; a referenced row that does not exist; a wrong current password; a file or key whose content does not verify). `fields` names why; nothing was written.',
      ...errorRef(),
    };
  }
  for (const [status, description] of Object.entries(e.errors ?? {}))
    out[status] = {
      description,
      ...(e.pages
        ? { content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } }, 'text/html': { schema: { type: 'string' } } } }
        : errorRef()),
    };
  if (e.sameOrigin) {
    const foreign = 'the Origin (or, without it, the Referer) names another site';
    const had = (out['403'] as { description?: string } | undefined)?.description;
    out['403'] = { description: had ? `${had}; or ${foreign}` : `Refused: ${foreign}`, ...errorRef() };
  }
  if (e.method !== 'GET' && UPSTREAM_PREFIXES.some((p) => e.path === p || e.path.startsWith(`${p}/`)))
    out['502'] = {
      description:
        'Caddy or another upstream (mail server, gateway companion) refused or failed. When Caddy refused the new configuration, `proxy_error` holds its reason verbatim and nothing was saved.',
      ...errorRef('UpstreamError'),
    };
  return out;
}

/** The success response: the declared body schema, an export's CSV/JSON file, or the generic {ok: true, ...}. */
function successResponse(e: Endpoint, queryJs: { properties?: Record<string, unknown> } | undefined): Record<string, unknown> {
  if (e.rawResponse) {
    const r = e.rawResponse;
    return { description: r.description, content: { [r.contentType]: { schema: { type: 'string' }, ...(r.events ? { 'x-events': r.events } : {}) } } };
  }
  if (e.response) {
    const other = Object.fromEntries((e.alsoContent ?? []).map((m) => [m, { schema: { type: 'string', format: 'binary' } }]));
    return { description: 'Success', content: { 'application/json': { schema: toJsonSchema(e.response, 'output') }, ...other } };
  }
  const format = JSON.stringify(queryJs?.properties?.format ?? '');
  if (format.includes('"csv"')) {
    return {
      description: 'The export as a file (Content-Disposition: attachment): CSV with a header row for format=csv, a JSON array of the rows for format=json',
      content: {
        'text/csv': { schema: { type: 'string' } },
        'application/json': {
          schema: { type: 'array', items: e.exportRow ? toJsonSchema(e.exportRow, 'output') : { type: 'object', additionalProperties: true } },
        },
      },
    };
  }
  return { description: 'Success: {ok: true, ...}', content: { 'application/json': { schema: { $ref: '#/components/schemas/Ok' } } } };
}

/**
 * The CSRF form field every write knows (the API's authentication rules: header X-CSRF-Token or body field
 * _csrf), added to each object a body may be; http/app.ts validate() takes it out before the schema.
 */
function withCsrfField(js: SchemaNode): SchemaNode {
  const field = { type: 'string', description: "the session's CSRF token (session callers; the X-CSRF-Token header does the same); never part of the data" };
  const visit = (s: SchemaNode) => {
    if (s.properties && s.additionalProperties === false) s.properties[CSRF_FIELD] = field;
    for (const alt of [...(s.oneOf ?? []), ...(s.anyOf ?? []), ...(s.allOf ?? [])]) visit(alt);
  };
  visit(js);
  return js;
}

function bodyDescription(js: SchemaNode): string {
  const ro = readOnlyNames(js);
  return `Unknown fields are refused: 400 with \`fields\` naming each one, nothing written.${ro.length ? ` The read-only fields ${ro.join(', ')} are accepted and ignored (a client may send back what it read).` : ''}`;
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
    const params: Record<string, unknown>[] = [...p.matchAll(/\{([A-Za-z_]+)\}/g)].map((m) => ({
      name: m[1],
      in: 'path',
      required: true,
      schema:
        m[1] === 'id' || m[1].endsWith('Id') || m[1].endsWith('_id')
          ? { type: 'integer', minimum: 1, maximum: MAX_ID }
          : e.params?.shape[m[1]]
            ? toJsonSchema(e.params.shape[m[1]] as z.ZodType)
            : { type: 'string' },
    }));
    let queryJs: { properties?: Record<string, unknown>; required?: string[] } | undefined;
    if (e.query) {
      const js = (queryJs = toJsonSchema(e.query) as { properties?: Record<string, unknown>; required?: string[] });
      for (const [name, schema] of Object.entries(js.properties ?? {}))
        params.push({ name, in: 'query', required: js.required?.includes(name) ?? false, schema });
    }
    if (e.headers) {
      const js = toJsonSchema(e.headers) as { properties?: Record<string, Record<string, unknown>>; required?: string[] };
      for (const [name, schema] of Object.entries(js.properties ?? {})) {
        const { description, ...rest } = schema;
        params.push({ name, in: 'header', required: js.required?.includes(name) ?? false, ...(description ? { description } : {}), schema: rest });
      }
    }
    if (params.length) op.parameters = params;
    if (e.body && !e.multipart) {
      const schema = withCsrfField(toJsonSchema(e.body));
      op.requestBody = {
        required: true,
        description: bodyDescription(schema),
        content: {
          'application/json': { schema },
          ...(e.auth === 'public' ? { 'application/x-www-form-urlencoded': { schema } } : {}),
          ...(e.ownBody ? { '*/*': { schema: { type: 'string', format: 'binary' } } } : {}),
        },
      };
    } else if (e.multipart) {
      // the file and the form fields the body schema declares (e.g. the passphrase of a restore)
      const fields = e.body ? (toJsonSchema(e.body) as { properties?: Record<string, SchemaNode>; required?: string[] }) : {};
      const schema: SchemaNode = {
        type: 'object',
        properties: { [e.multipart.field]: { type: 'string', format: 'binary' }, ...(fields.properties ?? {}) },
        required: [e.multipart.field, ...(fields.required ?? [])],
        additionalProperties: false,
      };
      op.requestBody = { required: true, description: bodyDescription(schema), content: { 'multipart/form-data': { schema: withCsrfField(schema) } } };
    }
    const ok = String(e.status ?? 200);
    const success = successResponse(e, queryJs);
    op.responses = {
      [ok]: success,
      ...Object.fromEntries((e.alsoStatus ?? []).map((st) => [String(st), success])),
      ...(e.redirect
        ? {
            '302': {
              description: `Browsers (no JSON in Accept): ${e.redirect}`,
              headers: { Location: { schema: { type: 'string' } } },
              content: REDIRECT_CONTENT,
            },
          }
        : {}),
      '400': { description: 'Validation error', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
      ...(e.auth !== 'public'
        ? {
            '401': { description: 'Not authenticated', ...errorRef() },
            '403': { description: 'Scope or role refused; for session writes also CSRF, or an Origin (or Referer) of another site', ...errorRef() },
          }
        : {}),
      ...(e.feature
        ? {
            '403': {
              description: `Scope or role refused; for session writes also CSRF, or an Origin (or Referer) of another site; or the licence does not include the feature ${e.feature} (body names it in \`feature\`)`,
              ...errorRef('FeatureDisabled'),
            },
          }
        : {}),
      ...errorResponses(e),
      '429': { description: 'Rate limit exceeded', ...errorRef() },
    };
    if (e.feature) op['x-feature'] = e.feature;
    if (e.secrets) {
      const r403 = (op.responses as Record<string, { description: string }>)['403'];
      r403.description = `Not a ${SECRETS_SCOPE} token nor a session with the ${leastRole(e)} role or higher (the endpoint discloses secrets); or ${r403.description.charAt(0).toLowerCase()}${r403.description.slice(1)}`;
    }
    if (e.auth === 'admin') {
      const scope = e.scope !== undefined ? e.scope : scopeForPath(e.path);
      op.security = [{ session: [] }, { bearer: [] }, { apiTokenHeader: [] }, { apiKeyHeader: [] }];
      op['x-required-scope'] = e.sessionOnly
        ? `none: a signed-in session (${leastRole(e)} role or higher), no API token`
        : e.secrets
          ? `${SECRETS_SCOPE} (${leastRole(e)} role or higher for sessions)`
          : e.adminRole
            ? 'full-access (admin role for sessions)'
            : (scope ?? 'full-access');
      op['x-least-role'] = leastRole(e);
      if (e.sessionOnly) {
        op['x-session-only'] = true;
        op.security = [{ session: [] }];
      }
      if (e.secrets) {
        op['x-discloses-secrets'] = e.secrets;
        op.description = e.sessionOnly
          ? `Discloses secrets: ${e.secrets}. Only a signed-in session (${leastRole(e)} role or higher) may call it, for its own account; every API token gets 403.`
          : `Discloses secrets: ${e.secrets}. Only a ${SECRETS_SCOPE} token or a session with the ${leastRole(e)} role or higher may call it; read-only and every other scope get 403, and so do other roles.`;
      }
    } else if (e.auth === 'gateway') op.security = [{ gatewayBearer: [] }];
    else if (e.auth === 'client') op.security = [{ bearer: [] }];
    else op.security = [];
    (paths[p] ??= {})[e.method.toLowerCase()] = op;
  }
  // Paths served outside the registry (fast paths, route-auth pages, admin pages): http/served-paths.ts
  for (const s of SERVED_OUTSIDE_REGISTRY) if (s.openapi === true) (paths[s.path] ??= {})[s.method.toLowerCase()] = servedPathOperation(s);
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
        Error: {
          type: 'object',
          properties: { ok: { const: false }, ...MESSAGE_PROPERTIES, fields: FIELDS_PROPERTY, field_codes: FIELD_CODES_PROPERTY },
          required: ['ok', 'error', 'code'],
        },
        Conflict: {
          type: 'object',
          properties: {
            ok: { const: false },
            ...MESSAGE_PROPERTIES,
            field: { type: 'string', description: 'the request field whose value conflicts (domain, l4_listen_port), when one does' },
            route_id: { type: 'integer', description: 'the route that already holds the value, when it is a route' },
          },
          required: ['ok', 'error', 'code'],
        },
        FeatureDisabled: {
          type: 'object',
          properties: {
            ok: { const: false },
            ...MESSAGE_PROPERTIES,
            feature: { type: 'string', enum: [...LICENSED_FEATURES], description: 'the licence feature the endpoint needs (only when that is why it refused)' },
          },
          required: ['ok', 'error', 'code'],
        },
        UpstreamError: {
          type: 'object',
          properties: {
            ok: { const: false },
            ...MESSAGE_PROPERTIES,
            proxy_error: { type: 'string', description: "Caddy's own reason, verbatim, when Caddy refused the new configuration (the change was not saved)" },
          },
          required: ['ok', 'error', 'code'],
        },
        Locked: {
          type: 'object',
          properties: {
            ok: { const: false },
            ...MESSAGE_PROPERTIES,
            locked_until: { type: 'string', format: 'date-time' },
            retry_after: { type: 'integer', description: 'seconds' },
          },
          required: ['ok', 'error', 'code'],
        },
      },
    },
  };
}
