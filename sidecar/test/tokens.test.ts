import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { startTestServer, login, bearer, type TestServer } from './lib/server.js';
import { manualClock } from '../src/util/clock.js';
import type { Token } from './lib/protocol.js';
import type { Row } from './lib/rows.js';

const clock = manualClock(Date.UTC(2026, 10, 23, 12, 0, 0));
let s: TestServer;
let h: Record<string, string>;
before(async () => {
  s = await startTestServer({}, { clock });
  const { cookie, csrf } = await login(s);
  h = { cookie, 'x-csrf-token': csrf };
});
after(async () => s.close());

const create = (json: unknown) => s.req('/api/v1/tokens', { method: 'POST', json, headers: h });

test('token is gth_ plaintext once, only its SHA-256 stored, never listed', async () => {
  const r = await create({ name: 'ci', scopes: ['peers', 'logs'] });
  assert.equal(r.status, 201);
  assert.match(r.data.token, /^gth_[A-Za-z0-9_-]{43}$/);
  const row = ((await s.deps.db.models.ApiToken.findByPk(r.data.record.id, { raw: true })) as Row<'ApiToken'> | null)!;
  assert.equal(row.token_hash, crypto.createHash('sha256').update(r.data.token).digest('hex'));
  assert.ok(!JSON.stringify(row).includes(r.data.token));
  const list = await s.req('/api/v1/tokens', { headers: h });
  assert.ok(!JSON.stringify(list.data).includes(r.data.token));
  assert.ok(!JSON.stringify(list.data).includes(row.token_hash));
  assert.deepEqual(list.data.tokens.find((t: Token) => t.id === r.data.record.id)!.scopes, ['peers', 'logs']);
});

test('all three headers work; no CSRF for tokens', async () => {
  const { data } = await create({ name: 'hdr', scopes: ['settings'] });
  for (const headers of [bearer(data.token), { 'x-api-token': data.token }, { 'x-api-key': data.token }] as Record<string, string>[]) {
    const r = await s.req('/api/v1/settings/default-theme', { method: 'PUT', json: { theme: 'pro' }, headers });
    assert.equal(r.status, 200, JSON.stringify(headers));
  }
});

test('scopes: matching scope passes, others 403, read-only is GET only', async () => {
  const peersTok = (await create({ name: 'p', scopes: ['logs'] })).data.token;
  assert.equal((await s.req('/api/v1/logs/activity', { headers: bearer(peersTok) })).status, 200);
  assert.equal((await s.req('/api/v1/settings/app', { headers: bearer(peersTok) })).status, 403);
  const ro = (await create({ name: 'ro', scopes: ['read-only'] })).data.token;
  assert.equal((await s.req('/api/v1/settings/app', { headers: bearer(ro) })).status, 200);
  assert.equal((await s.req('/api/v1/settings/default-theme', { method: 'PUT', json: { theme: 'pro' }, headers: bearer(ro) })).status, 403);
});

test('expiry is enforced; revocation is immediate', async () => {
  const r = await create({ name: 'short', scopes: ['logs'], expires_at: new Date(clock() + 60_000).toISOString() });
  assert.equal(r.status, 201);
  assert.equal((await s.req('/api/v1/logs/recent', { headers: bearer(r.data.token) })).status, 200);
  clock.advance(60_000);
  const exp = await s.req('/api/v1/logs/recent', { headers: bearer(r.data.token) });
  assert.equal(exp.status, 401);
  const list = await s.req('/api/v1/tokens', { headers: h });
  assert.equal(list.data.tokens.find((t: Token) => t.id === r.data.record.id)!.expired, true);
  const past = await create({ name: 'past', scopes: ['logs'], expires_at: clock() - 1 });
  assert.equal(past.status, 422);
  assert.ok(past.data.fields!.expires_at);
  const live = await create({ name: 'live', scopes: ['logs'] });
  assert.equal((await s.req('/api/v1/logs/recent', { headers: bearer(live.data.token) })).status, 200);
  assert.equal((await s.req(`/api/v1/tokens/${live.data.record.id}`, { method: 'DELETE', headers: h })).status, 200);
  assert.equal((await s.req('/api/v1/logs/recent', { headers: bearer(live.data.token) })).status, 401);
});

