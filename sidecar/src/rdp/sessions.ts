// RDP sessions (ctx.rdpSessions): the desktop client announces the RDP connections it makes, so the
// admin sees who is connected, can ask every client of a route to drop its connection, and gets a
// history. No Koa here: the client endpoints (rdp/client-endpoints.ts) and the admin endpoints
// (rdp/ops-endpoints.ts) call this.
//
// States of a session row (rdp_sessions): `active` → `ended` with end_reason
//   - client:          the client ended it (end())
//   - lost:            no heartbeat for GATEHOUSE_RDP_SESSION_LOST_AFTER seconds (sweepLost(), on the
//                      scheduler; ended_at is then the last heartbeat, so the duration is what was seen)
//   - disconnected:    an admin asked for it (disconnectAll() sets disconnect_requested_at); the next
//                      heartbeat answers {disconnect: true} and ends it; a client that never comes back
//                      is ended as `disconnected` by the sweep
//   - route_disabled:  the route was switched off (any write that leaves it disabled: toggle, batch, update)
//   - route_deleted:   the route was deleted (its history goes with it: rdp_sessions cascades)
// The last two come from hooks on the rdp_routes model (installRouteHooks), inside the writer's
// transaction, so every writer (toggle, batch, update, delete) ends the sessions the same way. For a
// gateway-mode route, disconnect-all, disabling and deleting also ask its companion to close the
// linked L4 route's live connections (the server-side kill; docs/guides/rdp.md).
// A heartbeat for a session ended by a disconnect order or by its route answers disconnect: true (the
// client must drop the RDP connection); for a session ended as lost or by the client it answers
// disconnect: false with status `ended` (the client starts a new session if it is still connected).
import { msg } from '@gatehouse/common/messages/index.js';
import { Op } from 'sequelize';
import type { Transaction } from 'sequelize';
import type { Deps } from '../deps.js';
import type { M } from '../db/models.js';
import type { Job } from '../util/scheduler.js';
import type { RdpSessionEndReason } from '../events.js';
import { AppError, notFound } from '../util/errors.js';
import type { RdpRouteLike, RdpRouteSource } from './status.js';
import { RdpHistory } from './history.js';
import type { RdpSessionRow } from './model.js';
import type { HeartbeatAnswer, RdpSession, ServerSideKill } from './schema.js';
import type { GatewaysService } from '../gateways/service.js';
import { findRows, findRowByPk } from '../db/define.js';

/** Who calls: the desktop client's token, machine, peer, user and hostname (what the client endpoints know). */
export interface SessionClient {
  token_id?: number | null;
  machine_id?: number | null;
  peer_id?: number | null;
  user_id?: number | null;
  client_name?: string | null;
}

const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

const DROP_MESSAGES: Partial<Record<RdpSessionEndReason, string>> = {
  disconnected: 'an administrator disconnected every session of this RDP route',
  route_disabled: 'the RDP route was disabled',
  route_deleted: 'the RDP route was deleted',
};

/** What the server-side kill needs of a route row. */
interface GatewayFields {
  id: number;
  name: string;
  access_mode: RdpRouteLike['access_mode'];
  gateway_peer_id?: number | null;
  gateway_l4_route_id?: number | null;
}

/** The RDP route model as the hooks need it. */
interface RouteModel {
  addHook(name: string, id: string, fn: (...args: unknown[]) => unknown): unknown;
  findAll(opts: Record<string, unknown>): Promise<unknown[]>;
}

export class RdpSessions {
  /** ids of sessions deleted with their route (the rows are gone): token and route, for the heartbeat's answer */
  private tombstones = new Map<number, { token_id: number | null; reason: RdpSessionEndReason }>();
  private job: Job | null = null;
  private readonly log: RdpHistory;

  constructor(
    private readonly deps: Deps,
    private readonly rdp: RdpRouteSource,
    private readonly model: M<RdpSessionRow>,
    private readonly gateways: GatewaysService,
  ) {
    this.log = new RdpHistory(deps, rdp, model, (r, now) => this.view(r, now));
  }

  /** A route's sessions, newest first (GET /rdp/:id/history; history.ts). */
  history(routeId: number, limit?: number): ReturnType<RdpHistory['history']> {
    return this.log.history(routeId, limit);
  }

