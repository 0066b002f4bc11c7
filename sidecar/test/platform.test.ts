import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { startTestServer, apiToken, bearer, type TestServer } from './lib/server.js';
import { arrAt, at, objAt } from '../../test/lib/json.js';
import { loadConfig, ConfigError, CONFIG_VARIABLES, DEPRECATED_VARIABLES, deprecatedVariablesIn } from '../src/config.js';
import { startServer } from '../src/server.js';
import { createLogger } from '../src/util/logger.js';
import { INITIAL_PASSWORD_FILE } from '../src/users/service.js';
import { fullPath } from '../src/http/registry.js';
import type { Refusal } from './lib/api-types.js';

let s: TestServer;
before(async () => {
  s = await startTestServer({ GATEHOUSE_RATE_LIMIT_ADMIN: '5', GATEHOUSE_RATE_LIMIT_LOGIN: '3' });
});
after(async () => s.close());

test('/api alias, unknown paths and ids give the error body', async () => {
  const t = await apiToken(s);
  const a = await s.req('/api/settings/app', { headers: bearer(t) });
  const b = await s.req('/api/v1/settings/app', { headers: bearer(t) });
  assert.equal(a.status, 200);
  assert.deepEqual(a.data, b.data);
  const unknown = await s.req<Refusal>('/api/v1/nope', { headers: bearer(t) });
  assert.equal(unknown.status, 404);
  assert.equal(unknown.data.ok, false);
  assert.ok(unknown.data.error);
  const missing = await s.req('/api/v1/users/4242', { headers: bearer(t) });
  assert.equal(missing.status, 404);
  assert.deepEqual(missing.data, { ok: false, error: 'User not found', code: 'resource.not_found', params: { what: 'User' } });
});

test('rate limits: headers on every response, 429 with the standard body', async () => {
  // admin limit is 5 in this server; apiToken() above used one login and one admin call.
  const t = await s.deps.tokens.create({ name: 'rl', scopes: ['full-access'] });
  const ip = { 'x-forwarded-for': '203.0.113.9' };
  let last;
  for (let i = 1; i <= 5; i++) {
    last = await s.req('/api/v1/settings/app', { headers: { ...bearer(t.token), ...ip } });
    assert.equal(last.status, 200);
    assert.equal(last.headers.get('ratelimit-limit'), '5');
    assert.equal(last.headers.get('ratelimit-remaining'), String(5 - i));
    assert.ok(Number(last.headers.get('ratelimit-reset')) > 0 && Number(last.headers.get('ratelimit-reset')) <= 900);
  }
  const over = await s.req('/api/v1/settings/app', { headers: { ...bearer(t.token), ...ip } });
  assert.equal(over.status, 429);
  assert.deepEqual(Object.keys(over.data).sort(), ['code', 'error', 'ok']);
  assert.equal(over.headers.get('ratelimit-remaining'), '0');
  assert.ok(over.headers.get('retry-after'));
  // another client address is counted apart
  assert.equal((await s.req('/api/v1/settings/app', { headers: { ...bearer(t.token), 'x-forwarded-for': '203.0.113.10' } })).status, 200);
  // unauthenticated requests count too, and carry the headers
  const anon = await s.req('/api/v1/settings/app', { headers: { 'x-forwarded-for': '203.0.113.11' } });
  assert.equal(anon.status, 401);
  assert.equal(anon.headers.get('ratelimit-limit'), '5');
  // login: 3 per 15 min in this server
  for (let i = 0; i < 3; i++) {
    const r = await s.req('/login', {
      method: 'POST',
      json: { username: 'x', password: 'y' },
      headers: { accept: 'application/json', 'x-forwarded-for': '198.51.100.1' },
    });
    assert.equal(r.status, 401);
    assert.equal(r.headers.get('ratelimit-limit'), '3');
  }
  const l = await s.req('/login', {
    method: 'POST',
    json: { username: 'x', password: 'y' },
    headers: { accept: 'application/json', 'x-forwarded-for': '198.51.100.1' },
  });
  assert.equal(l.status, 429);
});

