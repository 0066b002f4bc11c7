// The open live-event streams (GET /api/v1/events): each one is a cursor into the event bus's ring
// (events.ts), written as server-sent events. HTTP-agnostic apart from the node stream it returns.
//
// - open(): writes `retry:`, then (with a last event id) the events missed since it, or `reset` when
//   since() cannot say (another run of the process, or older than the ring keeps); then `ready` with
//   the current position as its id, so a client that drops before any event still resumes exactly.
// - Every bus delivery wakes each stream, which writes everything after its cursor from the ring, in
//   seq order, filtered by the caller's scopes. (Delivery to subscribers is not in seq order: a
//   subscriber's own emits, like the activity row of an event, overtake the event for later
//   subscribers; reading the ring keeps the stream in order, each event once.)
// - Transient events (peer_traffic: not in the ring, never replayed) are written when delivered,
//   after the ring events before them, so the ids a client sees still only grow.
// - A comment heartbeat every heartbeatMs (on the injected timers). Before each heartbeat the
//   caller's credential is checked again (stillAllowed): a revoked token or ended session ends the
//   stream.
// - A client that does not read (more than maxBufferBytes unsent) is cut off; it reconnects with
//   Last-Event-ID and gets the missed events from the ring.
// - closeAll() (server stop) ends every stream and resolves when their responses are done; streams
//   opened after it end at once.
import { PassThrough } from 'node:stream';
import type { Envelope, EventBus } from '../events.js';
import type { Clock, TimerHandle, Timers } from '../util/clock.js';
import type { Logger } from '../util/logger.js';
import { receives, type StreamScope } from './catalog.js';
import { sseComment, sseMessage, sseRetry } from './sse.js';

export const HEARTBEAT_MS = 15_000;
export const RETRY_MS = 3_000;
export const MAX_BUFFER_BYTES = 1 << 20;

export interface EventStreamsOptions {
  events: EventBus;
  clock: Clock;
  timers: Timers;
  log: Logger;
  heartbeatMs?: number;
  retryMs?: number;
  maxBufferBytes?: number;
}

export interface OpenOptions {
  scopes: Set<StreamScope>;
  /** Last-Event-ID (header) or last_event_id (query) */
  lastEventId?: string;
  /** Checked before each heartbeat; false ends the stream (revoked token, ended session). */
  stillAllowed?: () => Promise<boolean>;
  /** Resolves when the HTTP response is over (closeAll waits for it). */
  done?: Promise<unknown>;
}

/** The payload of an SSE message: the event without its type, with `at` when it has none. */
export function ssePayload(env: Envelope): Record<string, unknown> {
  const { type: _type, ...rest } = env.event as { type: string } & Record<string, unknown>;
  return 'at' in rest ? rest : { ...rest, at: env.at };
}

class Connection {
  readonly out = new PassThrough();
  private cursor: string;
  private timer: TimerHandle | null = null;
  private unsubscribe: (() => void) | null = null;
  private ended = false;
  readonly done: Promise<unknown>;

  constructor(
    private readonly hub: EventStreams,
    private readonly o: Required<Omit<EventStreamsOptions, 'log'>> & { log: Logger },
    private readonly opts: OpenOptions,
  ) {
    this.cursor = o.events.cursor;
    const closed = new Promise((r) => this.out.once('close', r));
    this.done = opts.done ? Promise.race([opts.done, closed]) : closed;
    this.out.once('close', () => this.cleanup());
  }

  start(): void {
    const { events } = this.o;
    this.write(sseRetry(this.o.retryMs));
    let resumed = false;
    if (this.opts.lastEventId) {
      const missed = events.since(this.opts.lastEventId);
      if (missed === null) this.reset(this.opts.lastEventId.startsWith(`${events.boot}-`) ? 'too_old' : 'other_run');
      else {
        this.cursor = this.opts.lastEventId;
        resumed = true;
      }
    }
    this.unsubscribe = events.onAny((_e, env) => (env.transient ? this.writeTransient(env) : this.flush()));
    this.flush();
    if (this.ended) return;
    this.write(sseMessage({ id: this.cursor, event: 'ready', data: { boot: events.boot, resumed, at: this.o.clock() } }));
    this.arm();
  }

