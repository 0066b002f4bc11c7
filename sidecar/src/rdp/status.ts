// RDP route status (ctx.rdpStatus): is the route's target reachable along the path the route uses,
// and how fast. No Koa here.
//
// - internal: a TCP connect from this server to target_host:target_port. target_host is a VPN peer's
//   tunnel address or a LAN address behind a peer, so the connect goes through the WireGuard tunnel.
// - external: a TCP connect to the public address the client uses: external_host (or target_host)
//   at listen_port (or target_port).
// - both: both checks, each reported in `paths`; the route is reachable when either path is.
// - gateway: no connect from here (the target sits on a LAN behind a home gateway): the reachability
//   the gateway companion reports in its heartbeats (route_reachability) for the route's linked L4
//   route, plus the gateway's own status; an offline gateway or a missing report is unreachable.
//
// Checked for every route on a schedule (GATEHOUSE_RDP_STATUS_INTERVAL, default 60 s) and on demand
// (check()); the last result of each route is kept in memory (cached()). A change of a route's
// reachability against its previous result is the event rdp_status_changed (the first result after
// a start is not a change). Each result also carries the route's active maintenance window.
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import type { Deps } from '../deps.js';
import { msg, refOf, type MessageRef, type Msg } from '@gatehouse/common/messages/index.js';
import type { Job } from '../util/scheduler.js';
import type { GatewaysService } from '../gateways/service.js';
import type { GatewayState, MaintenanceWindow, PathCheck, RdpRouteStatus, StatusSummary } from './schema.js';

export type AccessMode = 'internal' | 'external' | 'both' | 'gateway';

/** What the ops services read of an RDP route (rdpcore's RdpRouteView has these fields). */
export interface RdpRouteLike {
  id: number;
  name: string;
  enabled: boolean;
  access_mode: AccessMode;
  target_host: string;
  target_port: number;
  external_host?: string | null;
  listen_port?: number | null;
  target_peer_id?: number | null;
  gateway_peer_id?: number | null;
  gateway_l4_route_id?: number | null;
  wol_enabled: boolean;
  wol_mac?: string | null;
}

/** The part of the RDP route service (ctx.rdp) the ops services use. */
export interface RdpRouteSource {
  get(id: number): Promise<RdpRouteLike>;
  list(): Promise<RdpRouteLike[]>;
  activeMaintenance(route: never, now: number): MaintenanceWindow | null;
}

const round = (ms: number) => Math.round(ms * 10) / 10;

/** A path's failure: its English text and its code (rdp.check.*). */
const failed = (m: Msg): { error: string; error_code: MessageRef } => ({ error: m.text, error_code: refOf(m) });

function describe(err: NodeJS.ErrnoException, timeoutMs: number): Msg {
  switch (err.code) {
    case 'ECONNREFUSED':
      return msg('rdp.check.refused');
    case 'ETIMEDOUT':
      return msg('rdp.check.timeout', { ms: timeoutMs });
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return msg('rdp.check.host_unreachable');
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return msg('rdp.check.not_resolved');
    default:
      return msg('rdp.check.network', { detail: err.code ?? err.message });
  }
}

/** A TCP connect to host:port: reachable with the connect latency, or the reason it is not. */
type TcpResult = { reachable: boolean; latency_ms: number | null; error: string | null; error_code: MessageRef | null };
export function tcpCheck(host: string, port: number, timeoutMs: number): Promise<TcpResult> {
  return new Promise((resolve) => {
    const started = performance.now();
    const sock = net.connect({ host, port });
    let done = false;
    const finish = (r: TcpResult) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      sock.destroy();
      resolve(r);
    };
    const timer = setTimeout(() => finish({ reachable: false, latency_ms: null, ...failed(msg('rdp.check.timeout', { ms: timeoutMs })) }), timeoutMs);
    sock.once('connect', () => finish({ reachable: true, latency_ms: round(performance.now() - started), error: null, error_code: null }));
    sock.once('error', (err: NodeJS.ErrnoException) => finish({ reachable: false, latency_ms: null, ...failed(describe(err, timeoutMs)) }));
  });
}

/** Runs fn over items, at most `width` at a time. */
async function pool<T, R>(items: T[], width: number, fn: (t: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, worker));
  return out;
}

