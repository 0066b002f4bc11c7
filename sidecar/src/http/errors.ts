// The one error middleware: every thrown error becomes {ok:false, error, code, params?, fields?,
// field_codes?} with its status: `error` is the English text of the message whose code (and
// parameters) follow, `fields` the English text of each field's message and `field_codes` its code
// and parameters (a client words them in its reader's language: @gatehouse/common/messages).
import type Koa from 'koa';
import { z } from 'zod';
import { msg, refOf, type MessageRef, type Msg } from '@gatehouse/common/messages/index.js';
import { AppError, type ErrorKind, type FieldMessages } from '../util/errors.js';
import { issueMessage } from './messages.js';
import type { Logger } from '../util/logger.js';
import { databaseFailure } from '../db/failures.js';
import { UNKNOWN_FIELD_MSG } from './input.js';

/**
 * Every kind of domain error: the status it answers with, what it means and what its body carries
 * besides {ok: false, error}. docs/reference/errors.md is generated from this (npm run docs).
 */
/** What a thrown value may carry besides being an AppError or a ZodError (Koa's HTTP errors, Sequelize's database errors). */
type Thrown = { status?: number; expose?: boolean; message?: string; stack?: string; original?: { message?: string } } | null | undefined;

export const ERROR_KINDS: Record<ErrorKind, { status: number; meaning: string }> = {
  validation: {
    status: 400,
    meaning:
      'the request breaks the OpenAPI document (a field, parameter or header its schema refuses, an unknown field); `fields` maps each bad field (a dotted path for nested ones) to a message, and nothing was written',
  },
  method_not_allowed: { status: 405, meaning: 'the path does not serve this method; `Allow` lists the ones it does' },
  unsupported_media_type: { status: 415, meaning: 'the body is neither JSON nor a form (nor multipart on an upload)' },
  unprocessable: {
    status: 422,
    meaning:
      'valid by the OpenAPI document, but not carried out for a reason no schema can state: a combination of fields or with the stored record, a referenced row that does not exist, a wrong current password, nothing to update, a key or file whose content does not verify; `fields` names why, and nothing was written',
  },
  unauthorized: {
    status: 401,
    meaning:
      'no valid credential for this endpoint (signed out, an unknown, expired or revoked token, a token of another kind, a token bound to another machine on the desktop client API)',
  },
  forbidden: {
    status: 403,
    meaning:
      'the credential is valid but may not do this: the token scope or session role, a missing CSRF token, a request from another site, a feature the licence does not grant (`feature`), a licence limit (`limit`, `max`)',
  },
  not_found: { status: 404, meaning: 'no such resource (or one the caller may not know of)' },
  conflict: {
    status: 409,
    meaning:
      'the request clashes with the current state: a name, domain or port already taken (`field`, `route_id`), a resource still in use, a state that does not allow it (`reason`)',
  },
  payload_too_large: { status: 413, meaning: 'the body or upload is larger than the endpoint takes' },
  locked: {
    status: 423,
    meaning:
      'the account is locked after failed sign-ins (`locked_until`, `retry_after`), or an RDP route is in a maintenance window (`reason`, `maintenance`)',
  },
  rate_limited: { status: 429, meaning: 'over the rate limit of the scope; `Retry-After` says when to try again' },
  upstream: {
    status: 502,
    meaning:
      'a part the server drives refused or failed: Caddy rejected the configuration (`proxy_error`), the mail server, a gateway companion; nothing was saved',
  },
  unavailable: { status: 503, meaning: "a part the server needs cannot be reached at the moment (Caddy's admin API)" },
};

/**
 * zod issues → {field: message}; nested paths are joined with dots, the root is "_". Unknown keys
 * (strict objects, http/input.ts) are named one by one: {"exposure": "unknown field", "a.b": ...}.
 */
export function zodFields(err: z.ZodError, unknownMessage: Msg = UNKNOWN_FIELD_MSG): FieldMessages {
  // no prototype: fields named __proto__, constructor or toString are keys like any other
  const fields: FieldMessages = Object.create(null);
  for (const issue of err.issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const k of issue.keys) {
        const key = [...issue.path.map(String), k].join('.');
        if (!Object.hasOwn(fields, key)) fields[key] = unknownMessage;
      }
      continue;
    }
    const key = issue.path.length ? issue.path.map(String).join('.') : '_';
    // own keys only: a field named constructor or toString is named like any other
    if (!Object.hasOwn(fields, key)) fields[key] = issueMessage(issue);
  }
  return fields;
}

/** The body of an error: its message (text, code, parameters) and its fields' messages. */
export function errorBody(m: Msg | (MessageRef & { text: string }), fields?: FieldMessages): Record<string, unknown> {
  const body: Record<string, unknown> = { ok: false, error: m.text, ...refOf(m) };
  if (fields) {
    const names = Object.keys(fields);
    body.fields = Object.fromEntries(names.map((k) => [k, fields[k].text]));
    body.field_codes = Object.fromEntries(names.map((k) => [k, refOf(fields[k])]));
  }
  return body;
}

function emptyAnswerMessage(ctx: Koa.Context, status: number): Msg {
  if (status === 404) return msg('request.no_such_endpoint', { method: ctx.method, path: ctx.path });
  if (status === 405) return msg('request.method_not_allowed', { method: ctx.method, path: ctx.path, allowed: ctx.response.get('Allow') });
  if (status === 501) return msg('request.method_not_supported', { method: ctx.method });
  return ctx.message ? msg('request.body_refused', { reason: ctx.message }) : msg('request.failed');
}

export function errorMiddleware(log: Logger): Koa.Middleware {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.status >= 400 && (ctx.body === undefined || ctx.body === null)) {
        // Answers nobody gave a body to (unknown path, the router's 405 and 501) get the standard one;
        // headers such as Allow stay.
        const status = ctx.status;
        ctx.body = errorBody(emptyAnswerMessage(ctx, status));
        ctx.status = status;
      }
    } catch (caught) {
      const err = caught as Thrown;
      let status = 500;
      let body: Record<string, unknown> = errorBody(msg('request.internal_error'));
      let failure: ReturnType<typeof databaseFailure> = null;
      if (err instanceof AppError) {
        status = ERROR_KINDS[err.kind].status;
        body = { ...errorBody(err.msg, err.fieldMessages), ...(err.extra ?? {}) };
      } else if (err instanceof z.ZodError) {
        status = 400;
        body = errorBody(msg('request.validation_failed'), zodFields(err));
      } else if (typeof err?.status === 'number' && err.status >= 400 && err.status < 500) {
        // koa / koa-body client errors (bad JSON, body too large, unsupported charset)
        status = err.status;
        body = errorBody(err.expose ? msg('request.body_refused', { reason: String(err.message) }) : msg('request.bad_request'));
      } else if ((failure = databaseFailure(err))) {
        // the disk full or the database away: the machine's state, stated as such (db/failures.ts)
        status = failure.status;
        body = errorBody(failure.message);
        if (failure.retryAfterS) ctx.set('Retry-After', String(failure.retryAfterS));
        log.warn(failure.message.text, { err: String(err?.original?.message ?? err?.message ?? err), method: ctx.method, path: ctx.path });
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
