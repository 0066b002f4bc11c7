// The Koa application: global middleware, then every declared endpoint with its own chain
// (rate limit → authentication/authorization → body → CSRF → validation → handler).
import { randomBytes } from 'node:crypto';
import Koa from 'koa';
import Router from '@koa/router';
import session from 'koa-session';
import type { HttpDeps } from '../deps.js';
import { errorMiddleware, zodFields } from './errors.js';
import { apiBody, multipartBody } from './body.js';
import { clientIp, isSecure } from './client-ip.js';
import { authenticate, csrfCheck, sameOriginCheck } from './auth.js';
import { RateLimits } from './ratelimit.js';
import { fullPath, idParam, type Endpoint, type RateLimitName } from './registry.js';
import { validation } from '../util/errors.js';
import { assertStrictInput, CSRF_FIELD, UNKNOWN_FIELD, UNKNOWN_PARAMETER } from './input.js';
import { featureDisabled, type FeatureGate, type LicensedFeature } from '../license/features.js';

export const SESSION_COOKIE = 'gatehouse_sid';

export interface AppOptions {
  /** Mounted before everything else (the forward-auth verify endpoint lives here). */
  early?: Koa.Middleware[];
  /** Mounted after the endpoints (static assets, admin UI pages). */
  late?: Koa.Middleware[];
}

/** The rate-limit scope a path belongs to (SPEC "Limits"), for requests no endpoint answers. */
export function limitScopeOfPath(p: string): RateLimitName | undefined {
  if (p === '/login') return 'login';
  if (p === '/api/v1/client/peer/hostname') return 'hostname';
  if (p.startsWith('/api/v1/client/')) return 'client';
  if (p.startsWith('/api/v1/gateway/') || p === '/api/v1/gateway') return undefined;
  if (p.startsWith('/api/v1/') || p === '/api/v1') return 'admin';
  return undefined;
}

/** Default rate limit per auth kind, unless an endpoint names its own. */
function rateLimitFor(e: Endpoint): RateLimitName | undefined {
  if (e.rateLimit) return e.rateLimit;
  if (e.auth === 'admin') return 'admin';
  if (e.auth === 'client') return 'client';
  return undefined;
}

function paramsValidator(path: string): Koa.Middleware | undefined {
  const names = [...path.matchAll(/:([A-Za-z_]+)/g)].map((m) => m[1]);
  if (!names.length) return undefined;
  return async (ctx, next) => {
    const out: Record<string, string | number> = {};
    const fields: Record<string, string> = {};
    for (const n of names) {
      const raw = ctx.params[n];
      if (n === 'id' || n.endsWith('Id') || n.endsWith('_id')) {
        const r = idParam.safeParse(raw);
        if (!r.success) fields[n] = 'must be a positive integer';
        else out[n] = r.data;
      } else {
        out[n] = raw;
      }
    }
    if (Object.keys(fields).length) throw validation('Invalid path parameter', fields);
    ctx.state.params = out;
    await next();
  };
}

/** The licence gate of an endpoint: 403 {ok:false, error, feature} when the feature is off; nothing after it runs. */
function featureCheck(gate: FeatureGate, feature: LicensedFeature): Koa.Middleware {
  return async (_ctx, next) => {
    if (!gate.isEnabled(feature)) throw featureDisabled(feature);
    await next();
  };
}

/**
 * Body and query by the endpoint's schemas, which are strict (http/input.ts): every unknown field and
 * query parameter is a 400 naming it. A write without a body schema takes no fields, a write without
 * a query schema no query parameters. The form field _csrf (SPEC) is known to every write.
 */
function validate(e: Endpoint): Koa.Middleware {
  const write = e.method !== 'GET';
  return async (ctx, next) => {
    const fields: Record<string, string> = {};
    let body: unknown;
    let query: unknown;
    const raw = withoutCsrf(ctx.request.body ?? {});
    if (e.body) {
      const r = e.body.safeParse(raw);
      if (r.success) body = r.data;
      else Object.assign(fields, zodFields(r.error));
    } else if (write && !e.ownBody) {
      if (Array.isArray(raw)) fields._ = 'this endpoint takes no request body';
      else if (raw && typeof raw === 'object') for (const k of Object.keys(raw)) fields[k] = UNKNOWN_FIELD;
    }
    const q: Record<string, unknown> = { ...ctx.query };
    if (e.queryToken) delete q.token;
    if (e.query) {
      const r = e.query.safeParse(q);
      if (r.success) query = r.data;
      else Object.assign(fields, zodFields(r.error, UNKNOWN_PARAMETER));
    } else if (write) {
      for (const k of Object.keys(q)) fields[k] = UNKNOWN_PARAMETER;
    }
    if (Object.keys(fields).length) throw validation('Validation failed', fields);
    ctx.state.input = { body, query, params: ctx.state.params ?? {} };
    await next();
  };
}

