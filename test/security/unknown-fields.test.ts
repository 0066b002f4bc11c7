// Security suite: a write never silently drops a field it does not know. Every write
// endpoint of the registry (POST, PUT, PATCH, DELETE; public, admin, gateway and desktop-client
// ones, uploads included) gets a valid-looking request plus an unknown field, with the credential
// it needs and real ids in its path: the answer is 400 with `fields` naming the unknown field, and
// no table changed. The same for an unknown query parameter on every endpoint with a query schema
// and on every write. The bodies are hand-written for the common resources (and then also shown to
// be accepted without the unknown field); the others are sampled from the OpenAPI document's own
// request schema (fast-check, fixed seed).
//   node --import tsx --test --test-concurrency=1 test/security/unknown-fields.test.ts
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { z } from 'zod';
import { startTestServer, apiToken, bearer, login, type TestServer } from '../../sidecar/test/lib/server.js';
import { fullPath, type Endpoint } from '../../sidecar/src/http/registry.js';
import { assertStrictInput, droppingObjects, UNKNOWN_FIELD, UNKNOWN_PARAMETER } from '../../sidecar/src/http/input.js';
import { ROUTE_READ_ONLY } from '../../sidecar/src/routes/schema.js';
import { PEER_READ_ONLY } from '../../sidecar/src/peers/schema.js';
import { GROUP_READ_ONLY } from '../../sidecar/src/groups/schema.js';
import { USER_READ_ONLY } from '../../sidecar/src/users/schema.js';
import { TOKEN_READ_ONLY } from '../../sidecar/src/tokens/schema.js';
import { WEBHOOK_READ_ONLY } from '../../sidecar/src/webhooks/schema.js';
import { RDP_READ_ONLY } from '../../sidecar/src/rdp/schema.js';
import { JOB_READ_ONLY } from '../../sidecar/src/backup/schema.js';
import { REDIRECT_READ_ONLY } from '../../sidecar/src/redirects/schema.js';
import { PROVIDER_READ_ONLY } from '../../sidecar/src/oidc/schema.js';
import { valid, schemaOf } from '../reliability/lib/fuzz-schema.js';
import { openApiDocument, type OpenApiDocument } from '../../sidecar/test/lib/openapi.js';
import { changed, snapshot, tables, type Snapshot } from '../reliability/lib/fuzz-db.js';
import type { Refusal } from '../../sidecar/test/lib/api-types.js';

const UNKNOWN = 'gh_unknown_field';
let s: TestServer;
let doc: OpenApiDocument;
let admin: Record<string, string>;
let adminSession: Record<string, string>;
let gateway: Record<string, string>;
let client: Record<string, string>;
let dbTables: string[];
const ids: Record<string, number | string> = {};

const ok = async <T = never, P extends string = string, M extends string = 'GET'>(
  p: P,
  method: [T] extends [never] ? M : string,
  json: unknown,
  headers = admin,
) => {
  const r = await s.req<T, P, M>(p, { method, json, headers: { accept: 'application/json', ...headers } });
  assert.ok(r.status < 300, `seed ${method} ${p}: ${r.status} ${JSON.stringify(r.data)}`);
  return r.data;
};

