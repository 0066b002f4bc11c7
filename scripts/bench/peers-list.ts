// Benchmark: the list endpoints behind the admin UI's peers and routes tables at 10,000 peers and
// 1,000 routes. Starts a throwaway sidecar as a child process (SQLite; PostgreSQL when
// BENCH_DATABASE_URL names a server where a database may be created; Caddy and WireGuard not
// managed), writes the peers and routes straight into its database in bulk (creating 10,000 peers
// through the API is what scripts/bench/peers.ts measures), then times each request BENCH_RUNS times
// (default 50, after 5 warm-up calls) and prints median and p95:
//   GET /api/v1/peers?limit=50                         first page
//   GET /api/v1/peers?limit=50&q=...                   a search (substring over six columns)
//   GET /api/v1/peers?limit=50&sort=-traffic           most traffic first
//   GET /api/v1/peers?limit=50&sort=name&offset=9950   last page by name
//   GET /api/v1/peers?limit=50&group_id=..&online=true a group's online peers
//   GET /api/v1/routes?limit=50&q=...                  a route search (incl. target peer names)
//   node --import tsx scripts/bench/peers-list.ts      (BENCH_PEERS=10000, BENCH_ROUTES=1000)
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDatabase } from '../../sidecar/src/db/index.js';
import { blankRoute, routeToRow } from '../../sidecar/src/routes/model.js';
import { freePort } from '../../test/lib/ports.js';
import { median, request, root, track, waitUntil } from './lib.js';

const PEERS = Number(process.env.BENCH_PEERS ?? 10_000);
const ROUTES = Number(process.env.BENCH_ROUTES ?? 1_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 50);
const GROUPS = 20;
const PASSWORD = 'bench-password-1';
const ONLINE_WINDOW_MS = 180_000;

const p95 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil(0.95 * xs.length) - 1)];

