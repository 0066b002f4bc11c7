// SQL building blocks for the searchable, sortable lists (GET /peers, GET /routes) that work the same
// on SQLite and PostgreSQL. A search is a literal substring match: instr() on SQLite, strpos() on
// PostgreSQL, so `%` and `_` in what the admin typed are plain characters (no LIKE, nothing to escape).
import { Op, fn, col, literal, where as sqlWhere } from 'sequelize';
import type { Database } from './index.js';

type Dialect = Database['dialect'];

const position = (d: Dialect) => (d === 'postgres' ? 'strpos' : 'instr');

/**
 * `column` contains `needle`, ignoring case. LOWER() runs on both sides in SQL, so both dialects fold
 * the same characters (SQLite's LOWER folds ASCII only; PostgreSQL's follows the database's locale).
 */
export function containsText(d: Dialect, column: string, needle: string) {
  return sqlWhere(fn(position(d), fn('LOWER', col(column)), fn('LOWER', needle)), Op.gt, 0);
}

/** The same test as raw SQL, for subqueries that Sequelize's where objects cannot express. */
export function containsTextSql(db: Pick<Database, 'dialect' | 'sequelize'>, column: string, needle: string): string {
  return `${position(db.dialect)}(LOWER(${column}), LOWER(${db.sequelize.escape(needle)})) > 0`;
}

/**
 * The comma-separated list in `column` holds `entry` as a whole entry, ignoring case ("web" does not
 * match "webserver"). Spaces after commas (an older spelling of the list) are ignored.
 */
export function listHasEntry(d: Dialect, column: string, entry: string) {
  const list = literal(`(',' || REPLACE(${column}, ', ', ',') || ',')`);
  return sqlWhere(fn(position(d), fn('LOWER', list), fn('LOWER', `,${entry},`)), Op.gt, 0);
}

/** An expression list that orders dotted IPv4 addresses numerically (10.0.0.9 before 10.0.0.10). */
export function ipv4OrderKeys(d: Dialect, column: string): string[] {
  if (d === 'postgres') return [`CAST(${column} AS inet)`];
  // SQLite: CAST(text AS INTEGER) reads the leading digits, so each key is one octet of what is left
  // after the previous dot.
  const keys: string[] = [];
  let rest = column;
  for (let i = 0; i < 4; i++) {
    keys.push(`CAST(${rest} AS INTEGER)`);
    rest = `substr(${rest}, instr(${rest}, '.') + 1)`;
  }
  return keys;
}

export function parseSort<K extends string>(sort: K | `-${K}`): { key: K; dir: 'ASC' | 'DESC' } {
  return sort.startsWith('-') ? { key: sort.slice(1) as K, dir: 'DESC' } : { key: sort as K, dir: 'ASC' };
}
