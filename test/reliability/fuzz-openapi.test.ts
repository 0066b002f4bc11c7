// Bad input: every operation of GET /api/v1/openapi.json fuzzed from its own
// schemas, property-based. A real sidecar (sidecar/test/lib/server.ts) with a licence that grants
// every feature (so gated endpoints answer), seeded peers, a gateway, groups, tags, routes, route
// auth, users, tokens and a registered desktop client, so valid ids exist. For each operation,
// FUZZ_RUNS requests generated with fast-check from a fixed seed (FUZZ_SEED): half generated to be
// valid by the document (body, query, required headers, path ids taken from the seeded rows), half
// mutated (hostile values, missing required keys, wrong types, unknown keys, malformed JSON, bad
// path ids). Whether a request is valid is decided by the document itself (Ajv, JSON Schema
// 2020-12, formats), not by how it was generated. Every answer must:
//   - carry a status the document declares for the operation, with a declared content type
//     (any status, errors and redirects included: a body where none is declared is a finding);
//   - not be a 5xx (a declared 502 of an operation that talks to an upstream aside);
//   - for a request the document allows: not be a 400 (a refusal the schemas cannot express is a
//     documented status with its reason: 404, 409, 422, 423, ...);
//   - for a request the document forbids: be a 4xx;
//   - on 4xx, be the standard error body {ok:false, error, fields?} (JSON operations) and have
//     changed nothing: row count and hash of every table equal before and after;
//   - on 2xx, match the response schema the document declares.
// And every method a documented path does not serve (TRACE included) answers 405 with an Allow
// header listing the methods it does serve.
// Nothing leaves loopback: the WireGuard subnet is 127.77.0.0/24 (peers' tunnel addresses, gateway
// APIs and health checks are loopback addresses), SMTP hosts are forced to a closed loopback port,
// webhook URLs point at a closed loopback port, and check-dns and the client's dns-check ask a resolver on a closed loopback port.
//   FUZZ_RUNS=8 (requests per operation) FUZZ_SEED=1919 FUZZ_VERBOSE=1 (per-operation timing)
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import dns from 'node:dns';
import fc from 'fast-check';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { startTestServer, apiToken, bearer, type TestServer } from '../../sidecar/test/lib/server.js';
import { openApiDocument, type OpenApiDocument, type OpenApiOperation } from '../../sidecar/test/lib/openapi.js';
import { recordFigure } from './lib/figures.js';
import { valid, invalidObject, queryValue, hostile, schemaOf, type Override, type Schema } from './lib/fuzz-schema.js';
import { changed, snapshot, tables, type Snapshot } from './lib/fuzz-db.js';

const SEED = Number(process.env.FUZZ_SEED ?? 1919);
const RUNS = Number(process.env.FUZZ_RUNS ?? 8);
const FINGERPRINT = 'fuzz-machine-1';

let s: TestServer;
// Gateway heartbeats are stored in batches behind their answer (gateways/heartbeat-buffer.ts): an
// accepted heartbeat's row may be written while the next request runs. Flushed before a "before"
// snapshot, nothing is pending, so whatever changes afterwards was written by the request under test.
async function settledSnapshot(): Promise<Snapshot> {
  await s.deps.gateways.flushHeartbeats();
  await s.deps.clientMachines.flushSeen(); // a desktop client's last_seen_at is written behind too
  return snapshot(s.deps.db.sequelize, dbTables);
}
let doc: OpenApiDocument;
let admin: string;
let gatewayToken: string;
let clientToken: string;
let closedPort: number;
let dbTables: string[];
const pools = {
  webhooks: [] as number[],
  peers: [] as number[],
  groups: [] as number[],
  routes: [] as number[],
  users: [] as number[],
  tokens: [] as number[],
  tags: [] as string[],
  rdp: [] as number[],
  jobs: [] as number[],
  machines: [] as number[],
  clientTokens: [] as number[],
};

async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise((r) => srv.close(r));
  return port;
}

const api = async <T = never, P extends string = string, M extends string = 'GET'>(
  p: P,
  method: [T] extends [never] ? M : string,
  json?: unknown,
  headers: Record<string, string> = bearer(admin),
) => {
  const r = await s.req<T, `/api/v1${P}`, M>(`/api/v1${p}`, { method, json, headers });
  if (r.status >= 300) throw new Error(`seed ${method} ${p}: ${r.status} ${JSON.stringify(r.data)}`);
  return r.data;
};

