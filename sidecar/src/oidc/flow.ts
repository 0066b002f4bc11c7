// The admin sign-in through an OpenID Connect provider, served outside the registry (pages and
// redirects for browsers; the callback takes whatever parameters the provider adds), listed in
// http/served-paths.ts and rate limited as the sign-in (http/app.ts limitScopeOfPath):
// - GET /auth/oidc/:providerId/start?next=: the flow (PKCE verifier, state, nonce, the checked
//   `next`) is kept in this browser's server-side session, the verifier sealed with a key derived
//   from the master key (a session row read from the database gives no usable verifier), and the
//   browser goes to the provider;
// - GET /auth/oidc/callback: the flow of this state is taken out of the session (single use: a
//   replayed or tampered answer finds none), the code exchanged and the account found
//   (oidc/service.ts); then the second-factor policy applies as after a password (auth/pending.ts:
//   the code page, or the enrolment), else the session opens and the browser goes on to `next`.
// A refusal is a page that says why (oidc/pages.ts).
import type Koa from 'koa';
import type { AppContext } from '../app-context.js';
import { AppError } from '../util/errors.js';
import { safeNext, nextParam } from '../auth/next.js';
import { ENROL_PATH, SECOND_FACTOR_PATH, type PendingSignIn } from '../auth/pending.js';
import { openSession } from '../auth/endpoints.js';
import { PAGE_CSP, pickLang, sessionUser } from '../web/index.js';
import { FLOW_MAX_AGE_MS, OidcService, SignInRefused, type OidcFlow } from './service.js';
import { renderRefusedPage } from './pages.js';

export const START_PATH = /^\/auth\/oidc\/(\d{1,10})\/start$/;
export const CALLBACK_PATH = '/auth/oidc/callback';
/** Sign-ins started in one browser and not yet finished (several tabs), the oldest dropped beyond. */
const MAX_FLOWS = 5;

const services = new WeakMap<AppContext, OidcService>();
/** The one OidcService of a container (its endpoints, these pages and its discovery cache share it). */
export function oidcService(ctx: AppContext): OidcService {
  let s = services.get(ctx);
  if (!s) services.set(ctx, (s = new OidcService(ctx)));
  return s;
}

/** The redirect URL to register at a provider: <public admin URL>/auth/oidc/callback (GATEHOUSE_ADMIN_DOMAIN, else the address this request came to). */
export function callbackUrl(ctx: AppContext, c: Koa.Context): string {
  const origin = ctx.config.adminDomain ? `https://${ctx.config.adminDomain}` : `${c.state.secure ? 'https' : 'http'}://${c.host}`;
  return `${origin}/auth/oidc/callback`;
}

function pageHeaders(ctx: Koa.Context): void {
  ctx.set('Content-Security-Policy', PAGE_CSP);
  ctx.set('X-Content-Type-Options', 'nosniff');
  // the callback's URL holds the code: it goes nowhere in a Referer
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.set('Cache-Control', 'no-store');
}

function refusedPage(ctx: Koa.Context, refusal: SignInRefused, next: unknown): void {
  ctx.status = refusal.status;
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = renderRefusedPage({ lang: pickLang(ctx.get('Accept-Language')), refusal, next });
}

export function oidcPagesMiddleware(deps: AppContext): Koa.Middleware {
  const svc = () => oidcService(deps);

  const start = async (ctx: Koa.Context, providerId: number) => {
    const next = safeNext(ctx.query.next);
    const user = await sessionUser(deps, ctx);
    if (user) return ctx.redirect(next);
    const row = await svc().enabledRow(providerId);
    if (!row) return refusedPage(ctx, new SignInRefused('provider_gone', 404), next);
    const { url, flow } = await svc().begin(row, callbackUrl(deps, ctx), next);
    const now = deps.clock();
    const kept = ((ctx.session!.oidcFlows ?? []) as OidcFlow[]).filter((f) => now - f.at <= FLOW_MAX_AGE_MS).slice(-(MAX_FLOWS - 1));
    ctx.session!.oidcFlows = [...kept, { ...flow, verifier: svc().adminFlowSeal.seal(flow.verifier) }];
    ctx.redirect(url);
  };

  const callback = async (ctx: Koa.Context) => {
    const query = new URLSearchParams(ctx.querystring);
    const state = query.get('state');
    const flows = (ctx.session?.oidcFlows ?? []) as OidcFlow[];
    const kept = state ? flows.find((f) => f.state === state) : undefined;
    // single use: the flow leaves the session before anything else happens
    if (flows.length) ctx.session!.oidcFlows = flows.filter((f) => f !== kept);
    const verifier = kept ? svc().adminFlowSeal.open(kept.verifier) : null;
    // a state this browser did not start (tampered, replayed, or another browser's), or a verifier
    // that does not open: a well-formed request refused by a rule the OpenAPI document cannot state,
    // 422 (the page says why)
    if (!kept || verifier === null) return refusedPage(ctx, new SignInRefused('state_invalid', 422), undefined);
    const flow: OidcFlow = { ...kept, verifier };
    const ip = ctx.state.clientIp as string | null;
    const { user: row } = await svc().finish(flow, query, ip);
    try {
      await deps.users.refuseLocked(row.username);
    } catch (err) {
      if (err instanceof AppError && err.kind === 'locked') throw new SignInRefused('locked', 403);
      throw err;
    }
    // session fixation: a fresh session id for the signed-in (or pending) session
    await ctx.session!.regenerate();
    const step = await deps.secondFactor.pendingStep(row.id);
    if (step) {
      ctx.session!.pendingSignIn = { userId: row.id, step, at: deps.clock() } satisfies PendingSignIn;
      return ctx.redirect(`${step === 'totp' ? SECOND_FACTOR_PATH : ENROL_PATH}${nextParam(flow.next, '?')}`);
    }
    openSession(ctx, await deps.users.completeSignIn(row, ip), flow.next, false, deps.clock());
  };

  return async (ctx, next) => {
    if (ctx.method !== 'GET') return next();
    const m = START_PATH.exec(ctx.path);
    if (!m && ctx.path !== CALLBACK_PATH) return next();
    pageHeaders(ctx);
    try {
      if (m) await start(ctx, Number(m[1]));
      else await callback(ctx);
    } catch (err) {
      if (!(err instanceof SignInRefused)) throw err;
      refusedPage(ctx, err, undefined);
    }
  };
}
