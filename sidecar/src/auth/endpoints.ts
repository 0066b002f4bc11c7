// POST /login, POST /logout, POST /password (the form of GET /password), GET /api/v1/csrf, GET /api/v1/session.
// Browser forms (Accept: text/html or form posts without Accept: application/json) get redirects;
// API clients asking for JSON get JSON. See docs/guides/authentication.md.
import { msg } from '@gatehouse/common/messages/index.js';
import { issueMessage } from '../http/messages.js';
import type Koa from 'koa';
import type { AppContext } from '../app-context.js';
import { defineEndpoint, type Endpoint } from '../http/registry.js';
import { AppError } from '../util/errors.js';
import { csrfMatches, newCsrfToken, sessionId, type Principal } from '../http/auth.js';
import {
  csrfResponse,
  signedInResponse,
  enrolBody,
  enrolPasskeyBody,
  enrolPasskeyResponse,
  enrolResponse,
  loginBody,
  loginResponse,
  passwordFormBody,
  passkeyOptionsResponse,
  passkeySignInBody,
  emptyBody,
  secondFactorBody,
  sessionResponse,
} from './schema.js';
import { ENROL_PASSKEY_PATH, ENROL_PATH, PASSKEY_PATH, SECOND_FACTOR_PASSKEY_PATH, SECOND_FACTOR_PATH, pendingSignIn, type PendingSignIn } from './pending.js';
import type { PasskeyChallenge } from './second-factor.js';
import type { PublicUser } from '../users/service.js';
import { PAGE_CSP } from '../web/index.js';
import { renderRecoveryCodesPage } from '../web/second-factor.js';
import { okOnly } from '../http/responses.js';
import { LAST_USER_COOKIE, LAST_USER_MAX_AGE_MS, LOCKED_COOKIE, nextParam, safeNext } from './next.js';
import { passwordSchema } from '../users/schema.js';
import { passwordSignInAllowed } from '../oidc/service.js';

export function wantsJson(ctx: Koa.Context): boolean {
  const accept = ctx.get('Accept');
  if (accept.includes('application/json')) return true;
  if (accept.includes('text/html')) return false;
  return ctx.is('application/json') === 'application/json';
}

/** The session's CSRF token, made on first need (GET /csrf and GET /session answer the same one). */
function sessionCsrf(ctx: Koa.Context): string {
  if (typeof ctx.session!.csrf !== 'string') ctx.session!.csrf = newCsrfToken();
  return ctx.session!.csrf;
}

/** Where a browser goes once signed in: `next`, through /password first while a generated password is unchanged. */
export function afterSignIn(user: PublicUser, next: unknown): string {
  const target = safeNext(next);
  return user.must_change_password && !/^\/password(\?|$)/.test(target) ? `/password${nextParam(target, '?')}` : target;
}

/** The session of a completed sign-in (a password's, or a provider's: oidc/flow.ts): its user and a fresh CSRF token; JSON clients get them, browsers go on. */
export function openSession(ctx: Koa.Context, user: PublicUser, next: unknown, json: boolean, now: number) {
  const csrf = newCsrfToken();
  delete ctx.session!.pendingSignIn;
  ctx.session!.userId = user.id;
  ctx.session!.csrf = csrf;
  ctx.session!.loginAt = now;
  if (json) return { user, csrfToken: csrf, must_change_password: user.must_change_password };
  ctx.redirect(afterSignIn(user, next));
  return undefined;
}

/** A second step without a recent password step: 401 for JSON clients, the sign-in page saying so for browsers. */
function expired(ctx: Koa.Context, next: unknown, json: boolean): undefined {
  if (json) throw new AppError('unauthorized', msg('second_factor.sign_in_pending'));
  ctx.session = null;
  ctx.redirect(`/login?error=expired${nextParam(next)}`);
  return undefined;
}

