// Data that must not get in: a DNS entry that is no address (999.1.1.1) in peer configs, two users
// whose names differ only in case, and a token whose scopes contradict each other. Each refusal
// names its field, and nothing is stored.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, login, ADMIN, type TestServer } from './lib/server.js';
import { resolvedSchema } from './lib/openapi.js';
import { at, objAt } from '../../test/lib/json.js';

let s: TestServer;
let h: Record<string, string>;
before(async () => {
  s = await startTestServer({ GATEHOUSE_RATE_LIMIT_LOGIN: '1000' });
  const { cookie, csrf } = await login(s);
  h = { cookie, 'x-csrf-token': csrf, accept: 'application/json' };
});
after(async () => s.close());

test('peer DNS: 999.1.1.1 (and other out-of-range dotted numbers) is refused with fields.dns; addresses and search domains pass', async () => {
  const before = (await s.req('/api/v1/peers', { headers: h })).data.peers.length;
  for (const dns of ['999.1.1.1', '1.1.1.1, 10.0.0.300', '192.168.1.256']) {
    const r = await s.req('/api/v1/peers', { method: 'POST', headers: h, json: { name: `dns-${dns.length}-${Math.random().toString(36).slice(2, 6)}`, dns } });
    assert.equal(r.status, 400, `${dns}: ${JSON.stringify(r.data)}`);
    assert.ok(r.data.fields?.dns, `${dns}: fields.dns named`);
  }
  assert.equal((await s.req('/api/v1/peers', { headers: h })).data.peers.length, before, 'no peer stored');
  const ok = await s.req('/api/v1/peers', { method: 'POST', headers: h, json: { name: 'dns-ok', dns: '1.1.1.1, 2606:4700:4700::1111, corp.example' } });
  assert.equal(ok.status, 201, JSON.stringify(ok.data));
  assert.equal(ok.data.peer.dns, '1.1.1.1, 2606:4700:4700::1111, corp.example');
  const put = await s.req(`/api/v1/peers/${ok.data.peer.id}`, { method: 'PUT', headers: h, json: { dns: '999.1.1.1' } });
  assert.equal(put.status, 400);
  assert.ok(put.data.fields?.dns);
  assert.equal((await s.req(`/api/v1/peers/${ok.data.peer.id}`, { headers: h })).data.peer.dns, '1.1.1.1, 2606:4700:4700::1111, corp.example', 'unchanged');
});

test('usernames are unique without regard to case: Admin beside admin is 409 (create and rename); sign-in is not case-confusable', async () => {
  const count = async () => (await s.req('/api/v1/users', { headers: h })).data.users.length;
  const n = await count();
  const dup = await s.req('/api/v1/users', { method: 'POST', headers: h, json: { username: 'Admin', password: 'another-password-1', role: 'user' } });
  assert.equal(dup.status, 409, JSON.stringify(dup.data));
  assert.equal(dup.data.fields?.username, 'already in use');
  assert.equal(await count(), n, 'nothing stored');
  const bob = await s.req('/api/v1/users', { method: 'POST', headers: h, json: { username: 'bob', password: 'bob-password-1', role: 'user' } });
  assert.equal(bob.status, 201, JSON.stringify(bob.data));
  const id = bob.data.user.id;
  const rename = await s.req(`/api/v1/users/${id}`, { method: 'PUT', headers: h, json: { username: 'ADMIN' } });
  assert.equal(rename.status, 409, JSON.stringify(rename.data));
  assert.equal((await s.req(`/api/v1/users/${id}`, { headers: h })).data.user.username, 'bob', 'unchanged');
  const self = await s.req(`/api/v1/users/${id}`, { method: 'PUT', headers: h, json: { username: 'Bob' } });
  assert.equal(self.status, 200, `a user may change the case of its own name: ${JSON.stringify(self.data)}`);
  // sign-in: the one user whose name matches in any case; the lockout counts every spelling together
  const signIn = (username: string, password: string) =>
    s.req('/login', { method: 'POST', json: { username, password }, headers: { accept: 'application/json' } });
  const asBob = await signIn('bob', 'bob-password-1');
  assert.equal(asBob.status, 200, JSON.stringify(asBob.data));
  assert.equal(asBob.data.user!.username, 'Bob', 'signed in as the stored name');
  assert.equal((await signIn('ADMIN', ADMIN.password)).data.user!.username, 'admin');
  assert.equal((await signIn('BOB', 'wrong')).status, 401);
});

test('tokens: full-access together with read-only is refused with fields.scopes; the OpenAPI document says so', async () => {
  const list = async () => (await s.req('/api/v1/tokens', { headers: h })).data.tokens.length;
  const n = await list();
  const r = await s.req('/api/v1/tokens', { method: 'POST', headers: h, json: { name: 'both', scopes: ['full-access', 'read-only'] } });
  assert.equal(r.status, 400, JSON.stringify(r.data));
  assert.match(r.data.fields?.scopes ?? '', /contradict/);
  assert.equal(await list(), n, 'no token stored');
  assert.equal((await s.req('/api/v1/tokens', { method: 'POST', headers: h, json: { name: 'ro', scopes: ['read-only', 'peers'] } })).status, 201);
  const doc = (await s.req('/api/v1/openapi.json', { headers: h })).data;
  const body = objAt(doc, 'paths', '/api/v1/tokens', 'post', 'requestBody', 'content', 'application/json', 'schema');
  const schema = resolvedSchema(doc, body);
  assert.deepEqual(at(schema, 'properties', 'scopes', 'not'), { allOf: [{ contains: { const: 'full-access' } }, { contains: { const: 'read-only' } }] });
});
