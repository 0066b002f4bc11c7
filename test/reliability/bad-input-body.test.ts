// Bad input: request bodies. Every endpoint's body goes through one parser (koa-body,
// sidecar/src/http/body.ts), so these cases walk every endpoint that takes a body, with the token
// its kind needs (admin and client: a full-access API token; gateway: a gateway token; public: none):
// - oversized bodies: each documented limit (docs/reference/api.md "Conventions") holds just below and gives
//   413 with the standard body just above; a huge declared body, a chunked one without a length and
//   a gzip bomb are refused without being read into memory (their times are stated);
// - deeply nested JSON: refused with 400 beyond MAX_JSON_DEPTH, never a 500, on every endpoint;
// - invalid UTF-8: refused with 400 on every endpoint (nothing stored with replacement characters);
//   invalid UTF-8 in query strings and path parameters is never a 500.
//   bash scripts/test-reliability.sh test/reliability/bad-input-body.test.ts
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import zlib from 'node:zlib';
import { startTestServer, apiToken, bearer, login, type TestServer } from '../../sidecar/test/lib/server.js';
import { fullPath, type Endpoint } from '../../sidecar/src/http/registry.js';
import { FORM_LIMIT_BYTES, JSON_LIMIT_BYTES, MAX_JSON_DEPTH, PAGE_FORM_LIMIT_BYTES } from '../../sidecar/src/http/body.js';
import { PROBE_MAX_BYTES } from '../../sidecar/src/gateways/endpoints.js';
import { recordFigure } from './lib/figures.js';

const CASE = 'bad input: bodies';
let s: TestServer;
let admin: Record<string, string>;
/** an admin session with its CSRF token: the session-only endpoints (an account's own second factor) take no token */
let adminSession: Record<string, string>;
let gateway: Record<string, string>;

before(async () => {
  s = await startTestServer({
    GATEHOUSE_RATE_LIMIT_ADMIN: '1000000',
    GATEHOUSE_RATE_LIMIT_CLIENT: '1000000',
    GATEHOUSE_RATE_LIMIT_LOGIN: '1000000',
    GATEHOUSE_RATE_LIMIT_HOSTNAME: '1000000',
  });
  admin = bearer(await apiToken(s));
  const signedIn = await login(s);
  adminSession = { cookie: signedIn.cookie, 'x-csrf-token': signedIn.csrf };
  const gw = await s.req('/api/v1/peers', { method: 'POST', headers: admin, json: { name: 'bad-input-gw', is_gateway: true } });
  assert.equal(gw.status, 201, JSON.stringify(gw.data));
  gateway = bearer(gw.data.gateway!.apiToken);
});
after(async () => s.close());

/** One raw request (node http, so bodies and headers are exactly what the case needs); never throws. */
function raw(
  method: string,
  p: string,
  headers: Record<string, string>,
  body?: Buffer | ((req: http.ClientRequest) => void),
): Promise<{ status: number; body: string; ms: number }> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    const u = new URL(s.url + p);
    // node sends a DELETE's body without a length unless told: always state it
    if (Buffer.isBuffer(body) && !Object.keys(headers).some((k) => k.toLowerCase() === 'content-length'))
      headers = { ...headers, 'content-length': String(body.length) };
    const req = http.request({ host: u.hostname, port: u.port, path: u.pathname + u.search, method, headers, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text, ms: performance.now() - t0 }));
    });
    req.on('error', (e) => resolve({ status: 0, body: String(e), ms: performance.now() - t0 }));
    if (typeof body === 'function') body(req);
    else req.end(body);
  });
}

/** Refused by the licence gate before the body is read (an earlier case may have removed the licence). */
const gated = (r: { status: number; body: string }) => r.status === 403 && typeof json(r.body)?.feature === 'string';

const json = (b: string) => {
  try {
    return JSON.parse(b);
  } catch {
    return undefined;
  }
};

/** The endpoints that read a body (every method but GET), with a concrete path and the caller's headers. */
function bodyEndpoints(): { e: Endpoint; label: string; path: string; headers: Record<string, string> }[] {
  return s.endpoints
    .filter((e) => e.method !== 'GET' && !e.multipart)
    .map((e) => {
      // each parameter well formed (so the body is what is judged) and naming nothing that exists
      const path = fullPath(e).replace(/:([A-Za-z_]+)/g, (_m, n: string) =>
        n === 'id' || /id$/i.test(n) ? '987654' : n === 'token' ? `gthcl_${'A'.repeat(43)}` : 'no-such-thing',
      );
      const headers = e.auth === 'gateway' ? gateway : e.auth === 'public' ? {} : e.sessionOnly ? adminSession : admin;
      return { e, label: `${e.method} ${fullPath(e)}`, path, headers: { accept: 'application/json', ...headers } };
    });
}

