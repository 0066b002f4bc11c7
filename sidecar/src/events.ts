// Typed domain events: what happened in the product, emitted ONCE at the place where it happens
// and consumed by whoever cares (caches, the activity log, and the coming webhooks and live UI).
//
// - DomainEvent is a discriminated union on `type`; the type names are the webhook event kinds.
// - bus.emit(event) delivers to every subscriber in subscription order and resolves when all have
//   run; a subscriber that throws is logged ("event subscriber failed") and never fails the emitter.
//   emit(event, { transaction }) delivers after that transaction commits, and nothing on rollback.
// - Every delivered event gets an envelope: seq (1, 2, 3, ... in delivery order), id
//   ("<boot>-<seq>", the SSE id), at (the clock's time). The last `keep` envelopes are kept, so a
//   stream can resume: since(lastEventId) gives what came after, or null when that id is from
//   another run of the process or too old (the client reloads instead).
//   emit(event, { transient: true }) delivers with an envelope but keeps it out of that ring
//   (periodic samples such as peer_traffic: large, soon stale, and never worth replaying).
// - on(type | types, handler) / onAny(handler) return an unsubscribe function; handlers get the
//   payload typed by its `type`.
// - watchTables(): the one place model hooks are installed: every write to the routes and peers
//   tables is a `rows_changed` event, which the caches (route auth's verify view, the gateways'
//   token and configuration caches) subscribe to.
import type { Transaction } from 'sequelize';
import type { Clock } from './util/clock.js';
import type { Logger } from './util/logger.js';

/** A row of the activity log as the API shows it (logs/activity.ts writes them). */
export interface ActivityEntry {
  id: number;
  severity: string;
  source: string;
  event_type: string;
  message: string;
  details: Record<string, unknown> | null;
  user_id: number | null;
  ip: string | null;
  created_at: string;
  timestamp: number;
}

/** Who did it: the acting user's id (null for the system, a token without user, a peer's agent). */
type Actor = { actor: number | null };

export type PeerEvent =
  | ({ type: 'peer_created'; peer_id: number; name: string; address: string; peer_type: string } & Actor)
  | ({ type: 'peer_updated'; peer_id: number; name: string; fields: string[] } & Actor)
  | ({ type: 'peer_enabled' | 'peer_disabled'; peer_id: number; name: string } & Actor)
  | ({ type: 'peer_deleted'; peer_id: number; name: string; address: string } & Actor)
  | { type: 'peer_expired'; peer_id: number; name: string; expires_at: string; enabled: boolean }
  | { type: 'peer_online' | 'peer_offline'; peer_id: number; name: string; endpoint: string | null; latest_handshake: number | null }
  | PeerTrafficEvent;

/**
 * Transfer rates from the WireGuard poller (bytes per second over the last poll interval; rx is what
 * the server received from the peer): the peers that moved data, and each once more at 0 when it stops.
 */
export type PeerTrafficEvent = {
  type: 'peer_traffic';
  interval_s: number;
  /** all peers together */
  rx_rate: number;
  tx_rate: number;
  peers: { peer_id: number; rx_rate: number; tx_rate: number; total_rx: number; total_tx: number }[];
};

/** Peer groups and the tag registry (configuration of the peers screen). */
export type GroupTagEvent =
  | ({ type: 'peer_group_created'; group_id: number; name: string } & Actor)
  | ({ type: 'peer_group_updated'; group_id: number; name: string; fields: string[] } & Actor)
  | ({ type: 'peer_group_deleted'; group_id: number; name: string; peers_ungrouped: number } & Actor)
  | ({ type: 'tag_created'; tag_id: number; name: string } & Actor)
  | ({ type: 'tag_renamed'; from: string; to: string; registered: boolean; peers_updated: number } & Actor)
  | ({ type: 'tag_deleted'; name: string; registered: boolean; peers_updated: number } & Actor);

/** Accounts and API tokens (admin screens; streamed to admins only). */
export type AccountEvent =
  | ({ type: 'user_created'; user_id: number; username: string; role: string } & Actor)
  | ({ type: 'user_updated'; user_id: number; username: string; fields: string[] } & Actor)
  | ({ type: 'user_deleted'; user_id: number; username: string } & Actor)
  | ({ type: 'token_created'; token_id: number; name: string; scopes: string[] } & Actor)
  | ({ type: 'token_revoked' | 'token_fingerprint_reset'; token_id: number; name: string } & Actor)
  | ({ type: 'token_updated'; token_id: number; name: string; fields: string[] } & Actor)
  /** A desktop client registered a machine (or a registered machine got a new peer): src/client-api. */
  | ({ type: 'client_registered'; machine_id: number; token_id: number; peer_id: number; peer_name: string; hostname: string; platform: string; client_version: string; new_machine: boolean } & Actor);

