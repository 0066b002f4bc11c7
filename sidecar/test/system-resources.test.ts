// GET /api/v1/system/resources in the API's shape with the host's real figures, and
// GET /api/v1/dashboard/traffic and /stats against the response schemas the OpenAPI document declares.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import { z } from 'zod';
import { startTestServer, apiToken, bearer, login, type TestServer } from './lib/server.js';
import { formatUptime } from '../src/metrics/resources.js';
import { addSamples } from '../src/peers/traffic.js';
import { jsonBodySchema } from './lib/openapi.js';

let s: TestServer;
let full: string;
let doc: unknown;
before(async () => {
  s = await startTestServer({ GATEHOUSE_RATE_LIMIT_ADMIN: '100000' });
  full = await apiToken(s);
  doc = (await s.req('/api/v1/openapi.json', { headers: bearer(full) })).data;
});
after(async () => s.close());

function matchesDocument(p: string, res: { status: number; data: unknown }): void {
  const schema = jsonBodySchema(doc, p, 'get', 200);
  assert.ok(schema && !schema.$ref, `GET ${p} declares its own success body`);
  const r = z.fromJSONSchema(schema).safeParse(res.data);
  assert.ok(r.success, `GET ${p}: ${JSON.stringify(r.error?.issues)}`);
}

test('system/resources: exactly the API fields, figures of this host', async () => {
  const r = await s.req('/api/v1/system/resources', { headers: bearer(full) });
  assert.equal(r.status, 200, JSON.stringify(r.data));
  const d = r.data;
  assert.deepEqual(Object.keys(d).sort(), ['cpu', 'disk', 'gatehouse_uptime', 'memory', 'ok', 'uptime']);
  assert.deepEqual(Object.keys(d.cpu).sort(), ['cores', 'model', 'percent']);
  assert.deepEqual(Object.keys(d.memory).sort(), ['percent', 'total', 'used']);
  assert.deepEqual(Object.keys(d.uptime).sort(), ['bootTime', 'days', 'formatted', 'hours', 'minutes', 'seconds']);
  assert.deepEqual(Object.keys(d.gatehouse_uptime).sort(), ['days', 'formatted', 'hours', 'minutes', 'seconds', 'startTime']);
  assert.deepEqual(Object.keys(d.disk).sort(), ['available', 'free', 'reserved', 'total', 'used']);
  matchesDocument('/api/v1/system/resources', r);
  assert.equal(d.cpu.cores, os.cpus().length);
  assert.equal(d.cpu.model, os.cpus()[0].model.trim());
  assert.ok(d.cpu.percent >= 0 && d.cpu.percent <= 100);
  assert.equal(d.memory.total, os.totalmem());
  assert.ok(d.memory.used > 0 && d.memory.used < d.memory.total);
  assert.ok(Math.abs(d.memory.percent - (d.memory.used / d.memory.total) * 100) <= 0.1);
  assert.ok(Math.abs(d.uptime.seconds - os.uptime()) < 5);
  assert.ok(Math.abs(Date.parse(d.uptime.bootTime) - (Date.now() - os.uptime() * 1000)) < 5000);
  assert.equal(d.uptime.days * 86400 + d.uptime.hours * 3600 + d.uptime.minutes * 60 <= d.uptime.seconds, true);
  const st = fs.statfsSync(s.dataDir);
  assert.equal(d.disk.total, st.blocks * st.bsize);
  assert.ok(Math.abs(d.disk.free - st.bavail * st.bsize) < 64 * 1024 * 1024);
  assert.ok(d.disk.used > 0 && d.disk.used + d.disk.free <= d.disk.total);
  // the three parts add up to the size: what is not used and not available is reserved (for root)
  assert.equal(d.disk.free, d.disk.available);
  assert.equal(d.disk.used + d.disk.available + d.disk.reserved, d.disk.total);
  assert.ok(d.disk.reserved >= 0);
  assert.ok(Math.abs(d.disk.reserved - (st.bfree - st.bavail) * st.bsize) < 64 * 1024 * 1024);
  // Gatehouse's own uptime is the sidecar process's (this test process), not the host's
  assert.ok(Math.abs(d.gatehouse_uptime.seconds - process.uptime()) < 5, `${d.gatehouse_uptime.seconds} vs ${process.uptime()}`);
  assert.ok(d.gatehouse_uptime.seconds <= d.uptime.seconds);
  assert.ok(Math.abs(Date.parse(d.gatehouse_uptime.startTime) - (Date.now() - process.uptime() * 1000)) < 5000);
  assert.equal(r.headers.get('cache-control'), 'no-store');
});

