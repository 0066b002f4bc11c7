// The fuzzer's view of the database: row count and a hash of each table, to prove that a rejected
// request changed nothing (SQLite or PostgreSQL, read through the server's own Sequelize).
import crypto from 'node:crypto';
import type { Sequelize } from 'sequelize';

export type Snapshot = Map<string, { rows: number; hash: string }>;

export async function tables(sq: Sequelize): Promise<string[]> {
  const list = (await sq.getQueryInterface().showAllTables()) as unknown[];
  return list
    .map((t) => (typeof t === 'string' ? t : (t as { tableName: string }).tableName))
    .filter((t) => !t.startsWith('sqlite_') && t !== 'SequelizeMeta' && t !== 'umzug_migrations' && t !== 'migrations')
    .sort();
}

/**
 * Columns left out of the hash: bookkeeping of the authentication itself, which every request that
 * authenticates does whatever it then asks (a token's last use), not a change the request made.
 */
const BOOKKEEPING: Record<string, string[]> = { api_tokens: ['last_used_at'] };

export async function snapshot(sq: Sequelize, names: string[]): Promise<Snapshot> {
  const out: Snapshot = new Map();
  for (const t of names) {
    const [rows] = await sq.query(`SELECT * FROM "${t}"`);
    const skip = BOOKKEEPING[t] ?? [];
    const lines = (rows as Record<string, unknown>[])
      .map((r) =>
        JSON.stringify(
          Object.keys(r)
            .filter((k) => !skip.includes(k))
            .sort()
            .map((k) => [k, r[k] === null || r[k] === undefined ? null : String(r[k])]),
        ),
      )
      .sort();
    out.set(t, { rows: lines.length, hash: crypto.createHash('sha256').update(lines.join('\n')).digest('hex') });
  }
  return out;
}

/** Tables whose count or content differ between two snapshots. */
export function changed(a: Snapshot, b: Snapshot): string[] {
  const out: string[] = [];
  for (const [t, v] of a) {
    const w = b.get(t);
    if (!w || w.rows !== v.rows || w.hash !== v.hash)
      out.push(`${t} (${v.rows} → ${w?.rows ?? 'gone'} rows${w && w.rows === v.rows ? ', content changed' : ''})`);
  }
  for (const t of b.keys()) if (!a.has(t)) out.push(`${t} (new table)`);
  return out;
}