export class RdpStatus {
  private cache = new Map<number, RdpRouteStatus>();
  private inFlight = new Map<number, Promise<RdpRouteStatus>>();
  private job: Job | null = null;

  constructor(
    private readonly deps: Deps,
    private readonly rdp: RdpRouteSource,
    private readonly gateways: GatewaysService,
  ) {}

  /** The last result of a route (null before its first check). */
  cached(routeId: number): RdpRouteStatus | null {
    return this.cache.get(routeId) ?? null;
  }

  private async maintenance(route: RdpRouteLike, now: number): Promise<MaintenanceWindow | null> {
    return this.rdp.activeMaintenance(route as never, now) ?? null;
  }

  /** Checks one route now (concurrent checks of the same route share one run), keeps and returns the result. */
  check(route: RdpRouteLike): Promise<RdpRouteStatus> {
    const running = this.inFlight.get(route.id);
    if (running) return running;
    const p = this.run(route).finally(() => this.inFlight.delete(route.id));
    this.inFlight.set(route.id, p);
    return p;
  }

  /** The kept result of a route, checking it first when it has none or `refresh` is set. */
  async status(routeId: number, refresh = false): Promise<RdpRouteStatus> {
    const route = await this.rdp.get(routeId);
    const hit = this.cache.get(route.id);
    if (hit && !refresh) return { ...hit, name: route.name, enabled: route.enabled, maintenance: await this.maintenance(route, this.deps.clock()) };
    return this.check(route);
  }

  /** Every route's status (checking all of them first with `refresh`, and those never checked in any case), with the counts. */
  async all(refresh = false): Promise<{ summary: StatusSummary; routes: RdpRouteStatus[] }> {
    const routes = await this.rdp.list();
    const ids = new Set(routes.map((r) => r.id));
    for (const id of [...this.cache.keys()]) if (!ids.has(id)) this.cache.delete(id);
    const now = this.deps.clock();
    const out = await pool(routes, 8, async (r) => {
      const hit = this.cache.get(r.id);
      if (hit && !refresh) return { ...hit, name: r.name, enabled: r.enabled, maintenance: await this.maintenance(r, now) };
      return this.check(r);
    });
    const summary: StatusSummary = { total: out.length, enabled: 0, disabled: 0, reachable: 0, unreachable: 0, in_maintenance: 0 };
    for (const s of out) {
      if (s.enabled) summary.enabled++;
      else summary.disabled++;
      if (s.reachable) summary.reachable++;
      else summary.unreachable++;
      if (s.maintenance) summary.in_maintenance++;
    }
    return { summary, routes: out };
  }

  /** The scheduled run: every route checked. Returns how many changed reachability. */
  async checkAll(): Promise<number> {
    if (!this.deps.features.isEnabled('remote_desktop')) return 0; // licence lapsed: nothing to watch
    const routes = await this.rdp.list();
    const ids = new Set(routes.map((r) => r.id));
    for (const id of [...this.cache.keys()]) if (!ids.has(id)) this.cache.delete(id);
    let changed = 0;
    await pool(routes, 8, async (r) => {
      const before = this.cache.get(r.id)?.reachable;
      const s = await this.check(r);
      if (before !== undefined && before !== s.reachable) changed++;
    });
    return changed;
  }

  start(): void {
    this.job ??= this.deps.scheduler.every('rdp status check', this.deps.config.rdpOps.statusIntervalMs, () => this.checkAll(), { scope: 'singleton' });
    void this.job.runNow().catch(() => undefined);
  }

  stop(): void {
    this.job?.stop();
    this.job = null;
  }