  /** Every route's sessions as a CSV or JSON document (GET /rdp/history/export; history.ts). */
  export(format: 'csv' | 'json'): ReturnType<RdpHistory['export']> {
    return this.log.export(format);
  }

  get lostAfterMs(): number {
    return this.deps.config.rdpOps.sessionLostAfterMs;
  }

  view(r: RdpSessionRow, now = this.deps.clock()): RdpSession {
    const started = Number(r.started_at);
    const ended = num(r.ended_at);
    return {
      id: Number(r.id),
      rdp_route_id: Number(r.rdp_route_id),
      status: r.status,
      started_at: started,
      last_heartbeat_at: Number(r.last_heartbeat_at),
      ended_at: ended,
      end_reason: r.end_reason ?? null,
      duration_s: Math.max(0, Math.round(((ended ?? now) - started) / 1000)),
      disconnect_requested_at: num(r.disconnect_requested_at),
      client_name: r.client_name ?? null,
      token_id: num(r.token_id),
      machine_id: num(r.machine_id),
      peer_id: num(r.peer_id),
      user_id: num(r.user_id),
    };
  }

  private async row(id: number, t?: Transaction | null): Promise<RdpSessionRow | null> {
    return await findRowByPk(this.model, id, { transaction: t ?? undefined });
  }

  /** A client's session: 404 for an unknown id and for another token's session. */
  private async owned(id: number, who: SessionClient): Promise<RdpSessionRow> {
    const r = await this.row(id);
    if (!r || (who.token_id != null && num(r.token_id) !== null && num(r.token_id) !== who.token_id))
      throw notFound(msg('resource.not_found', { what: 'RDP session' }));
    return r;
  }

  /** A session starts: the route must exist (404) and be enabled (409). */
  async start(routeId: number, who: SessionClient): Promise<RdpSession> {
    const route = await this.rdp.get(routeId);
    if (!route.enabled) throw new AppError('conflict', msg('rdp.disabled', { name: route.name }));
    const now = this.deps.clock();
    const created = await this.model.create({
      rdp_route_id: route.id,
      token_id: who.token_id ?? null,
      machine_id: who.machine_id ?? null,
      peer_id: who.peer_id ?? null,
      user_id: who.user_id ?? null,
      client_name: who.client_name?.slice(0, 253) ?? null,
      status: 'active',
      started_at: now,
      last_heartbeat_at: now,
      ended_at: null,
      end_reason: null,
      disconnect_requested_at: null,
    } as Partial<RdpSessionRow>);
    const r = created.get({ plain: true }) as RdpSessionRow;
    const s = this.view(r, now);
    await this.deps.events.emit({
      type: 'rdp_session_started',
      session_id: s.id,
      rdp_route_id: route.id,
      name: route.name,
      client_name: s.client_name,
      peer_id: s.peer_id,
      token_id: s.token_id,
      user_id: s.user_id,
      machine_id: s.machine_id,
    });
    return s;
  }

  /**
   * The client's heartbeat: keeps an active session alive, or hands it the disconnect order (the
   * session then ends as `disconnected`). See the top of this file for ended sessions.
   */
  async heartbeat(sessionId: number, who: SessionClient): Promise<HeartbeatAnswer> {
    const lost_after_s = Math.round(this.lostAfterMs / 1000);
    const tomb = this.tombstones.get(sessionId);
    const r = tomb ? null : await this.row(sessionId);
    if (!r) {
      if (tomb && (who.token_id == null || tomb.token_id === null || tomb.token_id === who.token_id)) {
        return { disconnect: true, reason: tomb.reason, message: DROP_MESSAGES[tomb.reason], status: 'ended', session_id: sessionId, lost_after_s };
      }
      throw notFound(msg('resource.not_found', { what: 'RDP session' }));
    }
    if (who.token_id != null && num(r.token_id) !== null && num(r.token_id) !== who.token_id)
      throw notFound(msg('resource.not_found', { what: 'RDP session' }));
    if (r.status === 'active' && num(r.disconnect_requested_at) !== null) {
      await this.finish(r, 'disconnected', null, this.deps.clock());
      return { disconnect: true, reason: 'disconnected', message: DROP_MESSAGES.disconnected, status: 'ended', session_id: sessionId, lost_after_s };
    }
    if (r.status === 'ended') {
      const reason = (r.end_reason ?? 'client') as RdpSessionEndReason;
      const drop = reason in DROP_MESSAGES;
      return {
        disconnect: drop,
        reason,
        message: drop
          ? DROP_MESSAGES[reason]
          : reason === 'lost'
            ? 'the session was closed as lost (no heartbeat in time): start a new session'
            : 'the session has ended',
        status: 'ended',
        session_id: sessionId,
        lost_after_s,
      };
    }
    const now = this.deps.clock();
    const [n] = await this.model.update({ last_heartbeat_at: now } as Partial<RdpSessionRow>, { where: { id: sessionId, status: 'active' } });
    if (!n) return this.heartbeat(sessionId, who); // ended meanwhile: answer as ended
    return { disconnect: false, status: 'active', session_id: sessionId, lost_after_s };
  }

