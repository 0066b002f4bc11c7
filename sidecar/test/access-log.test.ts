// Access-log ingestion from Caddy's JSON access log: rotation, partial lines, truncation, exactly
// once across a "restart" (a new service instance on the same database), bounded table, API,
// export, clear, and the per-route trace.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startTestServer, apiToken, bearer, login, type TestServer, apiCall } from './lib/server.js';
import { AccessLogService, parseLine } from '../src/resilience/access-log.js';
import { accessLogFile } from '../src/proxy/fragments/access-log.js';
import type { AccessEntry, TraceRequest } from './lib/protocol.js';

let s: TestServer;
let auth: Record<string, string>;
let routeId: number;
let file: string;
const call = apiCall(
  () => s,
  () => auth,
);
const svc = () => s.deps.accessLog as AccessLogService;
const count = async () =>
  s.deps.db.models.Route.sequelize!.query('SELECT COUNT(*) AS n FROM access_log', { plain: true }).then((r) => Number((r as { n: number | string } | null)!.n));

let seq = 0;
function line(host: string, status = 200, uri = `/p/${++seq}`): string {
  return (
    JSON.stringify({
      level: 'info',
      ts: 1764000000.5 + seq,
      logger: 'http.log.access.gatehouse',
      msg: 'handled request',
      request: {
        remote_ip: '127.0.0.1',
        client_ip: '192.0.2.7',
        proto: 'HTTP/1.1',
        method: 'GET',
        host: `${host}:80`,
        uri,
        headers: { 'User-Agent': ['test-agent'] },
      },
      bytes_read: 0,
      duration: 0.0123456,
      size: 42,
      status,
    }) + '\n'
  );
}

before(async () => {
  s = await startTestServer({ GATEHOUSE_RATE_LIMIT_ADMIN: '100000' });
  auth = bearer(await apiToken(s));
  const p = await call('/peers', 'POST', { name: 'web' });
  const r = await call('/routes', 'POST', { domain: 'logged.example.com', peer_id: p.data.peer.id, target_port: 8080, debug_enabled: true });
  assert.equal(r.status, 201, JSON.stringify(r.data));
  routeId = r.data.route.id;
  file = accessLogFile(s.dataDir);
});
after(async () => s.close());

test('parseLine: Caddy access-log fields; host → route, wildcard, non-access lines ignored', () => {
  const hosts = new Map([
    ['a.example.com', { id: 1, upstream: '10.8.0.2:80' }],
    ['*.w.example.com', { id: 2, upstream: null }],
  ]);
  const r = parseLine(line('A.example.com'), hosts)!;
  assert.equal(r.route_id, 1);
  assert.equal(r.host, 'a.example.com');
  assert.equal(r.upstream, '10.8.0.2:80');
  assert.equal(r.client_ip, '192.0.2.7');
  assert.equal(r.duration_ms, 12.346);
  assert.equal(r.user_agent, 'test-agent');
  assert.equal(parseLine(line('x.w.example.com'), hosts)!.route_id, 2);
  assert.equal(parseLine(line('other.example.com'), hosts)!.route_id, null);
  assert.equal(parseLine('{"level":"info","msg":"serving"}', hosts), null);
  assert.equal(parseLine('not json', hosts), null);
});

test('tail: partial lines wait, rotation finishes the old file, a restart neither loses nor repeats lines, truncation', async () => {
  fs.writeFileSync(file, line('logged.example.com') + line('logged.example.com') + '{"partial":');
  assert.equal(await svc().poll(), 2);
  assert.equal(await svc().poll(), 0);
  // Complete the partial line (not an access entry: skipped), add one, rotate like Caddy's writer
  // (rename, new file) and write two lines to the new file.
  fs.appendFileSync(file, '"x"}\n' + line('logged.example.com'));
  fs.renameSync(file, path.join(path.dirname(file), 'access-2026-01-01T00-00-00.000.log'));
  fs.writeFileSync(file, line('logged.example.com') + line('logged.example.com'));
  // "Restart": a new service instance on the same database and file.
  const again = new AccessLogService({ db: s.deps.db, clock: s.deps.clock, log: s.deps.log, scheduler: s.deps.scheduler, file });
  assert.equal(await count(), 2);
  assert.equal(await again.poll(), 3);
  assert.equal(await again.poll(), 0);
  assert.equal(await svc().poll(), 0);
  const total = await count();
  assert.equal(total, 5);
  // Truncated file: read again from 0.
  fs.writeFileSync(file, line('logged.example.com'));
  assert.equal(await again.poll(), 1);
  assert.equal(await count(), total + 1);
});

