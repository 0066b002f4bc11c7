// The gateways' configuration cache (gateways/config-cache.ts) on its own: which writes drop which
// entries, and fills that race with writes. The source is a table of rows held here, whose reads
// can be held open to interleave a write with them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GatewayConfigCache, type OwnedRow } from '../src/gateways/config-cache.js';

interface Held {
  release: () => void;
}

function table(initial: OwnedRow[]) {
  const rows = new Map(initial.map((r) => [r.id, { ...r }]));
  let hold: Promise<void> | null = null;
  const held: Held[] = [];
  const snapshot = async (filter: (r: OwnedRow) => boolean) => {
    const taken = [...rows.values()].filter(filter).map((r) => ({ ...r }));
    if (hold) await hold;
    return taken.sort((a, b) => a.id - b.id);
  };
  const cache = new GatewayConfigCache<OwnedRow, string>({
    readAll: () => snapshot(() => true),
    readOne: (peerId) => snapshot((r) => r.target_peer_id === peerId),
    build: (peerId, enabled) => `${peerId}:${enabled.map((r) => r.id).join(',')}`,
  });
  return {
    rows,
    cache,
    /** the next reads take their rows now and answer when released */
    holdReads(): Held {
      let release = () => {};
      hold = new Promise<void>((r) => (release = r));
      const h = { release: () => ((hold = null), release()) };
      held.push(h);
      return h;
    },
  };
}

test('a route write drops the gateways it touches: its old owner and its new target, nothing else', async () => {
  const t = table([
    { id: 1, target_peer_id: 10, enabled: true },
    { id: 2, target_peer_id: 20, enabled: false },
    { id: 3, target_peer_id: 30, enabled: true },
  ]);
  const { cache } = t;
  assert.equal(await cache.get(10), '10:1');
  assert.equal(await cache.get(20), '20:');
  assert.equal(await cache.get(40), '40:', 'a gateway without routes');
  assert.deepEqual(cache.reads, { all: 1, one: 0 });

  // enabling the disabled route 2: the write names only its id; its gateway is known from the refill
  t.rows.get(2)!.enabled = true;
  cache.dropRoutes([{ id: 2, peer_id: null }]);
  assert.equal(await cache.get(20), '20:2');
  assert.equal(await cache.get(10), '10:1');
  assert.deepEqual(cache.reads, { all: 1, one: 1 });

  // route 1 moves from 10 to 40: both read again, 20 and 30 not
  t.rows.get(1)!.target_peer_id = 40;
  cache.dropRoutes([{ id: 1, peer_id: 40 }]);
  assert.equal(await cache.get(10), '10:');
  assert.equal(await cache.get(40), '40:1');
  assert.equal(await cache.get(30), '30:3');
  assert.deepEqual(cache.reads, { all: 1, one: 3 });

  // a new route for 30, then its deletion
  t.rows.set(4, { id: 4, target_peer_id: 30, enabled: true });
  cache.dropRoutes([{ id: 4, peer_id: 30 }]);
  assert.equal(await cache.get(30), '30:3,4');
  t.rows.delete(4);
  cache.dropRoutes([{ id: 4, peer_id: null }], true);
  assert.equal(await cache.get(30), '30:3');

  // a write nobody can attribute: everything is read again, once
  cache.dropRoutes(null);
  assert.equal(await cache.get(10), '10:');
  assert.equal(await cache.get(20), '20:2');
  assert.equal(cache.reads.all, 2);
});

test('a fill that a write overtook is not kept: single reads, and the dropped gateway within a whole refill', async () => {
  const t = table([
    { id: 1, target_peer_id: 10, enabled: true },
    { id: 2, target_peer_id: 20, enabled: true },
  ]);
  const { cache } = t;
  // whole refill held open while route 1 is disabled: 10's part of it is stale, 20's is good
  const h = t.holdReads();
  const first = cache.get(20);
  t.rows.get(1)!.enabled = false;
  cache.dropRoutes([{ id: 1, peer_id: 10 }]);
  h.release();
  assert.equal(await first, '20:2');
  assert.equal(await cache.get(10), '10:', 'read again, not taken from the overtaken refill');
  assert.deepEqual(cache.reads, { all: 1, one: 1 });

  // a single read held open while its gateway is written: it answers, but is not kept
  cache.dropRoutes([{ id: 1, peer_id: null }]);
  const h2 = t.holdReads();
  const pending = cache.get(10);
  t.rows.get(1)!.enabled = true;
  cache.dropRoutes([{ id: 1, peer_id: null }]);
  h2.release();
  assert.equal(await pending, '10:', 'the answer of a read that began before the write');
  assert.equal(await cache.get(10), '10:1', 'the next call reads again');

  // a whole drop during a whole refill: the refill is thrown away, callers read their own
  cache.dropAll();
  const h3 = t.holdReads();
  const during = cache.get(20);
  cache.dropAll();
  t.rows.get(2)!.enabled = false;
  h3.release();
  const reads = { ...cache.reads };
  assert.equal(await during, '20:', 'its own read, after the overtaken refill');
  assert.deepEqual(cache.reads, { all: reads.all, one: reads.one + 1 });
  assert.equal(await cache.get(20), '20:');
});