  private async run(route: RdpRouteLike): Promise<RdpRouteStatus> {
    const timeout = this.deps.config.rdpOps.checkTimeoutMs;
    const paths: PathCheck[] = [];
    let gateway: GatewayState | null = null;
    const tcp = async (path: 'internal' | 'external', host: string | null | undefined, port: number | null | undefined) => {
      if (!host || !port) {
        paths.push({ path, host: host ?? null, port: port ?? null, reachable: false, latency_ms: null, ...failed(msg('rdp.check.no_address')) });
        return;
      }
      paths.push({ path, host, port, ...(await tcpCheck(host, port, timeout)) });
    };
    const externalHost = route.external_host || route.target_host;
    const externalPort = route.listen_port ?? route.target_port;
    switch (route.access_mode) {
      case 'internal':
        await tcp('internal', route.target_host, route.target_port);
        break;
      case 'external':
        await tcp('external', externalHost, externalPort);
        break;
      case 'both':
        await Promise.all([tcp('internal', route.target_host, route.target_port), tcp('external', externalHost, externalPort)]);
        paths.sort((a, b) => (a.path === 'internal' ? -1 : 1) - (b.path === 'internal' ? -1 : 1));
        break;
      case 'gateway': {
        const r = await this.viaGateway(route);
        paths.push(r.path);
        gateway = r.gateway;
        break;
      }
    }
    const now = this.deps.clock();
    const up = paths.filter((p) => p.reachable);
    const latencies = up.map((p) => p.latency_ms).filter((l): l is number => l !== null);
    const result: RdpRouteStatus = {
      rdp_route_id: route.id,
      name: route.name,
      enabled: route.enabled,
      path: route.access_mode,
      reachable: up.length > 0,
      latency_ms: latencies.length ? Math.min(...latencies) : null,
      checked_at: now,
      paths,
      gateway,
      maintenance: await this.maintenance(route, now),
      ...(up.length
        ? { error: null, error_code: null }
        : failed(
            paths.length
              ? msg('rdp.check.paths', { paths: paths.map((p) => ({ path: p.path, reason: p.error_code ?? { code: 'rdp.check.unreachable' } })) })
              : msg('rdp.check.not_checked'),
          )),
    };
    const before = this.cache.get(route.id);
    this.cache.set(route.id, result);
    if (before && before.reachable !== result.reachable) {
      await this.deps.events.emit({
        type: 'rdp_status_changed',
        rdp_route_id: route.id,
        name: route.name,
        reachable: result.reachable,
        previous: before.reachable,
        latency_ms: result.latency_ms,
        path: route.access_mode,
        error: result.error,
        error_code: result.error_code,
      });
    }
    return result;
  }

  /** The companion's report for the linked L4 route, and the gateway's status. */
  private async viaGateway(route: RdpRouteLike): Promise<{ path: PathCheck; gateway: GatewayState | null }> {
    const l4 = route.gateway_l4_route_id ?? null;
    const base: PathCheck = {
      path: 'gateway',
      host: route.target_host,
      port: route.target_port,
      reachable: false,
      latency_ms: null,
      error: null,
      error_code: null,
    };
    if (!route.gateway_peer_id) return { path: { ...base, ...failed(msg('rdp.check.no_gateway')) }, gateway: null };
    let view;
    try {
      view = await this.gateways.view(route.gateway_peer_id);
    } catch (err) {
      return { path: { ...base, ...failed(msg('rdp.check.gateway_error', { detail: (err as Error).message })) }, gateway: null };
    }
    const gateway: GatewayState = {
      peer_id: view.peer_id,
      name: view.name,
      status: view.status,
      status_reason: view.status_reason,
      last_seen_at: view.last_seen_at,
      l4_route_id: l4,
    };
    // no fresh heartbeat: nothing the gateway says is current. A fresh one counts per route even when
    // the gateway as a whole is judged offline (it is, when none of its LAN targets answers).
    if (['no_tokens', 'no_heartbeat', 'heartbeat_stale'].includes(view.status_detail.code)) {
      return {
        path: { ...base, ...failed(msg('rdp.check.gateway_down', { name: view.name, status: view.status, reason: view.status_reason_code })) },
        gateway,
      };
    }
    if (l4 === null) return { path: { ...base, ...failed(msg('rdp.check.no_linked_route')) }, gateway };
    const reports = Array.isArray(view.health?.route_reachability)
      ? (view.health.route_reachability as { route_id: number; reachable: boolean; latency_ms?: number | null }[])
      : [];
    const rep = reports.find((x) => Number(x.route_id) === l4);
    if (!rep) return { path: { ...base, ...failed(msg('rdp.check.not_reported', { name: view.name, route_id: l4 })) }, gateway };
    const latency = typeof rep.latency_ms === 'number' ? rep.latency_ms : null;
    return {
      path: {
        ...base,
        reachable: !!rep.reachable,
        latency_ms: rep.reachable ? latency : null,
        ...(rep.reachable
          ? { error: null, error_code: null }
          : failed(msg('rdp.check.gateway_cannot_reach', { name: view.name, host: route.target_host, port: route.target_port }))),
      },
      gateway,
    };
  }
}
