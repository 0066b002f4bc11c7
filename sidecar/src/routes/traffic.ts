// Several backends per HTTP route (load balancing, active health checks), request and response
// header operations, and the compression list: their request fields (zod), their stored types, and
// the rules the routes service applies to a merged route (routes/service.ts check()). Rendered by
// proxy/fragments/lb.ts. docs/guides/routes.md "Several backends" and "Headers and compression".
//
// Backends and the single target: the route's target fields (target_kind, peer_id + target_port,
// or target_peer_id + target_lan_host + target_lan_port) stay valid and mean one backend; then
// `backends` is [] in the view. With several backends, `backends` lists them ALL and its first
// entry IS the route's target (the service keeps both in step: a write of backends sets the target
// fields from the first entry, a write of the target fields alone replaces the first entry).
import { z } from 'zod';
import { UNPROCESSABLE } from '../http/fields.js';
import { msg, type Msg } from '@gatehouse/common/messages/index.js';
import { fieldIssue, fieldText } from '../http/messages.js';

const int = (min: number, max: number) => {
  const m = fieldText('field.integer_range', { min, max });
  return z.number({ error: m }).int(m).min(min, m).max(max, m);
};

export const LB_POLICIES = ['round_robin', 'least_conn', 'ip_hash', 'first', 'cookie'] as const;
export type LbPolicy = (typeof LB_POLICIES)[number];
export const ENCODINGS = ['zstd', 'gzip'] as const;
export type Encoding = (typeof ENCODINGS)[number];

/**
 * Headers that request_headers and response_headers can neither set nor delete, each with why (one
 * list for both directions; names compare case-insensitively). Hop-by-hop headers (RFC 9110 §7.6.1)
 * and the framing ones belong to each connection, Caddy manages them; the forwarding headers carry
 * the client's real address, which backends trust; the route-auth identity headers are set by
 * Gatehouse after a login and must not be forgeable by configuration; X-Gatehouse-* are ours.
 */
export const PROTECTED_HEADERS: Record<string, string> = {
  connection: 'hop-by-hop',
  'keep-alive': 'hop-by-hop',
  'proxy-connection': 'hop-by-hop',
  'proxy-authenticate': 'hop-by-hop',
  'proxy-authorization': 'hop-by-hop',
  te: 'hop-by-hop',
  trailer: 'hop-by-hop',
  'transfer-encoding': 'hop-by-hop',
  upgrade: 'hop-by-hop',
  host: 'framing: the route domain decides it',
  'content-length': 'framing',
  'content-encoding': 'framing: compression sets it',
  'x-forwarded-for': 'client address',
  'x-forwarded-proto': 'client address',
  'x-forwarded-host': 'client address',
  forwarded: 'client address',
  'x-real-ip': 'client address',
  'x-auth-user': 'route-auth identity',
  'x-auth-email': 'route-auth identity',
  'x-auth-method': 'route-auth identity',
  'x-route-domain': 'route-auth',
};
export const PROTECTED_HEADER_PREFIX = 'x-gatehouse-';
export function isProtectedHeader(name: string): boolean {
  const n = name.toLowerCase();
  return Object.hasOwn(PROTECTED_HEADERS, n) || n.startsWith(PROTECTED_HEADER_PREFIX);
}

/** The placeholders a header value may hold, with what they become (proxy/fragments/lb.ts headerPlaceholders). */
export const HEADER_PLACEHOLDERS = ['{client_ip}', '{host}', '{route_id}', '{route_domain}', '{user}'] as const;

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/;
const headerName = z.string().regex(HEADER_NAME, fieldText('route.field.header_name'));
const headerValue = z
  .string()
  .max(1000, fieldText('route.field.header_value'))
  .regex(/^[\x20-\x7e\u00a0-\uffff]*$/u, fieldText('route.field.header_value'));