async function freshPgDatabase(baseUrl: string): Promise<string> {
  const { default: pg } = await import('pg');
  const name = `gh_bench_${process.pid}_${Date.now()}`;
  const c = new pg.Client({ connectionString: baseUrl });
  await c.connect();
  await c.query(`CREATE DATABASE ${name}`);
  await c.end();
  const u = new URL(baseUrl);
  u.pathname = `/${name}`;
  return u.toString();
}

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-bench-peers-list-'));
  const port = await freePort('tcp');
  const databaseUrl = process.env.BENCH_DATABASE_URL ? await freshPgDatabase(process.env.BENCH_DATABASE_URL) : undefined;
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    GATEHOUSE_DATA_DIR: dir,
    GATEHOUSE_PORT: String(port),
    GATEHOUSE_BIND: '127.0.0.1',
    GATEHOUSE_ADMIN_USER: 'admin',
    GATEHOUSE_ADMIN_PASSWORD: PASSWORD,
    GATEHOUSE_MANAGE_CADDY: 'false',
    GATEHOUSE_WG_MANAGE: 'false',
    GATEHOUSE_WG_SUBNET: '10.64.0.0/16',
    GATEHOUSE_PUBLIC_HOST: 'bench.invalid',
    GATEHOUSE_RATE_LIMIT_ADMIN: '100000000',
    GATEHOUSE_LOG_LEVEL: 'error',
  };
  delete env.DATABASE_URL;
  if (databaseUrl) env.DATABASE_URL = databaseUrl;
  const log = fs.openSync(path.join(dir, 'sidecar.log'), 'a');
  const child = track(spawn(process.execPath, ['--import', 'tsx', path.join(root, 'sidecar/src/main.ts')], { env, stdio: ['ignore', log, log], cwd: path.join(root, 'sidecar') }));
  try {
    await waitUntil(async () => (await request(port, 'GET', '/health')).status === 200, 60_000, `the sidecar (see ${dir}/sidecar.log)`);
    const login = await fetch(`http://127.0.0.1:${port}/login`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify({ username: 'admin', password: PASSWORD }) });
    const cookie = login.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ');
    const csrf = ((await login.json()) as { csrfToken: string }).csrfToken;
    const tok = await request(port, 'POST', '/api/v1/tokens', { headers: { cookie, 'x-csrf-token': csrf }, body: { name: 'bench', scopes: ['full-access'] } });
    const auth = { authorization: `Bearer ${tok.data.token}` };
    const api = (p: string) => request(port, 'GET', `/api/v1${p}`, { headers: auth });

    // ---- bulk data, written into the sidecar's database from this process
    const t0 = performance.now();
    const db = await openDatabase({ dataDir: dir, databaseUrl });
    const { PeerGroup, Peer, Route } = db.models;
    const now = Date.now();
    await PeerGroup.bulkCreate(Array.from({ length: GROUPS }, (_, i) => ({ name: `group-${i}`, color: null, description: `bench group ${i}`, created_at: now, updated_at: now })) as any);
    const groupIds = ((await PeerGroup.findAll({ attributes: ['id'], order: [['id', 'ASC']], raw: true })) as unknown as { id: number }[]).map((g) => g.id);
    const tagPool = ['office', 'home', 'linux', 'windows', 'mac', 'server', 'lab', 'vip', 'printer', 'camera'];
    const rows = Array.from({ length: PEERS }, (_, i) => {
      const n = i + 2;
      const address = `10.64.${Math.floor(n / 256)}.${n % 256}`;
      const hs = i % 3 === 0 ? now - (i % 120) * 1000 : i % 3 === 1 ? now - 3_600_000 - i : null;
      return {
        name: `peer-${String(i).padStart(5, '0')}`,
        description: i % 4 === 0 ? `workstation of user ${i} in building ${i % 17}` : null,
        peer_type: 'regular', enabled: i % 10 !== 0,
        public_key: crypto.randomBytes(32).toString('base64'), private_key_enc: null, preshared_key_enc: null,
        address, allowed_ips: `${address}/32`, dns: null, persistent_keepalive: null,
        tags: [tagPool[i % tagPool.length], tagPool[(i * 7) % tagPool.length]].join(','),
        group_id: i % 5 === 0 ? null : groupIds[i % GROUPS],
        hostname: i % 6 === 0 ? `host-${i}` : null, hostname_source: i % 6 === 0 ? 'admin' : null, hostname_updated_at: null,
        expires_at: null, api_port: null,
        total_rx: (i * 7919) % 1_000_000_007, total_tx: (i * 104_729) % 998_244_353, last_raw_rx: 0, last_raw_tx: 0,
        latest_handshake: hs, endpoint: null, created_at: now - (PEERS - i) * 60_000, updated_at: now,
      };
    });
    for (let i = 0; i < rows.length; i += 1000) await Peer.bulkCreate(rows.slice(i, i + 1000) as any);
    const peerIds = ((await Peer.findAll({ attributes: ['id'], order: [['id', 'ASC']], raw: true })) as unknown as { id: number }[]).map((p) => p.id);
    const routes = Array.from({ length: ROUTES }, (_, i) => {
      const r = { ...blankRoute(now - (ROUTES - i) * 60_000), domain: `svc-${i}.bench${i % 10}.example.com`, description: i % 3 === 0 ? `service ${i}` : null, peer_id: peerIds[(i * 13) % peerIds.length], target_port: '8080', enabled: i % 8 !== 0 };
      if (i % 10 === 0) Object.assign(r, { route_type: 'l4', l4_protocol: 'tcp', l4_listen_port: 20000 + i, l4_tls_mode: null, target_port: '22' });
      return routeToRow(r as any);
    });
    await Route.bulkCreate(routes as any);
    const setupS = (performance.now() - t0) / 1000;
    await db.close();

    const check = await api('/peers?limit=1');
    if (check.status !== 200 || check.data.total !== PEERS) throw new Error(`expected ${PEERS} peers, the API says ${JSON.stringify(check.data).slice(0, 300)}`);
    const rcheck = await api('/routes?limit=1');
    if (rcheck.data.total !== ROUTES) throw new Error(`expected ${ROUTES} routes, the API says ${rcheck.data.total}`);

    const group = groupIds[3];
    const expectOnline = rows.filter((r) => r.group_id === group && r.enabled && r.latest_handshake !== null && now - r.latest_handshake <= ONLINE_WINDOW_MS).length;
    const cases: [string, string][] = [
      ['peers first page', '/peers?limit=50'],
      ['peers q=4242 (search)', '/peers?limit=50&q=4242'],
      ['peers q=building 3 (many matches)', '/peers?limit=50&q=building%203'],
      ['peers sort=-traffic', '/peers?limit=50&sort=-traffic'],
      ['peers sort=name last page', `/peers?limit=50&sort=name&offset=${PEERS - 50}`],
      ['peers group_id+online', `/peers?limit=50&group_id=${group}&online=true`],
      ['peers tag=vip&sort=-last_handshake', '/peers?limit=50&tag=vip&sort=-last_handshake'],
      ['routes first page', '/routes?limit=50'],
      ['routes q=svc-12', '/routes?limit=50&q=svc-12'],
      ['routes q=peer-0042 (target peer name)', '/routes?limit=50&q=peer-0042'],
    ];
    console.log(`bench peers-list: ${os.cpus().length} cores, ${os.cpus()[0]?.model ?? ''}, load ${os.loadavg()[0].toFixed(1)}, ${databaseUrl ? 'PostgreSQL' : 'SQLite'}, sidecar via tsx; ` +
      `${PEERS} peers, ${ROUTES} routes, ${GROUPS} groups written in ${setupS.toFixed(1)} s; ${RUNS} runs per request (HTTP, no keep-alive)`);
    const results: Record<string, unknown>[] = [];
    for (const [label, p] of cases) {
      for (let i = 0; i < 5; i++) await api(p);
      const lat: number[] = [];
      let last: any;
      for (let i = 0; i < RUNS; i++) {
        const s0 = performance.now();
        const r = await api(p);
        lat.push(performance.now() - s0);
        if (r.status !== 200) throw new Error(`${p}: ${r.status} ${JSON.stringify(r.data).slice(0, 300)}`);
        last = r.data;
      }
      const rowsOut = (last.peers ?? last.routes).length;
      if (p.includes('group_id') && last.total !== expectOnline) throw new Error(`${p}: total ${last.total}, expected ${expectOnline}`);
      console.log(`  ${label.padEnd(40)} median ${median(lat).toFixed(1).padStart(6)} ms   p95 ${p95(lat).toFixed(1).padStart(6)} ms   (${rowsOut} rows of total ${last.total})`);
      results.push({ label, path: p, median_ms: +median(lat).toFixed(2), p95_ms: +p95(lat).toFixed(2), total: last.total });
    }
    console.log(JSON.stringify({ bench: 'peers-list', database: databaseUrl ? 'postgres' : 'sqlite', peers: PEERS, routes: ROUTES, results }));
  } finally {
    if (child.exitCode === null) {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
    fs.rmSync(dir, { recursive: true, force: true });
    if (databaseUrl && process.env.BENCH_DATABASE_URL) {
      const { default: pg } = await import('pg');
      const c = new pg.Client({ connectionString: process.env.BENCH_DATABASE_URL });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${new URL(databaseUrl).pathname.slice(1)}`).catch(() => {});
      await c.end();
    }
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
