// The access-window scheduler (ctx.accessWindows): applies the boundaries of routes' and peers'
// access_schedule (schedule.ts) to Caddy and WireGuard.
//
// - One timer over all schedules, armed for the earliest next boundary (nextChange) and re-armed
//   after each boundary, at start (state from the database: survives restarts), and after every
//   write to the routes or peers table (the bus's rows_changed). It is re-armed at least every
//   MAX_SLEEP_MS as well, so a jump of the system clock is healed within minutes.
// - At a boundary the routes whose state changed are re-applied host by host (proxy.apply with
//   their ids: the renderer reads closedRouteIds from the snapshot's time), and the peers whose
//   state changed are reconciled one by one (wireguard.reconcilePeer: isActive says whether a peer
//   belongs on the interface, so the resync loop never puts a closed peer back).
// - Each change at a boundary is an event: route_access_closed / route_access_opened,
//   peer_access_closed / peer_access_opened (activity log, webhooks, live stream). A change made by
//   an edit (a new schedule) is applied by the edit itself and is not such an event.
// - Closed answers: the sidecar's closed page (closed-page.ts) counts per route since the start
//   (access_state.closed_answers of the route view; gatehouse_route_closed_answers_total).
import { Op } from 'sequelize';
import type { Database } from '../db/index.js';
import type { EventBus } from '../events.js';
import type { ProxyService } from '../proxy/service.js';
import type { WireGuardService } from '../wireguard/service.js';
import type { Clock, TimerHandle, Timers } from '../util/clock.js';
import type { Logger } from '../util/logger.js';
import { findRows, asBool } from '../db/define.js';
import { isOpenAt, nextChange, parseSchedule } from './schedule.js';
import type { AccessSchedule } from './schema.js';
import { isExpired } from '../peers/view.js';

/** The longest the timer sleeps without looking again (heals a jump of the system clock). */
export const MAX_SLEEP_MS = 5 * 60_000;
/** A boundary is applied this long after its instant (timers may fire a little early). */
const SLACK_MS = 20;

export interface AccessWindowsOptions {
  db: Database;
  clock: Clock;
  timers: Timers;
  log: Logger;
  events: EventBus;
  proxy: ProxyService;
  wireguard: WireGuardService;
}

interface Tracked {
  kind: 'route' | 'peer';
  id: number;
  name: string;
  schedule: AccessSchedule;
  open: boolean;
  /** peers: on the interface apart from the window (enabled, not expired) */
  active: boolean;
  public_key?: string;
}

const key = (kind: Tracked['kind'], id: number) => `${kind}:${id}`;

export class AccessWindowsService {
  private tracked = new Map<string, Tracked>();
  private timer: TimerHandle | null = null;
  private running: Promise<void> | null = null;
  private again = false;
  private stopped = true;
  private unsubscribe: (() => void) | null = null;
  private readonly closed = new Map<number, number>();
  /** the instant the timer is armed for (null: none) */
  armedFor: number | null = null;
  /** boundaries applied since the start */
  boundaries = 0;

  constructor(private readonly o: AccessWindowsOptions) {}

  /** Reads every schedule (no event for the state found), arms the timer, follows table writes. */
  async start(): Promise<void> {
    this.stopped = false;
    // both phases: a write outside a transaction has only 'write'; inside one, 'commit' follows
    this.unsubscribe = this.o.events.on('rows_changed', () => this.refresh());
    await this.run(false);
  }

  stop(): void {
    this.stopped = true;
    this.unsubscribe?.();
    this.unsubscribe = null;
    this.timer?.cancel();
    this.timer = null;
    this.armedFor = null;
  }

  /** Re-reads the schedules and re-arms (after an edit: the edit applied its own change). */
  refresh(): void {
    if (this.stopped) return;
    void this.run(false);
  }

  /** Resolves when no evaluation is in flight. */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  /** Closed answers of a route since the start. */
  closedAnswers(routeId: number): number {
    return this.closed.get(routeId) ?? 0;
  }
  allClosedAnswers(): Map<number, number> {
    return this.closed;
  }
  countClosed(routeId: number): void {
    this.closed.set(routeId, (this.closed.get(routeId) ?? 0) + 1);
  }

  /** The state of the route or peer now, as the scheduler holds it (undefined: no schedule). */
  stateOf(kind: Tracked['kind'], id: number): boolean | undefined {
    return this.tracked.get(key(kind, id))?.open;
  }

