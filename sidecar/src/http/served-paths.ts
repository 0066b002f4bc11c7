// Every path the sidecar's port serves without going through the endpoint registry (http/registry.ts):
// fast paths answered on node's http before Koa, early middleware (route-auth pages), and the
// server-rendered admin pages. Listed here, in one place, so that the OpenAPI document covers them
// (http/openapi.ts adds every entry with `openapi: true`) and a test (sidecar/test/served-paths.test.ts)
// checks that each is served, that the route-auth pages and fast paths are all listed, and that any
// entry kept out of the document says why.
export interface ServedPath {
  method: 'GET' | 'HEAD' | 'POST';
  path: string;
  /** who answers it, ahead of (or after) the registry's router */
  servedBy: 'fast path' | 'early middleware' | 'late middleware';
  summary: string;
  tag: string;
  /** what the answer is */
  produces: 'text/html' | 'text/css' | 'text/javascript' | 'image/*' | 'application/json' | 'empty';
  /** statuses the path answers with, and what each means */
  responses: Record<string, string>;
  /** the media type of its error answers (default: the standard JSON error body) */
  errorType?: 'text/html' | 'text/plain' | 'application/json';
  /** the media types of its redirects' short bodies (default: text/html or text/plain, by Accept) */
  redirectType?: string[];
  /** false only with a reason: the path is deliberately outside the OpenAPI document */
  openapi: true | { outside: string };
}

