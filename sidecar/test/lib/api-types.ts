// The body a test reads from a request, typed by the request itself: the method and the path as the
// test writes them (`/api/v1/peers/${id}?x=1`, a literal or a template) are matched against the
// served paths (api-responses.generated.ts, from each endpoint's `response` schema) segment by
// segment, as the router does: a literal segment matches itself, a `:param` any one segment. The
// answer is that schema's output, with the fields of a refusal ({ok: false, error, code, fields, ...})
// beside it, as a test reads both from the same request. A path the types cannot follow (a method or
// path only known at run time) or an endpoint without a JSON answer of its own gives `unknown`: the
// test names the body (req<T>(), e.g. a Refusal) or reads it with the JSON walkers of
// test/lib/json.ts (at(), objAt(), arrAt()).
import type { ApiResponses } from './api-responses.generated.js';

export type ApiMethod = keyof ApiResponses;

/** The fields of a refused request (the error body, docs/reference/api.md), each optional beside a success body. */
export interface Refusal {
  ok?: false;
  error?: string;
  /** the field a conflict is about, with the id of what holds it (route_id, redirect_host_id) */
  field?: string;
  route_id?: number;
  redirect_host_id?: number;
  /** the licence feature a 403 names */
  feature?: string;
  /** the proxy's own reason when it refused a configuration (502) */
  proxy_error?: string;
  /** why a licence key or an RDP connect was refused (a stable word: expired, route_disabled, maintenance, ...) */
  reason?: string;
  /** the licence limit a 403 names (max_peers, max_routes) and its value */
  limit?: string;
  max?: number;
  /** the routes that still use what a 409 refused to delete */
  routes?: { id: number; domain: string }[];
  /** the maintenance window an RDP connect was refused in (as GET /client/rdp lists it) */
  maintenance?: NonNullable<ApiResponses['GET']['/api/v1/client/rdp']['routes'][number]['maintenance']>;
  code?: string;
  params?: Record<string, unknown>;
  fields?: Record<string, string>;
  field_codes?: Record<string, { code: string; params?: Record<string, unknown> }>;
}

type Segments<P extends string> = P extends `${infer H}/${infer T}` ? [H, ...Segments<T>] : [P];

/** Whether the segments of a request's path fit a served path's template. */
type Fits<A extends string[], T extends string[]> = A extends [infer A0 extends string, ...infer AR extends string[]]
  ? T extends [infer T0 extends string, ...infer TR extends string[]]
    ? T0 extends `:${string}`
      ? A0 extends ''
        ? false
        : Fits<AR, TR>
      : A0 extends T0
        ? Fits<AR, TR>
        : false
    : false
  : T extends []
    ? true
    : false;

type WithoutQuery<P extends string> = P extends `${infer B}?${string}` ? B : P;

/** The served path templates of a method that a request path fits (the literal one first: `/users/locked` before `/users/:id`). */
type Served<M extends ApiMethod, P extends string> = P extends keyof ApiResponses[M]
  ? P
  : { [T in keyof ApiResponses[M] & string]: Fits<Segments<P>, Segments<T>> extends true ? T : never }[keyof ApiResponses[M] & string];

/** The success body of a method and path as the test writes them (unknown when no served path fits, or either is only a string). */
export type ResponseOf<M extends string, P extends string> =
  Uppercase<M> extends ApiMethod
    ? string extends P
      ? unknown
      : [Served<Uppercase<M>, WithoutQuery<P>>] extends [never]
        ? unknown
        : ApiResponses[Uppercase<M>][Served<Uppercase<M>, WithoutQuery<P>> & keyof ApiResponses[Uppercase<M>]]
    : unknown;

/**
 * What a test reads from an answer: the success body with a refusal's fields beside it. A body of
 * several shapes (sign-in: a session, or the second step) is read as one: a field that only some
 * shapes have is optional.
 */
export type BodyOf<M extends string, P extends string> = Readable<ResponseOf<M, P>>;
type Readable<B> = unknown extends B ? unknown : [B] extends [object] ? Merged<B> & Omit<Refusal, KeysOf<B>> : B;
type KeysOf<U> = U extends unknown ? keyof U : never;
type Merged<U> = { [K in KeysOf<U> as K extends keyof U ? K : never]: U extends unknown ? U[K & keyof U] : never } & {
  [K in KeysOf<U> as K extends keyof U ? never : K]?: U extends unknown ? (K extends keyof U ? U[K] : never) : never;
};
