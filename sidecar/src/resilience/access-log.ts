// Access log ingestion: tails Caddy's JSON access-log file (<dataDir>/caddy/access.log, rendered by
// proxy/fragments/access-log.ts addAccessLog) into the bounded access_log table.
//
// - Exactly once across sidecar restarts: the cursor (file inode + byte offset after the last whole
//   line read, access_log_cursor) is advanced only after the rows it covers are stored, and each row
//   carries the (inode, offset) of its line under a unique index (INSERT ... ON CONFLICT DO
//   NOTHING): a crash between the two re-reads lines that are then not stored again. No explicit
//   transaction: single statements on SQLite's default connection wait for the write lock
//   (busy_timeout) instead of failing a concurrent route write with SQLITE_BUSY.
// - Rotation (Caddy's file writer renames access.log to access-<time>.log and opens a new
//   access.log): when the inode of access.log differs from the cursor's, the rest of the old file
//   (found by inode among the rotated files) is read first, then the new file from 0. A file
//   shorter than the cursor (truncated) is read again from 0. A partial last line waits for its
//   newline.
// - Bounded: after each batch, rows older than the newest ACCESS_LOG_MAX_ROWS are deleted.
// - Route of a line: its Host matched against the HTTP routes' domains (exact, then the one-label
//   wildcard); upstream = that route's upstream (peer tunnel address:port) at ingestion time.
// - auth_user: who was signed in by route auth (the line's `auth_user` field, written by Caddy's
//   log_append after the forward auth; see proxy/fragments/route-auth.ts).
// - debug: for a route with debug_enabled at ingestion time, the request and response headers of
//   the line (Caddy redacts Cookie, Set-Cookie and Authorization; redacted here too), at most
//   DEBUG_MAX_CHARS of JSON, kept for the newest TRACE_LIMIT rows of the route (what the trace
//   shows; older rows drop theirs, so a busy debugged route cannot fill the database); null
//   otherwise.
import { redactShareToken } from '../share-links/paths.js';
import fs from 'node:fs';
import path from 'node:path';
import { QueryTypes } from 'sequelize';
import type { Database } from '../db/index.js';
import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/logger.js';
import type { Job, Scheduler } from '../util/scheduler.js';
import type { z } from 'zod';
import type { accessEntryView, AccessFilter } from '../logs/schema.js';

export const ACCESS_LOG_MAX_ROWS = 100_000;
/** Requests returned by GET /routes/:id/trace. */
export const TRACE_LIMIT = 100;
const MAX_READ = 4 * 1024 * 1024;
export const DEBUG_MAX_CHARS = 8192;
const SECRET_HEADERS = new Set(['cookie', 'set-cookie', 'authorization', 'proxy-authorization']);

/** The headers kept for a line of a route with debug_enabled. */
type DebugHeaders = NonNullable<AccessEntry['debug']>;

interface HostInfo {
  id: number;
  upstream: string | null;
  debug?: boolean;
}

/** A stored line: the entry GET /logs/access serves, without its `time` (ts as ISO 8601, added there). */
export type AccessEntry = Omit<z.output<typeof accessEntryView>, 'time'>;

type Row = Omit<AccessEntry, 'id' | 'debug'> & { debug: string | null; src_inode: string; src_offset: number };
const COLUMNS = [
  'ts',
  'route_id',
  'host',
  'method',
  'uri',
  'status',
  'duration_ms',
  'size',
  'upstream',
  'client_ip',
  'user_agent',
  'auth_user',
  'debug',
  'src_inode',
  'src_offset',
] as const;

export interface AccessLogOptions {
  db: Database;
  clock: Clock;
  log: Logger;
  file: string;
  maxRows?: number;
  /** The sidecar's scheduler (deps.scheduler): start() runs the periodic work on it. */
  scheduler: Scheduler;
}

export class AccessLogService {
  private readonly db: Database;
  private readonly log: Logger;
  private readonly clock: Clock;
  readonly file: string;
  private readonly maxRows: number;
  private busy: Promise<number> | null = null;
  private job: Job | null = null;
  private readonly scheduler: Scheduler;

