// The OpenAPI document is the truth about the API: targeted
// cases for what an outside fuzzer found, next to the property-based test that walks every
// operation (test/reliability/fuzz-openapi.test.ts). Each case checks the answer and that the
// document declares it: the rule in the schema (pattern, range, required header) when a schema can
// state it, else a documented status with its reason (404, 409, 413, 415, 422).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { startTestServer, apiToken, bearer, login, type TestServer } from './lib/server.js';
import { at, objAt, objsAt } from '../../test/lib/json.js';

let s: TestServer;
let h: Record<string, string>;
let doc: unknown;
let peer: number;
let gwPeer: number;
let route: number;
before(async () => {
  s = await startTestServer({ GATEHOUSE_RATE_LIMIT_ADMIN: '100000', GATEHOUSE_RATE_LIMIT_CLIENT: '100000', GATEHOUSE_RATE_LIMIT_LOGIN: '100000' });
  h = bearer(await apiToken(s));
  doc = (await s.req('/api/v1/openapi.json', { headers: h })).data;
  peer = (await s.req('/api/v1/peers', { method: 'POST', json: { name: 'truth-a' }, headers: h })).data.peer.id;
  gwPeer = (await s.req('/api/v1/peers', { method: 'POST', json: { name: 'truth-gw', is_gateway: true }, headers: h })).data.peer.id;
  route = (await s.req('/api/v1/routes', { method: 'POST', json: { domain: 'truth.example.test', peer_id: peer, target_port: 80 }, headers: h })).data.route.id;
});
after(async () => s.close());

const op = (p: string, m: string) => objAt(doc, 'paths', p, m);
/** The parameter of an operation by its name (undefined when it has none of that name). */
const param = (p: string, m: string, name: string) => objsAt(op(p, m), 'parameters').find((x) => x.name === name);
const declares = (p: string, m: string, status: number) =>
  assert.ok(at(doc, 'paths', p, m, 'responses', String(status)), `${m.toUpperCase()} ${p} declares ${status}`);

