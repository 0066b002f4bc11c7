// Per-peer data quotas (ctx.quotas): counts each quota'd peer's traffic in its current period and
// acts on it.
//
// - check(): every poll interval (the scheduler's "Data quotas" job), at start, and for one peer or
//   all after an edit that can change a quota (peer created or changed, group changed or deleted,
//   peer enabled by an admin). The count is rx + tx of peer_traffic buckets starting inside the
//   period (quotas/schema.ts periodOf: the server's local time), minus the offset an admin's reset
//   left, against the quota's bytes plus this period's grants.
// - Crossing 80 % and 100 % is announced once per period (peer_quota_warning, peer_quota_exceeded:
//   activity row, webhook, live event); at 100 % the action applies: `disable` turns the peer off
//   through PeersService.setEnabled (the toggle's path: it leaves the interface), `throttle` caps it
//   both ways through ShapingService.setThrottles. quota_action on the row records what the quota
//   did, so that the next period (peer_quota_reset) undoes only that: a peer an admin disabled
//   stays disabled, and a peer an admin re-enables after its quota disabled it stays on for the
//   rest of the period (quota_action 'overridden').
// - Everything lives in the peer's quota_* columns (migration 079): a restart resumes the period,
//   its events already sent, its grant and offset, and the throttles.
// - resetCount() and grant(): an admin's zeroing of the period's count (an offset) and extra bytes
//   for the period; both re-check at once (an action ends when the count is below 100 % again) and
//   are events of their own (activity log).
import { Op, QueryTypes, type WhereOptions } from 'sequelize';
import { msg } from '@gatehouse/common/messages/index.js';
import type { Deps } from '../deps.js';
import type { PeerRow } from '../peers/model.js';
import type { PeersService } from '../peers/service.js';
import type { PeerView } from '../peers/schema.js';
import type { ShapingService } from '../shaping/service.js';
import type { Job } from '../util/scheduler.js';
import type { DomainEvent } from '../events.js';
import { Mutex } from '../util/mutex.js';
import { asBool, findRowByPk, findRows } from '../db/define.js';
import { conflict, notFound } from '../util/errors.js';
import { BYTES_MAX, effectiveQuota, levelOf, NO_QUOTA_STATE, parseQuota, periodOf, type Quota } from './schema.js';

/** The events after which a quota may differ (one peer: its id; a group: every peer). */
const PEER_EVENTS = ['peer_created', 'peer_updated', 'peer_enabled'] as const;
const GROUP_EVENTS = ['peer_group_updated', 'peer_group_deleted'] as const;
export const QUOTA_JOB = 'Data quotas';

const ATTRS = [
  'id',
  'name',
  'enabled',
  'group_id',
  'quota',
  'quota_period_start',
  'quota_period_end',
  'quota_used',
  'quota_limit',
  'quota_offset',
  'quota_grant',
  'quota_state',
  'quota_action',
] as const;
type Row = Pick<PeerRow, (typeof ATTRS)[number]>;
type Level = 'ok' | 'warned' | 'exceeded';
type Action = 'disable' | 'throttle' | 'overridden' | null;
const RANK: Record<Level, number> = { ok: 0, warned: 1, exceeded: 2 };

/** The period's state as the row keeps it. */
interface PeriodState {
  start: number | null;
  offset: number;
  grant: number;
  state: Level;
  action: Action;
}
/** An admin's change to the period's state before it is judged. */
type Adjust = (st: PeriodState, sum: number) => void;

const num = (v: unknown) => (v === null || v === undefined ? null : Number(v));
const iso = (t: number) => new Date(t).toISOString();
const applied = (a: Action) => (a === 'disable' || a === 'throttle' ? a : null);

export interface QuotaServiceOptions {
  /** how often the job counts (the WireGuard poll interval) */
  intervalMs: number;
}

export class QuotaService {
  private readonly lock = new Mutex();
  private job: Job | null = null;
  private unsubscribe: (() => void)[] = [];
  /** peers this service is turning on or off right now (their peer_enabled is its own) */
  private readonly toggling = new Set<number>();

  constructor(
    private readonly deps: Deps,
    private readonly peers: PeersService,
    private readonly shaping: ShapingService,
    private readonly o: QuotaServiceOptions,
  ) {}

