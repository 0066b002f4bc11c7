// MetricsService (ctx.metrics): the one prom-client registry of the container, served by GET /metrics
// (metrics/endpoints.ts). Every series is declared once in SERIES below, from which the service
// registers it and docs/reference/metrics.md is generated (npm run docs). Three kinds of series:
// - process metrics: prom-client's defaults (process_*, nodejs_*), collected at scrape time;
// - counted as things happen: route-auth verify outcomes (plain integer fields bumped on the hot
//   verify path, read at scrape time: RouteAuthOutcomes) and the proxy apply duration (histogram);
// - read at scrape time (refresh()): peers, routes, circuit breakers, gateways and webhook deliveries
//   from the database and the WireGuard poller's state, and per-route requests and latency from
//   Caddy's admin API's /metrics, where the host map counts per host (the renderer turns it on,
//   proxy/fragments/metrics.ts), whose host label is mapped here to the route that serves the host.
// Nothing of this runs between scrapes except the two counters.
import { collectDefaultMetrics, Histogram, Registry } from 'prom-client';
import { QueryTypes } from 'sequelize';
import type { Database } from '../db/index.js';
import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/logger.js';
import { isActive, isOnline } from '../peers/view.js';
import { parsePromText, type Sample } from './prom-text.js';
import { DELIVERY_STATUSES } from '../webhooks/model.js';
import { findRows } from '../db/define.js';

type MetricType = 'gauge' | 'counter' | 'histogram';

/** One series the service exposes: its name, type, labels (name → what its values are) and help text. */
export interface SeriesDecl {
  name: string;
  type: MetricType;
  labels: Readonly<Record<string, string>>;
  help: string;
}

/**
 * Every series of GET /metrics besides prom-client's default process metrics (process_*, nodejs_*),
 * in registration order. Read at scrape time from the current state, except the two counted as things
 * happen: the route-auth verify outcomes and the proxy apply duration.
 */
export const SERIES = [
  {
    name: 'gatehouse_proxy_apply_duration_seconds',
    type: 'histogram',
    labels: { result: '`ok`, `error`' },
    help: 'Time of one change of the configuration Caddy runs (a full POST /load or a set of host changes, POST /gatehouse/hostroute/changes), by result (ok, error); none in no-proxy mode',
  },
  {
    name: 'gatehouse_route_auth_verify_total',
    type: 'counter',
    labels: { outcome: '`allowed`, `login_required`, `basic_auth`, `denied`, `method_not_allowed`, `error`' },
    help: 'Forward-auth decisions of GET /route-auth/verify by outcome (allowed, login_required, basic_auth: a request to a basic-auth route without a share-link session, denied, method_not_allowed, error) since the start',
  },
  { name: 'gatehouse_peers', type: 'gauge', labels: {}, help: 'Peers configured' },
  { name: 'gatehouse_peers_online', type: 'gauge', labels: {}, help: 'Peers online (enabled, not expired, handshake within the last 3 minutes)' },
  { name: 'gatehouse_peer_online', type: 'gauge', labels: { peer_id: '', peer: 'the peer name' }, help: 'Whether a peer is online (1) or not (0)' },
  {
    name: 'gatehouse_peer_receive_bytes_total',
    type: 'counter',
    labels: { peer_id: '', peer: 'the peer name' },
    help: 'Bytes the server received from a peer through the tunnel (all time, as counted by the poller)',
  },
  {
    name: 'gatehouse_peer_transmit_bytes_total',
    type: 'counter',
    labels: { peer_id: '', peer: 'the peer name' },
    help: 'Bytes the server sent to a peer through the tunnel (all time, as counted by the poller)',
  },
  {
    name: 'gatehouse_peer_last_handshake_age_seconds',
    type: 'gauge',
    labels: { peer_id: '', peer: 'the peer name' },
    help: "Seconds since a peer's latest WireGuard handshake (active peers that ever shook hands)",
  },
  {
    name: 'gatehouse_routes',
    type: 'gauge',
    labels: { type: '`http`, `l4`', state: '`enabled`, `disabled`' },
    help: 'Routes by type (http, l4) and state (enabled, disabled)',
  },
  {
    name: 'gatehouse_route_requests_total',
    type: 'counter',
    labels: { route_id: '', domain: '' },
    help: "Requests Caddy served for a route: both servers, all methods, an HTTPS route's HTTP to HTTPS redirects included (from the host map's gatehouse_hostroute_requests_total in Caddy, per host)",
  },
  {
    name: 'gatehouse_route_request_duration_seconds',
    type: 'histogram',
    labels: { route_id: '', domain: '', code: 'the HTTP status' },
    help: "Round-trip time of a route's requests in Caddy, by status code, in Caddy's buckets (from the host map's gatehouse_hostroute_request_duration_seconds in Caddy, per host)",
  },
  {
    name: 'gatehouse_circuit_breaker_open',
    type: 'gauge',
    labels: { route_id: '', domain: '' },
    help: "Whether a route's circuit breaker is open or half-open (1) or closed (0); routes with the breaker enabled",
  },
  {
    name: 'gatehouse_circuit_breaker_failures',
    type: 'gauge',
    labels: { route_id: '', domain: '' },
    help: "Consecutive failures a route's circuit breaker last reported",
  },
  {
    name: 'gatehouse_route_closed_answers_total',
    type: 'counter',
    labels: { route_id: '', domain: '' },
    help: '403 answers of a route outside its access window since the sidecar started (its closed page; routes that answered at least one)',
  },
  {
    name: 'gatehouse_gateway_up',
    type: 'gauge',
    labels: { peer_id: '', gateway: 'the gateway peer name' },
    help: 'Whether a gateway companion is online (1) or not (0: offline or unknown)',
  },
  {
    name: 'gatehouse_gateways',
    type: 'gauge',
    labels: { status: '`online`, `offline`, `unknown`' },
    help: 'Gateway companions by status (online, offline, unknown)',
  },
  {
    name: 'gatehouse_webhook_deliveries',
    type: 'gauge',
    labels: { status: '`pending`, `delivered`, `failed`' },
    help: 'Rows of the webhook delivery log (webhook_deliveries) by status (pending, delivered, failed)',
  },
  {
    name: 'gatehouse_wireguard_up',
    type: 'gauge',
    labels: {},
    help: 'Whether the WireGuard interface was up (1) or not (0) at the last poll; absent when Gatehouse does not manage it',
  },
  {
    name: 'gatehouse_caddy_metrics_up',
    type: 'gauge',
    labels: {},
    help: "Whether Caddy's own metrics could be read at this scrape (1) or not (0); absent in no-proxy mode",
  },
] as const satisfies readonly SeriesDecl[];
type SeriesName = (typeof SERIES)[number]['name'];
const declared = (name: SeriesName): SeriesDecl => SERIES.find((x) => x.name === name)!;
interface Value {
  labels: Record<string, string | number>;
  value: number;
  metricName?: string;
}

