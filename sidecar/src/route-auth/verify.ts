// The forward-auth decision behind GET /route-auth/verify, independent of Koa so that it can run
// both as the early Koa middleware (http.ts) and straight on node's request/response
// (verifyHandler below: what server.ts can call before Koa for the last bit of speed).
//
// Input: X-Route-Domain (the route's domain as rendered into Caddy's config; without it, the Host
// is looked up, wildcards included), Cookie, X-Forwarded-Uri and X-Forwarded-Proto (for the return
// URL), the client address (X-Forwarded-For from our Caddy). Output:
// - 204 + X-Auth-Email + X-Auth-Method + X-Auth-User (+ X-Auth-Groups for method oidc): a valid session of this route (a route user's
//   session only while the user is still in the route's user_ids);
// - 200 (no identity headers): a route with basic auth and no route auth (AuthView's share-only
//   entry) without a valid share-link session here: Caddy goes on to the route's basic auth
//   (proxy/fragments/route-auth.ts shareForwardRoutes);
// - 403: the route's IP filter refuses the client (or a wildcard route asked with a foreign Host);
// - 302 to <scheme>://<host>/route-auth/login?rd=<scheme>://<host><original URI>: anything else,
//   including a domain without route auth (fail closed);
// - 405: a method other than GET/HEAD.
// A cache hit is answered synchronously (no promise, no database).
import type http from 'node:http';
import type { Clock } from '../util/clock.js';
import { isLoopback, normalizeIp } from '../http/client-ip.js';
import { EMAIL_HEADER, GROUPS_HEADER, METHOD_HEADER, USER_HEADER } from '../proxy/fragments/route-auth.js';
import { safeRedirect } from '../util/safe-redirect.js';
import { sha256 } from './service.js';
import { decodeAll, underPathPrefix } from '../share-links/paths.js';
import type { AuthView, RouteEntry, SessionEntry } from './view.js';

export interface VerifyInput {
  method: string;
  routeDomain: string;
  host: string;
  cookie: string | undefined;
  forwardedUri: string;
  forwardedProto: string;
  ip: string;
}

export type VerifyAnswer =
  | { status: 204; email: string; authMethod: string; user: string; groups: string[] }
  | { status: 200 }
  | { status: 302; location: string }
  | { status: 403 }
  | { status: 405 };

/** One cookie's value out of a Cookie header, without parsing the rest. */
export function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  let i = 0;
  while (i < header.length) {
    while (header.charCodeAt(i) === 32) i++;
    const eq = header.indexOf('=', i);
    if (eq === -1) return undefined;
    let end = header.indexOf(';', eq);
    if (end === -1) end = header.length;
    if (eq - i === name.length && header.startsWith(name, i)) {
      const v = header.slice(eq + 1, end).trim();
      return v.startsWith('"') && v.endsWith('"') ? v.slice(1, -1) : v;
    }
    i = end + 1;
  }
  return undefined;
}

/**
 * Whether a request path (as sent, before any decoding) is under /route-auth/ the way Caddy's path
 * matcher sees it: percent-decoded (repeatedly), backslashes as slashes, lower case, doubled slashes
 * merged and dot segments resolved. The sidecar serves route-auth pages only under their exact
 * spellings; every other path for which this holds is refused (route-auth/http.ts), so no spelling of
 * a /route-auth/ path that Caddy forwards without forward auth reaches the admin app.
 */
export function underRouteAuth(rawPath: string): boolean {
  const p = decodeAll(rawPath);
  const segments: string[] = [];
  for (const seg of p.toLowerCase().replace(/\\/g, '/').split('/')) {
    const s = seg.replace(/[\s\p{Cc}]+$/u, '');
    if (s === '' || s === '.') continue;
    if (s === '..') segments.pop();
    else segments.push(s);
  }
  return segments[0] === 'route-auth';
}

export const hostName = (host: string) => (host.startsWith('[') ? host.slice(0, host.indexOf(']') + 1) : host.replace(/:\d+$/, '')).toLowerCase();

