// The routes the registry serves, in the order Koa's router tries them: (method, path, auth, scope)
// of every endpoint against a golden file. A change to how endpoints are registered (features,
// folders, the order of endpoints.ts endpointOrder) must leave this list as it is; a new or changed
// endpoint updates it (UPDATE_GOLDEN=1, then review the diff: a new endpoint only adds its line).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { fullPath, scopeForPath, type Endpoint } from '../src/http/registry.js';
import { endpointOrder } from '../src/endpoints.js';
import { assertGolden, goldenDir } from './lib/golden.js';
import { startTestServer, type TestServer } from './lib/server.js';
import path from 'node:path';

let s: TestServer;
before(async () => {
  s = await startTestServer();
});
after(async () => s.close());

const key = (e: Endpoint) => `${e.method} ${fullPath(e)}`;

test('the registry serves the same routes, in the same order', () => {
  const lines = s.endpoints.map((e) => {
    const scope = e.scope !== undefined ? e.scope : scopeForPath(e.path);
    return `${e.method} ${fullPath(e)} ${e.auth} ${scope === null ? '-' : scope}`;
  });
  assertGolden(path.join(goldenDir('registry'), 'routes.txt'), `${lines.join('\n')}\n`);
});

test('endpointOrder is a strict total order on the served endpoints: each pair compares one way, in the served order', () => {
  const list = s.endpoints;
  assert.ok(list.length > 100);
  for (let i = 0; i < list.length; i++) {
    assert.equal(endpointOrder(list[i], list[i]), 0);
    for (let j = i + 1; j < list.length; j++) {
      // (with both directions for every pair, the relation is exactly the served order, hence transitive)
      assert.ok(endpointOrder(list[i], list[j]) < 0, `${key(list[i])} before ${key(list[j])}`);
      assert.ok(endpointOrder(list[j], list[i]) > 0, `${key(list[j])} after ${key(list[i])}`);
    }
  }
});

/** A seeded shuffle (mulberry32), so a failure repeats. */
function shuffled<T>(xs: readonly T[], seed: number): T[] {
  let t = seed;
  const rand = () => {
    t = (t + 0x6d2b79f5) | 0;
    let r = Math.imul(t ^ (t >>> 15), 1 | t);
    r = (r + Math.imul(r ^ (r >>> 7), 61 | r)) ^ r;
    return ((r ^ (r >>> 14)) >>> 0) / 4294967296;
  };
  const out = [...xs];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

test('the served order does not depend on the order the features list the endpoints in, and an endpoint added only adds its line', () => {
  const served = s.endpoints.map(key);
  for (let seed = 1; seed <= 20; seed++) {
    const list = shuffled(s.endpoints, seed);
    assert.deepEqual([...list].sort(endpointOrder).map(key), served, `shuffle ${seed}`);
    // the list without one endpoint (before it was added) is the served list without its line
    const added = list.pop()!;
    assert.deepEqual(
      list.sort(endpointOrder).map(key),
      served.filter((k) => k !== key(added)),
      `without ${key(added)}`,
    );
  }
});

test('among endpoints that match the same request, the one with a literal segment where the other has a parameter is tried first', () => {
  const list = s.endpoints;
  const segs = (e: Endpoint) => fullPath(e).split('/');
  let pairs = 0;
  for (let i = 0; i < list.length; i++) {
    for (let j = i + 1; j < list.length; j++) {
      const [a, b] = [segs(list[i]), segs(list[j])];
      const overlap = list[i].method === list[j].method && a.length === b.length && a.every((x, k) => x === b[k] || x.startsWith(':') || b[k].startsWith(':'));
      if (!overlap) continue;
      pairs++;
      const k = a.findIndex((x, n) => x.startsWith(':') !== b[n].startsWith(':'));
      assert.ok(k >= 0 && !a[k].startsWith(':'), `${key(list[i])} is tried before ${key(list[j])}: it has the literal segment`);
    }
  }
  assert.ok(pairs >= 5, `overlapping pairs seen: ${pairs} (/users/locked and /users/:id among them)`);
});
