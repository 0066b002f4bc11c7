// Route auth in Caddy (pure): the /route-auth/* pages of a protected domain go to the sidecar, every
// other request first asks the sidecar's verify endpoint (forward auth). The shapes are exactly what
// `caddy adapt` (Caddy 2.11.9) prints for the equivalent Caddyfile directives (golden tests in
// test/route-auth-caddy.test.ts). Placed in a host's route list by protectionRoutes (protection.ts).
import type { CaddyHandler, CaddyRoute } from '../caddy-json.js';

/** Headers the verify endpoint answers with and Caddy copies onto the proxied request. */
export const IDENTITY_HEADERS = ['X-Auth-Email', 'X-Auth-Method'] as const;
export const VERIFY_PATH = '/route-auth/verify';
export const PAGES_PATH = '/route-auth/*';

/**
 * Caddyfile `forward_auth <upstream> { uri /route-auth/verify; header_up X-Route-Domain <domain>;
 * copy_headers X-Auth-Email X-Auth-Method }`: a reverse_proxy that GETs the verify URI; on 2xx each
 * copied header is deleted from the request (so a visitor cannot send their own) and set from the
 * verify response when present, then the chain continues; any other answer (302 to the login page,
 * 403 from the IP filter) goes to the client as it is.
 */
export function forwardAuthHandler(domain: string, sidecarUpstream: string): CaddyHandler {
  const copy: CaddyRoute[] = [{ handle: [{ handler: 'vars' }] }];
  for (const h of IDENTITY_HEADERS) {
    copy.push({ handle: [{ handler: 'headers', request: { delete: [h] } }] });
    copy.push({
      handle: [{ handler: 'headers', request: { set: { [h]: [`{http.reverse_proxy.header.${h}}`] } } }],
      match: [{ not: [{ vars: { [`{http.reverse_proxy.header.${h}}`]: [''] } }] }],
    });
  }
  return {
    handle_response: [{ match: { status_code: [2] }, routes: copy }],
    handler: 'reverse_proxy',
    headers: {
      request: {
        set: {
          'X-Forwarded-Method': ['{http.request.method}'],
          'X-Forwarded-Uri': ['{http.request.uri}'],
          'X-Route-Domain': [domain],
        },
      },
    },
    rewrite: { method: 'GET', uri: VERIFY_PATH },
    upstreams: [{ dial: sidecarUpstream }],
  };
}

/** `/route-auth/*` of a protected domain → the sidecar (login pages, assets, login/logout posts). */
export function routeAuthPagesRoute(domain: string, sidecarUpstream: string): CaddyRoute {
  return {
    handle: [
      {
        handler: 'reverse_proxy',
        headers: { request: { set: { 'X-Route-Domain': [domain] } } },
        upstreams: [{ dial: sidecarUpstream }],
      },
    ],
    match: [{ path: [PAGES_PATH] }],
  };
}

/** The route-auth pieces: the pages route, then a route whose handler is the forward auth (the rest follows it). */
export function forwardAuthRoutes(route: { domain: string }, sidecarUpstream: string): CaddyRoute[] {
  return [routeAuthPagesRoute(route.domain, sidecarUpstream), { handle: [forwardAuthHandler(route.domain, sidecarUpstream)] }];
}

