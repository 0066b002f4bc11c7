// Route auth in Caddy (pure): the route-auth pages of a protected domain go to the sidecar, every
// other request first asks the sidecar's verify endpoint (forward auth). The shapes are exactly what
// `caddy adapt` (Caddy 2.11.9) prints for the equivalent Caddyfile directives (golden tests in
// test/route-auth-caddy.test.ts). Placed in a host's route list by protectionRoutes (protection.ts).
import type { CaddyHandler, CaddyRoute } from '../caddy-json.js';

/** Headers the verify endpoint answers with and Caddy copies onto the proxied request (in the order `caddy adapt` prints copy_headers). */
export const IDENTITY_HEADERS = ['X-Auth-Email', 'X-Auth-Groups', 'X-Auth-Method', 'X-Auth-User'] as const;
/** Each identity header by what it carries. */
export const [EMAIL_HEADER, GROUPS_HEADER, METHOD_HEADER, USER_HEADER] = IDENTITY_HEADERS;
/** Access-log field (Caddy `log_append`) naming who was signed in; src/resilience/access-log.ts reads it. */
export const AUTH_USER_LOG_FIELD = 'auth_user';
export const VERIFY_PATH = '/route-auth/verify';
/** The route-auth pages' stylesheet (served with the pages). */
export const LOGIN_CSS_PATH = '/route-auth/assets/login.css';
/**
 * Exactly the paths the sidecar serves for a protected domain (route-auth/http.ts): Caddy sends these
 * and nothing else under /route-auth/ to it. Caddy's path matcher compares case-insensitively, after
 * percent-decoding and cleaning the path (dot segments, doubled slashes), and forwards the request as
 * the visitor wrote it: the sidecar serves only these exact spellings and refuses every other one
 * under /route-auth/ (any case, encoding or dot segment), so nothing reaches the admin app this way.
 */
export const PAGE_PATHS: readonly string[] = [
  '/route-auth/login',
  '/route-auth/logout',
  LOGIN_CSS_PATH,
  '/route-auth/branding/logo',
  '/route-auth/branding/bg-image',
  '/route-auth/share',
  // method oidc (route-auth/oidc.ts): the start, and the callback the provider sends the visitor back to
  '/route-auth/oidc/start',
  '/route-auth/oidc/callback',
];

/**
 * Caddyfile `forward_auth <upstream> { uri /route-auth/verify; header_up X-Route-Domain <domain>;
 * copy_headers X-Auth-Email X-Auth-Groups X-Auth-Method X-Auth-User }`: a reverse_proxy that GETs the verify URI; on 2xx each
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

/**
 * Every cookie of route auth is named `gh_ra_…`: the session `gh_ra_<routeId>`, the pending login
 * step `gh_ra_<routeId>_p`, the CSRF token `gh_ra_csrf` (route-auth/http.ts). None is meant for
 * the backend: whoever runs or takes over the backend could replay a session it receives.
 */
export const ROUTE_AUTH_COOKIE_PREFIX = 'gh_ra_';
/** Cookie pairs named gh_ra_… in a Cookie header value, each with the `;` before it (RE2). */
const OUR_COOKIES = `(^|;)\\s*${ROUTE_AUTH_COOKIE_PREFIX}[^=;]*=[^;]*`;

/**
 * The request-header operations that remove route auth's cookies from the Cookie header and keep
 * every other cookie as it was: the `gh_ra_…` pairs are cut out, then a `; ` left at the start (when
 * the first cookie was ours) is dropped. Caddy applies a replacement to each Cookie field value.
 */
export function stripRouteAuthCookies(): CaddyRoute[] {
  return [
    {
      handle: [
        {
          handler: 'headers',
          request: {
            replace: {
              Cookie: [
                { search_regexp: OUR_COOKIES, replace: '' },
                { search_regexp: '^;\\s*', replace: '' },
              ],
            },
          },
        },
      ],
    },
    // Only our cookies were sent: no Cookie header at all rather than an empty one.
    { handle: [{ handler: 'headers', request: { delete: ['Cookie'] } }], match: [{ vars: { '{http.request.header.Cookie}': [''] } }] },
  ];
}

/**
 * The forward auth of a route-auth route: forwardAuthHandler, and on a successful verify (2xx) the
 * route-auth cookies are also removed from the request before it goes on to the backend (after the
 * identity headers are copied; verify itself received them), and the access-log line gets the
 * signed-in account (authUserLogHandler). Caddy compiles the 2xx routes in front of the rest of the
 * chain, so the log field wraps the whole request as a handler placed after the forward auth would,
 * while the route's own handler list keeps its order (forward auth, rate limit, ...).
 */
