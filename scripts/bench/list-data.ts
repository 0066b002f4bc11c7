// Shared by the list benchmarks (peers-list.ts: the API; ui-peers.ts: the admin app in Chromium): a
// throwaway sidecar as a child process (SQLite; PostgreSQL when BENCH_DATABASE_URL names a server
// where a database may be created; Caddy and WireGuard not managed) with an admin session and a
// full-access token, and 10,000 peers (20 groups, tags, a third recently online) and 1,000 routes
// written straight into its database in bulk (creating them through the API is what peers.ts measures).
//   const b = await startListBench({ name: 'peers-list', peers: 10_000, routes: 1_000 }); ... await b.stop();
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDatabase } from '../../sidecar/src/db/index.js';
import { findRows } from '../../sidecar/src/db/define.js';
import type { PeerListBody, RouteListBody, TokenCreatedBody } from '../../sidecar/test/lib/protocol.js';
import { featureModels } from '../../sidecar/src/features.js';
import { blankRoute, routeToRow } from '../../sidecar/src/routes/model.js';
import { freePort } from '../../test/lib/ports.js';
import { request, root, track } from './lib.js';
import { waitFor } from '../../test/lib/wait.js';

export const GROUPS = 20;
export const PASSWORD = 'bench-password-1';

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

/** A peer row as the bench writes it (the fields the benchmarks check against). */
export interface BenchPeerRow {
  name: string;
  enabled: boolean;
  group_id: number | null;
  latest_handshake: number | null;
  [k: string]: unknown;
}

export interface ListBench {
  dir: string;
  port: number;
  url: string;
  databaseUrl: string | undefined;
  child: ChildProcess;
  /** the admin's session: cookie header and CSRF token */
  cookie: string;
  csrf: string;
  /** GET with the full-access token */
  api<T = unknown>(p: string): Promise<{ status: number; data: T }>;
  rows: BenchPeerRow[];
  groupIds: number[];
  /** the time when the rows were written (handshakes are relative to it) */
  now: number;
  setupS: number;
  stop(): Promise<void>;
}

/**
 * `compiled`: runs the sidecar as it ships (tsc's output, `node --conditions=gatehouse-compiled
 * dist/main.js`, built first by scripts/build-app.sh when a source is newer than the last build)
 * instead of from its sources through tsx, whose in-memory transpiling adds to the process's memory.
 */