  /** Everything after the cursor (up to seq upTo), in order, filtered by scope. */
  private flush(upTo = Infinity): void {
    if (this.ended) return;
    const envs = this.o.events.since(this.cursor);
    if (envs === null) return this.reset('too_old');
    for (const env of envs) {
      if (env.seq > upTo) break;
      this.cursor = env.id;
      if (!receives(this.opts.scopes, env.event.type)) continue;
      this.write(sseMessage({ id: env.id, event: env.event.type, data: ssePayload(env) }));
      if (this.ended) return;
    }
  }

  private writeTransient(env: Envelope): void {
    this.flush(env.seq);
    if (this.ended) return;
    this.cursor = env.id;
    if (receives(this.opts.scopes, env.event.type)) this.write(sseMessage({ id: env.id, event: env.event.type, data: ssePayload(env) }));
  }

  /** The client's position is lost: it must reload what it shows; it resumes from now. */
  private reset(reason: 'other_run' | 'too_old'): void {
    this.cursor = this.o.events.cursor;
    this.write(sseMessage({ id: this.cursor, event: 'reset', data: { reason, at: this.o.clock() } }));
  }

  private arm(): void {
    this.timer = this.o.timers.after(this.o.heartbeatMs, () => void this.beat());
  }

  private async beat(): Promise<void> {
    this.timer = null;
    if (this.ended) return;
    let allowed = true;
    try {
      allowed = this.opts.stillAllowed ? await this.opts.stillAllowed() : true;
    } catch (err) {
      this.o.log.warn('event stream: credential check failed', { err: String(err) });
    }
    if (this.ended) return;
    if (!allowed) return this.end();
    this.write(sseComment(`heartbeat ${this.o.clock()}`));
    if (!this.ended) this.arm();
  }

  private write(chunk: string): void {
    if (this.ended) return;
    const buffered = this.out.writableLength + this.out.readableLength;
    if (buffered > this.o.maxBufferBytes) {
      this.o.log.warn('event stream: client does not read; closing it (it resumes with Last-Event-ID)', { buffered });
      return this.end();
    }
    this.out.write(chunk);
  }

  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.cleanup();
    this.out.end();
  }

  private cleanup(): void {
    this.ended = true;
    this.unsubscribe?.();
    this.unsubscribe = null;
    this.timer?.cancel();
    this.timer = null;
    this.hub.forget(this);
  }
}

export class EventStreams {
  private readonly o: Required<Omit<EventStreamsOptions, 'log'>> & { log: Logger };
  private readonly open_ = new Set<Connection>();
  private closing = false;

  constructor(o: EventStreamsOptions) {
    this.o = { heartbeatMs: HEARTBEAT_MS, retryMs: RETRY_MS, maxBufferBytes: MAX_BUFFER_BYTES, ...o };
  }

  /** How many streams are open. */
  get size(): number {
    return this.open_.size;
  }

  /** Opens a stream; the returned node stream is the response body. */
  open(opts: OpenOptions): PassThrough {
    const c = new Connection(this, this.o, opts);
    if (this.closing) {
      c.out.end(sseRetry(this.o.retryMs));
      return c.out;
    }
    this.open_.add(c);
    c.start();
    return c.out;
  }

  /** Ends every open stream (server stop); resolves when their responses are over (at most waitMs). */
  async closeAll(waitMs = 5_000): Promise<void> {
    this.closing = true;
    const all = [...this.open_];
    for (const c of all) c.end();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all(all.map((c) => c.done)), new Promise((r) => (timer = setTimeout(r, waitMs)))]);
    clearTimeout(timer);
  }

  /** @internal a stream that ended */
  forget(c: Connection): void {
    this.open_.delete(c);
  }
}