  /** The client ends its session (idempotent: an ended session is returned as it is). */
  async end(sessionId: number, who: SessionClient, reason: RdpSessionEndReason = 'client'): Promise<RdpSession> {
    const tomb = this.tombstones.get(sessionId);
    if (tomb) throw notFound(msg('resource.not_found', { what: 'RDP session' }));
    const r = await this.owned(sessionId, who);
    if (r.status === 'ended') return this.view(r);
    const now = this.deps.clock();
    const ended = await this.finish(r, num(r.disconnect_requested_at) !== null ? 'disconnected' : reason, null, now);
    return this.view(ended ?? ((await this.row(sessionId)) as RdpSessionRow));
  }

  /**
   * Ends one active session (compare-and-set on status, so it ends and is announced once);
   * returns the ended row, or null when it had already ended.
   */
  private async finish(
    r: RdpSessionRow,
    reason: RdpSessionEndReason,
    actor: number | null,
    endedAt: number,
    t?: Transaction | null,
    routeName?: string,
  ): Promise<RdpSessionRow | null> {
    const values = { status: 'ended' as const, ended_at: endedAt, end_reason: reason };
    const [n] = await this.model.update(values as Partial<RdpSessionRow>, { where: { id: r.id, status: 'active' }, transaction: t ?? undefined });
    if (!n) return null;
    const ended = { ...r, ...values };
    const s = this.view(ended, endedAt);
    const name = routeName ?? (await this.routeName(s.rdp_route_id, t));
    await this.deps.events.emit(
      { type: 'rdp_session_ended', session_id: s.id, rdp_route_id: s.rdp_route_id, name, client_name: s.client_name, reason, duration_s: s.duration_s, actor },
      { transaction: t ?? null },
    );
    return ended;
  }

  private async routeName(routeId: number, t?: Transaction | null): Promise<string> {
    const rows = (await this.routeModel().findAll({ attributes: ['name'], where: { id: routeId }, raw: true, transaction: t ?? undefined })) as {
      name: string;
    }[];
    return rows[0]?.name ?? `#${routeId}`;
  }

  private routeModel(): RouteModel {
    // reason: Sequelize types addHook per hook name; the hooks are added in a loop over names
    return this.deps.db.models.RdpRoute as unknown as RouteModel;
  }

  /**
   * POST /rdp/:id/sessions/disconnect-all: marks every active session of the route
   * (disconnect_requested_at); each client gets the order with its next heartbeat. In gateway mode
   * the route's companion also closes the live connections of the linked L4 route at once (POST
   * /disconnect on its API: the server-side kill; see README). 404 for an unknown route.
   */
  async disconnectAll(routeId: number, actor: number | null): Promise<{ count: number; session_ids: number[]; server_side: ServerSideKill }> {
    const route = await this.rdp.get(routeId);
    const now = this.deps.clock();
    const rows = await findRows(this.model, { attributes: ['id'], where: { rdp_route_id: route.id, status: 'active' } });
    const ids = rows.map((r) => Number(r.id));
    if (ids.length) {
      await this.model.update({ disconnect_requested_at: now } as Partial<RdpSessionRow>, {
        where: { id: { [Op.in]: ids }, status: 'active', disconnect_requested_at: null },
      });
    }
    const server_side = await this.killConnections(route);
    await this.deps.activity.record({
      severity: ids.length || server_side.closed_connections ? 'warning' : 'info',
      source: 'rdp',
      event_type: 'rdp_sessions_disconnect_requested',
      msg: msg('rdp.disconnect_requested', {
        count: ids.length,
        name: route.name,
        method: server_side.method,
        closed: server_side.closed_connections,
        error: server_side.error,
      }),
      details: { rdp_route_id: route.id, session_ids: ids, server_side },
      user_id: actor,
    });
    return { count: ids.length, session_ids: ids, server_side };
  }