export function authEndpoints(deps: AppContext): Endpoint[] {
  /** A refused sign-in step: JSON clients get the error; browsers go back to /login saying why (and how long a lock lasts). */
  const refusedSignIn = (ctx: Koa.Context, err: unknown, username: string, next: unknown, json: boolean): undefined => {
    if (json || !(err instanceof AppError)) throw err;
    const reason = err.kind === 'locked' ? 'locked' : 'invalid';
    const until = Date.parse(String(err.extra?.locked_until ?? ''));
    if (reason === 'locked' && until > deps.clock()) {
      ctx.cookies.set(LOCKED_COOKIE, String(until), {
        signed: true,
        httpOnly: true,
        sameSite: 'lax',
        path: '/login',
        maxAge: until - deps.clock(),
        overwrite: true,
      });
    }
    // the form shows the name again (never the password): a typo in the password costs no retyping of the name
    ctx.cookies.set(LAST_USER_COOKIE, encodeURIComponent(username.slice(0, 200)), {
      signed: true,
      httpOnly: true,
      sameSite: 'lax',
      path: '/login',
      maxAge: LAST_USER_MAX_AGE_MS,
      overwrite: true,
    });
    ctx.redirect(`/login?error=${reason}${nextParam(next)}`);
    return undefined;
  };

  return [
    defineEndpoint({
      method: 'POST',
      path: '/login',
      auth: 'public',
      sameOrigin: true,
      rateLimit: 'login',
      summary: 'Admin login (form fields or JSON: username, password). Sets the session cookie.',
      tags: ['auth'],
      redirect: 'on to `next` (or /password first for a generated password) when signed in, back to /login?error=invalid|locked when refused',
      body: loginBody,
      response: loginResponse,
      handler: async ({ body }, ctx) => {
        const json = wantsJson(ctx);
        try {
          const row = await deps.users.checkPassword(body.username, body.password, ctx.state.clientIp);
          // an account a provider signs in, whose provider switched passwords off (oidc/service.ts; not the break-glass admin)
          if (!(await passwordSignInAllowed(deps.db.models, row))) throw new AppError('unauthorized', msg('oidc.password_off'));
          // Session fixation: a fresh session id on every sign-in step.
          if (ctx.session && !ctx.session.isNew) await ctx.session.regenerate();
          const step = await deps.secondFactor.pendingStep(row.id);
          if (step) {
            // Not signed in yet: the session only remembers whose password was right, for a while.
            ctx.session!.pendingSignIn = { userId: row.id, step, at: deps.clock() } satisfies PendingSignIn;
            const path = step === 'enrol' ? ENROL_PATH : SECOND_FACTOR_PATH;
            if (json) return { second_factor: step, next_step: path };
            ctx.redirect(`${path}${nextParam(body.next, '?')}`);
            return undefined;
          }
          return openSession(ctx, await deps.users.completeSignIn(row, ctx.state.clientIp), body.next, json, deps.clock());
        } catch (err) {
          return refusedSignIn(ctx, err, body.username, body.next, json);
        }
      },
    }),
    defineEndpoint({
      method: 'POST',
      path: SECOND_FACTOR_PATH,
      auth: 'public',
      sameOrigin: true,
      rateLimit: 'login',
      summary:
        "The second step of a sign-in whose password was right (POST /login answered second_factor: totp): a 6-digit code of the account's authenticator app, or one of its recovery codes (spent by this). Counts toward the lockout like a wrong password. Sets the session cookie.",
      tags: ['auth'],
      errors: { '401': 'No password step within the last 10 minutes (sign in again), or the code is wrong' },
      redirect: 'on to `next` when signed in, back to /login/second-factor?error=invalid when the code is wrong, to /login?error=expired|locked',
      body: secondFactorBody,
      response: signedInResponse,
      handler: async ({ body }, ctx) => {
        const json = wantsJson(ctx);
        const pending = pendingSignIn(ctx, deps.clock(), 'totp', 'passkey');
        if (!pending) return expired(ctx, body.next, json);
        const row = await deps.users.getRow(pending.userId);
        try {
          await deps.users.refuseLocked(row.username);
          const used = await deps.secondFactor.check(row, body.code);
          if (!used) {
            await deps.users.signInFailed(row.username, ctx.state.clientIp);
            await deps.users.refuseLocked(row.username);
            if (json) throw new AppError('unauthorized', msg('auth.invalid_login'), { code: msg('second_factor.field.invalid_code') });
            ctx.redirect(`${SECOND_FACTOR_PATH}?error=invalid${nextParam(body.next)}`);
            return undefined;
          }
        } catch (err) {
          if (err instanceof AppError && err.kind === 'locked') ctx.session = null;
          return refusedSignIn(ctx, err, row.username, body.next, json);
        }
        await ctx.session!.regenerate();
        return openSession(ctx, await deps.users.completeSignIn(row, ctx.state.clientIp), body.next, json, deps.clock());
      },
    }),
    defineEndpoint({
      method: 'POST',
      path: ENROL_PATH,
      auth: 'public',
      sameOrigin: true,
      rateLimit: 'login',
      summary:
        'The enrolment a sign-in goes through when every account needs a second factor and this one has none (POST /login answered second_factor: enrol). Without `code`: the new TOTP secret to add to an authenticator app (JSON clients; browsers see it on GET /login/enrol). With a code from it: the TOTP is active, the session opens, and the answer holds the ten recovery codes, shown this once (browsers get a page with them and a link on to `next`).',
      tags: ['auth'],
      errors: { '401': 'No password step within the last 10 minutes (sign in again)', '422': 'The code does not match the new secret' },
      redirect: 'back to /login/enrol?error=invalid when the code is wrong, to /login?error=expired without a recent password step',
      body: enrolBody,
      response: enrolResponse,
      handler: async ({ body }, ctx) => {
        const json = wantsJson(ctx);
        const pending = pendingSignIn(ctx, deps.clock(), 'enrol');
        if (!pending) return expired(ctx, body.next, json);
        const row = await deps.users.getRow(pending.userId);
        if (body.code === undefined) {
          if (!json) return ctx.redirect(`${ENROL_PATH}${nextParam(body.next, '?')}`);
          return { setup: await deps.secondFactor.beginTotp(row, true) };
        }
        let codes: string[];
        try {
          codes = await deps.secondFactor.activateTotp(row, body.code, row.id);
        } catch (err) {
          if (json || !(err instanceof AppError) || (err.kind !== 'unprocessable' && err.kind !== 'conflict')) throw err;
          ctx.redirect(`${ENROL_PATH}?error=invalid${nextParam(body.next)}`);
          return undefined;
        }
        await ctx.session!.regenerate();
        const user = await deps.users.completeSignIn(row, ctx.state.clientIp);
        if (json) return { ...openSession(ctx, user, body.next, true, deps.clock())!, recovery_codes: codes };
        openSession(ctx, user, body.next, true, deps.clock());
        ctx.set('Cache-Control', 'no-store');
        ctx.set('Content-Security-Policy', PAGE_CSP);
        ctx.type = 'text/html; charset=utf-8';
        ctx.body = renderRecoveryCodesPage({ lang: user.language, codes, next: afterSignIn(user, body.next) });
        return undefined;
      },
    }),
    defineEndpoint({
      method: 'POST',
      path: `${ENROL_PASSKEY_PATH}/options`,
      auth: 'public',
      sameOrigin: true,
      rateLimit: 'login',
      summary:
        'The enrolment the policy asks for, with a passkey instead of a TOTP (POST /login answered second_factor: enrol): WebAuthn options for navigator.credentials.create() (a discoverable credential bound to the admin origin). The challenge is kept in the session for 5 minutes; POST /login/enrol/passkey answers it.',
      tags: ['auth'],
      errors: {
        '401': 'No password step within the last 10 minutes (sign in again)',
        '409': 'The admin origin is not configured (GATEHOUSE_ADMIN_ORIGIN or GATEHOUSE_ADMIN_DOMAIN)',
      },
      body: emptyBody,
      response: passkeyOptionsResponse,
      handler: async (_i, ctx) => {
        const pending = pendingSignIn(ctx, deps.clock(), 'enrol');
        if (!pending) throw new AppError('unauthorized', msg('second_factor.sign_in_pending'));
        const { options, challenge } = await deps.secondFactor.registrationOptions(await deps.users.getRow(pending.userId));
        ctx.session!.passkeyChallenge = challenge;
        return { options: { ...options } };
      },
    }),
    defineEndpoint({
      method: 'POST',
      path: ENROL_PASSKEY_PATH,
      auth: 'public',
      sameOrigin: true,
      rateLimit: 'login',
      summary:
        "The enrolment with a passkey: {name, credential} where credential is the browser's answer to the options of POST /login/enrol/passkey/options. The passkey is stored, the session opens, and the answer holds the ten recovery codes, shown this once.",
      tags: ['auth'],
      errors: {
        '401': 'No password step within the last 10 minutes (sign in again)',
        '409': 'No pending passkey challenge (ask for options first), or a passkey registered already',
        '422': 'The passkey did not verify',
      },
      body: enrolPasskeyBody,
      response: enrolPasskeyResponse,
      handler: async ({ body }, ctx) => {
        const pending = pendingSignIn(ctx, deps.clock(), 'enrol');
        if (!pending) throw new AppError('unauthorized', msg('second_factor.sign_in_pending'));
        const row = await deps.users.getRow(pending.userId);
        const challenge = ctx.session!.passkeyChallenge as PasskeyChallenge | undefined;
        delete ctx.session!.passkeyChallenge;
        const added = await deps.secondFactor.addPasskey(row, body.name, body.credential, challenge);
        // the enrolment is the account's first second factor: its recovery codes come with it
        const codes = added.recovery_codes ?? [];
        await ctx.session!.regenerate();
        const user = await deps.users.completeSignIn(row, ctx.state.clientIp);
        return { ...openSession(ctx, user, body.next, true, deps.clock())!, recovery_codes: codes };
      },
    }),
    defineEndpoint({
      method: 'POST',
      path: `${SECOND_FACTOR_PASSKEY_PATH}/options`,
      auth: 'public',
      sameOrigin: true,
      rateLimit: 'login',
      summary:
        "The second step of a sign-in with a passkey (POST /login answered second_factor: totp or passkey): WebAuthn options for navigator.credentials.get() that allow the account's passkeys. The challenge is kept in the session for 5 minutes; POST /login/second-factor/passkey answers it.",
      tags: ['auth'],
      errors: {
        '401': 'No password step within the last 10 minutes (sign in again)',
        '409': 'The account has no passkey, or the admin origin is not configured',
      },
      body: emptyBody,
      response: passkeyOptionsResponse,
      handler: async (_i, ctx) => {
        const pending = pendingSignIn(ctx, deps.clock(), 'totp', 'passkey');
        if (!pending) throw new AppError('unauthorized', msg('second_factor.sign_in_pending'));
        const { options, challenge } = await deps.secondFactor.authenticationOptions(pending.userId);
        ctx.session!.passkeyChallenge = challenge;
        return { options: { ...options } };
      },
    }),
    defineEndpoint({
      method: 'POST',
      path: SECOND_FACTOR_PASSKEY_PATH,
      auth: 'public',
      sameOrigin: true,
      rateLimit: 'login',
      summary:
        "The second step of a sign-in with a passkey: the browser's answer (credential, as @simplewebauthn/browser gives it) to the options of POST /login/second-factor/passkey/options. A passkey that does not verify counts toward the lockout like a wrong password. Sets the session cookie.",
      tags: ['auth'],
      errors: {
        '401': 'No password step within the last 10 minutes, or the passkey did not verify',
        '409': 'No pending passkey challenge (ask for options first)',
      },
      body: passkeySignInBody,
      response: signedInResponse,
      handler: async ({ body }, ctx) => {
        const pending = pendingSignIn(ctx, deps.clock(), 'totp', 'passkey');
        if (!pending) throw new AppError('unauthorized', msg('second_factor.sign_in_pending'));
        const row = await deps.users.getRow(pending.userId);
        const challenge = ctx.session!.passkeyChallenge as PasskeyChallenge | undefined;
        delete ctx.session!.passkeyChallenge;
        try {
          await deps.users.refuseLocked(row.username);
          const { ok } = await deps.secondFactor.checkPasskey(body.credential, challenge, 'second_factor', row.id);
          if (!ok) {
            await deps.users.signInFailed(row.username, ctx.state.clientIp);
            await deps.users.refuseLocked(row.username);
            throw new AppError('unauthorized', msg('passkey.rejected'), { credential: msg('passkey.field.rejected') });
          }
        } catch (err) {
          if (err instanceof AppError && err.kind === 'locked') ctx.session = null;
          throw err;
        }
        await ctx.session!.regenerate();
        return openSession(ctx, await deps.users.completeSignIn(row, ctx.state.clientIp), body.next, true, deps.clock());
      },
    }),
    defineEndpoint({
      method: 'POST',
      path: `${PASSKEY_PATH}/options`,
      auth: 'public',
      sameOrigin: true,
      rateLimit: 'login',
      summary:
        'A sign-in with a passkey alone, without username or password ("Sign in with a passkey"): WebAuthn options for navigator.credentials.get() that let the browser offer any passkey it holds for this server (a discoverable credential; the authenticator must verify the user, by PIN or biometrics). The challenge is kept in the session for 5 minutes; POST /login/passkey answers it.',
      tags: ['auth'],
      errors: { '409': 'The admin origin is not configured (GATEHOUSE_ADMIN_ORIGIN or GATEHOUSE_ADMIN_DOMAIN)' },
      body: emptyBody,
      response: passkeyOptionsResponse,
      handler: async (_i, ctx) => {
        const { options, challenge } = await deps.secondFactor.authenticationOptions(null);
        delete ctx.session!.pendingSignIn;
        ctx.session!.passkeyChallenge = challenge;
        return { options: { ...options } };
      },
    }),
    defineEndpoint({
      method: 'POST',
      path: PASSKEY_PATH,
      auth: 'public',
      sameOrigin: true,
      rateLimit: 'login',
      summary:
        "A sign-in with a passkey alone: the browser's answer (credential) to the options of POST /login/passkey/options. The passkey names the account; the authenticator must have verified the user. A known passkey that does not verify counts toward its account's lockout; a locked account stays locked. Sets the session cookie.",
      tags: ['auth'],
      errors: {
        '401': 'The passkey is unknown or did not verify',
        '409': 'No pending passkey challenge (ask for options first)',
        '423': 'The account is locked',
      },
      body: passkeySignInBody,
      response: signedInResponse,
      handler: async ({ body }, ctx) => {
        const challenge = ctx.session!.passkeyChallenge as PasskeyChallenge | undefined;
        delete ctx.session!.passkeyChallenge;
        const { userId, ok } = await deps.secondFactor.checkPasskey(body.credential, challenge, 'sign_in', null);
        const rejected = () => new AppError('unauthorized', msg('passkey.rejected'), { credential: msg('passkey.field.rejected') });
        if (userId === null) throw rejected();
        const row = await deps.users.getRow(userId);
        await deps.users.refuseLocked(row.username);
        if (!ok) {
          await deps.users.signInFailed(row.username, ctx.state.clientIp);
          await deps.users.refuseLocked(row.username);
          throw rejected();
        }
        if (ctx.session && !ctx.session.isNew) await ctx.session.regenerate();
        return openSession(ctx, await deps.users.completeSignIn(row, ctx.state.clientIp), body.next, true, deps.clock());
      },
    }),
    defineEndpoint({
      method: 'POST',
      path: '/logout',
      auth: 'public',
      sameOrigin: true,
      summary:
        'Ends the admin session (this device only). A signed-in session must send its CSRF token (X-CSRF-Token or form field _csrf); without a session there is nothing to end.',
      tags: ['auth'],
      errors: { '403': 'A signed-in session without its CSRF token' },
      redirect: 'to /login',
      response: okOnly,
      handler: async (_i, ctx) => {
        const userId = ctx.session?.userId;
        if (typeof userId === 'number') {
          // A cross-site form must not be able to sign the admin out.
          if (!csrfMatches(ctx)) throw new AppError('forbidden', msg('auth.csrf_invalid'));
          await deps.activity.record({ source: 'auth', event_type: 'logout', msg: msg('auth.signed_out'), user_id: userId, ip: ctx.state.clientIp });
        }
        ctx.session = null;
        if (wantsJson(ctx)) return {};
        ctx.redirect('/login');
        return undefined;
      },
    }),
    defineEndpoint({
      method: 'POST',
      path: '/password',
      auth: 'public',
      sameOrigin: true,
      rateLimit: 'login',
      summary:
        'The password change form of GET /password (current, new_password, confirm, next, _csrf): the signed-in user sets a new password; a generated one must be changed this way (or with PUT /api/v1/settings/password) before the UI opens. Browsers get redirects (on to `next`, or back to /password?error=current|policy|mismatch|same), JSON clients {ok} or 400 with fields.',
      tags: ['auth'],
      errors: { '401': 'Not signed in (JSON clients; browsers are sent to /login)', '403': 'CSRF token missing or invalid' },
      redirect: 'on to `next` when changed, back to /password?error=… when refused, to /login when not signed in',
      body: passwordFormBody,
      response: okOnly,
      handler: async ({ body }, ctx) => {
        const json = wantsJson(ctx);
        const userId = ctx.session?.userId;
        if (typeof userId !== 'number') {
          if (json) throw new AppError('unauthorized', msg('auth.required'));
          ctx.redirect(`/login?next=${encodeURIComponent(`/password${nextParam(body.next, '?')}`)}`);
          return undefined;
        }
        if (!csrfMatches(ctx)) throw new AppError('forbidden', msg('auth.csrf_invalid'));
        const back = (code: string) => {
          ctx.redirect(`/password?error=${code}${nextParam(body.next)}`);
          return undefined;
        };
        const policy = passwordSchema.safeParse(body.new_password);
        if (!policy.success) {
          if (json)
            throw new AppError('validation', msg('auth.password_policy'), {
              new_password: policy.error.issues[0] ? issueMessage(policy.error.issues[0]) : msg('field.invalid'),
            });
          return back('policy');
        }
        if (body.confirm !== undefined && body.confirm !== body.new_password) {
          if (json) throw new AppError('validation', msg('auth.passwords_differ'), { confirm: msg('user.field.confirm_mismatch') });
          return back('mismatch');
        }
        try {
          await deps.users.changePassword(userId, body.current, body.new_password, sessionId(ctx));
        } catch (err) {
          if (!(err instanceof AppError) || (err.kind !== 'validation' && err.kind !== 'unprocessable')) throw err;
          const wrongCurrent = Boolean(err.fieldMessages?.current);
          // The service names the new password `next` (as PUT /settings/password does); here it is new_password.
          if (json)
            throw new AppError(
              err.kind,
              err.msg,
              wrongCurrent ? { current: err.fieldMessages!.current } : { new_password: err.fieldMessages?.next ?? msg('field.invalid') },
            );
          return back(wrongCurrent ? 'current' : 'same');
        }
        if (json) return {};
        ctx.redirect(safeNext(body.next));
        return undefined;
      },
    }),
    defineEndpoint({
      method: 'GET',
      path: '/csrf',
      scope: 'any',
      summary: 'The CSRF token of the current session (null for API tokens, which need none).',
      response: csrfResponse,
      tags: ['auth'],
      handler: async (_i, ctx) => {
        const p = ctx.state.principal as Principal;
        if (p.kind !== 'session') return { csrfToken: null };
        return { csrfToken: sessionCsrf(ctx) };
      },
    }),
    defineEndpoint({
      method: 'GET',
      path: '/session',
      scope: 'any',
      summary:
        'Who is calling: the session user (with must_change_password: true while a generated password awaits its change at GET /password) or the token, with its scopes.',
      response: sessionResponse,
      tags: ['auth'],
      handler: async (_i, ctx) => {
        const p = ctx.state.principal as Principal;
        if (p.kind === 'session') {
          const user = await deps.users.get(p.userId);
          // While set, the UI sends the user to GET /password before anything else.
          return { kind: 'session' as const, user, csrfToken: sessionCsrf(ctx), must_change_password: user.must_change_password };
        }
        if (p.kind === 'token') return { kind: 'token' as const, token: { id: p.tokenId, scopes: p.scopes, user_id: p.userId, peer_id: p.peerId } };
        return { kind: p.kind };
      },
    }),
  ];
}
