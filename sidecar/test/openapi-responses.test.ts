// The OpenAPI document against real answers: declared response schemas validate what the server
// sends (through z.fromJSONSchema on the document itself, not the source zod schemas), error
// statuses that occur are declared, exports declare their file bodies, request bodies keep `required`.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import { startTestServer, apiToken, bearer, type ReqInit, type TestServer } from './lib/server.js';
import { at, arrAt, objAt, str } from '../../test/lib/json.js';
import { jsonBodySchema, resolvedSchema } from './lib/openapi.js';

let s: TestServer;
let h: Record<string, string>;
let doc: unknown;
before(async () => {
  s = await startTestServer({ GATEHOUSE_RATE_LIMIT_ADMIN: '100000', GATEHOUSE_WG_SUBNET: '10.78.0.0/24', GATEHOUSE_PUBLIC_HOST: 'vpn.example.test' });
  h = bearer(await apiToken(s));
  doc = (await s.req('/api/v1/openapi.json', { headers: h })).data;
});
after(async () => s.close());

/** api(path, init?) with this file's token (its headers only), typed by method and path like s.req(). */
const api = <T = never, P extends string = string, M extends string = 'GET'>(p: P, init: ReqInit<[T] extends [never] ? M : string> = {}) =>
  s.req<T, `/api/v1${P}`, M>(`/api/v1${p}`, { ...init, headers: { ...h } });

function declared(p: string, method: string, status: number): z.ZodType {
  const schema = jsonBodySchema(doc, p, method, status);
  assert.ok(schema, `${method} ${p} declares a JSON body for ${status}`);
  if (status < 300) assert.notEqual(schema.$ref, '#/components/schemas/Ok', `${method} ${p} declares its own success body, not the generic {ok: true, ...}`);
  return z.fromJSONSchema(resolvedSchema(doc, schema));
}

function matches(p: string, method: string, res: { status: number; data: unknown }): void {
  const r = declared(p, method, res.status).safeParse(res.data);
  assert.ok(r.success, `${method} ${p} ${res.status}: ${JSON.stringify(r.error?.issues)}\n${JSON.stringify(res.data).slice(0, 400)}`);
}

test('peers and tokens: real answers match the response schemas the document declares', async () => {
  const created = await api('/peers', { method: 'POST', json: { name: 'oa-peer', expires_at: '2030-01-01', tags: 'a,b' } });
  assert.equal(created.status, 201);
  matches('/api/v1/peers', 'post', created);
  const id = created.data.peer.id;
  matches('/api/v1/peers', 'get', await api('/peers'));
  matches('/api/v1/peers/{id}', 'get', await api(`/peers/${id}`));
  matches('/api/v1/peers/{id}', 'put', await api(`/peers/${id}`, { method: 'PUT', json: { description: 'changed' } }));
  const gw = await api('/peers', { method: 'POST', json: { name: 'oa-gateway', is_gateway: true, api_port: 8080 } });
  assert.equal(gw.status, 201, JSON.stringify(gw.data));
  matches('/api/v1/peers', 'post', gw);
  const tok = await api('/tokens', { method: 'POST', json: { name: 'oa-token', scopes: ['logs'], expires_at: '2031-01-01T00:00:00' } });
  assert.equal(tok.status, 201);
  matches('/api/v1/tokens', 'post', tok);
  matches('/api/v1/tokens', 'get', await api('/tokens'));
  matches('/api/v1/tokens/{id}/fingerprint', 'delete', await api(`/tokens/${tok.data.record.id}/fingerprint`, { method: 'DELETE' }));
});

test('peer groups and tags: real answers match the declared response schemas', async () => {
  const g = await api('/peer-groups', { method: 'POST', json: { name: 'oa-group', color: '#3b82f6' } });
  assert.equal(g.status, 201, JSON.stringify(g.data));
  matches('/api/v1/peer-groups', 'post', g);
  matches('/api/v1/peer-groups', 'get', await api('/peer-groups'));
  matches('/api/v1/peer-groups/{id}', 'get', await api(`/peer-groups/${g.data.group.id}`));
  matches('/api/v1/peer-groups/{id}', 'put', await api(`/peer-groups/${g.data.group.id}`, { method: 'PUT', json: { description: 'd' } }));
  await api('/tags', { method: 'POST', json: { name: 'oa-tag' } });
  const again = await api('/tags', { method: 'POST', json: { name: 'OA-TAG' } });
  assert.equal(again.status, 200);
  matches('/api/v1/tags', 'post', again);
  matches('/api/v1/tags', 'get', await api('/tags'));
});