/** Server-wide settings changed (admin screens; streamed to admins only). */
export type SettingsEvent =
  | ({ type: 'settings_changed'; section: 'default_theme'; theme: string } & Actor)
  | ({ type: 'settings_changed'; section: 'security'; lockout: { max_attempts?: number; duration?: number } } & Actor)
  | ({ type: 'settings_changed'; section: 'monitoring'; interval_seconds: number; previous: number } & Actor)
  | ({ type: 'smtp_updated'; host: string; port: number; secure: boolean; user: string | null; password_changed: boolean } & Actor);

export type RouteEvent =
  | ({ type: 'route_created'; route_id: number; domain: string; route_type: string } & Actor)
  | ({ type: 'route_updated'; route_id: number; domain: string; fields: string[] } & Actor)
  | ({ type: 'route_enabled' | 'route_disabled'; route_id: number; domain: string } & Actor)
  | ({ type: 'route_deleted'; route_id: number; domain: string } & Actor)
  | ({ type: 'routes_batch'; action: 'enable' | 'disable' | 'delete'; route_ids: number[] } & Actor)
  | { type: 'route_up' | 'route_down'; route_id: number; domain: string; status: number | null; response_ms: number | null; error: string | null }
  /** Route auth (the visitor login in front of a route) configured, changed or removed. */
  | ({ type: 'route_auth_created' | 'route_auth_updated'; route_id: number; domain: string; method: string; two_factor_method: string | null; sessions_ended: boolean; password_changed: boolean } & Actor)
  | ({ type: 'route_auth_deleted'; route_id: number; domain: string } & Actor)
  | { type: 'circuit_open'; route_id: number; failure_count: number }
  | { type: 'circuit_closed'; route_id: number; open_seconds: number };

/** RDP routes (rdp/service.ts). */
export type RdpRouteEvent =
  | ({ type: 'rdp_route_created'; rdp_route_id: number; name: string; access_mode: string } & Actor)
  | ({ type: 'rdp_route_updated'; rdp_route_id: number; name: string; fields: string[] } & Actor)
  | ({ type: 'rdp_route_deleted'; rdp_route_id: number; name: string } & Actor)
  | ({ type: 'rdp_route_toggled'; rdp_route_id: number; name: string; enabled: boolean } & Actor);

export type GatewayStatusName = 'online' | 'offline' | 'unknown';
export type GatewayEvent = {
  type: 'gateway_online' | 'gateway_offline' | 'gateway_unknown';
  peer_id: number;
  name: string;
  from: GatewayStatusName;
  to: GatewayStatusName;
  reason: string;
  last_seen_at: number | null;
  at: number;
};

export type AuthEvent =
  | { type: 'login_failed'; username: string; failures: number; ip: string | null }
  | { type: 'account_locked'; username: string; failures: number; until: number | null; ip: string | null }
  /** A Gatehouse user was deleted or got a new password: whatever they signed in to with it ends (route auth). */
  | { type: 'user_credentials_changed'; user_id: number; reason: 'deleted' | 'password' };

/**
 * A write to a table that caches are built from, by any writer (services, tests, batch jobs):
 * announced by watchTables() from the one set of model hooks, once when written and once more when
 * the write's transaction commits (a reader may have refilled a cache from pre-commit data).
 */
export type DataEvent = { type: 'rows_changed'; table: WatchedTable; destroyed: boolean; phase: 'write' | 'commit' };
export type WatchedTable = 'routes' | 'peers';

export type SystemEvent =
  /** A new proxy configuration is live (or, in no-proxy mode, rendered). */
  | { type: 'config_changed'; target: 'proxy'; config_hash: string; reason: string | null }
  /** The WireGuard interface went up or away, or a full sync started or stopped failing (error). */
  | { type: 'wireguard_state'; interface: string; running: boolean; mode: 'kernel' | 'userspace' | null; error: string | null; reason: string }
  /** The Caddy process (managed mode) is ready after a (re)start, exited, or was stopped. */
  | { type: 'caddy_state'; running: boolean; pid: number | null; reason: string }
  /** A row was written to the activity log (the live UI's activity feed). */
  | { type: 'activity_recorded'; entry: ActivityEntry };

/**
 * Operations (issue 18): backups and the licence. Emitted by the backup service (manual and scheduled
 * runs) and the licence service (activate, refresh, expiry, removal); webhooks deliver them.
 */