  /** Gateway mode: the companion closes the linked L4 route's live connections; other modes: nothing to close (marker only). */
  private async killConnections(route: Pick<RdpRouteLike, 'access_mode' | 'gateway_peer_id' | 'gateway_l4_route_id'>): Promise<ServerSideKill> {
    if (route.access_mode !== 'gateway' || !route.gateway_peer_id || !route.gateway_l4_route_id)
      return { method: 'marker', closed_connections: null, error: null };
    try {
      const peer = await this.gateways.gatewayPeer(route.gateway_peer_id);
      const push = await this.gateways.pushToken(peer.id);
      const res = await fetch(`http://${peer.address}:${this.gateways.apiPortOf(peer)}/disconnect`, {
        method: 'POST',
        headers: { authorization: `Bearer ${push}`, 'content-type': 'application/json' },
        body: JSON.stringify({ route_id: route.gateway_l4_route_id }),
        signal: AbortSignal.timeout(5000),
      });
      const body = (await res.json().catch(() => null)) as { closed?: unknown; error?: unknown } | null;
      if (!res.ok)
        throw new Error(
          `companion answered ${res.status}${body?.error ? `: ${String(body.error)}` : res.status === 404 ? ' (a companion older than POST /disconnect)' : ''}`,
        );
      return { method: 'gateway', closed_connections: Number(body?.closed ?? 0), error: null };
    } catch (err) {
      return { method: 'gateway', closed_connections: null, error: err instanceof Error ? err.message : String(err) };
    }
  }

  /**
   * The scheduled sweep: active sessions without a heartbeat for lostAfterMs end as `lost` (or
   * `disconnected` when a disconnect was requested), ended_at = their last heartbeat. Returns how many.
   */
  async sweepLost(): Promise<number> {
    // runs whatever the licence says: a session must not stay active forever because the licence lapsed
    const now = this.deps.clock();
    const rows = await findRows(this.model, { where: { status: 'active', last_heartbeat_at: { [Op.lt]: now - this.lostAfterMs } } });
    let n = 0;
    const names = new Map<number, string>();
    for (const r of rows) {
      const routeId = Number(r.rdp_route_id);
      if (!names.has(routeId)) names.set(routeId, await this.routeName(routeId));
      const reason = num(r.disconnect_requested_at) !== null ? 'disconnected' : 'lost';
      if (await this.finish(r, reason, null, Number(r.last_heartbeat_at), null, names.get(routeId))) n++;
    }
    return n;
  }

  /** Active sessions of a route (or of all routes), newest first. */
  async active(routeId?: number): Promise<RdpSession[]> {
    const where: Record<string, unknown> = { status: 'active' };
    if (routeId !== undefined) where.rdp_route_id = routeId;
    const rows = await findRows(this.model, {
      where,
      order: [
        ['started_at', 'DESC'],
        ['id', 'DESC'],
      ],
    });
    const now = this.deps.clock();
    return rows.map((r) => this.view(r, now));
  }

  // ------------------------------------------------------------------ the route's lifecycle

  /** Ends the active sessions of the given routes with `reason` (inside the writer's transaction). */
  private async endForRoutes(routes: { id: number; name: string }[], reason: 'route_disabled' | 'route_deleted', t: Transaction | null): Promise<void> {
    if (!routes.length) return;
    const names = new Map(routes.map((r) => [Number(r.id), r.name]));
    const rows = await findRows(this.model, { where: { status: 'active', rdp_route_id: { [Op.in]: [...names.keys()] } }, transaction: t ?? undefined });
    const now = this.deps.clock();
    for (const r of rows) {
      const ended = await this.finish(r, reason, null, now, t, names.get(Number(r.rdp_route_id)));
      if (ended && reason === 'route_deleted') this.tombstone(Number(r.id), num(r.token_id), reason);
    }
  }

  private tombstone(id: number, token_id: number | null, reason: RdpSessionEndReason): void {
    this.tombstones.set(id, { token_id, reason });
    if (this.tombstones.size > 10_000) this.tombstones.delete(this.tombstones.keys().next().value as number);
  }

