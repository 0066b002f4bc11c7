// The cluster's change feed: a committed write on one node is live on every node
// (docs/guides/cluster.md "How changes reach every node").
//
// Publishing. The writes announce what they changed at the one place each kind already passes:
// - routes (and everything that hangs on a route: route auth, protection, resilience, gateway and
//   RDP-linked routes, custom certificates): ProxyService's write batch (proxy/service.ts), with
//   the batch's "changed hosts" scope (route ids, or 'all'). The NOTIFY is sent INSIDE the batch's
//   transaction, after Caddy accepted the change: PostgreSQL delivers it when, and only if, the
//   transaction commits, so a receiver never reads rows older than the notice;
// - peers: PeersService's one tunnel path (applyToTunnel), after its write, with the routes that
//   render from the peer;
// - settings (the licence and the Network settings are settings too): SettingsStore.set/delete;
// - route-auth sessions ended (sign-out, revocation): the verify view's drop (route-auth/view.ts).
// Each notice is one small JSON text on one channel (cluster/feed-payload.ts), split under
// NOTIFY's 8000-byte limit.
//
// Receiving. Every node LISTENs on a dedicated connection (pg, outside Sequelize's pool) and
// reconnects with backoff (100 ms doubling to 5 s) when it drops. A notice from another node is
// applied to this node's own Caddy and WireGuard through the same paths its own writes take:
// route ids → ProxyService.apply({routes}) (the hosts of those routes rendered from the database by
// the same pure renderer and planned against what this node's Caddy runs: per-host puts and
// deletes, proxy/apply.ts); peers → WireGuardService.reconcilePeer (set or remove one peer);
// settings → the settings cache dropped, the licence and the Network settings read again and
// everything rendered and compared (a full load only when the frame changed); backup jobs → their
// schedules read again; jobs → the singleton jobs a follower asked for run now, here if this node
// leads (the others ignore the ask). Every notice drops the route-auth caches it concerns.
//
// Catch-up. On every (re)connect, when a sender's sequence numbers show a gap, and every
// catchUpMs (default 5 min), the node compares what it runs with the database and repairs only what
// differs: ProxyService.apply() renders everything and plans host by host against its applied
// state (the per-host comparison of the reconcile loop; Caddy vs that state is the reconcile
// loop's own job), WireGuardService.fullSync() syncs the interface to the database's peer set
// (adds, updates and removes only the peers that differ), and the caches are dropped.
import type { Client as PgClient } from 'pg';
import type { Transaction } from 'sequelize';
import type { Database } from '../db/index.js';
import type { Logger } from '../util/logger.js';
import type { TimerHandle, Timers } from '../util/clock.js';
import { decodeNotice, encodeChange, FEED_CHANNEL, isEmptyChange, type FeedChange } from './feed-payload.js';

/** What a notice from another node is applied to (wired in app-context.ts). */
export interface FeedTargets {
  /** Re-render these routes' hosts ('all': everything) from the database and send what differs to this node's Caddy. */
  applyRoutes(routes: number[] | 'all', reason: string): Promise<unknown>;
  /** Set or remove one peer on this node's WireGuard interface as the database holds it (key: its key before the change). */
  reconcilePeer(id: number, key: string | null): Promise<void>;
  /** Bring the interface to the database's peer set (only the peers that differ change). */
  syncPeers(): Promise<unknown>;
  /**
   * The settings cache dropped and what reads settings at start read again (licence, Network
   * settings). `keys`: the keys written (absent: catch-up). Resolves whether the proxy must be
   * rendered and compared (false for bookkeeping keys no rendering reads).
   */
  reloadSettings(keys?: string[]): Promise<boolean>;
  /** Drop the route-auth caches: the domain map, and (sessions) every cached session. */
  dropCaches(o: { sessions: boolean }): void;
  /** Read the backup jobs' schedules again (their rows changed on another node). */
  reloadBackupSchedules(): Promise<void>;
  /** Run these singleton jobs now if this node leads (another node asked). */
  runJobs(names: string[]): void;
}

