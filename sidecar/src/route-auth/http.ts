// HTTP side of route auth, mounted as the route-auth feature's early middleware AHEAD of the admin session, body
// parsing and every endpoint:
//
// - GET /route-auth/verify: the forward-auth endpoint Caddy calls on every request of a protected
//   route (headers X-Route-Domain, X-Forwarded-Method, X-Forwarded-Uri, Cookie, X-Forwarded-For).
//   Answers from the in-memory view (no database on a hit): 204 with X-Auth-Email and X-Auth-Method
//   for a valid session; 403 when the route's IP filter refuses the client; otherwise 302 to
//   <scheme>://<host>/route-auth/login?rd=<original URL>. The decision lives in verify.ts (shared
//   with the feature's fast path, the same endpoint on node's http without Koa).
// - Login POSTs are rate limited per client address (GATEHOUSE_RATE_LIMIT_LOGIN per 15 minutes,
//   the same number as the admin /login), with the Ratelimit-* headers; over it: 429 page.
// - /route-auth/login, /route-auth/logout (GET page, POST form), /route-auth/assets/login.css,
//   /route-auth/branding/{logo,bg-image}: the login pages Caddy forwards for the protected domain
//   (Host = the visitor's host; X-Route-Domain = the route's domain when Caddy sets it).
//
// Cookies (host-only, Path=/ unless said): `gh_ra_<routeId>` the session (HttpOnly, SameSite=Lax,
// Secure over HTTPS, Max-Age = session_max_age); `gh_ra_<routeId>_p` the pending first step of a
// two-step login (Path=/route-auth/, 10 min); `gh_ra_csrf` the double-submit CSRF token of the
// login forms (Path=/route-auth/).
import { msg } from '@gatehouse/common/messages/index.js';
import crypto from 'node:crypto';
import type Koa from 'koa';
import { pageFormBody } from '../http/body.js';
import { foreignOrigin } from '../http/origin.js';
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import type { Deps } from '../deps.js';
import { pickLang } from '../web/index.js';
import { LOGIN_CSS, renderPage, type Branding, type PageOptions, type Step } from '../web/route-auth/page.js';
import type { ErrorKey, Lang, NoticeKey } from '../web/route-auth/i18n.js';
import { mimeOfFile } from './branding.js';
import { safeRedirect as sharedSafeRedirect } from '../util/safe-redirect.js';
import { LOGIN_CSS_PATH, PAGE_PATHS, VERIFY_PATH } from '../proxy/fragments/route-auth.js';
import { LoginFlows, type FlowResult, type StepContext } from './flows.js';
import { PENDING_TTL_MS } from './schema.js';
import type { RouteAuthService } from './service.js';
import { hostMatches, hostName, inputFrom, readCookie, underRouteAuth, Verifier, writeAnswer } from './verify.js';
import type { RouteEntry } from './view.js';
import { underPathPrefix } from '../share-links/paths.js';
import type { OidcService } from '../oidc/service.js';
import { bindingCookie, CALLBACK_PATH as OIDC_CALLBACK_PATH, RouteOidc, shownName, START_PATH as OIDC_START_PATH } from './oidc.js';
import { FLOW_MAX_AGE_MS } from '../oidc/service.js';

export { hostMatches, readCookie };

export const CSRF_COOKIE = 'gh_ra_csrf';
const PAGES_COOKIE_PATH = '/route-auth/';
const pendingCookie = (routeId: number) => `gh_ra_${routeId}_p`;
/** The methods each page serves (http/served-paths.ts lists them for the OpenAPI document). */
const PAGE_METHODS: Record<string, string[]> = {
  '/route-auth/login': ['GET', 'HEAD', 'POST'],
  '/route-auth/logout': ['GET', 'HEAD', 'POST'],
  [LOGIN_CSS_PATH]: ['GET', 'HEAD'],
  '/route-auth/branding/logo': ['GET', 'HEAD'],
  '/route-auth/branding/bg-image': ['GET', 'HEAD'],
  // a HEAD (a link prefetcher) gets 200 and neither starts a flow nor spends one (oidcPage)
  [OIDC_START_PATH]: ['GET', 'HEAD'],
  [OIDC_CALLBACK_PATH]: ['GET', 'HEAD'],
};
/** The route-auth pages (besides /route-auth/assets/login.css); http/served-paths.ts lists each, Caddy forwards exactly these (PAGE_PATHS). */
export const KNOWN_PAGES: ReadonlySet<string> = new Set(PAGE_PATHS.filter((p) => p !== LOGIN_CSS_PATH));