  async start(): Promise<void> {
    const { events, scheduler, log } = this.deps;
    this.unsubscribe.push(
      events.on(PEER_EVENTS, async (e) => {
        if (!this.toggling.has(e.peer_id)) await this.check([e.peer_id]).catch((err) => log.error('data quotas: check failed', { err: String(err) }));
      }),
      events.on(GROUP_EVENTS, async () => {
        await this.check().catch((err) => log.error('data quotas: check failed', { err: String(err) }));
      }),
    );
    await this.check();
    this.job = scheduler.every(QUOTA_JOB, this.o.intervalMs, () => this.check(), { scope: 'singleton' });
  }

  stop(): void {
    for (const u of this.unsubscribe) u();
    this.unsubscribe = [];
    this.job?.stop();
    this.job = null;
  }

  /** Counts and judges the quotas of the given peers (all without ids). */
  check(ids?: number[]): Promise<void> {
    return this.lock.run(() => this.checkLocked(ids));
  }

  /** Sets the period's count to zero from now on (what was counted so far becomes the offset). */
  async resetCount(id: number, actor: number | null): Promise<PeerView> {
    await this.lock.run(async () => {
      const r = await this.judge(id, (st, sum) => {
        st.offset = sum;
      });
      await this.deps.events.emit({
        type: 'peer_quota_reset',
        peer_id: id,
        name: r.name,
        reason: 'admin',
        period_start: iso(r.period.start),
        period_end: iso(r.period.end),
        action_undone: r.undone,
        actor,
      });
    });
    return this.peers.get(id);
  }

  /** Adds bytes to this period's limit. */
  async grant(id: number, bytes: number, actor: number | null): Promise<PeerView> {
    await this.lock.run(async () => {
      let granted = 0;
      const r = await this.judge(id, (st) => {
        st.grant = Math.min(BYTES_MAX, st.grant + bytes);
        granted = st.grant;
      });
      await this.deps.events.emit({
        type: 'peer_quota_granted',
        peer_id: id,
        name: r.name,
        bytes,
        granted_bytes: granted,
        period_end: iso(r.period.end),
        actor,
      });
    });
    return this.peers.get(id);
  }

  /** One peer's check with an admin's adjustment (409 without a quota). */
  private async judge(id: number, adjust: Adjust): Promise<{ name: string; period: { start: number; end: number }; undone: 'disable' | 'throttle' | null }> {
    const row = await findRowByPk(this.deps.db.models.Peer, id, { attributes: [...ATTRS] });
    if (!row) throw notFound(msg('peer.not_found'));
    const q = effectiveQuota(parseQuota(row.quota), await this.groupQuota(row.group_id));
    if (!q) throw conflict(msg('quota.no_quota'));
    const period = periodOf(q, this.deps.clock());
    const [sum] = await this.sums([{ id, period }]);
    const out = await this.evaluate(row, q, period, sum ?? 0, adjust);
    await this.applyThrottles();
    return { name: row.name, period, undone: out.undone };
  }

  private async groupQuota(groupId: number | null): Promise<Quota | null> {
    if (!groupId) return null;
    const g = await findRowByPk(this.deps.db.models.PeerGroup, groupId, { attributes: ['id', 'quota'] });
    return parseQuota(g?.quota);
  }

  private async groupQuotas(): Promise<Map<number, Quota>> {
    const groups = await findRows(this.deps.db.models.PeerGroup, { attributes: ['id', 'quota'], where: { quota: { [Op.ne]: null } } });
    const out = new Map<number, Quota>();
    for (const g of groups) {
      const q = parseQuota(g.quota);
      if (q) out.set(g.id, q);
    }
    return out;
  }