export const SERVED_OUTSIDE_REGISTRY: readonly ServedPath[] = [
  {
    method: 'GET',
    path: '/internal/access-window/closed',
    servedBy: 'fast path',
    tag: 'routes',
    produces: 'text/html',
    errorType: 'text/plain',
    summary:
      'Internal: the answer of a route outside its access window (access-windows/closed-page.ts), for Caddy only (loopback + X-Gatehouse-Secret, X-Gatehouse-Route-Id); HTML in German or English by Accept-Language, JSON for JSON clients',
    responses: { '403': 'the route is closed: the page names when it opens', '404': 'not from Caddy (indistinguishable from an unknown path)' },
    openapi: {
      outside:
        "Caddy's own call while a route is closed (loopback and the report secret only): not part of the API; every other caller and method gets the plain 404 of an unknown path",
    },
  },
  {
    method: 'GET',
    path: '/route-auth/verify',
    servedBy: 'fast path',
    tag: 'route-auth',
    produces: 'empty',
    errorType: 'text/plain',
    redirectType: ['text/plain'],
    summary:
      "Caddy's forward auth for route-auth routes (route-auth/verify.ts): headers X-Route-Domain, X-Forwarded-Uri, X-Forwarded-Method and the visitor's cookies",
    responses: {
      '204': 'signed in: X-Auth-Email, X-Auth-Method, X-Auth-User set',
      '302': "not signed in: Location is the route's login page",
      '403': "the route's IP filter refuses the visitor",
    },
    openapi: true,
  },
  {
    method: 'GET',
    path: '/route-auth/login',
    servedBy: 'early middleware',
    tag: 'route-auth',
    produces: 'text/html',
    errorType: 'text/html',
    summary: "A route's login page (the step the visitor is at), in German or English by Accept-Language; `rd` is where to go after it",
    responses: { '200': 'the page', '302': 'already signed in: to rd', '403': 'IP filter', '404': 'no route-auth route for this host' },
    openapi: true,
  },
  {
    method: 'POST',
    path: '/route-auth/login',
    servedBy: 'early middleware',
    tag: 'route-auth',
    produces: 'text/html',
    errorType: 'text/html',
    summary: 'The login form posts (credentials, then the second factor when the route has one); double-submit CSRF cookie gh_ra_csrf',
    responses: {
      '303': 'signed in, or on to the next step',
      '400': 'bad input',
      '401': 'wrong credentials',
      '403': 'CSRF or IP filter',
      '404': 'no route-auth route for this host',
      '423': 'account locked',
      '429': 'rate limited',
    },
    openapi: true,
  },
  {
    method: 'GET',
    path: '/route-auth/logout',
    servedBy: 'early middleware',
    tag: 'route-auth',
    produces: 'text/html',
    errorType: 'text/html',
    summary: 'The sign-out page of a route',
    responses: { '200': 'the page', '404': 'no route-auth route for this host' },
    openapi: true,
  },
  {
    method: 'POST',
    path: '/route-auth/logout',
    servedBy: 'early middleware',
    tag: 'route-auth',
    produces: 'text/html',
    errorType: 'text/html',
    summary: "Ends this device's route session",
    responses: { '303': 'signed out: to the login page', '403': 'CSRF', '404': 'no route-auth route for this host' },
    openapi: true,
  },
  {
    method: 'GET',
    path: '/route-auth/assets/login.css',
    servedBy: 'early middleware',
    tag: 'route-auth',
    produces: 'text/css',
    errorType: 'text/html',
    summary: "The login pages' stylesheet",
    responses: { '200': 'the stylesheet' },
    openapi: true,
  },
  {
    method: 'GET',
    path: '/route-auth/branding/logo',
    servedBy: 'early middleware',
    tag: 'route-auth',
    produces: 'image/*',
    errorType: 'text/html',
    summary: "The route's uploaded logo",
    responses: { '200': 'the image', '404': 'none uploaded' },
    openapi: true,
  },
  {
    method: 'GET',
    path: '/route-auth/branding/bg-image',
    servedBy: 'early middleware',
    tag: 'route-auth',
    produces: 'image/*',
    errorType: 'text/html',
    summary: "The route's uploaded background image",
    responses: { '200': 'the image', '404': 'none uploaded' },
    openapi: true,
  },
  {
    method: 'GET',
    path: '/route-auth/share',
    servedBy: 'early middleware',
    tag: 'route-auth',
    produces: 'text/html',
    errorType: 'text/html',
    summary:
      "A share link opened on its route's domain (`t`: the token): one use counted, a session of this route only (under the link's path_prefix), then 303 to the prefix so the token leaves the URL. A visitor with a full session of the route keeps it",
    responses: {
      '303': 'the session cookie is set: to the path prefix (or /)',
      '403': 'IP filter',
      '404': 'no such link for this route, or no route-auth route for this host: a page that says so',
      '410': 'the link expired, was used max_uses times or was revoked: a page that says which',
    },
    openapi: true,
  },
  {
    method: 'GET',
    path: '/route-auth/oidc/start',
    servedBy: 'early middleware',
    tag: 'route-auth',
    produces: 'text/html',
    errorType: 'text/html',
    summary:
      "Method oidc (route-auth/oidc.ts): the sign-in through the route's OpenID Connect provider starts (PKCE S256, state, nonce; the flow bound to this browser by the cookie gh_ra_<routeId>_o), and the browser goes to the provider; `rd` is where to go after it (same host only)",
    responses: {
      '200': 'HEAD only: the page is there (a HEAD neither starts a flow nor spends one)',
      '302': "to the provider's authorization endpoint",
      '403': 'IP filter',
      '404': 'the route does not sign in through a provider, or no route-auth route for this host: a page that says so',
      '429': 'rate limited',
      '502': 'the provider cannot be reached: a page that says so',
      '503': 'the provider is disabled: a page that says so',
    },
    openapi: true,
  },
  {
    method: 'GET',
    path: '/route-auth/oidc/callback',
    servedBy: 'early middleware',
    tag: 'route-auth',
    produces: 'text/html',
    errorType: 'text/html',
    summary:
      "Method oidc: where the provider sends the visitor back (the redirect URI to register: <scheme>://<route domain>/route-auth/oidc/callback). The flow of this state is used once; the code exchanged; the visitor let in by the route's allowed_emails (verified addresses) or allowed_groups",
    responses: {
      '200': 'HEAD only: the page is there (a HEAD neither starts a flow nor spends one)',
      '302': 'signed in: to rd (or to the second-factor step of the login page)',
      '400': 'the provider answered an error, or the flow expired: a page that says so',
      '403': 'not on the allow-lists (a page that says why, with the address and groups the provider sent), or IP filter',
      '404': 'no route-auth route for this host',
      '409': 'the route no longer signs in through this provider',
      '422': 'a state this browser did not start or already used (tampered, replayed, another browser): a page that says so',
      '502': 'the provider cannot be reached',
    },
    openapi: true,
  },
  {
    method: 'GET',
    path: '/login',
    servedBy: 'late middleware',
    tag: 'pages',
    produces: 'text/html',
    summary:
      'The admin sign-in page (works without JavaScript; posts to POST /login). `next`: the same-origin path to return to after signing in; `error=invalid|locked` shows why the last attempt failed (with how long a lock lasts)',
    responses: { '200': 'the page', '302': 'already signed in: to `next` (or /password while a generated password is unchanged)' },
    openapi: true,
  },
  {
    method: 'GET',
    path: '/auth/oidc/{providerId}/start',
    servedBy: 'late middleware',
    tag: 'pages',
    produces: 'text/html',
    errorType: 'text/html',
    summary:
      'Starts an admin sign-in through an OpenID Connect provider (the sign-in page\'s "Sign in with <name>" button): PKCE (S256), state and nonce are kept in this browser\'s server-side session, and the browser goes to the provider. `next`: the same-origin path to return to afterwards (anything else is /). Counts toward the sign-in rate limit',
    responses: {
      '302': "to the provider's authorization endpoint (already signed in: to `next`)",
      '404': 'no such provider, or it is disabled: a page that says so',
      '502': 'the provider cannot be reached (discovery failed): a page that says so',
    },
    openapi: true,
  },
  {
    method: 'GET',
    path: '/auth/oidc/callback',
    servedBy: 'late middleware',
    tag: 'pages',
    produces: 'text/html',
    errorType: 'text/html',
    summary:
      'Where a provider sends the browser back (register <public admin URL>/auth/oidc/callback at the provider). The state must be one this browser started and not used yet; the code is exchanged and the ID token checked (signature, issuer, audience, nonce, expiry); the groups and e-mail address are mapped to a role. Then the second-factor policy applies as after a password. Counts toward the sign-in rate limit',
    responses: {
      '302': 'signed in: to `next` (or /password, /login/second-factor, /login/enrol first)',
      '400': 'a refused or replayed code, an expired sign-in: a page that says which',
      '422': 'an unknown, tampered or used state (one this browser did not start, or used already): a page that says so',
      '403': 'nobody matched the role mapping, no account and no just-in-time creation, an unverified e-mail address, a locked account: a page that says why',
      '502': 'the provider cannot be reached: a page that says so',
    },
    openapi: true,
  },
  {
    method: 'GET',
    path: '/login/second-factor',
    servedBy: 'late middleware',
    tag: 'pages',
    produces: 'text/html',
    summary:
      'The second step of a sign-in whose password was right, for an account with a TOTP or a passkey (works without JavaScript; posts to POST /login/second-factor): a code of the authenticator app or a recovery code, and "Use a passkey" when the account has one. `error=invalid` says the last code was wrong',
    responses: { '200': 'the page', '302': 'no password step within the last 10 minutes: to /login?error=expired; already signed in: to `next`' },
    openapi: true,
  },
  {
    method: 'GET',
    path: '/login/webauthn.js',
    servedBy: 'late middleware',
    tag: 'pages',
    produces: 'text/javascript',
    summary: "The sign-in pages' WebAuthn helper: @simplewebauthn/browser's UMD bundle, loaded with the passkey button (web/passkey.ts)",
    responses: { '200': 'the script' },
    openapi: true,
  },
  {
    method: 'GET',
    path: '/login/passkey.js',
    servedBy: 'late middleware',
    tag: 'pages',
    produces: 'text/javascript',
    summary:
      "The passkey button's script on the sign-in pages: options from POST /login/passkey/options (or /login/second-factor/passkey/options), the browser's WebAuthn dialog, the answer to POST /login/passkey (or /login/second-factor/passkey), then on to `next`",
    responses: { '200': 'the script' },
    openapi: true,
  },
  {
    method: 'GET',
    path: '/login/passkey-enrol.js',
    servedBy: 'late middleware',
    tag: 'pages',
    produces: 'text/javascript',
    summary:
      "The enrolment page's passkey script: options from POST /login/enrol/passkey/options, the browser's WebAuthn dialog, the answer with its name to POST /login/enrol/passkey, then the recovery codes shown once and the link on to `next`",
    responses: { '200': 'the script' },
    openapi: true,
  },
  {
    method: 'GET',
    path: '/login/enrol',
    servedBy: 'late middleware',
    tag: 'pages',
    produces: 'text/html',
    summary:
      'The TOTP enrolment a sign-in goes through when every account needs a second factor and this one has none (works without JavaScript; posts to POST /login/enrol): the QR code and the key, and a field for the first code; with the admin origin configured, a passkey instead (POST /login/enrol/passkey)',
    responses: { '200': 'the page', '302': 'no password step within the last 10 minutes: to /login?error=expired; already signed in: to `next`' },
    openapi: true,
  },
  {
    method: 'GET',
    path: '/password',
    servedBy: 'late middleware',
    tag: 'pages',
    produces: 'text/html',
    summary:
      'The password change page (works without JavaScript; posts to POST /password). A user with a generated password (must_change_password) is sent here after signing in; `next` is where to go afterwards',
    responses: { '200': 'the page', '302': 'not signed in: to /login?next=/password…' },
    openapi: true,
  },
  {
    method: 'GET',
    path: '/api-docs',
    servedBy: 'late middleware',
    tag: 'pages',
    produces: 'text/html',
    summary:
      'The browsable API reference (Swagger UI, served locally) of GET /api/v1/openapi.json, for signed-in users, with a "create token" shortcut (/tokens?new=1)',
    responses: { '200': 'the page', '302': 'not signed in: to /login?next=/api-docs (or to /password while a generated password is unchanged)' },
    openapi: true,
  },
  {
    method: 'GET',
    path: '/api-docs/assets/{file}',
    servedBy: 'late middleware',
    tag: 'pages',
    produces: 'text/javascript',
    summary:
      "The API reference's script and stylesheets (swagger-ui-dist and the page's own), under content-hashed names, cached for a year (immutable), gzip when accepted",
    responses: { '200': 'the file', '304': 'not modified (ETag)', '404': 'no such file' },
    openapi: { outside: 'static files whose names carry a content hash; the page GET /api-docs links them' },
  },
  {
    method: 'GET',
    path: '/',
    servedBy: 'late middleware',
    tag: 'pages',
    produces: 'text/html',
    summary:
      'The admin app (sidecar/ui) for a signed-in admin; every other unclaimed GET path (/peers, /routes/12, ...) is the same page (history fallback). CSP script-src self, never cached',
    responses: {
      '200': 'the page',
      '302': 'not signed in: to /login?next=<the path>',
      '404': 'a client that does not accept text/html: the JSON 404 of an unknown path',
      '503': 'the app is not built (npm run build)',
    },
    openapi: true,
  },
  {
    method: 'GET',
    path: '/assets/{file}',
    servedBy: 'late middleware',
    tag: 'pages',
    produces: 'text/css',
    summary: "The admin app's hashed assets (JavaScript, CSS, by their extension), cached for a year (immutable)",
    responses: { '200': 'the file', '404': 'no such asset' },
    openapi: true,
  },
];