export type OperationsEvent =
  | { type: 'backup_completed'; job_id: number | null; target: 'download' | 'local' | 's3'; file: string | null; bytes: number; duration_ms: number }
  | { type: 'backup_failed'; job_id: number | null; target: 'download' | 'local' | 's3'; error: string }
  | ({ type: 'licence_changed'; reason: 'activated' | 'refreshed' | 'expired' | 'removed' | 'grace_ended' | 'revoked'; plan: string; features: string[]; expires_at: number | null } & Actor)
  /** Every sealed value is now under a new master key (masterkey/rotation.ts; source: cli or api). */
  | ({ type: 'master_key_rotated'; source: 'cli' | 'api'; sealed_values: number; tables: Record<string, number>; hooks: string[] } & Actor);

/**
 * Webhooks (src/webhooks): the admin's changes, and the delivery log (a delivery was queued, or an
 * attempt finished; transient) with a delivery that failed for good. Not deliverable by webhooks.
 */
export type WebhookAdminEvent =
  | ({ type: 'webhook_created'; webhook_id: number; name: string; url: string; events: string[] } & Actor)
  | ({ type: 'webhook_updated'; webhook_id: number; name: string; fields: string[] } & Actor)
  | ({ type: 'webhook_enabled' | 'webhook_disabled'; webhook_id: number; name: string } & Actor)
  | ({ type: 'webhook_deleted'; webhook_id: number; name: string } & Actor)
  | { type: 'webhook_delivery_updated'; webhook_id: number; delivery_id: number; event: string; status: 'pending' | 'delivered' | 'failed'; attempts: number; response_code: number | null }
  | { type: 'webhook_delivery_failed'; webhook_id: number; name: string; delivery_id: number; event: string; attempts: number; error: string | null };

/**
 * RDP routes' operations (issue 17, rdp/status.ts and rdp/sessions.ts): a route's reachability
 * changed (scheduled or on-demand check), a desktop client's session started or ended.
 */
export type RdpOpsEvent =
  | { type: 'rdp_status_changed'; rdp_route_id: number; name: string; reachable: boolean; previous: boolean; latency_ms: number | null; path: string; error: string | null }
  | { type: 'rdp_session_started'; session_id: number; rdp_route_id: number; name: string; client_name: string | null; peer_id: number | null; token_id: number | null; user_id: number | null; machine_id: number | null }
  | ({ type: 'rdp_session_ended'; session_id: number; rdp_route_id: number; name: string; client_name: string | null; reason: RdpSessionEndReason; duration_s: number } & Actor);
export type RdpSessionEndReason = 'client' | 'lost' | 'disconnected' | 'route_disabled' | 'route_deleted';

export type DomainEvent = PeerEvent | GroupTagEvent | AccountEvent | SettingsEvent | RouteEvent | RdpRouteEvent | GatewayEvent | AuthEvent | DataEvent | SystemEvent | OperationsEvent | WebhookAdminEvent | RdpOpsEvent;
export type EventType = DomainEvent['type'];
/** The payload of the event(s) of type T (members that name several types are narrowed to T). */
export type EventOf<T extends EventType> = DomainEvent extends infer E ? (E extends { type: infer U } ? ([Extract<U, T>] extends [never] ? never : E & { type: Extract<U, T> }) : never) : never;

export interface Envelope<E extends DomainEvent = DomainEvent> {
  /** "<boot>-<seq>": unique across restarts of the process; the SSE event id */
  id: string;
  /** 1, 2, 3, ... in delivery order within this run of the process */
  seq: number;
  /** epoch ms (the bus's clock) */
  at: number;
  event: E;
  /** not kept for since() (emitted with transient: true) */
  transient?: true;
}

export type Handler<E extends DomainEvent> = (event: E, envelope: Envelope<E>) => void | Promise<void>;
export type Unsubscribe = () => void;

export interface EventBusOptions {
  clock: Clock;
  log: Logger;
  /** How many envelopes since() can replay (default 1000). */
  keep?: number;
  /** Identifies this run of the process in event ids (default: the clock's time, base 36). */
  boot?: string;
}

interface Subscription {
  types: Set<string> | null;
  handler: Handler<DomainEvent>;
}

export class EventBus {
  readonly boot: string;
  private readonly clock: Clock;
  private readonly log: Logger;
  private readonly keep: number;
  private subs: Subscription[] = [];
  private seq = 0;
  private ring: Envelope[] = [];
  /** the seq of the newest envelope pushed out of the ring (0: none yet) */
  private dropped = 0;

  constructor(o: EventBusOptions) {
    this.clock = o.clock;
    this.log = o.log;
    this.keep = Math.max(1, o.keep ?? 1000);
    this.boot = o.boot ?? o.clock().toString(36);
    if (this.boot.includes('-')) throw new Error('EventBus: boot must not contain "-"');
  }

