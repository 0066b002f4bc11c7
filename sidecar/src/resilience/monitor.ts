// Uptime monitoring (monitoring_enabled): every interval (settings key monitoring_interval_seconds,
// default 30 s) each enabled HTTP route with monitoring on is checked with a real request to its
// backend through the tunnel: GET / to the route's upstream (peer tunnel address:target_port, or
// the gateway companion), Host = the route's domain, no credentials, 10 s timeout, no redirects
// followed; https when backend_https (certificate not verified, SNI = domain, like the proxy).
// Up = the backend answered with a status below 500. TCP L4 routes are checked with a TCP connect
// to the upstream the layer4 proxy dials (up = the connection was accepted within the timeout;
// status null). UDP L4 routes cannot be monitored (a UDP service cannot be told up without speaking
// its protocol): the routes service refuses monitoring_enabled on them, and they are never counted.
// Every check is stored in route_checks (the newest HISTORY_PER_ROUTE per route are kept); a change
// of up/down is an activity event.
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { Op, QueryTypes } from 'sequelize';
import type { Database } from '../db/index.js';
import type { EventBus } from '../events.js';
import { routeUpstream } from '../proxy/fragments/upstream.js';
import type { PeerTarget, ProxySettings } from '../proxy/render-context.js';
import { isActive } from '../peers/view.js';
import { rowToRoute, type Route } from '../routes/model.js';
import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/logger.js';
import type { Job, Scheduler } from '../util/scheduler.js';
import { findRows } from '../db/define.js';
import { msg } from '@gatehouse/common/messages/index.js';
import { routeCheckError } from '@gatehouse/common/messages/read-back.js';
import type { z } from 'zod';
import type { checkView } from '../routes/schema.js';

export const DEFAULT_MONITOR_INTERVAL_S = 30;
export const CHECK_TIMEOUT_MS = 10_000;
export const HISTORY_PER_ROUTE = 1000;

/** The routes the monitor checks (and the dashboard counts): HTTP routes and TCP L4 routes. */
export const MONITORABLE = { [Op.or]: [{ route_type: 'http' }, { route_type: 'l4', l4_protocol: 'tcp' }] };

/** Whether a route can be monitored (HTTP, or L4 over TCP). */
export const monitorable = (r: Pick<Route, 'route_type' | 'l4_protocol'>): boolean =>
  r.route_type === 'http' || (r.route_type === 'l4' && r.l4_protocol === 'tcp');

/** One uptime check as the API shows it (GET /routes/:id/checks). */
export type CheckResult = z.infer<typeof checkView>;

export interface MonitorOptions {
  db: Database;
  clock: Clock;
  log: Logger;
  /** route_up / route_down (the activity rows come from them) */
  events: EventBus;
  settings: ProxySettings;
  /** The sidecar's scheduler (deps.scheduler): start() runs the periodic work on it. */
  scheduler: Scheduler;
}

export class MonitorService {
  /** Last known state per route (loaded from the history on first use). */
  private last = new Map<number, { up: boolean; response_ms: number | null }>();
  private loaded = false;
  private job: Job | null = null;
  private interval = DEFAULT_MONITOR_INTERVAL_S;
  private readonly scheduler: Scheduler;

  constructor(private readonly o: MonitorOptions) {
    this.scheduler = o.scheduler;
  }

  /** The interval the scheduler runs at, in seconds; null when it is not running. */
  get intervalSeconds(): number | null {
    return this.job ? this.interval : null;
  }

  start(intervalS = DEFAULT_MONITOR_INTERVAL_S): void {
    this.interval = intervalS;
    this.job?.stop();
    this.job = this.scheduler.every('uptime monitoring', intervalS * 1000, () => this.checkAll(), { scope: 'singleton' });
  }

  stop(): void {
    this.job?.stop();
    this.job = null;
  }

  /** A new interval, from now on (a running round finishes); no-op when not started. */
  reschedule(intervalS: number): void {
    if (!this.job) return;
    this.interval = intervalS;
    this.job.reschedule(intervalS * 1000);
  }

  private async loadLast(): Promise<void> {
    if (this.loaded) return;
    this.loaded = true;
    const rows = (await this.o.db.sequelize.query(
      'SELECT c.route_id, c.up, c.response_ms FROM route_checks c WHERE c.id IN (SELECT MAX(id) FROM route_checks GROUP BY route_id)',
      { type: QueryTypes.SELECT },
    )) as { route_id: number; up: unknown; response_ms: number | null }[];
    for (const r of rows)
      if (!this.last.has(Number(r.route_id)))
        this.last.set(Number(r.route_id), {
          up: r.up === true || r.up === 1 || r.up === '1',
          response_ms: r.response_ms === null ? null : Number(r.response_ms),
        });
  }

  /** {total, up, down} over the monitored enabled routes, and the mean response time of those up. */
  async summary(): Promise<{ total: number; up: number; down: number; latency: number | null }> {
    await this.loadLast();
    const ids = await findRows(this.o.db.models.Route, { where: { enabled: true, monitoring_enabled: true, ...MONITORABLE }, attributes: ['id'] });
    let up = 0;
    let down = 0;
    const times: number[] = [];
    for (const { id } of ids) {
      const s = this.last.get(Number(id));
      if (!s) continue;
      if (s.up) {
        up++;
        if (s.response_ms !== null) times.push(s.response_ms);
      } else down++;
    }
    return { total: ids.length, up, down, latency: times.length ? Math.round((times.reduce((a, b) => a + b, 0) / times.length) * 10) / 10 : null };
  }

  async checkAll(): Promise<CheckResult[]> {
    const rows = await findRows(this.o.db.models.Route, { where: { enabled: true, monitoring_enabled: true, ...MONITORABLE } });
    const out: CheckResult[] = [];
    for (const r of rows) out.push(await this.check(rowToRoute(r)));
    return out;
  }