/** request_headers / response_headers: {set: {name: value}, delete: [name]}. */
export const headerOpsIn = z
  .strictObject({
    set: z.record(z.string(), headerValue).optional(),
    delete: z.array(headerName).max(50).optional(),
  })
  .superRefine((v, ctx) => {
    const set = Object.keys(v.set ?? {});
    if (set.length > 50) ctx.addIssue({ code: 'custom', path: ['set'], message: fieldText('field.integer_range', { min: 0, max: 50 }) });
    const setLower = new Set<string>();
    for (const name of set) {
      const path = ['set', name];
      // a set's names are keys, whose pattern the document does not carry: a 422
      if (!HEADER_NAME.test(name)) ctx.addIssue(fieldIssue(msg('route.field.header_name'), { path, params: UNPROCESSABLE }));
      else if (isProtectedHeader(name)) ctx.addIssue(fieldIssue(msg('route.field.header_protected', { header: name }), { path }));
      else if (setLower.has(name.toLowerCase())) ctx.addIssue(fieldIssue(msg('route.field.header_set_and_delete', { header: name }), { path }));
      setLower.add(name.toLowerCase());
      const bad = placeholderError(v.set![name]);
      if (bad) ctx.addIssue(fieldIssue(bad, { path }));
    }
    (v.delete ?? []).forEach((name, i) => {
      const path = ['delete', i];
      if (isProtectedHeader(name)) ctx.addIssue(fieldIssue(msg('route.field.header_protected', { header: name }), { path }));
      else if (setLower.has(name.toLowerCase())) ctx.addIssue(fieldIssue(msg('route.field.header_set_and_delete', { header: name }), { path }));
    });
  })
  .transform((v): HeaderOps => ({ set: v.set ?? {}, delete: [...new Set(v.delete ?? [])] }));

/** The first brace group of a value that is not a known placeholder (a lone brace too), as a message; null when all are known. */
export function placeholderError(value: string): Msg | null {
  const re = /\{[^{}]*\}|[{}]/g;
  for (const m of value.matchAll(re)) {
    if (!(HEADER_PLACEHOLDERS as readonly string[]).includes(m[0])) return msg('route.field.header_placeholder', { placeholder: m[0].slice(0, 40) });
  }
  return null;
}

export const backendIn = z.strictObject({
  target_kind: z.enum(['peer', 'gateway'], { error: fieldText('schema.peer_or_gateway') }).default('peer'),
  peer_id: int(1, 2 ** 31 - 1),
  target_host: z
    .string()
    .trim()
    .min(1)
    .max(253)
    .regex(/^[A-Za-z0-9.:-]+$/, fieldText('schema.an_ip_address_or_host_name'))
    .nullable()
    .optional(),
  target_port: int(1, 65535),
  weight: int(1, 100).optional(),
});

export const healthCheckIn = z
  .strictObject({
    path: z
      .string()
      .regex(/^\/[\x21-\x7e]{0,255}$/, fieldText('route.field.health_path'))
      .default('/'),
    interval_s: int(1, 3600).default(10),
    timeout_s: int(1, 60).optional(),
    expect_status: int(100, 599).default(200),
  })
  // timeout: 5 s, or the interval when that is shorter
  .transform((v): HealthCheck => ({ ...v, timeout_s: v.timeout_s ?? Math.min(5, v.interval_s) }));

/** The request fields of this file, spread into routes/schema.ts routeFields. */
export const trafficFields = {
  backends: z.array(backendIn).max(20).nullable(),
  lb_policy: z.enum(LB_POLICIES, { error: fieldText('field.one_of', { values: [...LB_POLICIES] }) }).nullable(),
  lb_cookie_name: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,64}$/, fieldText('route.field.lb_cookie_name'))
    .nullable(),
  health_check: healthCheckIn.nullable(),
  request_headers: headerOpsIn.nullable(),
  response_headers: headerOpsIn.nullable(),
  compression: z
    .array(z.enum(ENCODINGS, { error: fieldText('route.field.compression') }))
    .max(2)
    // each once: more than the document's schema states, so a 422
    .refine((v) => new Set(v).size === v.length, { message: fieldText('route.field.compression'), params: UNPROCESSABLE })
    .nullable(),
};