test('oversized bodies: each documented limit holds below and gives 413 (standard body) above', async () => {
  const before = (await s.req('/api/v1/tags', { headers: admin })).data.tags.length;
  // JSON: the limit counts the body's bytes (padded with whitespace: unknown fields are refused)
  const jsonOf = (size: number) => {
    const head = '{"name":"limit-json"';
    return Buffer.from(head + ' '.repeat(size - head.length - 1) + '}');
  };
  const under = await raw('POST', '/api/v1/tags', { ...admin, 'content-type': 'application/json' }, jsonOf(JSON_LIMIT_BYTES));
  assert.equal(under.status, 201, under.body);
  const over = await raw('POST', '/api/v1/tags', { ...admin, 'content-type': 'application/json' }, jsonOf(JSON_LIMIT_BYTES + 1));
  assert.equal(over.status, 413, over.body);
  assert.deepEqual(
    Object.keys(json(over.body))
      .filter((k) => k !== 'code' && k !== 'params')
      .sort(),
    ['error', 'ok'],
  );
  // forms
  // forms: padded with empty pairs ('&'), which the parser skips
  const formOf = (size: number, name: string) => Buffer.from(`name=${name}${'&'.repeat(size - name.length - 5)}`);
  assert.equal(
    (await raw('POST', '/api/v1/tags', { ...admin, 'content-type': 'application/x-www-form-urlencoded' }, formOf(FORM_LIMIT_BYTES, 'limit-form'))).status,
    201,
  );
  const formOver = await raw(
    'POST',
    '/api/v1/tags',
    { ...admin, 'content-type': 'application/x-www-form-urlencoded' },
    formOf(FORM_LIMIT_BYTES + 1, 'limit-form2'),
  );
  assert.equal(formOver.status, 413, formOver.body);
  assert.equal(json(formOver.body)?.ok, false);
  // the route-auth login page's form (16 KiB): answered by the page handler, so only the limit is checked
  const page = await raw(
    'POST',
    '/route-auth/login',
    { host: 'no-such-route.example', 'content-type': 'application/x-www-form-urlencoded' },
    formOf(PAGE_FORM_LIMIT_BYTES + 1, 'p'),
  );
  assert.ok(page.status === 413 || page.status === 404, `route-auth page form over the limit: ${page.status}`);
  // the gateway probe echo (1 MiB)
  assert.equal(
    (await raw('POST', '/api/v1/gateway/probe', { ...gateway, 'content-type': 'application/octet-stream' }, Buffer.alloc(PROBE_MAX_BYTES))).status,
    200,
  );
  assert.equal(
    (await raw('POST', '/api/v1/gateway/probe', { ...gateway, 'content-type': 'application/octet-stream' }, Buffer.alloc(PROBE_MAX_BYTES + 1))).status,
    413,
  );
  assert.equal((await s.req('/api/v1/tags', { headers: admin })).data.tags.length, before + 2, 'only the bodies within the limits were stored');
});