async function seed(): Promise<void> {
  const g = await api('/peer-groups', 'POST', { name: 'fz-group', color: '#112233' });
  pools.groups.push(g.group.id);
  for (const n of ['fz-a', 'fz-b', 'fz-c']) pools.peers.push((await api('/peers', 'POST', { name: n, tags: 'fz-tag,other', group_id: g.group.id })).peer.id);
  const gw = await api('/peers', 'POST', { name: 'fz-gw', is_gateway: true, api_port: await freePort() });
  pools.peers.push(gw.peer.id);
  gatewayToken = gw.gateway!.apiToken;
  pools.tags.push('fz-tag', 'other');
  await api('/tags', 'POST', { name: 'fz-registered' });
  pools.tags.push('fz-registered');
  const r1 = await api('/routes', 'POST', { domain: 'fz1.example.test', peer_id: pools.peers[0], target_port: 8080, monitoring_enabled: true });
  const r2 = await api('/routes', 'POST', {
    domain: 'fz2.example.test',
    target_kind: 'gateway',
    target_peer_id: gw.peer.id,
    target_lan_host: '127.0.0.1',
    target_lan_port: 5000,
    wol_enabled: true,
    wol_mac: 'aa-bb-cc-dd-ee-01',
  });
  const r3 = await api('/routes', 'POST', {
    domain: 'fz3.example.test',
    route_type: 'l4',
    l4_protocol: 'tcp',
    l4_listen_port: 42022,
    peer_id: pools.peers[1],
    target_port: 22,
  });
  pools.routes.push(r1.route.id, r2.route.id, r3.route.id);
  await api(`/routes/${r1.route.id}/auth`, 'POST', {
    method: 'email_password',
    email: 'owner@example.test',
    password: 'correct horse',
    session_max_age: 3600000,
  });
  const u = await api('/users', 'POST', { username: 'fz-user', password: 'fz-user-password', role: 'user' });
  pools.users.push(u.user.id);
  const t = await api('/tokens', 'POST', { name: 'fz-spare', scopes: ['logs'] });
  pools.tokens.push(t.record.id);
  await api('/smtp', 'PUT', { host: '127.0.0.1', port: closedPort, from: 'gatehouse@example.test' });
  if (doc.paths['/api/v1/webhooks']?.post) {
    const w = await api('/webhooks', 'POST', {
      name: 'fz-hook',
      url: `http://127.0.0.1:${closedPort}/hook`,
      events: ['peer_created'],
      enabled: true,
      secret: 'fz-webhook-secret-0123456789',
    });
    pools.webhooks.push(w.webhook.id);
  }
  pools.rdp.push((await api('/rdp', 'POST', { name: 'fz-rdp', access_mode: 'internal', target_peer_id: pools.peers[2] })).route.id);
  pools.jobs.push(
    (await api('/settings/autobackup', 'POST', { name: 'fz-job', schedule: 'daily', keep: 2, target: 'local', passphrase: 'fz-job-passphrase' })).job.id,
  );
  // a desktop client bound to FINGERPRINT and registered, for the client API (never the admin token:
  // a fingerprint would bind it)
  const ct = await api('/tokens', 'POST', { name: 'fz-client', scopes: ['client'] });
  clientToken = ct.token;
  pools.clientTokens.push(ct.record.id);
  const reg = await api(
    '/client/register',
    'POST',
    { hostname: 'fz-laptop', platform: 'linux-x64', client_version: '1.0.0' },
    { ...bearer(clientToken), 'x-machine-fingerprint': FINGERPRINT },
  );
  pools.machines.push(reg.machine.id);
}

const ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: true, unicodeRegExp: true });
addFormats.default(ajv);
/** Query strings and headers carry text: their values are coerced to the schema's type first. */
const ajvText = new Ajv2020({ strict: false, allErrors: false, validateFormats: true, unicodeRegExp: true, coerceTypes: 'array' });
addFormats.default(ajvText);
type Check = (v: unknown) => boolean;
const compiled = new Map<string, Check>();
function validator(key: string, schema: Schema, text = false): Check {
  let v = compiled.get(key);
  if (!v) {
    const fn = (text ? ajvText : ajv).compile({ ...schema, components: doc.components });
    v = (x: unknown) => fn(structuredClone(x)) as boolean;
    compiled.set(key, v);
  }
  return v;
}

before(async () => {
  closedPort = await freePort();
  s = await startTestServer({
    GATEHOUSE_RATE_LIMIT_ADMIN: '1000000',
    GATEHOUSE_RATE_LIMIT_CLIENT: '1000000',
    GATEHOUSE_RATE_LIMIT_LOGIN: '1000000',
    GATEHOUSE_RATE_LIMIT_HOSTNAME: '1000000',
    GATEHOUSE_WG_SUBNET: '127.77.0.0/24',
    GATEHOUSE_PUBLIC_HOST: 'vpn.example.test',
    GATEHOUSE_WEBHOOK_ALLOW_PRIVATE: 'true',
  });
  const resolver = new dns.promises.Resolver({ timeout: 200, tries: 1 });
  resolver.setServers([`127.0.0.1:${closedPort}`]);
  // reason: the route service's resolver is private; the fuzzer points it at a closed port
  (s.deps.routes as unknown as { resolver: dns.promises.Resolver }).resolver = resolver;
  s.deps.clientMachines.resolver = resolver; // GET /client/dns-check
  admin = await apiToken(s);
  doc = openApiDocument((await s.req('/api/v1/openapi.json', { headers: bearer(admin) })).data);
  await seed();
  dbTables = await tables(s.deps.db.sequelize);
});
after(async () => s?.close());