test('exactly the lines written, each once: 50 lines over two rotations and three instances', async () => {
  await svc().clear();
  let written = 0;
  const write = (n: number) => {
    for (let i = 0; i < n; i++) fs.appendFileSync(file, line('logged.example.com'));
    written += n;
  };
  const inst = () => new AccessLogService({ db: s.deps.db, clock: s.deps.clock, log: s.deps.log, scheduler: s.deps.scheduler, file });
  // The cursor is at the end of the current file: only new lines count.
  await svc().poll();
  await svc().clear();
  write(10);
  await inst().poll();
  write(10);
  fs.renameSync(file, path.join(path.dirname(file), 'access-2026-01-02T00-00-00.000.log'));
  write(10);
  await inst().poll();
  write(10);
  fs.renameSync(file, path.join(path.dirname(file), 'access-2026-01-03T00-00-00.000.log'));
  write(10);
  await inst().poll();
  assert.equal(await count(), written);
  const uris = (await call('/logs/access?limit=1000')).data.entries.map((e: AccessEntry) => e.uri);
  assert.equal(new Set(uris).size, written);
  // A crash after the rows were stored but before the cursor moved: the lines are read again and
  // not stored twice.
  await s.deps.db.sequelize.query('UPDATE access_log_cursor SET file_offset = 0');
  assert.equal(await inst().poll(), 0);
  assert.equal(await count(), written);
});

test('bounded table keeps the newest rows', async () => {
  const small = new AccessLogService({ db: s.deps.db, clock: s.deps.clock, log: s.deps.log, scheduler: s.deps.scheduler, file, maxRows: 5 });
  for (let i = 0; i < 12; i++) fs.appendFileSync(file, line('logged.example.com'));
  await small.poll();
  assert.ok((await count()) <= 5);
  const last = `/p/${seq}`;
  assert.equal((await call('/logs/access?limit=1')).data.entries[0].uri, last);
});

test('API: list with paging, CSV/JSON export, trace of the route, clear-logs; bad query 400', async () => {
  fs.appendFileSync(file, line('logged.example.com', 201, '/traced') + line('other.example.com'));
  const l = await call('/logs/access?limit=2&offset=0');
  assert.equal(l.status, 200);
  assert.equal(l.data.entries.length, 2);
  assert.equal(typeof l.data.total, 'number');
  assert.equal(l.data.entries[1].uri, '/traced');
  assert.equal(l.data.entries[1].route_id, routeId);
  assert.match(l.data.entries[1].time, /^\d{4}-/);
  assert.equal((await call('/logs/access?limit=0')).status, 400);
  const csv = await s.req<string>('/api/v1/logs/access/export?format=csv', { headers: auth });
  assert.equal(csv.status, 200);
  assert.match(String(csv.headers.get('content-type')), /text\/csv/);
  assert.match(csv.data, /^time,id,ts,route_id,host,method,uri,status/);
  assert.match(csv.data, /\/traced/);
  assert.equal((await s.req('/api/v1/logs/access/export?format=xml', { headers: auth })).status, 400);
  const t = await call(`/routes/${routeId}/trace`);
  assert.equal(t.status, 200);
  assert.equal(t.data.limit, 100);
  assert.equal(t.data.debug_enabled, true);
  assert.deepEqual(Object.keys(t.data.requests[0]).slice(0, 7), ['time', 'method', 'uri', 'status', 'duration_ms', 'upstream', 'client_ip']);
  assert.equal(t.data.requests[0].uri, '/traced');
  assert.equal(t.data.requests[0].status, 201);
  assert.match(t.data.requests[0].upstream!, /:8080$/);
  assert.ok(t.data.requests.every((r: TraceRequest) => r.host === 'logged.example.com'));
  assert.equal((await call('/routes/987654/trace')).status, 404);
  const session = await login(s);
  const c = await s.req('/api/v1/settings/clear-logs', { method: 'POST', headers: { cookie: session.cookie, 'x-csrf-token': session.csrf }, json: {} });
  assert.equal(c.status, 200, JSON.stringify(c.data));
  assert.ok(c.data.cleared.access >= 2);
  assert.equal(await count(), 0);
});