  private async checkLocked(ids?: number[]): Promise<void> {
    const { Peer } = this.deps.db.models;
    const now = this.deps.clock();
    const groups = await this.groupQuotas();
    const or: WhereOptions<PeerRow>[] = [{ quota: { [Op.ne]: null } }, { quota_period_start: { [Op.ne]: null } }, { quota_action: { [Op.ne]: null } }];
    if (groups.size) or.push({ group_id: { [Op.in]: [...groups.keys()] } });
    const where: WhereOptions<PeerRow> = ids ? { [Op.and]: [{ id: { [Op.in]: ids } }, { [Op.or]: or }] } : { [Op.or]: or };
    const rows = await findRows(Peer, { attributes: [...ATTRS], where, order: [['id', 'ASC']] });
    const plans = rows.map((r) => {
      const q = effectiveQuota(parseQuota(r.quota), r.group_id ? (groups.get(r.group_id) ?? null) : null);
      return { r, q, period: q ? periodOf(q, now) : null };
    });
    const counted = plans.filter((p) => p.period) as { r: Row; q: Quota; period: { start: number; end: number } }[];
    const sums = await this.sums(counted.map((p) => ({ id: p.r.id, period: p.period })));
    for (const p of plans) {
      try {
        if (p.q && p.period) await this.evaluate(p.r, p.q, p.period, sums[counted.indexOf(p as (typeof counted)[number])] ?? 0);
        else await this.drop(p.r);
      } catch (err) {
        this.deps.log.error('data quotas: a peer could not be judged', { peer_id: p.r.id, err: String(err) });
      }
    }
    await this.applyThrottles();
  }

  /** rx + tx of each peer's buckets that start inside its period, in the order asked. */
  private async sums(items: { id: number; period: { start: number; end: number } }[]): Promise<number[]> {
    const byPeriod = new Map<string, { start: number; end: number; ids: number[] }>();
    for (const it of items) {
      const k = `${it.period.start}:${it.period.end}`;
      const g = byPeriod.get(k) ?? { start: it.period.start, end: it.period.end, ids: [] };
      g.ids.push(it.id);
      byPeriod.set(k, g);
    }
    const found = new Map<number, number>();
    for (const g of byPeriod.values()) {
      for (let i = 0; i < g.ids.length; i += 500) {
        const chunk = g.ids.slice(i, i + 500);
        const rows = (await this.deps.db.sequelize.query(
          `SELECT peer_id, SUM(rx) AS rx, SUM(tx) AS tx FROM peer_traffic WHERE peer_id IN (${chunk.map(() => '?').join(', ')}) AND bucket_start >= ? AND bucket_start < ? GROUP BY peer_id`,
          { replacements: [...chunk, g.start, g.end], type: QueryTypes.SELECT },
        )) as { peer_id: number; rx: number | string | null; tx: number | string | null }[];
        for (const r of rows) found.set(Number(r.peer_id), Number(r.rx ?? 0) + Number(r.tx ?? 0));
      }
    }
    return items.map((it) => found.get(it.id) ?? 0);
  }

  /** A peer without a quota now (removed from it or its group): undoes what its quota did, forgets the state. */
  private async drop(r: Row): Promise<void> {
    if (num(r.quota_period_start) === null && !r.quota_action) return;
    await this.undo(r.id, (r.quota_action as Action) ?? null);
    await this.write(r.id, { ...NO_QUOTA_STATE });
  }

