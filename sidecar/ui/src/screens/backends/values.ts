// The route form's part for several backends, load balancing, health checks, header operations and
// compression (sidecar/src/routes/traffic.ts): the values the inputs hold, made from a route
// (trafficValues) and turned into the request's fields (trafficBody). The route's own target fields
// are its first backend: the rows here are the backends after it. The server's `fields` keys name
// the request (`backends.2.target_port`, `request_headers.set.X-Foo`, `request_headers.delete.0`);
// the *Key helpers give the key of a row's input so its message appears there.
import type { HEADER_PLACEHOLDERS } from '@server/routes/traffic';
import type { CreateRouteBody, Route } from '../../protocol';

export type LbPolicy = Route['lb_policy'];
export type Encoding = Route['compression'][number];
export const LB_POLICY_LIST: readonly LbPolicy[] = ['round_robin', 'least_conn', 'ip_hash', 'first', 'cookie'];
export const ENCODING_LIST: readonly Encoding[] = ['zstd', 'gzip'];

/** The placeholders a header value may hold, listed in the hint (the type below fails when the server's list gains one). */
export const PLACEHOLDERS = ['{client_ip}', '{host}', '{route_id}', '{route_domain}', '{user}'] as const;
type Missing = Exclude<(typeof HEADER_PLACEHOLDERS)[number], (typeof PLACEHOLDERS)[number]>;
export const placeholdersComplete: [Missing] extends [never] ? true : Missing = true;

/** One backend after the route's target, as its inputs hold it (empty number input: null). */
export interface BackendRow {
  /** the row's key on screen (not sent) */
  uid: number;
  target_kind: Route['target_kind'];
  peer_id: number | null;
  target_host: string;
  target_port: number | null;
  weight: number | null;
}
/** One header operation: set the header to a value, or delete it. */
export interface HeaderRow {
  name: string;
  action: 'set' | 'delete';
  value: string;
}
export type HeaderDir = 'request_headers' | 'response_headers';

/** The form values of this part (a part of the route form's values). */
export interface TrafficValues {
  extra_backends: BackendRow[];
  /** the weight of the route's own target, the first backend */
  target_weight: number | null;
  lb_policy: LbPolicy;
  lb_cookie_name: string;
  health_check_enabled: boolean;
  health_check: { path: string; interval_s: number | null; timeout_s: number | null; expect_status: number | null };
  header_rows: Record<HeaderDir, HeaderRow[]>;
  compression: Encoding[];
}

/** The route's target fields as the form holds them: its first backend. */
export interface TargetValues {
  target_kind: Route['target_kind'];
  peer_id: number | null;
  target_port: number | null;
  target_peer_id: number | null;
  target_lan_host: string;
  target_lan_port: number | null;
}

type TrafficRoute = Pick<Route, 'backends' | 'lb_policy' | 'lb_cookie_name' | 'health_check' | 'request_headers' | 'response_headers' | 'compression'>;

const headerRows = (ops: Route['request_headers']): HeaderRow[] =>
  ops
    ? [
        ...Object.entries(ops.set).map(([name, value]): HeaderRow => ({ name, action: 'set', value })),
        ...ops.delete.map((name): HeaderRow => ({ name, action: 'delete', value: '' })),
      ]
    : [];

let uids = 0;
export const emptyBackend = (): BackendRow => ({ uid: ++uids, target_kind: 'peer', peer_id: null, target_host: '', target_port: null, weight: 1 });
export const emptyHeader = (): HeaderRow => ({ name: '', action: 'set', value: '' });

export function trafficValues(r: TrafficRoute | null): TrafficValues {
  const list = r?.backends ?? [];
  const hc = r?.health_check;
  return {
    extra_backends: list.slice(1).map((b) => ({
      uid: ++uids,
      target_kind: b.target_kind,
      peer_id: b.peer_id,
      target_host: b.target_host ?? '',
      target_port: b.target_port,
      weight: b.weight,
    })),
    target_weight: list[0]?.weight ?? 1,
    lb_policy: r?.lb_policy ?? 'round_robin',
    lb_cookie_name: r?.lb_cookie_name ?? '',
    health_check_enabled: !!hc,
    health_check: hc ? { ...hc } : { path: '/', interval_s: 10, timeout_s: 5, expect_status: 200 },
    header_rows: { request_headers: headerRows(r?.request_headers ?? null), response_headers: headerRows(r?.response_headers ?? null) },
    compression: r ? [...r.compression] : [],
  };
}

