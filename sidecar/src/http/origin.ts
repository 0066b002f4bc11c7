// Same-origin checks for browser writes (login CSRF and every session write).
//
// A browser names the page a request comes from in `Origin` (every POST, PUT, PATCH, DELETE of a
// form or fetch) or, failing that, `Referer`. A request whose Origin (or, without one, Referer) is
// present and is not this site's own origin came from another site's page: it is refused. Absent
// both (API clients, curl) it is not a browser cross-site request and passes; API tokens are not
// checked at all. `Origin: null` (sandboxed frames, pages with Referrer-Policy no-referrer) and
// values that are not URLs count as foreign: an attacker's page can make its requests send null.
//
// This site's origin is the one the browser sees: the Host header, with https when the request came
// over TLS directly or through our Caddy (X-Forwarded-Proto from loopback under
// GATEHOUSE_TRUST_PROXY, the same rule as the secure cookie flag and the client address; see
// http/client-ip.ts). Caddy passes the visitor's Host through unchanged.
import type Koa from 'koa';

/** The request's own origin as the browser sees it (scheme from ctx.state.secure, host from Host), or null without a usable Host. */
export function requestOrigin(ctx: Koa.Context): string | null {
  const host = ctx.get('host');
  if (!host || /[/\\@?#\s]/.test(host)) return null;
  try {
    return new URL(`${ctx.state.secure ? 'https' : 'http'}://${host}`).origin;
  } catch {
    return null;
  }
}

/** The origin a value of Origin or Referer names, or 'null' for one that names none. */
function originOf(value: string): string {
  try {
    const u = new URL(value);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.origin : 'null';
  } catch {
    return 'null';
  }
}

/**
 * The foreign origin a browser says this request comes from: the Origin header, or without it the
 * Referer's origin, when present and not this request's own origin. undefined: same-origin, or
 * neither header is present.
 */
export function foreignOrigin(ctx: Koa.Context): string | undefined {
  const origin = ctx.get('origin');
  const referer = ctx.get('referer');
  if (!origin && !referer) return undefined;
  const named = origin ? originOf(origin) : originOf(referer);
  return named !== 'null' && named === requestOrigin(ctx) ? undefined : named;
}
