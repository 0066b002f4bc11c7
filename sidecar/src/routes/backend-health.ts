// The live state of each backend of the routes with several backends or a health check, as Caddy
// sees it: Caddy's reverse_proxy publishes whether each upstream is in its rotation (active health
// checks passed, not marked down) as the gauge caddy_reverse_proxy_upstreams_healthy{upstream=dial}
// on its admin API's /metrics (refreshed by Caddy every 10 s). The admin API's
// /reverse_proxy/upstreams lists only request and passive-failure counts, not the active checks'
// verdict, so the gauge is what is read. Read every 2 s, and only while such routes exist; a
// change of a backend's state is the event route_backend_down / route_backend_up (webhooks, live
// stream, activity), announced by the leader only in a cluster. GET /routes/:id/backends answers the states (the route detail page reloads
// it on those events).
import { Op } from 'sequelize';
import { z } from 'zod';
import type { AppContext } from '../app-context.js';
import { findRows } from '../db/define.js';
import { defineEndpoint, type Endpoint } from '../http/registry.js';
import { isActive } from '../peers/view.js';
import { dialOf } from '../proxy/fragments/lb.js';
import type { PeerTarget } from '../proxy/render-context.js';
import { rowToRoute, type Route } from './model.js';
import { routeBackendsResponse } from './traffic.js';
import { CaddyAdminClient } from '../proxy/admin-client.js';

export const BACKEND_STATE_INTERVAL_MS = 2000;
const GAUGE = /^caddy_reverse_proxy_upstreams_healthy\{upstream="([^"]+)"\} (\S+)$/gm;

export type BackendState = 'up' | 'down' | 'unknown';

interface Seen {
  state: 'up' | 'down';
  since: number;
}

export class BackendHealthService {
  private readonly states = new Map<string, Seen>(); // `${route_id} ${dial}`
  private checkedAt: number | null = null;
  private job: { stop(): void } | null = null;
  private running = false;

  private readonly client: CaddyAdminClient | null;

  constructor(private readonly deps: AppContext) {
    this.client = deps.config.manageCaddy ? new CaddyAdminClient(deps.config.caddyAdmin) : null;
  }

  start(): void {
    if (!this.deps.config.manageCaddy || this.job) return;
    this.job = this.deps.scheduler.every('route backend states', BACKEND_STATE_INTERVAL_MS, () => this.poll(), { scope: 'per-node' });
  }

  stop(): void {
    this.job?.stop();
    this.job = null;
  }

  /** The enabled HTTP routes whose backends are watched: several backends, or a health check. */
  private async watched(): Promise<Route[]> {
    const rows = await findRows(this.deps.db.models.Route, {
      where: { enabled: true, route_type: 'http', [Op.or]: [{ backend_peer_ids: { [Op.ne]: null } }, { health_check: { [Op.ne]: null } }] },
    });
    return rows.map(rowToRoute);
  }

  private async peers(routes: Route[]): Promise<Map<number, PeerTarget>> {
    const ids = [...new Set(routes.flatMap((r) => backendsOf(r).map((b) => b.peer_id)))];
    const rows = ids.length
      ? await findRows(this.deps.db.models.Peer, { where: { id: { [Op.in]: ids } }, attributes: ['id', 'address', 'enabled', 'expires_at'] })
      : [];
    const now = this.deps.clock();
    return new Map(rows.map((p) => [Number(p.id), { address: p.address, enabled: isActive(p, now) }]));
  }

