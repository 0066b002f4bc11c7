// SQLite writer gate (db/writer-gate.ts): while a write transaction holds the lock (as the proxy's
// write path does while Caddy loads), a write outside any transaction waits in the process and
// reads go on; the waiting write is applied after the commit; transactions queue in order.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDatabase, type Database } from '../src/db/index.js';
import { isWriteQuery, WriterGate } from '../src/db/writer-gate.js';
import { asRows } from './lib/rows.js';

async function withDb(fn: (db: Database) => Promise<void>): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-writer-gate-'));
  const db = await openDatabase({ dataDir: dir });
  try {
    await fn(db);
  } finally {
    await db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const setting = async (db: Database, key: string) => ((await db.models.Setting.findOne({ where: { key }, raw: true })) as { value: string } | null)?.value;

test('a read is not held up by a write waiting for a long write transaction (the write waits in the process, not in the shared connection)', async () => {
  await withDb(async (db) => {
    const { Setting } = db.models;
    await Setting.create({ key: 'k', value: 'before', updated_at: 1 });
    const HOLD_MS = 800;
    const t = await db.sequelize.transaction();
    await Setting.update({ value: 'in-transaction', updated_at: 2 }, { where: { key: 'k' }, transaction: t });
    const t0 = performance.now();
    let writeDoneAt = 0;
    const write = Setting.update({ value: 'plain write', updated_at: 3 }, { where: { key: 'k' } }).then(() => (writeDoneAt = performance.now() - t0));
    // not a condition: the plain write reaches the writer gate (which the database does not expose)
    await new Promise((r) => setTimeout(r, 30));
    const r0 = performance.now();
    const seen = await setting(db, 'k');
    const readMs = performance.now() - r0;
    await new Promise((r) => setTimeout(r, HOLD_MS - (performance.now() - t0))); // not a condition: the transaction holds the lock HOLD_MS
    await t.commit();
    await write;
    assert.ok(readMs < HOLD_MS / 2, `the read took ${readMs.toFixed(0)} ms while the transaction held the lock for ${HOLD_MS} ms`);
    assert.equal(seen, 'before', 'the read saw the last committed value (WAL)');
    assert.ok(writeDoneAt >= HOLD_MS - 50, `the plain write finished at ${writeDoneAt.toFixed(0)} ms, before the commit`);
    assert.equal(await setting(db, 'k'), 'plain write', 'the waiting write was applied after the commit');
  });
});

test('transactions and plain writes take the gate in order; raw and model writes both go through it; nothing is lost', async () => {
  await withDb(async (db) => {
    const { Setting } = db.models;
    const order: string[] = [];
    const tx = (name: string) =>
      db.sequelize.transaction(async (t) => {
        order.push(`${name} begin`);
        await Setting.create({ key: name, value: name, updated_at: 1 }, { transaction: t });
        await new Promise((r) => setTimeout(r, 50)); // not a condition: the transaction stays open while the others queue
        order.push(`${name} end`);
      });
    await Promise.all([
      tx('a'),
      tx('b'),
      db.sequelize.query("INSERT INTO settings (key, value, updated_at) VALUES ('raw', 'raw', 1)").then(() => order.push('raw')),
      Setting.create({ key: 'model', value: 'model', updated_at: 1 }).then(() => order.push('model')),
      tx('c'),
    ]);
    for (const n of ['a', 'b', 'c'])
      assert.ok(order.indexOf(`${n} end`) === order.indexOf(`${n} begin`) + 1, `transaction ${n} ran alone: ${order.join(', ')}`);
    assert.deepEqual(
      asRows<'Setting'>(await Setting.findAll({ attributes: ['key'], order: [['key', 'ASC']], raw: true })).map((r) => r.key),
      ['a', 'b', 'c', 'model', 'raw'],
    );
  });
});

test('the gate: plain writes share it, a transaction holds it alone and is not overtaken by later plain writes; a waiter that timed out goes on without it', async () => {
  const gate = new WriterGate(100);
  const w1 = await gate.acquire('shared');
  const w2 = await gate.acquire('shared');
  const order: string[] = [];
  const tx = gate.acquire('exclusive').then((r) => (order.push('tx'), r));
  const w3 = gate.acquire('shared').then((r) => (order.push('w3'), r));
  await new Promise((r) => setTimeout(r, 20)); // not a condition: proves neither is granted meanwhile
  assert.deepEqual(order, [], 'the transaction waits for the plain writes in flight; the later plain write waits behind it');
  w1();
  w2();
  const releaseTx = await tx;
  await new Promise((r) => setTimeout(r, 20)); // not a condition: proves w3 is not granted beside the transaction
  assert.deepEqual(order, ['tx']);
  releaseTx();
  (await w3)();
  assert.deepEqual(order, ['tx', 'w3']);
  assert.ok(!gate.busy);

  const hold = await gate.acquire('exclusive');
  const t0 = performance.now();
  const late = await gate.acquire('shared');
  assert.ok(performance.now() - t0 >= 90, 'waited the timeout');
  assert.equal(gate.timeouts, 1);
  late();
  assert.ok(gate.busy, 'the no-op release of a timed-out waiter does not free the gate');
  hold();
  hold();
  assert.ok(!gate.busy);
});

test('what counts as a write outside a transaction', () => {
  assert.ok(isWriteQuery('UPDATE x SET a = 1', 'BULKUPDATE'));
  assert.ok(isWriteQuery('INSERT INTO x VALUES (1)', 'INSERT'));
  assert.ok(isWriteQuery('  insert into x values (1)', 'RAW'));
  assert.ok(isWriteQuery('DELETE FROM x', undefined));
  assert.ok(isWriteQuery({ query: 'UPDATE x SET a = 1', values: [] }, undefined));
  assert.ok(!isWriteQuery('SELECT * FROM x', 'SELECT'));
  assert.ok(!isWriteQuery('SELECT 1', 'RAW'));
  assert.ok(!isWriteQuery('PRAGMA journal_mode = WAL', undefined));
  assert.ok(!isWriteQuery('UPDATE x SET a = 1', 'SELECT'), 'the type given wins');
});
