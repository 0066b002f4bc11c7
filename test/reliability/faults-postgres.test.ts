// Faults, nothing lost: PostgreSQL restarted under load (DATABASE_URL).
// The sidecar runs as its own process (sidecar/src/main.ts) on a PostgreSQL cluster of the test's
// own (test/reliability/lib/faults-harness.ts PgCluster: initdb in a temporary directory, so the
// shared cluster of scripts/pg-test-server.sh is never touched). Six request loops (three writing
// peers and routes, three reading) run while the cluster is stopped (pg_ctl -m fast: every
// connection cut), left down for 3 s and started again. Targets:
// - while it is down the sidecar answers 503 with the standard error body (no 500, no crash), and
//   no request hangs (the longest answer is stated; target under 3 s);
// - it reconnects by itself once PostgreSQL is back (time to the first acknowledged write stated);
// - every write that was acknowledged (2xx) is in the database afterwards.
//   bash scripts/test-reliability.sh test/reliability/faults-postgres.test.ts
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { freePort } from '../lib/ports.js';
import { recordFigure } from './lib/figures.js';
import { PgCluster, processToken, SidecarProcess } from './lib/faults-harness.js';
import { at } from '../lib/json.js';

const CASE = 'PostgreSQL restarted under load';
const ADMIN = { username: 'admin', password: 'faults-pg-pass-1' };

interface Done {
  kind: 'write' | 'read';
  name?: string;
  status: number | null;
  error: string | null;
  start: number;
  end: number;
}

