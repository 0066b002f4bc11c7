// Typed domain events: what happened in the product, emitted ONCE at the place where it happens
// and consumed by whoever cares (caches, the activity log, and the coming webhooks and live UI).
//
// - DomainEvent is a discriminated union on `type`, inferred from the descriptors of event-kinds.ts
//   (one per kind: payload, stream scope, activity row, webhook eligibility).
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
import { Op, type Transaction } from 'sequelize';
import type { z } from 'zod';
import type { ActivityEntry, EventKinds, EventType } from './event-kinds.js';
import type { Clock } from './util/clock.js';
import type { Logger } from './util/logger.js';

/**
 * Every domain event: one member per kind of event-kinds.ts (its descriptor's payload schema, with
 * `type` the kind's name). The type names are the webhook event kinds.
 */
export type DomainEvent = { [K in EventType]: { type: K } & z.infer<EventKinds[K]['payload']> }[EventType];
export type { ActivityEntry, EventType };
/** The payload of the event of type T. */
export type EventOf<T extends EventType> = Extract<DomainEvent, { type: T }>;

/** Transfer rates from the WireGuard poller (bytes per second over the last poll interval; rx is what the server received from the peer). */
export type PeerTrafficEvent = EventOf<'peer_traffic'>;
export type WatchedTable = EventOf<'rows_changed'>['table'];
export type RdpSessionEndReason = EventOf<'rdp_session_ended'>['reason'];

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

type RowKeys = NonNullable<EventOf<'rows_changed'>['keys']>;

/** The column that names the peer a row belongs to: a peer is its own, a route its target's. */
const PEER_COLUMN: Record<WatchedTable, string> = { peers: 'id', routes: 'target_peer_id' };

const numberOrNull = (v: unknown): number | null =>
  typeof v === 'number' && Number.isFinite(v) ? v : typeof v === 'string' && /^\d+$/.test(v) ? Number(v) : null;

/** The ids a where clause names: `{id: n}`, `{id: [..]}` or `{id: {[Op.in]: [..]}}`; null for anything else. */
function idsOfWhere(where: unknown): number[] | null {
  if (!where || typeof where !== 'object') return null;
  const id: unknown = (where as Record<string, unknown>).id;
  const list = (v: unknown): number[] | null => {
    const ids = (Array.isArray(v) ? v : [v]).map(numberOrNull);
    return ids.every((x) => x !== null) ? (ids as number[]) : null;
  };
  if (id === null || id === undefined) return null;
  if (typeof id !== 'object' || Array.isArray(id)) return list(id);
  const syms = Object.getOwnPropertySymbols(id);
  const inList = syms.find((s) => s === Op.in || s === Op.eq);
  if (!inList || syms.length !== 1 || Object.keys(id).length !== 0) return null;
  return list((id as Record<symbol, unknown>)[inList]);
}

/** An instance's values (Sequelize instances have get({plain})). */
function valuesOf(x: unknown): Record<string, unknown> | null {
  if (!x || typeof x !== 'object') return null;
  const get = (x as { get?: unknown }).get;
  // reason: a Sequelize instance; get({plain: true}) gives its column values
  if (typeof get === 'function') return (x as { get(o: { plain: true }): Record<string, unknown> }).get({ plain: true });
  return null;
}

/**
 * What a write touched, when its hook can tell: each row's id and the peer it belongs to (when the
 * write set that column). Null when it cannot tell (a bulk write whose where clause is not by id).
 */
export function rowKeysOf(table: WatchedTable, hook: string, args: unknown[]): RowKeys | null {
  const col = PEER_COLUMN[table];
  const keyOf = (v: Record<string, unknown>) => ({ id: numberOrNull(v.id), peer_id: col in v ? numberOrNull(v[col]) : null });
  if (hook === 'afterBulkUpdate' || hook === 'afterBulkDestroy') {
    const opts = args[0] as { where?: unknown; attributes?: Record<string, unknown> } | undefined;
    const ids = idsOfWhere(opts?.where);
    if (!ids) return null;
    const set = opts?.attributes ?? {};
    return ids.map((id) => ({ id, peer_id: col in set && col !== 'id' ? numberOrNull(set[col]) : table === 'peers' ? id : null }));
  }
  const first = args[0];
  const instances = hook === 'afterUpsert' && Array.isArray(first) ? [first[0]] : Array.isArray(first) ? first : [first];
  const keys: RowKeys = [];
  for (const inst of instances) {
    const v = valuesOf(inst);
    if (!v) return null;
    const k = keyOf(v);
    if (k.id === null) return null;
    keys.push(k);
  }
  return keys;
}

/**
 * Announces every write to the watched tables as `rows_changed`: at once (the write waits for the
 * subscribers) and again after the write's transaction commits. Installed once per database.
 */
export function watchTables(bus: EventBus, models: Record<WatchedTable, unknown>): void {
  for (const table of Object.keys(models) as WatchedTable[]) {
    const model = models[table] as Hookable;
    const hook =
      (name: string, destroyed: boolean) =>
      async (...args: unknown[]) => {
        const opts = args[args.length - 1] as { transaction?: (Transaction & { parent?: Transaction }) | null } | undefined;
        const t = opts?.transaction;
        const keys = rowKeysOf(table, name, args);
        if (t) (t.parent ?? t).afterCommit(() => bus.emit({ type: 'rows_changed', table, destroyed, phase: 'commit', keys }).then(() => undefined));
        await bus.emit({ type: 'rows_changed', table, destroyed, phase: 'write', keys });
      };
    for (const h of WRITE_HOOKS) model.addHook(h, `events-${h}`, hook(h, false));
    for (const h of DESTROY_HOOKS) model.addHook(h, `events-${h}`, hook(h, true));
  }
}
