// The Koa application: global middleware, then every declared endpoint with its own chain
// (rate limit → authentication/authorization → body → CSRF → validation → handler).
import { randomBytes } from 'node:crypto';
import Koa from 'koa';
import type { z } from 'zod';
import Router from '@koa/router';
import session from 'koa-session';
import type { HttpDeps } from './platform.js';
import { errorMiddleware, zodFields } from './errors.js';
import { apiBody, multipartBody } from './body.js';
import { clientIp, isSecure } from './client-ip.js';
import { authenticate, csrfCheck, sameOriginCheck } from './auth.js';
import { RateLimits } from './ratelimit.js';
import { fullPath, idParam, LINK_RATE_LIMIT, type Endpoint, type RateLimitName } from './registry.js';
import { SERVED_OUTSIDE_REGISTRY } from './served-paths.js';
import { AppError, unprocessable, validation, type FieldMessages } from '../util/errors.js';
import { assertStrictInput, CSRF_FIELD, UNKNOWN_FIELD_MSG, UNKNOWN_PARAMETER_MSG } from './input.js';
import { issueMessage } from './messages.js';
import { msg } from '@gatehouse/common/messages/index.js';
import { featureDisabled, type FeatureGate, type LicensedFeature } from './feature-gate.js';

export const SESSION_COOKIE = 'gatehouse_sid';

export interface AppOptions {
  /** Mounted before everything else (the forward-auth verify endpoint lives here). */
  early?: Koa.Middleware[];
  /** Mounted after the endpoints (static assets, admin UI pages). */
  late?: Koa.Middleware[];
}

