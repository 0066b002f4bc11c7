// Dashboard figures: peers, routes, monitoring, traffic and the tunnel, from the database and the
// WireGuard service's last poll (never a `wg` call per request).
import { Op, QueryTypes } from 'sequelize';
import type { Deps } from '../deps.js';
import { series, totalsSince, type Period } from '../peers/traffic.js';
import { ONLINE_WINDOW_MS } from '../peers/view.js';
import type { WireGuardService } from '../wireguard/service.js';
import type { z } from 'zod';
import type { statsResponse } from './schema.js';

/** GET /dashboard/stats's answer without its `ok` (the shape is statsResponse's, schema.ts). */
export type DashboardStats = Omit<z.output<typeof statsResponse>, 'ok'>;

/** Local midnight of the day holding `now`. */
export function startOfDay(now: number): number {
  const d = new Date(now);
  d.setHours(0, 0, 0, 0);
  return d.getTime();
}

export class DashboardService {
  constructor(
    private deps: Deps,
    private wg: WireGuardService,
    /** uptime monitoring (resilience/monitor.ts); without it, the monitored-route count and the database round trip */
    private monitor?: { summary(): Promise<{ total: number; up: number; down: number; latency: number | null }> },
  ) {}

  async stats(): Promise<DashboardStats> {
    const now = this.deps.clock();
    const { Peer, Route } = this.deps.db.models;
    const [total, online, activeRoutes, allRoutes, monitored, today] = await Promise.all([
      Peer.count(),
      Peer.count({
        where: {
          enabled: true,
          latest_handshake: { [Op.gte]: now - ONLINE_WINDOW_MS },
          [Op.or]: [{ expires_at: null }, { expires_at: { [Op.gt]: now } }],
        },
      }),
      Route.count({ where: { enabled: true } }),
      Route.count(),
      Route.count({ where: { enabled: true, monitoring_enabled: true } }),
      totalsSince(this.deps.db.sequelize, startOfDay(now)),
    ]);
    const mon = await this.monitor?.summary();
    const rates = this.wg.trafficRates;
    return {
      peers: { total, online },
      routes: { active: activeRoutes, total: allRoutes },
      // Uptime monitoring (resilience/monitor.ts): last check of each monitored route.
      monitoring: mon ? { total: mon.total, up: mon.up, down: mon.down } : { total: monitored, up: 0, down: 0 },
      // Peers' view: upload = bytes the server received from peers (rx), download = bytes it sent (tx).
      traffic: { today: today.rx + today.tx, todayUpload: today.rx, todayDownload: today.tx, uploadRate: rates.rx, downloadRate: rates.tx },
      wireguard: { running: this.wg.isRunning },
      // Mean response time of the monitored backends that are up; without any, the database round trip.
      latency: mon?.latency ?? (await this.dbLatency()),
    };
  }

  /** Round trip of one trivial database query, in ms (the sidecar's own responsiveness). */
  private async dbLatency(): Promise<number> {
    const t0 = performance.now();
    await this.deps.db.sequelize.query('SELECT 1', { type: QueryTypes.SELECT });
    return Math.round((performance.now() - t0) * 100) / 100;
  }

  traffic(period: Extract<Period, '1h' | '24h' | '7d'>) {
    return series(this.deps.db.sequelize, period, this.deps.clock());
  }
}