test('machine fingerprint: bound on first use, other machine refused, reset rebinds', async () => {
  const r = await create({ name: 'desktop', scopes: ['logs'] });
  const t = r.data.token;
  assert.equal((await s.req('/api/v1/logs/recent', { headers: bearer(t) })).status, 200, 'no fingerprint: not bound');
  assert.equal((await s.req('/api/v1/logs/recent', { headers: { ...bearer(t), 'x-machine-fingerprint': 'machine-A' } })).status, 200);
  const other = await s.req('/api/v1/logs/recent', { headers: { ...bearer(t), 'x-machine-fingerprint': 'machine-B' } });
  assert.equal(other.status, 403);
  assert.match(other.data.error!, /another machine/);
  assert.equal((await s.req('/api/v1/logs/recent', { headers: bearer(t) })).status, 403, 'bound token without fingerprint refused');
  assert.equal((await s.req('/api/v1/logs/recent', { headers: { ...bearer(t), 'x-machine-fingerprint': 'machine-A' } })).status, 200);
  const row = ((await s.deps.db.models.ApiToken.findByPk(r.data.record.id, { raw: true })) as Row<'ApiToken'> | null)!;
  assert.equal(row.fingerprint, crypto.createHash('sha256').update('machine-A').digest('hex'));
  const reset = await s.req(`/api/v1/tokens/${r.data.record.id}/fingerprint`, { method: 'DELETE', headers: h });
  assert.equal(reset.data.record.fingerprint_bound, false);
  assert.equal((await s.req('/api/v1/logs/recent', { headers: { ...bearer(t), 'x-machine-fingerprint': 'machine-B' } })).status, 200, 'rebinds to B');
  assert.equal((await s.req('/api/v1/logs/recent', { headers: { ...bearer(t), 'x-machine-fingerprint': 'machine-A' } })).status, 403);
});

test('bad token bodies: 400 with fields, nothing stored', async () => {
  const before = (await s.req('/api/v1/tokens', { headers: h })).data.tokens.length;
  const r = await create({ name: '', scopes: ['everything'], expires_at: 'soon', user_id: -1 });
  assert.equal(r.status, 400);
  assert.ok(r.data.fields!.name && r.data.fields!['scopes.0'] && r.data.fields!.expires_at && r.data.fields!.user_id);
  const r2 = await create({ name: 'x', scopes: [] });
  assert.ok(r2.data.fields!.scopes);
  const r3 = await create({ name: 'x' });
  assert.ok(r3.data.fields!.scopes);
  const r4 = await create({ name: 'x', scopes: ['logs'], user_id: 99999 });
  assert.equal(r4.status, 422);
  assert.equal((await s.req('/api/v1/tokens', { headers: h })).data.tokens.length, before);
  const badJson = await s.req('/api/v1/tokens', { method: 'POST', body: '{"name":', headers: { ...h, 'content-type': 'application/json' } });
  assert.equal(badJson.status, 400);
  assert.equal(badJson.data.ok, false);
});

test('a far-future expires_at is refused with 400 and saves no token', async () => {
  const count = async () => (await s.req('/api/v1/tokens', { headers: h })).data.tokens.length as number;
  const before = await count();
  for (const expires_at of [9007199254740991, 8.64e15 + 1, Date.UTC(10000, 0, 1)]) {
    const r = await create({ name: 'far', scopes: ['logs'], expires_at });
    assert.equal(r.status, 400, `${expires_at} → ${r.status} ${JSON.stringify(r.data)}`);
    assert.ok(r.data.fields?.expires_at);
  }
  assert.equal(await count(), before);
});

test('a stored out-of-range expiry never takes GET /tokens down', async () => {
  const r = await create({ name: 'bad-row', scopes: ['logs'] });
  await s.deps.db.models.ApiToken.update({ expires_at: 9007199254740991 }, { where: { id: r.data.record.id } });
  const list = await s.req('/api/v1/tokens', { headers: h });
  assert.equal(list.status, 200, JSON.stringify(list.data));
  const t = list.data.tokens.find((x: Token) => x.id === r.data.record.id);
  assert.equal(t!.expires_at, null);
  assert.equal(t!.expired, false);
  assert.equal((await s.req('/api/v1/logs/recent', { headers: bearer(r.data.token) })).status, 200, 'the token still works');
});

test('expires_at: plain dates and zone-less date-times are UTC; numeric strings, arrays and booleans are 400', async () => {
  const plain = await create({ name: 'plain', scopes: ['logs'], expires_at: '2030-01-01' });
  assert.equal(plain.status, 201, JSON.stringify(plain.data));
  assert.equal(plain.data.record.expires_at, '2030-01-01T00:00:00.000Z');
  const local = await create({ name: 'local', scopes: ['logs'], expires_at: '2030-01-01T00:00:00' });
  assert.equal(local.status, 201, JSON.stringify(local.data));
  assert.equal(local.data.record.expires_at, '2030-01-01T00:00:00.000Z');
  for (const expires_at of ['4102444800000', [4102444800000], true]) {
    const r = await create({ name: 'loose', scopes: ['logs'], expires_at });
    assert.equal(r.status, 400, `${JSON.stringify(expires_at)} → ${r.status}`);
    assert.ok(r.data.fields?.expires_at);
  }
});

test('a token name with a NUL, another control character or an unpaired surrogate is a 400 and saves nothing', async () => {
  const count = async () => (await s.req('/api/v1/tokens', { headers: h })).data.tokens.length as number;
  const before = await count();
  for (const name of ['ci\u0000', 'ci\n', '\u001bci', 'ci\ud800']) {
    const r = await create({ name, scopes: ['logs'] });
    assert.equal(r.status, 400, JSON.stringify(name));
    assert.ok(r.data.fields?.name);
  }
  assert.equal(await count(), before);
});
