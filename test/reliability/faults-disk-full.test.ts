// Faults, nothing lost: the data directory's disk full.
// The test makes a small ext4 filesystem in a file (mkfs.ext4, no blocks reserved for root),
// loop-mounts it and runs the sidecar (SQLite, WAL) with its data directory on it. It fills the
// disk to the last block, then writes through the API (peers, routes, settings). Targets:
// - writes fail with a clear error: 507 Insufficient Storage and the standard body
//   {ok:false, error:"...disk...full..."}, no 500, no hang (the longest answer is stated);
// - the database is not corrupted: PRAGMA integrity_check says ok, and every write that was
//   acknowledged (2xx) is there, none that was refused;
// - once space is freed the service works again without a restart (writes succeed).
//   bash scripts/test-reliability.sh test/reliability/faults-disk-full.test.ts
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTestServer, apiToken, bearer, type TestServer, apiCall } from '../../sidecar/test/lib/server.js';
import { which } from '../lib/netns.js';
import { recordFigure } from './lib/figures.js';
import type { Peer, Route } from '../../sidecar/test/lib/protocol.js';

const CASE = 'data directory disk full';
const reason =
  process.getuid?.() !== 0
    ? 'needs root (mount)'
    : !which('mkfs.ext4')
      ? 'no mkfs.ext4 (e2fsprogs)'
      : process.env.TEST_DATABASE_URL
        ? 'SQLite only (the database file is in the data directory)'
        : null;

/** Fills the filesystem of dir until ENOSPC; returns the filler's path. */
function fill(dir: string): string {
  const file = path.join(dir, 'filler');
  const fd = fs.openSync(file, 'a');
  const chunk = Buffer.alloc(64 * 1024, 1);
  try {
    for (;;) fs.writeSync(fd, chunk);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOSPC') throw e;
  }
  // the last few bytes of the last block
  try {
    for (;;) fs.writeSync(fd, chunk, 0, 512);
  } catch {
    /* full */
  }
  fs.closeSync(fd);
  return file;
}