/** A metric whose values are replaced as a whole at each scrape (prom-client's metric protocol: name, help, type, get()). */
export class SnapshotMetric {
  values: Value[] = [];
  readonly aggregator = 'sum';
  readonly name: string;
  readonly help: string;
  readonly type: MetricType;
  constructor(readonly decl: SeriesDecl) {
    this.name = decl.name;
    this.help = decl.help;
    this.type = decl.type;
  }
  get() {
    return { name: this.name, help: this.help, type: this.type, values: this.values, aggregator: this.aggregator };
  }
  reset(): void {
    this.values = [];
  }
}

/** Outcomes of GET /route-auth/verify, counted with one integer increment per request (route-auth/verify.ts). */
export class RouteAuthOutcomes {
  /** 204: a valid route session */
  allowed = 0;
  /** 302: not signed in, sent to the login page */
  login_required = 0;
  /** 200: a basic-auth route without a share-link session here (its basic auth decides) */
  basic_auth = 0;
  /** 403: refused by the route's IP filter (or a foreign host on a wildcard route) */
  denied = 0;
  /** 405: a method other than GET/HEAD */
  method_not_allowed = 0;
  /** 500: the decision failed */
  error = 0;
  count(status: number): void {
    if (status === 204) this.allowed++;
    else if (status === 302) this.login_required++;
    else if (status === 200) this.basic_auth++;
    else if (status === 403) this.denied++;
    else if (status === 405) this.method_not_allowed++;
    else this.error++;
  }
}
const OUTCOMES = ['allowed', 'login_required', 'basic_auth', 'denied', 'method_not_allowed', 'error'] as const;

/** What the scrape reads; each part is optional so the service works in every mode (no Caddy, no tunnel). */
export interface MetricsSources {
  db: Database;
  clock: Clock;
  log: Logger;
  /** the WireGuard poller's view of the interface */
  wireguard?: { readonly isRunning: boolean; readonly managed: boolean };
  /** Caddy's admin API (null in no-proxy mode) */
  caddy?: () => { metrics(timeoutMs?: number): Promise<string> } | null;
  /** every gateway with its status (gateways/service.ts list) */
  gateways?: () => Promise<{ peer_id: number; name: string; status: 'online' | 'offline' | 'unknown' }[]>;
  /** closed answers per route id (access-windows/service.ts) */
  closedAnswers?: () => ReadonlyMap<number, number>;
}