test('/health: detail for localhost, {ok} for remote; 503 when a check fails', async () => {
  const local = await s.req('/health');
  assert.equal(local.status, 200);
  assert.equal(local.data.ok, true);
  assert.equal(local.data.checks!.database.ok, true);
  const remote = await s.req('/health', { headers: { 'x-forwarded-for': '192.0.2.1' } });
  assert.deepEqual(remote.data, { ok: true });
  s.deps.health.push({ name: 'tunnel', check: async () => ({ ok: false, detail: { error: 'interface wg9 missing' } }) });
  try {
    const bad = await s.req('/health');
    assert.equal(bad.status, 503);
    assert.equal(bad.data.checks!.tunnel.ok, false);
    const badRemote = await s.req('/health', { headers: { 'x-forwarded-for': '192.0.2.1' } });
    assert.equal(badRemote.status, 503);
    assert.deepEqual(badRemote.data, { ok: false });
  } finally {
    s.deps.health.pop();
  }
});

test('OpenAPI 3.1 document lists every endpoint with its schemas', async () => {
  const t = await s.deps.tokens.create({ name: 'oa', scopes: ['read-only'] });
  const r = await s.req('/api/v1/openapi.json', { headers: { ...bearer(t.token), 'x-forwarded-for': '203.0.113.50' } });
  assert.equal(r.status, 200);
  assert.equal(r.data.openapi, '3.1.0');
  for (const e of s.endpoints) {
    const p = fullPath(e).replace(/:([A-Za-z_]+)/g, '{$1}');
    assert.ok(r.data.paths[p]?.[e.method.toLowerCase()], `${e.method} ${p} documented`);
  }
  assert.deepEqual(arrAt(r.data, 'paths', '/api/v1/tokens', 'post', 'requestBody', 'content', 'application/json', 'schema', 'required').sort(), [
    'name',
    'scopes',
  ]);
});

test('config: defaults, and bad values rejected naming the variable', () => {
  const c = loadConfig({});
  assert.equal(c.port, 3000);
  assert.equal(c.httpPort, 80);
  assert.equal(c.httpsPort, 443);
  assert.equal(c.caddyAdmin, '127.0.0.1:2019');
  assert.equal(c.wg.iface, 'wg0');
  assert.equal(c.wg.port, 51820);
  assert.equal(c.wg.subnet, '10.8.0.0/24');
  assert.equal(c.dataDir, path.resolve('./data'));
  assert.equal(c.accessLogRollMb, 20);
  assert.equal(loadConfig({ GATEHOUSE_ACCESS_LOG_ROLL_MB: '100' }).accessLogRollMb, 100);
  assert.throws(
    () => loadConfig({ GATEHOUSE_PORT: 'eighty', GATEHOUSE_WG_SUBNET: '10.8.0.0/33', DATABASE_URL: 'mysql://x', GATEHOUSE_ACCESS_LOG_ROLL_MB: '0' }),
    (err: Error) => {
      assert.ok(err instanceof ConfigError);
      assert.match(err.message, /GATEHOUSE_PORT="eighty"/);
      assert.match(err.message, /GATEHOUSE_ACCESS_LOG_ROLL_MB="0"/);
      assert.match(err.message, /GATEHOUSE_WG_SUBNET/);
      assert.match(err.message, /DATABASE_URL/);
      return true;
    },
  );
});

test('config: cluster mode is off by default, names the node after the host, and is refused without PostgreSQL', () => {
  const c = loadConfig({});
  assert.deepEqual(c.cluster, { enabled: false, nodeName: os.hostname() });
  const on = loadConfig({ GATEHOUSE_CLUSTER: 'true', GATEHOUSE_NODE_NAME: 'edge-a', DATABASE_URL: 'postgres://u@127.0.0.1/db' });
  assert.deepEqual(on.cluster, { enabled: true, nodeName: 'edge-a' });
  assert.throws(
    () => loadConfig({ GATEHOUSE_CLUSTER: 'true' }),
    (err: Error) => err instanceof ConfigError && /GATEHOUSE_CLUSTER=true needs DATABASE_URL \(PostgreSQL\)/.test(err.message),
  );
  assert.throws(() => loadConfig({ GATEHOUSE_NODE_NAME: '-bad name' }), /GATEHOUSE_NODE_NAME="-bad name"/);
});

