// The activity log: one helper writes every admin-visible event.
// - Domain events (events.ts) become rows here: each kind's descriptor (event-kinds.ts) says which
//   row an event makes (the services emit the event, not the row). Other rows (admin actions with no domain event) are
//   written with record() directly.
// - Every row written is announced on the bus as `activity_recorded` (the live UI's feed).
import { Op, type WhereOptions } from 'sequelize';
import type { ActivityRow, Models } from '../db/models.js';
import type { ActivityEntry, DomainEvent, EventBus } from '../events.js';
import { EVENT_KINDS, type ActivityEvent, type EventKind, type Severity } from '../event-kinds.js';
import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/logger.js';
import { findRows } from '../db/define.js';
import type { MessageRef } from '@gatehouse/common/messages/index.js';
import { gatewayStatusReason } from '@gatehouse/common/messages/read-back.js';

export type { ActivityEntry } from '../events.js';

export type { ActivityEvent, Severity };

export interface ActivityFilter {
  severity?: string;
  source?: string;
  event_type?: string;
  since?: number;
  until?: number;
  limit?: number;
  offset?: number;
}

export class ActivityLog {
  constructor(
    private models: Models,
    private clock: Clock,
    private log: Logger,
    private events?: EventBus,
  ) {
    // the rows that domain events make
    events?.onAny(async (e) => {
      const row = activityFor(e);
      if (row) await this.record(row);
    });
  }

  async record(e: ActivityEvent): Promise<ActivityEntry> {
    const row = await this.models.Activity.create({
      severity: e.severity ?? 'info',
      source: e.source,
      event_type: e.event_type,
      message: e.msg.text,
      code: e.msg.code,
      params: e.msg.params === undefined ? null : JSON.stringify(e.msg.params),
      details: e.details ? JSON.stringify(e.details) : null,
      user_id: e.user_id ?? null,
      ip: e.ip ?? null,
      created_at: this.clock(),
    });
    const entry = toEntry(row.get({ plain: true }) as ActivityRow);
    this.log.info(e.msg.text, { activity: e.event_type, source: e.source, severity: entry.severity });
    await this.events?.emit({ type: 'activity_recorded', entry });
    return entry;
  }

  private where(f: ActivityFilter): WhereOptions {
    const w: Record<string | symbol, unknown> = {};
    if (f.severity) w.severity = f.severity;
    if (f.source) w.source = f.source;
    if (f.event_type) w.event_type = f.event_type;
    if (f.since !== undefined || f.until !== undefined) {
      const range: Record<symbol, number> = {};
      if (f.since !== undefined) range[Op.gte] = f.since;
      if (f.until !== undefined) range[Op.lte] = f.until;
      w.created_at = range;
    }
    return w as WhereOptions;
  }

  async query(f: ActivityFilter): Promise<{ entries: ActivityEntry[]; total: number }> {
    const where = this.where(f);
    const [rows, total] = await Promise.all([
      findRows<ActivityRow>(this.models.Activity, {
        where,
        order: [
          ['created_at', 'DESC'],
          ['id', 'DESC'],
        ],
        limit: f.limit ?? 100,
        offset: f.offset ?? 0,
      }),
      this.models.Activity.count({ where }),
    ]);
    return { entries: rows.map(toEntry), total };
  }

  async clear(): Promise<number> {
    return this.models.Activity.destroy({ where: {} });
  }
}

function parseJson(text: string | null): Record<string, unknown> | null {
  if (!text) return null;
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    return null;
  }
}

function toEntry(r: ActivityRow): ActivityEntry {
  let details: Record<string, unknown> | null = null;
  if (r.details) {
    try {
      details = JSON.parse(r.details);
    } catch {
      details = { raw: r.details };
    }
  }
  return {
    id: r.id,
    severity: r.severity,
    source: r.source,
    event_type: r.event_type,
    message: r.message,
    ...oldGatewayReason(r.event_type, r.code ?? null, parseJson(r.params), details),
    details,
    user_id: r.user_id,
    ip: r.ip,
    created_at: new Date(Number(r.created_at)).toISOString(),
    timestamp: Number(r.created_at),
  };
}

const GATEWAY_STATUS = new Set(['gateway_online', 'gateway_offline', 'gateway_unknown']);
const isText = (v: unknown): v is string => typeof v === 'string';

/**
 * A gateway status row as a message, read back where it was stored without its reason's code: rows
 * written before activity rows had codes (code null: the message is built from the event's details)
 * and rows whose event had no reason_code (the reason as field.unworded). The stored English reason
 * is read back as its gateway.status.* code, or gateway.status.not_recorded with the text as detail.
 */
function oldGatewayReason(
  type: string,
  code: string | null,
  params: Record<string, unknown> | null,
  details: Record<string, unknown> | null,
): { code: string | null; params: Record<string, unknown> | null } {
  if (!GATEWAY_STATUS.has(type)) return { code, params };
  if (code === 'gateway.status_changed' && params) {
    const reason = params.reason as MessageRef | undefined;
    const text = reason?.code === 'field.unworded' ? reason.params?.text : undefined;
    return isText(text) ? { code, params: { ...params, reason: gatewayStatusReason(text) } } : { code, params };
  }
  if (code === null && details && isText(details.name) && isText(details.from) && isText(details.to) && isText(details.reason)) {
    const reason = (details.reason_code as MessageRef | undefined) ?? gatewayStatusReason(details.reason);
    return { code: 'gateway.status_changed', params: { name: details.name, to: details.to, from: details.from, reason } };
  }
  return { code, params };
}

/** The activity row a domain event makes, or null (not every event is a row): its descriptor's (event-kinds.ts). */
export function activityFor(e: DomainEvent): ActivityEvent | null {
  const describe = (EVENT_KINDS[e.type] as EventKind).activity;
  const row = describe?.(e) ?? null;
  return row && { ...row, event_type: row.event_type ?? e.type };
}