/** Whether a request host name belongs to a route domain (exact, or covered by its one-label wildcard). */
export function hostMatches(domain: string, host: string): boolean {
  const h = hostName(host);
  if (domain.startsWith('*.')) {
    const rest = domain.slice(1);
    return h.endsWith(rest) && h.length > rest.length && !h.slice(0, -rest.length).includes('.');
  }
  return h === domain;
}

export function schemeOf(forwardedProto: string, entry: RouteEntry | null): 'http' | 'https' {
  if (forwardedProto === 'https' || forwardedProto === 'http') return forwardedProto;
  return entry?.route.https_enabled ? 'https' : 'http';
}

function toLogin(input: VerifyInput, entry: RouteEntry | null): VerifyAnswer {
  let host = input.host;
  if (entry && !hostMatches(entry.route.domain, input.host)) {
    if (entry.route.domain.startsWith('*.')) return { status: 403 };
    host = entry.route.domain;
  }
  const scheme = schemeOf(input.forwardedProto, entry);
  // the original URI as the target after signing in, when util/safe-redirect.ts would accept it there
  const uri = safeRedirect(input.forwardedUri || '/', { refusePrefixes: ['/route-auth/'] });
  return { status: 302, location: `${scheme}://${host}/route-auth/login?rd=${encodeURIComponent(`${scheme}://${host}${uri}`)}` };
}

/** No valid session: the login page, or for a share-only entry the route's basic auth (200). */
function noSession(input: VerifyInput, entry: RouteEntry): VerifyAnswer {
  return entry.shareOnly ? { status: 200 } : toLogin(input, entry);
}

export class Verifier {
  constructor(
    private view: AuthView,
    private clock: Clock,
  ) {}

  decide(input: VerifyInput): VerifyAnswer | Promise<VerifyAnswer> {
    if (input.method !== 'GET' && input.method !== 'HEAD') return { status: 405 };
    const domain = input.routeDomain.toLowerCase();
    const entry = domain ? this.view.peekDomain(domain) : undefined;
    if (entry === undefined) return this.slow(input, domain);
    return this.withEntry(input, entry);
  }

  private async slow(input: VerifyInput, domain: string): Promise<VerifyAnswer> {
    const entry = domain ? await this.view.domain(domain) : await this.view.host(hostName(input.host));
    const r = this.withEntry(input, entry);
    return r;
  }

  private withEntry(input: VerifyInput, entry: RouteEntry | null): VerifyAnswer | Promise<VerifyAnswer> {
    // No configuration for this domain (not yet committed, or just removed): fail closed.
    if (!entry) return toLogin(input, null);
    if (entry.ip && !entry.ip.matcher.allows(entry.ip.mode, input.ip)) return { status: 403 };
    const token = readCookie(input.cookie, entry.cookieName);
    if (!token || token.length > 128) return noSession(input, entry);
    const id = sha256(token);
    const s = this.view.peekSession(id);
    if (s === undefined) return this.view.session(id).then((loaded) => this.answer(input, entry, loaded));
    return this.answer(input, entry, s);
  }

  private answer(input: VerifyInput, entry: RouteEntry, s: SessionEntry | null): VerifyAnswer {
    if (
      s &&
      s.routeId === entry.route.id &&
      s.expiresAt > this.clock() &&
      (s.userId === null || entry.route.user_ids.includes(s.userId)) &&
      (!s.pathPrefix || underPathPrefix(input.forwardedUri, s.pathPrefix))
    ) {
      return { status: 204, email: s.email, authMethod: s.authMethod, user: s.subject, groups: s.groups ?? [] };
    }
    return noSession(input, entry);
  }
}

const header = (req: http.IncomingMessage, name: string): string => {
  const v = req.headers[name];
  return Array.isArray(v) ? v.join(', ') : (v ?? '');
};

/** The client address as clientIp() in http/client-ip.ts computes it, from node's request. */
export function rawClientIp(req: http.IncomingMessage, trustProxy: boolean): string {
  const remote = normalizeIp(req.socket.remoteAddress);
  if (trustProxy && isLoopback(remote)) {
    const xff = header(req, 'x-forwarded-for');
    if (xff) {
      const parts = xff.split(',');
      for (let i = parts.length - 1; i >= 0; i--) {
        const p = parts[i].trim();
        if (p) return normalizeIp(p);
      }
    }
  }
  return remote;
}

export function inputFrom(req: http.IncomingMessage, ip: string): VerifyInput {
  return {
    method: req.method ?? 'GET',
    routeDomain: header(req, 'x-route-domain'),
    host: header(req, 'host'),
    cookie: req.headers.cookie,
    forwardedUri: header(req, 'x-forwarded-uri'),
    forwardedProto: header(req, 'x-forwarded-proto'),
    ip,
  };
}

const headerSafe = (v: string) => (/^[\x20-\x7e]*$/.test(v) ? v : encodeURIComponent(v));

const BODY: Record<number, string> = { 200: 'No share-link session: basic auth applies', 302: 'Sign-in required', 403: 'Forbidden', 405: 'Method not allowed' };

export function writeAnswer(res: http.ServerResponse, a: VerifyAnswer, head: boolean): void {
  if (a.status === 204) {
    // Header values are ASCII-safe: emails and usernames are validated on input; anything else is dropped.
    const h: Record<string, string> = { 'Cache-Control': 'no-store', [METHOD_HEADER]: a.authMethod, [USER_HEADER]: headerSafe(a.user) };
    if (a.email) h[EMAIL_HEADER] = headerSafe(a.email);
    // an oidc session's groups, comma-separated (each encoded when it holds anything beyond printable ASCII, or a comma)
    if (a.groups.length) h[GROUPS_HEADER] = a.groups.map((g) => (/^[\x20-\x7e]*$/.test(g) && !g.includes(',') ? g : encodeURIComponent(g))).join(',');
    res.writeHead(204, h);
    res.end();
    return;
  }
  const body = BODY[a.status];
  const h: Record<string, string | number> = {
    'Cache-Control': 'no-store',
    'Content-Type': 'text/plain; charset=utf-8',
    'Content-Length': Buffer.byteLength(body),
  };
  if (a.status === 302) h.Location = a.location;
  if (a.status === 405) h.Allow = 'GET, HEAD';
  res.writeHead(a.status, h);
  res.end(head ? undefined : body);
}

/**
 * GET /route-auth/verify on node's request and response, for a server that wants to answer it
 * before Koa: `if (!verifyHandler(req, res)) app(req, res)`. Returns false for any other path.
 */
export function verifyHandler(
  verifier: Verifier,
  trustProxy: boolean,
  onError: (err: unknown) => void,
  /** counts each answer's status (GET /metrics: metrics/service.ts RouteAuthOutcomes; one integer increment) */
  outcomes?: { count(status: number): void },
): (req: http.IncomingMessage, res: http.ServerResponse) => boolean {
  const write = outcomes
    ? (res: http.ServerResponse, a: VerifyAnswer, head: boolean) => {
        outcomes.count(a.status);
        writeAnswer(res, a, head);
      }
    : writeAnswer;
  return (req, res) => {
    const url = req.url ?? '';
    if (url !== '/route-auth/verify' && !url.startsWith('/route-auth/verify?')) return false;
    const head = req.method === 'HEAD';
    const fail = (err: unknown) => {
      outcomes?.count(500);
      onError(err);
      if (!res.headersSent) {
        res.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store' });
        res.end('Internal server error');
      }
    };
    try {
      const a = verifier.decide(inputFrom(req, rawClientIp(req, trustProxy)));
      if (a instanceof Promise) a.then((x) => write(res, x, head), fail);
      else write(res, a, head);
    } catch (err) {
      fail(err);
    }
    return true;
  };
}