test('the declared response schemas are strict enough to fail: a missing or extra field is refused', () => {
  const peer = declared('/api/v1/peers/{id}', 'get', 200);
  assert.equal(peer.safeParse({ ok: true, peer: { id: 1 } }).success, false);
  assert.equal(declared('/api/v1/tokens', 'get', 200).safeParse({ ok: true, tokens: [{ id: 1, name: 'x', token_hash: 'leak' }] }).success, false);
});

test('error statuses that occur are declared with the body they carry: 404, 409 (field, route_id), 423, 502', async () => {
  const missing = await api('/peers/424242');
  assert.equal(missing.status, 404);
  matches('/api/v1/peers/{id}', 'get', missing);
  await api('/peers', { method: 'POST', json: { name: 'oa-dup' } });
  const dup = await api('/peers', { method: 'POST', json: { name: 'oa-dup' } });
  assert.equal(dup.status, 409);
  matches('/api/v1/peers', 'post', dup);
  const conflict = objAt(doc, 'components', 'schemas', 'Conflict', 'properties');
  assert.ok(conflict.field && conflict.route_id, 'the conflict body documents field and route_id');
  assert.ok(objAt(doc, 'paths', '/login', 'post', 'responses')['423'], 'a locked login is declared');
  assert.ok(objAt(doc, 'paths', '/api/v1/routes', 'post', 'responses')['502'], 'a configuration Caddy refuses is declared');
  assert.ok(objAt(doc, 'paths', '/api/v1/routes', 'post', 'responses')['409']);
});

test('exports declare their file bodies; request bodies keep their required lists', () => {
  const exp = objAt(doc, 'paths', '/api/v1/logs/activity/export', 'get', 'responses', '200', 'content');
  assert.deepEqual(objAt(exp, 'text/csv').schema, { type: 'string' });
  assert.equal(objAt(exp, 'application/json', 'schema').type, 'array');
  const reqSchema = (p: string, m: string) => objAt(doc, 'paths', p, m, 'requestBody', 'content', 'application/json', 'schema');
  const req = (p: string, m: string) => reqSchema(p, m).required;
  assert.deepEqual(arrAt(reqSchema('/api/v1/tokens', 'post'), 'required').sort(), ['name', 'scopes']);
  assert.deepEqual(req('/api/v1/peers', 'post'), ['name']);
  // domain is required except for an L4 route without TLS: the document says so in its description
  assert.equal(req('/api/v1/routes', 'post'), undefined);
  assert.match(str(at(reqSchema('/api/v1/routes', 'post'), 'properties', 'domain', 'description')), /required, except for an L4 route/);
  assert.deepEqual(arrAt(reqSchema('/api/v1/smtp', 'put'), 'required').sort(), ['from', 'host', 'port']);
});

test('each export declares its row, and a real JSON export matches it (the activity log, the access log, the RDP history)', async () => {
  await api('/peers', { method: 'POST', json: { name: 'oa-export-peer' } }); // an activity entry at least
  for (const p of ['/logs/activity/export', '/logs/access/export', '/rdp/history/export'] as const) {
    const items = objAt(doc, 'paths', `/api/v1${p}`, 'get', 'responses', '200', 'content', 'application/json', 'schema', 'items');
    assert.equal(items.type, 'object', `${p}: a typed row`);
    assert.notEqual(items.additionalProperties, true, `${p}: the row names its fields`);
    assert.ok(Object.keys(objAt(items, 'properties')).length >= 5, `${p}: the row's fields`);
    const res = await s.req(`/api/v1${p}?format=json`, { headers: h });
    assert.equal(res.status, 200);
    const r = z.array(z.fromJSONSchema(resolvedSchema(doc, items))).safeParse(res.data);
    assert.ok(r.success, `${p}: ${JSON.stringify(r.error?.issues)}`);
    if (p === '/logs/activity/export') assert.ok(arrAt(res.data).length > 0, 'the activity export has rows to check');
  }
});