  /** One read of Caddy's gauges; events for the backends whose state changed. */
  async poll(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      const routes = await this.watched();
      if (!routes.length) {
        this.states.clear();
        return;
      }
      const client = this.client;
      if (!client) return;
      let text: string;
      try {
        text = await client.metrics(3000);
      } catch {
        return; // Caddy not reachable now: states stay as they were
      }
      this.checkedAt = this.deps.clock();
      const gauges = new Map<string, number>();
      for (const m of text.matchAll(GAUGE)) gauges.set(m[1], Number(m[2]));
      const peers = await this.peers(routes);
      const live = new Set<string>();
      for (const r of routes) {
        for (const b of backendsOf(r)) {
          const dial = dialFor(b, peers, this.deps.config);
          if (!dial) continue;
          const key = `${r.id} ${dial}`;
          live.add(key);
          const g = gauges.get(dial);
          // no gauge: Caddy provisioned a reverse_proxy since its last refresh (it clears them): keep what was seen
          if (g === undefined) continue;
          const state = g >= 1 ? 'up' : 'down';
          const before = this.states.get(key);
          if (before?.state === state) continue;
          this.states.set(key, { state, since: this.checkedAt });
          // first sight of an up backend is no change (a backend is in the rotation until it fails)
          if (!before && state === 'up') continue;
          // in a cluster each node reads its own Caddy, and a standby's health checks cannot pass
          // (only the floating address's holder carries the tunnels): the leader, which holds it,
          // announces; the others keep their own states for GET /routes/:id/backends
          if (!this.deps.scheduler.isLeader()) continue;
          await this.deps.events.emit({
            type: state === 'down' ? 'route_backend_down' : 'route_backend_up',
            route_id: r.id,
            domain: r.domain,
            backend: dial,
            peer_id: b.peer_id,
          });
        }
      }
      for (const k of [...this.states.keys()]) if (!live.has(k)) this.states.delete(k);
    } finally {
      this.running = false;
    }
  }

  /** The backends of a route with their states. */
  async of(route: Route): Promise<z.infer<typeof routeBackendsResponse>> {
    const peers = await this.peers([route]);
    return {
      ok: true,
      route_id: route.id,
      backends: backendsOf(route).map((b, index) => {
        const dial = dialFor(b, peers, this.deps.config);
        const seen = dial ? this.states.get(`${route.id} ${dial}`) : undefined;
        return {
          index,
          target_kind: b.target_kind,
          peer_id: b.peer_id,
          target_host: b.target_host,
          target_port: b.target_port,
          weight: b.weight,
          dial,
          state: (seen?.state ?? 'unknown') as BackendState,
          since: seen ? new Date(seen.since).toISOString() : null,
        };
      }),
      checked_at: this.checkedAt === null ? null : new Date(this.checkedAt).toISOString(),
    };
  }
}

/** The route's backends: its list, or its single target as one. */
function backendsOf(r: Route): Route['backends'] {
  if (r.backends.length) return r.backends;
  if (r.target_kind === 'gateway') {
    return r.target_peer_id === null || r.target_lan_port === null
      ? []
      : [{ target_kind: 'gateway', peer_id: r.target_peer_id, target_host: r.target_lan_host, target_port: r.target_lan_port, weight: 1 }];
  }
  return r.peer_id === null || r.target_port === null
    ? []
    : [{ target_kind: 'peer', peer_id: r.peer_id, target_host: null, target_port: Number(r.target_port), weight: 1 }];
}

/** What Caddy dials for a backend (fragments/lb.ts routeUpstreams): a gateway's companion port for gateway targets. */
function dialFor(b: Route['backends'][number], peers: Map<number, PeerTarget>, config: AppContext['config']): string | null {
  const p = peers.get(b.peer_id);
  if (!p?.enabled) return null;
  const port = b.target_kind === 'gateway' ? config.gateways.proxyPort : b.target_port;
  return dialOf({ host: p.address.split('/')[0], port });
}

const services = new WeakMap<AppContext, BackendHealthService>();
export function backendHealth(ctx: AppContext): BackendHealthService {
  let s = services.get(ctx);
  if (!s) services.set(ctx, (s = new BackendHealthService(ctx)));
  return s;
}

export function backendHealthEndpoints(deps: AppContext): Endpoint[] {
  return [
    defineEndpoint({
      method: 'GET',
      path: '/routes/:id/backends',
      response: routeBackendsResponse,
      summary:
        "Each backend of the route (its single target, or every one of its backends) with its state as Caddy's reverse_proxy sees it (up: in the rotation; down: failed its health check), live: route_backend_down / route_backend_up",
      tags: ['routes'],
      handler: async ({ params }) => {
        const route = await deps.routes.getRoute(params.id);
        return backendHealth(deps).of(route);
      },
    }),
  ];
}