export function routeAuthForwardHandler(domain: string, sidecarUpstream: string): CaddyHandler {
  const h = forwardAuthHandler(domain, sidecarUpstream);
  const [onSuccess] = h.handle_response as { match: unknown; routes: CaddyRoute[] }[];
  onSuccess.routes.push(...stripRouteAuthCookies(), { handle: [authUserLogHandler()] });
  return h;
}

/**
 * Caddyfile `log_append auth_user {http.request.header.X-Auth-User}`, run on a successful forward
 * auth (routeAuthForwardHandler): the access-log line of a request that passed route auth names the account (the header was
 * just set from the verify answer; a visitor's own X-Auth-User was deleted first). Evaluated when
 * the response is done, from the request the forward auth updated.
 */
export function authUserLogHandler(): CaddyHandler {
  return { handler: 'log_append', key: AUTH_USER_LOG_FIELD, value: `{http.request.header.${USER_HEADER}}` };
}

/** The route-auth pages of a protected domain (PAGE_PATHS, exactly) → the sidecar (login pages, stylesheet, branding images, login/logout posts). */
export function routeAuthPagesRoute(domain: string, sidecarUpstream: string): CaddyRoute {
  return {
    handle: [
      {
        handler: 'reverse_proxy',
        headers: { request: { set: { 'X-Route-Domain': [domain] } } },
        upstreams: [{ dial: sidecarUpstream }],
      },
    ],
    match: [{ path: [...PAGE_PATHS] }],
  };
}

/** The route-auth pieces: the pages route, then a route whose handler is the forward auth (the rest follows it). */
export function forwardAuthRoutes(route: { domain: string }, sidecarUpstream: string): CaddyRoute[] {
  return [routeAuthPagesRoute(route.domain, sidecarUpstream), { handle: [routeAuthForwardHandler(route.domain, sidecarUpstream)] }];
}

/** The share-link path (share-links/http.ts), the one route-auth page a basic-auth route has. */
export const SHARE_PAGE_PATH = '/route-auth/share';
/** Caddy variable set when a share-link session let a request of a basic-auth route in. */
export const SHARED_VAR = 'gatehouse_shared';

/**
 * Share links on a route with basic auth and no route auth (protection.ts places these after the
 * rate limit and before the basic auth, which runs only without SHARED_VAR):
 * - /route-auth/share (in Caddy's path matching: any case, decoded, cleaned) → the sidecar, which
 *   opens the link and sets the route's session cookie `gh_ra_<routeId>`;
 * - a request carrying that cookie asks verify (forward auth). 204, a share-link session valid here
 *   (route, path prefix, expiry): the identity headers are copied, SHARED_VAR is set, the gh_ra_…
 *   cookies are removed and the access log names the link; 200, no such session: the visitor's
 *   identity headers and the gh_ra_… cookies are removed and the basic auth decides as before.
 *   Anything else (the sidecar down: 502) goes to the client. A request without the cookie never
 *   reaches the sidecar.
 */
export function shareLinkRoutes(route: { id: number; domain: string }, sidecarUpstream: string): CaddyRoute[] {
  const h = forwardAuthHandler(route.domain, sidecarUpstream);
  const [ok] = h.handle_response as { match: Record<string, unknown>; routes: CaddyRoute[] }[];
  const copy = structuredClone(ok.routes);
  ok.match = { status_code: [204] };
  ok.routes.push({ handle: [{ handler: 'vars', [SHARED_VAR]: '1' }] }, ...stripRouteAuthCookies(), { handle: [authUserLogHandler()] });
  (h.handle_response as unknown[]).push({ match: { status_code: [200] }, routes: [...copy, ...stripRouteAuthCookies()] });
  return [
    {
      handle: [{ handler: 'reverse_proxy', headers: { request: { set: { 'X-Route-Domain': [route.domain] } } }, upstreams: [{ dial: sidecarUpstream }] }],
      match: [{ path: [SHARE_PAGE_PATH] }],
    },
    { handle: [h], match: [{ header_regexp: { Cookie: { pattern: `(^|;)\\s*${ROUTE_AUTH_COOKIE_PREFIX}${route.id}=` } } }] },
  ];
}

/** The matcher of the basic auth that follows shareLinkRoutes: only requests a share link did not let in. */
export const notShared = { not: [{ vars: { [SHARED_VAR]: ['1'] } }] };
