// The database: one Sequelize instance (SQLite file under the data directory by default, PostgreSQL
// when DATABASE_URL is set), versioned migrations run at start, and the models.
import fs from 'node:fs';
import path from 'node:path';
import { Sequelize, Transaction } from 'sequelize';
import type { MigrationParams } from 'umzug';
import type { QueryInterface } from 'sequelize';
import { migrations } from './migrations/index.js';
import { defineModels, type ModelDefiner, type Models } from './models.js';
import { installWriterGate, WriterGate } from './writer-gate.js';

/** How long an SQLite connection waits for another writer before SQLITE_BUSY. */
/** The parts of Sequelize's SQLite connection manager (not declared by Sequelize) that the database setup wraps. */
interface SqliteConnection {
  uuid?: string;
  __gatehouseConfigured?: boolean;
  configure(option: 'busyTimeout', ms: number): void;
  run(sql: string, cb: () => void): void;
}
interface SqliteConnectionManager {
  connections?: Record<string, SqliteConnection>;
  getConnection(options: unknown): Promise<SqliteConnection>;
  releaseConnection(conn: SqliteConnection): unknown;
  destroyConnection(conn: SqliteConnection): Promise<unknown>;
}

export const SQLITE_BUSY_TIMEOUT_MS = 10_000;

export interface Database {
  sequelize: Sequelize;
  models: Models;
  dialect: 'sqlite' | 'postgres';
  close(): Promise<void>;
  ping(): Promise<void>;
}

export interface DatabaseOptions {
  dataDir: string;
  databaseUrl?: string;
  /** Explicit SQLite file (tests); defaults to <dataDir>/gatehouse.db */
  sqliteFile?: string;
  logging?: (sql: string) => void;
  /** The features' models (features.ts featureModels), defined beside the platform's (db/models.ts). */
  models?: readonly ModelDefiner[];
}

export async function openDatabase(opts: DatabaseOptions): Promise<Database> {
  let sequelize: Sequelize;
  let dialect: 'sqlite' | 'postgres';
  if (opts.databaseUrl) {
    dialect = 'postgres';
    // BIGINT columns hold epoch milliseconds: parse them as numbers on PostgreSQL (they fit in 2^53).
    // The driver is loaded here, on PostgreSQL only (Sequelize's dialect requires the same module).
    const { default: pg } = await import('pg');
    pg.types.setTypeParser(20, (v: string) => Number(v));
    sequelize = new Sequelize(opts.databaseUrl, { dialect: 'postgres', logging: opts.logging ?? false, pool: { max: 10 } });
  } else {
    dialect = 'sqlite';
    fs.mkdirSync(opts.dataDir, { recursive: true, mode: 0o700 });
    const storage = opts.sqliteFile ?? path.join(opts.dataDir, 'gatehouse.db');
    sequelize = new Sequelize({
      dialect: 'sqlite',
      storage,
      logging: opts.logging ?? false,
      // Write transactions take the write lock at BEGIN: a deferred transaction that read first
      // could not upgrade to a writer after another connection committed (SQLITE_BUSY at once).
      transactionType: Transaction.TYPES.IMMEDIATE,
      // One connection: SQLite serialises writers anyway, and WAL lets readers go on.
      pool: { max: 1, min: 1, idle: 60_000 },
    });
    // Sequelize's SQLite dialect opens a separate connection for every transaction. Each new
    // connection must wait for a competing writer instead of failing at once with SQLITE_BUSY.
    // reason: Sequelize does not declare its connection manager, whose getConnection is wrapped here
    const cm = (sequelize as unknown as { connectionManager: SqliteConnectionManager }).connectionManager;
    const getConnection = cm.getConnection.bind(cm);
    cm.getConnection = async (options: unknown) => {
      const conn = await getConnection(options);
      if (!conn.__gatehouseConfigured) {
        conn.configure('busyTimeout', SQLITE_BUSY_TIMEOUT_MS);
        conn.__gatehouseConfigured = true;
      }
      return conn;
    };
    // Writers queue in this process, not inside the shared connection where reads wait behind them (writer-gate.ts).
    installWriterGate(sequelize, new WriterGate(SQLITE_BUSY_TIMEOUT_MS));
    // A transaction whose COMMIT or ROLLBACK failed (SQLITE_FULL on a full disk, an I/O error) is
    // "destroyed" by Sequelize through the pool, which never held it (transaction connections are
    // separate, see above): its connection stayed open and the writer gate stayed taken, so every
    // later write waited SQLITE_BUSY_TIMEOUT_MS (found by test/reliability/faults-disk-full.test.ts).
    // Roll back whatever is left of it and release it like a finished one (closed, gate given back).
    const destroyConnection = cm.destroyConnection.bind(cm);
    cm.destroyConnection = async (conn: SqliteConnection) => {
      if (!conn?.uuid || conn.uuid === 'default' || cm.connections?.[conn.uuid] !== conn) return destroyConnection(conn);
      await new Promise<void>((resolve) => conn.run('ROLLBACK', () => resolve())); // "no transaction is active" is fine
      cm.releaseConnection(conn);
    };
    await sequelize.query('PRAGMA journal_mode = WAL');
    await sequelize.query('PRAGMA synchronous = NORMAL');
    await sequelize.query('PRAGMA foreign_keys = ON');
  }
  await sequelize.authenticate();
  await migrate(sequelize);
  const models = defineModels(sequelize, opts.models);
  return {
    sequelize,
    models,
    dialect,
    close: () => sequelize.close(),
    ping: async () => {
      await sequelize.query('SELECT 1');
    },
  };
}

/** The migrations SequelizeMeta (umzug's SequelizeStorage) records as applied; none when the table is missing. */
async function appliedMigrations(sequelize: Sequelize): Promise<Set<string>> {
  const qi = sequelize.getQueryInterface();
  if (!(await qi.tableExists('SequelizeMeta'))) return new Set();
  const rows = (await sequelize.query('SELECT name FROM "SequelizeMeta"', { type: 'SELECT' })) as { name: string }[];
  return new Set(rows.map((r) => r.name));
}

/** Runs every pending migration, in order. Idempotent: applied ones are recorded in SequelizeMeta. */
export async function migrate(sequelize: Sequelize): Promise<string[]> {
  // A start with every migration applied (the usual one) does not load the migration runner:
  // umzug brings its command-line interface along, some 150 modules.
  const applied = await appliedMigrations(sequelize);
  if (migrations.every((m) => applied.has(m.name))) return [];
  const { Umzug, SequelizeStorage } = await import('umzug');
  const umzug = new Umzug({
    migrations: migrations.map((m) => ({
      name: m.name,
      up: async ({ context }: MigrationParams<QueryInterface>) => m.up(context, sequelize),
      down: async ({ context }: MigrationParams<QueryInterface>) => m.down?.(context, sequelize),
    })),
    context: sequelize.getQueryInterface(),
    storage: new SequelizeStorage({ sequelize }),
    logger: undefined,
  });
  const done = await umzug.up();
  return done.map((m) => m.name);
}
