// The values sealed with the master key, found through the one registry that declares them: the
// backup sections (backup/sections.ts: `secrets` of kind `master`, and `rowSecrets` for the settings
// table's JSON values). A new sealed column is declared there once, for the backup and for the
// rotation alike (sidecar/test/master-key-coverage.test.ts fails on a sealed-looking column that is
// not declared).
import type { Transaction } from 'sequelize';
import type { Database } from '../db/index.js';
import { SECTIONS, type Row, type Section } from '../backup/sections.js';
import { MASTER_SEALED, type MasterKey } from '../util/crypto.js';
import { findRows } from '../db/define.js';

const masterColumns = (s: Section) =>
  Object.entries(s.secrets ?? {})
    .filter(([, kind]) => kind === 'master')
    .map(([col]) => col);

/** The sections that can hold values sealed with the master key. */
export function sealedSections(): Section[] {
  return SECTIONS.filter((s) => s.rowSecrets || masterColumns(s).length > 0);
}

async function rowsOf(db: Database, s: Section, transaction?: Transaction): Promise<Row[]> {
  const cols = masterColumns(s);
  return await findRows(s.model(db.models), { transaction, attributes: s.rowSecrets ? undefined : [s.pk, ...cols], order: [[s.pk, 'ASC']] });
}

/** Calls f with every sealed value of a row (column values and row secrets), in place. */
function mapRow(s: Section, row: Row, f: (sealed: string, where: string) => string): Row {
  let out = { ...row };
  const where = (col: string) => `${s.table}.${col} (${s.pk} ${String(row[s.pk])})`;
  for (const col of masterColumns(s)) if (typeof out[col] === 'string' && out[col] !== '') out[col] = f(out[col] as string, where(col));
  if (s.rowSecrets) {
    // out() hands over each master-sealed value; in() asks for its stored form: f's answer
    const seen: string[] = [];
    const plain = s.rowSecrets.out(out, (kind, v) => {
      if (kind !== 'master') return v;
      seen.push(v);
      return `\u0000${seen.length - 1}`;
    });
    out = s.rowSecrets.in(plain, (kind, v) => (kind === 'master' && v.startsWith('\u0000') ? f(seen[Number(v.slice(1))]!, where('value')) : v));
  }
  return out;
}

export interface ResealResult {
  /** sealed values re-sealed, per table */
  tables: Record<string, number>;
  total: number;
}

/** Opens every sealed value with `from` and seals it with `to`, in `transaction`. */
export async function resealAll(db: Database, from: MasterKey, to: MasterKey, transaction: Transaction): Promise<ResealResult> {
  const tables: Record<string, number> = {};
  let total = 0;
  for (const s of sealedSections()) {
    let n = 0;
    for (const row of await rowsOf(db, s, transaction)) {
      const next = mapRow(s, row, (sealed, where) => {
        let plain: string;
        try {
          plain = from.open(sealed);
        } catch {
          throw new Error(`${where} does not open with the current master key: nothing was changed`);
        }
        n++;
        return to.seal(plain);
      });
      const patch: Row = {};
      for (const [col, v] of Object.entries(next)) if (v !== row[col]) patch[col] = v;
      if (Object.keys(patch).length) await s.model(db.models).update(patch, { where: { [s.pk]: row[s.pk] }, transaction, hooks: false, silent: true });
    }
    tables[s.table] = (tables[s.table] ?? 0) + n;
    total += n;
  }
  return { tables, total };
}

/** One sealed value of the database (to tell which key file opens the data), or null when it holds none. */
export async function sampleSealed(db: Database): Promise<string | null> {
  for (const s of sealedSections()) {
    for (const row of await rowsOf(db, s)) {
      let found: string | null = null;
      mapRow(s, row, (v) => (found ??= v));
      if (found !== null) return found;
    }
  }
  return null;
}

/**
 * Every place in the backed-up tables (any column, anywhere in its text) holding a value that opens
 * with `key`: after a rotation, none may open with the old key.
 */
export async function openableWith(db: Database, key: MasterKey, transaction?: Transaction): Promise<string[]> {
  const found: string[] = [];
  for (const s of SECTIONS) {
    const rows = await findRows(s.model(db.models), { transaction });
    for (const row of rows) {
      for (const [col, v] of Object.entries(row)) {
        if (typeof v !== 'string') continue;
        for (const m of v.matchAll(MASTER_SEALED)) {
          try {
            key.open(m[0]);
            found.push(`${s.table}.${col} (${s.pk} ${String(row[s.pk])})`);
          } catch {
            /* another key's, or not sealed */
          }
        }
      }
    }
  }
  return found;
}
