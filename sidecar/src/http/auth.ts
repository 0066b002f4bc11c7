// Who is calling: admin session, API token, gateway token or desktop-client token; scope, role and
// CSRF checks. See docs/guides/authentication.md for the rules.
import { msg } from '@gatehouse/common/messages/index.js';
import crypto from 'node:crypto';
import type Koa from 'koa';
import type { HttpDeps } from './platform.js';
import { AppError, forbidden, unauthorized, validation } from '../util/errors.js';
import type { UserRow } from '../db/models.js';
import { foreignOrigin } from './origin.js';
import { normalizeIp } from './client-ip.js';
import { leastRole, roleAtLeast, scopeForPath, SECRETS_SCOPE, type Endpoint, type Role, type Scope } from './registry.js';

export type Principal =
  | { kind: 'session'; userId: number; username: string; role: Role }
  /** boundRole: the role of the user the token is bound to (user_id), which caps it; null when it is bound to none */
  | { kind: 'token'; tokenId: number; scopes: Scope[]; userId: number | null; peerId: number | null; boundRole: Role | null }
  | { kind: 'gateway'; peerId: number }
  | { kind: 'client'; tokenId: number; scopes: Scope[]; userId: number | null; peerId: number | null };

export const CSRF_HEADER = 'X-CSRF-Token';
/** The desktop client's machine fingerprint (a client token is bound to the first machine that uses it). */
export const FINGERPRINT_HEADER = 'X-Machine-Fingerprint';
const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);

export function bearerToken(ctx: Koa.Context): string | undefined {
  const auth = ctx.get('Authorization');
  if (auth) {
    const m = /^Bearer\s+(\S+)$/i.exec(auth);
    if (m) return m[1];
  }
  return ctx.get('X-API-Token') || ctx.get('X-API-Key') || undefined;
}

/** `?token=` of an endpoint that allows it (Endpoint.queryToken): one value, or none. */
function queryToken(ctx: Koa.Context): string | undefined {
  const t = ctx.query.token;
  return typeof t === 'string' && t ? t : undefined;
}

/** Requests that came in on the gateway API's tunnel listener carry this flag (gateways/tunnel-listener.ts). */
export const VIA_TUNNEL = 'gatehouseViaTunnel';

/**
 * A gateway token is accepted only from its own peer's tunnel address (WireGuard authenticates
 * source addresses inside the tunnel), so a token copied elsewhere is refused. The address is the
 * TCP peer on the tunnel listener; on the main listener the client address (behind our Caddy, under
 * GATEHOUSE_TRUST_PROXY, the one Caddy forwards: http/client-ip.ts). GATEHOUSE_GATEWAY_TOKEN_ANY_SOURCE
 * lifts the binding on the main listener only, for companions whose GATEHOUSE_GATEWAY_SERVER_URL
 * makes them reach the server outside their tunnel. docs/guides/security.md.
 */
export function checkGatewaySource(ctx: Koa.Context, address: string, anySource: boolean): void {
  const viaTunnel = ctx.state[VIA_TUNNEL] === true;
  if (anySource && !viaTunnel) return;
  const from = viaTunnel ? normalizeIp(ctx.socket.remoteAddress) : (ctx.state.clientIp as string | undefined);
  if (from !== address) throw unauthorized(msg('auth.gateway_token_wrong_address'));
}

/** The user a principal acts as (profile endpoints): the session user, or the token's bound/creating user. */
export function actingUserId(p: Principal | undefined): number | undefined {
  if (!p) return undefined;
  if (p.kind === 'session') return p.userId;
  if (p.kind === 'token' || p.kind === 'client') return p.userId ?? undefined;
  return undefined;
}

/** Whether a token's scopes cover a call. An endpoint that discloses secrets: full-access only. */
export function tokenAllows(scopes: Scope[], method: string, required: Scope | 'any' | null, secrets = false): boolean {
  if (scopes.includes(SECRETS_SCOPE)) return true;
  if (secrets) return false;
  if (SAFE.has(method) && scopes.includes('read-only')) return true;
  if (required === 'any') return true;
  return required !== null && scopes.includes(required);
}

