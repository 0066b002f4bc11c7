// The webhook delivery queue, in the database (table webhook_deliveries), and its worker.
//
// - Enqueue: one subscriber on the event bus (events.ts onAny). For an event of a kind in
//   WEBHOOK_EVENTS it writes one pending row per enabled webhook subscribed to the kind, with the
//   exact body every attempt will send. The subscriber returns at once and the rows are written
//   right after, so neither the write nor any delivery delays the request that caused the event.
// - Worker: a scheduler job ("webhook deliveries") sends the rows that are due (status pending,
//   next_attempt_at reached), a few at a time, then arms one timer (the scheduler's timers, so a
//   test's manual clock drives it) for the next due row. It runs once at start, which picks up what
//   was queued before a restart or a kill -9, after every enqueue, and every 30 s as a safety net.
// - Retries: attempt n (1, 2, ...) failing schedules the next one retryBase * 2^(n-1) later (capped
//   at 1 h), until 1 + retry_count attempts; then the row is failed. A row is updated after each
//   attempt only: an attempt cut short by a crash is made again after the restart (at least once;
//   receivers de-duplicate by X-Gatehouse-Delivery).
// - stop() (server shutdown) aborts the attempts in flight; their rows stay as they were (the
//   abandoned attempt is not counted) and are sent at the next start.
// - Finished rows (delivered, failed) older than RETENTION_MS are deleted hourly.
import crypto from 'node:crypto';
import { Op, fn, col } from 'sequelize';
import type { Deps } from '../deps.js';
import type { DomainEvent, Envelope } from '../events.js';
import type { Job } from '../util/scheduler.js';
import type { TimerHandle } from '../util/clock.js';
import { APP_VERSION } from '../version.js';
import type { WebhookDeliveryRow, WebhookRow } from './model.js';
import { isWebhookEvent } from './events.js';
import { send, webhookPolicy, type SendResult } from './sender.js';
import { deliveryView } from './views.js';
import type { DeliveryView } from './schema.js';
import { asBool, findRows } from '../db/define.js';
import { msg } from '@gatehouse/common/messages/index.js';

export const MAX_RETRY_DELAY_MS = 3_600_000;
export const RETENTION_MS = 30 * 24 * 3_600_000;
const BATCH = 20;
const CONCURRENCY = 4;
const SAFETY_POLL_MS = 30_000;

/** The delay before the attempt after failed attempt n (n = 1, 2, ...). */
export function retryDelay(baseMs: number, failedAttempt: number): number {
  return Math.min(MAX_RETRY_DELAY_MS, baseMs * 2 ** (failedAttempt - 1));
}

type Core = Pick<Deps, 'db' | 'clock' | 'events' | 'crypto' | 'config' | 'scheduler' | 'log' | 'outbound'>;

export class DeliveryQueue {
  private readonly models: Deps['db']['models'];
  private job: Job | null = null;
  private timer: { at: number; handle: TimerHandle } | null = null;
  private writes = new Set<Promise<void>>();
  private lastPrune = 0;
  /** aborted by stop(): attempts in flight end at once and their rows stay as they were */
  private abort = new AbortController();

  constructor(private readonly core: Core) {
    this.models = core.db.models;
    core.events.onAny((e, env) => {
      if (!isWebhookEvent(e.type)) return;
      const p = this.enqueue(e, env).then(
        () => undefined,
        (err) => void core.log.error('webhook enqueue failed', { event: e.type, err: String(err) }),
      );
      this.writes.add(p);
      void p.finally(() => this.writes.delete(p));
    });
  }

  /**
   * The enabled webhooks, read at each event of a webhook kind (no cache: a restore or any other
   * writer of the table is seen at once, and these events are not frequent).
   */
  private enabledHooks(): Promise<WebhookRow[]> {
    return findRows(this.models.Webhook, { where: { enabled: true } });
  }

