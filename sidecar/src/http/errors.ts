// The one error middleware: every thrown error becomes {ok:false, error, fields?} with its status.
import type Koa from 'koa';
import { z } from 'zod';
import { AppError, type ErrorKind } from '../util/errors.js';
import type { Logger } from '../util/logger.js';
import { databaseFailure } from '../db/failures.js';
import { UNKNOWN_FIELD } from './input.js';

const STATUS: Record<ErrorKind, number> = {
  validation: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  payload_too_large: 413,
  locked: 423,
  rate_limited: 429,
  upstream: 502,
  unavailable: 503,
};

/**
 * zod issues → {field: message}; nested paths are joined with dots, the root is "_". Unknown keys
 * (strict objects, http/input.ts) are named one by one: {"exposure": "unknown field", "a.b": ...}.
 */
export function zodFields(err: z.ZodError, unknownMessage = UNKNOWN_FIELD): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const issue of err.issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const k of issue.keys) {
        const key = [...issue.path.map(String), k].join('.');
        if (!fields[key]) fields[key] = unknownMessage;
      }
      continue;
    }
    const key = issue.path.length ? issue.path.map(String).join('.') : '_';
    if (!fields[key]) fields[key] = issue.message;
  }
  return fields;
}

function emptyAnswerMessage(ctx: Koa.Context, status: number): string {
  if (status === 404) return `No such endpoint: ${ctx.method} ${ctx.path}`;
  if (status === 405) return `Method ${ctx.method} not allowed on ${ctx.path}${ctx.response.get('Allow') ? ` (allowed: ${ctx.response.get('Allow')})` : ''}`;
  if (status === 501) return `Method ${ctx.method} is not supported`;
  return ctx.message || 'Request failed';
}

export function errorMiddleware(log: Logger): Koa.Middleware {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.status >= 400 && (ctx.body === undefined || ctx.body === null)) {
        // Answers nobody gave a body to (unknown path, the router's 405 and 501) get the standard one;
        // headers such as Allow stay.
        const status = ctx.status;
        ctx.body = { ok: false, error: emptyAnswerMessage(ctx, status) };
        ctx.status = status;
      }
    } catch (err: any) {
      let status = 500;
      let body: Record<string, unknown> = { ok: false, error: 'Internal server error' };
      let failure: ReturnType<typeof databaseFailure> = null;
      if (err instanceof AppError) {
        status = STATUS[err.kind];
        body = { ok: false, error: err.message, ...(err.fields ? { fields: err.fields } : {}), ...(err.extra ?? {}) };
      } else if (err instanceof z.ZodError) {
        status = 400;
        body = { ok: false, error: 'Validation failed', fields: zodFields(err) };
      } else if (typeof err?.status === 'number' && err.status >= 400 && err.status < 500) {
        // koa / koa-body client errors (bad JSON, body too large, unsupported charset)
        status = err.status;
        body = { ok: false, error: err.expose ? err.message : 'Bad request' };
      } else if ((failure = databaseFailure(err))) {
        // the disk full or the database away: the machine's state, stated as such (db/failures.ts)
        status = failure.status;
        body = { ok: false, error: failure.error };
        if (failure.retryAfterS) ctx.set('Retry-After', String(failure.retryAfterS));
        log.warn(failure.error, { err: String(err?.original?.message ?? err?.message ?? err), method: ctx.method, path: ctx.path });
      } else {
        log.error('unhandled error', { err: err?.stack ?? String(err), method: ctx.method, path: ctx.path });
      }
      ctx.status = status;
      ctx.body = body;
      if (err instanceof AppError && err.kind === 'unauthorized' && ctx.state.wwwAuthenticate) {
        ctx.set('WWW-Authenticate', ctx.state.wwwAuthenticate);
      }
    }
  };
}
