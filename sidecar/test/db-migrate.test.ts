// Migrations at start (db/index.ts migrate): a fresh database gets every migration, in order, recorded
// in SequelizeMeta; a start with every migration applied finds nothing pending (and does not load the
// migration runner, umzug); a database that lacks the last migration gets exactly that one. On
// PostgreSQL too when TEST_DATABASE_URL is set (a fresh database).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { migrate, openDatabase } from '../src/db/index.js';
import { migrations } from '../src/db/migrations/index.js';
import { freshPgDatabase } from './lib/server.js';

test('fresh: every migration in order; again: nothing pending; the last one undone: only it runs again', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-migrate-'));
  const databaseUrl = process.env.TEST_DATABASE_URL ? await freshPgDatabase(process.env.TEST_DATABASE_URL) : undefined;
  const db = await openDatabase({ dataDir: dir, databaseUrl });
  try {
    const recorded = async () =>
      ((await db.sequelize.query('SELECT name FROM "SequelizeMeta"', { type: 'SELECT' })) as { name: string }[]).map((r) => r.name).sort();
    const names = migrations.map((m) => m.name);
    assert.deepEqual(await recorded(), [...names].sort(), 'openDatabase applied every migration');
    assert.deepEqual(await migrate(db.sequelize), [], 'nothing pending at the next start');
    assert.deepEqual(await recorded(), [...names].sort());

    const last = migrations.at(-1)!;
    assert.ok(last.down, `${last.name} can be undone`);
    await last.down!(db.sequelize.getQueryInterface(), db.sequelize);
    await db.sequelize.query('DELETE FROM "SequelizeMeta" WHERE name = ?', { replacements: [last.name] });
    assert.deepEqual(await migrate(db.sequelize), [last.name]);
    assert.deepEqual(await recorded(), [...names].sort());
  } finally {
    await db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