  private run(boundary: boolean): Promise<void> {
    if (this.running) {
      // one evaluation at a time; a request during one runs once more after it (a boundary wins)
      this.again ||= true;
      if (boundary) this.pendingBoundary = true;
      return this.running;
    }
    this.running = (async () => {
      try {
        let b = boundary;
        do {
          this.again = false;
          await this.evaluate(b || this.pendingBoundary);
          this.pendingBoundary = false;
          b = false;
        } while (this.again && !this.stopped);
      } catch (err) {
        this.o.log.warn('access windows: evaluation failed', { err: String(err) });
        this.arm(this.o.clock() + 5000);
      } finally {
        this.running = null;
      }
    })();
    return this.running;
  }
  private pendingBoundary = false;

  private async read(): Promise<Map<string, Omit<Tracked, 'open'>>> {
    const { Route, Peer } = this.o.db.models;
    const out = new Map<string, Omit<Tracked, 'open'>>();
    const now = this.o.clock();
    const routes = await findRows(Route, {
      attributes: ['id', 'domain', 'enabled', 'route_type', 'access_schedule'],
      where: { access_schedule: { [Op.ne]: null } },
    });
    for (const r of routes) {
      const schedule = parseSchedule(r.access_schedule);
      if (schedule && asBool(r.enabled)) out.set(key('route', Number(r.id)), { kind: 'route', id: Number(r.id), name: r.domain, schedule, active: true });
    }
    const peers = await findRows(Peer, {
      attributes: ['id', 'name', 'public_key', 'enabled', 'expires_at', 'access_schedule'],
      where: { access_schedule: { [Op.ne]: null } },
    });
    for (const p of peers) {
      const schedule = parseSchedule(p.access_schedule);
      if (schedule)
        out.set(key('peer', Number(p.id)), {
          kind: 'peer',
          id: Number(p.id),
          name: p.name,
          schedule,
          active: asBool(p.enabled) && !isExpired(p, now),
          public_key: p.public_key,
        });
    }
    return out;
  }

  /**
   * Computes every schedule's state now; at a boundary (timer), applies and announces the changes.
   * Otherwise (start, an edit) only records them: the start's full load and sync, and an edit's own
   * apply, already follow the schedule.
   */
  private async evaluate(boundary: boolean): Promise<void> {
    const now = this.o.clock();
    const rows = await this.read();
    const next = new Map<string, Tracked>();
    const routes: Tracked[] = [];
    const peers: Tracked[] = [];
    for (const [k, t] of rows) {
      const open = isOpenAt(t.schedule, now);
      const before = this.tracked.get(k);
      const item = { ...t, open };
      next.set(k, item);
      if (!boundary || !before || before.open === open || JSON.stringify(before.schedule) !== JSON.stringify(t.schedule)) continue;
      if (t.kind === 'route') routes.push(item);
      else peers.push(item);
    }
    this.tracked = next;
    if (routes.length) {
      await this.o.proxy
        .apply({ routes: routes.map((r) => r.id), reason: 'access window' })
        .catch((err) => this.o.log.warn('access windows: proxy apply failed (the reconcile loop retries)', { err: String(err) }));
    }
    for (const p of peers) {
      if (!p.active) continue; // disabled or expired: off the interface either way
      await this.o.wireguard
        .reconcilePeer({ id: p.id, public_key: p.public_key! })
        .catch((err) => this.o.log.warn('access windows: WireGuard change failed (the resync retries)', { peer_id: p.id, err: String(err) }));
    }
    for (const t of [...routes, ...peers]) {
      const at = nextChange(t.schedule, now);
      const iso = at === null ? null : new Date(at).toISOString();
      if (t.kind === 'route') {
        await this.o.events.emit(
          t.open
            ? { type: 'route_access_opened', route_id: t.id, domain: t.name, closes_at: iso }
            : { type: 'route_access_closed', route_id: t.id, domain: t.name, opens_at: iso },
        );
      } else {
        await this.o.events.emit(
          t.open
            ? { type: 'peer_access_opened', peer_id: t.id, name: t.name, closes_at: iso }
            : { type: 'peer_access_closed', peer_id: t.id, name: t.name, opens_at: iso },
        );
      }
    }
    if (boundary) this.boundaries++;
    let earliest: number | null = null;
    for (const t of next.values()) {
      const at = nextChange(t.schedule, now);
      if (at !== null && (earliest === null || at < earliest)) earliest = at;
    }
    this.arm(earliest);
  }

  private arm(at: number | null): void {
    this.timer?.cancel();
    this.timer = null;
    if (this.stopped) return;
    const now = this.o.clock();
    const due = Math.min(at ?? Infinity, now + MAX_SLEEP_MS);
    this.armedFor = at;
    this.timer = this.o.timers.after(Math.max(0, due - now) + SLACK_MS, () => {
      this.timer = null;
      void this.run(true);
    });
  }
}