interface Op {
  method: string;
  path: string;
  op: OpenApiOperation;
}

function operations(): Op[] {
  const out: Op[] = [];
  for (const [path, methods] of Object.entries(doc.paths))
    for (const [method, op] of Object.entries(methods)) out.push({ method: method.toUpperCase(), path, op });
  // public and gateway first, then admin reads, writes, and deletes last (so seeded rows live long)
  const rank = (o: Op) =>
    o.op.security?.some((x) => x.gatewayBearer) ? 1 : !o.op.security?.length ? 0 : o.method === 'GET' ? 2 : o.method === 'DELETE' ? 4 : 3;
  return out.sort((a, b) => rank(a) - rank(b));
}

/** Which seeded ids fit a path: /users/{id} takes user ids, /routes/{id} route ids, ... */
function idPool(path: string, name: string): number[] {
  if (name === 'machineId') return pools.machines;
  if (path.includes('/machines/')) return pools.clientTokens;
  if (path.includes('/rdp/')) return pools.rdp;
  if (path.includes('/autobackup/')) return pools.jobs;
  if (path.includes('/webhooks/')) return pools.webhooks.length ? pools.webhooks : [1];
  if (path.includes('/users/')) return pools.users;
  if (path.includes('/tokens/')) return pools.tokens;
  if (path.includes('/peer-groups/')) return pools.groups;
  if (path.includes('/routes/')) return pools.routes;
  if (path.includes('/peers/')) return pools.peers;
  return [...pools.peers, ...pools.routes];
}

function overrideFor(o: Op): Override {
  const smtp = o.path.includes('/smtp');
  return (name, schema) => {
    if (smtp && name === 'host') return fc.constantFrom('127.0.0.1', 'localhost');
    if (smtp && name === 'port') return fc.constant(closedPort);
    // webhook deliveries (POST /webhooks/:id/test sends at once) go to a closed loopback port
    if (o.path.includes('/webhooks') && name === 'url') return fc.constantFrom(`http://127.0.0.1:${closedPort}/hook`, `http://localhost:${closedPort}/x?y=1`);
    // branding images and S3 endpoints: a closed loopback port, never the internet
    if (/^(logo_url|bg_image_url|endpoint)$/.test(name) && schema.type !== 'integer') return fc.constantFrom(`http://127.0.0.1:${closedPort}/a.png`, null);
    if (name === 'X-Machine-Fingerprint') return fc.constant(FINGERPRINT);
    const int = schema.type === 'integer' || (Array.isArray(schema.type) && schema.type.includes('integer'));
    if (int && /^(peer_id|target_peer_id|gateway_peer_id)$/.test(name)) return fc.oneof(fc.constantFrom(...pools.peers), fc.integer({ min: 1, max: 1000 }));
    if (int && name === 'group_id') return fc.oneof(fc.constantFrom(...pools.groups), fc.constant(null), fc.integer({ min: 1, max: 1000 }));
    if (int && name === 'user_id') return fc.oneof(fc.constantFrom(...pools.users), fc.integer({ min: 1, max: 1000 }));
    if (schema.type === 'array' && /^(ids|acl_peer_ids|user_ids|allowed_user_ids)$/.test(name)) {
      const pool = /user_ids$/.test(name) ? pools.users : o.path.includes('/rdp') ? pools.rdp : o.path.includes('/routes') ? pools.routes : pools.peers;
      return fc.uniqueArray(fc.oneof(fc.constantFrom(...pool), fc.integer({ min: 1, max: 1000 })), { minLength: schema.minItems ?? 0, maxLength: 4 });
    }
    return undefined;
  };
}

const BAD_IDS = ['0', '-1', 'abc', '1.5', '1e3', '9007199254740993', '99999999999999999999', '%00', '..%2F..', '%20', 'null', '0x1'];

interface Req {
  url: string;
  init: RequestInit;
  body: unknown;
  raw: boolean;
  query: Record<string, string>;
  pathValues: Record<string, string>;
  headerValues: Record<string, string>;
  generated: 'valid' | 'invalid';
}