  constructor(o: AccessLogOptions) {
    this.db = o.db;
    this.log = o.log;
    this.clock = o.clock;
    this.file = o.file;
    this.maxRows = o.maxRows ?? ACCESS_LOG_MAX_ROWS;
    this.scheduler = o.scheduler;
  }

  start(intervalMs = 1000): void {
    this.job?.stop();
    this.job = this.scheduler.every('access log ingestion', intervalMs, () => this.poll(), { scope: 'per-node' });
  }

  stop(): void {
    this.job?.stop();
    this.job = null;
  }

  /** Reads what is new; returns the number of rows stored. One poll at a time. */
  poll(): Promise<number> {
    if (!this.busy) this.busy = this.pollOnce().finally(() => (this.busy = null));
    return this.busy;
  }

  private async cursor(): Promise<{ inode: string; offset: number } | null> {
    const rows = (await this.db.sequelize.query('SELECT file_inode, file_offset FROM access_log_cursor WHERE id = 1', { type: QueryTypes.SELECT })) as {
      file_inode: string;
      file_offset: number | string;
    }[];
    const c = rows.length ? { inode: String(rows[0].file_inode), offset: Number(rows[0].file_offset) } : null;
    this.cursorCache = c;
    return c;
  }

  private async pollOnce(): Promise<number> {
    let st: fs.Stats;
    try {
      st = fs.statSync(this.file);
    } catch {
      return 0;
    }
    const ino = String(st.ino);
    // The cursor's file identity is the inode, plus "@<time>" after a truncation (offsets restart
    // at 0 in the same inode, and the (identity, offset) of a line must stay unique).
    let cur = await this.cursor();
    const base = (id: string) => id.split('@')[0];
    let stored = 0;
    if (cur && base(cur.inode) !== ino) {
      // Rotated: finish the old file if it is still there.
      const old = this.findByInode(base(cur.inode));
      if (old) {
        // All of it (readFrom reads at most MAX_READ bytes a time).
        for (let off = cur.offset; ;) {
          stored += await this.readFrom(old, cur.inode, off, true);
          const c = await this.cursor();
          if (!c || c.offset <= off || c.offset >= fs.statSync(old).size) break;
          off = c.offset;
        }
      }
      cur = { inode: ino, offset: 0 };
    }
    if (!cur) cur = { inode: ino, offset: 0 };
    if (st.size < cur.offset) cur = { inode: `${ino}@${this.clock()}`, offset: 0 }; // truncated
    const id = cur.inode;
    for (;;) {
      const n = await this.readFrom(this.file, id, cur.offset, false);
      stored += n;
      const next = await this.cursor();
      if (!next || next.offset === cur.offset) break;
      cur = next;
      if (n === 0) break;
    }
    return stored;
  }

  private findByInode(inode: string): string | null {
    const dir = path.dirname(this.file);
    const base = path.basename(this.file, '.log');
    try {
      for (const f of fs.readdirSync(dir)) {
        if (!f.startsWith(`${base}-`)) continue;
        const p = path.join(dir, f);
        if (String(fs.statSync(p).ino) === inode) return p;
      }
    } catch {
      /* directory gone */
    }
    return null;
  }

  /** Reads whole lines from `offset` (at most MAX_READ bytes), stores them and the new cursor. */
  private async readFrom(file: string, inode: string, offset: number, final: boolean): Promise<number> {
    let buf: Buffer;
    const fd = fs.openSync(file, 'r');
    try {
      const size = fs.fstatSync(fd).size;
      const len = Math.min(size - offset, MAX_READ);
      if (len <= 0) {
        await this.saveCursor(inode, offset);
        return 0;
      }
      buf = Buffer.alloc(len);
      fs.readSync(fd, buf, 0, len, offset);
    } finally {
      fs.closeSync(fd);
    }
    let end = buf.lastIndexOf(0x0a) + 1;
    if (end === 0 && final) end = buf.length;
    if (end === 0) return 0;
    const lines: { rec: AccessRecord; at: number }[] = [];
    let pos = 0;
    while (pos < end) {
      let nl = buf.indexOf(0x0a, pos);
      if (nl === -1 || nl >= end) nl = end;
      const rec = parseRecord(buf.subarray(pos, nl).toString('utf8'));
      if (rec) lines.push({ rec, at: offset + pos });
      pos = nl + 1;
    }
    const hosts = await this.hostMap(new Set(lines.map((l) => l.rec.host)));
    const rows: Row[] = lines.map(({ rec, at }) => ({ ...toRow(rec, hosts), src_inode: inode, src_offset: at }));
    const stored = await this.insert(rows);
    await this.saveCursor(inode, offset + end);
    return stored;
  }

