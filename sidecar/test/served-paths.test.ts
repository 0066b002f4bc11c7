// Every path the sidecar serves is in the OpenAPI document or listed, with a reason, as deliberately
// outside it: the registry's endpoints are in it by construction; the paths served outside
// the registry (fast paths, route-auth pages, admin pages) are listed in src/http/served-paths.ts,
// and this test walks that list against the running server and the document.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { login, startTestServer, type TestServer } from './lib/server.js';
import { openApiDocument } from './lib/openapi.js';
import { FAST_PATHS_OF_REGISTERED_ENDPOINTS, SERVED_OUTSIDE_REGISTRY } from '../src/http/served-paths.js';
import { KNOWN_PAGES } from '../src/route-auth/http.js';
import { VERIFY_PATH } from '../src/proxy/fragments/route-auth.js';
import { CHECK_PATH } from '../src/gateways/endpoints.js';
import { at } from '../../test/lib/json.js';

let s: TestServer;
before(async () => {
  s = await startTestServer();
});
after(async () => {
  await s?.close();
});

/** The registry's own "no endpoint here" answer: 404 with the JSON error body. */
async function isRegistryNotFound(res: Response & { data: unknown }): Promise<boolean> {
  return res.status === 404 && (res.headers.get('content-type') ?? '').includes('application/json') && at(res.data, 'ok') === false;
}

test("the discriminator works: an unknown path gets the registry's JSON 404", async () => {
  assert.equal(await isRegistryNotFound(await s.req('/no-such-page', { redirect: 'manual' })), true);
  assert.equal(await isRegistryNotFound(await s.req('/api/v1/no-such-endpoint', { redirect: 'manual' })), true);
});

test('every path listed as served outside the registry is answered by something other than the router', async () => {
  for (const p of SERVED_OUTSIDE_REGISTRY) {
    const res = await s.req(p.path, { method: p.method, redirect: 'manual', headers: { accept: 'text/html' } });
    assert.equal(await isRegistryNotFound(res), false, `${p.method} ${p.path} fell through to the router (${res.status})`);
    assert.ok(res.status < 500, `${p.method} ${p.path}: ${res.status}`);
  }
});

test('the list is complete for the route-auth pages and the fast paths, and every entry is in the OpenAPI document or says why not', async () => {
  const listed = new Set(SERVED_OUTSIDE_REGISTRY.map((p) => p.path));
  for (const page of KNOWN_PAGES) assert.ok(listed.has(page), `${page} is served but not listed`);
  assert.ok(listed.has(VERIFY_PATH), 'the verify fast path is not listed');
  assert.ok(listed.has('/route-auth/assets/login.css'));
  assert.deepEqual(FAST_PATHS_OF_REGISTERED_ENDPOINTS, [`GET ${CHECK_PATH}`]);

  const { cookie } = await login(s);
  const doc = openApiDocument((await s.req('/api/v1/openapi.json', { headers: { cookie } })).data);
  for (const p of SERVED_OUTSIDE_REGISTRY) {
    const op = doc.paths[p.path]?.[p.method.toLowerCase()];
    if (p.openapi === true) {
      assert.ok(op, `${p.method} ${p.path} is missing from the OpenAPI document`);
      assert.equal(op['x-served-by'], p.servedBy);
      assert.ok(Object.keys(op.responses!).length > 0);
    } else {
      assert.equal(op, undefined);
      assert.ok(p.openapi.outside.length > 10, `${p.method} ${p.path} is outside the document without a reason`);
    }
  }
  // the fast path of a registered endpoint is documented by that endpoint
  for (const fp of FAST_PATHS_OF_REGISTERED_ENDPOINTS) {
    const [method, path] = fp.split(' ');
    assert.ok(doc.paths[path]?.[method.toLowerCase()], `${fp} is not in the document`);
  }
  // operation ids stay unique with the added operations
  const ids = Object.values(doc.paths).flatMap((ops) => Object.values(ops).map((o) => o.operationId));
  assert.equal(new Set(ids).size, ids.length);
});