// Per-host series read from Caddy's admin /metrics: the host map's own (gatehouse_hostroute with
// `metrics: true`, proxy/fragments/metrics.ts), and Caddy's own per-host series of the host map
// (handler="gatehouse_hostroute"), which a configuration rendered before the host map counted by
// itself produces (Caddy may still run one until the sidecar's first load after an upgrade).
const HOST_MAP_REQUESTS = ['gatehouse_hostroute_requests_total', 'caddy_http_requests_total'];
const HOST_MAP_DURATION = ['gatehouse_hostroute_request_duration_seconds', 'caddy_http_request_duration_seconds'];
const CADDY_METRICS = new Set([...HOST_MAP_REQUESTS, ...HOST_MAP_DURATION.flatMap((n) => [`${n}_bucket`, `${n}_sum`, `${n}_count`])]);
const HOST_MAP_HANDLER = 'gatehouse_hostroute';
const num = (v: unknown): number => (v === null || v === undefined ? 0 : Number(v));
const bool = (v: unknown): boolean => v === true || v === 1 || v === '1' || v === 't' || v === 'true';

/** The route serving a host as Caddy labels it (any case, maybe with a port): exact domain first, then a one-label wildcard. */
export function routeForHost(byDomain: Map<string, { id: number; domain: string }>, host: string): { id: number; domain: string } | undefined {
  // Caddy labels the Host header as sent: without a port on 80/443, with it on other ports
  const h = host
    .toLowerCase()
    .replace(/:\d+$/, '')
    .replace(/^\[(.*)\]$/, '$1');
  const exact = byDomain.get(h);
  if (exact) return exact;
  const dot = h.indexOf('.');
  return dot > 0 ? byDomain.get(`*${h.slice(dot)}`) : undefined;
}

/**
 * The host map's per-host request counts and duration histograms folded into per-route series,
 * summed over the server (and Caddy's method) labels; the request count per route, the duration per
 * route and status code. The host label is the host map's key (exact or `*.` wildcard) or, in
 * Caddy's own series, the Host header (maybe with a port). Of Caddy's own series only the host map's
 * observations count (handler gatehouse_hostroute, one per request). Hosts no route serves
 * (`_other`, the admin domain) are left out. Pure.
 */
export function routeSeriesFromCaddy(samples: Sample[], byDomain: Map<string, { id: number; domain: string }>): { requests: Value[]; duration: Value[] } {
  const requests = new Map<string, Value>();
  const duration = new Map<string, Value>();
  const add = (into: Map<string, Value>, key: string, metricName: string | undefined, labels: Record<string, string | number>, v: number) => {
    const cur = into.get(key);
    if (cur) cur.value += v;
    else into.set(key, { labels, value: v, ...(metricName ? { metricName } : {}) });
  };
  for (const s of samples) {
    const host = s.labels.host;
    const own = s.name.startsWith('gatehouse_hostroute_');
    // one observation per request: the host map's. Caddy's own series also instrument named routes
    // (the shared reverse_proxy, handler "reverse_proxy"), which would count it twice.
    if (!host || (!own && s.labels.handler !== HOST_MAP_HANDLER)) continue;
    const r = routeForHost(byDomain, host);
    if (!r) continue;
    const base = { route_id: r.id, domain: r.domain };
    if (HOST_MAP_REQUESTS.includes(s.name)) {
      add(requests, String(r.id), undefined, base, s.value);
      continue;
    }
    const code = s.labels.code ?? '';
    const suffix = s.name.slice(HOST_MAP_DURATION[own ? 0 : 1].length);
    const metricName = `gatehouse_route_request_duration_seconds${suffix}`;
    if (suffix === '_bucket') add(duration, `${r.id}|${code}|b|${s.labels.le}`, metricName, { ...base, code, le: s.labels.le }, s.value);
    else add(duration, `${r.id}|${code}|${suffix}`, metricName, { ...base, code }, s.value);
  }
  const byRoute = (a: Value, b: Value) => Number(a.labels.route_id) - Number(b.labels.route_id);
  const les = (v: Value) => (v.labels.le === undefined ? Infinity : v.labels.le === '+Inf' ? Infinity - 1 : Number(v.labels.le));
  const order = (v: Value) => (v.metricName?.endsWith('_bucket') ? 0 : v.metricName?.endsWith('_sum') ? 1 : 2);
  const dur = [...duration.values()].sort(
    (a, b) => byRoute(a, b) || String(a.labels.code).localeCompare(String(b.labels.code)) || order(a) - order(b) || les(a) - les(b),
  );
  return { requests: [...requests.values()].sort(byRoute), duration: dur };
}

