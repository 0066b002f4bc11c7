// SQLite: one writer at a time, queued in this process instead of inside the database connection.
//
// Sequelize's SQLite dialect runs every query outside a transaction on ONE shared connection, and
// opens a separate connection per transaction (BEGIN IMMEDIATE: the write lock is taken at BEGIN
// and held until COMMIT; the proxy's write path holds it while Caddy loads the new configuration).
// A plain write (a heartbeat's UPDATE, an activity row) issued while such a transaction runs used
// to wait for the lock INSIDE the shared connection (SQLite's busy handler), and every read queued
// behind it on that connection: the whole API stalled for as long as the transaction lasted, although
// WAL lets readers go on (test/reliability/load-gateways.test.ts: 1,000 gateways' config checks
// waiting seconds whenever an admin created a route; sidecar/test/db-writer-gate.test.ts).
//
// The gate: a transaction takes it exclusively before its connection is opened (so before BEGIN
// IMMEDIATE) and gives it back when the connection is released (commit or rollback); a write
// outside a transaction takes it shared around that one statement (such writes never wait for each
// other: the shared connection runs them one after another, with no lock to wait for while no
// transaction runs). Writers wait here, as promises, in order; reads never take it and keep
// running on the shared connection. A waiter that got nothing after `timeoutMs` goes on
// without the gate (then SQLite's own busy timeout applies, as before): a write function that
// forgot to pass its transaction to a write fails with SQLITE_BUSY as it always did, instead of
// waiting forever for a gate it holds itself.
import { QueryTypes, type Sequelize } from 'sequelize';

export type GateMode = 'shared' | 'exclusive';

/**
 * Transactions hold the gate exclusively; writes outside a transaction hold it shared (they do not
 * wait for one another: they queue inside the shared connection, where no lock is held while no
 * transaction runs, and are pipelined there). FIFO: a transaction waiting for the gate is not
 * overtaken by later plain writes.
 */
export class WriterGate {
  private shared = 0;
  private exclusive = false;
  private readonly queue: { mode: GateMode; grant: () => void }[] = [];
  /** writers that went on without the gate after waiting timeoutMs (for tests and diagnostics) */
  timeouts = 0;

  constructor(private readonly timeoutMs: number) {}

  /** Resolves with the release function once this caller holds the gate (or after timeoutMs, with a no-op). */
  acquire(mode: GateMode): Promise<() => void> {
    if (!this.queue.length && this.free(mode)) return Promise.resolve(this.take(mode));
    return new Promise((resolve) => {
      const entry = {
        mode,
        grant: () => {
          clearTimeout(timer);
          resolve(this.take(mode));
        },
      };
      const timer = setTimeout(() => {
        const i = this.queue.indexOf(entry);
        if (i >= 0) this.queue.splice(i, 1);
        this.timeouts++;
        resolve(() => undefined);
        this.pump();
      }, this.timeoutMs);
      this.queue.push(entry);
    });
  }

  get busy(): boolean {
    return this.exclusive || this.shared > 0;
  }

  get waiting(): number {
    return this.queue.length;
  }

  private free(mode: GateMode): boolean {
    return mode === 'shared' ? !this.exclusive : !this.exclusive && this.shared === 0;
  }

  private take(mode: GateMode): () => void {
    if (mode === 'shared') this.shared++;
    else this.exclusive = true;
    let done = false;
    return () => {
      if (done) return;
      done = true;
      if (mode === 'shared') this.shared--;
      else this.exclusive = false;
      this.pump();
    };
  }

  private pump(): void {
    while (this.queue.length && this.free(this.queue[0].mode)) this.queue.shift()!.grant();
  }
}

const WRITE_TYPES: ReadonlySet<string> = new Set([
  QueryTypes.INSERT,
  QueryTypes.UPDATE,
  QueryTypes.BULKUPDATE,
  QueryTypes.BULKDELETE,
  QueryTypes.DELETE,
  QueryTypes.UPSERT,
]);
const WRITE_SQL = /^\s*(INSERT|UPDATE|DELETE|REPLACE|CREATE|DROP|ALTER|VACUUM|REINDEX)\b/i;

/** Whether a query outside a transaction writes (by its Sequelize type, or by its SQL for raw queries). */
export function isWriteQuery(sql: unknown, type: string | undefined): boolean {
  if (type && WRITE_TYPES.has(type)) return true;
  if (type && type !== QueryTypes.RAW) return false;
  const text = typeof sql === 'string' ? sql : typeof sql === 'object' && sql && 'query' in sql ? String((sql as { query: unknown }).query) : '';
  return WRITE_SQL.test(text);
}

/** The part of Sequelize's (undeclared) connection manager the gate wraps. */
interface ConnectionManager {
  getConnection(options?: { uuid?: string }): Promise<object>;
  releaseConnection(conn: object, force?: boolean): unknown;
}

/** Installs the gate on a Sequelize instance of the SQLite dialect (see the header). */
export function installWriterGate(sequelize: Sequelize, gate: WriterGate): void {
  // reason: Sequelize does not declare its connection manager, whose getConnection and releaseConnection are wrapped here
  const cm = (sequelize as unknown as { connectionManager: ConnectionManager }).connectionManager;
  const held = new WeakMap<object, () => void>();
  const getConnection = cm.getConnection.bind(cm);
  cm.getConnection = async (options?: { uuid?: string }) => {
    const own = !!options?.uuid && options.uuid !== 'default';
    if (!own) return getConnection(options);
    const release = await gate.acquire('exclusive');
    try {
      const conn = await getConnection(options);
      held.set(conn, release);
      return conn;
    } catch (err) {
      release();
      throw err;
    }
  };
  const releaseConnection = cm.releaseConnection.bind(cm);
  cm.releaseConnection = (conn: object, force?: boolean) => {
    try {
      return releaseConnection(conn, force);
    } finally {
      const release = held.get(conn);
      if (release) {
        held.delete(conn);
        release();
      }
    }
  };
  const query = sequelize.query.bind(sequelize) as (sql: unknown, options?: Record<string, unknown>) => Promise<unknown>;
  // reason: Sequelize.query is an overload set typed by the query type; the gate's one wrapper passes every call through unchanged
  (sequelize as unknown as { query: unknown }).query = async (sql: unknown, options?: { transaction?: unknown; type?: string }) => {
    if (options?.transaction || !isWriteQuery(sql, options?.type)) return query(sql, options as Record<string, unknown>);
    const release = await gate.acquire('shared');
    try {
      return await query(sql, options as Record<string, unknown>);
    } finally {
      release();
    }
  };
}