function raw(method: string, p: string, headers: Record<string, string> = {}): Promise<{ status: number; allow: string | undefined; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(s.url + p, { method, headers: { accept: 'application/json', ...headers } }, (res) => {
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, allow: res.headers.allow, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

test('a method the path does not serve: 405 with Allow (TRACE too, not 501), the standard body; OPTIONS lists the methods', async () => {
  for (const [m, p, allow] of [
    ['TRACE', '/api/v1/peers', 'GET, HEAD, POST'],
    ['DELETE', '/api/v1/peers', 'GET, HEAD, POST'],
    ['PATCH', `/api/v1/routes/${route}`, 'DELETE, GET, HEAD, PUT'],
    ['TRACE', '/health', 'GET, HEAD'],
    ['PUT', '/login', 'GET, HEAD, POST'],
    ['DELETE', '/api/v1/openapi.json', 'GET, HEAD'],
  ] as const) {
    const r = await raw(m, p, h);
    assert.equal(r.status, 405, `${m} ${p}: ${r.status} ${r.body}`);
    assert.equal(r.allow, allow, `${m} ${p}`);
    assert.equal(JSON.parse(r.body).ok, false);
  }
  const o = await raw('OPTIONS', '/api/v1/peers', h);
  assert.equal(o.status, 204);
  assert.equal(o.allow, 'GET, HEAD, POST');
  // an unknown path stays a 404, and a path's own method is not touched
  assert.equal((await raw('TRACE', '/api/v1/no-such-thing', h)).status, 404);
  assert.equal((await raw('GET', '/assets/nope-123.js')).status, 404);
});

test('required headers are in the document and checked with the body: X-Backup-Passphrase, X-Machine-Fingerprint, X-Gatehouse-Wol-Route', async () => {
  const pass = param('/api/v1/settings/backup', 'get', 'X-Backup-Passphrase');
  assert.deepEqual([pass?.in, pass?.required, at(pass, 'schema', 'minLength')], ['header', true, 12]);
  const none = await s.req('/api/v1/settings/backup', { headers: h });
  assert.equal(none.status, 400);
  assert.match(none.data.fields!['X-Backup-Passphrase'], /required/);
  const short = await s.req('/api/v1/settings/backup', { headers: { ...h, 'x-backup-passphrase': 'too-short' } });
  assert.equal(short.status, 400);
  assert.equal((await s.req('/api/v1/settings/backup', { headers: { ...h, 'x-backup-passphrase': 'long enough passphrase' } })).status, 200);
  for (const p of ['/api/v1/client/register', '/api/v1/client/heartbeat', '/api/v1/client/status', '/api/v1/client/peer/hostname']) {
    assert.equal(param(p, 'post', 'X-Machine-Fingerprint')?.required, true, p);
  }
  for (const p of ['/api/v1/client/config', '/api/v1/client/config/check', '/api/v1/client/traffic'])
    assert.equal(param(p, 'get', 'X-Machine-Fingerprint')?.required, true, p);
  const ct = (await s.req('/api/v1/tokens', { method: 'POST', json: { name: 'truth-client', scopes: ['client'] }, headers: h })).data.token;
  const reg = await s.req('/api/v1/client/register', {
    method: 'POST',
    json: { hostname: 'x', platform: 'linux-x64', client_version: '1' },
    headers: bearer(ct),
  });
  assert.equal(reg.status, 400);
  assert.match(reg.data.fields!['X-Machine-Fingerprint'], /required/);
  const wol = op('/gateway-wol/wait', 'get');
  assert.equal(param('/gateway-wol/wait', 'get', 'X-Gatehouse-Wol-Route')?.required, true);
  const w = await s.req('/gateway-wol/wait', { headers: { accept: 'text/html' } });
  assert.equal(w.status, 400);
  assert.ok(w.headers.get('content-type')?.startsWith('application/json'));
  for (const st of [404, 502, 503, 504])
    assert.ok(objAt(wol, 'responses', String(st), 'content')['text/html'], `the waking-up page's ${st} is declared as HTML too`);
});

test('refusals no schema can state are documented statuses with their reason, not 400', async () => {
  // a reference to a row that does not exist: 422 naming the field
  const r = await s.req('/api/v1/routes', { method: 'POST', json: { domain: 'ref.example.test', peer_id: 999999, target_port: 80 }, headers: h });
  assert.equal(r.status, 422, JSON.stringify(r.data));
  assert.match(r.data.fields!.peer_id, /does not exist/);
  declares('/api/v1/routes', 'post', 422);
  // the combination with the stored record (a partial update)
  const u = await s.req(`/api/v1/routes/${route}`, { method: 'PUT', json: { target_kind: 'gateway' }, headers: h });
  assert.equal(u.status, 422, JSON.stringify(u.data));
  declares('/api/v1/routes/{id}', 'put', 422);
  // the stored state: no route auth yet, no WoL on this route, not a gateway, breaker off
  assert.equal((await s.req(`/api/v1/routes/${route}/auth/totp-setup`, { method: 'POST', json: {}, headers: h })).status, 409);
  assert.equal((await s.req(`/api/v1/routes/${route}/wol`, { method: 'POST', headers: h })).status, 409);
  assert.equal((await s.req(`/api/v1/routes/${route}/circuit-breaker/reset`, { method: 'POST', headers: h })).status, 409);
  assert.equal((await s.req(`/api/v1/peers/${peer}/gateway-info`, { headers: h })).status, 404);
  assert.equal((await s.req(`/api/v1/peers/${gwPeer}/gateway-info`, { headers: h })).status, 200);
  // a wrong current password, the last admin, yourself
  const { cookie, csrf } = await login(s);
  const pw = await s.req('/api/v1/settings/password', {
    method: 'PUT',
    json: { current: 'not the password', next: 'another-long-password' },
    headers: { cookie, 'x-csrf-token': csrf },
  });
  assert.equal(pw.status, 422);
  declares('/api/v1/settings/password', 'put', 422);
  const me = (await s.req('/api/v1/session', { headers: { cookie } })).data.user!.id;
  assert.equal((await s.req(`/api/v1/users/${me}`, { method: 'DELETE', headers: { cookie, 'x-csrf-token': csrf } })).status, 409);
  declares('/api/v1/users/{id}', 'delete', 409);
  // a licence key of the right form whose signature does not verify: 422; the wrong form: 400 by the pattern
  const key = objAt(op('/api/v1/license/activate', 'post'), 'requestBody', 'content', 'application/json', 'schema', 'properties', 'key');
  assert.ok(key.pattern, 'the key form is in the document');
  assert.equal((await s.req('/api/v1/license/activate', { method: 'POST', json: { key: 'ChPx' }, headers: h })).status, 400);
  const bad = await s.req('/api/v1/license/activate', {
    method: 'POST',
    json: { key: `GHL1.0123456789abcdef.${'A'.repeat(20)}.${'B'.repeat(20)}` },
    headers: h,
  });
  assert.equal(bad.status, 422, JSON.stringify(bad.data));
  // nothing to update: 422 (read-only fields and _csrf make "at least one field" unstateable)
  assert.equal((await s.req(`/api/v1/routes/${route}`, { method: 'PUT', json: {}, headers: h })).status, 422);
});

test('rules a schema can state are in the document: patterns, ranges, formats', async () => {
  const body = (p: string, m: string) => objAt(op(p, m), 'requestBody', 'content', 'application/json', 'schema');
  const q = (p: string, name: string) => objAt(param(p, 'get', name), 'schema');
  for (const [p, m, f] of [
    ['/api/v1/peers', 'post', 'dns'],
    ['/api/v1/peers', 'post', 'name'],
    ['/api/v1/peers/{id}', 'put', 'allowed_ips'],
    ['/api/v1/routes', 'post', 'domain'],
    ['/api/v1/smtp', 'put', 'from'],
    ['/api/v1/tags', 'post', 'name'],
  ] as const) {
    const js = JSON.stringify(at(body(p, m), 'properties', f));
    assert.match(js, /"pattern"/, `${m} ${p} ${f} carries its pattern`);
  }
  for (const [p, name] of [
    ['/api/v1/logs/activity', 'since'],
    ['/api/v1/logs/access', 'until'],
    ['/api/v1/routes', 'limit'],
    ['/api/v1/routes', 'offset'],
    ['/api/v1/peers', 'tag'],
  ] as const)
    assert.match(JSON.stringify(q(p, name)), /"pattern"/, `${p} ?${name}`);
  // GET /routes: what the document forbids is refused (an empty offset, a padded limit, a search longer than 200)
  for (const qs of ['offset=', 'limit=%205', `q=${'a'.repeat(200)}%20`]) assert.equal((await s.req(`/api/v1/routes?${qs}`, { headers: h })).status, 400, qs);
  // dates: the pattern is exact (no hour 84, no 30 February)
  for (const d of ['2030-02-30', '0219-01-17T84:46', '2030-01-01T24:00'])
    assert.equal((await s.req(`/api/v1/logs/activity?since=${d}`, { headers: h })).status, 400, d);
  assert.equal((await s.req('/api/v1/logs/activity?since=2028-02-29T23:59:59Z', { headers: h })).status, 200);
  // path ids: 32-bit, as the document says
  assert.equal(at(op('/api/v1/routes/{id}', 'get'), 'parameters', 0, 'schema', 'maximum'), 2147483647);
  assert.equal((await s.req('/api/v1/routes/9007199254740993', { headers: h })).status, 400);
  // a body that is not JSON: 415 (documented), not read as nothing
  const t = await s.req('/api/v1/settings/profile', { method: 'PUT', headers: { ...h, 'content-type': 'text/plain' }, body: '{"username":"x"}' });
  assert.equal(t.status, 415);
  declares('/api/v1/settings/profile', 'put', 415);
  // _csrf is text or a bad field
  assert.equal((await s.req('/api/v1/settings/default-theme', { method: 'PUT', json: { theme: 'pro', _csrf: 5 }, headers: h })).status, 400);
});

test('every answer is documented with its content type: redirects of the sign-in and password forms, the forward-auth answers', async () => {
  const login = objAt(op('/login', 'post'), 'responses', '302');
  assert.ok(objAt(login, 'content')['text/html'], 'the sign-in redirect body');
  const form = await s.req('/login', {
    method: 'POST',
    body: new URLSearchParams({ username: 'admin', password: 'wrong-password-x' }),
    headers: { accept: 'text/html' },
  });
  assert.equal(form.status, 302);
  assert.ok(form.headers.get('content-type')?.startsWith('text/html'));
  const verify = objAt(op('/route-auth/verify', 'get'), 'responses');
  assert.ok(objAt(verify, '302', 'content')['text/plain'] && objAt(verify, '403', 'content')['text/plain']);
  const v = await s.req('/route-auth/verify');
  assert.ok(verify[String(v.status)], `verify answered ${v.status}`);
});
