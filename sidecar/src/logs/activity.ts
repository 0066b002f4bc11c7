// The activity log: one helper writes every admin-visible event. Listeners (webhooks, later)
// subscribe through onEvent().
import { Op, type WhereOptions } from 'sequelize';
import type { ActivityRow, Models } from '../db/models.js';
import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/logger.js';

export type Severity = 'info' | 'warning' | 'error' | 'critical';
export const SEVERITIES: Severity[] = ['info', 'warning', 'error', 'critical'];

export interface ActivityEvent {
  severity?: Severity;
  source: string;
  event_type: string;
  message: string;
  details?: Record<string, unknown>;
  user_id?: number | null;
  ip?: string | null;
}

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

export interface ActivityFilter {
  severity?: string;
  source?: string;
  event_type?: string;
  since?: number;
  until?: number;
  limit?: number;
  offset?: number;
}

type Listener = (e: ActivityEntry) => void;

export class ActivityLog {
  private listeners: Listener[] = [];
  constructor(private models: Models, private clock: Clock, private log: Logger) {}

  onEvent(l: Listener): void {
    this.listeners.push(l);
  }

  async record(e: ActivityEvent): Promise<ActivityEntry> {
    const row = await this.models.Activity.create({
      severity: e.severity ?? 'info',
      source: e.source,
      event_type: e.event_type,
      message: e.message,
      details: e.details ? JSON.stringify(e.details) : null,
      user_id: e.user_id ?? null,
      ip: e.ip ?? null,
      created_at: this.clock(),
    });
    const entry = toEntry(row.get({ plain: true }) as ActivityRow);
    this.log.info(e.message, { activity: e.event_type, source: e.source, severity: entry.severity });
    for (const l of this.listeners) {
      try {
        l(entry);
      } catch (err) {
        this.log.warn('activity listener failed', { err: String(err) });
      }
    }
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
      this.models.Activity.findAll({ where, order: [['created_at', 'DESC'], ['id', 'DESC']], limit: f.limit ?? 100, offset: f.offset ?? 0, raw: true }),
      this.models.Activity.count({ where }),
    ]);
    return { entries: (rows as unknown as ActivityRow[]).map(toEntry), total };
  }

  async clear(): Promise<number> {
    return this.models.Activity.destroy({ where: {} });
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
    details,
    user_id: r.user_id,
    ip: r.ip,
    created_at: new Date(Number(r.created_at)).toISOString(),
    timestamp: Number(r.created_at),
  };
}