test('config: the older GATEHOUSE_LICENSE_* names are still read, the GATEHOUSE_LICENCE_* names win, and both are named for the warning', () => {
  assert.equal(loadConfig({ GATEHOUSE_LICENSE_GRACE_DAYS: '3' }).licence.graceDays, 3);
  assert.equal(loadConfig({ GATEHOUSE_LICENSE_GRACE_DAYS: '3', GATEHOUSE_LICENCE_GRACE_DAYS: '5' }).licence.graceDays, 5);
  assert.equal(loadConfig({ GATEHOUSE_LICENSE_KEY: 'old-key' }).licence.key, 'old-key');
  assert.equal(loadConfig({}).licence.graceDays, 14);
  assert.throws(() => loadConfig({ GATEHOUSE_LICENSE_URL: 'ftp://x' }), /GATEHOUSE_LICENCE_URL="ftp:\/\/x"/);
  assert.deepEqual(deprecatedVariablesIn({ GATEHOUSE_LICENSE_KEY: 'k', GATEHOUSE_LICENCE_URL: 'https://l.example' }), [
    { name: 'GATEHOUSE_LICENSE_KEY', use: 'GATEHOUSE_LICENCE_KEY' },
  ]);
  const reference = fs.readFileSync(path.resolve(import.meta.dirname, '..', '..', 'docs', 'reference', 'environment.md'), 'utf8');
  for (const old of Object.keys(DEPRECATED_VARIABLES)) assert.ok(reference.includes(old), `docs/reference/environment.md names ${old}`);
});

test('every config variable is documented in docs/reference/environment.md and the example env file', () => {
  const root = path.resolve(import.meta.dirname, '..', '..');
  const reference = fs.readFileSync(path.join(root, 'docs', 'reference', 'environment.md'), 'utf8');
  const example = fs.readFileSync(path.join(root, 'configs', 'gatehouse.env.example'), 'utf8');
  for (const v of CONFIG_VARIABLES) {
    assert.ok(reference.includes(v), `docs/reference/environment.md documents ${v}`);
    assert.ok(example.includes(v), `gatehouse.env.example documents ${v}`);
  }
});