test('oversized bodies on every endpoint: a 64 MiB declared body, a chunked one and a gzip bomb are refused without reading them', async () => {
  const huge = 64 * 1024 * 1024;
  let longestDeclared = 0;
  let longestChunked = 0;
  for (const { label, path, headers, e } of bodyEndpoints()) {
    // declared: the answer comes before the body (the client sends only the headers and 1 KiB)
    const r = await raw(e.method, path, { ...headers, 'content-type': 'application/json', 'content-length': String(huge) }, (req) => {
      req.write('{"a":"' + 'x'.repeat(1024));
      setTimeout(() => req.destroy(), 5000).unref();
    });
    assert.ok(
      r.status === 413 || (r.status >= 400 && r.status < 500 && r.status !== 400),
      `${label} with a 64 MiB Content-Length: ${r.status} ${r.body.slice(0, 200)}`,
    );
    if (r.status === 413) assert.equal(json(r.body)?.ok, false, label);
    longestDeclared = Math.max(longestDeclared, r.ms);
  }
  // chunked (no Content-Length), 2 MiB of JSON in 64 KiB pieces: cut off at the limit
  for (const { label, path, headers, e } of bodyEndpoints().filter((x) => x.e.auth !== 'public' || x.path === '/login')) {
    const r = await raw(e.method, path, { ...headers, 'content-type': 'application/json', 'transfer-encoding': 'chunked' }, (req) => {
      req.write('{"a":"');
      const piece = 'x'.repeat(64 * 1024);
      let sent = 0;
      const more = () => {
        while (sent < 32) {
          sent++;
          if (!req.write(piece)) return void req.once('drain', more);
        }
        req.end('"}');
      };
      more();
      req.on('error', () => undefined);
    });
    assert.ok(
      r.status === 413 || (r.status >= 400 && r.status < 500 && r.status !== 400),
      `${label} chunked over the limit: ${r.status} ${r.body.slice(0, 200)}`,
    );
    longestChunked = Math.max(longestChunked, r.ms);
  }
  // gzip bomb: 64 KiB on the wire that inflate to 64 MiB
  const bomb = await gzipOf(['{"name":"bomb","pad":"', ...Array.from({ length: 64 }, () => 'x'.repeat(1024 * 1024)), '"}']);
  const rss0 = process.memoryUsage().rss;
  const t0 = performance.now();
  const b = await raw('POST', '/api/v1/tags', { ...admin, 'content-type': 'application/json', 'content-encoding': 'gzip' }, bomb);
  const bombMs = performance.now() - t0;
  assert.equal(b.status, 413, b.body);
  const grew = (process.memoryUsage().rss - rss0) / 1024 / 1024;
  recordFigure({
    test: CASE,
    figure: 'longest answer to a 64 MiB Content-Length (any endpoint)',
    value: `${Math.round(longestDeclared)} ms`,
    target: '< 5000 ms (before the body)',
    ok: longestDeclared < 5000,
  });
  recordFigure({ test: CASE, figure: 'longest answer to a 2 MiB chunked JSON body (any endpoint)', value: `${Math.round(longestChunked)} ms` });
  recordFigure({
    test: CASE,
    figure: `gzip bomb (${Math.round(bomb.length / 1024)} KiB inflating to 64 MiB): 413 after`,
    value: `${Math.round(bombMs)} ms, RSS +${Math.max(0, Math.round(grew))} MiB`,
    target: 'RSS + < 32 MiB',
    ok: grew < 32,
  });
  assert.ok(grew < 32, `the gzip bomb grew the process by ${grew} MiB`);
});

/** gzip of the pieces, written one by one (the 64 MiB never exist as one buffer here). */
async function gzipOf(pieces: string[]): Promise<Buffer> {
  const gz = zlib.createGzip({ level: 9 });
  const out: Buffer[] = [];
  gz.on('data', (d: Buffer) => out.push(d));
  const done = new Promise((r) => gz.on('end', r));
  for (const p of pieces) if (!gz.write(p)) await new Promise((r) => gz.once('drain', r));
  gz.end();
  await done;
  return Buffer.concat(out);
}

/** [[[ … ]]] nested `depth` levels (iteratively built text; JSON.stringify would recurse). */
const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);

test(`deeply nested JSON: 400 beyond ${MAX_JSON_DEPTH} levels on every endpoint, never a 500; ${MAX_JSON_DEPTH} levels still parse`, async () => {
  const eps = bodyEndpoints();
  assert.ok(eps.length > 50, `expected many endpoints with a body, got ${eps.length}`);
  let longest = 0;
  const wrong: string[] = [];
  for (const { label, path, headers, e } of eps) {
    for (const body of [`{"name":"deep","x":${nested(100_000)}}`, nested(200_000), `{"telemetry":{"extra":${nested(MAX_JSON_DEPTH)}}}`]) {
      const r = await raw(e.method, path, { ...headers, 'content-type': 'application/json' }, Buffer.from(body));
      longest = Math.max(longest, r.ms);
      if ((r.status !== 400 || !/nested/.test(json(r.body)?.error ?? '')) && !gated(r))
        wrong.push(`${label} with ${body.length} bytes of nesting: ${r.status} ${r.body.slice(0, 120)}`);
    }
    // within the limit: whatever the endpoint says, it is not a 500
    const ok = await raw(e.method, path, { ...headers, 'content-type': 'application/json' }, Buffer.from(`{"x":${nested(MAX_JSON_DEPTH - 1)}}`));
    if (ok.status >= 500 || /nested/.test(json(ok.body)?.error ?? ''))
      wrong.push(`${label} with ${MAX_JSON_DEPTH} levels: ${ok.status} ${ok.body.slice(0, 120)}`);
  }
  assert.deepEqual(wrong, []);
  // a heartbeat that is valid but for a deep extra key (the schema keeps unknown keys and measures
  // the whole heartbeat as JSON), and the probe echo (which serialises what it got): 400, not 500
  const hb = {
    uptime_s: 1,
    http_proxy_healthy: true,
    api_healthy: true,
    dns_resolve_ok: true,
    overall_healthy: true,
    tcp_listeners: [],
    wg_handshake_age_s: null,
    route_reachability: [],
    hostname: 'deep-gw',
    config_hash: null,
    telemetry: {
      gateway_version: '0.1.0',
      node_version: 'v20.0.0',
      wg_tools_version: 'wireguard-tools v1.0.20210914',
      cpu_cores: 4,
      cpu_load_avg: [0.1, 0.2, 0.3],
      mem_total: 8e9,
      mem_free: 4e9,
      mem_used: 4e9,
      disk: { total: 1e11, free: 5e10, used: 5e10 },
      os_platform: 'linux',
      os_release: '6.1.0',
      arch: 'x64',
      dns_resolvers: ['192.168.1.1'],
      default_gateway_ip: '192.168.1.1',
    },
  };
  const plain = await raw('POST', '/api/v1/gateway/heartbeat', { ...gateway, 'content-type': 'application/json' }, Buffer.from(JSON.stringify(hb)));
  const deepHb = await raw(
    'POST',
    '/api/v1/gateway/heartbeat',
    { ...gateway, 'content-type': 'application/json' },
    Buffer.from(JSON.stringify(hb).slice(0, -1) + `,"extra":${nested(100_000)}}`),
  );
  assert.equal(plain.status, 200, plain.body);
  assert.equal(
    deepHb.status,
    400,
    `deep heartbeat: ${deepHb.status} ${deepHb.body} (the same heartbeat without it: ${plain.status} ${plain.body.slice(0, 200)})`,
  );
  const probe = await raw('POST', '/api/v1/gateway/probe', { ...gateway, 'content-type': 'application/json' }, Buffer.from(`{"echo":${nested(100_000)}}`));
  assert.equal(probe.status, 400, probe.body);
  recordFigure({ test: CASE, figure: 'longest answer to 200 KB of nested JSON (any endpoint)', value: `${Math.round(longest)} ms` });
});