function requestArb(o: Op, bad: boolean): fc.Arbitrary<Req> {
  const ov = overrideFor(o);
  const params = o.op.parameters ?? [];
  const pathParams = params.filter((p) => p.in === 'path');
  const queryParams = params.filter((p) => p.in === 'query');
  const headerParams = params.filter((p) => p.in === 'header');
  const pathArb = fc.tuple(
    ...pathParams.map((p) => {
      const good =
        p.name === 'name'
          ? fc.constantFrom(...pools.tags)
          : p.name === 'file'
            ? fc.constantFrom('index.js', 'app.css')
            : fc.constantFrom(...idPool(o.path, p.name).map(String));
      return bad ? fc.oneof(good, fc.constantFrom(...BAD_IDS), fc.integer({ min: 1, max: 1e9 }).map(String)) : good;
    }),
  );
  // required query parameters are always sent when generating valid requests
  const queryArb = fc.tuple(
    ...queryParams.map((p) =>
      p.required && !bad ? queryValue(p.schema, ov, p.name, bad) : fc.option(queryValue(p.schema, ov, p.name, bad), { nil: undefined, freq: 3 }),
    ),
  );
  const headerArb = fc.tuple(
    ...headerParams.map((p) => {
      const good = queryValue(p.schema, ov, p.name, false);
      if (!bad) return p.required ? good : fc.option(good, { nil: undefined, freq: 4 });
      return fc.oneof(good, fc.constant(undefined), fc.constantFrom('', ' ', 'x', 'é'.repeat(600)));
    }),
  );
  const content = o.op.requestBody?.content ?? {};
  const jsonSchema = content['application/json']?.schema;
  const multipart = content['multipart/form-data'];
  let bodyArb: fc.Arbitrary<{ body: unknown; raw?: string; type?: string }>;
  if (jsonSchema) {
    bodyArb = bad
      ? fc.oneof(
          { arbitrary: invalidObject(jsonSchema, ov).map((body) => ({ body })), weight: 8 },
          {
            arbitrary: fc.constantFrom('{"a":', '[1,2', '\u0000', 'null', '"str"', '{"__proto__":{"ok":false}}').map((raw) => ({ body: undefined, raw })),
            weight: 1,
          },
          { arbitrary: valid(jsonSchema, ov).map((b) => ({ body: undefined, raw: JSON.stringify(b), type: 'text/plain' })), weight: 1 },
        )
      : valid(jsonSchema, ov).map((body) => ({ body }));
  } else if (multipart) {
    const fields = Object.entries(multipart.schema!.properties ?? {}).filter(([, v]) => schemaOf(v)?.format !== 'binary');
    bodyArb = fc
      .tuple(
        fc.uint8Array({ maxLength: 2048 }),
        fc.constantFrom('image/png', 'image/svg+xml', 'text/html', 'application/octet-stream'),
        fc.constantFrom('a.png', '../../x.png', 'x"\r\n.png', 'logo.svg'),
        fc.tuple(...fields.map(([k, v]) => queryValue(schemaOf(v), ov, k, bad))),
      )
      .map(([bytes, type, name, values]) => ({
        body: { bytes, type, name, fields: Object.fromEntries(fields.map(([k], i) => [k, values[i]]).filter(([, v]) => v !== undefined)) },
      }));
  } else
    bodyArb = bad
      ? fc.option(
          hostile.map((body) => ({ body })),
          { nil: { body: undefined } },
        )
      : fc.constant({ body: undefined });

  return fc.tuple(pathArb, queryArb, headerArb, bodyArb).map(([pv, qv, hv, b]) => {
    let p = o.path;
    const pathValues: Record<string, string> = {};
    pathParams.forEach((pp, i) => {
      // a bad value's percent signs go out as they are ('%20', '%00', '..%2F..'): the document judges
      // what the server decodes from them, a malformed escape (never a valid value) as U+0000
      const sent = bad ? encodeURIComponent(pv[i]).replace(/%25/g, '%') : encodeURIComponent(pv[i]);
      let seen: string;
      try {
        seen = decodeURIComponent(sent);
      } catch {
        seen = '\u0000';
      }
      pathValues[pp.name] = seen;
      p = p.replace(`{${pp.name}}`, sent);
    });
    const q = new URLSearchParams();
    const query: Record<string, string> = {};
    queryParams.forEach((qp, i) => {
      if (qv[i] !== undefined) {
        q.set(qp.name, qv[i] as string);
        query[qp.name] = qv[i] as string;
      }
    });
    const headers: Record<string, string> = { accept: acceptFor(o) };
    const headerValues: Record<string, string> = {};
    headerParams.forEach((hp, i) => {
      const v = hv[i];
      // what fetch can send: no control characters or non-Latin-1 text in a header
      if (v !== undefined && /^[\x20-\x7e\xa0-\xff]*$/.test(String(v))) {
        headers[hp.name] = String(v);
        headerValues[hp.name] = String(v);
      }
    });
    let body: BodyInit | undefined;
    if (multipart && b.body) {
      const f = b.body as { bytes: Uint8Array; type: string; name: string; fields: Record<string, string> };
      const fd = new FormData();
      fd.set(
        Object.entries(multipart.schema!.properties!).find(([, v]) => schemaOf(v)?.format === 'binary')![0],
        new Blob([Buffer.from(f.bytes)], { type: f.type }),
        f.name,
      );
      for (const [k, v] of Object.entries(f.fields)) fd.set(k, v);
      body = fd;
    } else if (b.raw !== undefined) {
      body = b.raw;
      headers['content-type'] = b.type ?? 'application/json';
    } else if (b.body !== undefined && o.method !== 'GET') {
      body = JSON.stringify(b.body);
      headers['content-type'] = 'application/json';
    }
    const qs = q.toString();
    return {
      url: p + (qs ? `?${qs}` : ''),
      init: { method: o.method, headers, body },
      body: b.body,
      raw: b.raw !== undefined,
      query,
      pathValues,
      headerValues,
      generated: bad ? 'invalid' : 'valid',
    };
  });
}