test(
  'PostgreSQL restarted under load: 503 while it is down (no crash, no hang), reconnects, no acknowledged write lost',
  { skip: PgCluster.available() ? false : 'needs root and PostgreSQL', timeout: 180_000 },
  async (t) => {
    const cluster = new PgCluster(await freePort());
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-faults-pg-'));
    const sp = new SidecarProcess({
      GATEHOUSE_DATA_DIR: dataDir,
      GATEHOUSE_PORT: String(await freePort()),
      GATEHOUSE_ADMIN_USER: ADMIN.username,
      GATEHOUSE_ADMIN_PASSWORD: ADMIN.password,
      GATEHOUSE_MANAGE_CADDY: 'false',
      GATEHOUSE_WG_MANAGE: 'false',
      GATEHOUSE_RATE_LIMIT_ADMIN: '1000000',
      DATABASE_URL: cluster.url,
    });
    t.after(async () => {
      await sp.stop().catch(() => undefined);
      cluster.destroy();
      fs.rmSync(dataDir, { recursive: true, force: true });
    });
    cluster.init();
    await sp.start();
    await sp.ready();
    const h = { authorization: `Bearer ${await processToken(sp, ADMIN)}` };
    const peer = await sp.req('/api/v1/peers', { method: 'POST', json: { name: 'pg-base' }, headers: h });
    assert.equal(peer.status, 201, JSON.stringify(peer.data));

    const done: Done[] = [];
    let running = true;
    let seq = 0;
    const call = async (kind: Done['kind'], p: string, method: string, json?: unknown, name?: string) => {
      const start = Date.now();
      let status: number | null = null;
      let error: string | null = null;
      try {
        const r = await sp.req(p, { method, json, headers: h, timeoutMs: 15_000 });
        status = r.status;
        const said = at(r.data, 'error');
        error = said === undefined || said === null ? null : String(said);
        if (status >= 300 && !(at(r.data, 'ok') === false && typeof said === 'string'))
          error = `not the standard error body: ${JSON.stringify(r.data).slice(0, 200)}`;
      } catch (e) {
        error = (e as Error).name === 'TimeoutError' ? 'timeout' : String((e as Error).message);
      }
      done.push({ kind, name, status, error, start, end: Date.now() });
      if (status === null || status >= 500) await new Promise((r) => setTimeout(r, 20)); // not a condition: a failed call paces the load loop
    };
    const loops = [
      ...[0, 1, 2].map(async (w) => {
        while (running) {
          const n = seq++;
          if (n % 2 === 0 || w === 0) await call('write', '/api/v1/peers', 'POST', { name: `pg-${n}` }, `peer pg-${n}`);
          else
            await call(
              'write',
              '/api/v1/routes',
              'POST',
              { peer_id: peer.data.peer.id, target_port: 8080, domain: `pg-${n}.faults.test` },
              `route pg-${n}.faults.test`,
            );
        }
      }),
      ...[0, 1, 2].map(async () => {
        while (running) await call('read', '/api/v1/peers?limit=5', 'GET');
      }),
    ];
    await new Promise((r) => setTimeout(r, 1500)); // not a condition: load runs a while before the stop
    const stopAt = Date.now();
    await cluster.stopAsync('fast');
    const downAt = Date.now();
    await new Promise((r) => setTimeout(r, 3000)); // not a condition: PostgreSQL stays down 3 s under load
    const startAt = Date.now();
    await cluster.startAsync();
    const upAt = Date.now();
    await new Promise((r) => setTimeout(r, 3000)); // not a condition: load runs 3 s after the restart
    running = false;
    await Promise.all(loops);

    const alive = sp.child.exitCode === null && sp.child.signalCode === null;
    const down = done.filter((d) => d.start >= downAt && d.end <= startAt);
    const overlapping = done.filter((d) => d.end >= stopAt && d.start <= upAt);
    const longest = Math.max(...overlapping.map((d) => d.end - d.start));
    const statuses = (xs: Done[]) =>
      Object.entries(xs.reduce<Record<string, number>>((m, d) => ((m[d.status ?? d.error ?? '?'] = (m[d.status ?? d.error ?? '?'] ?? 0) + 1), m), {}))
        .map(([k, v]) => `${k}×${v}`)
        .join(' ');
    const firstWriteBack = done.filter((d) => d.kind === 'write' && d.start >= upAt && d.status !== null && d.status < 300).sort((a, b) => a.end - b.end)[0];
    const reconnect = firstWriteBack ? firstWriteBack.end - upAt : Infinity;
    const bad = done.filter((d) => d.status === null || (d.status >= 500 && d.status !== 503) || (d.status >= 300 && d.error?.startsWith('not the standard')));
    t.diagnostic(
      `stop took ${downAt - stopAt} ms, start ${upAt - startAt} ms; while down: ${statuses(down)}; around the restart: ${statuses(overlapping)}; longest ${longest} ms; first write acknowledged ${reconnect} ms after PostgreSQL was back; ${done.length} requests in all`,
    );
    const slow = [...overlapping].sort((a, b) => b.end - b.start - (a.end - a.start)).slice(0, 3);
    t.diagnostic(`slowest: ${slow.map((d) => `${d.kind} ${d.status ?? d.error} ${d.end - d.start} ms from ${d.start - stopAt} ms after the stop`).join('; ')}`);
    t.diagnostic(`a 503 body: ${JSON.stringify(down.find((d) => d.status === 503)?.error)}`);

    // every acknowledged write is in the database
    const client = new pg.Client({ connectionString: cluster.url });
    await client.connect();
    const peers = new Set((await client.query('SELECT name FROM peers')).rows.map((r) => `peer ${r.name}`));
    const routes = new Set((await client.query('SELECT domain FROM routes')).rows.map((r) => `route ${r.domain}`));
    await client.end();
    const acked = done.filter((d) => d.kind === 'write' && d.status !== null && d.status < 300).map((d) => d.name!);
    const lost = acked.filter((n) => !peers.has(n) && !routes.has(n));

    recordFigure({
      test: CASE,
      figure: 'answers while PostgreSQL is down',
      value: statuses(down),
      target: 'all 503',
      ok: down.length > 0 && down.every((d) => d.status === 503),
    });
    recordFigure({ test: CASE, figure: 'longest request around the restart', value: `${longest} ms`, target: '< 3000 ms', ok: longest < 3000 });
    recordFigure({ test: CASE, figure: 'first acknowledged write after PostgreSQL is back', value: `${reconnect} ms` });
    recordFigure({ test: CASE, figure: 'acknowledged writes lost', value: `${lost.length} of ${acked.length}`, target: '0', ok: lost.length === 0 });
    recordFigure({ test: CASE, figure: 'sidecar crashed', value: alive ? 'no' : 'yes', target: 'no', ok: alive });

    assert.ok(alive, `the sidecar is still running: ${sp.output.slice(-3000)}`);
    assert.ok(down.length > 0);
    assert.deepEqual(bad.map((d) => `${d.status ?? d.error} ${d.error ?? ''}`).slice(0, 5), [], 'no 500, no failed connection, the standard error body');
    assert.ok(
      down.every((d) => d.status === 503),
      `503 while PostgreSQL is down: ${statuses(down)}`,
    );
    assert.ok(longest < 3000, `no request hangs (longest ${longest} ms)`);
    assert.ok(Number.isFinite(reconnect), 'writes are acknowledged again after the restart');
    assert.deepEqual(lost, [], 'no acknowledged write lost');
  },
);
