// Request input is strict: a write that names a field the API does not know is refused
// with 400 and `fields` naming every unknown field, never applied without it. The schema kit:
// - request objects are z.strictObject (nested ones too); assertStrictInput() refuses, when the app
//   mounts an endpoint, a body or query schema with an object that would drop unknown keys, so a new
//   endpoint cannot forget it (z.looseObject stays allowed for bodies stored whole, e.g. a client's
//   status document: nothing is dropped there);
// - read-only fields a client may send back from a GET (id, created_at, ...) are accepted and
//   ignored only where a resource declares them (readOnlyFields, next to its schema); they show in the
//   OpenAPI document as `readOnly: true` properties and in docs/reference/api.md "Conventions";
// - a write without a body schema takes no fields at all; a write without a query schema takes no
//   query parameters (http/app.ts validate()).
import { z } from 'zod';
import { msg } from '@gatehouse/common/messages/index.js';

/** The message of an unknown field in `fields`. */
export const UNKNOWN_FIELD_MSG = msg('field.unknown');
export const UNKNOWN_FIELD = UNKNOWN_FIELD_MSG.text;
/** The message of an unknown query parameter in `fields`. */
export const UNKNOWN_PARAMETER_MSG = msg('field.unknown_parameter');
export const UNKNOWN_PARAMETER = UNKNOWN_PARAMETER_MSG.text;

/** The CSRF token a form may carry as body field: known to every write, never part of a body schema. */
export const CSRF_FIELD = '_csrf';

export interface ReadOnlyFields {
  /** the resource they belong to, for the document */
  resource: string;
  shape: Record<string, z.ZodType>;
}

/**
 * Read-only fields of a resource that a write accepts and ignores (a client sending back what it
 * read). Each is optional and typed as the resource view serves it.
 */
export function readOnlyFields(resource: string, shape: Record<string, z.ZodType>): ReadOnlyFields {
  return { resource, shape };
}

/** id, created_at, updated_at: what every stored resource serves and no write sets. */
export const storedResourceFields = (resource: string, extra: Record<string, z.ZodType> = {}): ReadOnlyFields =>
  readOnlyFields(resource, { id: z.number().int(), created_at: z.string().nullable(), updated_at: z.string().nullable(), ...extra });

/**
 * A strict body that also accepts the resource's read-only fields and drops them: the handler never
 * sees them. Apply it before refinements that look at the fields sent (they then see only writable ones).
 */
export function ignoringReadOnly<S extends z.ZodRawShape>(obj: z.ZodObject<S>, ro: ReadOnlyFields) {
  const keys = Object.keys(ro.shape);
  const extra = Object.fromEntries(
    keys.map((k) => [
      k,
      ro.shape[k]
        .optional()
        .meta({ readOnly: true, description: `read-only field of the ${ro.resource}: accepted and ignored (a client may send back what it read)` }),
    ]),
  );
  return obj.extend(extra).transform((v) => {
    const out: Record<string, unknown> = { ...v };
    for (const k of keys) delete out[k];
    return out as z.output<z.ZodObject<S>>;
  });
}

/** A JSON Schema object as the walks over request schemas read it (zod's JSON Schema output). */
export interface SchemaNode {
  properties?: Record<string, SchemaNode>;
  additionalProperties?: unknown;
  readOnly?: boolean;
  oneOf?: SchemaNode[];
  anyOf?: SchemaNode[];
  allOf?: SchemaNode[];
  [keyword: string]: unknown;
}

/** The names of the read-only fields a request schema declares (top-level `readOnly: true` properties of its JSON schema, also inside oneOf/anyOf). */
export function readOnlyNames(js: SchemaNode): string[] {
  const out = new Set<string>();
  const visit = (s: SchemaNode | undefined) => {
    if (!s || typeof s !== 'object') return;
    for (const [k, v] of Object.entries(s.properties ?? {})) if (v?.readOnly === true) out.add(k);
    for (const alt of [...(s.oneOf ?? []), ...(s.anyOf ?? []), ...(s.allOf ?? [])]) visit(alt);
  };
  visit(js);
  return [...out];
}

/**
 * Where a request JSON schema has an object that silently drops unknown keys (no additionalProperties:
 * zod's default z.object). JSON pointers-ish paths; empty when every object is strict (or loose on purpose).
 */
export function droppingObjects(js: unknown, at = ''): string[] {
  if (!js || typeof js !== 'object') return [];
  const s = js as Record<string, unknown>;
  const out: string[] = [];
  const isObject = s.type === 'object' || (Array.isArray(s.type) && s.type.includes('object')) || s.properties !== undefined;
  if (isObject && s.additionalProperties === undefined) out.push(at || '/');
  for (const [k, v] of Object.entries(s)) {
    if (k === 'properties' || k === '$defs' || k === 'definitions' || k === 'patternProperties') {
      for (const [pk, pv] of Object.entries((v ?? {}) as Record<string, unknown>)) out.push(...droppingObjects(pv, `${at}/${pk}`));
    } else if (Array.isArray(v)) {
      v.forEach((x, i) => out.push(...droppingObjects(x, `${at}/${k}[${i}]`)));
    } else if (v && typeof v === 'object') {
      out.push(...droppingObjects(v, k === 'items' || k === 'additionalProperties' ? `${at}/${k === 'items' ? '*' : '{}'}` : at));
    }
  }
  return out;
}

/** The request JSON schema of a zod schema (what a client may send). */
export function requestJsonSchema(s: z.ZodType): Record<string, unknown> {
  const js = z.toJSONSchema(s, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  delete js.$schema;
  return js;
}

/** Throws when a request schema would drop unknown keys (called for every endpoint as it is mounted). */
export function assertStrictInput(label: string, part: 'body' | 'query', s: z.ZodType): void {
  const where = droppingObjects(requestJsonSchema(s));
  if (where.length) {
    throw new Error(
      `${label}: the ${part} schema drops unknown fields at ${where.join(', ')}; build request objects with z.strictObject (http/input.ts) so an unknown field is a 400`,
    );
  }
}