export async function startListBench(o: { name: string; peers: number; routes: number; env?: Record<string, string>; compiled?: boolean }): Promise<ListBench> {
  if (o.compiled) execFileSync('bash', [path.join(root, 'scripts/build-app.sh'), 'sidecar'], { stdio: ['ignore', 'ignore', 'inherit'] });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `gatehouse-bench-${o.name}-`));
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
    ...o.env,
  };
  delete env.DATABASE_URL;
  if (databaseUrl) env.DATABASE_URL = databaseUrl;
  const log = fs.openSync(path.join(dir, 'sidecar.log'), 'a');
  const child = track(
    spawn(
      process.execPath,
      o.compiled ? ['--conditions=gatehouse-compiled', path.join(root, 'sidecar/dist/main.js')] : ['--import', 'tsx', path.join(root, 'sidecar/src/main.ts')],
      { env, stdio: ['ignore', log, log], cwd: path.join(root, 'sidecar') },
    ),
  );
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
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
  };
  try {
    await waitFor(async () => (await request(port, 'GET', '/health')).status === 200, 60_000, `the sidecar (see ${dir}/sidecar.log)`);
    const login = await fetch(`http://127.0.0.1:${port}/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ username: 'admin', password: PASSWORD }),
    });
    const cookie = login.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; ');
    const csrf = ((await login.json()) as { csrfToken: string }).csrfToken;
    const tok = await request<TokenCreatedBody>(port, 'POST', '/api/v1/tokens', {
      headers: { cookie, 'x-csrf-token': csrf },
      body: { name: 'bench', scopes: ['full-access'] },
    });
    const auth = { authorization: `Bearer ${tok.data.token}` };
    const api = <T = unknown>(p: string) => request<T>(port, 'GET', `/api/v1${p}`, { headers: auth });

    // ---- bulk data, written into the sidecar's database from this process
    const t0 = performance.now();
    const db = await openDatabase({ dataDir: dir, databaseUrl, models: featureModels });
    const { PeerGroup, Peer, Route } = db.models;
    const now = Date.now();
    await PeerGroup.bulkCreate(
      Array.from({ length: GROUPS }, (_, i) => ({ name: `group-${i}`, color: null, description: `bench group ${i}`, created_at: now, updated_at: now })),
    );
    const groupIds = (await findRows(PeerGroup, { attributes: ['id'], order: [['id', 'ASC']] })).map((g) => g.id);
    const tagPool = ['office', 'home', 'linux', 'windows', 'mac', 'server', 'lab', 'vip', 'printer', 'camera'];
    const rows = Array.from({ length: o.peers }, (_, i) => {
      const n = i + 2;
      const address = `10.64.${Math.floor(n / 256)}.${n % 256}`;
      const hs = i % 3 === 0 ? now - (i % 120) * 1000 : i % 3 === 1 ? now - 3_600_000 - i : null;
      return {
        name: `peer-${String(i).padStart(5, '0')}`,
        description: i % 4 === 0 ? `workstation of user ${i} in building ${i % 17}` : null,
        peer_type: 'regular' as const,
        enabled: i % 10 !== 0,
        public_key: crypto.randomBytes(32).toString('base64'),
        private_key_enc: null,
        preshared_key_enc: null,
        address,
        allowed_ips: `${address}/32`,
        dns: null,
        persistent_keepalive: null,
        tags: [tagPool[i % tagPool.length], tagPool[(i * 7) % tagPool.length]].join(','),
        group_id: i % 5 === 0 ? null : groupIds[i % GROUPS],
        hostname: i % 6 === 0 ? `host-${i}` : null,
        hostname_source: i % 6 === 0 ? ('admin' as const) : null,
        hostname_updated_at: null,
        expires_at: null,
        api_port: null,
        total_rx: (i * 7919) % 1_000_000_007,
        total_tx: (i * 104_729) % 998_244_353,
        last_raw_rx: 0,
        last_raw_tx: 0,
        latest_handshake: hs,
        endpoint: null,
        created_at: now - (o.peers - i) * 60_000,
        updated_at: now,
      };
    });
    for (let i = 0; i < rows.length; i += 1000) await Peer.bulkCreate(rows.slice(i, i + 1000));
    const peerIds = (await findRows(Peer, { attributes: ['id'], order: [['id', 'ASC']] })).map((p) => p.id);
    const routes = Array.from({ length: o.routes }, (_, i) => {
      const r = {
        ...blankRoute(now - (o.routes - i) * 60_000),
        domain: `svc-${i}.bench${i % 10}.example.com`,
        description: i % 3 === 0 ? `service ${i}` : null,
        peer_id: peerIds[(i * 13) % peerIds.length],
        target_port: '8080',
        enabled: i % 8 !== 0,
      };
      if (i % 10 === 0) Object.assign(r, { route_type: 'l4', l4_protocol: 'tcp', l4_listen_port: 20000 + i, l4_tls_mode: null, target_port: '22' });
      return routeToRow(r);
    });
    await Route.bulkCreate(routes);
    const setupS = (performance.now() - t0) / 1000;
    await db.close();

    const check = await api<PeerListBody>('/peers?limit=1');
    if (check.status !== 200 || check.data.total !== o.peers)
      throw new Error(`expected ${o.peers} peers, the API says ${JSON.stringify(check.data).slice(0, 300)}`);
    const rcheck = await api<RouteListBody>('/routes?limit=1');
    if (rcheck.data.total !== o.routes) throw new Error(`expected ${o.routes} routes, the API says ${rcheck.data.total}`);
    return { dir, port, url: `http://127.0.0.1:${port}`, databaseUrl, child, cookie, csrf, api, rows, groupIds, now, setupS, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}
