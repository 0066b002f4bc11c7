// The leader's lock: a PostgreSQL session advisory lock (pg_try_advisory_lock) held on a connection of
// its own, outside the Sequelize pool, so that no pooled query can release or hold it by accident.
// Whoever holds it leads. The holder's death ends its session and PostgreSQL frees the lock; a
// follower's next try (every LEADER_RETRY_MS) takes it. The session asks PostgreSQL for TCP
// keepalives (5 s idle, 2 s interval, 3 probes), so that a holder that vanished without closing
// its connection (power cut, network split) is noticed by the server in about 11 s; and it sets
// idle_session_timeout (LEADER_IDLE_TIMEOUT_MS), so a holder that stopped checking loses the lock
// also behind a proxy that keeps the TCP connection open (PgBouncer, HAProxy, a relay).
// The holder side: a connection error or end, or a check that fails or takes longer than
// LEADER_CHECK_TIMEOUT_MS, ends leadership at once (onLost); the next try reconnects.
import type pg from 'pg';
import { LEADER_CHECK_TIMEOUT_MS, LEADER_IDLE_TIMEOUT_MS, LEADER_LOCK_KEY } from './config.js';
import type { Logger } from '../util/logger.js';

export class LeaderLock {
  private client: pg.Client | null = null;
  private held = false;

  constructor(
    private readonly o: {
      databaseUrl: string;
      /** shown as the connection's application_name (pg_stat_activity) */
      nodeName: string;
      log: Logger;
      /** called once when a held lock is lost (its connection failed) */
      onLost: (reason: string) => void;
    },
  ) {}

  get holding(): boolean {
    return this.held;
  }

  /** The PostgreSQL backend pid of the lock's connection (null: not connected). */
  backendPid(): number | null {
    // reason: node-postgres keeps the backend's pid on the client (processID) without typing it
    return (this.client as unknown as { processID?: number } | null)?.processID ?? null;
  }

  /** Tries to take the lock (connecting first when needed); true when this node holds it. */
  async tryAcquire(): Promise<boolean> {
    if (this.held) return true;
    const client = this.client ?? (await this.connect());
    const r = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1::bigint) AS ok', [LEADER_LOCK_KEY]);
    this.held = r.rows[0]?.ok === true;
    return this.held;
  }

  /** Whether the held lock's connection still answers (a failure drops it, calling onLost). */
  async check(): Promise<boolean> {
    const client = this.client;
    if (!this.held || !client) return false;
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        client.query('SELECT 1'),
        new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${LEADER_CHECK_TIMEOUT_MS} ms`)), LEADER_CHECK_TIMEOUT_MS))),
      ]);
      return true;
    } catch (err) {
      this.drop(client, `lock connection check failed: ${(err as Error).message}`);
      return false;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Releases the lock by closing its connection (graceful stop: a follower takes over at its next try). */
  async release(): Promise<void> {
    const client = this.client;
    this.client = null;
    this.held = false;
    await client?.end().catch(() => undefined);
  }

  private async connect(): Promise<pg.Client> {
    const { default: pgModule } = await import('pg');
    const client = new pgModule.Client({
      connectionString: this.o.databaseUrl,
      application_name: `gatehouse leader ${this.o.nodeName}`.slice(0, 63),
      keepAlive: true,
      keepAliveInitialDelayMillis: 5_000,
      connectionTimeoutMillis: LEADER_CHECK_TIMEOUT_MS,
    });
    client.on('error', (err) => this.drop(client, `lock connection error: ${err.message}`));
    client.on('end', () => this.drop(client, 'lock connection closed'));
    try {
      await client.connect();
      await client.query('SET tcp_keepalives_idle = 5; SET tcp_keepalives_interval = 2; SET tcp_keepalives_count = 3');
      await client.query(`SET idle_session_timeout = ${LEADER_IDLE_TIMEOUT_MS}`).catch((err: Error) => {
        this.o.log.warn(`cluster: idle_session_timeout not set on the leader's lock session (PostgreSQL 14+): ${err.message}`);
      });
    } catch (err) {
      await client.end().catch(() => undefined);
      throw err;
    }
    this.client = client;
    return client;
  }

  private drop(client: pg.Client, reason: string): void {
    if (client !== this.client) return;
    this.client = null;
    void client.end().catch(() => undefined);
    if (!this.held) return;
    this.held = false;
    this.o.log.warn(`cluster: leadership lost (${reason})`);
    this.o.onLost(reason);
  }
}