before(async () => {
  s = await startTestServer({
    GATEHOUSE_RATE_LIMIT_ADMIN: '1000000',
    GATEHOUSE_RATE_LIMIT_CLIENT: '1000000',
    GATEHOUSE_RATE_LIMIT_LOGIN: '1000000',
    GATEHOUSE_RATE_LIMIT_HOSTNAME: '1000000',
    GATEHOUSE_WEBHOOK_ALLOW_PRIVATE: 'true',
  });
  admin = bearer(await apiToken(s));
  const signedIn = await login(s);
  adminSession = { cookie: signedIn.cookie, 'x-csrf-token': signedIn.csrf };
  doc = openApiDocument((await s.req('/api/v1/openapi.json', { headers: admin })).data);
  const g = await ok('/api/v1/peer-groups', 'POST', { name: 'uf-group' });
  ids.group = g.group.id;
  ids.peer = (await ok('/api/v1/peers', 'POST', { name: 'uf-peer', group_id: ids.group })).peer.id;
  const gw = await ok('/api/v1/peers', 'POST', { name: 'uf-gw', is_gateway: true });
  ids.gateway = gw.peer.id;
  gateway = bearer(gw.gateway!.apiToken);
  await ok('/api/v1/tags', 'POST', { name: 'uf-tag' });
  ids.tag = 'uf-tag';
  const link = await ok(`/api/v1/peers/${ids.peer}/config-links`, 'POST', {});
  ids.link = link.link.id;
  ids.linkToken = String(link.path).slice('/c/'.length);
  ids.route = (await ok('/api/v1/routes', 'POST', { domain: 'uf.example.test', peer_id: ids.peer, target_port: 8080 })).route.id;
  await ok(`/api/v1/routes/${ids.route}/auth`, 'POST', {
    method: 'email_password',
    email: 'o@example.test',
    password: 'correct horse',
    session_max_age: 3600000,
  });
  ids.user = (await ok('/api/v1/users', 'POST', { username: 'uf-user', password: 'uf-user-password', role: 'user' })).user.id;
  ids.token = (await ok('/api/v1/tokens', 'POST', { name: 'uf-spare', scopes: ['logs'] })).record.id;
  ids.webhook = (
    await ok('/api/v1/webhooks', 'POST', {
      name: 'uf-hook',
      url: 'http://127.0.0.1:9/hook',
      events: ['peer_created'],
      enabled: false,
      secret: 'uf-webhook-secret-0123456789',
    })
  ).webhook.id;
  ids.rdp = (await ok('/api/v1/rdp', 'POST', { name: 'uf-rdp', access_mode: 'internal', target_peer_id: ids.peer })).route.id;
  ids.job = (
    await ok('/api/v1/settings/autobackup', 'POST', { name: 'uf-job', schedule: 'daily', keep: 2, target: 'local', passphrase: 'uf-job-passphrase-1' })
  ).job.id;
  // a desktop client: its token bound to this machine, registered (so the binding is not a change the probe makes)
  const ct = await ok('/api/v1/tokens', 'POST', { name: 'uf-client', scopes: ['client'] });
  client = { ...bearer(ct.token), 'x-machine-fingerprint': 'uf-machine' };
  const reg = await ok('/api/v1/client/register', 'POST', { hostname: 'uf-laptop', platform: 'linux-x64', client_version: '1.0.0' }, client);
  ids.machine = reg.machine.id;
  ids.clientToken = ct.record.id;
  dbTables = await tables(s.deps.db.sequelize);
});
after(async () => s?.close());

/** The id a path parameter of this endpoint takes. */
function concretePath(e: Endpoint): string {
  const p = fullPath(e);
  const kind =
    p.startsWith('/api/v1/rdp') || p.startsWith('/api/v1/client/rdp')
      ? 'rdp'
      : p.includes('/settings/autobackup/')
        ? 'job'
        : p.includes('/peer-groups/')
          ? 'group'
          : p.includes('/webhooks/')
            ? 'webhook'
            : p.includes('/users/')
              ? 'user'
              : p.includes('/tokens/')
                ? p.includes('/machines/')
                  ? 'clientToken'
                  : 'token'
                : p.includes('/routes/')
                  ? 'route'
                  : 'peer';
  const named: Record<string, number | string> = { name: ids.tag, machineId: ids.machine, token: ids.linkToken, linkId: ids.link };
  return p.replace(/:([A-Za-z_]+)/g, (_m, n: string) => String(named[n] ?? ids[kind]));
}