/** A row counts unless it is wholly empty (a row just added and left blank). */
const used = (h: HeaderRow) => h.name.trim() !== '' || h.value !== '';

/** The request's {set, delete} of header rows, and for each row the `fields` key of its name (null: left out). */
export function headerPlan(rows: HeaderRow[], dir: HeaderDir): { ops: { set: Record<string, string>; delete: string[] } | null; keys: (string | null)[] } {
  const set: Record<string, string> = {};
  const del: string[] = [];
  const keys = rows.map((h) => {
    if (!used(h)) return null;
    const name = h.name.trim();
    if (h.action === 'delete') {
      del.push(name);
      return `${dir}.delete.${del.length - 1}`;
    }
    set[name] = h.value;
    return `${dir}.set.${name}`;
  });
  return { ops: keys.some((k) => k !== null) ? { set, delete: del } : null, keys };
}

/** The `fields` key of a backend row's input: the rows are the request's backends after the first. */
export const backendKey = (row: number, field?: keyof BackendRow) => `backends.${row + 1}${field ? `.${field}` : ''}`;

type BackendIn = NonNullable<CreateRouteBody['backends']>[number];
/** A backend as sent; an empty input is sent as null so the server's message appears at it. */
type BackendOut = Omit<BackendIn, 'peer_id' | 'target_port'> & { peer_id: number | null; target_port: number | null };

function mainBackend(v: TargetValues, weight: number | null): BackendOut {
  const w = weight === null ? {} : { weight };
  return v.target_kind === 'gateway'
    ? { target_kind: 'gateway', peer_id: v.target_peer_id, target_host: v.target_lan_host.trim() || null, target_port: v.target_lan_port, ...w }
    : { target_kind: 'peer', peer_id: v.peer_id, target_host: null, target_port: v.target_port, ...w };
}

const rowBackend = (b: BackendRow): BackendOut => ({
  target_kind: b.target_kind,
  peer_id: b.peer_id,
  target_host: b.target_kind === 'gateway' ? b.target_host.trim() || null : null,
  target_port: b.target_port,
  ...(b.weight === null ? {} : { weight: b.weight }),
});

/**
 * The request fields of this part. HTTP: `backends` lists the route's target first, then the rows
 * ([] without rows: the target alone); the policy only with several backends; compression sets
 * compress_enabled. L4: every one of them cleared (the server refuses them there).
 */
export function trafficBody(v: TrafficValues & TargetValues, http: boolean): Partial<CreateRouteBody> {
  if (!http) {
    return {
      backends: [],
      lb_policy: null,
      lb_cookie_name: null,
      health_check: null,
      request_headers: null,
      response_headers: null,
      compression: [],
      compress_enabled: false,
    };
  }
  const several = v.extra_backends.length > 0;
  const backends = several ? [mainBackend(v, v.target_weight), ...v.extra_backends.map(rowBackend)] : [];
  const hc = v.health_check;
  const compression = ENCODING_LIST.filter((e) => v.compression.includes(e));
  return {
    // reason: an empty peer or port input is sent as null on purpose: the server's message then appears at that input
    backends: backends as BackendIn[],
    lb_policy: several ? v.lb_policy : null,
    lb_cookie_name: several && v.lb_policy === 'cookie' ? v.lb_cookie_name.trim() || null : null,
    health_check: v.health_check_enabled
      ? {
          ...(hc.path.trim() ? { path: hc.path.trim() } : {}),
          ...(hc.interval_s === null ? {} : { interval_s: hc.interval_s }),
          ...(hc.timeout_s === null ? {} : { timeout_s: hc.timeout_s }),
          ...(hc.expect_status === null ? {} : { expect_status: hc.expect_status }),
        }
      : null,
    request_headers: headerPlan(v.header_rows.request_headers, 'request_headers').ops,
    response_headers: headerPlan(v.header_rows.response_headers, 'response_headers').ops,
    compression,
    compress_enabled: compression.length > 0,
  };
}