  private cursorCache: { inode: string; offset: number } | null = null;

  private async saveCursor(inode: string, offset: number): Promise<void> {
    if (this.cursorCache && this.cursorCache.inode === inode && this.cursorCache.offset === offset) return;
    await this.db.sequelize.query(
      'INSERT INTO access_log_cursor (id, file_inode, file_offset, updated_at) VALUES (1, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET file_inode = excluded.file_inode, file_offset = excluded.file_offset, updated_at = excluded.updated_at',
      { replacements: [inode, offset, this.clock()] },
    );
    this.cursorCache = { inode, offset };
  }

  /** Inserts rows (a line already stored is skipped); prunes to maxRows. Returns rows inserted. */
  private async insert(rows: Row[]): Promise<number> {
    if (!rows.length) return 0;
    const before = await this.maxId();
    for (let i = 0; i < rows.length; i += 500) {
      const chunk = rows.slice(i, i + 500);
      const values = chunk.map(() => `(${COLUMNS.map(() => '?').join(', ')})`).join(', ');
      await this.db.sequelize.query(`INSERT INTO access_log (${COLUMNS.join(', ')}) VALUES ${values} ON CONFLICT (src_inode, src_offset) DO NOTHING`, {
        replacements: chunk.flatMap((r) => COLUMNS.map((c) => r[c])),
      });
    }
    const after = await this.maxId();
    if (after > this.maxRows) await this.db.sequelize.query('DELETE FROM access_log WHERE id <= ?', { replacements: [after - this.maxRows] });
    // Headers are kept only where the trace can show them: the newest TRACE_LIMIT rows of a route.
    const debugged = new Set(rows.filter((r) => r.debug !== null && r.route_id !== null).map((r) => r.route_id as number));
    for (const routeId of debugged) {
      await this.db.sequelize.query(
        'UPDATE access_log SET debug = NULL WHERE route_id = ? AND debug IS NOT NULL AND id < (SELECT MIN(k.id) FROM (SELECT id FROM access_log WHERE route_id = ? AND debug IS NOT NULL ORDER BY id DESC LIMIT ?) k)',
        { replacements: [routeId, routeId, TRACE_LIMIT] },
      );
    }
    const n = (await this.db.sequelize.query('SELECT COUNT(*) AS n FROM access_log WHERE id > ?', { replacements: [before], type: QueryTypes.SELECT })) as {
      n: number | string;
    }[];
    return Number(n[0]?.n ?? 0);
  }

  private async maxId(): Promise<number> {
    const r = (await this.db.sequelize.query('SELECT MAX(id) AS m FROM access_log', { type: QueryTypes.SELECT })) as { m: number | string | null }[];
    return Number(r[0]?.m ?? 0);
  }

