// Request schemas of the routes API (zod): field syntax only. Rules that involve several fields or
// the database (route_type/target_kind combinations, peers that must exist, duplicate domains, port
// collisions) live in the service, which checks the merged record of a create or partial update.
import { z } from 'zod';
import { itemMessageFields, messageRefSchema } from '@gatehouse/common/messages/ref.js';
import toRegexRange from 'to-regex-range';
import { ignoringReadOnly, storedResourceFields } from '../http/input.js';
import { paging, queryBool, queryInt, searchText, sortValues, text, UNPROCESSABLE } from '../http/fields.js';
import { HOST_NAME, IPV4, IPV6, isIPAddress, LABEL, LABELS, whole } from '../http/patterns.js';
import { fieldIssue, fieldText } from '../http/messages.js';
import { missingForKind } from './rules.js';
import { trafficFields, trafficView } from './traffic.js';
import { geoFilterIn, geoFilterView } from './geo.js';
import { msg, type Msg } from '@gatehouse/common/messages/index.js';
import { exposureInput, exposureView } from './exposure.js';
import { accessSchedule, accessScheduleView, accessState } from '../access-windows/schema.js';

/**
 * A domain name's ASCII (punycode) form by the WHATWG URL standard's domain to ASCII, or '' when it
 * is not a valid domain: what node:url's domainToASCII answers, through the URL parser every runtime
 * has (so browsers check a domain the same way).
 */
function domainToASCII(domain: string): string {
  try {
    return new URL(`http://${domain}/`).hostname;
  } catch {
    return '';
  }
}

/**
 * Domain names: trimmed, lowercased, one trailing dot dropped, internationalized names converted to
 * their ASCII (punycode, xn--) form, which is what clients send in Host and SNI. At least two
 * labels of letters, digits and inner hyphens (1-63 characters each, 253 in all); the last label is
 * not all digits (IP addresses are not domains). Wildcards: only `*.` as the whole first label
 * (`*.example.com` serves a.example.com but not a.b.example.com nor example.com), and the rest must
 * have at least two labels.
 */