/** Hand-written valid bodies (also checked to be accepted without the unknown field). */
function handWritten(): Record<string, unknown> {
  return {
    'POST /api/v1/routes': { domain: 'uf-new.example.test', peer_id: ids.peer, target_port: 8081 },
    'PUT /api/v1/routes/:id': { description: 'changed by the unknown-fields test' },
    'POST /api/v1/peers': { name: 'uf-new-peer' },
    'PUT /api/v1/peers/:id': { description: 'changed' },
    'POST /api/v1/peer-groups': { name: 'uf-new-group', color: '#112233' },
    'PUT /api/v1/peer-groups/:id': { description: 'changed' },
    'POST /api/v1/tags': { name: 'uf-new-tag' },
    'POST /api/v1/users': { username: 'uf-new-user', password: 'uf-new-user-password', role: 'user' },
    'PUT /api/v1/users/:id': { email: 'uf@example.test' },
    'POST /api/v1/tokens': { name: 'uf-new-token', scopes: ['logs'] },
    'PATCH /api/v1/tokens/:id': { name: 'uf-renamed' },
    'POST /api/v1/webhooks': {
      name: 'uf-new-hook',
      url: 'http://127.0.0.1:9/x',
      events: ['peer_created'],
      enabled: false,
      secret: 'uf-webhook-secret-abcdefghij',
    },
    'PUT /api/v1/webhooks/:id': { name: 'uf-hook-renamed' },
    'PUT /api/v1/settings/security': { lockout: { max_attempts: 7 } },
    'PUT /api/v1/settings/monitoring': { interval_seconds: 120 },
    'PUT /api/v1/smtp': { host: '127.0.0.1', port: 2525, from: 'gh@example.test' },
    'POST /api/v1/rdp': { name: 'uf-new-rdp', access_mode: 'internal', target_peer_id: ids.peer },
    'PATCH /api/v1/rdp/:id': { description: 'changed' },
    'POST /api/v1/settings/autobackup': { name: 'uf-new-job', schedule: 'weekly', keep: 3, target: 'local', passphrase: 'uf-job-passphrase-2' },
    'PUT /api/v1/settings/autobackup/:id': { keep: 5 },
    'POST /api/v1/client/heartbeat': { handshake_age_s: 3, rx_bytes: 10, tx_bytes: 20 },
    'POST /api/v1/gateway/status': { rx_bytes: 1, tx_bytes: 2, active_connections: 0 },
  };
}

/**
 * Writes that keep unknown fields on purpose (nothing is dropped: the body is stored or echoed
 * whole), with the reason; the test checks the field is indeed kept where that can be seen.
 */
const KEEPS_UNKNOWN: Record<string, string> = {
  'POST /api/v1/gateway/heartbeat': "stored whole as the gateway's health",
  'POST /api/v1/client/status': "stored whole as the machine's last status (any JSON object)",
};
/** Writes whose body the handler reads itself after an earlier check (Endpoint.ownBody). */
const OWN_BODY = (e: Endpoint) => !!e.ownBody;

/** The credential an endpoint takes: an admin session for the session-only ones (an account's own second factor), else its kind's token. */
const headersFor = (e: Endpoint) =>
  e.auth === 'gateway' ? gateway : e.auth === 'client' ? client : e.auth === 'public' ? {} : e.sessionOnly ? adminSession : admin;

function sampled(e: Endpoint): unknown {
  const op = doc.paths[fullPath(e).replace(/:([A-Za-z_]+)/g, '{$1}')]?.[e.method.toLowerCase()];
  const js = op?.requestBody?.content?.['application/json']?.schema;
  if (!js) return {};
  const v = fc.sample(
    valid(js, (name) => (/(^|_)peer_id$/.test(name) ? fc.constant(ids.peer) : undefined)),
    { seed: 24, numRuns: 1 },
  )[0];
  return v && typeof v === 'object' && !Array.isArray(v) ? v : {};
}

async function send(e: Endpoint, body: Record<string, unknown> | undefined, query = '', headers = headersFor(e)) {
  const url = concretePath(e) + query;
  if (e.multipart) {
    const fd = new FormData();
    fd.set(e.multipart.field, new Blob([Buffer.from('{}')], { type: 'application/octet-stream' }), 'x.bin');
    for (const [k, v] of Object.entries(body ?? {})) fd.set(k, String(v));
    return s.req<Refusal>(url, { method: e.method, body: fd, headers: { accept: 'application/json', ...headers } });
  }
  return s.req<Refusal>(url, { method: e.method, json: body, headers: { accept: 'application/json', ...headers } });
}

async function settled(): Promise<Snapshot> {
  await s.deps.gateways.flushHeartbeats();
  return snapshot(s.deps.db.sequelize, dbTables);
}

function writes(): Endpoint[] {
  return s.endpoints.filter((e) => e.method !== 'GET');
}