  /**
   * domain → {route id, upstream, debug_enabled} of the HTTP routes that can serve `seen` (each host
   * itself and its one-label wildcard). Only those: the lookup costs what a batch holds, not the
   * number of routes (at 100,000 routes, loading every route each second took a core away from
   * Caddy while it served traffic).
   */
  private async hostMap(seen: Set<string>): Promise<Map<string, HostInfo>> {
    const m = new Map<string, HostInfo>();
    const names = [...new Set([...seen].flatMap(routeDomainsFor))];
    for (let i = 0; i < names.length; i += 500) {
      const chunk = names.slice(i, i + 500);
      const rows = (await this.db.sequelize.query(
        `SELECT r.id, r.domain, r.target_port, r.debug_enabled, p.address FROM routes r LEFT JOIN peers p ON p.id = r.peer_id WHERE r.route_type = 'http' AND r.domain IN (${chunk.map(() => '?').join(', ')})`,
        { type: QueryTypes.SELECT, replacements: chunk },
      )) as { id: number; domain: string; target_port: string | null; debug_enabled: unknown; address: string | null }[];
      for (const r of rows) {
        const debug = r.debug_enabled === true || r.debug_enabled === 1 || r.debug_enabled === '1' || r.debug_enabled === 't' || r.debug_enabled === 'true';
        m.set(r.domain, { id: Number(r.id), upstream: r.address && r.target_port ? `${r.address.split('/')[0]}:${r.target_port}` : null, debug });
      }
    }
    return m;
  }

  async list(q: AccessFilter & { limit: number; offset: number }): Promise<{ entries: AccessEntry[]; total: number }> {
    const cond: string[] = [];
    const args: unknown[] = [];
    const eq = (col: string, v: unknown) => {
      if (v !== undefined && v !== null && v !== '') {
        cond.push(`${col} = ?`);
        args.push(v);
      }
    };
    eq('host', q.host);
    eq('method', q.method);
    eq('status', q.status);
    eq('route_id', q.route_id);
    eq('client_ip', q.client_ip);
    if (q.since !== undefined) {
      cond.push('ts >= ?');
      args.push(q.since);
    }
    if (q.until !== undefined) {
      cond.push('ts <= ?');
      args.push(q.until);
    }
    const where = cond.length ? ` WHERE ${cond.join(' AND ')}` : '';
    const [entries, total] = await Promise.all([
      this.db.sequelize.query(`SELECT * FROM access_log${where} ORDER BY id DESC LIMIT ? OFFSET ?`, {
        replacements: [...args, q.limit, q.offset],
        type: QueryTypes.SELECT,
      }) as Promise<Record<string, unknown>[]>,
      this.db.sequelize.query(`SELECT COUNT(*) AS n FROM access_log${where}`, { replacements: args, type: QueryTypes.SELECT }) as Promise<
        { n: number | string }[]
      >,
    ]);
    return { entries: entries.map(toEntry), total: Number(total[0]?.n ?? 0) };
  }

  /** The newest `limit` requests of one route, newest first. */
  async trace(routeId: number, limit = TRACE_LIMIT): Promise<AccessEntry[]> {
    const rows = (await this.db.sequelize.query('SELECT * FROM access_log WHERE route_id = ? ORDER BY id DESC LIMIT ?', {
      replacements: [routeId, limit],
      type: QueryTypes.SELECT,
    })) as Record<string, unknown>[];
    return rows.map(toEntry);
  }

  /** Deletes every stored row (the cursor stays: cleared lines are not read again). */
  async clear(): Promise<number> {
    const n = (await this.db.sequelize.query('SELECT COUNT(*) AS n FROM access_log', { type: QueryTypes.SELECT })) as { n: number | string }[];
    await this.db.sequelize.query('DELETE FROM access_log');
    return Number(n[0]?.n ?? 0);
  }
}

function toEntry(r: Record<string, unknown>): AccessEntry {
  return {
    id: Number(r.id),
    ts: Number(r.ts),
    route_id: r.route_id === null ? null : Number(r.route_id),
    host: String(r.host),
    method: String(r.method),
    uri: String(r.uri),
    status: Number(r.status),
    duration_ms: Number(r.duration_ms),
    size: Number(r.size),
    upstream: (r.upstream as string | null) ?? null,
    client_ip: (r.client_ip as string | null) ?? null,
    user_agent: (r.user_agent as string | null) ?? null,
    auth_user: (r.auth_user as string | null) ?? null,
    debug: parseDebug(r.debug),
  };
}

function parseDebug(v: unknown): DebugHeaders | null {
  if (typeof v !== 'string' || !v) return null;
  try {
    return JSON.parse(v) as DebugHeaders;
  } catch {
    return null;
  }
}