/** Authentication + authorization for one endpoint (everything except CSRF, which needs the body). */
export function authenticate(deps: HttpDeps, e: Endpoint): Koa.Middleware {
  const required = e.scope !== undefined ? e.scope : scopeForPath(e.path);
  const least = leastRole(e);
  switch (e.auth) {
    case 'public':
      return async (_ctx, next) => next();
    case 'gateway':
      return async (ctx, next) => {
        const token = bearerToken(ctx);
        const verified = token && deps.gatewayAuth ? await deps.gatewayAuth.verify(token) : null;
        if (!verified) throw unauthorized(msg('auth.gateway_token_required'));
        checkGatewaySource(ctx, verified.address, deps.config.gateways.tokenAnySource);
        ctx.state.principal = { kind: 'gateway', peerId: verified.peerId } satisfies Principal;
        await next();
      };
    case 'client':
      return async (ctx, next) => {
        const token = bearerToken(ctx);
        let t: Awaited<ReturnType<typeof deps.tokens.verify>> = null;
        try {
          t = token ? await deps.tokens.verify(token, ctx.get(FINGERPRINT_HEADER) || undefined) : null;
        } catch (err) {
          // A desktop client on another machine (or without the fingerprint) than the one its token is
          // bound to is not authenticated as that client: 401, where the admin API answers 403.
          if (err instanceof AppError && err.kind === 'forbidden') throw unauthorized(err.msg);
          throw err;
        }
        if (!t) throw unauthorized(msg('auth.client_token_required'));
        if (!t.scopes.includes('client') && !t.scopes.includes('full-access')) throw forbidden(msg('auth.scope_client'));
        ctx.state.principal = { kind: 'client', tokenId: t.id, scopes: t.scopes, userId: t.user_id ?? t.created_by, peerId: t.peer_id } satisfies Principal;
        await next();
      };
    case 'admin':
      return async (ctx, next) => {
        const token = bearerToken(ctx) ?? (e.queryToken ? queryToken(ctx) : undefined);
        if (token) {
          const t = await deps.tokens.verify(token, ctx.get(FINGERPRINT_HEADER) || undefined);
          if (!t) throw unauthorized(msg('auth.token_invalid'));
          if (e.sessionOnly) throw forbidden(msg('auth.session_only'));
          if (!tokenAllows(t.scopes, ctx.method, required, !!e.secrets)) {
            throw forbidden(e.secrets ? msg('auth.secrets_full_access') : msg('auth.scope_endpoint'));
          }
          if (e.adminRole && !t.scopes.includes('full-access') && !(SAFE.has(ctx.method) && t.scopes.includes('read-only'))) {
            throw forbidden(msg('auth.full_access_required'));
          }
          let boundRole: Role | null = null;
          if (t.user_id !== null) {
            // A token bound to a user never exceeds that user's role (checked per request, so a
            // demotion takes effect at once); a token whose user is gone passes nothing.
            const owner = (await deps.db.models.User.findByPk(t.user_id, { attributes: ['role'], raw: true })) as Pick<UserRow, 'role'> | null;
            if (!owner) throw forbidden(msg('auth.token_user_gone'));
            if (!roleAtLeast(owner.role, least)) throw forbidden(msg('auth.token_user_role', { role: owner.role }));
            boundRole = owner.role;
          }
          ctx.state.principal = {
            kind: 'token',
            tokenId: t.id,
            scopes: t.scopes,
            userId: t.user_id ?? t.created_by,
            peerId: t.peer_id,
            boundRole,
          } satisfies Principal;
          return next();
        }
        const userId = ctx.session?.userId;
        if (typeof userId !== 'number') throw unauthorized();
        const user = (await deps.db.models.User.findByPk(userId, { raw: true })) as UserRow | null;
        if (!user) {
          ctx.session = null;
          throw unauthorized(msg('auth.session_user_gone'));
        }
        if (!roleAtLeast(user.role, least)) {
          if (e.secrets) throw forbidden(least === 'operator' ? msg('auth.secrets_operator_role') : msg('auth.secrets_admin_role'));
          if (e.adminRole && least === 'admin') throw forbidden(msg('auth.admin_role_required'));
          if (least === 'viewer') throw forbidden(msg('auth.viewer_role_required'));
          if (!roleAtLeast(user.role, 'operator')) throw forbidden(msg('auth.read_only_role'));
          throw forbidden(msg('auth.admin_role_required'));
        }
        ctx.state.principal = { kind: 'session', userId: user.id, username: user.username, role: user.role } satisfies Principal;
        await next();
      };
  }
}

/** The store id of the request's session (koa-session's externalKey), if it has one. */
export function sessionId(ctx: Koa.Context): string | undefined {
  // reason: koa-session sets externalKey on sessions of an external store but its types do not declare it
  return (ctx.session as unknown as { externalKey?: string } | null)?.externalKey;
}

/** Whether the request carries the session's CSRF token (header X-CSRF-Token or body field _csrf). */
export function csrfMatches(ctx: Koa.Context): boolean {
  const expected = ctx.session?.csrf;
  const body = ctx.request.body as Record<string, unknown> | undefined;
  const given = ctx.get(CSRF_HEADER) || (body && typeof body === 'object' && typeof body._csrf === 'string' ? body._csrf : '');
  return typeof expected === 'string' && !!given && safeEqual(expected, given);
}

/** The refusal of a browser request sent from another site's page (http/origin.ts). */
function crossOrigin(): AppError {
  return new AppError('forbidden', msg('auth.cross_site'));
}

/** Public endpoints that browsers post with the session (sign-in, sign-out, password form): refused when sent from another site. */
export const sameOriginCheck: Koa.Middleware = async (ctx, next) => {
  if (foreignOrigin(ctx) !== undefined) throw crossOrigin();
  await next();
};

/**
 * Session-authenticated writes: refused when sent from another site's page (Origin, or Referer),
 * and without the session's CSRF token (header X-CSRF-Token or body field _csrf). Tokens: neither.
 */
export const csrfCheck: Koa.Middleware = async (ctx, next) => {
  const p = ctx.state.principal as Principal | undefined;
  if (p?.kind === 'session' && !SAFE.has(ctx.method)) {
    if (foreignOrigin(ctx) !== undefined) throw crossOrigin();
    if (!csrfMatches(ctx)) throw new AppError('forbidden', msg('auth.csrf_invalid'));
  }
  const body = ctx.request.body as Record<string, unknown> | undefined;
  if (body && typeof body === 'object' && !Array.isArray(body) && '_csrf' in body) {
    // the form field is text or it is a bad field (never silently dropped)
    if (typeof body._csrf !== 'string') throw validation(msg('request.validation_failed'), { _csrf: msg('field.csrf_text') });
    delete body._csrf;
  }
  await next();
};

export function safeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a);
  const bb = Buffer.from(b);
  return ab.length === bb.length && crypto.timingSafeEqual(ab, bb);
}

export function newCsrfToken(): string {
  return crypto.randomBytes(24).toString('base64url');
}
