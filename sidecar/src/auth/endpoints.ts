// POST /login, POST /logout, GET /api/v1/csrf, GET /api/v1/session.
// Browser forms (Accept: text/html or form posts without Accept: application/json) get redirects;
// API clients asking for JSON get JSON. See README "Admin login".
import type Koa from 'koa';
import type { AppContext } from '../app-context.js';
import { defineEndpoint, type Endpoint } from '../http/registry.js';
import { AppError } from '../util/errors.js';
import { csrfMatches, newCsrfToken, type Principal } from '../http/auth.js';
import { loginBody } from './schema.js';

export function wantsJson(ctx: Koa.Context): boolean {
  const accept = ctx.get('Accept');
  if (accept.includes('application/json')) return true;
  if (accept.includes('text/html')) return false;
  return ctx.is('application/json') === 'application/json';
}

/** Only same-site relative paths are accepted as a post-login target. */
export function safeNext(next: string | undefined): string {
  if (!next || !next.startsWith('/') || next.startsWith('//') || next.startsWith('/\\')) return '/';
  return next;
}

export function authEndpoints(deps: AppContext): Endpoint[] {
  return [
    defineEndpoint({
      method: 'POST',
      path: '/login',
      auth: 'public',
      rateLimit: 'login',
      summary: 'Admin login (form fields or JSON: username, password). Sets the session cookie.',
      tags: ['auth'],
      body: loginBody,
      handler: async ({ body }, ctx) => {
        const json = wantsJson(ctx);
        try {
          const user = await deps.users.authenticate(body.username, body.password, ctx.state.clientIp);
          // Session fixation: a fresh session id on every login.
          if (ctx.session && !ctx.session.isNew) await ctx.session.regenerate();
          const csrf = newCsrfToken();
          ctx.session!.userId = user.id;
          ctx.session!.csrf = csrf;
          ctx.session!.loginAt = deps.clock();
          if (json) return { user, csrfToken: csrf };
          ctx.redirect(safeNext(body.next));
          return undefined;
        } catch (err) {
          if (json || !(err instanceof AppError)) throw err;
          const reason = err.kind === 'locked' ? 'locked' : 'invalid';
          ctx.redirect(`/login?error=${reason}`);
          return undefined;
        }
      },
    }),
    defineEndpoint({
      method: 'POST',
      path: '/logout',
      auth: 'public',
      summary: 'Ends the admin session (this device only). A signed-in session must send its CSRF token (X-CSRF-Token or form field _csrf); without a session there is nothing to end.',
      tags: ['auth'],
      handler: async (_i, ctx) => {
        const userId = ctx.session?.userId;
        if (typeof userId === 'number') {
          // A cross-site form must not be able to sign the admin out.
          if (!csrfMatches(ctx)) throw new AppError('forbidden', 'CSRF token missing or invalid');
          await deps.activity.record({ source: 'auth', event_type: 'logout', message: 'Signed out', user_id: userId, ip: ctx.state.clientIp });
        }
        ctx.session = null;
        if (wantsJson(ctx)) return {};
        ctx.redirect('/login');
        return undefined;
      },
    }),
    defineEndpoint({
      method: 'GET',
      path: '/csrf',
      scope: 'any',
      summary: 'The CSRF token of the current session (null for API tokens, which need none).',
      tags: ['auth'],
      handler: async (_i, ctx) => {
        const p = ctx.state.principal as Principal;
        if (p.kind !== 'session') return { csrfToken: null };
        if (typeof ctx.session!.csrf !== 'string') ctx.session!.csrf = newCsrfToken();
        return { csrfToken: ctx.session!.csrf };
      },
    }),
    defineEndpoint({
      method: 'GET',
      path: '/session',
      scope: 'any',
      summary: 'Who is calling: the session user or the token, with its scopes.',
      tags: ['auth'],
      handler: async (_i, ctx) => {
        const p = ctx.state.principal as Principal;
        if (p.kind === 'session') return { kind: 'session', user: await deps.users.get(p.userId), csrfToken: ctx.session!.csrf ?? null };
        if (p.kind === 'token') return { kind: 'token', token: { id: p.tokenId, scopes: p.scopes, user_id: p.userId, peer_id: p.peerId } };
        return { kind: p.kind };
      },
    }),
  ];
}