/** The rate-limit scope a path belongs to, for requests no endpoint answers. */
export function limitScopeOfPath(p: string): RateLimitName | undefined {
  if (p === '/login' || p.startsWith('/auth/oidc/')) return 'login';
  if (p === '/api/v1/client/peer/hostname') return 'hostname';
  if (p.startsWith('/c/')) return 'link';
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

function paramsValidator(path: string, schemas: z.ZodObject | undefined, literal: Map<string, Set<string>>): Koa.Middleware | undefined {
  const names = [...path.matchAll(/:([A-Za-z_]+)/g)].map((m) => m[1]);
  if (!names.length) return undefined;
  return async (ctx, next) => {
    const out: Record<string, string | number> = {};
    const fields: FieldMessages = {};
    for (const n of names) {
      const raw = ctx.params[n];
      if (n === 'id' || n.endsWith('Id') || n.endsWith('_id')) {
        const r = idParam.safeParse(raw);
        if (!r.success) fields[n] = msg('field.positive_integer');
        else out[n] = r.data;
      } else if (schemas?.shape[n]) {
        const r = (schemas.shape[n] as z.ZodType).safeParse(raw);
        if (!r.success) fields[n] = r.error.issues[0] ? issueMessage(r.error.issues[0]) : msg('field.invalid');
        else out[n] = r.data as string;
      } else {
        out[n] = raw;
      }
    }
    if (Object.keys(fields).length) {
      // /users/unlock is its own path (POST): another method there is a 405, not a bad /users/:id
      const methods = literal.get(ctx.path);
      if (methods) {
        ctx.set('Allow', [...methods].sort().join(', '));
        throw new AppError(
          'method_not_allowed',
          msg('request.method_not_allowed', { method: ctx.method, path: ctx.path, allowed: [...methods].sort().join(', ') }),
        );
      }
      throw validation(msg('request.invalid_path_parameter'), fields);
    }
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
 * a query schema no query parameters. The form field _csrf  is known to every write.
 */
function validate(e: Endpoint): Koa.Middleware {
  const write = e.method !== 'GET';
  return async (ctx, next) => {
    // no prototype: an unknown field named __proto__ or constructor is named like any other
    const fields: FieldMessages = Object.create(null);
    let body: unknown;
    let query: unknown;
    if (write && !e.ownBody && hasBody(ctx) && !ctx.is(e.multipart ? ['multipart', 'json', 'urlencoded'] : ['json', 'urlencoded'])) {
      throw new AppError(
        'unsupported_media_type',
        msg('request.unsupported_media_type', { content_type: ctx.get('Content-Type'), form: e.auth === 'public', multipart: !!e.multipart }),
      );
    }
    const csrf = (ctx.request.body as Record<string, unknown> | undefined)?.[CSRF_FIELD];
    if (csrf !== undefined && typeof csrf !== 'string') fields[CSRF_FIELD] = msg('field.csrf_text');
    const raw = withoutCsrf(ctx.request.body ?? {});
    // every issue a rule the document cannot state (http/fields.ts UNPROCESSABLE): 422, else 400
    let onlyUnprocessable = true;
    if (e.body) {
      const r = e.body.safeParse(raw);
      if (r.success) body = r.data;
      else {
        Object.assign(fields, zodFields(r.error));
        if (!r.error.issues.every(unprocessableIssue)) onlyUnprocessable = false;
      }
    } else if (write && !e.ownBody) {
      onlyUnprocessable = false;
      if (Array.isArray(raw)) fields._ = msg('request.field.no_body');
      else if (raw && typeof raw === 'object') for (const k of Object.keys(raw)) fields[k] = UNKNOWN_FIELD_MSG;
    }
    const q: Record<string, unknown> = { ...ctx.query };
    if (e.queryToken) delete q.token;
    if (e.query) {
      const r = e.query.safeParse(q);
      if (r.success) query = r.data;
      else {
        Object.assign(fields, zodFields(r.error, UNKNOWN_PARAMETER_MSG));
        if (!r.error.issues.every(unprocessableIssue)) onlyUnprocessable = false;
      }
    } else if (write) {
      if (Object.keys(q).length) onlyUnprocessable = false;
      for (const k of Object.keys(q)) fields[k] = UNKNOWN_PARAMETER_MSG;
    }
    if (e.headers) {
      const given: Record<string, string> = {};
      for (const name of Object.keys(e.headers.shape)) if (ctx.get(name) !== '') given[name] = ctx.get(name);
      const r = e.headers.safeParse(given);
      if (!r.success) {
        Object.assign(fields, zodFields(r.error));
        onlyUnprocessable = false;
      }
    }
    if (fields[CSRF_FIELD]) onlyUnprocessable = false;
    if (Object.keys(fields).length && e.storedChecks && raw && typeof raw === 'object' && !Array.isArray(raw)) {
      // the stored-state checks the service would make next, so that this one answer names them too
      const stored = await e.storedChecks(raw as Record<string, unknown>, ctx);
      for (const [k, m] of Object.entries(stored)) if (!Object.hasOwn(fields, k)) fields[k] = m;
    }
    if (Object.keys(fields).length)
      throw onlyUnprocessable ? unprocessable(msg('request.not_processable'), fields) : validation(msg('request.validation_failed'), fields);
    ctx.state.input = { body, query, params: ctx.state.params ?? {} };
    await next();
  };
}

/** Whether the request carries a body (a length above 0, or chunked). */
function hasBody(ctx: Koa.Context): boolean {
  return Number(ctx.get('Content-Length') || 0) > 0 || ctx.get('Transfer-Encoding') !== '';
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

  const limits = new RateLimits(
    {
      login: { points: config.rateLimits.login, duration: 15 * 60 },
      admin: { points: config.rateLimits.admin, duration: 15 * 60 },
      client: { points: config.rateLimits.client, duration: 15 * 60 },
      hostname: { points: config.rateLimits.hostname, duration: 60 },
      link: { points: LINK_RATE_LIMIT, duration: 15 * 60 },
    },
    config.cluster.enabled && deps.db.dialect === 'postgres' ? { sequelize: deps.db.sequelize } : undefined,
  );

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
      },
      app,
    ),
  );

  const router = new Router();
  const body = apiBody();
  const seen = new Set<string>();
  // paths without parameters and their methods (HEAD with GET), for the 405 of a method they lack
  const literal = new Map<string, Set<string>>();
  for (const e of endpoints) {
    if (fullPath(e).includes(':')) continue;
    const m = literal.get(fullPath(e)) ?? new Set<string>();
    m.add(e.method);
    if (e.method === 'GET') m.add('HEAD');
    literal.set(fullPath(e), m);
  }
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
    // a session-only endpoint with a parameter refuses API tokens in authenticate: a literal path of
    // another endpoint (/passkeys/options for /passkeys/:id) must still be its 405 first
    if (e.sessionOnly && p.includes(':')) chain.push(literalMethodFirst(literal));
    chain.push(authenticate(deps, e));
    if (e.feature) chain.push(featureCheck(deps.features, e.feature));
    const pv = paramsValidator(e.path, e.params, literal);
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
    // what router.get/post/... do (one layer for the method; a GET layer answers HEAD too), typed
    router.register(p, [e.method.toLowerCase()], chain);
  }
  app.use(router.routes());
  // No endpoint took the request (unknown path: 404; known path, other method: 405/501): it still
  // counts against its scope's limit and carries the Ratelimit-* headers.
  // GET /login (the sign-in page, served below) shows the login scope's headers without counting;
  // the steps of a sign-in through a provider (/auth/oidc/…, oidc/flow.ts) count as sign-ins.
  app.use(async (ctx, next) => {
    const scope = limitScopeOfPath(ctx.path);
    if (scope === 'login' && ctx.path === '/login' && (ctx.method === 'GET' || ctx.method === 'HEAD')) {
      await limits.peek('login', ctx);
      return next();
    }
    if (scope) return limits.middleware(scope)(ctx, next);
    return next();
  });
  app.use(methodNotAllowed(router));
  for (const mw of opts.late ?? []) app.use(mw);
  return app;
}

