// The server-level pieces of the http app (pure): the one gatehouse_hostroute handler per server
// (a map from host name to that host's route list), the HTTP → HTTPS redirect, the shared
// reverse_proxy named route, and the certificate issuer of the tls app.
import type { CaddyHandler, HostEntry, Json } from '../caddy-json.js';
import type { ProxySettings } from '../render-context.js';

export const HTTP_SERVER = 'gatehouse_http';
export const HTTPS_SERVER = 'gatehouse_https';
export const GRACE_PERIOD = '10s';

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

function isPlainReverseProxy(h: CaddyHandler): boolean {
  if (h.handler !== 'reverse_proxy' || Object.keys(h).length !== 2 || !Array.isArray(h.upstreams) || h.upstreams.length !== 1) return false;
  const u = h.upstreams[0] as Json;
  return Object.keys(u).length === 1 && typeof u.dial === 'string' && !u.dial.includes('{');
}

/**
 * Replaces every plain `reverse_proxy` (one static upstream, no other option) in the hosts' route
 * lists by `vars {gatehouse_upstream: <dial>}` + `invoke gatehouse_proxy`, a server-level named
 * route holding ONE reverse_proxy whose upstream is `{http.vars.gatehouse_upstream}`. Same
 * behaviour per request (Caddy evaluates an upstream's dial address per request anyway), but a
 * config load provisions two trivial handlers per host instead of a whole reverse_proxy (transport,
 * upstream pool): /load of 10,000 hosts measured ~0.65 s instead of ~0.95 s. A reverse_proxy with
 * any option of its own (TLS transport, handle_response, retries, circuit breaker) stays as it is.
 * Returns whether the server needs the named route.
 */
export function shareUpstreams(hosts: Record<string, HostEntry>): boolean {
  let used = false;
  for (const entry of Object.values(hosts)) {
    for (const route of entry.routes ?? []) {
      const handle = route.handle as CaddyHandler[] | undefined;
      if (!handle?.some(isPlainReverseProxy)) continue;
      route.handle = handle.flatMap((h) =>
        isPlainReverseProxy(h) ? [{ handler: 'vars', [UPSTREAM_VAR]: (h.upstreams as Json[])[0].dial }, { handler: 'invoke', name: SHARED_PROXY }] : [h],
      );
      used = true;
    }
  }
  return used;
}

export function sharedProxyRoutes(): Json {
  return { [SHARED_PROXY]: { handle: [{ handler: 'reverse_proxy', upstreams: [{ dial: `{http.vars.${UPSTREAM_VAR}}` }] }] } };
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
