// The served OpenAPI document (GET /api/v1/openapi.json) as tests read it: the parts of OpenAPI 3.1
// they walk (paths, operations, parameters, bodies, answers; the schemas are JSON Schema, zod's
// type for what its toJSONSchema writes), and the schema an operation declares for an answer.
import type { JSONSchema } from 'zod/v4/core';
import { at, obj, objAt, str, type JsonObject } from '../../../test/lib/json.js';

/** A JSON schema of the document. */
export type Schema = JSONSchema.JSONSchema;

export interface OpenApiParameter {
  name: string;
  in?: string;
  required?: boolean;
  schema?: Schema;
}

/** A media type of a request body or an answer: its schema (and extensions such as x-events). */
export interface OpenApiMedia {
  schema?: Schema;
  [k: string]: unknown;
}

export interface OpenApiResponse {
  description?: string;
  content?: Record<string, OpenApiMedia>;
  [k: string]: unknown;
}

export interface OpenApiOperation {
  operationId?: string;
  tags?: string[];
  security?: Record<string, string[]>[];
  parameters?: OpenApiParameter[];
  requestBody?: { required?: boolean; content?: Record<string, OpenApiMedia> };
  responses?: Record<string, OpenApiResponse>;
  'x-feature'?: string;
  [k: string]: unknown;
}

/** `paths`: path → method → operation */
export type OpenApiPaths = Record<string, Record<string, OpenApiOperation>>;

export interface OpenApiDocument {
  paths: OpenApiPaths;
  components: { schemas: Record<string, Schema>; [k: string]: unknown };
  [k: string]: unknown;
}

/** The served document read as OpenAPI 3.1 (fails when it has no paths or component schemas). */
export function openApiDocument(doc: unknown): OpenApiDocument {
  objAt(doc, 'paths');
  objAt(doc, 'components', 'schemas');
  // reason: the document is OpenAPI 3.1 as http/openapi.ts writes it (its own test, openapi-responses.test.ts, checks it against the schema it declares for itself)
  return doc as OpenApiDocument;
}

/** The schema an operation of the document declares for the JSON body of a status, as written (a `$ref` or the schema itself); undefined when it declares none. */
export function jsonBodySchema(doc: unknown, p: string, method: string, status: number | string): Schema | undefined {
  const schema = at(doc, 'paths', p, method, 'responses', String(status), 'content', 'application/json', 'schema');
  // reason: a schema of the document is JSON Schema (zod's toJSONSchema output)
  return schema === undefined ? undefined : (obj(schema, `${method} ${p} ${status} schema`) as Schema);
}

/** A schema of the document with its `$ref` resolved among components.schemas. */
export function resolvedSchema(doc: unknown, schema: Schema | JsonObject): Schema {
  // reason: a schema of the document is JSON Schema (zod's toJSONSchema output)
  return (schema.$ref ? objAt(doc, 'components', 'schemas', str(schema.$ref).split('/').pop()!) : schema) as Schema;
}