  private async peers(ids: number[]): Promise<Map<number, PeerTarget>> {
    const rows = await findRows(this.o.db.models.Peer, { where: { id: { [Op.in]: ids } }, attributes: ['id', 'address', 'enabled', 'expires_at'] });
    const now = this.o.clock();
    return new Map(rows.map((p) => [Number(p.id), { address: p.address, enabled: isActive(p, now) }]));
  }

  /** One check of one route now: stored, transitions logged, returned. */
  async check(route: Route): Promise<CheckResult> {
    if (!monitorable(route)) throw new Error(`route ${route.id} cannot be monitored (UDP)`);
    await this.loadLast();
    const peers = await this.peers([route.peer_id, route.target_peer_id].filter((x): x is number => x !== null));
    const up = routeUpstream(route, { settings: this.o.settings, peers });
    const at = this.o.clock();
    let res: { status: number | null; ms: number | null; error: string | null };
    if ('unavailable' in up) res = { status: null, ms: null, error: up.unavailable };
    else if (route.route_type === 'l4') res = await probeTcp(up.host, up.port);
    else res = await probe(up.host, up.port, route);
    const isUp = route.route_type === 'l4' ? res.error === null && res.ms !== null : res.status !== null && res.status < 500;
    await this.o.db.sequelize.query('INSERT INTO route_checks (route_id, checked_at, up, status, response_ms, error) VALUES (?, ?, ?, ?, ?, ?)', {
      replacements: [route.id, at, isUp, res.status, res.ms, res.error?.slice(0, 255) ?? null],
    });
    await this.o.db.sequelize.query(
      'DELETE FROM route_checks WHERE route_id = ? AND id < (SELECT MIN(k.id) FROM (SELECT id FROM route_checks WHERE route_id = ? ORDER BY id DESC LIMIT ?) k)',
      { replacements: [route.id, route.id, HISTORY_PER_ROUTE] },
    );
    const prev = this.last.get(route.id);
    this.last.set(route.id, { up: isUp, response_ms: res.ms });
    if (prev && prev.up !== isUp) {
      await this.o.events.emit({
        type: isUp ? 'route_up' : 'route_down',
        route_id: route.id,
        domain: route.domain,
        status: res.status,
        response_ms: res.ms,
        error: res.error,
      });
    }
    const error = res.error?.slice(0, 255) ?? null;
    return {
      route_id: route.id,
      checked_at: new Date(at).toISOString(),
      up: isUp,
      status: res.status,
      response_ms: res.ms,
      error,
      error_code: routeCheckError(error),
    };
  }

  /** The newest checks of a route, newest first. */
  async history(routeId: number, limit = 100): Promise<CheckResult[]> {
    const rows = (await this.o.db.sequelize.query('SELECT * FROM route_checks WHERE route_id = ? ORDER BY id DESC LIMIT ?', {
      replacements: [routeId, limit],
      type: QueryTypes.SELECT,
    })) as Record<string, unknown>[];
    return rows.map((r) => ({
      route_id: Number(r.route_id),
      checked_at: new Date(Number(r.checked_at)).toISOString(),
      up: r.up === true || r.up === 1,
      status: r.status === null ? null : Number(r.status),
      response_ms: r.response_ms === null ? null : Number(r.response_ms),
      error: (r.error as string | null) ?? null,
      error_code: routeCheckError((r.error as string | null) ?? null),
    }));
  }
}

/** TCP L4: a connection to the upstream, closed at once (no data sent). */
function probeTcp(host: string, port: number): Promise<{ status: number | null; ms: number | null; error: string | null }> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    const sock = net.connect({ host, port });
    sock.setTimeout(CHECK_TIMEOUT_MS);
    sock.once('connect', () => {
      const ms = Math.round((performance.now() - t0) * 10) / 10;
      sock.destroy();
      resolve({ status: null, ms, error: null });
    });
    sock.once('timeout', () => sock.destroy(new Error(msg('route.check.tcp_timeout', { s: CHECK_TIMEOUT_MS / 1000 }).text)));
    sock.once('error', (err) => {
      sock.destroy();
      resolve({ status: null, ms: null, error: err.message.slice(0, 255) });
    });
  });
}

function probe(host: string, port: number, route: Route): Promise<{ status: number | null; ms: number | null; error: string | null }> {
  const tls = route.backend_https && route.target_kind !== 'gateway';
  const hostHeader = route.domain.startsWith('*.') ? `monitor${route.domain.slice(1)}` : route.domain;
  const t0 = performance.now();
  return new Promise((resolve) => {
    const opts: https.RequestOptions = {
      host,
      port,
      method: 'GET',
      path: '/',
      timeout: CHECK_TIMEOUT_MS,
      agent: false,
      headers: { Host: hostHeader, 'User-Agent': 'Gatehouse-Monitor/1', Accept: '*/*', Connection: 'close' },
      ...(tls ? { rejectUnauthorized: false, servername: route.domain.startsWith('*.') ? undefined : route.domain } : {}),
    };
    const req = (tls ? https : http).request(opts, (res) => {
      const ms = Math.round((performance.now() - t0) * 10) / 10;
      res.resume();
      res.on('error', () => undefined);
      req.destroy();
      resolve({ status: res.statusCode ?? null, ms, error: null });
    });
    req.on('timeout', () => req.destroy(new Error(msg('route.check.timeout', { s: CHECK_TIMEOUT_MS / 1000 }).text)));
    req.on('error', (err) => resolve({ status: null, ms: null, error: err.message.slice(0, 255) }));
    req.end();
  });
}
