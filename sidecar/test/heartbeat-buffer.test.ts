// The batch writer behind gateway heartbeats (src/gateways/heartbeat-buffer.ts): one write per
// batch, readers see pending values at once, a failed batch is retried without losing newer
// values, close() stores what is pending.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HeartbeatBuffer } from '../src/gateways/heartbeat-buffer.js';
import { waitFor } from '../../test/lib/wait.js';

type V = { seen: number; note?: string };

function recorder(fail: () => boolean = () => false) {
  const batches: [number, V][][] = [];
  const errors: number[] = [];
  const write = async (entries: [number, V][]) => {
    await new Promise((r) => setTimeout(r, 5)); // not a condition: a write that takes a while
    if (fail()) throw new Error('database is down');
    batches.push(entries);
  };
  return { batches, errors, write, onError: (_e: unknown, n: number) => errors.push(n) };
}

test('many puts within the delay become one batch; the latest value of a row wins', async () => {
  const r = recorder();
  const b = new HeartbeatBuffer<V>(r.write, 30, r.onError);
  b.put(1, { seen: 1 });
  b.put(2, { seen: 2 });
  b.put(1, { seen: 3 });
  assert.equal(r.batches.length, 0, 'nothing written before the delay');
  await waitFor(() => r.batches.length > 0, 2000, 'the batch written after the delay');
  assert.deepEqual(r.batches, [
    [
      [1, { seen: 3 }],
      [2, { seen: 2 }],
    ],
  ]);
  assert.equal(b.size, 0);
  await b.close();
});

test('overlay: a reader sees pending and in-flight values over the stored row, and the row alone once written', async () => {
  const r = recorder();
  const b = new HeartbeatBuffer<V>(r.write, 1000, r.onError);
  const stored = { id: 7, seen: 0, note: 'db' };
  assert.equal(b.overlay(7, stored), stored, 'nothing pending: the row itself');
  assert.equal(b.overlay(7, null), null, 'a missing row stays missing');
  b.put(7, { seen: 5 });
  assert.deepEqual(b.overlay(7, stored), { id: 7, seen: 5, note: 'db' });
  const flushing = b.flush();
  assert.deepEqual(b.overlay(7, stored), { id: 7, seen: 5, note: 'db' }, 'while the batch is being written');
  await flushing;
  assert.equal(b.overlay(7, stored), stored);
  await b.close();
});

test('a failed batch is kept and written with the next; a newer value that came meanwhile wins', async () => {
  let down = true;
  const r = recorder(() => down);
  const b = new HeartbeatBuffer<V>(r.write, 1000, r.onError);
  b.put(1, { seen: 1, note: 'first' });
  b.put(2, { seen: 1 });
  const flushing = b.flush();
  b.put(1, { seen: 2 }); // arrives while the failing batch is in flight
  await flushing;
  assert.deepEqual(r.errors, [2]);
  assert.equal(b.size, 2, 'both rows still pending');
  assert.deepEqual(b.overlay(1, { seen: 0 }), { seen: 2, note: 'first' });
  down = false;
  await b.flush();
  assert.deepEqual(r.batches, [
    [
      [1, { seen: 2, note: 'first' }],
      [2, { seen: 1 }],
    ],
  ]);
  await b.close();
});

test('close() writes what is pending at once and stops the timer', async () => {
  const r = recorder();
  const b = new HeartbeatBuffer<V>(r.write, 60_000, r.onError);
  b.put(3, { seen: 9 });
  await b.close();
  assert.deepEqual(r.batches, [[[3, { seen: 9 }]]]);
});

test('a read that a batch overtakes still sees the batch: values being written when the read began are laid over the row it read', async () => {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const stored = new Map<number, V>([[1, { seen: 0 }]]);
  const b = new HeartbeatBuffer<V>(
    async (entries) => {
      await gate;
      for (const [id, v] of entries) stored.set(id, { ...stored.get(id)!, ...v });
    },
    1000,
    () => {},
  );
  b.put(1, { seen: 7 });
  const flushing = b.flush(); // the batch is in flight now
  let readRelease!: () => void;
  const readGate = new Promise<void>((r) => (readRelease = r));
  // the read takes its row from the database before the batch is stored ...
  const reading = b.readThrough(
    async () => {
      const row = { id: 1, ...stored.get(1)! };
      await readGate;
      return [row];
    },
    (r) => r.id,
  );
  // ... and the batch is stored (and no longer in flight) before the read returns
  release();
  await flushing;
  readRelease();
  const [row] = await reading;
  assert.equal(row.seen, 7, 'the value the batch stored, not the row read before it');
  b.put(1, { seen: 8 });
  assert.equal(
    (
      await b.readThrough(
        async () => [{ id: 1, ...stored.get(1)! }],
        (r) => r.id,
      )
    )[0].seen,
    8,
    'and a value queued since',
  );
  await b.close();
});
