// Endpoint declarations. Every HTTP endpoint of the sidecar is declared once with defineEndpoint():
// method, path, who may call it, the schemas of its body and query, and a thin handler. The same
// declarations mount the Koa routes (http/app.ts), generate the OpenAPI document (http/openapi.ts)
// and drive the authorization matrix test (test/authz-matrix.test.ts).
import type Koa from 'koa';
import type { z } from 'zod';
import type { Scope } from './scopes.js';
import type { Role } from '@gatehouse/common/roles.js';
import type { LicensedFeature } from './feature-gate.js';
import type { FieldMessages } from '../util/errors.js';

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/**
 * Who may call an endpoint.
 * - admin: an admin-UI session (with CSRF on writes) or an API token whose scopes cover the path.
 * - public: anyone (still rate limited where the API documents it).
 * - gateway: a gateway companion bearer token, bound to one gateway peer.
 * - client: a desktop-client API token (scope `client`), with machine-fingerprint binding.
 */
export type AuthKind = 'admin' | 'public' | 'gateway' | 'client';

export { SCOPES, type Scope } from './scopes.js';

/** The scope a token needs for an admin path (relative to /api/v1). `null`: only full-access (and read-only for GET). */
export function scopeForPath(p: string): Scope | null {
  const first = p.split('/')[1] ?? '';
  switch (first) {
    case 'peers':
    case 'peer-groups':
    case 'tags':
    case 'gateways':
      return 'peers';
    case 'routes':
    case 'redirect-hosts':
    case 'rdp':
    case 'certificates':
      return 'routes';
    case 'settings':
    case 'smtp':
      return 'settings';
    case 'webhooks':
      return 'webhooks';
    case 'logs':
      return 'logs';
    case 'system':
    case 'wg':
    case 'caddy':
    case 'dashboard':
    case 'metrics':
      return 'system';
    default:
      return null;
  }
}

export { ROLES, roleAtLeast, type Role } from '@gatehouse/common/roles.js';

/** The least session role that passes an endpoint which discloses secrets outside the operator's areas (leastRole), and the only token scope that passes any. */
export const SECRETS_ROLE: Role = 'admin';
export const SECRETS_SCOPE: Scope = 'full-access';

/** The token scopes whose writes an operator may make (peers, groups, tags, gateways; routes, route auth, RDP). */
export const OPERATOR_SCOPES: readonly Scope[] = ['peers', 'routes'];

/**
 * The least session role an admin endpoint needs, derived from its declaration in one place:
 * - an endpoint that discloses secrets: operator in the operator's areas (a peer's configuration
 *   and QR code, a new peer's keys, config links, a gateway's env file, a route's TOTP secret:
 *   the work of managing peers and routes), SECRETS_ROLE everywhere else; never a lower role. A
 *   self-service one (a secret of the caller's own account: a new TOTP secret, recovery codes) is
 *   open to every role for its own account;
 * - a read: viewer for adminRole endpoints (accounts, tokens, backups), user otherwise;
 * - a self-service write (own profile, password, language): user;
 * - an adminRole write: admin;
 * - any other write: operator when its token scope is one of OPERATOR_SCOPES, admin otherwise.
 */
export function leastRole(e: Pick<Endpoint, 'method' | 'path' | 'scope' | 'adminRole' | 'selfService' | 'secrets'>): Role {
  const scope = e.scope !== undefined ? e.scope : scopeForPath(e.path);
  const operatorArea = !e.adminRole && !!scope && scope !== 'any' && OPERATOR_SCOPES.includes(scope);
  if (e.secrets) return e.selfService ? 'user' : operatorArea ? 'operator' : SECRETS_ROLE;
  if (e.method === 'GET') return e.adminRole ? 'viewer' : 'user';
  if (e.selfService) return 'user';
  return operatorArea ? 'operator' : 'admin';
}

export type RateLimitName = 'login' | 'admin' | 'client' | 'hostname' | 'link';

/** Visits of one-time config links (/c/:token) per client address per 15 minutes: their own budget, apart from sign-ins. */
export const LINK_RATE_LIMIT = 60;

/**
 * The names of a path template's parameters: `/tokens/:id/machines/:machineId` → 'id' | 'machineId'
 * (the same names http/app.ts reads with /:([A-Za-z_]+)/).
 */
export type PathParamNames<P extends string> = P extends `${string}:${infer N}/${infer Rest}`
  ? N | PathParamNames<`/${Rest}`>
  : P extends `${string}:${infer N}`
    ? N
    : never;