  /**
   * Hooks on the rdp_routes model: after any write, the active sessions of routes that are now
   * disabled end as `route_disabled`; before a delete, the route's active sessions end as
   * `route_deleted` (their rows then go with the route; the ids are remembered so a heartbeat still
   * gets the disconnect order). Installed once per database (createAppContext).
   */
  installRouteHooks(): void {
    const model = this.routeModel();
    const txOf = (args: unknown[]) => (args[args.length - 1] as { transaction?: Transaction | null } | undefined)?.transaction ?? null;
    const disabled = async (...args: unknown[]) => {
      const t = txOf(args);
      const routes = (await model.findAll({ attributes: ['id', 'name'], where: { enabled: false }, raw: true, transaction: t ?? undefined })) as {
        id: number;
        name: string;
      }[];
      if (!routes.length) return;
      const active = await findRows(this.model, {
        attributes: ['rdp_route_id'],
        where: { status: 'active', rdp_route_id: { [Op.in]: routes.map((r) => Number(r.id)) } },
        transaction: t ?? undefined,
      });
      if (!active.length) return;
      const hit = new Set(active.map((a) => Number(a.rdp_route_id)));
      await this.endForRoutes(
        routes.filter((r) => hit.has(Number(r.id))),
        'route_disabled',
        t,
      );
    };
    for (const h of ['afterUpdate', 'afterBulkUpdate', 'afterSave', 'afterUpsert']) model.addHook(h, `rdp-sessions-${h}`, disabled);
    const deleting = async (where: unknown, t: Transaction | null) => {
      const routes = (await model.findAll({
        attributes: ['id', 'name', 'access_mode', 'gateway_peer_id', 'gateway_l4_route_id'],
        where,
        raw: true,
        transaction: t ?? undefined,
      })) as GatewayFields[];
      await this.endForRoutes(routes, 'route_deleted', t);
      for (const r of routes) if (r.access_mode === 'gateway') this.afterCommit(t, () => this.cut(r, 'route_deleted'));
    };
    model.addHook('beforeDestroy', 'rdp-sessions-beforeDestroy', async (...args: unknown[]) => {
      const inst = args[0] as { get(k: string): unknown };
      await deleting({ id: Number(inst.get('id')) }, txOf(args));
    });
    model.addHook('beforeBulkDestroy', 'rdp-sessions-beforeBulkDestroy', async (...args: unknown[]) => {
      const opts = args[0] as { where?: unknown; transaction?: Transaction | null };
      await deleting(opts.where, opts.transaction ?? null);
    });
    // switched off (toggle, batch, or an edit of `enabled`): a gateway-mode route's live connections are cut too
    this.deps.events.on(['rdp_route_toggled', 'rdp_route_updated'], (e) => {
      if (e.type === 'rdp_route_toggled' ? e.enabled : !e.fields.includes('enabled')) return;
      void this.rdp
        .get(e.rdp_route_id)
        .then((r) => (!r.enabled && r.access_mode === 'gateway' ? this.cut(r, 'route_disabled') : undefined))
        .catch(() => undefined);
    });
  }

  private afterCommit(t: Transaction | null, fn: () => Promise<unknown>): void {
    const run = () => void fn().catch(() => undefined);
    if (t) ((t as Transaction & { parent?: Transaction }).parent ?? t).afterCommit(run);
    else run();
  }

  /** The server-side kill when a gateway-mode route goes away or off (the companion keeps a removed listener's connections). */
  private async cut(route: GatewayFields, why: 'route_disabled' | 'route_deleted'): Promise<void> {
    const k = await this.killConnections({
      access_mode: route.access_mode,
      gateway_peer_id: num(route.gateway_peer_id),
      gateway_l4_route_id: num(route.gateway_l4_route_id),
    });
    if (k.error) this.deps.log.warn(`RDP route "${route.name}" (${why}): the gateway could not close its live connections: ${k.error}`);
    else if (k.closed_connections) this.deps.log.info(`RDP route "${route.name}" (${why}): the gateway closed ${k.closed_connections} live connection(s)`);
  }

  /** The lost-session sweep on the scheduler (every lost-after / 3, between 1 and 30 s). */
  startSweep(): void {
    const every = Math.max(1000, Math.min(30_000, Math.floor(this.lostAfterMs / 3)));
    this.job ??= this.deps.scheduler.every('rdp session sweep', every, () => this.sweepLost(), { scope: 'singleton' });
  }

  stopSweep(): void {
    this.job?.stop();
    this.job = null;
  }
}
