// The backup covers every table: each table of the database is a section of the backup document
// (backup/sections.ts SECTIONS) or excluded with a reason (EXCLUDED_TABLES), and each covered table's
// columns are exactly its model's (a column the model does not know would silently be left out).
// Adding a table or a column without deciding how it is backed up fails here.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { QueryTypes } from 'sequelize';
import { startTestServer, type TestServer } from './lib/server.js';
import { EXCLUDED_TABLES, SECTIONS } from '../src/backup/sections.js';

let s: TestServer;
before(async () => {
  s = await startTestServer();
});
after(async () => s.close());

async function tables(): Promise<string[]> {
  const qi = s.deps.db.sequelize.getQueryInterface();
  const all = (await qi.showAllTables()) as unknown[];
  const names = all.map((t) => (typeof t === 'string' ? t : String((t as { tableName: string }).tableName)));
  if (s.deps.db.dialect === 'sqlite')
    names.push(
      ...(await s.deps.db.sequelize.query<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table'", { type: QueryTypes.SELECT })).map(
        (r) => r.name,
      ),
    );
  return [...new Set(names)].sort();
}

test('every table is backed up or excluded with a reason', async () => {
  const covered = new Set(SECTIONS.map((x) => x.table));
  const missing = (await tables()).filter((t) => !covered.has(t) && !(t in EXCLUDED_TABLES));
  assert.deepEqual(missing, [], `tables neither in backup/sections.ts SECTIONS nor in EXCLUDED_TABLES: ${missing.join(', ')}`);
  for (const [t, reason] of Object.entries(EXCLUDED_TABLES)) assert.ok(reason.length > 10, `${t}: a reason`);
  for (const t of covered) assert.ok(!(t in EXCLUDED_TABLES), `${t} is both covered and excluded`);
});

test('no stale entries: every section and exclusion names a table that exists', async () => {
  const have = new Set(await tables());
  for (const x of SECTIONS) assert.ok(have.has(x.table), `section ${x.name}: table ${x.table} exists`);
  const dialectOwn = s.deps.db.dialect === 'sqlite' ? [] : ['sqlite_sequence'];
  for (const t of Object.keys(EXCLUDED_TABLES)) if (!dialectOwn.includes(t)) assert.ok(have.has(t), `excluded table ${t} exists`);
});

test("a covered table's columns are exactly its model's, and its secrets and references are columns", async () => {
  const qi = s.deps.db.sequelize.getQueryInterface();
  for (const x of SECTIONS) {
    // (describeTable trips over SQLite's expression indexes: PRAGMA table_info there)
    const dbCols = (
      s.deps.db.dialect === 'sqlite'
        ? (await s.deps.db.sequelize.query<{ name: string }>(`PRAGMA table_info("${x.table}")`, { type: QueryTypes.SELECT })).map((r) => r.name)
        : Object.keys(await qi.describeTable(x.table))
    ).sort();
    const modelCols = Object.keys(x.model(s.deps.db.models).getAttributes()).sort();
    assert.deepEqual(modelCols, dbCols, `${x.table}: the model's columns are the table's (else a column would be left out of the backup)`);
    for (const c of [...Object.keys(x.secrets ?? {}), ...Object.keys(x.refs ?? {}), ...(x.files ?? []), ...Object.keys(x.reset ?? {}), x.pk])
      assert.ok(dbCols.includes(c), `${x.table}.${c} exists`);
    for (const ref of Object.values(x.refs ?? {})) {
      const target = SECTIONS.findIndex((y) => y.name === ref.section);
      assert.ok(target >= 0 && target < SECTIONS.indexOf(x), `${x.name} refers to ${ref.section}, which is restored before it`);
    }
  }
});