export function normalizeDomain(input: string): { domain: string } | { error: Msg } {
  let s = input.trim().toLowerCase();
  if (s.endsWith('.')) s = s.slice(0, -1);
  if (!s) return { error: msg('field.required') };
  if (/[\s/:@?#\\]/.test(s)) return { error: msg('schema.a_bare_domain_name_no_scheme') };
  const wildcard = s.startsWith('*.');
  const rest = wildcard ? s.slice(2) : s;
  if (rest.includes('*')) return { error: msg('schema.a_wildcard_is_only_allowed_as') };
  const ascii = domainToASCII(rest);
  if (!ascii) return { error: msg('schema.is_not_a_valid_domain_name') };
  const labels = ascii.split('.');
  if (labels.length < 2) return { error: msg('schema.must_have_at_least_two_labels') };
  for (const l of labels) {
    if (!/^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/.test(l)) return { error: msg('route.field.invalid_label', { label: l.slice(0, 63) }) };
  }
  if (/^\d+$/.test(labels[labels.length - 1])) return { error: msg('schema.a_domain_name_not_an_ip') };
  const domain = (wildcard ? '*.' : '') + ascii;
  if (domain.length > 253) return { error: msg('schema.is_longer_than_253_characters') };
  return { domain };
}

/**
 * normalizeDomain() as a pattern over what is sent: ASCII labels (any case), at least two, the last
 * not all digits, an optional `*.` first label and trailing dot, spaces around, 253 characters in
 * all. Internationalized names (Unicode or xn-- punycode) are accepted too and stored as punycode;
 * the pattern leaves them out because only the IDNA conversion can tell which are valid.
 */
export const DOMAIN_PATTERN = `\\s*(?=[^\\s]{1,253}\\.?\\s*$)(?:\\*\\.)?(?:(?![Xx][Nn]--)${LABEL}\\.)+(?![Xx][Nn]--)(?=[A-Za-z0-9-]*[A-Za-z])${LABEL}\\.?\\s*`;
export const domainSchema = z
  .string()
  .max(1000)
  .meta({
    pattern: `^(?:${DOMAIN_PATTERN})$`,
    description: 'a domain name such as app.example.com, or *.example.com (internationalized names are accepted too and stored as punycode)',
  })
  .transform((v, ctx) => {
    const r = normalizeDomain(v);
    if ('error' in r) {
      ctx.addIssue(fieldIssue(r.error));
      return z.NEVER;
    }
    return r.domain;
  });

export const boolIn = z.union([z.boolean(), z.literal(0), z.literal(1)], { error: 'must be true or false' }).transform((v) => v === true || v === 1);
const intFrom = (min: number, max: number, message = fieldText('field.integer_range', { min, max })) =>
  z
    // The range sits on the number branch too, so the OpenAPI document (input side) shows it.
    .union([z.number().int(message).min(min, message).max(max, message), z.string().regex(new RegExp(`^${toRegexRange(min, max)}$`), message)], {
      error: message,
    })
    .transform(Number)
    .pipe(z.number({ error: message }).int(message).min(min, message).max(max, message));
export const portIn = intFrom(1, 65535, fieldText('schema.a_port'));
export const idIn = intFrom(1, 2 ** 31 - 1, fieldText('schema.a_positive_integer_id'));

export const lanHost = z
  .string()
  .regex(whole(`\\s*(?:${IPV4}|${IPV6}|(?=[^\\s]{1,253}\\s*$)${HOST_NAME})\\s*`), 'must be an IP address or host name')
  .trim()
  .min(1, 'required')
  .max(253)
  .refine(
    (v) => isIPAddress(v) || /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/.test(v),
    'must be an IP address or host name',
  );

export const mac = z
  .string()
  .trim()
  .regex(/^[0-9A-Fa-f]{2}([:-]?)[0-9A-Fa-f]{2}(\1[0-9A-Fa-f]{2}){4}$/, 'must be a MAC address such as AA:BB:CC:DD:EE:FF')
  .transform((v) => v.replace(/[:-]/g, '').toUpperCase().match(/../g)!.join(':'));

/** One IP filter rule as sent: an address/CIDR string or {value, note} (util/ip-rules.ts). */
const IP_RULE = whole(`\\s*(?:${IPV4}(?:/(?:3[0-2]|[12]?\\d))?|${IPV6}(?:/(?:12[0-8]|1[01]\\d|[1-9]?\\d))?)\\s*`);
const ipRuleText = z.string().max(64, 'at most 64 characters').regex(IP_RULE, 'must be an IPv4 or IPv6 address or CIDR range such as 203.0.113.0/24');
const ipRuleIn = z.union([ipRuleText, z.strictObject({ value: ipRuleText, note: z.string().max(200).nullable().optional() })], {
  error: 'must be an IP address or CIDR range (a string, or an object {value, note})',
});

/** Caddy-style durations ("30s", "1m", "1h", "1d") or the words second, minute, hour, day. */
export const rateWindow = z
  .string()
  .trim()
  .regex(/^([1-9]\d{0,5}(s|m|h|d)|second|minute|hour|day)$/, 'must be a duration such as 30s, 1m, 1h or 1d (or second, minute, hour, day)');

export const statusCodes = z
  .string()
  .trim()
  .regex(/^\s*[1-5]\d\d(\s*,\s*[1-5]\d\d)*\s*$/, 'must be comma-separated HTTP status codes such as 502,503,504')
  .transform((v) => [...new Set(v.split(',').map((c) => c.trim()))].join(','));

/**
 * mirror_targets entries: `{url}` (an origin: http:// or https://, host name or IP, optional port;
 * no path, query or user info) or `{peer_id, port}` (rendered as http://<peer tunnel IP>:<port>).
 * A string is accepted as shorthand: an origin URL or host:port (→ {url: "http://host:port"}).
 */
const PORT = '(?:6553[0-5]|655[0-2]\\d|65[0-4]\\d\\d|6[0-4]\\d{3}|[1-5]\\d{4}|[1-9]\\d{0,3}|0)';
const ORIGIN_HOST = `(?:${IPV4}|\\[${IPV6}\\]|(?=[^\\s/:]{1,253}[:/\\s]|[^\\s/:]{1,253}$)${LABELS})`;
/** An origin as sent: http(s)://host[:port][/], spaces around. */
const ORIGIN = `[Hh][Tt][Tt][Pp][Ss]?://${ORIGIN_HOST}(?::${PORT})?/?`;
const originUrl = z
  .string()
  .regex(whole(`\\s*${ORIGIN}\\s*`), 'must be an origin only: http(s)://host[:port], no path, query or user info')
  .trim()
  .max(300)
  .transform((v, ctx) => {
    let u: URL;
    try {
      u = new URL(v);
    } catch {
      // the document's pattern took it: what the URL parser refuses is a rule it cannot state (422)
      ctx.addIssue({ code: 'custom', message: 'must be an http(s) URL such as http://10.8.0.5:8080', params: UNPROCESSABLE });
      return z.NEVER;
    }
    if (
      (u.protocol !== 'http:' && u.protocol !== 'https:') ||
      u.username ||
      u.password ||
      (u.pathname !== '/' && u.pathname !== '') ||
      u.search ||
      u.hash ||
      !u.hostname
    ) {
      ctx.addIssue({ code: 'custom', message: 'must be an origin only: http(s)://host[:port], no path, query or user info', params: UNPROCESSABLE });
      return z.NEVER;
    }
    return `${u.protocol}//${u.host}`;
  });
const mirrorTarget = z.union(
  [
    z.object({ url: originUrl }).strict(),
    z.object({ peer_id: idIn, port: portIn }).strict(),
    z
      .string()
      .max(300)
      .regex(whole(`\\s*(?:${ORIGIN}|${ORIGIN_HOST}:${PORT})\\s*`), 'must be "http(s)://host[:port]" or "host:port"')
      .trim()
      // the pattern above took it as an origin or host:port: the latter gets http://
      .transform((v) => (/^https?:\/\//i.test(v) ? v : `http://${v}`))
      .pipe(originUrl)
      .transform((url) => ({ url })),
  ],
  { error: 'must be {url: "http(s)://host[:port]"}, {peer_id, port} or "host:port"' },
);

/**
 * bot_blocker_config: additions to the shipped lists of the gatehouse_botblock module (its README
 * has the semantics). Patterns: printable ASCII, ≤ 256 characters, case-insensitive substring; a
 * leading ^ anchors at the start, a trailing $ at the end. Unknown keys are refused.
 */
const botPattern = z
  .string()
  .min(1, 'must not be empty')
  .max(256, 'at most 256 characters')
  .regex(/^[\x20-\x7e]+$/, 'printable ASCII only');
const botPatterns = z.array(botPattern).max(1000, 'at most 1000 patterns');
const botConfigFields = z
  .object(
    {
      categories: z
        .array(z.enum(['scanner', 'ai_crawler', 'scraper'], { error: 'must be scanner, ai_crawler or scraper' }))
        .max(3)
        .optional(),
      custom_user_agents: botPatterns.optional(),
      allow_user_agents: botPatterns.optional(),
      block_empty_user_agent: z.boolean({ error: 'must be true or false' }).optional(),
      block_exploit_paths: z.boolean({ error: 'must be true or false' }).optional(),
      block_wordpress_paths: z.boolean({ error: 'must be true or false' }).optional(),
      custom_paths: botPatterns.optional(),
      allow_paths: z
        .array(z.string().regex(/^\/[\x21-\x7e]{0,255}$/, 'must be a path prefix starting with /'))
        .max(1000)
        .optional(),
      tarpit_delay: z
        .string()
        .regex(new RegExp(`^(?:${toRegexRange(1, 60_000)}ms|${toRegexRange(1, 60)}s)$`), 'must be a duration such as 500ms or 10s, at most 60s')
        .optional(),
    },
    { error: 'must be an object' },
  )
  .strict();
const botConfig = botConfigFields.transform((v) => {
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) if (x !== undefined) out[k] = Array.isArray(x) ? [...new Set(x)] : x;
  return out;
});

/** A basic-auth user name: no colon, no control characters, not blank (the control characters are what it refuses). */
// eslint-disable-next-line no-control-regex
const BASIC_AUTH_USER = /^\s*[^\s:\u0000-\u001f\u007f](?:[^:\u0000-\u001f\u007f]*[^\s:\u0000-\u001f\u007f])?\s*$/u;

/** Every writable route field by its API name; all optional (create requires domain). */
export const routeFields = z.strictObject({
  domain: domainSchema,
  description: text({ max: 500, multiline: true }).nullable(),
  route_type: z.enum(['http', 'l4'], { error: 'must be http or l4' }),
  target_kind: z.enum(['peer', 'gateway'], { error: 'must be peer or gateway' }),
  enabled: boolIn,
  peer_id: idIn.nullable(),
  target_port: portIn.nullable(),
  target_peer_id: idIn.nullable(),
  target_lan_host: lanHost.nullable(),
  target_lan_port: portIn.nullable(),
  wol_enabled: boolIn,
  wol_mac: mac.nullable(),
  l4_protocol: z.enum(['tcp', 'udp'], { error: 'must be tcp or udp' }).nullable(),
  l4_listen_port: portIn.nullable(),
  l4_tls_mode: z.enum(['none', 'passthrough', 'terminate'], { error: 'must be none, passthrough or terminate' }).nullable(),
  https_enabled: boolIn,
  backend_https: boolIn,
  compress_enabled: boolIn,
  bot_blocker_enabled: boolIn,
  bot_blocker_mode: z.enum(['block', 'log', 'tarpit'], { error: 'must be block, log or tarpit' }).nullable(),
  bot_blocker_config: botConfig.nullable(),
  monitoring_enabled: boolIn,
  ip_filter_enabled: boolIn,
  ip_filter_mode: z.enum(['whitelist', 'blacklist'], { error: 'must be whitelist or blacklist' }).nullable(),
  // Strings or {value, note} objects; normalized (and checked per entry) by the service with
  // util/ip-rules.ts normalizeIpRules, stored as normalized strings.
  ip_filter_rules: z.array(ipRuleIn).max(500, 'at most 500 rules').nullable(),
  acl_enabled: boolIn,
  acl_peer_ids: z.array(idIn).max(1000).nullable(),
  rate_limit_enabled: boolIn,
  rate_limit_requests: intFrom(1, 1_000_000).nullable(),
  rate_limit_window: rateWindow.nullable(),
  retry_enabled: boolIn,
  retry_count: intFrom(1, 10).nullable(),
  retry_status_codes: statusCodes.nullable(),
  circuit_breaker_enabled: boolIn,
  circuit_breaker_threshold: intFrom(1, 1000).nullable(),
  circuit_breaker_timeout: intFrom(1, 86_400, 'a number of seconds from 1 to 86400').nullable(),
  mirror_enabled: boolIn,
  mirror_targets: z.array(mirrorTarget).max(10, 'at most 10 targets').nullable(),
  debug_enabled: boolIn,
  basic_auth_user: z
    .string()
    .regex(BASIC_AUTH_USER, 'must not contain a colon or control characters')
    .trim()
    .min(1, 'required')
    .max(128)
    .refine(
      (v) => !v.includes(':') && ![...v].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f),
      'must not contain a colon or control characters',
    )
    .nullable(),
  basic_auth_password: z
    .string()
    .min(1, 'required')
    .max(72, 'at most 72 bytes (bcrypt)')
    .refine((v) => Buffer.byteLength(v) <= 72, { message: 'at most 72 bytes (bcrypt): fewer characters outside ASCII', params: UNPROCESSABLE })
    .nullable(),
  user_ids: z.array(idIn).max(1000).nullable(),
  certificate_id: idIn.nullable().meta({
    description:
      'a custom certificate (GET /certificates) to serve this HTTPS route with; it must cover the domain. null: the automatic certificate (ACME or the internal CA)',
  }),
  ...exposureInput,
  ...trafficFields,
  access_schedule: accessSchedule,
  geo_filter: geoFilterIn,
});

export type RouteInput = Partial<z.infer<typeof routeFields>>;

// domain is required on create, except for an L4 route without TLS (l4_tls_mode none or left out:
// nothing there matches on a name); an L4 route that passes TLS through or terminates it needs the
// name its SNI carries. A missing domain is a 400 with fields.domain.
export const createRouteBody = routeFields
  .partial()
  .extend({
    domain: z
      .string({ error: 'must be a domain name' })
      .max(1000)
      .meta({
        pattern: `^(?:${DOMAIN_PATTERN})$`,
        description: 'required, except for an L4 route whose l4_tls_mode is none (or left out); such a route without one has domain ""',
      })
      .pipe(domainSchema)
      .optional(),
  })
  // Every field the route's type and target make required is named in the same answer as the
  // other fields' errors, so an empty form learns them all at once (this check also runs when other
  // fields failed); alone they are 422, as the document cannot state them.
  .superRefine(
    (v, ctx) => {
      for (const [field, m] of Object.entries(missingForKind(v))) ctx.addIssue(fieldIssue(m, { path: [field], params: UNPROCESSABLE }));
    },
    { when: (payload) => typeof payload.value === 'object' && payload.value !== null && !Array.isArray(payload.value) },
  )
  .superRefine((v, ctx) => {
    if (v.domain !== undefined) return;
    if (v.route_type === 'l4' && (v.l4_tls_mode ?? 'none') === 'none') return;
    // the document marks domain optional (it cannot state when it is required): alone, a 422
    ctx.addIssue({ code: 'custom', path: ['domain'], message: 'required', params: UNPROCESSABLE });
  });

/** What PUT /routes/:id accepts and ignores besides the writable fields (docs/reference/api.md "Conventions"). */
export const ROUTE_READ_ONLY = storedResourceFields('route');
export const updateRouteBody = ignoringReadOnly(routeFields.partial(), ROUTE_READ_ONLY).refine((v) => Object.keys(v).length > 0, {
  message: 'nothing to update',
  params: UNPROCESSABLE,
});

export const ROUTE_SORT_KEYS = ['id', 'domain', 'created_at', 'type'] as const;
export const ROUTE_SORTS = sortValues(ROUTE_SORT_KEYS);

export const listRoutesQuery = paging.extend({
  type: z.enum(['http', 'l4'], { error: 'must be http or l4' }).optional(),
  q: searchText
    .optional()
    .meta({ description: "case-insensitive substring of domain, description, target_lan_host or the target peer's name (% and _ are plain characters)" }),
  peer_id: z
    .string({ error: 'must be a peer id' })
    .regex(/^[1-9]\d{0,8}$/, 'must be a peer id')
    .transform(Number)
    .optional()
    .meta({ description: 'routes whose target is this peer: peer_id of peer targets, target_peer_id (the gateway) of gateway targets' }),
  enabled: queryBool.optional(),
  sort: z
    .enum(ROUTE_SORTS, { error: fieldText('field.one_of', { values: [...ROUTE_SORTS] }) })
    .optional()
    .meta({ description: 'order; a leading - sorts descending; default id. type: route_type, then domain' }),
});
export type ListRoutesQuery = z.infer<typeof listRoutesQuery>;

export const batchBody = z.strictObject({
  action: z.enum(['enable', 'disable', 'delete'], { error: 'must be enable, disable or delete' }),
  ids: z.array(idIn).min(1, 'at least one id').max(1000, 'at most 1000 ids'),
});

export const checkDnsBody = z.strictObject({ domain: domainSchema });

export const routePeersQuery = z.strictObject({ peer_type: z.enum(['regular', 'gateway'], { error: 'must be regular or gateway' }).optional() });

/** GET /routes/:id/checks: how many uptime checks, newest first. */
export const checksQuery = z.strictObject({ limit: queryInt(1, 1000).default(100) });

const nInt = z.number().int().nullable();

/** The certificate of a route's TLS name as Caddy holds it (proxy/certificates.ts), beside the stored fields. */
export const certificateView = z
  .object({
    state: z.enum(['valid', 'expiring', 'expired', 'pending', 'error', 'not_applicable', 'unknown']).meta({
      description:
        'valid; expiring (ends within 14 days, or within a third of its lifetime when that is shorter, as with the 12-hour certificates of the internal CA); expired; pending (no certificate yet: exact names get theirs at the first TLS handshake); error (none, and the last attempt failed: last_error); not_applicable (no TLS that Caddy terminates: HTTP-only, L4 without TLS or with passthrough); unknown (Gatehouse does not run Caddy: GATEHOUSE_MANAGE_CADDY=false)',
    }),
    domain: z.string().nullable().meta({ description: 'the name the certificate is for (null when not applicable)' }),
    issuer: z.string().nullable().meta({ description: "the issuer's common name, from the certificate" }),
    internal: z.boolean().meta({ description: "issued (or to be issued) by Caddy's internal CA (GATEHOUSE_TLS=internal): browsers do not trust it" }),
    not_after: z.string().nullable().meta({ format: 'date-time', description: 'when the certificate expires' }),
    last_error: z.string().nullable().meta({ description: "Caddy's last error obtaining a certificate for the name, cleared when one is obtained" }),
    last_error_at: z.string().nullable().meta({ format: 'date-time' }),
    custom: z.object({ id: z.number().int(), name: z.string() }).nullable().meta({
      description: "the custom certificate the route is served with (certificate_id), else null: issuer, not_after and state are then that certificate's",
    }),
  })
  .meta({ description: "the certificate state of the route's TLS name" });
export type CertificateView = z.infer<typeof certificateView>;

const loginMethod = z.enum(['email_password', 'email_code', 'totp', 'oidc']);
/** The route's route login (GET /routes/:id/auth) in brief, for lists. */
export const routeAuthSummary = z
  .object({
    method: loginMethod,
    two_factor_method: z.enum(['email_code', 'totp']).nullable(),
    pending_method: loginMethod.nullable().meta({ description: 'a switch to TOTP waiting for totp-verify (the route keeps `method` until then)' }),
  })
  .nullable()
  .meta({ description: 'the route login (route auth) of the route in brief: null when it has none' });
export type RouteAuthSummary = z.infer<typeof routeAuthSummary>;

/** A route as served (routes/model.ts toApi): the basic-auth password hash never; basic_auth_password is always null. */
export const routeView = z.object({
  id: z.number().int(),
  domain: z.string(),
  description: z.string().nullable(),
  route_type: z.enum(['http', 'l4']),
  target_kind: z.enum(['peer', 'gateway']),
  enabled: z.boolean(),
  peer_id: nInt,
  target_port: z.string().nullable(),
  target_peer_id: nInt,
  target_lan_host: z.string().nullable(),
  target_lan_port: nInt,
  wol_enabled: z.boolean(),
  wol_mac: z.string().nullable(),
  l4_protocol: z.enum(['tcp', 'udp']).nullable(),
  l4_listen_port: nInt,
  l4_tls_mode: z.enum(['none', 'passthrough', 'terminate']).nullable(),
  https_enabled: z.boolean(),
  backend_https: z.boolean(),
  compress_enabled: z.boolean(),
  bot_blocker_enabled: z.boolean(),
  bot_blocker_mode: z.enum(['block', 'log', 'tarpit']).nullable(),
  bot_blocker_config: botConfigFields.nullable(),
  monitoring_enabled: z.boolean(),
  ip_filter_enabled: z.boolean(),
  ip_filter_mode: z.enum(['whitelist', 'blacklist']).nullable(),
  ip_filter_rules: z.array(z.string()),
  acl_enabled: z.boolean(),
  acl_peer_ids: z.array(z.number().int()),
  rate_limit_enabled: z.boolean(),
  rate_limit_requests: nInt,
  rate_limit_window: z.string().nullable(),
  retry_enabled: z.boolean(),
  retry_count: nInt,
  retry_status_codes: z.string().nullable(),
  circuit_breaker_enabled: z.boolean(),
  circuit_breaker_threshold: nInt,
  circuit_breaker_timeout: nInt,
  cb_failure_count: z.number().int(),
  cb_opened_at: nInt,
  mirror_enabled: z.boolean(),
  mirror_targets: z.array(z.union([z.object({ url: z.string() }), z.object({ peer_id: z.number().int(), port: z.number().int() })])),
  debug_enabled: z.boolean(),
  basic_auth_user: z.string().nullable(),
  basic_auth_password: z.null(),
  basic_auth_password_set: z.boolean(),
  user_ids: z.array(z.number().int()),
  certificate_id: nInt.meta({ description: 'the custom certificate it is served with; null: the automatic one' }),
  ...trafficView,
  geo_filter: geoFilterView,
  rdp_route_id: nInt.meta({
    description: 'the RDP route that owns this route (its gateway-mode linked L4 route: edit it there; the routes API answers 409), else null',
  }),
  ...exposureView,
  created_at: z.string().meta({ format: 'date-time' }),
  updated_at: z.string().meta({ format: 'date-time' }),
  route_auth: routeAuthSummary,
  certificate: certificateView,
  access_schedule: accessScheduleView,
  access_state: accessState,
});
export type RouteView = z.infer<typeof routeView>;
export const routeResponse = z.object({ ok: z.literal(true), route: routeView });
export const routeToggleResponse = z.object({ ok: z.literal(true), route: routeView, enabled: z.boolean() });
export const routesResponse = z.object({
  ok: z.literal(true),
  routes: z.array(routeView),
  total: z.number().int(),
  total_all: z.number().int(),
  limit: z.number().int(),
  offset: z.number().int(),
});
export const routesBatchResponse = z.object({
  ok: z.literal(true),
  results: z.array(z.object({ id: z.number().int(), ok: z.boolean(), error: z.string().optional(), ...itemMessageFields })),
  succeeded: z.number().int(),
  failed: z.number().int(),
});
export const checkDnsResponse = z.object({
  ok: z.literal(true),
  domain: z.string(),
  matches: z.boolean(),
  resolvedIps: z.array(z.string()),
  expectedIp: z.string().nullable().meta({ description: "this server's public IPv4 the domain should resolve to; null: none known" }),
  expectedIpSource: z.enum(['settings', 'env', 'public_host', 'interface']).nullable().meta({
    description: 'where expectedIp comes from: the Network settings, GATEHOUSE_PUBLIC_IP, the public host (an IPv4 address), or the first interface address',
  }),
  publicHost: z.string().meta({ description: 'this server as peers dial it (the Network settings, GATEHOUSE_PUBLIC_HOST or the hostname)' }),
});
/** A peer as the route wizard lists it (GET /routes/peers). */
export const wizardPeer = z.object({
  id: z.number().int(),
  name: z.string(),
  description: z.string().nullable(),
  peer_type: z.enum(['regular', 'gateway']),
  is_gateway: z.boolean(),
  enabled: z.union([z.literal(0), z.literal(1)]),
  ip: z.string(),
  hostname: z.string().nullable(),
  api_port: nInt,
  isOnline: z.boolean(),
  group_id: nInt,
  group: z.object({ id: z.number().int(), name: z.string(), color: z.string().nullable() }).nullable(),
});
export type WizardPeer = z.infer<typeof wizardPeer>;
export const routePeersResponse = z.object({ ok: z.literal(true), peers: z.array(wizardPeer) });

/** One uptime check of a route (resilience/monitor.ts CheckResult). */
export const checkView = z.object({
  route_id: z.number().int(),
  checked_at: z.string().meta({ format: 'date-time' }),
  up: z.boolean(),
  status: nInt.meta({ description: 'HTTP status (HTTP routes)' }),
  response_ms: z.number().nullable(),
  error: z.string().nullable(),
  error_code: messageRefSchema.nullable().meta({ description: "error as a message: route.check.* with the upstream's or network's own words as `detail`" }),
});
export const routeCheckResponse = z.object({ ok: z.literal(true), check: checkView });
export const routeChecksResponse = z.object({ ok: z.literal(true), checks: z.array(checkView) });
/** A route's circuit breaker right after a reset. */
export const breakerReset = z.object({
  route_id: z.number().int(),
  cb_failure_count: z.literal(0),
  cb_opened_at: z.null(),
  reset_at: z.string().meta({ format: 'date-time' }),
});
export type BreakerReset = z.infer<typeof breakerReset>;
export const breakerResetResponse = z.object({ ok: z.literal(true), circuit_breaker: breakerReset });
/** POST /routes/:id/wol: the magic packet the gateway companion was asked to send. */
const wakeResult = z.object({
  route_id: z.number().int(),
  gateway_peer_id: z.number().int(),
  mac: z.string(),
  sent_at: z.number().int().meta({ description: 'epoch ms' }),
  companion: z.unknown().meta({ description: "the gateway companion's answer, as it sent it" }),
});
export type WakeResult = z.infer<typeof wakeResult>;
export const wolResponse = z.object({ ok: z.literal(true), wol: wakeResult });
const headers = z.record(z.string(), z.array(z.string()));
export const traceResponse = z.object({
  ok: z.literal(true),
  route_id: z.number().int(),
  debug_enabled: z.boolean(),
  limit: z.number().int(),
  requests: z.array(
    z.object({
      time: z.string().meta({ format: 'date-time' }),
      method: z.string(),
      uri: z.string(),
      status: z.number().int(),
      duration_ms: z.number(),
      upstream: z.string().nullable(),
      client_ip: z.string().nullable(),
      host: z.string(),
      user_agent: z.string().nullable(),
      auth_user: z.string().nullable(),
      request_headers: headers.optional().meta({ description: 'with debug_enabled (credentials redacted)' }),
      response_headers: headers.optional(),
    }),
  ),
});
