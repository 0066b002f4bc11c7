// RDP session history: per route (GET /rdp/:id/history, newest first) and for every route as a file
// (GET /rdp/history/export?format=csv|json). No Koa here: export() returns the document, its media
// type and a file name; the endpoint sends it as an attachment.
//
// A row: the session's times and duration, the client (hostname, machine, token), the peer (id and
// name), the user (id and username) and the end reason. CSV comes from util/csv.ts (csv-stringify, RFC 4180, formulas escaped:
// fields with a comma, quote or line break are quoted, quotes doubled, CRLF between records); times
// are ISO-8601 in the export, epoch ms in the JSON API.
import { Op } from 'sequelize';
import { toCsv } from '../util/csv.js';
import type { Deps } from '../deps.js';
import type { M } from '../db/models.js';
import type { RdpRouteSource } from './status.js';
import type { RdpSessionRow } from './model.js';
import { historyExportRow, type ExportRow, type HistoryEntry, type RdpSession } from './schema.js';
import { findRows } from '../db/define.js';

export const HISTORY_DEFAULT_LIMIT = 50;
export const HISTORY_MAX_LIMIT = 500;
/** The most rows one export holds (newest first). */
export const EXPORT_MAX_ROWS = 100_000;

/** The CSV's columns: every field of a row, in the schema's order. */
export const EXPORT_COLUMNS = historyExportRow.keyof().options;

export interface ExportDocument {
  format: 'csv' | 'json';
  contentType: string;
  filename: string;
  body: string;
  rows: number;
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

export class RdpHistory {
  constructor(
    private readonly deps: Deps,
    private readonly rdp: RdpRouteSource,
    private readonly model: M<RdpSessionRow>,
    private readonly view: (r: RdpSessionRow, now?: number) => RdpSession,
  ) {}

  private async names(sessions: RdpSession[]): Promise<{ peers: Map<number, string>; users: Map<number, string> }> {
    const peerIds = [...new Set(sessions.map((s) => s.peer_id).filter((v): v is number => v !== null))];
    const userIds = [...new Set(sessions.map((s) => s.user_id).filter((v): v is number => v !== null))];
    const { Peer, User } = this.deps.db.models;
    const [peers, users] = await Promise.all([
      peerIds.length ? findRows(Peer, { attributes: ['id', 'name'], where: { id: { [Op.in]: peerIds } } }) : [],
      userIds.length ? findRows(User, { attributes: ['id', 'username'], where: { id: { [Op.in]: userIds } } }) : [],
    ]);
    return { peers: new Map(peers.map((p) => [Number(p.id), p.name])), users: new Map(users.map((u) => [Number(u.id), u.username])) };
  }

  private async entries(rows: RdpSessionRow[]): Promise<HistoryEntry[]> {
    const now = this.deps.clock();
    const sessions = rows.map((r) => this.view(r, now));
    const { peers, users } = await this.names(sessions);
    return sessions.map((s) => ({
      ...s,
      peer_name: s.peer_id === null ? null : (peers.get(s.peer_id) ?? null),
      username: s.user_id === null ? null : (users.get(s.user_id) ?? null),
    }));
  }

  /** A route's sessions, newest first (limit 1..500, default 50); 404 for an unknown route. */
  async history(routeId: number, limit = HISTORY_DEFAULT_LIMIT): Promise<{ rdp_route_id: number; name: string; total: number; sessions: HistoryEntry[] }> {
    const route = await this.rdp.get(routeId);
    const n = Math.min(HISTORY_MAX_LIMIT, Math.max(1, Math.floor(limit)));
    const [rows, total] = await Promise.all([
      findRows(this.model, {
        where: { rdp_route_id: route.id },
        order: [
          ['started_at', 'DESC'],
          ['id', 'DESC'],
        ],
        limit: n,
      }),
      this.model.count({ where: { rdp_route_id: route.id } }),
    ]);
    return { rdp_route_id: route.id, name: route.name, total, sessions: await this.entries(rows) };
  }

  /** Every route's sessions as export rows, newest first. */
  async exportRows(): Promise<ExportRow[]> {
    const rows = await findRows(this.model, {
      order: [
        ['started_at', 'DESC'],
        ['id', 'DESC'],
      ],
      limit: EXPORT_MAX_ROWS,
    });
    const entries = await this.entries(rows);
    const routes = new Map((await this.rdp.list()).map((r) => [r.id, r.name]));
    return entries.map((e) => ({
      session_id: e.id,
      rdp_route_id: e.rdp_route_id,
      route_name: routes.get(e.rdp_route_id) ?? `#${e.rdp_route_id}`,
      status: e.status,
      started_at: iso(e.started_at) as string,
      ended_at: iso(e.ended_at),
      last_heartbeat_at: iso(e.last_heartbeat_at) as string,
      duration_s: e.duration_s,
      end_reason: e.end_reason,
      client_name: e.client_name,
      machine_id: e.machine_id,
      token_id: e.token_id,
      peer_id: e.peer_id,
      peer_name: e.peer_name,
      user_id: e.user_id,
      username: e.username,
      disconnect_requested_at: iso(e.disconnect_requested_at),
    }));
  }

  /** The history of every route as a CSV (header row, RFC 4180) or JSON (array of rows) document. */
  async export(format: 'csv' | 'json'): Promise<ExportDocument> {
    const rows = await this.exportRows();
    const stamp = new Date(this.deps.clock()).toISOString().slice(0, 19).replace(/[:T]/g, '-');
    if (format === 'csv') {
      const body = toCsv(rows, EXPORT_COLUMNS, { recordDelimiter: '\r\n' });
      return { format, contentType: 'text/csv; charset=utf-8', filename: `rdp-sessions-${stamp}.csv`, body, rows: rows.length };
    }
    return {
      format,
      contentType: 'application/json; charset=utf-8',
      filename: `rdp-sessions-${stamp}.json`,
      body: JSON.stringify(rows, null, 2),
      rows: rows.length,
    };
  }
}