test('API filters: host, status, method, route_id, client_ip, since/until narrow the list, its total and the export; bad values 400 with fields', async () => {
  const session = await login(s);
  await s.req('/api/v1/settings/clear-logs', { method: 'POST', headers: { cookie: session.cookie, 'x-csrf-token': session.csrf }, json: {} });
  // one second apart (line() advances the clock only for its default uri)
  const spaced = (host: string, status: number, uri: string) => {
    seq++;
    return line(host, status, uri);
  };
  fs.appendFileSync(
    file,
    spaced('logged.example.com', 200, '/ok-1') +
      spaced('logged.example.com', 404, '/missing') +
      spaced('other.example.com', 404, '/other') +
      spaced('logged.example.com', 200, '/ok-2'),
  );
  const all = (await call('/logs/access?limit=100')).data;
  assert.equal(all.total, 4);
  const uris = async (q: string) => {
    const r = await call(`/logs/access?limit=100&${q}`);
    assert.equal(r.status, 200, JSON.stringify(r.data));
    assert.equal(r.data.total, r.data.entries.length, 'total counts the filtered rows');
    return r.data.entries.map((e: AccessEntry) => e.uri).sort();
  };
  assert.deepEqual(await uris('host=Logged.Example.com'), ['/missing', '/ok-1', '/ok-2']);
  assert.deepEqual(await uris('status=404'), ['/missing', '/other']);
  assert.deepEqual(await uris('status=404&host=other.example.com'), ['/other']);
  assert.deepEqual(await uris(`route_id=${routeId}&status=200`), ['/ok-1', '/ok-2']);
  assert.deepEqual(await uris('method=get&client_ip=192.0.2.7'), ['/missing', '/ok-1', '/ok-2', '/other']);
  assert.deepEqual(await uris('method=POST'), []);
  const ts = all.entries.map((e: AccessEntry) => e.ts).sort((a: number, b: number) => a - b);
  assert.deepEqual(await uris(`since=${ts[1]}&until=${ts[2]}`), ['/missing', '/other']);
  const csv = await s.req('/api/v1/logs/access/export?format=csv&status=404', { headers: auth });
  assert.equal(csv.status, 200);
  assert.equal(String(csv.data).trim().split('\n').length, 3, 'header and the two 404 rows');
  for (const [q, field] of [
    ['status=abc', 'status'],
    ['status=99', 'status'],
    ['route_id=-1', 'route_id'],
    ['method=G%20T', 'method'],
    ['since=yesterday', 'since'],
  ]) {
    const r = await call(`/logs/access?${q}`);
    assert.equal(r.status, 400, q);
    assert.equal(r.data.ok, false);
    assert.ok(r.data.fields?.[field], `${q}: ${JSON.stringify(r.data)}`);
  }
});

/** A line with request and response headers, and the route-auth account Caddy's log_append names. */
function fullLine(host: string, uri: string, authUser?: string): string {
  return (
    JSON.stringify({
      level: 'info',
      ts: 1764000000.5 + ++seq,
      logger: 'http.log.access.gatehouse',
      msg: 'handled request',
      request: {
        remote_ip: '127.0.0.1',
        client_ip: '192.0.2.7',
        proto: 'HTTP/1.1',
        method: 'GET',
        host,
        uri,
        headers: { 'User-Agent': ['test-agent'], Accept: ['text/html'], Cookie: ['gh_ra_1=secret-session'], 'X-Debug-Me': ['yes'] },
      },
      bytes_read: 0,
      duration: 0.002,
      size: 42,
      status: 200,
      resp_headers: { 'Content-Type': ['text/html'], 'Set-Cookie': ['backend=secret'], 'X-Backend': ['b1'] },
      ...(authUser ? { auth_user: authUser } : {}),
    }) + '\n'
  );
}

