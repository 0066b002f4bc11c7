// The server-level pieces of the http app (pure): the one gatehouse_hostroute handler per server
// (a map from host name to that host's route list), the HTTP → HTTPS redirect, the shared
// reverse_proxy named route, and the certificate issuer of the tls app.
import type { CaddyHandler, HostEntry, Json } from '../caddy-json.js';
import type { ProxySettings } from '../render-context.js';

export const HTTP_SERVER = 'gatehouse_http';
export const HTTPS_SERVER = 'gatehouse_https';
export const GRACE_PERIOD = '10s';
/**
 * How long an upgraded connection (WebSocket, other `Upgrade`) outlives a FULL load of the
 * configuration (start-up excepted: a restart, POST /caddy/reload, a global setting, an L4 route,
 * drift repair): the old reverse_proxy keeps it open this long after the load, then closes it (a
 * WebSocket gets a 1001 "going away" close frame) and the client reconnects through the new
 * configuration. Host changes (proxy/apply.ts) never close connections of other hosts, so they
 * need no grace. caddy-modules/hostroute/README.md "Upgraded connections and full loads".
 */
export const STREAM_CLOSE_DELAY = '60s';

/** The server-level named route every plain reverse_proxy of the host map goes through. */
export const SHARED_PROXY = 'gatehouse_proxy';
export const UPSTREAM_VAR = 'gatehouse_upstream';

/** One host entry of the host map made of one route with these handlers. */
export function hostEntry(handlers: CaddyHandler[]): HostEntry {
  return { routes: [{ handle: handlers }] };
}

export function hostRoute(hosts: Record<string, HostEntry>): CaddyHandler {
  return { handler: 'gatehouse_hostroute', hosts };
}

export function redirectToHttps(settings: ProxySettings): CaddyHandler {
  const port = settings.httpsPort === 443 ? '' : `:${settings.httpsPort}`;
  return {
    handler: 'static_response',
    status_code: 308,
    headers: { Location: [`https://{http.request.host}${port}{http.request.uri}`] },
  };
}

/** A reverse_proxy to one static upstream, with the stream grace of full loads. */
export function reverseProxyTo(dial: string): CaddyHandler {
  return { handler: 'reverse_proxy', upstreams: [{ dial }], stream_close_delay: STREAM_CLOSE_DELAY };
}

function isPlainReverseProxy(h: CaddyHandler): boolean {
  // (with or without the stream grace: the shared reverse_proxy has it)
  const keys = Object.keys(h).filter((k) => !(k === 'stream_close_delay' && h[k] === STREAM_CLOSE_DELAY));
  if (h.handler !== 'reverse_proxy' || keys.length !== 2 || !Array.isArray(h.upstreams) || h.upstreams.length !== 1) return false;
  const u = h.upstreams[0] as Json;
  return Object.keys(u).length === 1 && typeof u.dial === 'string' && !u.dial.includes('{');
}

/**
 * Replaces every plain `reverse_proxy` (one static upstream, no other option) in a host entry's
 * route list by `vars {gatehouse_upstream: <dial>}` + `invoke gatehouse_proxy`, a server-level named
 * route holding ONE reverse_proxy whose upstream is `{http.vars.gatehouse_upstream}`. Same
 * behaviour per request (Caddy evaluates an upstream's dial address per request anyway), but a
 * config load provisions two trivial handlers per host instead of a whole reverse_proxy (transport,
 * upstream pool): /load of 10,000 hosts measured ~0.65 s instead of ~0.95 s. A reverse_proxy with
 * any option of its own (TLS transport, handle_response, retries, circuit breaker) stays as it is.
 * Changes the entry in place; returns whether it now invokes the shared route.
 */
export function shareEntryUpstreams(entry: HostEntry): boolean {
  let used = false;
  for (const route of entry.routes ?? []) {
    const handle = route.handle as CaddyHandler[] | undefined;
    if (!handle?.some(isPlainReverseProxy)) continue;
    route.handle = handle.flatMap((h) =>
      isPlainReverseProxy(h)
        ? [
            { handler: 'vars', [UPSTREAM_VAR]: (h.upstreams as Json[])[0].dial },
            { handler: 'invoke', name: SHARED_PROXY },
          ]
        : [h],
    );
    used = true;
  }
  return used;
}

/** Whether a (shared) host entry invokes the server's shared reverse_proxy. */
export function usesSharedProxy(entry: HostEntry): boolean {
  return (entry.routes ?? []).some((r) => (r.handle as CaddyHandler[] | undefined)?.some((h) => h.handler === 'invoke' && h.name === SHARED_PROXY));
}

export function sharedProxyRoutes(): Json {
  return { [SHARED_PROXY]: { handle: [reverseProxyTo(`{http.vars.${UPSTREAM_VAR}}`)] } };
}

/**
 * The tls app. Certificates of exact host names of the HTTPS host map are managed ON DEMAND: at
 * the first TLS handshake for the name, allowed by the permission module
 * tls.permission.gatehouse_hostroute, which answers from the host maps in memory (an exact key of
 * the HTTPS map now; no HTTP round trip). So a host put at run time (proxy/apply.ts) gets its
 * certificate without a full load, a deleted one cannot get one, and names a client makes up get
 * nothing. Wildcard hosts and the names of layer4 TLS termination (`subjects`) are managed up
 * front as before (a wildcard key would let clients pick unbounded names on demand).
 * docs/guides/proxy.md "Certificates".
 */
export function tlsApp(settings: ProxySettings, subjects: string[], onDemand: boolean): Json | null {
  if (!subjects.length && !onDemand) return null;
  const policies: Json[] = [];
  if (subjects.length) policies.push({ subjects, issuers: [tlsIssuer(settings)] });
  if (onDemand) policies.push({ issuers: [tlsIssuer(settings)], on_demand: true });
  const tls: Json = {};
  if (subjects.length) tls.certificates = { automate: subjects };
  tls.automation = onDemand ? { policies, on_demand: { permission: { module: 'gatehouse_hostroute' } } } : { policies };
  return tls;
}

export function tlsIssuer(settings: ProxySettings): Json {
  if (settings.tls === 'internal') return { module: 'internal' };
  const issuer: Json = { module: 'acme' };
  if (settings.acmeEmail) issuer.email = settings.acmeEmail;
  // Caddy's automatic HTTPS tells the ACME solvers when the HTTP servers do not listen on the
  // standard ports (port forwarding 80→httpPort, 443→httpsPort); we render the same.
  const challenges: Json = {};
  if (settings.httpPort !== 80) challenges.http = { alternate_port: settings.httpPort };
  if (settings.httpsPort !== 443) challenges['tls-alpn'] = { alternate_port: settings.httpsPort };
  if (Object.keys(challenges).length) issuer.challenges = challenges;
  return issuer;
}