/**
 * Paths the registry declares that a fast path also answers, ahead of Koa, with the same logic (so
 * they are documented once, by their registry entry): GET /api/v1/gateway/config/check
 * (gateways/endpoints.ts checkFastPath).
 */
export const FAST_PATHS_OF_REGISTERED_ENDPOINTS: readonly string[] = ['GET /api/v1/gateway/config/check'];

/** The OpenAPI operation of a path served outside the registry. */
export function servedPathOperation(s: ServedPath): Record<string, unknown> {
  const content = s.produces === 'empty' ? undefined : { [s.produces]: {} };
  const errorType = s.errorType ?? 'application/json';
  const errorContent = { [errorType]: errorType === 'application/json' ? { schema: { $ref: '#/components/schemas/Error' } } : { schema: { type: 'string' } } };
  const redirectContent = Object.fromEntries((s.redirectType ?? ['text/html', 'text/plain']).map((m) => [m, { schema: { type: 'string' } }]));
  const bodyOf = (status: string) =>
    status.startsWith('2')
      ? content
        ? { content }
        : {}
      : status.startsWith('3')
        ? status === '304'
          ? {}
          : { content: redirectContent }
        : { content: errorContent };
  return {
    summary: s.summary,
    tags: [s.tag],
    operationId: `${s.method.toLowerCase()}${s.path.replace(/[^A-Za-z0-9]+(.)?/g, (_m, c: string | undefined) => (c ? c.toUpperCase() : '')) || 'Root'}`,
    'x-served-by': s.servedBy,
    security: [],
    responses: Object.fromEntries(Object.entries(s.responses).map(([status, description]) => [status, { description, ...bodyOf(status) }])),
  };
}