test('first start without GATEHOUSE_ADMIN_PASSWORD writes a root-only password file that works', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-boot-'));
  const r = await startServer(loadConfig({ GATEHOUSE_DATA_DIR: dir, GATEHOUSE_MANAGE_CADDY: 'false', GATEHOUSE_WG_MANAGE: 'false' }), {
    listen: false,
    startFeatures: false,
    log: createLogger('error', true),
  });
  try {
    const file = path.join(dir, INITIAL_PASSWORD_FILE);
    const st = fs.statSync(file);
    assert.equal(st.mode & 0o777, 0o600);
    const pw = /password: (\S+)/.exec(fs.readFileSync(file, 'utf8'))![1];
    const res = await fetch(`${r.url}/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ username: 'admin', password: pw }),
    });
    assert.equal(res.status, 200);
    assert.equal(fs.statSync(r.deps.config.masterKeyFile).mode & 0o777, 0o600);
  } finally {
    await r.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('a wrong method is 405 and TRACE is 501, both with the standard error body; 405 keeps Allow', async () => {
  const t = await s.deps.tokens.create({ name: 'methods', scopes: ['full-access'] });
  const ip = { 'x-forwarded-for': '203.0.113.70' };
  const wrong = await s.req<Refusal>('/api/v1/tokens', { method: 'PATCH', headers: { ...bearer(t.token), ...ip } });
  assert.equal(wrong.status, 405);
  assert.match(wrong.headers.get('content-type') ?? '', /application\/json/);
  assert.equal(wrong.data.ok, false);
  assert.deepEqual(Object.keys(wrong.data).sort(), ['code', 'error', 'ok', 'params']);
  assert.match(wrong.headers.get('allow') ?? '', /GET/);
  assert.match(wrong.headers.get('allow') ?? '', /POST/);
  const loginWrong = await s.req<Refusal>('/login', { method: 'PUT', headers: { 'x-forwarded-for': '203.0.113.71' } });
  assert.equal(loginWrong.status, 405);
  assert.equal(loginWrong.data.ok, false);
  const { status, body } = await rawRequest(s.url, 'TRACE', '/api/v1/tokens');
  assert.equal(status, 405, 'TRACE on a path that exists: 405 with Allow');
  const data = JSON.parse(body);
  assert.equal(data.ok, false);
  assert.equal(typeof data.error, 'string');
});

/** fetch() refuses TRACE, so send it with node:http. */
function rawRequest(base: string, method: string, p: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(new URL(p, base), { method, headers: { 'x-forwarded-for': '203.0.113.72' } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

test('Ratelimit-* headers on 404 and 405 answers of limited scopes and on GET /login (which does not count)', async () => {
  const t = await s.deps.tokens.create({ name: 'rl-404', scopes: ['full-access'] });
  const ip = { 'x-forwarded-for': '203.0.113.80' };
  const nope = await s.req('/api/v1/no-such-thing', { headers: { ...bearer(t.token), ...ip } });
  assert.equal(nope.status, 404);
  assert.equal(nope.headers.get('ratelimit-limit'), '5');
  assert.equal(nope.headers.get('ratelimit-remaining'), '4');
  assert.ok(Number(nope.headers.get('ratelimit-reset')) > 0);
  const wrong = await s.req('/api/v1/tokens', { method: 'PATCH', headers: { ...bearer(t.token), ...ip } });
  assert.equal(wrong.status, 405);
  assert.equal(wrong.headers.get('ratelimit-limit'), '5');
  assert.equal(wrong.headers.get('ratelimit-remaining'), '3', 'a 405 counts too');
  const anonNope = await s.req('/api/nope', { headers: { 'x-forwarded-for': '203.0.113.81' } });
  assert.equal(anonNope.status, 404);
  assert.equal(anonNope.headers.get('ratelimit-remaining'), '4');
  const loginWrong = await s.req('/login', { method: 'DELETE', headers: { 'x-forwarded-for': '203.0.113.82' } });
  assert.equal(loginWrong.status, 405);
  assert.equal(loginWrong.headers.get('ratelimit-limit'), '3');
  const lip = { 'x-forwarded-for': '203.0.113.83' };
  for (let i = 0; i < 2; i++) {
    const page = await s.req('/login', { headers: { ...lip, accept: 'text/html' } });
    assert.equal(page.status, 200);
    assert.equal(page.headers.get('ratelimit-limit'), '3');
    assert.equal(page.headers.get('ratelimit-remaining'), '3', 'showing the form spends no sign-in attempt');
    assert.ok(page.headers.get('ratelimit-reset'));
  }
  await s.req('/login', { method: 'POST', json: { username: 'x', password: 'y' }, headers: { ...lip, accept: 'application/json' } });
  assert.equal((await s.req('/login', { headers: { ...lip, accept: 'text/html' } })).headers.get('ratelimit-remaining'), '2');
  const health = await s.req('/health', { headers: { 'x-forwarded-for': '203.0.113.84' } });
  assert.equal(health.headers.get('ratelimit-limit'), null, '/health is in no limited scope');
});

test('OpenAPI request schemas declare what the server enforces: required lists, port ranges, the session_max_age enum', async () => {
  const t = await s.deps.tokens.create({ name: 'oa-req', scopes: ['read-only'] });
  const doc = (await s.req('/api/v1/openapi.json', { headers: { ...bearer(t.token), 'x-forwarded-for': '203.0.113.90' } })).data;
  const body = (p: string, m: string) => objAt(doc, 'paths', p, m, 'requestBody', 'content', 'application/json', 'schema');
  const routePost = body('/api/v1/routes', 'post');
  // domain is required except for an L4 route without TLS: a rule across fields, so stated in its description
  assert.equal(routePost.required, undefined);
  assert.match(String(at(routePost, 'properties', 'domain', 'description')), /required, except for an L4 route/);
  const port = JSON.stringify(objAt(routePost, 'properties').target_port);
  assert.match(port, /"minimum":1/);
  assert.match(port, /"maximum":65535/);
  assert.deepEqual(body('/api/v1/peers', 'post').required, ['name']);
  const ra = JSON.stringify(objAt(body('/api/v1/routes/{id}/auth', 'post'), 'properties').session_max_age);
  for (const v of [3_600_000, 43_200_000, 86_400_000, 604_800_000, 2_592_000_000]) assert.ok(ra.includes(String(v)), `${v} in ${ra}`);
  assert.match(ra, /"enum"/);
});