/** Paths served outside the registry (http/served-paths.ts) as matchers, with their methods. */
const OUTSIDE = SERVED_OUTSIDE_REGISTRY.map((s) => ({
  re: new RegExp(`^${s.path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{[^}]+\\?\}/g, '[^/]+')}$`),
  method: s.method,
}));

/**
 * A path that exists with other methods (in the registry, or served outside it: the sign-in page,
 * the admin app, the API reference) answers a method it does not serve with 405 and an Allow header
 * listing the methods it does; TRACE and other methods no path serves included (not 501). OPTIONS
 * answers 204 with the same Allow. Runs after everything else had its chance.
 */
/**
 * An issue of a rule the document cannot state (http/fields.ts UNPROCESSABLE): a custom issue with
 * the flag, or a union none of whose members took the value where one member failed only such rules
 * (the value has a shape the document allows: a mirror target "host:port" whose host is no host).
 */
function unprocessableIssue(i: z.core.$ZodIssue): boolean {
  if (i.code === 'custom') return (i.params as { unprocessable?: boolean } | undefined)?.unprocessable === true;
  if (i.code === 'invalid_union') return i.errors.some((member) => member.length > 0 && member.every(unprocessableIssue));
  return false;
}

/** A request whose path is a literal endpoint path without this method: 405 with Allow, before anything else. */
function literalMethodFirst(literal: Map<string, Set<string>>): Koa.Middleware {
  return async (ctx, next) => {
    const methods = literal.get(ctx.path);
    if (!methods) return next();
    ctx.set('Allow', [...methods].sort().join(', '));
    throw new AppError(
      'method_not_allowed',
      msg('request.method_not_allowed', { method: ctx.method, path: ctx.path, allowed: [...methods].sort().join(', ') }),
    );
  };
}

function methodNotAllowed(router: Router): Koa.Middleware {
  return async (ctx, next) => {
    await next();
    if (ctx.status !== 404 || (ctx.body !== undefined && ctx.body !== null)) return;
    const methods = new Set<string>();
    for (const layer of router.match(ctx.path, ctx.method).path) for (const m of layer.methods) methods.add(m);
    for (const o of OUTSIDE) if (o.re.test(ctx.path)) methods.add(o.method);
    if (methods.has('GET')) methods.add('HEAD');
    if (!methods.size || methods.has(ctx.method)) return;
    const allow = [...methods].sort().join(', ');
    ctx.set('Allow', allow);
    ctx.status = ctx.method === 'OPTIONS' ? 204 : 405;
  };
}