test('the schema kit: every request schema of the registry is strict, and a schema that drops unknown fields cannot be mounted', () => {
  for (const e of s.endpoints) {
    if (e.body) assert.doesNotThrow(() => assertStrictInput(`${e.method} ${e.path}`, 'body', e.body!));
    if (e.query) assert.doesNotThrow(() => assertStrictInput(`${e.method} ${e.path}`, 'query', e.query!));
  }
  assert.throws(() => assertStrictInput('POST /x', 'body', z.object({ a: z.string() })), /drops unknown fields at \//);
  assert.throws(() => assertStrictInput('POST /x', 'body', z.strictObject({ a: z.object({ b: z.string() }) })), /drops unknown fields at \/a/);
  assert.deepEqual(
    droppingObjects(z.toJSONSchema(z.strictObject({ a: z.looseObject({}), b: z.record(z.string(), z.number()) }), { io: 'input' })),
    [],
    'loose objects (stored whole) and records are not dropping',
  );
  // and every request object in the document says so
  for (const [p, ms] of Object.entries(doc.paths)) {
    for (const [m, op] of Object.entries(ms)) {
      for (const c of Object.values(op.requestBody?.content ?? {}))
        assert.deepEqual(droppingObjects(c.schema), [], `${m} ${p}: request body objects declare additionalProperties`);
      for (const prm of op.parameters ?? []) assert.deepEqual(droppingObjects(prm.schema), [], `${m} ${p}: parameter ${prm.name}`);
    }
  }
});

test('every write endpoint refuses an unknown body field: 400, `fields` names it, nothing written', { timeout: 300_000 }, async () => {
  const hand = handWritten();
  const checked: string[] = [];
  const kept: string[] = [];
  let before = await settled();
  for (const e of writes()) {
    const label = `${e.method} ${fullPath(e)}`;
    if (OWN_BODY(e)) continue;
    const base =
      (hand[`${e.method} ${fullPath(e)}`] as Record<string, unknown> | undefined) ?? (e.body && !e.multipart ? (sampled(e) as Record<string, unknown>) : {});
    const body = { ...base, [UNKNOWN]: 'internal', also_unknown: { nested: true } };
    const r = await send(e, body);
    const after = await settled();
    if (label in KEEPS_UNKNOWN) {
      kept.push(label);
      before = after;
      continue;
    }
    assert.equal(r.status, 400, `${label}: ${r.status} ${JSON.stringify(r.data)}`);
    assert.equal(r.data.ok, false);
    assert.equal(r.data.fields?.[UNKNOWN], UNKNOWN_FIELD, `${label}: fields names the unknown field: ${JSON.stringify(r.data)}`);
    assert.equal(r.data.fields?.also_unknown, UNKNOWN_FIELD, `${label}: every unknown field is named: ${JSON.stringify(r.data)}`);
    assert.deepEqual(changed(before, after), [], `${label}: a refused write changed data`);
    checked.push(label);
    before = after;
  }
  assert.ok(checked.length >= 80, `walked ${checked.length} write endpoints`);
  assert.deepEqual(kept.sort(), Object.keys(KEEPS_UNKNOWN).sort(), 'the writes that keep unknown fields are exactly the listed ones');
  // the handler reads the body itself: the breaker reports (checked only after the sender is known)
  // and the gateway probe (an echo: a JSON body comes back whole, any other byte for byte)
  assert.deepEqual(
    writes()
      .filter(OWN_BODY)
      .map((e) => `${e.method} ${fullPath(e)}`)
      .sort(),
    ['POST /api/v1/gateway/probe', 'POST /internal/circuit-breaker'],
  );
  console.log(`# ${checked.length} write endpoints refuse an unknown field; ${kept.length} keep it whole (${kept.join(', ')})`);
});

test('the hand-written bodies are accepted without the unknown field (so the unknown field alone was refused)', async () => {
  const hand = handWritten();
  for (const [key, body] of Object.entries(hand)) {
    const [method, path] = key.split(' ');
    const e = s.endpoints.find((x) => x.method === method && fullPath(x) === path)!;
    assert.ok(e, key);
    const r = await send(e, body as Record<string, unknown>);
    assert.ok(r.status >= 200 && r.status < 300, `${key}: ${r.status} ${JSON.stringify(r.data)}`);
  }
});

test('unknown fields named like Object.prototype members (constructor, toString, ...) are refused and named too; __proto__ is refused by the JSON parser', async () => {
  const before = await settled();
  for (const [p, method, base] of [
    ['/api/v1/tags', 'POST', { name: 'proto-tag' }],
    ['/api/v1/settings/language', 'POST', { language: 'de' }],
    [`/api/v1/peers/${ids.peer}/toggle`, 'PUT', {}],
  ] as const) {
    for (const key of ['__proto__', 'constructor', 'toString', 'hasOwnProperty']) {
      const r = await s.req<Refusal>(p, {
        method,
        body: `{${Object.entries(base)
          .map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`)
          .concat(`${JSON.stringify(key)}:1`)
          .join(',')}}`,
        headers: { ...admin, 'content-type': 'application/json' },
      });
      assert.equal(r.status, 400, `${method} ${p} ${key}: ${r.status} ${JSON.stringify(r.data)}`);
      // the JSON parser itself refuses a __proto__ key (400 without fields); the others reach the schema
      if (key !== '__proto__') assert.equal(r.data.fields?.[key], UNKNOWN_FIELD, `${method} ${p} ${key}: ${JSON.stringify(r.data)}`);
    }
  }
  assert.deepEqual(changed(before, await settled()), []);
});

test('nested unknown fields are named by their dotted path', async () => {
  const before = await settled();
  const r = await s.req('/api/v1/settings/security', { method: 'PUT', json: { lockout: { max_attempts: 5, lockout_forever: true } }, headers: admin });
  assert.equal(r.status, 400);
  assert.deepEqual(r.data.fields, { 'lockout.lockout_forever': UNKNOWN_FIELD });
  const m = await s.req('/api/v1/settings/autobackup', {
    method: 'POST',
    json: {
      name: 'x',
      schedule: 'daily',
      keep: 1,
      target: 's3',
      passphrase: 'long-enough-pass',
      s3: { bucket: 'my-bucket', access_key_id: 'a', sse: 'AES256' },
    },
    headers: admin,
  });
  assert.equal(m.status, 400);
  assert.equal(m.data.fields!['s3.sse'], UNKNOWN_FIELD);
  assert.deepEqual(changed(before, await settled()), []);
});

// The issue's case was exposure, access_schedule and backends before Gatehouse had them (they are
// real fields now, with their own bad-input tests): a body with fields the API does not have, spelled
// as another product's API spells them, is refused naming each, and nothing is created.
test('POST /routes with fields the API does not have (exposed, schedule, upstreams) is refused, naming all three; nothing is created', async () => {
  const before = await settled();
  const r = await s.req('/api/v1/routes', {
    method: 'POST',
    json: {
      domain: 'internal-only.example.test',
      peer_id: ids.peer,
      target_port: 80,
      exposed: 'internal',
      schedule: { days: ['mon'] },
      upstreams: [{ peer_id: ids.peer, port: 81 }],
    },
    headers: admin,
  });
  assert.equal(r.status, 400);
  assert.deepEqual(r.data.fields, { exposed: UNKNOWN_FIELD, schedule: UNKNOWN_FIELD, upstreams: UNKNOWN_FIELD });
  assert.deepEqual(changed(before, await settled()), []);
  const list = await s.req('/api/v1/routes?q=internal-only', { headers: admin });
  assert.equal(list.data.total, 0);
});

test('unknown query parameters: refused on every endpoint with a query schema and on every write', async () => {
  let before = await settled();
  let n = 0;
  for (const e of s.endpoints) {
    if (!e.query && e.method === 'GET') continue;
    if (OWN_BODY(e)) continue;
    const label = `${e.method} ${fullPath(e)}`;
    if (e.rawResponse) continue; // the event stream: checked below without holding it open
    const hand = handWritten()[`${e.method} ${fullPath(e)}`] as Record<string, unknown> | undefined;
    const r = await send(
      e,
      e.method === 'GET' ? undefined : (hand ?? (e.body && !e.multipart ? (sampled(e) as Record<string, unknown>) : undefined)),
      `?${UNKNOWN}=1`,
    );
    assert.equal(r.status, 400, `${label}: ${r.status} ${JSON.stringify(r.data)}`);
    assert.equal(r.data.fields?.[UNKNOWN], UNKNOWN_PARAMETER, `${label}: ${JSON.stringify(r.data)}`);
    const after = await settled();
    assert.deepEqual(changed(before, after), [], `${label}: changed data`);
    before = after;
    n++;
  }
  const ev = await fetch(`${s.url}/api/v1/events?${UNKNOWN}=1`, { headers: { ...admin, accept: 'text/event-stream' } });
  assert.equal(ev.status, 400);
  assert.equal((await ev.json()).fields[UNKNOWN], UNKNOWN_PARAMETER);
  // a mistyped filter no longer answers every row as if it had filtered
  const typo = await s.req('/api/v1/routes?typ=l4', { headers: admin });
  assert.equal(typo.status, 400);
  assert.deepEqual(typo.data.fields, { typ: UNKNOWN_PARAMETER });
  assert.ok(n >= 100, `walked ${n} endpoints`);
});

test('GET /metrics keeps its documented ?token= (Endpoint.queryToken) and the form field _csrf is known to every write', async () => {
  const m = await s.req(`/metrics?token=${encodeURIComponent(admin.authorization.slice(7))}`);
  assert.notEqual(m.status, 400, JSON.stringify(m.data));
  const { cookie, csrf } = await login(s);
  const r = await s.req('/api/v1/settings/theme', { method: 'PUT', json: { theme: 'pro', _csrf: csrf }, headers: { cookie } });
  assert.equal(r.status, 200, JSON.stringify(r.data));
  const out = await s.req('/logout', { method: 'POST', body: new URLSearchParams({ _csrf: csrf }), headers: { cookie, accept: 'application/json' } });
  assert.equal(out.status, 200, JSON.stringify(out.data));
});

test('read-only fields: accepted and ignored only where declared, as the document shows', async () => {
  const lists: Record<string, { resource: string; shape: Record<string, unknown> }> = {
    'PUT /api/v1/routes/{id}': ROUTE_READ_ONLY,
    'PUT /api/v1/peers/{id}': PEER_READ_ONLY,
    'PUT /api/v1/peer-groups/{id}': GROUP_READ_ONLY,
    'PUT /api/v1/users/{id}': USER_READ_ONLY,
    'PATCH /api/v1/tokens/{id}': TOKEN_READ_ONLY,
    'PUT /api/v1/webhooks/{id}': WEBHOOK_READ_ONLY,
    'PATCH /api/v1/rdp/{id}': RDP_READ_ONLY,
    'PUT /api/v1/settings/autobackup/{id}': JOB_READ_ONLY,
    'PUT /api/v1/redirect-hosts/{id}': REDIRECT_READ_ONLY,
    'PUT /api/v1/auth/oidc/providers/{id}': PROVIDER_READ_ONLY,
  };
  const documented: Record<string, string[]> = {};
  for (const [p, ms] of Object.entries(doc.paths)) {
    for (const [m, op] of Object.entries(ms)) {
      const props = op.requestBody?.content?.['application/json']?.schema?.properties ?? {};
      const ro = Object.entries(props)
        .filter(([, v]) => schemaOf(v)?.readOnly === true)
        .map(([k]) => k);
      if (ro.length) documented[`${m.toUpperCase()} ${p}`] = ro.sort();
    }
  }
  assert.deepEqual(
    documented,
    Object.fromEntries(Object.entries(lists).map(([k, v]) => [k, Object.keys(v.shape).sort()])),
    'the document shows exactly the declared read-only lists',
  );
  // a client sending back what it read: the read-only fields are ignored, the rest applied
  const got = (await s.req(`/api/v1/routes/${ids.route}`, { headers: admin })).data.route;
  const r = await s.req(`/api/v1/routes/${ids.route}`, {
    method: 'PUT',
    json: { id: 999999, created_at: '2001-01-01T00:00:00.000Z', updated_at: got.updated_at, description: 'sent back' },
    headers: admin,
  });
  assert.equal(r.status, 200, JSON.stringify(r.data));
  assert.equal(r.data.route.id, ids.route);
  assert.equal(r.data.route.created_at, got.created_at);
  assert.equal(r.data.route.description, 'sent back');
  // only read-only fields: nothing to update (422: valid by the document, nothing to do)
  const none = await s.req(`/api/v1/routes/${ids.route}`, { method: 'PUT', json: { id: ids.route }, headers: admin });
  assert.equal(none.status, 422);
  assert.equal(none.data.fields!._, 'nothing to update');
  // a read-only field of one resource is unknown on another's write
  const c = await s.req('/api/v1/routes', { method: 'POST', json: { domain: 'ro.example.test', peer_id: ids.peer, target_port: 80, id: 5 }, headers: admin });
  assert.equal(c.status, 400);
  assert.deepEqual(c.data.fields, { id: UNKNOWN_FIELD });
});