test('debug_enabled: the trace of a debugged route shows request and response headers (credentials redacted); without it, none', async () => {
  const p = await call('/peers', 'POST', { name: 'quiet' });
  const quiet = await call('/routes', 'POST', { domain: 'quiet.example.com', peer_id: p.data.peer.id, target_port: 8080 });
  assert.equal(quiet.status, 201, JSON.stringify(quiet.data));
  fs.appendFileSync(file, fullLine('logged.example.com', '/debugged') + fullLine('quiet.example.com', '/not-debugged'));
  const t = await call(`/routes/${routeId}/trace`);
  const r = t.data.requests.find((x: TraceRequest) => x.uri === '/debugged');
  assert.deepEqual(r!.request_headers!['X-Debug-Me'], ['yes']);
  assert.deepEqual(r!.request_headers!.Accept, ['text/html']);
  assert.deepEqual(r!.request_headers!.Cookie, ['REDACTED'], 'no session cookie in the trace');
  assert.deepEqual(r!.response_headers!['X-Backend'], ['b1']);
  assert.deepEqual(r!.response_headers!['Set-Cookie'], ['REDACTED']);
  const q = await call(`/routes/${quiet.data.route.id}/trace`);
  assert.equal(q.data.debug_enabled, false);
  const qr = q.data.requests.find((x: TraceRequest) => x.uri === '/not-debugged');
  assert.ok(qr);
  assert.equal(qr.request_headers, undefined);
  assert.equal(qr.response_headers, undefined);
  // switching debug off stops recording headers and hides what was recorded
  assert.equal((await call(`/routes/${routeId}`, 'PUT', { debug_enabled: false })).status, 200);
  fs.appendFileSync(file, fullLine('logged.example.com', '/after-debug'));
  const off = await call(`/routes/${routeId}/trace`);
  assert.equal(off.data.debug_enabled, false);
  assert.ok(off.data.requests.every((x: TraceRequest) => x.request_headers === undefined));
  const stored = (await s.deps.db.sequelize.query("SELECT debug FROM access_log WHERE uri = '/after-debug'", { plain: true })) as { debug: string | null };
  assert.equal(stored.debug, null);
  assert.equal((await call(`/routes/${routeId}`, 'PUT', { debug_enabled: true })).status, 200);
  // headers are kept only for the newest 100 requests of the route (what the trace shows)
  let many = '';
  for (let i = 0; i < 130; i++) many += fullLine('logged.example.com', `/burst/${i}`);
  fs.appendFileSync(file, many);
  const burst = await call(`/routes/${routeId}/trace`);
  assert.equal(burst.data.requests.length, 100);
  assert.ok(
    burst.data.requests.every((x: TraceRequest) => x.request_headers),
    'the trace shows headers for all it lists',
  );
  const withHeaders = (await s.deps.db.sequelize.query('SELECT COUNT(*) AS n FROM access_log WHERE route_id = ? AND debug IS NOT NULL', {
    replacements: [routeId],
    plain: true,
  })) as { n: number | string };
  assert.equal(Number(withHeaders.n), 100);
});

test('auth_user: who route auth signed in, from the line into the access log and the trace', async () => {
  fs.appendFileSync(file, fullLine('logged.example.com', '/as-alice', 'alice') + fullLine('logged.example.com', '/anonymous'));
  const t = await call(`/routes/${routeId}/trace`);
  assert.equal(t.data.requests.find((x: TraceRequest) => x.uri === '/as-alice')!.auth_user, 'alice');
  assert.equal(t.data.requests.find((x: TraceRequest) => x.uri === '/anonymous')!.auth_user, null);
  const l = await call('/logs/access?limit=5');
  assert.equal(l.data.entries.find((x: AccessEntry) => x.uri === '/as-alice')!.auth_user, 'alice');
  const csv = await s.req<string>('/api/v1/logs/access/export?format=csv', { headers: auth });
  assert.match(csv.data, /\/as-alice,.*,alice/);
});

test('ingestion resolves routes from the hosts of the batch alone: exact, one-label wildcard, unknown, across more than one lookup chunk', async () => {
  const p = await call('/peers', 'POST', { name: 'wild' });
  const w = await call('/routes', 'POST', { domain: '*.wild.example.com', peer_id: p.data.peer.id, target_port: 9090 });
  assert.equal(w.status, 201, JSON.stringify(w.data));
  // 600 distinct unknown hosts (1,200 candidate names: three lookup chunks) around the known ones
  const unknown = Array.from({ length: 600 }, (_, i) => line(`h${i}.nowhere.example.net`)).join('');
  fs.appendFileSync(
    file,
    unknown + line('logged.example.com', 200, '/exact-hit') + line('a.wild.example.com', 200, '/wild-hit') + line('b.c.wild.example.com', 200, '/too-deep'),
  );
  await svc().poll();
  const find = async (uri: string) => (await call(`/logs/access?limit=1&offset=0&host=${encodeURIComponent(uriHost[uri])}`)).data.entries[0];
  const uriHost: Record<string, string> = { '/exact-hit': 'logged.example.com', '/wild-hit': 'a.wild.example.com', '/too-deep': 'b.c.wild.example.com' };
  const exact = await find('/exact-hit');
  assert.equal(exact.uri, '/exact-hit');
  assert.equal(exact.route_id, routeId);
  assert.match(exact.upstream!, /:8080$/);
  const wild = await find('/wild-hit');
  assert.equal(wild.route_id, w.data.route.id);
  assert.match(wild.upstream!, /:9090$/);
  const deep = await find('/too-deep');
  assert.equal(deep.route_id, null, 'a wildcard covers one label only');
  const other = (await call('/logs/access?limit=1&host=h599.nowhere.example.net')).data.entries[0];
  assert.equal(other.route_id, null);
  assert.equal(other.upstream, null);
});
