// Reading JSON that no schema of ours types: Caddy's configuration (each Caddy module has its own
// shape; the renderer types it as plain JSON objects, sidecar/src/proxy/caddy-json.ts), parts of
// OpenAPI documents, a client's --json output, and answers whose path is only known at run time. A
// value is `unknown` and is narrowed where it is read: at() walks a path (undefined where it ends
// early); objAt(), arrAt() and objsAt() fail with the path when a step is missing; obj(), arr() and
// str() narrow one value. Where a test reads a body of our API, the request types it (s.req(): the
// endpoint's response schema, sidecar/test/lib/api-types.ts) or it names a schema-inferred type of
// sidecar/test/lib/protocol.ts.

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

/** The value as a string (fails naming `what` when it is not one), for the assertions that take a string. */
export function str(v: unknown, what = 'value'): string {
  if (typeof v !== 'string') throw new Error(`${what} is not a string: ${JSON.stringify(v)?.slice(0, 200)}`);
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

/** The list of JSON objects at a path (fails with the path when it is missing, or names the first entry that is no object). */
export function objsAt(v: unknown, ...path: (string | number)[]): JsonObject[] {
  const where = path.join('.');
  return arr(at(v, ...path), where).map((x, i) => obj(x, `${where}[${i}]`));
}

/** The host map of one of Caddy's HTTP servers in a rendered configuration (gatehouse_http / gatehouse_https). */
export function hostMap(cfg: unknown, server = 'gatehouse_http'): JsonObject {
  return objAt(cfg, 'apps', 'http', 'servers', server, 'routes', 0, 'handle', 0, 'hosts');
}