  /** Writes one pending row per enabled webhook that subscribes to the event's kind. */
  async enqueue(e: DomainEvent, env: Envelope): Promise<number> {
    const hooks = (await this.enabledHooks()).filter((h) => (JSON.parse(h.events) as string[]).includes(e.type));
    if (!hooks.length) return 0;
    const { type, ...data } = e;
    const now = this.core.clock();
    const rows = hooks.map((h) => {
      const uid = crypto.randomUUID();
      return {
        webhook_id: h.id,
        uid,
        event: type,
        body: JSON.stringify({ id: uid, event: type, created_at: new Date(env.at).toISOString(), timestamp: env.at, data }),
        status: 'pending' as const,
        attempts: 0,
        max_attempts: 1 + Number(h.retry_count),
        next_attempt_at: now,
        last_attempt_at: null,
        response_code: null,
        last_error: null,
        duration_ms: null,
        created_at: now,
        updated_at: now,
      };
    });
    const created: WebhookDeliveryRow[] = [];
    for (const r of rows) {
      try {
        created.push((await this.models.WebhookDelivery.create(r)).get({ plain: true }) as WebhookDeliveryRow);
      } catch (err) {
        // the webhook was deleted since the list was read (its foreign key is gone): nothing to queue
        if (await this.models.Webhook.findByPk(r.webhook_id)) throw err;
      }
    }
    for (const r of created) await this.announce(r);
    this.kick();
    return created.length;
  }

  /** Resolves when every enqueue started so far has written its rows. */
  async flushed(): Promise<void> {
    while (this.writes.size) await Promise.all([...this.writes]);
  }

  start(): void {
    if (this.job) return;
    if (this.abort.signal.aborted) this.abort = new AbortController();
    this.job = this.core.scheduler.every('webhook deliveries', SAFETY_POLL_MS, () => this.runDue(), { scope: 'singleton' });
    this.kick();
  }

  async stop(): Promise<void> {
    const job = this.job;
    this.job = null;
    this.timer?.handle.cancel();
    this.timer = null;
    job?.stop();
    // a receiver that is slow to answer does not hold up the shutdown: the attempt is made again at the next start
    this.abort.abort();
    await job?.idle();
    await this.flushed();
  }

  /** A run now (after the one in flight); no-op before start(). */
  kick(): void {
    void this.job?.runNow().catch(() => undefined);
  }

  /** Resolves when no run is in flight or queued (tests). */
  async idle(): Promise<void> {
    await this.flushed();
    await this.job?.idle();
  }

  /** Sends every due row (in batches), then arms the timer for the next due one. */
  async runDue(): Promise<void> {
    for (;;) {
      const now = this.core.clock();
      const due = await findRows(this.models.WebhookDelivery, {
        where: { status: 'pending', next_attempt_at: { [Op.lte]: now } },
        order: [
          ['next_attempt_at', 'ASC'],
          ['id', 'ASC'],
        ],
        limit: BATCH,
      });
      if (!due.length) break;
      let i = 0;
      const lane = async () => {
        while (i < due.length) await this.attempt(due[i++]);
      };
      await Promise.all(Array.from({ length: Math.min(CONCURRENCY, due.length) }, lane));
      if (!this.job) return; // stopped meanwhile
    }
    await this.armNext();
    await this.prune();
  }

  private async armNext(): Promise<void> {
    if (!this.job) return;
    // reason: MIN(next_attempt_at) is an aggregate, which Sequelize cannot type
    const r = (await this.models.WebhookDelivery.findOne({
      attributes: [[fn('MIN', col('next_attempt_at')), 'at']],
      where: { status: 'pending' },
      raw: true,
    })) as unknown as { at: number | string | null } | null;
    const at = r?.at == null ? null : Number(r.at);
    if (this.timer && (at === null || this.timer.at !== at)) {
      this.timer.handle.cancel();
      this.timer = null;
    }
    if (at === null || this.timer) return;
    const handle = this.core.scheduler.timers.after(Math.max(0, at - this.core.clock()), () => {
      this.timer = null;
      this.kick();
    });
    this.timer = { at, handle };
  }

  private async prune(): Promise<void> {
    const now = this.core.clock();
    if (now - this.lastPrune < 3_600_000) return;
    this.lastPrune = now;
    await this.models.WebhookDelivery.destroy({ where: { status: { [Op.ne]: 'pending' }, updated_at: { [Op.lt]: now - RETENTION_MS } } });
  }