test(
  'data directory disk full: writes fail with 507 and a clear error, the database stays intact, the service works again once space is freed',
  { skip: reason ?? false, timeout: 120_000 },
  async (t) => {
    const base = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-diskfull-'));
    const img = path.join(base, 'fs.img');
    const mnt = path.join(base, 'mnt');
    fs.mkdirSync(mnt);
    const state: { s?: TestServer; mounted?: boolean } = {};
    t.after(async () => {
      await state.s?.close().catch(() => undefined);
      if (state.mounted) execFileSync('umount', ['-l', mnt]);
      fs.rmSync(base, { recursive: true, force: true });
    });
    execFileSync('truncate', ['-s', '24M', img]);
    execFileSync('mkfs.ext4', ['-q', '-F', '-m', '0', img]);
    execFileSync('mount', ['-o', 'loop', img, mnt]);
    state.mounted = true;
    const dataDir = path.join(mnt, 'data');
    const s = (state.s = await startTestServer({ GATEHOUSE_DATA_DIR: dataDir }));
    const h = bearer(await apiToken(s));
    const api = apiCall(
      () => s,
      () => h,
    );
    const first = await api('/peers', 'POST', { name: 'before-full' });
    assert.equal(first.status, 201, JSON.stringify(first.data));
    const peerId = first.data.peer.id;

    const filler = fill(mnt);
    const free = Number(execFileSync('stat', ['-f', '-c', '%a', mnt], { encoding: 'utf8' }).trim());
    assert.equal(free, 0, 'no free block left');

    // Writes of every kind, until some fail (small ones may still fit in pages SQLite already has).
    const acked: string[] = [];
    const refused: { what: string; status: number; error: string | undefined; ms: number }[] = [];
    let slowest = 0;
    for (let i = 0; i < 60 && refused.length < 10; i++) {
      const t0 = performance.now();
      const what = i % 3 === 0 ? `peer full-${i}` : i % 3 === 1 ? `route full-${i}.disk.test` : `lockout ${3 + (i % 7)}`;
      const r =
        i % 3 === 0
          ? await api('/peers', 'POST', { name: `full-${i}`, description: 'x'.repeat(200) })
          : i % 3 === 1
            ? await api('/routes', 'POST', { peer_id: peerId, target_port: 8080, domain: `full-${i}.disk.test` })
            : await api('/settings/security', 'PUT', { lockout: { max_attempts: 3 + (i % 7) } });
      const ms = performance.now() - t0;
      slowest = Math.max(slowest, ms);
      if (r.status < 300) acked.push(what);
      else refused.push({ what, status: r.status, error: r.data?.error, ms });
    }
    t.diagnostic(
      `disk full: ${acked.length} writes acknowledged, ${refused.length} refused; first refusal ${JSON.stringify(refused[0])}; slowest answer ${slowest.toFixed(0)} ms`,
    );
    assert.ok(refused.length > 0, 'writes fail on a full disk');
    for (const r of refused) {
      assert.equal(r.status, 507, `${r.what}: ${r.status} ${r.error}`);
      assert.match(r.error!, /disk.*full|no space/i, `${r.what}: a clear error`);
    }
    // reads still answer
    const list = await api('/peers?limit=200');
    assert.equal(list.status, 200, JSON.stringify(list.data));

    fs.rmSync(filler);
    const integrity = ((await s.deps.db.sequelize.query('PRAGMA integrity_check', { plain: true })) as { integrity_check?: string } | null)?.integrity_check;
    const again = await api('/peers', 'POST', { name: 'after-freed' });
    const againRoute = await api('/routes', 'POST', { peer_id: peerId, target_port: 8080, domain: 'after-freed.disk.test' });
    const peers: string[] = (await api('/peers?limit=200')).data.peers.map((p: Peer) => p.name);
    const routes: string[] = (await api('/routes?limit=200')).data.routes.map((r: Route) => r.domain);
    const lockout = (await api('/settings/security')).data;
    t.diagnostic(`after freeing: integrity ${integrity}; POST /peers ${again.status}, POST /routes ${againRoute.status}; lockout ${JSON.stringify(lockout)}`);

    recordFigure({
      test: CASE,
      figure: 'answer to a write on the full disk',
      value: `${refused[0].status} "${refused[0].error}"`,
      target: '507, clear error',
      ok: refused.every((r) => r.status === 507),
    });
    recordFigure({ test: CASE, figure: 'slowest answer while full', value: `${slowest.toFixed(0)} ms`, target: '< 2000 ms', ok: slowest < 2000 });
    recordFigure({ test: CASE, figure: 'integrity_check after freeing', value: String(integrity), target: 'ok', ok: integrity === 'ok' });
    recordFigure({
      test: CASE,
      figure: 'writes after freeing space',
      value: `${again.status}, ${againRoute.status}`,
      target: '201',
      ok: again.status === 201 && againRoute.status === 201,
    });

    assert.ok(slowest < 2000, `no write hangs (slowest ${slowest.toFixed(0)} ms)`);
    assert.equal(integrity, 'ok');
    assert.equal(again.status, 201, JSON.stringify(again.data));
    assert.equal(againRoute.status, 201, JSON.stringify(againRoute.data));
    for (const a of acked) {
      if (a.startsWith('peer ')) assert.ok(peers.includes(a.slice(5)), `acknowledged ${a} present`);
      if (a.startsWith('route ')) assert.ok(routes.includes(a.slice(6)), `acknowledged ${a} present`);
    }
    for (const r of refused) {
      if (r.what.startsWith('peer ')) assert.ok(!peers.includes(r.what.slice(5)), `refused ${r.what} absent`);
      if (r.what.startsWith('route ')) assert.ok(!routes.includes(r.what.slice(6)), `refused ${r.what} absent`);
    }
  },
);