const headerOpsView = z.object({ set: z.record(z.string(), z.string()), delete: z.array(z.string()) });
export type HeaderOps = z.infer<typeof headerOpsView>;
/** A backend as stored and served. */
const backendView = z.object({
  target_kind: z.enum(['peer', 'gateway']),
  peer_id: z.number().int().meta({ description: 'the peer (target_kind peer) or the gateway peer (target_kind gateway)' }),
  target_host: z.string().nullable().meta({ description: 'gateway backends: the LAN host behind the gateway; null for peers' }),
  target_port: z.number().int(),
  weight: z.number().int().meta({ description: 'round_robin only: relative share (1-100); 1 when not given' }),
});
export type Backend = z.infer<typeof backendView>;
const healthCheckView = z.object({ path: z.string(), interval_s: z.number().int(), timeout_s: z.number().int(), expect_status: z.number().int() });
export type HealthCheck = z.infer<typeof healthCheckView>;
/** The fields of this file in the route view (routes/schema.ts routeView). */
export const trafficView = {
  backends: z.array(backendView).meta({
    description: "every backend when there are several (the first is the route's target fields); [] when the route's single target is its only backend",
  }),
  lb_policy: z.enum(LB_POLICIES).meta({ description: 'how requests are spread over the backends (round_robin unless set)' }),
  lb_cookie_name: z.string().nullable().meta({ description: 'the sticky cookie of lb_policy cookie' }),
  health_check: healthCheckView.nullable().meta({ description: 'active health checks of every backend through the tunnel; null: none' }),
  request_headers: headerOpsView.nullable(),
  response_headers: headerOpsView.nullable(),
  compression: z
    .array(z.enum(ENCODINGS))
    .meta({ description: 'the encodings offered, in order of preference ([] = none); compress_enabled is true when it is not empty' }),
};

/** GET /routes/:id/backends (routes/backend-health.ts): each backend with its state as Caddy sees it. */
export const backendStateView = z.object({
  index: z.number().int().meta({ description: "the place in the route's backends (0: the route's target)" }),
  ...backendView.shape,
  dial: z.string().nullable().meta({ description: 'the address Caddy dials (tunnel address:port); null when the peer is disabled, expired or gone' }),
  state: z.enum(['up', 'down', 'unknown']).meta({
    description:
      "up: in Caddy's rotation; down: failed its health check (out of the rotation); unknown: not known yet, the peer is off, or Gatehouse does not run Caddy",
  }),
  since: z.string().nullable().meta({ format: 'date-time', description: 'when the state was first seen' }),
});
export const routeBackendsResponse = z.object({
  ok: z.literal(true),
  route_id: z.number().int(),
  backends: z.array(backendStateView),
  checked_at: z.string().nullable().meta({ format: 'date-time', description: "when Caddy's states were last read" }),
});

/** The stored shape of these fields on a route (routes/model.ts Route). */
export interface TrafficSettings {
  backends: Backend[];
  lb_policy: LbPolicy | null;
  lb_cookie_name: string | null;
  health_check: HealthCheck | null;
  request_headers: HeaderOps | null;
  response_headers: HeaderOps | null;
  compression: Encoding[];
}

type Input = Partial<
  Record<
    keyof TrafficSettings | 'compress_enabled' | 'target_kind' | 'peer_id' | 'target_port' | 'target_peer_id' | 'target_lan_host' | 'target_lan_port',
    unknown
  >
>;
interface TargetFields {
  target_kind: 'peer' | 'gateway';
  peer_id: number | null;
  target_port: string | null;
  target_peer_id: number | null;
  target_lan_host: string | null;
  target_lan_port: number | null;
}

/** A backend entry as the request sent it (zod output) → the stored form. */
export function storedBackend(b: z.infer<typeof backendIn>): Backend {
  return { target_kind: b.target_kind, peer_id: b.peer_id, target_host: b.target_host ?? null, target_port: b.target_port, weight: b.weight ?? 1 };
}

/** The route's single target as a backend (null when incomplete). */
export function targetBackend(r: TargetFields, weight = 1): Backend | null {
  if (r.target_kind === 'gateway') {
    if (r.target_peer_id === null || r.target_lan_host === null || r.target_lan_port === null) return null;
    return { target_kind: 'gateway', peer_id: r.target_peer_id, target_host: r.target_lan_host, target_port: r.target_lan_port, weight };
  }
  if (r.peer_id === null || r.target_port === null) return null;
  return { target_kind: 'peer', peer_id: r.peer_id, target_host: null, target_port: Number(r.target_port), weight };
}

const has = (input: Input, k: string) => Object.hasOwn(input, k) && (input as Record<string, unknown>)[k] !== undefined;
const TARGET_KEYS = ['target_kind', 'peer_id', 'target_port', 'target_peer_id', 'target_lan_host', 'target_lan_port'];

