// Webhooks: the admin's CRUD (the secret sealed with the master key, the URL checked by the
// request-forgery guard), the delivery log, and the test delivery. The queue and its worker are
// queue.ts (DeliveryQueue), which reads the webhooks table itself at each event.
import { msg } from '@gatehouse/common/messages/index.js';
import crypto from 'node:crypto';
import { Op, fn, col } from 'sequelize';
import type { Deps } from '../deps.js';
import { forbidden, notFound, unprocessable } from '../util/errors.js';
import type { DeliveryStatus, WebhookDeliveryRow, WebhookRow } from './model.js';
import { FetchFailed, NotAllowed, resolveAllowed } from '../util/outbound.js';
import { webhookPolicy } from './sender.js';
import { deliveryView, webhookView } from './views.js';
import type { DeliveriesQuery, DeliveryCounts, DeliveryView, WebhookInput, WebhookPatch, WebhookView } from './schema.js';
import { TEST_EVENT } from './events.js';
import type { DeliveryQueue } from './queue.js';
import { asBool, findRows } from '../db/define.js';

export const DEFAULT_RETRY_COUNT = 3;

type Core = Pick<Deps, 'db' | 'clock' | 'events' | 'crypto' | 'config' | 'outbound'>;

export class WebhooksService {
  private readonly models: Deps['db']['models'];
  constructor(
    private readonly core: Core,
    private readonly queue: DeliveryQueue,
  ) {
    this.models = core.db.models;
  }

  /**
   * The URL may be a target (422 with fields.url when not): the request-forgery guard (util/outbound.ts)
   * says only "not allowed" for loopback, private ranges and this server, unless the webhook has
   * allow_private (or the operator allowed it for every webhook).
   */
  async checkUrl(url: string, allowPrivate: boolean): Promise<void> {
    const host = new URL(url).hostname;
    try {
      await resolveAllowed(host, webhookPolicy(this.core.outbound('webhooks'), allowPrivate));
    } catch (err) {
      if (err instanceof NotAllowed) throw unprocessable(msg('request.validation_failed'), { url: msg('field.not_allowed') });
      if (err instanceof FetchFailed) throw unprocessable(msg('request.validation_failed'), { url: msg('field.does_not_resolve') });
      throw err;
    }
  }

  private async row(id: number): Promise<WebhookRow> {
    const r = (await this.models.Webhook.findByPk(id, { raw: true })) as WebhookRow | null;
    if (!r) throw notFound(msg('resource.not_found', { what: 'Webhook' }));
    return r;
  }

  private async counts(ids: number[]): Promise<Map<number, DeliveryCounts>> {
    const out = new Map<number, DeliveryCounts>(ids.map((id) => [id, { pending: 0, delivered: 0, failed: 0 }]));
    if (!ids.length) return out;
    const rows = (await this.models.WebhookDelivery.findAll({
      attributes: ['webhook_id', 'status', [fn('COUNT', col('id')), 'n']],
      where: { webhook_id: { [Op.in]: ids } },
      group: ['webhook_id', 'status'],
      raw: true,
      // reason: COUNT(id) AS n is no column of the row, so Sequelize cannot type the result
    })) as unknown as { webhook_id: number; status: DeliveryStatus; n: number | string }[];
    for (const r of rows) {
      const c = out.get(Number(r.webhook_id));
      if (c && r.status in c) c[r.status] = Number(r.n);
    }
    return out;
  }

  private async lastDeliveries(ids: number[]): Promise<Map<number, WebhookDeliveryRow>> {
    const out = new Map<number, WebhookDeliveryRow>();
    if (!ids.length) return out;
    // reason: MAX(id) per webhook is an aggregate, which Sequelize cannot type
    const maxIds = (await this.models.WebhookDelivery.findAll({
      attributes: [[fn('MAX', col('id')), 'id']],
      where: { webhook_id: { [Op.in]: ids } },
      group: ['webhook_id'],
      raw: true,
    })) as unknown as { id: number }[];
    if (!maxIds.length) return out;
    const rows = await findRows(this.models.WebhookDelivery, { where: { id: { [Op.in]: maxIds.map((r) => Number(r.id)) } } });
    for (const r of rows) out.set(Number(r.webhook_id), r);
    return out;
  }

  private async views(rows: WebhookRow[]): Promise<WebhookView[]> {
    const ids = rows.map((r) => r.id);
    const [counts, last] = await Promise.all([this.counts(ids), this.lastDeliveries(ids)]);
    return rows.map((r) => webhookView(r, counts.get(r.id)!, last.get(r.id) ?? null));
  }

  async list(): Promise<WebhookView[]> {
    return this.views(await findRows(this.models.Webhook, { order: [['id', 'ASC']] }));
  }

  async get(id: number): Promise<WebhookView> {
    return (await this.views([await this.row(id)]))[0];
  }