test('system/resources: the CPU share follows real load between two calls', async () => {
  await s.req('/api/v1/system/resources', { headers: bearer(full) });
  const until = performance.now() + 400;
  while (performance.now() < until) Math.sqrt(Math.random());
  const busy = await s.req('/api/v1/system/resources', { headers: bearer(full) });
  // one of the cores was busy all the time: at least a good part of 1/cores
  assert.ok(busy.data.cpu.percent >= (100 / os.cpus().length) * 0.5, `cpu ${busy.data.cpu.percent}%`);
});

test('formatUptime', () => {
  assert.deepEqual(formatUptime(59), { days: 0, hours: 0, minutes: 0, formatted: '0m' });
  assert.deepEqual(formatUptime(3 * 3600 + 125), { days: 0, hours: 3, minutes: 2, formatted: '3h 2m' });
  assert.deepEqual(formatUptime(2 * 86400 + 4 * 3600 + 12 * 60 + 7), { days: 2, hours: 4, minutes: 12, formatted: '2d 4h 12m' });
});

test('system/resources: scope system, read-only, full-access and a session read it; other scopes 403; anonymous 401', async () => {
  assert.equal((await s.req('/api/v1/system/resources')).status, 401);
  for (const sc of ['system', 'read-only'])
    assert.equal((await s.req('/api/v1/system/resources', { headers: bearer(await apiToken(s, [sc])) })).status, 200, sc);
  for (const sc of ['peers', 'logs']) assert.equal((await s.req('/api/v1/system/resources', { headers: bearer(await apiToken(s, [sc])) })).status, 403, sc);
  const session = await login(s);
  assert.equal((await s.req('/api/v1/system/resources', { headers: { cookie: session.cookie } })).status, 200);
});

test('dashboard/traffic: one point per step for each period, traffic in its bucket, totals; bad period 400 with fields; stats and traffic match their declared schemas', async () => {
  const p = await s.req('/api/v1/peers', { method: 'POST', json: { name: 'traffic-peer' }, headers: bearer(full) });
  assert.equal(p.status, 201);
  const now = s.deps.clock();
  await addSamples(s.deps.db.sequelize, [{ peerId: p.data.peer.id, rx: 1000, tx: 3000 }], now);
  for (const [period, n, step] of [
    ['1h', 12, 300_000],
    ['24h', 24, 3_600_000],
    ['7d', 28, 21_600_000],
  ] as const) {
    const r = await s.req(`/api/v1/dashboard/traffic?period=${period}`, { headers: bearer(full) });
    assert.equal(r.status, 200, JSON.stringify(r.data));
    matchesDocument('/api/v1/dashboard/traffic', r);
    assert.equal(r.data.period, period);
    assert.equal(r.data.step_ms, step);
    assert.equal(r.data.points.length, n);
    assert.equal(r.data.to - r.data.from, n * step);
    for (let i = 1; i < n; i++) assert.equal(r.data.points[i].timestamp - r.data.points[i - 1].timestamp, step);
    const last = r.data.points.at(-1);
    assert.ok(last!.timestamp <= now && now < last!.timestamp + step);
    assert.deepEqual([last!.rx, last!.tx], [1000, 3000]);
    assert.deepEqual([r.data.total_rx, r.data.total_tx], [1000, 3000]);
  }
  const dflt = await s.req('/api/v1/dashboard/traffic', { headers: bearer(full) });
  assert.equal(dflt.data.period, '24h');
  const bad = await s.req('/api/v1/dashboard/traffic?period=30d', { headers: bearer(full) });
  assert.equal(bad.status, 400);
  assert.ok(bad.data.fields!.period);
  const stats = await s.req('/api/v1/dashboard/stats', { headers: bearer(full) });
  assert.equal(stats.status, 200);
  matchesDocument('/api/v1/dashboard/stats', stats);
});