export interface ClusterFeedOptions {
  db: Database;
  /** PostgreSQL URL of the shared database (the listener's own connection). */
  databaseUrl: string;
  /** This node's name: its own notices are not applied again. */
  node: string;
  log: Logger;
  timers: Timers;
  targets: FeedTargets;
  /** Reconnect backoff bounds (ms). */
  retryMinMs?: number;
  retryMaxMs?: number;
}

export interface FeedStats {
  listening: boolean;
  published: number;
  received: number;
  applied: number;
  catch_ups: number;
  reconnects: number;
  last_error: string | null;
}

/** Every how long a node compares itself with the database besides the (re)connects and gaps. */
export const FEED_CATCH_UP_MS = 5 * 60_000;

export class ClusterFeed {
  private seq = 0;
  /** per sender, the last sequence number seen */
  private lastSeq = new Map<string, number>();
  private client: PgClient | null = null;
  private running = false;
  private retryMs: number;
  private retryTimer: TimerHandle | null = null;
  private catching: Promise<void> | null = null;
  private catchAgain = false;
  private readonly stats = { published: 0, received: 0, applied: 0, catch_ups: 0, reconnects: 0, last_error: null as string | null };
  /** Resolves the waiters of the next (re)connect (tests, start()). */
  private connectedWaiters: (() => void)[] = [];

  constructor(private readonly o: ClusterFeedOptions) {
    this.retryMs = o.retryMinMs ?? 100;
  }

  get node(): string {
    return this.o.node;
  }

  status(): FeedStats {
    return { listening: this.client !== null, ...this.stats };
  }

  /** The backend process id of the listening connection (null while not connected). */
  listenerPid(): number | null {
    // reason: pg's Client carries its backend's process id, which its type does not declare
    return (this.client as unknown as { processID?: number } | null)?.processID ?? null;
  }

  // ------------------------------------------------------------------ publishing

  /**
   * NOTIFYs a change. With `transaction`: inside it (delivered when it commits; a failure throws,
   * and the write fails with it). Without: at once (the write has committed).
   */
  async publish(change: FeedChange, transaction?: Transaction): Promise<void> {
    if (isEmptyChange(change)) return;
    for (const text of encodeChange(this.o.node, change, () => ++this.seq)) {
      await this.o.db.sequelize.query('SELECT pg_notify(:channel, :text)', { replacements: { channel: FEED_CHANNEL, text }, transaction });
      this.stats.published++;
    }
  }

  /** publish() after a committed write, not awaited by the write: a failure is logged (the other nodes' catch-up repairs it). */
  publishCommitted(change: FeedChange): void {
    void this.publish(change).catch((err: unknown) => {
      this.stats.last_error = String(err);
      this.o.log.warn('cluster: publishing a change failed; the other nodes catch up from the database', { err: String(err) });
    });
  }

  // ------------------------------------------------------------------ receiving

  /** Starts listening (resolves once the first connection listens, or its first attempt failed: it retries). */
  async start(): Promise<void> {
    if (this.running) return;
    this.running = true;
    await this.connect();
  }

  /** Stops listening (no reconnect) and waits for a catch-up in flight. */
  async stop(): Promise<void> {
    this.running = false;
    this.retryTimer?.cancel();
    this.retryTimer = null;
    const c = this.client;
    this.client = null;
    await c?.end().catch(() => undefined);
    await this.catching?.catch(() => undefined);
  }

  /** Resolves when the listener is connected (at once when it is). */
  connected(): Promise<void> {
    if (this.client) return Promise.resolve();
    return new Promise((resolve) => this.connectedWaiters.push(resolve));
  }