  /**
   * Creates a webhook. `mayAllowPrivate`: the caller may set allow_private (a full-access token or an
   * admin session; the router says which); setting it otherwise is 403 and nothing is written.
   */
  async create(input: WebhookInput, actor?: number, mayAllowPrivate = false): Promise<WebhookView> {
    const allowPrivate = input.allow_private ?? false;
    if (allowPrivate && !mayAllowPrivate) throw forbidden(msg('auth.field_full_access', { field: 'allow_private' }));
    await this.checkUrl(input.url, allowPrivate);
    const now = this.core.clock();
    const events = [...new Set(input.events)];
    const row = await this.models.Webhook.create({
      name: input.name,
      url: input.url,
      events: JSON.stringify(events),
      enabled: input.enabled,
      secret_enc: this.core.crypto.seal(input.secret),
      retry_count: input.retry_count ?? DEFAULT_RETRY_COUNT,
      allow_private: allowPrivate,
      created_at: now,
      updated_at: now,
    });
    const r = row.get({ plain: true }) as WebhookRow;
    await this.core.events.emit({
      type: 'webhook_created',
      webhook_id: r.id,
      name: r.name,
      url: r.url,
      events,
      allow_private: allowPrivate,
      actor: actor ?? null,
    });
    return this.get(r.id);
  }

  /** Partial update; a secret omitted (or '') keeps the stored one. allow_private changes only with `mayAllowPrivate` (see create). */
  async update(id: number, input: WebhookPatch, actor?: number, mayAllowPrivate = false): Promise<WebhookView> {
    const old = await this.row(id);
    const wasPrivate = asBool(old.allow_private);
    const allowPrivate = input.allow_private ?? wasPrivate;
    if (allowPrivate !== wasPrivate && !mayAllowPrivate) throw forbidden(msg('auth.field_full_access', { field: 'allow_private' }));
    // the URL is checked again when it changes, and when the choice that let it pass is taken back
    if ((input.url !== undefined && input.url !== old.url) || (wasPrivate && !allowPrivate)) await this.checkUrl(input.url ?? old.url, allowPrivate);
    const patch: Partial<WebhookRow> = {};
    const set = <K extends keyof WebhookRow>(k: K, v: WebhookRow[K], field: string = k) => {
      patch[k] = v;
      fields.push(field);
    };
    const fields: string[] = [];
    if (input.name !== undefined && input.name !== old.name) set('name', input.name);
    if (input.url !== undefined && input.url !== old.url) set('url', input.url);
    if (input.events !== undefined) {
      const ev = JSON.stringify([...new Set(input.events)]);
      if (ev !== old.events) set('events', ev);
    }
    if (input.enabled !== undefined && input.enabled !== !!old.enabled) set('enabled', input.enabled);
    if (input.retry_count !== undefined && input.retry_count !== Number(old.retry_count)) set('retry_count', input.retry_count);
    if (input.secret) set('secret_enc', this.core.crypto.seal(input.secret), 'secret');
    if (allowPrivate !== wasPrivate) set('allow_private', allowPrivate);
    if (fields.length) {
      await this.models.Webhook.update({ ...patch, updated_at: this.core.clock() }, { where: { id } });
      await this.core.events.emit({
        type: 'webhook_updated',
        webhook_id: id,
        name: patch.name ?? old.name,
        fields,
        allow_private: allowPrivate,
        actor: actor ?? null,
      });
    }
    return this.get(id);
  }

  async toggle(id: number, actor?: number): Promise<WebhookView> {
    const old = await this.row(id);
    const enabled = !old.enabled;
    await this.models.Webhook.update({ enabled, updated_at: this.core.clock() }, { where: { id } });
    await this.core.events.emit({ type: enabled ? 'webhook_enabled' : 'webhook_disabled', webhook_id: id, name: old.name, actor: actor ?? null });
    return this.get(id);
  }

  /** Deletes the webhook and its delivery log (queued deliveries are dropped). */
  async remove(id: number, actor?: number): Promise<void> {
    const old = await this.row(id);
    await this.core.db.sequelize.transaction(async (transaction) => {
      await this.models.WebhookDelivery.destroy({ where: { webhook_id: id }, transaction });
      await this.models.Webhook.destroy({ where: { id }, transaction });
    });
    await this.core.events.emit({ type: 'webhook_deleted', webhook_id: id, name: old.name, actor: actor ?? null });
  }

  async deliveries(id: number, q: DeliveriesQuery): Promise<{ deliveries: DeliveryView[]; total: number }> {
    await this.row(id);
    const where: Record<string, unknown> = { webhook_id: id };
    if (q.status) where.status = q.status;
    if (q.event) where.event = q.event;
    const [rows, total] = await Promise.all([
      findRows(this.models.WebhookDelivery, { where, order: [['id', 'DESC']], limit: q.limit, offset: q.offset }),
      this.models.WebhookDelivery.count({ where }),
    ]);
    return { deliveries: rows.map(deliveryView), total };
  }

  /**
   * POST /webhooks/:id/test: one signed POST of a `webhook_test` event now (also to a disabled
   * webhook), recorded in its delivery log; not retried. Resolves with the recorded delivery.
   */
  async test(id: number, actor?: number): Promise<DeliveryView> {
    const hook = await this.row(id);
    const now = this.core.clock();
    const uid = crypto.randomUUID();
    const body = JSON.stringify({
      id: uid,
      event: TEST_EVENT,
      created_at: new Date(now).toISOString(),
      timestamp: now,
      data: { webhook_id: id, name: hook.name, message: 'This is a test delivery from Gatehouse.', actor: actor ?? null },
    });
    return this.queue.deliverNow(hook, { uid, event: TEST_EVENT, body });
  }
}