/** The body without the CSRF form field (csrfCheck and the public forms read it from ctx.request.body). */
function withoutCsrf(b: unknown): unknown {
  if (!b || typeof b !== 'object' || Array.isArray(b) || !(CSRF_FIELD in b)) return b;
  const { [CSRF_FIELD]: _drop, ...rest } = b as Record<string, unknown>;
  return rest;
}

function run(e: Endpoint): Koa.Middleware {
  return async (ctx) => {
    const result = await e.handler(ctx.state.input, ctx);
    if (result !== undefined) {
      ctx.status = e.status ?? 200;
      ctx.body = { ok: true, ...result };
    } else if (ctx.body === undefined && ctx.status === 404) {
      ctx.status = e.status ?? 200;
      ctx.body = { ok: true };
    }
  };
}

export function createApp(deps: HttpDeps, endpoints: Endpoint[], opts: AppOptions = {}): Koa {
  const app = new Koa();
  app.proxy = false;
  app.keys = [deps.crypto.derive('session-cookie').toString('base64url')];
  app.silent = true;
  const { config } = deps;

  const limits = new RateLimits({
    login: { points: config.rateLimits.login, duration: 15 * 60 },
    admin: { points: config.rateLimits.admin, duration: 15 * 60 },
    client: { points: config.rateLimits.client, duration: 15 * 60 },
    hostname: { points: config.rateLimits.hostname, duration: 60 },
  });

  app.use(errorMiddleware(deps.log));
  app.use(async (ctx, next) => {
    ctx.state.clientIp = clientIp(ctx, config.trustProxy);
    ctx.state.secure = isSecure(ctx, config.trustProxy);
    ctx.cookies.secure = ctx.state.secure;
    // /api/* is an alias of /api/v1/*
    if (ctx.path.startsWith('/api/') && !ctx.path.startsWith('/api/v1/')) ctx.path = `/api/v1${ctx.path.slice(4)}`;
    await next();
  });
  for (const mw of opts.early ?? []) app.use(mw);

  app.use(
    session(
      {
        key: SESSION_COOKIE,
        maxAge: config.sessionMaxAge,
        httpOnly: true,
        sameSite: 'lax',
        signed: true,
        rolling: false,
        renew: true,
        store: deps.sessions,
        // Only create a session when something is stored (login), never for anonymous requests.
        genid: () => randomBytes(32).toString('base64url'),
      } as any,
      app,
    ),
  );

  const router = new Router();
  const body = apiBody();
  const seen = new Set<string>();
  for (const e of endpoints) {
    const p = fullPath(e);
    const key = `${e.method} ${p}`;
    if (seen.has(key)) throw new Error(`endpoint declared twice: ${key}`);
    seen.add(key);
    if (e.body) assertStrictInput(key, 'body', e.body);
    if (e.query) assertStrictInput(key, 'query', e.query);
    const chain: Koa.Middleware[] = [];
    const rl = rateLimitFor(e);
    if (rl) chain.push(limits.middleware(rl));
    if (e.sameOrigin) chain.push(sameOriginCheck);
    chain.push(authenticate(deps, e));
    if (e.feature) chain.push(featureCheck(deps.features, e.feature));
    const pv = paramsValidator(e.path);
    if (pv) chain.push(pv);
    if (e.method !== 'GET') {
      if (e.multipart) {
        chain.push(multipartBody(e.multipart.field, e.multipart.maxBytes));
      } else {
        chain.push(body);
      }
    }
    if (e.auth === 'admin') chain.push(csrfCheck);
    chain.push(validate(e));
    chain.push(run(e));
    const m = e.method.toLowerCase() as 'get' | 'post' | 'put' | 'patch' | 'delete';
    (router as any)[m](p, ...chain);
  }
  app.use(router.routes());
  // No endpoint took the request (unknown path: 404; known path, other method: 405/501): it still
  // counts against its scope's limit and carries the Ratelimit-* headers (SPEC: always set).
  // GET /login (the sign-in page, served below) shows the login scope's headers without counting.
  app.use(async (ctx, next) => {
    const scope = limitScopeOfPath(ctx.path);
    if (scope === 'login' && (ctx.method === 'GET' || ctx.method === 'HEAD')) {
      await limits.peek('login', ctx);
      return next();
    }
    if (scope) return limits.middleware(scope)(ctx, next);
    return next();
  });
  app.use(router.allowedMethods({ throw: false }));
  for (const mw of opts.late ?? []) app.use(mw);
  return app;
}