/** Header map of a log line → {name: [values]} with credentials redacted, strings only. */
function headerMap(h: unknown): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  if (!h || typeof h !== 'object') return out;
  for (const [k, v] of Object.entries(h as Record<string, unknown>)) {
    const vals = (Array.isArray(v) ? v : [v]).filter((x): x is string => typeof x === 'string');
    out[k] = SECRET_HEADERS.has(k.toLowerCase()) ? vals.map(() => 'REDACTED') : vals.map((x) => x.slice(0, 1024));
  }
  return out;
}

function debugJson(req: Record<string, unknown>, respHeaders: unknown): string {
  const d: DebugHeaders = { request_headers: headerMap(req.headers), response_headers: headerMap(respHeaders) };
  const json = JSON.stringify(d);
  if (json.length <= DEBUG_MAX_CHARS) return json;
  // Too large: keep what fits, header by header.
  const small: DebugHeaders = { request_headers: {}, response_headers: {} };
  let size = 64;
  for (const part of ['request_headers', 'response_headers'] as const) {
    for (const [k, v] of Object.entries(d[part])) {
      const n = JSON.stringify([k, v]).length;
      if (size + n > DEBUG_MAX_CHARS) continue;
      small[part][k] = v;
      size += n;
    }
  }
  return JSON.stringify(small);
}

const cut = (s: unknown, n: number) => (typeof s === 'string' ? s.slice(0, n) : null);

/** A Caddy access-log line, parsed: its JSON and its normalised host. */
export interface AccessRecord {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- reason: a Caddy access-log line is JSON of Caddy's making, read field by field with a typeof check on each
  j: any;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- reason: its request object, checked to be an object; fields read with typeof checks
  req: any;
  host: string;
}

/** One Caddy access-log JSON line → its record (null for anything else: other log lines, bad JSON). */
export function parseRecord(line: string): AccessRecord | null {
  if (!line.trim()) return null;
  let j;
  try {
    j = JSON.parse(line);
  } catch {
    return null;
  }
  const req = j?.request;
  if (!req || typeof req !== 'object' || typeof j.status !== 'number') return null;
  const host = String(req.host ?? '')
    .toLowerCase()
    .replace(/:\d+$/, '')
    .replace(/^\[|\]$/g, '');
  return { j, req, host };
}

/** The route domains that can serve a host: the host itself and its one-label wildcard. */
export function routeDomainsFor(host: string): string[] {
  const dot = host.indexOf('.');
  return dot > 0 ? [host, `*${host.slice(dot)}`] : [host];
}

/** A record → its row, the route found by its host (exact, then the one-label wildcard). */
export function toRow({ j, req, host }: AccessRecord, hosts: Map<string, HostInfo>): Omit<Row, 'src_inode' | 'src_offset'> {
  const [exact, wildcard] = routeDomainsFor(host);
  const route = hosts.get(exact) ?? (wildcard ? hosts.get(wildcard) : undefined);
  const ua = req.headers?.['User-Agent'];
  return {
    ts: Math.round(Number(j.ts) * 1000) || 0,
    route_id: route?.id ?? null,
    host: host.slice(0, 255),
    method: String(req.method ?? '').slice(0, 16),
    uri: redactShareToken(String(req.uri ?? '')).slice(0, 4096),
    status: j.status,
    duration_ms: Math.round(Number(j.duration ?? 0) * 1e6) / 1e3,
    size: Number(j.size ?? 0) || 0,
    upstream: route?.upstream ?? null,
    client_ip: cut(req.client_ip ?? req.remote_ip, 64),
    user_agent: Array.isArray(ua) ? cut(ua[0], 512) : null,
    auth_user: typeof j.auth_user === 'string' && j.auth_user ? j.auth_user.slice(0, 254) : null,
    debug: route?.debug ? debugJson(req, j.resp_headers) : null,
  };
}

/** One Caddy access-log JSON line → a row (null for anything else). */
export function parseLine(line: string, hosts: Map<string, HostInfo>): Omit<Row, 'src_inode' | 'src_offset'> | null {
  const rec = parseRecord(line);
  return rec ? toRow(rec, hosts) : null;
}