  private async connect(): Promise<void> {
    if (!this.running) return;
    const { default: pg } = await import('pg');
    const client = new pg.Client({ connectionString: this.o.databaseUrl });
    let lost = false;
    const onLost = (err?: Error) => {
      if (lost) return;
      lost = true;
      if (this.client === client) this.client = null;
      if (!this.running) return;
      this.stats.last_error = err ? String(err) : 'connection ended';
      this.o.log.warn('cluster: the change feed connection was lost; reconnecting', { err: this.stats.last_error, retry_ms: this.retryMs });
      this.scheduleReconnect();
      void client.end().catch(() => undefined);
    };
    client.on('error', onLost);
    client.on('end', () => onLost());
    client.on('notification', (n) => {
      if (n.channel === FEED_CHANNEL && n.payload) this.receive(n.payload);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${FEED_CHANNEL}`);
    } catch (err) {
      onLost(err as Error);
      return;
    }
    if (!this.running || lost) {
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
    this.retryMs = this.o.retryMinMs ?? 100;
    for (const w of this.connectedWaiters.splice(0)) w();
    // What happened while nobody listened: compare with the database.
    void this.catchUp('listener connected');
  }

  private scheduleReconnect(): void {
    if (this.retryTimer || !this.running) return;
    const wait = this.retryMs;
    this.retryMs = Math.min(this.retryMs * 2, this.o.retryMaxMs ?? 5000);
    this.retryTimer = this.o.timers.after(wait, () => {
      this.retryTimer = null;
      this.stats.reconnects++;
      void this.connect();
    });
  }

  private receive(text: string): void {
    const notice = decodeNotice(text);
    if (!notice) {
      this.o.log.warn('cluster: a change notice that is not one was ignored', { payload: text.slice(0, 200) });
      return;
    }
    if (notice.node === this.o.node) return;
    this.stats.received++;
    const last = this.lastSeq.get(notice.node);
    this.lastSeq.set(notice.node, notice.seq);
    // A gap: notices of that node were missed (or a transaction that published rolled back): compare.
    // A smaller number: the sender restarted (its count starts at 1 again).
    const gap = last !== undefined && notice.seq > last + 1;
    void this.apply(notice.node, notice.change).then(
      () => {
        this.stats.applied++;
        if (gap) void this.catchUp(`notices of ${notice.node} missed`);
      },
      (err: unknown) => {
        this.stats.last_error = String(err);
        this.o.log.warn('cluster: applying a change from another node failed; catching up from the database', { from: notice.node, err: String(err) });
        void this.catchUp('a change failed to apply');
      },
    );
  }

  /** Applies another node's change to this node. */
  private async apply(from: string, change: FeedChange): Promise<void> {
    const t = this.o.targets;
    const reason = `cluster: change on ${from}`;
    t.dropCaches({ sessions: !!change.caches?.includes('route_auth_sessions') || !!change.settings?.length });
    const work: Promise<unknown>[] = [];
    if (change.settings?.length) {
      // settings first: the rendering below reads them (a global setting makes it a full load)
      const render = await t.reloadSettings(change.settings);
      if (render || change.routes) work.push(t.applyRoutes(render ? 'all' : change.routes!, reason));
    } else if (change.routes) work.push(t.applyRoutes(change.routes, reason));
    for (const p of change.peers ?? []) work.push(t.reconcilePeer(p.id, p.key));
    if (change.caches?.includes('backup_schedules')) work.push(t.reloadBackupSchedules());
    if (change.jobs?.length) t.runJobs(change.jobs);
    await Promise.all(work);
  }

  /**
   * Compares this node with the database and repairs what differs (see the top of this file).
   * Coalesced: a call while one runs makes one more run after it.
   */
  catchUp(reason: string): Promise<void> {
    if (this.catching) {
      this.catchAgain = true;
      return this.catching;
    }
    this.catching = (async () => {
      try {
        do {
          this.catchAgain = false;
          this.stats.catch_ups++;
          const t = this.o.targets;
          t.dropCaches({ sessions: true });
          await t.reloadSettings();
          await Promise.all([t.applyRoutes('all', `cluster catch-up (${reason})`), t.syncPeers(), t.reloadBackupSchedules()]);
        } while (this.catchAgain && this.running);
      } catch (err) {
        this.stats.last_error = String(err);
        this.o.log.warn('cluster: catching up from the database failed; the next catch-up retries', { reason, err: String(err) });
      } finally {
        this.catching = null;
      }
    })();
    return this.catching;
  }
}