/**
 * A Set-Cookie line with Max-Age (and Expires for old clients). HttpOnly and SameSite=Lax always;
 * Secure when the visitor came over HTTPS.
 */
export function cookieLine(name: string, value: string, o: { path: string; maxAgeMs: number; secure: boolean }): string {
  const maxAge = Math.max(0, Math.floor(o.maxAgeMs / 1000));
  const expires = new Date(maxAge === 0 ? 0 : Date.now() + maxAge * 1000).toUTCString();
  return `${name}=${value}; Path=${o.path}; Max-Age=${maxAge}; Expires=${expires}; HttpOnly; SameSite=Lax${o.secure ? '; Secure' : ''}`;
}

/**
 * The post-login target (util/safe-redirect.ts): a path on this host or an absolute http(s) URL of
 * this very host and port. Anything else (another host, scheme-relative //x, /\x, /.//x, encoded
 * slashes, javascript:, credentials, control characters, the route-auth pages themselves in any case)
 * becomes "/".
 */
export function safeRedirect(rd: string | undefined | null, host: string): string {
  return sharedSafeRedirect(rd, { sameHost: host, refusePrefixes: ['/route-auth/'] });
}

export function routeAuthMiddleware(
  deps: Deps,
  svc: RouteAuthService,
  outcomes?: { count(status: number): void },
  /** the OpenID Connect service (oidc/flow.ts oidcService), for method oidc */
  oidc?: () => OidcService,
): Koa.Middleware {
  const view = svc.view;
  const flows = new LoginFlows(deps, svc);
  const routeOidc = oidc ? new RouteOidc(deps, svc, oidc) : null;
  const limiter = new RateLimiterMemory({ points: deps.config.rateLimits.login, duration: 15 * 60, keyPrefix: 'route_auth_login' });
  const parse = pageFormBody();

  // ---------------- verify (hot path) ----------------

  const verifier = new Verifier(view, deps.clock);
  async function verify(ctx: Koa.Context): Promise<void> {
    const a = await verifier.decide(inputFrom(ctx.req, ctx.state.clientIp as string));
    ctx.respond = false;
    outcomes?.count(a.status);
    writeAnswer(ctx.res, a, ctx.method === 'HEAD');
  }

  // ---------------- pages ----------------

  function securityHeaders(ctx: Koa.Context, nonce: string): void {
    ctx.set(
      'Content-Security-Policy',
      `default-src 'none'; style-src 'self' 'nonce-${nonce}'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`,
    );
    ctx.set('X-Frame-Options', 'DENY');
    ctx.set('X-Content-Type-Options', 'nosniff');
    // same-origin: the pages' own form posts carry their Origin (no-referrer would make it "null"), other sites get no Referer
    ctx.set('Referrer-Policy', 'same-origin');
    ctx.set('Cache-Control', 'no-store');
  }

  function csrfToken(ctx: Koa.Context): string {
    let v = ctx.cookies.get(CSRF_COOKIE);
    if (!v || !/^[A-Za-z0-9_-]{32}$/.test(v)) {
      v = crypto.randomBytes(24).toString('base64url');
      setCookie(ctx, CSRF_COOKIE, v, PAGES_COOKIE_PATH, 86_400_000);
    }
    return v;
  }

  function csrfOk(ctx: Koa.Context, body: Record<string, unknown>): boolean {
    const cookie = ctx.cookies.get(CSRF_COOKIE);
    const given = typeof body._csrf === 'string' ? body._csrf : '';
    if (!cookie || !given || cookie.length !== given.length) return false;
    return crypto.timingSafeEqual(Buffer.from(cookie), Buffer.from(given));
  }

  function branding(entry: RouteEntry): Branding {
    const c = entry.cfg;
    return {
      title: c.title,
      description: c.description,
      primary_color: c.primary_color,
      bg_color: c.bg_color,
      logo: c.logo,
      bg_image: c.bg_image,
      version: c.updated_at,
    };
  }

  function render(ctx: Koa.Context, status: number, entry: RouteEntry | null, step: Step, lang: Lang, rd: string, extra: Partial<PageOptions> = {}): void {
    const nonce = crypto.randomBytes(16).toString('base64');
    securityHeaders(ctx, nonce);
    ctx.status = status;
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = renderPage({
      lang,
      domain: hostName(ctx.get('host')) || entry?.route.domain || '',
      branding: entry ? branding(entry) : null,
      step,
      csrf: csrfToken(ctx),
      rd,
      nonce,
      accounts: !!entry && entry.route.user_ids.length > 0,
      ...extra,
    });
  }

  function firstStep(entry: RouteEntry): Step {
    const m = entry.cfg.method;
    return m === 'email_code' ? 'request_code' : m === 'totp' ? 'totp' : m === 'oidc' ? 'oidc' : 'password';
  }

  function codeStep(authMethod: string): Step {
    return authMethod === 'email_password+totp' || authMethod === 'oidc+totp' ? 'code_totp' : 'code_email';
  }

  /** The page options of method oidc's first step: the provider's name on the button. */
  async function providerOptions(entry: RouteEntry): Promise<Partial<PageOptions>> {
    return entry.cfg.method === 'oidc' && entry.cfg.oidc_provider_id ? { provider: (await svc.providerName(entry.cfg.oidc_provider_id)) ?? undefined } : {};
  }

  /** Method oidc: the start (to the provider) and the callback (the session, a second factor, or a page saying why not). */
  async function oidcPage(ctx: Koa.Context, entry: RouteEntry, lang: Lang): Promise<void> {
    if (!routeOidc) return notFound(ctx);
    const host = ctx.get('host');
    const binding = bindingCookie(entry.route.id);
    ctx.set('Cache-Control', 'no-store');
    // the callback's URL holds the code: it goes nowhere in a Referer
    ctx.set('Referrer-Policy', 'no-referrer');
    if (ctx.method === 'HEAD') {
      ctx.status = 200;
      ctx.type = 'text/html; charset=utf-8';
      return;
    }
    if (ctx.path === OIDC_START_PATH) {
      if (await rateLimited(ctx)) return render(ctx, 429, entry, 'message', lang, '/', { error: 'rate_limited' });
      const rd = safeRedirect(typeof ctx.query.rd === 'string' ? ctx.query.rd : undefined, host);
      // the callback on this very host (its cookies), as the visitor reached it
      const redirectUri = `${ctx.cookies.secure ? 'https' : 'http'}://${host}${OIDC_CALLBACK_PATH}`;
      const r = await routeOidc.start(entry, redirectUri, rd);
      if (r.kind === 'error') return render(ctx, r.status, entry, 'message', lang, rd, { error: r.error, retryLink: r.status !== 404 });
      setCookie(ctx, binding, r.binding, PAGES_COOKIE_PATH, FLOW_MAX_AGE_MS);
      ctx.redirect(r.url);
      return;
    }
    const ip = (ctx.state.clientIp as string) || '';
    const r = await routeOidc.callback(entry, new URLSearchParams(ctx.querystring), ctx.cookies.get(binding), ip);
    clearCookie(ctx, binding, PAGES_COOKIE_PATH);
    if (r.kind === 'error')
      return render(ctx, r.status, entry, 'message', lang, r.rd, { error: r.error, seen: r.seen, providerError: r.detail, retryLink: true });
    const c: StepContext = { entry, ip, userAgent: ctx.get('user-agent'), lang, pendingToken: ctx.cookies.get(pendingCookie(entry.route.id)) };
    const result = await flows.oidc(c, { subject: r.who.subject, email: r.who.email, groups: r.who.groups, shown: shownName(r.who) });
    switch (result.kind) {
      case 'session':
        setCookie(ctx, entry.cookieName, result.token, '/', result.maxAgeMs);
        clearCookie(ctx, pendingCookie(entry.route.id), PAGES_COOKIE_PATH);
        ctx.redirect(r.rd);
        return;
      case 'pending':
        setCookie(ctx, pendingCookie(entry.route.id), result.token, PAGES_COOKIE_PATH, PENDING_TTL_MS);
        ctx.redirect(loginUrl(r.rd, `&notice=${result.notice}`));
        return;
      case 'error':
        return render(ctx, ERROR_STATUS[result.error] ?? 400, entry, 'message', lang, r.rd, { error: result.error, retryLink: true });
      case 'notice':
        ctx.redirect(loginUrl(r.rd, `&notice=${result.notice}`));
        return;
    }
  }

  function setCookie(ctx: Koa.Context, name: string, value: string, path: string, maxAgeMs: number): void {
    ctx.append('Set-Cookie', cookieLine(name, value, { path, maxAgeMs, secure: ctx.cookies.secure }));
  }

  function clearCookie(ctx: Koa.Context, name: string, path: string): void {
    setCookie(ctx, name, '', path, 0);
  }

  function loginUrl(rd: string, extra = ''): string {
    return `/route-auth/login?rd=${encodeURIComponent(rd)}${extra}`;
  }

  async function rateLimited(ctx: Koa.Context): Promise<boolean> {
    const key = (ctx.state.clientIp as string) || 'unknown';
    const limit = deps.config.rateLimits.login;
    try {
      const r = await limiter.consume(key, 1);
      ctx.set('Ratelimit-Limit', String(limit));
      ctx.set('Ratelimit-Remaining', String(r.remainingPoints));
      ctx.set('Ratelimit-Reset', String(Math.ceil(r.msBeforeNext / 1000)));
      return false;
    } catch (rej) {
      if (!(rej instanceof RateLimiterRes)) throw rej;
      const reset = String(Math.ceil(rej.msBeforeNext / 1000));
      ctx.set('Ratelimit-Limit', String(limit));
      ctx.set('Ratelimit-Remaining', '0');
      ctx.set('Ratelimit-Reset', reset);
      ctx.set('Retry-After', reset);
      return true;
    }
  }

  const ERROR_STATUS: Record<string, number> = {
    invalid: 401,
    code_invalid: 401,
    locked: 423,
    expired: 400,
    totp_not_ready: 400,
    mail_failed: 502,
    no_email: 400,
  };

  async function serveBranding(ctx: Koa.Context, entry: RouteEntry, kind: 'logo' | 'bg_image'): Promise<void> {
    const name = entry.cfg[kind];
    const file = svc.branding.file(name);
    const mime = name ? mimeOfFile(name) : null;
    if (!file || !mime) {
      ctx.status = 404;
      ctx.body = 'Not found';
      return;
    }
    const fs = await import('node:fs');
    try {
      const data = await fs.promises.readFile(file);
      ctx.set('X-Content-Type-Options', 'nosniff');
      ctx.set('Cache-Control', 'public, max-age=86400');
      ctx.set('Content-Security-Policy', "default-src 'none'");
      ctx.type = mime;
      ctx.body = data;
    } catch {
      ctx.status = 404;
      ctx.body = 'Not found';
    }
  }

  async function pages(ctx: Koa.Context): Promise<void> {
    const p = ctx.path;
    const isGet = ctx.method === 'GET' || ctx.method === 'HEAD';
    // a method the page does not serve: 405 with the methods it does (before anything is looked up)
    const allow = PAGE_METHODS[p];
    if (allow && !allow.includes(ctx.method)) return methodNotAllowed(ctx, allow.join(', '));
    if (isGet && p === LOGIN_CSS_PATH) {
      ctx.set('Cache-Control', 'public, max-age=86400');
      ctx.set('X-Content-Type-Options', 'nosniff');
      ctx.type = 'text/css; charset=utf-8';
      ctx.body = LOGIN_CSS;
      return;
    }
    if (!KNOWN_PAGES.has(p)) {
      ctx.status = 404;
      ctx.type = 'text/plain';
      ctx.body = 'Not found';
      return;
    }
    const lang = pickLang(ctx.get('accept-language'));
    const routeDomain = ctx.get('x-route-domain').toLowerCase();
    const host = ctx.get('host');
    const entry = routeDomain ? await view.domain(routeDomain) : await view.host(hostName(host));
    // a basic-auth route without route auth has share links only (AuthView's share-only entry), no login pages
    if (!entry || entry.shareOnly) return render(ctx, 404, null, 'message', lang, '/', { error: 'not_configured' });
    if (entry.ip && !entry.ip.matcher.allows(entry.ip.mode, ctx.state.clientIp as string))
      return render(ctx, 403, entry, 'message', lang, '/', { error: 'forbidden' });

    if (isGet && p === '/route-auth/branding/logo') return serveBranding(ctx, entry, 'logo');
    if (isGet && p === '/route-auth/branding/bg-image') return serveBranding(ctx, entry, 'bg_image');

    if (p === OIDC_START_PATH || p === OIDC_CALLBACK_PATH) return oidcPage(ctx, entry, lang);
    const rdParam = typeof ctx.query.rd === 'string' ? ctx.query.rd : undefined;
    if (p === '/route-auth/logout') {
      if (isGet) return render(ctx, 200, entry, 'logout', lang, '/');
      if (ctx.method !== 'POST') return methodNotAllowed(ctx);
      await parse(ctx, async () => undefined);
      const body = (ctx.request.body ?? {}) as Record<string, unknown>;
      if (foreignOrigin(ctx) !== undefined || !csrfOk(ctx, body)) return render(ctx, 403, entry, 'logout', lang, '/', { error: 'csrf' });
      const ended = await svc.destroySession(entry.route.id, ctx.cookies.get(entry.cookieName));
      clearCookie(ctx, entry.cookieName, '/');
      if (ended)
        await deps.activity.record({
          source: 'route_auth',
          event_type: 'route_auth_logout',
          msg: msg('route_auth.signed_out', { domain: entry.route.domain }),
          details: { route_id: entry.route.id },
          ip: (ctx.state.clientIp as string) || null,
        });
      ctx.set('Cache-Control', 'no-store');
      ctx.redirect('/route-auth/login?signed_out=1');
      ctx.status = 303;
      return;
    }

    // /route-auth/login
    if (isGet) {
      const rd = safeRedirect(rdParam, host);
      const active = await svc.activeSession(entry.route.id, ctx.cookies.get(entry.cookieName));
      // a share link's session outside its path prefix: the login form (redirecting would loop)
      if (active && (!active.pathPrefix || underPathPrefix(new URL(rd, 'http://x').pathname, active.pathPrefix))) {
        ctx.set('Cache-Control', 'no-store');
        ctx.redirect(rd);
        return;
      }
      const pending = await svc.pendingSession(entry.route.id, ctx.cookies.get(pendingCookie(entry.route.id)));
      const n = typeof ctx.query.notice === 'string' ? ctx.query.notice : '';
      const notice: NoticeKey | 'signed_out' | undefined = ctx.query.signed_out
        ? 'signed_out'
        : n === 'code_sent' || n === 'code_wait' || n === 'enter_totp' || n === 'oidc_totp'
          ? n
          : undefined;
      const step = pending ? codeStep(pending.authMethod) : firstStep(entry);
      return render(ctx, 200, entry, step, lang, rd, { notice: pending || notice === 'signed_out' ? notice : undefined, ...(await providerOptions(entry)) });
    }
    if (ctx.method !== 'POST') return methodNotAllowed(ctx);

    await parse(ctx, async () => undefined);
    const body = (ctx.request.body ?? {}) as Record<string, unknown>;
    const str = (k: string) => (typeof body[k] === 'string' ? (body[k] as string).slice(0, 1024) : '');
    const rd = safeRedirect(str('rd') || rdParam, host);
    const pendingName = pendingCookie(entry.route.id);
    const pendingToken = ctx.cookies.get(pendingName);
    // a failed first step keeps the name typed (never the password or a code)
    const account = (str('email') || str('account')).slice(0, 320) || undefined;
    const reshow = async (status: number, error: ErrorKey) => {
      const pending = await svc.pendingSession(entry.route.id, pendingToken);
      return render(ctx, status, entry, pending ? codeStep(pending.authMethod) : firstStep(entry), lang, rd, {
        error,
        ...(pending ? {} : { account, ...(await providerOptions(entry)) }),
      });
    };
    if (await rateLimited(ctx)) return reshow(429, 'rate_limited');
    // a form sent from another site's page (Origin, or Referer; http/origin.ts) is refused like a missing CSRF token
    if (foreignOrigin(ctx) !== undefined || !csrfOk(ctx, body)) return reshow(403, 'csrf');

    const c: StepContext = { entry, ip: (ctx.state.clientIp as string) || '', userAgent: ctx.get('user-agent'), lang, pendingToken };
    let result: FlowResult;
    switch (str('step')) {
      case 'password':
        result = await flows.password(c, str('email'), typeof body.password === 'string' ? body.password : '');
        break;
      case 'send_code':
        result = await flows.requestCode(c, str('email'));
        break;
      case 'resend':
        result = await flows.resend(c);
        break;
      case 'code':
        result = await flows.code(c, str('code'));
        break;
      case 'totp':
        result = await flows.totp(c, str('code'), str('account'));
        break;
      case 'restart':
        if (pendingToken) await svc.destroySession(entry.route.id, pendingToken);
        clearCookie(ctx, pendingName, PAGES_COOKIE_PATH);
        ctx.redirect(loginUrl(rd));
        ctx.status = 303;
        return;
      default:
        return reshow(400, 'invalid');
    }
    ctx.set('Cache-Control', 'no-store');
    switch (result.kind) {
      case 'session':
        setCookie(ctx, entry.cookieName, result.token, '/', result.maxAgeMs);
        clearCookie(ctx, pendingName, PAGES_COOKIE_PATH);
        ctx.redirect(rd);
        ctx.status = 303;
        return;
      case 'pending':
        setCookie(ctx, pendingName, result.token, PAGES_COOKIE_PATH, PENDING_TTL_MS);
        ctx.redirect(loginUrl(rd, `&notice=${result.notice}`));
        ctx.status = 303;
        return;
      case 'notice':
        ctx.redirect(loginUrl(rd, `&notice=${result.notice}`));
        ctx.status = 303;
        return;
      case 'error':
        if (result.clearPending) {
          clearCookie(ctx, pendingName, PAGES_COOKIE_PATH);
          return render(ctx, ERROR_STATUS[result.error] ?? 400, entry, firstStep(entry), lang, rd, {
            error: result.error,
            account,
            ...(await providerOptions(entry)),
          });
        }
        return reshow(ERROR_STATUS[result.error] ?? 400, result.error);
    }
  }

  function notFound(ctx: Koa.Context): void {
    ctx.status = 404;
    ctx.type = 'text/plain';
    ctx.set('Cache-Control', 'no-store');
    ctx.body = 'Not found';
  }

  function methodNotAllowed(ctx: Koa.Context, allow = 'GET, HEAD, POST'): void {
    ctx.status = 405;
    ctx.set('Allow', allow);
    ctx.body = 'Method not allowed';
  }

  return async (ctx, next) => {
    const p = ctx.path;
    if (p === VERIFY_PATH) return verify(ctx);
    // any other spelling of a /route-auth/ path (case, encoding, dot segments, doubled slashes) is refused:
    // Caddy forwards those without forward auth, and they must not reach the admin app
    if (!p.startsWith('/route-auth/')) return underRouteAuth(p) ? notFound(ctx) : next();
    return pages(ctx);
  };
}
