// Benchmark: peers at scale. Starts a throwaway sidecar as a child process (SQLite, subnet
// 10.64.0.0/16; as root it manages a throwaway wireguard-go interface, so every create also adds the
// peer through its UAPI socket), creates 1,000 and then 10,000 peers one after another through the HTTP API and
// prints at each size:
//   - POST /api/v1/peers latency p50/p99 for the creates of that step
//   - GET /api/v1/peers?limit=100 latency p50/p99 (first page and last page)
//   - one full reconcile of an interface holding every peer: building the spec from the database
//     (rows + preshared-key decryption), and as root on a second throwaway wireguard-go interface:
//     `up` (create + setconf N peers), `wg syncconf` with nothing to change, and POST /wg/restart of
//     the sidecar's own interface (poll, down, up with N peers)
//   - the sidecar's RSS
//   node --import tsx scripts/bench/peers.ts            (BENCH_SIZES=1000,10000 by default)
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../../sidecar/src/config.js';
import { createDeps } from '../../sidecar/src/app-context.js';
import { featureModels } from '../../sidecar/src/features.js';
import { createLogger } from '../../sidecar/src/util/logger.js';
import { WireGuardService } from '../../sidecar/src/wireguard/service.js';
import { WgDriver } from '@gatehouse/common/wireguard/driver.js';
import { renderServerConfig } from '@gatehouse/common/wireguard/render.js';
import { freePort } from '../../test/lib/ports.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const sizes = (process.env.BENCH_SIZES ?? '1000,10000').split(',').map(Number);
const isRoot = process.env.BENCH_WG !== 'off' && process.getuid?.() === 0 && fs.existsSync('/usr/bin/wireguard-go');
const PASSWORD = 'bench-password-1';

const pct = (xs: number[], p: number) => {
  const a = [...xs].sort((x, y) => x - y);
  return a[Math.min(a.length - 1, Math.floor(p * (a.length - 1)))];
};
const ms = (x: number) => `${x.toFixed(2)} ms`;

function rssOf(pid: number): string {
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? `${(Number(m[1]) / 1024).toFixed(1)} MB` : '?';
}