// Found by test/reliability/fuzz-openapi.test.ts: answers the document did not declare.
test('POST /tags: 201 when the tag is created, 200 when it existed, both declared with the tag body', async () => {
  const created = await api('/tags', { method: 'POST', json: { name: 'oa-fresh-tag' } });
  assert.equal(created.status, 201);
  matches('/api/v1/tags', 'post', created);
  const again = await api('/tags', { method: 'POST', json: { name: 'oa-fresh-tag' } });
  assert.equal(again.status, 200);
  matches('/api/v1/tags', 'post', again);
});

test('GET /peers/:id/config declares the text/plain file it answers', async () => {
  const p = await api('/peers', { method: 'POST', json: { name: 'oa-config-peer' } });
  const res = await s.req(`/api/v1/peers/${p.data.peer.id}/config`, { headers: h });
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^text\/plain/);
  assert.deepEqual(Object.keys(objAt(doc, 'paths', '/api/v1/peers/{id}/config', 'get', 'responses', '200', 'content')), ['text/plain']);
});

test('POST /gateway/probe: the JSON echo matches its declared schema; other bodies are declared as echoed bytes of any type', async () => {
  const gw = await api('/peers', { method: 'POST', json: { name: 'oa-probe-gw', is_gateway: true, api_port: 8081 } });
  const g = bearer(gw.data.gateway!.apiToken);
  const json = await s.req('/api/v1/gateway/probe', { method: 'POST', json: { a: [1, 'x'] }, headers: g });
  assert.equal(json.status, 200);
  matches('/api/v1/gateway/probe', 'post', json);
  const content = objAt(doc, 'paths', '/api/v1/gateway/probe', 'post', 'responses', '200', 'content');
  assert.ok(content['*/*'], 'a byte-for-byte echo of any type is declared');
  const text = await s.req('/api/v1/gateway/probe', { method: 'POST', body: 'hello', headers: { ...g, 'content-type': 'text/plain' } });
  assert.equal(text.status, 200);
  assert.equal(text.data, 'hello');
});

test('GET /openapi.json matches the response schema it declares for itself (the document, not {ok: true, ...})', () => {
  const own = jsonBodySchema(doc, '/api/v1/openapi.json', 'get', 200);
  assert.ok(own);
  assert.notEqual(own.$ref, '#/components/schemas/Ok');
  assert.ok(z.fromJSONSchema(resolvedSchema(doc, own)).safeParse(doc).success);
});

test('statuses the public endpoints answer are declared: POST /password 401/403, POST /logout 403, the breaker report 404, route-auth pages 404, browser redirects 302', async () => {
  const pw = await s.req('/password', { method: 'POST', json: { current: 'x', new_password: 'y' }, headers: { accept: 'application/json' } });
  assert.equal(pw.status, 401);
  assert.ok(at(doc, 'paths', '/password', 'post', 'responses', '401') && at(doc, 'paths', '/password', 'post', 'responses', '403'));
  assert.ok(objAt(doc, 'paths', '/logout', 'post', 'responses')['403']);
  const br = await s.req('/internal/circuit-breaker', { method: 'POST', json: {}, headers: { accept: 'application/json' } });
  assert.equal(br.status, 404);
  assert.ok(objAt(doc, 'paths', '/internal/circuit-breaker', 'post', 'responses')['404']);
  const ra = await s.req('/route-auth/logout', { method: 'POST', headers: { accept: 'text/html' } });
  assert.equal(ra.status, 404);
  for (const [p, m] of [
    ['/route-auth/logout', 'post'],
    ['/route-auth/logout', 'get'],
    ['/route-auth/login', 'post'],
  ])
    assert.ok(objAt(doc, 'paths', p, m, 'responses')['404'], `${m} ${p} declares 404`);
  for (const p of ['/login', '/logout', '/password']) assert.ok(objAt(doc, 'paths', p, 'post', 'responses')['302'], `POST ${p} declares the browser redirect`);
});