  private sendOptions(hook: WebhookRow) {
    const w = this.core.config.webhooks;
    return {
      timeoutMs: w.timeoutMs,
      policy: webhookPolicy(this.core.outbound('webhooks'), asBool(hook.allow_private)),
      userAgent: `Gatehouse-Webhook/${APP_VERSION}`,
      signal: this.abort.signal,
    };
  }

  private async post(hook: WebhookRow, row: { uid: string; event: string; body: string }): Promise<SendResult> {
    let secret: string;
    try {
      secret = this.core.crypto.open(hook.secret_enc);
    } catch {
      return { ok: false, status: null, error: msg('webhook.delivery.secret_unreadable').text, duration_ms: 0 };
    }
    return send({ url: hook.url, secret, event: row.event, uid: row.uid, body: row.body, now: this.core.clock() }, this.sendOptions(hook));
  }

  /** One attempt of a queued row, and its outcome written to the row. */
  private async attempt(row: WebhookDeliveryRow): Promise<void> {
    const hook = (await this.models.Webhook.findByPk(row.webhook_id, { raw: true })) as WebhookRow | null;
    if (!hook) return; // deleted meanwhile (its rows went with it)
    const signal = this.abort.signal;
    const r = await this.post(hook, row);
    if (signal.aborted) return; // shutting down: not an attempt; the row is sent again after the restart
    const now = this.core.clock();
    const attempts = Number(row.attempts) + 1;
    const status = r.ok ? 'delivered' : attempts >= Number(row.max_attempts) ? 'failed' : 'pending';
    const next = status === 'pending' ? now + retryDelay(this.core.config.webhooks.retryBaseMs, attempts) : null;
    const patch = {
      status,
      attempts,
      next_attempt_at: next,
      last_attempt_at: now,
      response_code: r.status,
      last_error: r.error?.slice(0, 500) ?? null,
      duration_ms: r.duration_ms,
      updated_at: now,
    } as const;
    const [n] = await this.models.WebhookDelivery.update(patch, { where: { id: row.id, status: 'pending', attempts: row.attempts } });
    if (!n) return;
    if (r.ok) this.core.log.debug('webhook delivered', { webhook_id: hook.id, delivery: row.uid, event: row.event, status: r.status });
    else
      this.core.log.warn('webhook delivery attempt failed', {
        webhook_id: hook.id,
        delivery: row.uid,
        event: row.event,
        attempt: attempts,
        of: row.max_attempts,
        error: r.error,
      });
    const updated = { ...row, ...patch };
    await this.announce(updated);
    if (status === 'failed')
      await this.core.events.emit({
        type: 'webhook_delivery_failed',
        webhook_id: hook.id,
        name: hook.name,
        delivery_id: row.id,
        event: row.event,
        attempts,
        error: patch.last_error,
      });
  }

  /** A delivery sent at once and recorded with its outcome, without retries (the test button). */
  async deliverNow(hook: WebhookRow, d: { uid: string; event: string; body: string }): Promise<DeliveryView> {
    const r = await this.post(hook, d);
    const now = this.core.clock();
    const created = await this.models.WebhookDelivery.create({
      webhook_id: hook.id,
      uid: d.uid,
      event: d.event,
      body: d.body,
      status: r.ok ? 'delivered' : 'failed',
      attempts: 1,
      max_attempts: 1,
      next_attempt_at: null,
      last_attempt_at: now,
      response_code: r.status,
      last_error: r.error?.slice(0, 500) ?? null,
      duration_ms: r.duration_ms,
      created_at: now,
      updated_at: now,
    });
    const row = created.get({ plain: true }) as WebhookDeliveryRow;
    await this.announce(row);
    return deliveryView(row);
  }

  private async announce(r: WebhookDeliveryRow): Promise<void> {
    await this.core.events.emit(
      {
        type: 'webhook_delivery_updated',
        webhook_id: r.webhook_id,
        delivery_id: r.id,
        event: r.event,
        status: r.status,
        attempts: Number(r.attempts),
        response_code: r.response_code,
      },
      { transient: true },
    );
  }
}