async function main(): Promise<void> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-bench-peers-'));
  const port = await freePort('tcp');
  const sidecarIface = `ghbs${process.pid % 10000}`;
  const benchIface = `ghbr${process.pid % 10000}`;
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    GATEHOUSE_DATA_DIR: dataDir,
    GATEHOUSE_PORT: String(port),
    GATEHOUSE_BIND: '127.0.0.1',
    GATEHOUSE_ADMIN_USER: 'admin',
    GATEHOUSE_ADMIN_PASSWORD: PASSWORD,
    GATEHOUSE_MANAGE_CADDY: 'false',
    GATEHOUSE_WG_MANAGE: isRoot ? 'true' : 'false',
    GATEHOUSE_WG_INTERFACE: sidecarIface,
    GATEHOUSE_WG_PORT: String(await freePort('udp')),
    GATEHOUSE_WG_SUBNET: '10.64.0.0/16',
    GATEHOUSE_PUBLIC_HOST: 'bench.invalid',
    GATEHOUSE_RATE_LIMIT_ADMIN: '100000000',
    GATEHOUSE_LOG_LEVEL: 'error',
    WG_I_PREFER_BUGGY_USERSPACE_TO_POLISHED_KMOD: '1',
  };
  const log = fs.openSync(path.join(dataDir, 'sidecar.log'), 'a');
  // The sidecar as it runs in production: compiled (sidecar/dist, built now); BENCH_SIDECAR=tsx runs the sources.
  let entry = ['--import', 'tsx', path.join(root, 'sidecar/src/main.ts')];
  if (process.env.BENCH_SIDECAR !== 'tsx') {
    const b = spawnSync('npm', ['run', '-s', 'build'], { cwd: path.join(root, 'sidecar'), encoding: 'utf8' });
    if (b.status === 0 && fs.existsSync(path.join(root, 'sidecar/dist/main.js')))
      entry = ['--conditions=gatehouse-compiled', path.join(root, 'sidecar/dist/main.js')];
    else console.error(`build failed, running the sources through tsx instead:\n${(b.stdout + b.stderr).slice(-1500)}`);
  }
  const child = spawn(process.execPath, entry, { env, stdio: ['ignore', log, log], cwd: path.join(root, 'sidecar') });
  let benchWg: { driver: WgDriver; iface: string } | null = null;
  const stopAll = async () => {
    if (benchWg) await benchWg.driver.down(benchWg.iface).catch(() => {});
    if (child.exitCode === null) {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
    fs.rmSync(dataDir, { recursive: true, force: true });
  };
  process.on('SIGINT', () => void stopAll().then(() => process.exit(130)));
  try {
    const base = `http://127.0.0.1:${port}`;
    for (let i = 0; ; i++) {
      try {
        if ((await fetch(`${base}/health`)).ok) break;
      } catch {
        /* not yet */
      }
      if (i > 300 || child.exitCode !== null)
        throw new Error(`sidecar did not start: ${fs.readFileSync(path.join(dataDir, 'sidecar.log'), 'utf8').slice(-2000)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const login = await fetch(`${base}/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ username: 'admin', password: PASSWORD }),
    });
    const cookie = login.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; ');
    const csrf = ((await login.json()) as { csrfToken: string }).csrfToken;
    const tok = await fetch(`${base}/api/v1/tokens`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie, 'x-csrf-token': csrf },
      body: JSON.stringify({ name: 'bench', scopes: ['full-access'] }),
    });
    const token = ((await tok.json()) as { token: string }).token;
    const auth = { authorization: `Bearer ${token}` };

    const timed = async (url: string, init: RequestInit = {}) => {
      const t0 = performance.now();
      const r = await fetch(url, { ...init, headers: { ...auth, ...(init.headers as Record<string, string> | undefined) } });
      const body = await r.text();
      const dt = performance.now() - t0;
      if (!r.ok) throw new Error(`${init.method ?? 'GET'} ${url}: ${r.status} ${body.slice(0, 300)}`);
      return { dt, body };
    };

    // The reconcile measurement opens the same database in this process (read-only use).
    const config = loadConfig({
      ...env,
      GATEHOUSE_WG_INTERFACE: benchIface,
      GATEHOUSE_WG_PORT: String(await freePort('udp')),
      GATEHOUSE_WG_MANAGE: isRoot ? 'true' : 'false',
    });
    const deps = await createDeps(config, { models: featureModels, log: createLogger('error', true) });
    const driver = isRoot ? new WgDriver() : null;
    const wg = new WireGuardService(deps, { driver });

    console.log(
      `bench peers: ${os.cpus().length} cores, ${os.cpus()[0]?.model ?? ''}, load ${os.loadavg()[0].toFixed(1)}, SQLite, subnet 10.64.0.0/16, sidecar ${entry.at(-1)!.endsWith('.js') ? 'compiled (dist)' : 'via tsx'}, ` +
        `sidecar WireGuard ${isRoot ? `managed (wireguard-go ${sidecarIface}: each create sets the peer through its UAPI socket)` : 'not managed (database only: BENCH_WG=off or not root)'}`,
    );
    let created = 0;
    const results: Record<string, unknown>[] = [];
    for (const size of sizes) {
      const lat: number[] = [];
      const t0 = performance.now();
      while (created < size) {
        const { dt } = await timed(`${base}/api/v1/peers`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ name: `bench-${created}`, tags: created % 3 ? 'bench' : 'bench,odd' }),
        });
        lat.push(dt);
        created++;
      }
      const createWall = (performance.now() - t0) / 1000;
      // list: first page and last page
      const listFirst: number[] = [];
      const listLast: number[] = [];
      for (let i = 0; i < 5; i++) await timed(`${base}/api/v1/peers?limit=100`); // warm-up
      for (let i = 0; i < 100; i++) listFirst.push((await timed(`${base}/api/v1/peers?limit=100`)).dt);
      for (let i = 0; i < 100; i++) listLast.push((await timed(`${base}/api/v1/peers?limit=100&offset=${size - 100}`)).dt);
      const listBody = JSON.parse((await timed(`${base}/api/v1/peers?limit=100`)).body);
      if (listBody.total !== size || listBody.peers.length !== 100) throw new Error(`list returned total ${listBody.total}, ${listBody.peers.length} rows`);
      // one full reconcile
      const s0 = performance.now();
      const { spec } = await wg.desiredSpec();
      const specMs = performance.now() - s0;
      const r0 = performance.now();
      const text = renderServerConfig(spec);
      const renderMs = performance.now() - r0;
      const row: Record<string, unknown> = {
        peers: size,
        create_p50_ms: +pct(lat, 0.5).toFixed(2),
        create_p99_ms: +pct(lat, 0.99).toFixed(2),
        creates_per_s: +(lat.length / createWall).toFixed(0),
        list_first_p50_ms: +pct(listFirst, 0.5).toFixed(2),
        list_first_p99_ms: +pct(listFirst, 0.99).toFixed(2),
        list_last_p50_ms: +pct(listLast, 0.5).toFixed(2),
        list_last_p99_ms: +pct(listLast, 0.99).toFixed(2),
        list_page_kb: +(JSON.stringify(listBody).length / 1024).toFixed(1),
        reconcile_spec_from_db_ms: +specMs.toFixed(1),
        reconcile_render_ms: +renderMs.toFixed(1),
        config_kb: +(text.length / 1024).toFixed(0),
      };
      if (driver) {
        benchWg = { driver, iface: benchIface };
        await driver.down(benchIface).catch(() => {});
        const u0 = performance.now();
        await driver.up(spec);
        row.reconcile_up_ms = Math.round(performance.now() - u0);
        const y0 = performance.now();
        await driver.sync(spec);
        row.reconcile_syncconf_nochange_ms = Math.round(performance.now() - y0);
        const dump = await driver.dump(benchIface);
        if (dump?.peers.length !== size) throw new Error(`interface holds ${dump?.peers.length} peers, expected ${size}`);
        const d0 = performance.now();
        await driver.dump(benchIface);
        row.wg_dump_ms = Math.round(performance.now() - d0);
        await driver.down(benchIface);
        const { body } = await timed(`${base}/api/v1/wg/restart`, { method: 'POST' });
        row.sidecar_wg_restart_ms = JSON.parse(body).restarted.ms;
        const st = JSON.parse((await timed(`${base}/api/v1/wg/status`)).body);
        if (st.peer_count !== size) throw new Error(`sidecar interface holds ${st.peer_count} peers after restart`);
      }
      row.sidecar_rss = rssOf(child.pid!);
      results.push(row);
      console.log(`\n${size} peers`);
      console.log(
        `  create (POST /api/v1/peers, sequential): p50 ${ms(row.create_p50_ms as number)}  p99 ${ms(row.create_p99_ms as number)}  (${row.creates_per_s}/s)`,
      );
      console.log(
        `  GET /api/v1/peers?limit=100: first page p50 ${ms(row.list_first_p50_ms as number)} p99 ${ms(row.list_first_p99_ms as number)}; last page p50 ${ms(row.list_last_p50_ms as number)} p99 ${ms(row.list_last_p99_ms as number)} (${row.list_page_kb} KB)`,
      );
      console.log(
        `  full reconcile: spec from DB ${row.reconcile_spec_from_db_ms} ms, render ${row.reconcile_render_ms} ms (${row.config_kb} KB)` +
          (driver
            ? `; up (new wireguard-go + setconf) ${row.reconcile_up_ms} ms; wg syncconf, nothing to change ${row.reconcile_syncconf_nochange_ms} ms; wg show dump ${row.wg_dump_ms} ms; POST /wg/restart ${row.sidecar_wg_restart_ms} ms`
            : ' (no interface: BENCH_WG=off or not root)'),
      );
      console.log(`  sidecar RSS: ${row.sidecar_rss}`);
    }
    const last = results.at(-1)!;
    console.log(
      `\ntargets at ${last.peers} peers: create p50 < 20 ms: ${(last.create_p50_ms as number) < 20 ? 'met' : 'MISSED'} (${last.create_p50_ms} ms); list < 20 ms: ${(last.list_first_p50_ms as number) < 20 ? 'met' : 'MISSED'} (p50 ${last.list_first_p50_ms} ms)`,
    );
    console.log(JSON.stringify({ bench: 'peers', cores: os.cpus().length, managed: isRoot, results }));
    await deps.db.close();
  } finally {
    await stopAll();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