  /** Subscribes to one type or several; the handler's payload is typed by them. */
  on<T extends EventType>(type: T | readonly T[], handler: Handler<EventOf<T>>): Unsubscribe {
    return this.add({ types: new Set<string>(typeof type === 'string' ? [type] : type), handler: handler as Handler<DomainEvent> });
  }

  /** Subscribes to every event. */
  onAny(handler: Handler<DomainEvent>): Unsubscribe {
    return this.add({ types: null, handler });
  }

  /**
   * Delivers the event to every subscriber (in subscription order, each awaited) and resolves with
   * its envelope. With a transaction: delivered once it commits (resolves at once with null;
   * nothing is delivered when it rolls back).
   */
  async emit<E extends DomainEvent>(event: E, opts: { transaction?: Transaction | null; transient?: boolean } = {}): Promise<Envelope<E> | null> {
    const t = opts.transaction as (Transaction & { parent?: Transaction }) | null | undefined;
    if (t) {
      (t.parent ?? t).afterCommit(() => this.deliver(event, !!opts.transient).then(() => undefined));
      return null;
    }
    return this.deliver(event, !!opts.transient);
  }

  /**
   * The envelopes after lastEventId, oldest first ([] when nothing is new); null when the id is not
   * from this run of the process or older than what is kept (the caller must start over).
   */
  since(lastEventId: string): Envelope[] | null {
    const m = /^([^-]+)-(\d+)$/.exec(lastEventId);
    if (!m || m[1] !== this.boot) return null;
    const after = Number(m[2]);
    if (after > this.seq) return null;
    if (after === this.seq) return [];
    if (after < this.dropped) return null;
    return this.ring.filter((e) => e.seq > after);
  }

  /** The id of the last delivered event (null before the first). */
  get lastId(): string | null {
    return this.seq ? `${this.boot}-${this.seq}` : null;
  }

  /** Where a reader stands now: "<boot>-<seq>" ("<boot>-0" before the first event); since(cursor) gives what comes next. */
  get cursor(): string {
    return `${this.boot}-${this.seq}`;
  }

  private add(s: Subscription): Unsubscribe {
    this.subs.push(s);
    return () => {
      this.subs = this.subs.filter((x) => x !== s);
    };
  }

  private async deliver<E extends DomainEvent>(event: E, transient: boolean): Promise<Envelope<E>> {
    const seq = ++this.seq;
    const env: Envelope<E> = { id: `${this.boot}-${seq}`, seq, at: this.clock(), event, ...(transient ? { transient: true as const } : {}) };
    if (!transient) {
      this.ring.push(env);
      if (this.ring.length > this.keep) this.dropped = this.ring.splice(0, this.ring.length - this.keep).at(-1)!.seq;
    }
    for (const s of [...this.subs]) {
      if (s.types && !s.types.has(event.type)) continue;
      try {
        await s.handler(event, env as Envelope);
      } catch (err) {
        this.log.warn('event subscriber failed', { event: event.type, err: String((err as Error)?.stack ?? err) });
      }
    }
    return env;
  }
}

const WRITE_HOOKS = ['afterCreate', 'afterBulkCreate', 'afterUpdate', 'afterBulkUpdate', 'afterUpsert', 'afterSave'] as const;
const DESTROY_HOOKS = ['afterDestroy', 'afterBulkDestroy'] as const;

/** What watchTables needs of a Sequelize model. */
interface Hookable {
  addHook(name: string, id: string, fn: (...args: unknown[]) => unknown): unknown;
}

/**
 * Announces every write to the watched tables as `rows_changed`: at once (the write waits for the
 * subscribers) and again after the write's transaction commits. Installed once per database.
 */
export function watchTables(bus: EventBus, models: Record<WatchedTable, unknown>): void {
  for (const table of Object.keys(models) as WatchedTable[]) {
    const model = models[table] as Hookable;
    const hook = (destroyed: boolean) => async (...args: unknown[]) => {
      const opts = args[args.length - 1] as { transaction?: (Transaction & { parent?: Transaction }) | null } | undefined;
      const t = opts?.transaction;
      if (t) (t.parent ?? t).afterCommit(() => bus.emit({ type: 'rows_changed', table, destroyed, phase: 'commit' }).then(() => undefined));
      await bus.emit({ type: 'rows_changed', table, destroyed, phase: 'write' });
    };
    for (const h of WRITE_HOOKS) model.addHook(h, `events-${h}`, hook(false));
    for (const h of DESTROY_HOOKS) model.addHook(h, `events-${h}`, hook(true));
  }
}