/**
 * Whether the document allows the request: path values, query parameters and headers by their
 * schemas (as text, coerced), required ones present, and the body by the request body schema.
 */
function allowedByDocument(o: Op, r: Req): { ok: boolean; why: string } {
  const label = `${o.method} ${o.path}`;
  for (const p of o.op.parameters ?? []) {
    const given = p.in === 'path' ? r.pathValues[p.name] : p.in === 'query' ? r.query[p.name] : p.in === 'header' ? r.headerValues[p.name] : undefined;
    if (given === undefined) {
      if (p.required) return { ok: false, why: `${p.in} ${p.name} missing` };
      continue;
    }
    const box = { v: given };
    const check = validator(`param ${label} ${p.in} ${p.name}`, { type: 'object', properties: { v: p.schema! } }, true);
    if (!check(box)) return { ok: false, why: `${p.in} ${p.name}=${JSON.stringify(given).slice(0, 60)}` };
  }
  const content = o.op.requestBody?.content ?? {};
  if (content['application/json']) {
    // a raw body is allowed where the document also takes any media type (*/*: an echo endpoint)
    // (sent as application/json, it is JSON to the server: it must parse and meet the JSON schema)
    if (r.raw) {
      if (!content['*/*']) return { ok: false, why: 'not a JSON body' };
      const type = String((r.init.headers as Record<string, string>)['content-type'] ?? '');
      if (!type.startsWith('application/json')) return { ok: true, why: '' };
      let parsed: unknown;
      try {
        parsed = JSON.parse(String(r.init.body));
      } catch {
        return { ok: false, why: 'a body sent as JSON that is no JSON' };
      }
      return validator(`req ${label}`, content['application/json'].schema!)(parsed) ? { ok: true, why: '' } : { ok: false, why: 'body breaks the schema' };
    }
    if (r.body === undefined) return o.op.requestBody?.required ? { ok: false, why: 'body missing' } : { ok: true, why: '' };
    if (!validator(`req ${label}`, content['application/json'].schema!)(r.body)) return { ok: false, why: 'body breaks the schema' };
  } else if (content['multipart/form-data']) {
    const fd = r.init.body;
    if (!(fd instanceof FormData)) return { ok: false, why: 'not multipart' };
    const fields = Object.fromEntries([...fd.entries()].filter(([, v]) => typeof v === 'string'));
    const sch = content['multipart/form-data'].schema!;
    const props = sch.properties!;
    const textSchema = {
      ...sch,
      properties: Object.fromEntries(Object.entries(props).filter(([, v]) => schemaOf(v)?.format !== 'binary')),
      required: (sch.required ?? []).filter((k) => schemaOf(props[k])?.format !== 'binary'),
    };
    if (!validator(`mp ${label}`, textSchema, true)(fields)) return { ok: false, why: 'multipart fields break the schema' };
  } else if (
    r.body !== undefined &&
    o.method !== 'GET' &&
    !(r.body && typeof r.body === 'object' && !Array.isArray(r.body) && Object.keys(r.body).length === 0)
  ) {
    return { ok: false, why: 'a body where the operation takes none' };
  }
  return { ok: true, why: '' };
}

/** What a client of the document asks for: JSON where the operation answers JSON, else its media type (text/html pages, text/plain files). */
function acceptFor(o: Op): string {
  for (const [status, r] of Object.entries(o.op.responses ?? {})) {
    if (!/^[23]/.test(status) || !r.content) continue;
    if (r.content['application/json']) return 'application/json';
    const m = Object.keys(r.content)[0];
    return m.includes('*') ? '*/*' : m;
  }
  return 'application/json';
}

