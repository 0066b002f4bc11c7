// The one untyped JSON document of the tests. Caddy's configuration (each Caddy module has its own
// shape; the renderer types it as plain JSON objects, sidecar/src/proxy/caddy-json.ts), OpenAPI
// documents and response bodies are read by the tests field by field, some levels deep, as the
// JSON they are; where a test reads a body as one of our types, it names that type instead (the
// schema-inferred types of sidecar/test/lib/protocol.ts, `s.req<T>()`).

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- reason: Caddy JSON, OpenAPI documents and bodies read as plain JSON, field by field (see above)
export type JsonDoc = any;
