// Database failures that are the machine's state, not the request's fault, and what the client is
// told about them (the error middleware answers with these instead of a bare 500):
// - the disk holding the database is full (SQLite SQLITE_FULL, PostgreSQL 53100 disk_full, a write
//   failing with ENOSPC): 507 Insufficient Storage; nothing was written (the transaction rolled
//   back), the same request succeeds once space is freed;
// - the database cannot be reached (PostgreSQL down or restarting, its connection cut, the pool
//   unable to connect): 503 Service Unavailable with Retry-After; the pool reconnects by itself.

import { msg, type Msg } from '@gatehouse/common/messages/index.js';

export interface DatabaseFailure {
  status: 503 | 507;
  message: Msg;
  retryAfterS?: number;
}

/** SQLSTATE codes of a PostgreSQL server that is shutting down, starting or gone (classes 08 and 57P). */
const PG_UNAVAILABLE = /^(08\d{3}|57P0[1-4])$/;
const UNREACHABLE_MESSAGE =
  /Connection terminated|terminating connection|the database system is (starting up|shutting down|in recovery mode)|ECONNREFUSED|ECONNRESET|connect ETIMEDOUT|Client has encountered a connection error|Connection is closed/i;
const CONNECTION_ERRORS = new Set([
  'SequelizeConnectionError',
  'SequelizeConnectionRefusedError',
  'SequelizeConnectionAcquireTimeoutError',
  'SequelizeConnectionTimedOutError',
  'SequelizeHostNotFoundError',
  'SequelizeHostNotReachableError',
  'SequelizeAccessDeniedError',
  'SequelizeInvalidConnectionError',
]);

export function databaseFailure(err: unknown): DatabaseFailure | null {
  const e = err as {
    name?: string;
    message?: string;
    code?: string;
    original?: { code?: string; message?: string };
    parent?: { code?: string; message?: string };
  } | null;
  if (!e || typeof e !== 'object') return null;
  const code = e.original?.code ?? e.parent?.code ?? e.code;
  const message = `${e.message ?? ''} ${e.original?.message ?? ''}`;
  if (code === 'SQLITE_FULL' || code === '53100' || code === 'ENOSPC' || /SQLITE_FULL|database or disk is full|No space left on device/.test(message)) {
    return { status: 507, message: msg('request.database_full') };
  }
  if (!e.name?.startsWith('Sequelize') && code !== 'ECONNREFUSED') return null;
  if (CONNECTION_ERRORS.has(e.name ?? '') || (code !== undefined && PG_UNAVAILABLE.test(code)) || UNREACHABLE_MESSAGE.test(message)) {
    return { status: 503, message: msg('request.database_unreachable'), retryAfterS: 5 };
  }
  return null;
}
