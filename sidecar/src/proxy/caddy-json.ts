// The Caddy JSON types of the renderer. A leaf module: it imports nothing, so every fragment
// builder (proxy/fragments/*.ts), render.ts and their callers can share these types without an
// import circle. Caddy's JSON is open-ended (each module has its own shape), so these are named
// views of plain JSON objects, not a schema; the golden files and `caddy validate` check the shapes.

/** Any JSON object. */
export type Json = Record<string, unknown>;
/** One handler of a Caddy route's `handle` list (`{handler: '<module>', ...}`). */
export type CaddyHandler = Json;
/** One Caddy route: `{match?, handle, terminal?}`. */
export type CaddyRoute = Json;
/** The whole configuration loaded with POST /load. */
export type CaddyConfig = Json;

/** One entry of the gatehouse_hostroute host map: a route list, like a `subroute` body. */
export interface HostEntry extends Json {
  routes: CaddyRoute[];
  /** Routes run when `routes` return an error (`{http.error.*}` placeholders), before the server's. */
  errors?: { routes: CaddyRoute[] };
}

/** One server of the layer4 app (caddy-l4): its listeners and its route list. */
export interface L4Server extends Json {
  listen: string[];
  routes: Json[];
}
