// The cluster change feed's notices (src/cluster/feed-payload.ts): one NOTIFY text per change while
// it fits, split under PostgreSQL's 8000-byte payload limit when it does not (every id arrives
// once, in order, each part with its own sequence number), and anything else refused on decoding.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeNotice, encodeChange, isEmptyChange, MAX_PAYLOAD_BYTES, type FeedChange } from '../src/cluster/feed-payload.js';

const counter = () => {
  let n = 0;
  return () => ++n;
};

test('a small change is one notice that decodes to the same change', () => {
  const change: FeedChange = {
    routes: [3, 1, 3],
    peers: [
      { id: 7, key: 'k'.repeat(44) },
      { id: 8, key: null },
    ],
    settings: ['licence'],
    caches: ['route_auth_sessions', 'backup_schedules'],
    jobs: ['webhook deliveries', 'webhook deliveries'],
  };
  const texts = encodeChange('node-a', change, counter());
  assert.equal(texts.length, 1);
  assert.deepEqual(decodeNotice(texts[0]), {
    node: 'node-a',
    seq: 1,
    change: { routes: [3, 1], peers: change.peers, settings: ['licence'], caches: ['route_auth_sessions', 'backup_schedules'], jobs: ['webhook deliveries'] },
  });
  assert.deepEqual(decodeNotice(encodeChange('node-a', { routes: 'all' }, counter())[0])?.change, { routes: 'all' });
});

test('a change too large for one NOTIFY is split: every part fits, every id arrives once, in order', () => {
  const routes = Array.from({ length: 5000 }, (_v, i) => 100_000 + i);
  const peers = Array.from({ length: 300 }, (_v, i) => ({ id: i + 1, key: `${String(i).padStart(43, 'x')}=` }));
  const texts = encodeChange('node-a', { routes, peers, settings: ['ui.default_theme'] }, counter());
  assert.ok(texts.length > 5, `${texts.length} parts`);
  for (const t of texts) assert.ok(Buffer.byteLength(t) < MAX_PAYLOAD_BYTES, `${Buffer.byteLength(t)} bytes`);
  const decoded = texts.map((t) => decodeNotice(t)!);
  assert.deepEqual(
    decoded.map((d) => d.seq),
    texts.map((_t, i) => i + 1),
  );
  assert.deepEqual(
    decoded.flatMap((d) => (Array.isArray(d.change.routes) ? d.change.routes : [])),
    routes,
  );
  assert.deepEqual(
    decoded.flatMap((d) => d.change.peers ?? []),
    peers,
  );
  assert.deepEqual(
    decoded.flatMap((d) => d.change.settings ?? []),
    ['ui.default_theme'],
  );
});

test('what is not a notice is refused; an empty change publishes nothing', () => {
  for (const bad of [
    '',
    'x',
    '{}',
    '{"n":"a","s":0}',
    '{"n":"a","s":1,"r":[-1]}',
    '{"n":"a","s":1,"r":"some"}',
    '{"n":"a","s":1,"c":["other"]}',
    '{"n":"","s":1}',
    '{"n":"a","s":1,"j":[""]}',
    '{"n":"a","s":1,"j":"webhook deliveries"}',
  ])
    assert.equal(decodeNotice(bad), null, bad);
  assert.equal(isEmptyChange({ routes: [], peers: [], settings: [] }), true);
  assert.equal(isEmptyChange({ routes: 'all' }), false);
  assert.equal(isEmptyChange({ jobs: ['webhook deliveries'] }), false);
  assert.deepEqual(decodeNotice('{"n":"a","s":1}'), { node: 'a', seq: 1, change: {} });
});