function authHeaders(o: Op): Record<string, string> {
  const sec = o.op.security ?? [];
  if (!sec.length) return {};
  if (sec.some((x) => x.gatewayBearer)) return bearer(gatewayToken);
  if (o.path.startsWith('/api/v1/client/')) return bearer(clientToken);
  return bearer(admin);
}

const ERROR_BODY: Schema = {
  type: 'object',
  properties: { ok: { const: false }, error: { type: 'string', minLength: 1 }, fields: { type: 'object', additionalProperties: { type: 'string' } } },
  required: ['ok', 'error'],
};

interface Finding {
  op: string;
  kind: string;
  status: number;
  request: string;
  detail: string;
}

async function send(o: Op, r: Req): Promise<{ status: number; type: string; data: unknown; text: string }> {
  const headers = { ...(r.init.headers as Record<string, string>), ...authHeaders(o) };
  const raw = o.op.responses?.['200']?.content?.['text/event-stream'];
  if (raw) {
    const ac = new AbortController();
    const res = await fetch(s.url + r.url, { ...r.init, headers: { ...headers, accept: 'text/event-stream' }, signal: ac.signal, redirect: 'manual' });
    const type = res.headers.get('content-type') ?? '';
    let data: unknown = null;
    let text = 'x';
    if (res.status >= 300) {
      text = await res.text();
      data = JSON.parse(text);
    }
    ac.abort();
    return { status: res.status, type, data, text };
  }
  const res = await fetch(s.url + r.url, { ...r.init, headers, redirect: 'manual', signal: AbortSignal.timeout(8000) });
  const text = await res.text();
  let data: unknown = text;
  try {
    data = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return { status: res.status, type: res.headers.get('content-type') ?? '', data, text };
}

/** Tables a rejected request may legitimately write: a refused sign-in is recorded (lockout counts it, the activity log shows it). */
function mayWriteOnReject(o: Op, status: number): string[] {
  if ((o.path === '/login' || o.path === '/route-auth/login') && (status === 401 || status === 423)) return ['login_attempts', 'activity_log'];
  return [];
}

/** The declared media type an answer's Content-Type matches, if any. */
function mediaOf(content: Record<string, unknown> | undefined, type: string): string | undefined {
  const t = type.split(';')[0].trim().toLowerCase();
  return Object.keys(content ?? {}).find((m) => m === '*/*' || m === t || (m.endsWith('/*') && t.startsWith(m.slice(0, -1))));
}

test(
  'every operation of the OpenAPI document, fuzzed from its schemas: answers as documented (status and content type), valid requests not refused with 400, invalid ones refused, no 5xx, rejections change nothing',
  { timeout: 900_000 },
  async () => {
    const ops = operations().filter((o) => !process.env.FUZZ_ONLY || `${o.method} ${o.path}`.includes(process.env.FUZZ_ONLY));
    const findings: Finding[] = [];
    let sent = 0;
    const started = Date.now();
    const counts: Record<string, number> = {};
    const kinds = { valid: 0, invalid: 0 };
    const slow = new Map<string, number>();
    let current: Snapshot | undefined;
    for (const [i, o] of ops.entries()) {
      const label = `${o.method} ${o.path}`;
      if (process.env.FUZZ_VERBOSE === '2') console.log(`# op ${label}`);
      const samples = [
        ...fc.sample(requestArb(o, false), { seed: SEED + i, numRuns: Math.ceil(RUNS / 2) }),
        ...fc.sample(requestArb(o, true), { seed: SEED + 7919 + i, numRuns: Math.floor(RUNS / 2) }),
      ];
      const opStart = Date.now();
      for (const r of samples) {
        if (process.env.FUZZ_VERBOSE === '2') console.log(`# > ${describe(r).slice(0, 300)}`);
        const verdict = allowedByDocument(o, r);
        if (process.env.FUZZ_VERBOSE === '2') console.log(`# ${verdict.ok ? 'valid' : `invalid: ${verdict.why}`}`);
        kinds[verdict.ok ? 'valid' : 'invalid']++;
        // the snapshot after a rejected request is the next one's before (a rejection changed nothing)
        const before = (current ??= await settledSnapshot());
        current = undefined;
        let res;
        try {
          res = await send(o, r);
        } catch (e) {
          findings.push({ op: label, kind: 'no answer', status: 0, request: describe(r), detail: String(e) });
          continue;
        }
        sent++;
        counts[`${Math.floor(res.status / 100)}xx`] = (counts[`${Math.floor(res.status / 100)}xx`] ?? 0) + 1;
        const add = (kind: string, detail: string) =>
          findings.push({
            op: label,
            kind,
            status: res.status,
            request: describe(r),
            detail: `${detail} | answer: ${res.type} ${JSON.stringify(res.data).slice(0, 300)}`,
          });
        const declared = o.op.responses?.[String(res.status)];
        // 5xx: never, except a declared 502 of an operation that talks to an upstream (the mail server
        // refusing a test mail, a gateway companion that is not there): that is the answer it documents.
        if (res.status >= 500 && !(res.status === 502 && declared)) add('5xx', '');
        if (!declared) add('undeclared status', `declared: ${Object.keys(o.op.responses ?? {}).join(',')}`);
        // every answer's content type is declared for its status (a body where none is declared too)
        if (declared && res.status !== 204 && res.status !== 304 && res.text.length > 0) {
          if (!mediaOf(declared.content, res.type))
            add('undeclared content type', `${res.type || '(none)'} not in ${Object.keys(declared.content ?? {}).join(',') || '(no content declared)'}`);
        }
        if (verdict.ok && res.status === 400) add('refused a request the document allows', '');
        if (!verdict.ok && res.status < 400) add('accepted a request the document forbids', verdict.why);
        const json = res.type.startsWith('application/json');
        if (res.status >= 400 && res.status < 500) {
          if (json || declared?.content?.['application/json']) {
            if (!validator('error body', ERROR_BODY)(res.data)) add('non-standard 4xx body', '');
          }
          const after = await snapshot(s.deps.db.sequelize, dbTables);
          current = after;
          const allowed = mayWriteOnReject(o, res.status);
          const diff = changed(before, after).filter((d) => !allowed.some((t) => d.startsWith(`${t} `)));
          if (diff.length) add('rejected request changed data', diff.join('; '));
        }
        if (res.status >= 200 && res.status < 300) {
          const content = declared?.content;
          if (content && res.status !== 204 && mediaOf(content, res.type) === 'application/json' && content['application/json'].schema) {
            if (!validator(`res ${label} ${res.status}`, content['application/json'].schema)(res.data)) add('2xx does not match the declared schema', '');
          }
        }
      }
      if (Date.now() - opStart > 3000) slow.set(label, Date.now() - opStart);
      if (process.env.FUZZ_VERBOSE) console.log(`# ${label}: ${Date.now() - opStart} ms`);
    }
    // a method the path does not have (TRACE included): 405 with Allow, the standard body, nothing changed
    const methods = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'TRACE'];
    let wrongMethods = 0;
    for (const [path, ms] of Object.entries(doc.paths)) {
      const have = Object.keys(ms).map((m) => m.toUpperCase());
      const wrong = methods.filter((m) => !have.includes(m));
      for (const m of wrong) {
        const url = path.replace(/\{[^}]+\}/g, (p) => (p === '{name}' ? pools.tags[0] : p === '{file}' ? 'x.js' : String(pools.routes[0])));
        const before = await settledSnapshot();
        const res = await rawRequest(m, url, { accept: 'application/json', ...bearer(admin) });
        sent++;
        wrongMethods++;
        counts[`${Math.floor(res.status / 100)}xx`] = (counts[`${Math.floor(res.status / 100)}xx`] ?? 0) + 1;
        let data: unknown = null;
        try {
          data = JSON.parse(res.body);
        } catch {
          data = res.body.slice(0, 200);
        }
        const label = `${m} ${path} (method not offered)`;
        const allow = (res.headers.get('allow') ?? '')
          .split(',')
          .map((x) => x.trim())
          .filter(Boolean);
        const expected = [...new Set([...have, ...(have.includes('GET') ? ['HEAD'] : [])])].sort();
        if (res.status !== 405)
          findings.push({ op: label, kind: 'wrong method not answered 405', status: res.status, request: `${m} ${url}`, detail: JSON.stringify(data) });
        else if (!expected.every((x) => allow.includes(x)) || allow.includes(m))
          findings.push({
            op: label,
            kind: 'Allow does not list the documented methods',
            status: res.status,
            request: `${m} ${url}`,
            detail: `Allow: ${allow.join(', ')}; documented: ${expected.join(', ')}`,
          });
        // the standard JSON body, except on the pages that answer text (the route-auth pages and forward auth: their documented errorType)
        const textPage = Object.values(ms).some((x) => Object.values(x.responses ?? {}).some((r) => r.content && !r.content['application/json']));
        if (
          res.status >= 400 &&
          !(textPage && !(res.headers.get('content-type') ?? '').startsWith('application/json')) &&
          !validator('error body', ERROR_BODY)(data)
        )
          findings.push({
            op: label,
            kind: 'non-standard 4xx body',
            status: res.status,
            request: `${m} ${url}`,
            detail: `${res.headers.get('content-type')} ${JSON.stringify(data)}`,
          });
        const diff = changed(before, await snapshot(s.deps.db.sequelize, dbTables));
        if (diff.length)
          findings.push({ op: label, kind: 'rejected request changed data', status: res.status, request: `${m} ${url}`, detail: diff.join('; ') });
      }
    }
    const ms = Date.now() - started;
    for (const [k, v] of slow) console.log(`# slow operation: ${k} ${v} ms`);
    recordFigure({ test: 'OpenAPI fuzzing', figure: 'operations fuzzed', value: String(ops.length) });
    const generic = ops.filter((o) =>
      Object.entries(o.op.responses!).some(([st, r]) => /^2/.test(st) && r.content?.['application/json']?.schema?.$ref === '#/components/schemas/Ok'),
    );
    recordFigure({
      test: 'OpenAPI fuzzing',
      figure: 'operations whose 2xx body is only the generic {ok: true, ...}',
      value: `${generic.length} of ${ops.length}`,
    });
    if (process.env.FUZZ_VERBOSE) for (const o of generic) console.log(`# generic 2xx: ${o.method} ${o.path}`);
    recordFigure({
      test: 'OpenAPI fuzzing',
      figure: 'requests sent',
      value: `${sent} (${Object.entries(counts)
        .sort()
        .map(([k, v]) => `${k} ${v}`)
        .join(', ')}; by the document ${kinds.valid} valid, ${kinds.invalid} invalid; ${wrongMethods} with a method the path lacks)`,
    });
    // about 65 s at the default 8 runs per operation on a quiet machine; the bound grows with FUZZ_RUNS
    const bound = 300_000 * Math.max(1, RUNS / 8);
    recordFigure({ test: 'OpenAPI fuzzing', figure: 'duration', value: `${(ms / 1000).toFixed(1)} s`, target: `< ${bound / 1000} s`, ok: ms < bound });
    const byKind = new Map<string, Finding[]>();
    for (const f of findings) byKind.set(`${f.kind} · ${f.op}`, [...(byKind.get(`${f.kind} · ${f.op}`) ?? []), f]);
    const affected = new Set(findings.map((f) => f.op)).size;
    recordFigure({
      test: 'OpenAPI fuzzing',
      figure: 'findings (undocumented answers, valid requests refused, invalid ones accepted, 5xx, changed data)',
      value: `${findings.length} in ${affected} operations`,
      target: '0',
      ok: findings.length === 0,
    });
    if (findings.length) {
      const lines = [...byKind.entries()].map(([k, fs]) => `${k} (${fs.length}×): ${fs[0].status} ${fs[0].request}\n    ${fs[0].detail}`);
      assert.fail(
        `fuzzing found ${findings.length} problems in ${affected} operations (seed ${SEED}, ${RUNS} runs per operation; replay with FUZZ_SEED=${SEED} FUZZ_RUNS=${RUNS}):\n${lines.join('\n')}`,
      );
    }
    if (!process.env.FUZZ_ONLY) assert.ok(ops.length >= 100, `expected the whole document, got ${ops.length} operations`);
    if (!process.env.FUZZ_ONLY)
      assert.ok(kinds.valid >= ops.length, `too few valid requests (${kinds.valid}): the generator must produce requests the document allows`);
    // Every 2xx is checked against the schema the document declares, so no operation may fall
    // back to the generic {ok: true, ...} (declare Endpoint.response); only these, each with its reason.
    const GENERIC_ALLOWED: Record<string, string> = {
      'GET /gateway-wol/wait': 'never answers 2xx: the waking-up page is 503 while the host wakes, 4xx/5xx otherwise',
    };
    assert.deepEqual(
      generic.map((o) => `${o.method} ${o.path}`).filter((k) => !(k in GENERIC_ALLOWED)),
      [],
      'operations with only the generic {ok: true, ...} 2xx body: declare Endpoint.response',
    );
  },
);

/** node:http, for methods fetch refuses to send (TRACE). */
function rawRequest(
  method: string,
  path: string,
  headers: Record<string, string>,
): Promise<{ status: number; headers: { get(n: string): string | null }; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(s.url + path, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: { get: (n) => (res.headers[n.toLowerCase()] as string | undefined) ?? null },
          body: Buffer.concat(chunks).toString('utf8'),
        }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

function describe(r: Req): string {
  const b = r.init.body;
  const body = typeof b === 'string' ? b.slice(0, 300) : b instanceof FormData ? '<multipart>' : '';
  const h = Object.entries(r.headerValues)
    .map(([k, v]) => `${k}: ${v.slice(0, 40)}`)
    .join('; ');
  return `${r.init.method} ${r.url}${h ? ` [${h}]` : ''} ${body}`;
}