export class MetricsService {
  readonly registry = new Registry();
  readonly routeAuth = new RouteAuthOutcomes();
  /** Seconds of one configuration load into Caddy (POST /load), by result; nothing in no-proxy mode. */
  readonly proxyApply: Histogram<'result'>;
  private readonly m: Record<string, SnapshotMetric> = {};
  private inFlight: Promise<void> | null = null;

  constructor(private readonly src: MetricsSources) {
    collectDefaultMetrics({ register: this.registry });
    const apply = declared('gatehouse_proxy_apply_duration_seconds');
    this.proxyApply = new Histogram({
      name: apply.name,
      help: apply.help,
      labelNames: Object.keys(apply.labels) as ['result'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [this.registry],
    });
    const outcomes = this.routeAuth;
    const verify = new SnapshotMetric(declared('gatehouse_route_auth_verify_total'));
    verify.get = () => ({
      name: verify.name,
      help: verify.help,
      type: verify.type,
      aggregator: verify.aggregator,
      values: OUTCOMES.map((o) => ({ labels: { outcome: o }, value: outcomes[o] })),
    });
    this.registry.registerMetric(verify as never);
    for (const decl of SERIES) {
      if (decl.name === apply.name || decl.name === verify.name) continue;
      const metric = new SnapshotMetric(decl);
      this.m[decl.name] = metric;
      this.registry.registerMetric(metric as never);
    }
  }

  /** The text exposition (prom-client's format) after reading the current state once. */
  async scrape(): Promise<string> {
    await this.refresh();
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /** Reads the scrape-time series; concurrent scrapes share one read. */
  refresh(): Promise<void> {
    this.inFlight ??= this.read().finally(() => {
      this.inFlight = null;
    });
    return this.inFlight;
  }

  /** Replaces a series' values; a label its declaration does not name is a programming error. */
  private set(name: SeriesName, values: Value[]): void {
    const metric = this.m[name];
    for (const v of values) {
      for (const l of Object.keys(v.labels)) {
        if (!(l in metric.decl.labels) && !(l === 'le' && metric.type === 'histogram')) throw new Error(`metric ${name}: label ${l} is not declared in SERIES`);
      }
    }
    metric.values = values;
  }

  private async read(): Promise<void> {
    const { db } = this.src;
    const now = this.src.clock();
    const [peers, routes, gateways, deliveries, caddyText] = await Promise.all([
      findRows(db.models.Peer, { attributes: ['id', 'name', 'enabled', 'expires_at', 'latest_handshake', 'total_rx', 'total_tx'], order: [['id', 'ASC']] }),
      db.sequelize.query('SELECT id, domain, route_type, enabled, circuit_breaker_enabled, cb_failure_count, cb_opened_at FROM routes ORDER BY id', {
        type: QueryTypes.SELECT,
      }) as Promise<Record<string, unknown>[]>,
      this.src.gateways ? this.src.gateways() : Promise.resolve(null),
      this.webhookDeliveries(),
      this.caddyMetrics(),
    ]);

    // peers
    let online = 0;
    const peerOnline: Value[] = [];
    const rx: Value[] = [];
    const tx: Value[] = [];
    const age: Value[] = [];
    for (const p of peers) {
      const labels = { peer_id: Number(p.id), peer: p.name };
      const on = isOnline(p, now);
      if (on) online++;
      peerOnline.push({ labels, value: on ? 1 : 0 });
      rx.push({ labels, value: num(p.total_rx) });
      tx.push({ labels, value: num(p.total_tx) });
      const hs = p.latest_handshake === null ? null : Number(p.latest_handshake);
      if (hs !== null && hs > 0 && isActive(p, now)) age.push({ labels, value: Math.max(0, Math.round((now - hs) / 1000)) });
    }
    this.set('gatehouse_peers', [{ labels: {}, value: peers.length }]);
    this.set('gatehouse_peers_online', [{ labels: {}, value: online }]);
    this.set('gatehouse_peer_online', peerOnline);
    this.set('gatehouse_peer_receive_bytes_total', rx);
    this.set('gatehouse_peer_transmit_bytes_total', tx);
    this.set('gatehouse_peer_last_handshake_age_seconds', age);

    // routes, circuit breakers
    const byTypeState = new Map<string, number>();
    for (const type of ['http', 'l4']) for (const state of ['enabled', 'disabled']) byTypeState.set(`${type}|${state}`, 0);
    const cbOpen: Value[] = [];
    const cbFailures: Value[] = [];
    const byDomain = new Map<string, { id: number; domain: string }>();
    for (const r of routes) {
      const key = `${String(r.route_type)}|${bool(r.enabled) ? 'enabled' : 'disabled'}`;
      byTypeState.set(key, (byTypeState.get(key) ?? 0) + 1);
      const id = Number(r.id);
      const domain = String(r.domain);
      if (r.route_type === 'http' && bool(r.enabled)) byDomain.set(domain.toLowerCase(), { id, domain });
      if (bool(r.circuit_breaker_enabled)) {
        cbOpen.push({ labels: { route_id: id, domain }, value: r.cb_opened_at === null || r.cb_opened_at === undefined ? 0 : 1 });
        cbFailures.push({ labels: { route_id: id, domain }, value: num(r.cb_failure_count) });
      }
    }
    this.set(
      'gatehouse_routes',
      [...byTypeState].map(([k, value]) => {
        const [type, state] = k.split('|');
        return { labels: { type, state }, value };
      }),
    );
    this.set('gatehouse_circuit_breaker_open', cbOpen);
    this.set('gatehouse_circuit_breaker_failures', cbFailures);
    const closed = this.src.closedAnswers?.() ?? new Map<number, number>();
    const domains = new Map(routes.map((r) => [Number(r.id), String(r.domain)]));
    this.set(
      'gatehouse_route_closed_answers_total',
      [...closed].filter(([id]) => domains.has(id)).map(([id, value]) => ({ labels: { route_id: id, domain: domains.get(id)! }, value })),
    );

    // per-route traffic from Caddy
    if (caddyText === undefined) {
      this.set('gatehouse_caddy_metrics_up', []);
      this.set('gatehouse_route_requests_total', []);
      this.set('gatehouse_route_request_duration_seconds', []);
    } else {
      this.set('gatehouse_caddy_metrics_up', [{ labels: {}, value: caddyText === null ? 0 : 1 }]);
      const { requests, duration } = routeSeriesFromCaddy(caddyText === null ? [] : parsePromText(caddyText, (n) => CADDY_METRICS.has(n)), byDomain);
      this.set('gatehouse_route_requests_total', requests);
      this.set('gatehouse_route_request_duration_seconds', duration);
    }

    // gateways
    if (gateways) {
      const counts = { online: 0, offline: 0, unknown: 0 };
      for (const g of gateways) counts[g.status]++;
      this.set(
        'gatehouse_gateway_up',
        gateways.map((g) => ({ labels: { peer_id: g.peer_id, gateway: g.name }, value: g.status === 'online' ? 1 : 0 })),
      );
      this.set(
        'gatehouse_gateways',
        Object.entries(counts).map(([status, value]) => ({ labels: { status }, value })),
      );
    }

    this.set('gatehouse_webhook_deliveries', deliveries);

    const wg = this.src.wireguard;
    this.set('gatehouse_wireguard_up', wg?.managed ? [{ labels: {}, value: wg.isRunning ? 1 : 0 }] : []);
  }

  /** Rows of the webhook delivery log (webhooks/model.ts) by status; every status listed, 0 when none. */
  private async webhookDeliveries(): Promise<Value[]> {
    const rows = (await this.src.db.sequelize.query('SELECT status, COUNT(*) AS n FROM webhook_deliveries GROUP BY status', { type: QueryTypes.SELECT })) as {
      status: string;
      n: number | string;
    }[];
    const counts = new Map<string, number>(DELIVERY_STATUSES.map((st) => [st, 0]));
    for (const r of rows) counts.set(r.status, Number(r.n));
    return [...counts].map(([status, value]) => ({ labels: { status }, value }));
  }

  /** Caddy's metrics text; undefined without a Caddy to ask (no-proxy mode), null when it could not be read. */
  private async caddyMetrics(): Promise<string | null | undefined> {
    const client = this.src.caddy?.();
    if (!client) return undefined;
    try {
      return await client.metrics(3000);
    } catch (err) {
      this.src.log.debug("Caddy's metrics could not be read", { err: String(err) });
      return null;
    }
  }
}