  /** Judges one peer's count, applies or undoes the action, stores the state, emits the events. */
  private async evaluate(
    r: Row,
    q: Quota,
    period: { start: number; end: number },
    sum: number,
    adjust?: Adjust,
  ): Promise<{ undone: 'disable' | 'throttle' | null }> {
    const events: DomainEvent[] = [];
    let undone: 'disable' | 'throttle' | null = null;
    let st: PeriodState = {
      start: num(r.quota_period_start),
      offset: num(r.quota_offset) ?? 0,
      grant: num(r.quota_grant) ?? 0,
      state: r.quota_state === 'warned' || r.quota_state === 'exceeded' ? r.quota_state : 'ok',
      action: (r.quota_action as Action) ?? null,
    };
    const span = { period_start: iso(period.start), period_end: iso(period.end) };
    if (st.start !== period.start) {
      // a new period (or the first): what the quota did ends, the count starts at zero
      const had = st.start !== null;
      const was = st.state;
      undone = await this.undo(r.id, st.action);
      if (had && (was !== 'ok' || undone))
        events.push({ type: 'peer_quota_reset', peer_id: r.id, name: r.name, reason: 'period', ...span, action_undone: undone, actor: null });
      st = { start: period.start, offset: 0, grant: 0, state: 'ok', action: null };
    }
    adjust?.(st, sum);
    const used = Math.max(0, sum - st.offset);
    const limit = Math.min(BYTES_MAX, q.bytes + st.grant);
    const level = levelOf(used, limit);
    const count = { peer_id: r.id, name: r.name, used_bytes: used, limit_bytes: limit, ...span };
    // an admin turned on the peer the quota had turned off: it stays on this period
    if (st.action === 'disable' && (await this.isEnabled(r.id))) st.action = 'overridden';
    if (RANK[level] > RANK[st.state]) {
      if (st.state === 'ok') events.push({ type: 'peer_quota_warning', ...count });
      if (level === 'exceeded') {
        st.action = await this.apply(r.id, q);
        events.push({ type: 'peer_quota_exceeded', ...count, action_applied: applied(st.action) });
      }
      st.state = level;
    } else if (RANK[level] < RANK[st.state]) {
      // under a threshold again (a grant, a reset, a larger quota): the action ends; the events can come again
      if (level !== 'exceeded') {
        undone = (await this.undo(r.id, st.action)) ?? undone;
        st.action = null;
      }
      st.state = level;
    } else if (level === 'exceeded' && st.action !== 'overridden' && applied(st.action) !== q.action) {
      // the quota's action changed while exceeded (or the peer the admin had turned off is on again)
      await this.undo(r.id, st.action);
      st.action = await this.apply(r.id, q);
    }
    await this.write(r.id, {
      quota_period_start: period.start,
      quota_period_end: period.end,
      quota_used: used,
      quota_limit: limit,
      quota_offset: st.offset,
      quota_grant: st.grant,
      quota_state: st.state,
      quota_action: st.action,
      quota_checked_at: this.deps.clock(),
    });
    for (const e of events) await this.deps.events.emit(e);
    return { undone };
  }

  private async isEnabled(id: number): Promise<boolean> {
    const row = await findRowByPk(this.deps.db.models.Peer, id, { attributes: ['id', 'enabled'] });
    return !!row && asBool(row.enabled);
  }

  /** The quota's action at 100 %; what it did (null: nothing, the peer was already off). */
  private async apply(id: number, q: Quota): Promise<Action> {
    if (q.action === 'throttle') return 'throttle'; // applyThrottles() sets it
    if (!(await this.isEnabled(id))) return null;
    await this.toggle(id, false);
    return 'disable';
  }

  /** Undoes what the quota did: turns the peer it turned off on again (unless someone else turned it on already). */
  private async undo(id: number, action: Action): Promise<'disable' | 'throttle' | null> {
    if (action === 'throttle') return 'throttle'; // applyThrottles() lifts it
    if (action !== 'disable') return null;
    if (!(await this.isEnabled(id))) await this.toggle(id, true);
    return 'disable';
  }

  private async toggle(id: number, enabled: boolean): Promise<void> {
    this.toggling.add(id);
    try {
      await this.peers.setEnabled(id, enabled);
    } finally {
      this.toggling.delete(id);
    }
  }

  /** The throttles of every peer whose quota throttles it now, to the speed caps. */
  private async applyThrottles(): Promise<void> {
    const rows = await findRows(this.deps.db.models.Peer, { attributes: ['id', 'group_id', 'quota'], where: { quota_action: 'throttle' } });
    const groups = rows.some((r) => !r.quota && r.group_id) ? await this.groupQuotas() : new Map<number, Quota>();
    const t = new Map<number, number>();
    for (const r of rows) {
      const q = effectiveQuota(parseQuota(r.quota), r.group_id ? (groups.get(r.group_id) ?? null) : null);
      if (q?.throttle_kbit) t.set(r.id, q.throttle_kbit);
    }
    await this.shaping.setThrottles(t).catch((err) => this.deps.log.error('data quotas: applying the throttles failed', { err: String(err) }));
  }

  /** The state columns, written without the table's change hooks (as the poller writes its counters). */
  private async write(id: number, v: Partial<PeerRow>): Promise<void> {
    const keys = Object.keys(v) as (keyof PeerRow)[];
    await this.deps.db.sequelize.query(`UPDATE peers SET ${keys.map((k) => `${k} = ?`).join(', ')} WHERE id = ?`, {
      replacements: [...keys.map((k) => v[k] ?? null), id],
    });
  }
}