test('invalid UTF-8 in a body is a 400 on every endpoint; in a query or a path it is never a 500', async () => {
  const tags = async () => (await s.req('/api/v1/tags', { headers: admin })).data.tags.map((t: { name: string }) => t.name) as string[];
  const before = await tags();
  const bad = [Buffer.from([0xff]), Buffer.from([0xc3, 0x28]), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from([0xf0, 0x90, 0x80]), Buffer.from([0xe2, 0x82])];
  const wrong: string[] = [];
  for (const { label, path, headers, e } of bodyEndpoints()) {
    for (const b of bad) {
      const body = Buffer.concat([Buffer.from('{"name":"utf8-'), b, Buffer.from('x"}')]);
      const r = await raw(e.method, path, { ...headers, 'content-type': 'application/json' }, body);
      if ((r.status !== 400 || !/UTF-8/.test(json(r.body)?.error ?? '')) && !gated(r))
        wrong.push(`${label} with bytes ${b.toString('hex')}: ${r.status} ${r.body.slice(0, 120)}`);
    }
    const form = Buffer.concat([Buffer.from('name=utf8-'), bad[0]]);
    const f = await raw(e.method, path, { ...headers, 'content-type': 'application/x-www-form-urlencoded' }, form);
    if ((f.status !== 400 || !/UTF-8/.test(json(f.body)?.error ?? '')) && !gated(f))
      wrong.push(`${label} form with a raw 0xff: ${f.status} ${f.body.slice(0, 120)}`);
  }
  assert.deepEqual(wrong, []);
  // well-formed UTF-8 is fine
  const good = await s.req('/api/v1/tags', { method: 'POST', headers: admin, json: { name: 'ünïcødé-名前' } });
  assert.equal(good.status, 201, JSON.stringify(good.data));
  const after = await tags();
  assert.deepEqual(
    after.filter((n) => !before.includes(n)),
    ['ünïcødé-名前'],
  );
  assert.ok(!after.some((n) => n.includes('\uFFFD')), 'nothing stored with replacement characters');
  // queries and path parameters
  for (const p of [
    '/api/v1/logs/activity?search=%FF%FE',
    '/api/v1/peers?search=%C3%28',
    '/api/v1/tags/%FF',
    '/api/v1/peers/%FF',
    '/api/v1/routes?search=%ED%A0%80',
  ]) {
    const r = await raw('GET', p, admin);
    assert.ok(r.status < 500, `${p}: ${r.status} ${r.body.slice(0, 200)}`);
  }
  const put = await raw('PUT', '/api/v1/tags/%FF%FE', { ...admin, 'content-type': 'application/json' }, Buffer.from('{"name":"renamed"}'));
  assert.ok(put.status < 500 && put.status !== 200, `PUT /tags/%FF%FE: ${put.status}`);
});