/** Parameter names http/app.ts parses as ids (idParam: a positive 32-bit integer). */
type IdParamName = 'id' | `${string}Id` | `${string}_id`;

/** What a path parameter holds after validation: an id is a number, a declared one its schema's output, any other the raw text. */
type ParamValue<N extends string, PS> = N extends IdParamName
  ? number
  : PS extends z.ZodObject<infer S>
    ? N extends keyof S
      ? z.output<S[N]>
      : string
    : string;

/** The validated path parameters of a path template, e.g. Params<'/peers/:id'> = { id: number }. */
export type Params<P extends string, PS = undefined> = { [N in PathParamNames<P>]: ParamValue<N, PS> };

/** What a request part holds after its schema (undefined without one). */
type Parsed<S> = S extends z.ZodType ? z.output<S> : undefined;

/** {ok: true, ...} without its ok (run() in http/app.ts adds it); distributes over a union of bodies. */
type WithoutOk<T> = T extends unknown ? Omit<T, 'ok'> : never;

/** What a handler returns: its response schema's body without `ok`; without a schema any object. */
export type Served<RS> = RS extends z.ZodType ? WithoutOk<z.output<RS>> : Record<string, unknown>;

/** A handler's answer: the body (merged into {ok: true, ...}), or nothing when it set ctx.body itself. */
export type HandlerResult<T> = Promise<T | void> | T | void;

export interface Input<B = unknown, Q = unknown, P = Record<string, string | number>> {
  body: B;
  query: Q;
  params: P;
}

/** An endpoint as the registry keeps it (http/app.ts, http/openapi.ts, the authz matrix): its types erased. */
export interface Endpoint {
  method: Method;
  /** Path relative to /api/v1 for admin, gateway and client endpoints; absolute for public ones. */
  path: string;
  summary: string;
  auth: AuthKind;
  /** For admin endpoints: override the scope derived from the path ('any' = every valid credential). */
  scope?: Scope | 'any' | null;
  /** The accounts, tokens, backups and other admin-only areas: writes need the admin role, reads the viewer role (tokens need full-access, read-only for reads). */
  adminRole?: boolean;
  /** Writes every role may do on their own account (profile, password, language). */
  selfService?: boolean;
  /**
   * Only a signed-in browser session passes (every API token gets 403, full-access included): the
   * account's own second factor, which a stolen token must not be able to move. Shown in the OpenAPI
   * document as x-session-only.
   */
  sessionOnly?: boolean;
  /**
   * Admin endpoints that disclose secrets, in any form: which ones and how (one sentence, shown in
   * the OpenAPI document as x-discloses-secrets). Secrets are private and preshared keys, tokens,
   * passwords, passphrases and TOTP secrets, whether the server holds them already or makes them
   * in this call; "in any form" includes sealed under a key the caller chooses (a backup
   * passphrase) and sent to a place the caller chooses (a mail server, a backup target). Only a
   * full-access token (SECRETS_SCOPE) or a session whose role is at least SECRETS_ROLE passes:
   * read-only, the scope of the path and every other scope get 403, and so do lower roles. README
   * "Security" lists the marked endpoints and why.
   */
  secrets?: string;
  body?: z.ZodType;
  /**
   * The service's own checks of a body against the stored state (a name already taken, a referenced
   * row that does not exist, a wrong current password), run when the body's schema refuses other
   * fields: their messages join that 400's `fields`, so that one answer names every bad field of a
   * form. It reads the raw body (check a field only when it has its type) and writes nothing; a
   * field the schema refused already keeps the schema's message. A valid body meets the same checks
   * in the service (409/422 with every such field at once).
   */
  storedChecks?: (raw: Record<string, unknown>, ctx: Koa.Context) => Promise<FieldMessages>;
  query?: z.ZodType;
  /** Path parameters other than ids (`:name`), by name: validated like the body and documented. */
  params?: z.ZodObject;
  /**
   * Request headers the endpoint reads, by their canonical name (X-Machine-Fingerprint): validated
   * with the body and query (a missing required one is a 400 naming it) and documented as header
   * parameters. Only the declared names are looked at; other headers are not refused.
   */
  headers?: z.ZodObject;
  /** The success body as served ({ok: true, ...}); declared in the OpenAPI document. */
  response?: z.ZodType;
  /**
   * A download (query `format=csv|json`): one row of the file. The JSON file is an array of these rows;
   * the CSV file has a header row and one record per row, with the row's flat fields as columns.
   * Declared in the OpenAPI document.
   */
  exportRow?: z.ZodObject;
  /**
   * A success body that is not JSON and not an export (the live event stream): its media type and
   * description for the OpenAPI document; the handler sets ctx.body itself.
   */
  rawResponse?: {
    contentType: string;
    description: string;
    events?: { name: string; scope: string; fields: string }[];
    /** the handler answers 406 to an Accept that excludes contentType */ strictAccept?: boolean;
  };
  /**
   * The handler reads the request body itself (a byte-for-byte echo, a report checked only after its
   * sender is): the generic chain neither validates nor refuses its fields. Says how it is read.
   */
  ownBody?: string;
  /** multipart/form-data upload of one file (http/body.ts; the handler reads uploadedFile(ctx)). */
  multipart?: { field: string; maxBytes: number };
  rateLimit?: RateLimitName;
  /**
   * Public endpoints that browsers post with the admin session (sign-in, sign-out, the password
   * form): a request whose Origin (or, without it, Referer) names another site is refused with 403
   * before anything else (http/origin.ts), as every session-authenticated admin write is.
   */
  sameOrigin?: boolean;
  /**
   * The licence feature the endpoint needs. http/app.ts answers 403
   * {ok:false, error, feature} ahead of the body and the handler when the container's gate says it is
   * off; the OpenAPI document shows it as x-feature.
   */
  feature?: LicensedFeature;
  /**
   * 'root': an admin endpoint served at its path as written, outside /api/v1 (GET /metrics,
   * "Public and auth endpoints"); its scope still comes from scopeForPath(path).
   */
  mount?: 'root';
  /**
   * The API token may also come as the query parameter `token` (the API: GET /metrics, for scrapers
   * that cannot send headers). Only endpoints that declare it accept it; everywhere else a `token`
   * query parameter is ignored.
   */
  queryToken?: boolean;
  /** Success status (default 200). */
  status?: number;
  /** Other success statuses the handler answers with the same body (e.g. 200 when it existed, 201 when created). */
  alsoStatus?: number[];
  /** Error statuses the handler answers that the OpenAPI document cannot derive from the declaration, with what each means (body {ok:false, error}). */
  errors?: Record<string, string>;
  /** Media types the success answer may also come in besides JSON (a byte-for-byte echo: any type); declared as string bodies. */
  alsoContent?: string[];
  /** The endpoint is a page: every answer but 2xx may come as text/html (browsers) or JSON (others), as the document says. */
  pages?: true;
  /** Browsers (no JSON in Accept) are answered with this redirect (302) instead of the JSON body: where it goes. */
  redirect?: string;
  tags?: string[];
  /**
   * Returns an object merged into {ok: true, ...}; or sets ctx.body itself and returns undefined
   * (text/plain, CSV, redirects). Declared as a method: its parameter is checked both ways, so the
   * typed handler of a definition (EndpointDefinition) is one of these.
   */
  handler(input: Input, ctx: Koa.Context): HandlerResult<object>;
}

