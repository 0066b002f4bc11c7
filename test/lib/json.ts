// Reading JSON the tests did not type: Caddy's configuration (each Caddy module has its own shape;
// the renderer types it as plain JSON objects, sidecar/src/proxy/caddy-json.ts), OpenAPI documents
// and bodies read as the JSON they are. A value is `unknown` and is narrowed where it is read: at()
// walks a path and fails with the path when a step is missing; obj() and arr() narrow one value.
// Where a test reads a body as one of our types, it names that type instead (the schema-inferred
// types of sidecar/test/lib/protocol.ts, `s.req<T>()`).

/** A JSON object. */
export type JsonObject = Record<string, unknown>;

const isObj = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The value as a JSON object (fails naming `what` when it is not one). */
export function obj(v: unknown, what = 'value'): JsonObject {
  if (!isObj(v)) throw new Error(`${what} is not a JSON object: ${JSON.stringify(v)?.slice(0, 200)}`);
  return v;
}

/** The value as an array (fails naming `what` when it is not one). */
export function arr(v: unknown, what = 'value'): unknown[] {
  if (!Array.isArray(v)) throw new Error(`${what} is not an array: ${JSON.stringify(v)?.slice(0, 200)}`);
  return v;
}

/** The value at a path of keys and indexes; undefined where the path ends early (at(doc, 'a', 0, 'b')). */
export function at(v: unknown, ...path: (string | number)[]): unknown {
  let cur = v;
  for (const k of path) {
    if (typeof k === 'number' ? !Array.isArray(cur) : !isObj(cur)) return undefined;
    cur = (cur as Record<string | number, unknown>)[k];
  }
  return cur;
}

/** The object at a path (fails with the path when it is missing or not an object). */
export function objAt(v: unknown, ...path: (string | number)[]): JsonObject {
  return obj(at(v, ...path), path.join('.'));
}

/** The array at a path (fails with the path when it is missing or not an array). */
export function arrAt(v: unknown, ...path: (string | number)[]): unknown[] {
  return arr(at(v, ...path), path.join('.'));
}

/** The host map of one of Caddy's HTTP servers in a rendered configuration (gatehouse_http / gatehouse_https). */
export function hostMap(cfg: unknown, server = 'gatehouse_http'): JsonObject {
  return objAt(cfg, 'apps', 'http', 'servers', server, 'routes', 0, 'handle', 0, 'hosts');
}

/**
 * JSON the types do not follow, read field by field: a request's body where the types cannot follow
 * the request (sidecar/test/lib/api-types.ts: a path or method only known at run time, a test's own
 * wrapper over any path, an answer that is not the endpoint's JSON), and the Caddy configurations and
 * OpenAPI documents that tests not yet moved to the helpers above walk.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- reason: JSON read field by field where no type is named yet (the tests above; each moves to a typed request or to at()/objAt())
export type Untyped = any;