/**
 * Merges these fields of a write into the route `m` (already holding the input's other fields):
 * backends ↔ target fields, compression ↔ compress_enabled. Returns field messages for what cannot be merged.
 */
export function mergeTraffic(m: TrafficSettings & TargetFields & { compress_enabled: boolean }, input: Input): Record<string, Msg> {
  const f: Record<string, Msg> = {};
  if (has(input, 'backends')) {
    const list = ((input.backends as z.infer<typeof backendIn>[] | null) ?? []).map(storedBackend);
    if (list.length) {
      const first = list[0];
      // target fields sent too must say the same as the first backend
      const sentTarget = TARGET_KEYS.some((k) => has(input, k));
      const before = sentTarget ? targetBackend(m) : null;
      if (sentTarget && before && !sameBackend(before, first)) f.backends = msg('route.field.backends_differ_from_target');
      m.target_kind = first.target_kind;
      if (first.target_kind === 'peer') {
        Object.assign(m, {
          peer_id: first.peer_id,
          target_port: String(first.target_port),
          target_peer_id: null,
          target_lan_host: null,
          target_lan_port: null,
        });
      } else {
        Object.assign(m, {
          peer_id: null,
          target_port: null,
          target_peer_id: first.peer_id,
          target_lan_host: first.target_host,
          target_lan_port: first.target_port,
        });
      }
    }
    m.backends = list.length > 1 ? list : [];
  } else if (m.backends.length && TARGET_KEYS.some((k) => has(input, k))) {
    const t = targetBackend(m, m.backends[0].weight);
    if (t) m.backends = [t, ...m.backends.slice(1)];
  }
  if (has(input, 'compression')) {
    m.compression = (input.compression as Encoding[] | null) ?? [];
    m.compress_enabled = m.compression.length > 0;
  } else if (has(input, 'compress_enabled')) {
    m.compression = m.compress_enabled ? (m.compression.length ? m.compression : [...ENCODINGS]) : [];
  }
  return f;
}

const sameBackend = (a: Backend, b: Backend) =>
  a.target_kind === b.target_kind && a.peer_id === b.peer_id && (a.target_host ?? null) === (b.target_host ?? null) && a.target_port === b.target_port;

/** Cross-field rules of a merged route (no database): field messages by field path. */
export function trafficRules(r: TrafficSettings & { route_type: 'http' | 'l4' }): Record<string, Msg> {
  const f: Record<string, Msg> = {};
  if (r.route_type !== 'http') {
    for (const k of ['backends', 'health_check', 'request_headers', 'response_headers'] as const) {
      const v = r[k];
      if (v !== null && !(Array.isArray(v) && !v.length)) f[k] = msg('route.field.only_http');
    }
    if (r.lb_policy !== null) f.lb_policy = msg('route.field.only_http');
    if (r.compression.length) f.compression = msg('route.field.only_http');
  }
  const seen = new Set<string>();
  r.backends.forEach((b, i) => {
    if (r.backends.length > 1 && b.target_kind === 'gateway') f[`backends.${i}.target_kind`] = msg('route.field.backend_gateway_alone');
    if (b.target_kind === 'peer' && b.target_host !== null) f[`backends.${i}.target_host`] = msg('route.field.backend_host_gateway_only');
    if (b.target_kind === 'gateway' && b.target_host === null) f[`backends.${i}.target_host`] = msg('route.field.backend_host_required');
    const key = `${b.peer_id}:${b.target_host ?? ''}:${b.target_port}`;
    if (seen.has(key)) f[`backends.${i}`] = msg('route.field.backend_duplicate');
    seen.add(key);
  });
  if (r.lb_policy === 'cookie' && !r.lb_cookie_name) f.lb_cookie_name = msg('route.field.lb_cookie_needed');
  if (r.health_check && r.health_check.timeout_s > r.health_check.interval_s) f['health_check.timeout_s'] = msg('route.field.health_timeout');
  return f;
}

/** The peers a route's backends name, as stored in backend_peer_ids (",3,5,"; null when none). */
export function backendPeerIds(backends: Backend[]): string | null {
  const ids = [...new Set(backends.map((b) => b.peer_id))].sort((a, b) => a - b);
  return ids.length ? `,${ids.join(',')},` : null;
}