/**
 * What defineEndpoint takes: an endpoint whose handler is typed by its declaration. The body, query
 * and path parameters it gets are the outputs of their schemas (Params<path> for the path template),
 * and what it returns must be the response schema's body without `ok`.
 */
export type EndpointDefinition<P extends string, BS, QS, PS, RS> = Omit<Endpoint, 'auth' | 'path' | 'body' | 'query' | 'params' | 'response' | 'handler'> & {
  auth?: AuthKind;
  path: P;
  body?: BS;
  query?: QS;
  params?: PS;
  response?: RS;
  handler: (input: Input<Parsed<BS>, Parsed<QS>, Params<P, PS>>, ctx: Koa.Context) => HandlerResult<NoInfer<Served<RS>>>;
};

export function defineEndpoint<
  P extends string,
  BS extends z.ZodType | undefined = undefined,
  QS extends z.ZodType | undefined = undefined,
  PS extends z.ZodObject | undefined = undefined,
  RS extends z.ZodType | undefined = undefined,
>(e: EndpointDefinition<P, BS, QS, PS, RS>): Endpoint {
  const out: Endpoint = { auth: 'admin', ...e };
  // the secrets rule is a rule of admin credentials (token scopes, session roles)
  if (out.secrets && out.auth !== 'admin') throw new Error(`${out.method} ${out.path}: only admin endpoints declare secrets`);
  return out;
}

/** The full path an endpoint is served at. */
export function fullPath(e: Endpoint): string {
  return e.auth === 'public' || e.mount === 'root' ? e.path : `/api/v1${e.path}`;
}

// Shared schema pieces (pure zod in http/fields.ts, so browsers can import them too).
export { MAX_ID, idParam, paging } from './fields.js';
