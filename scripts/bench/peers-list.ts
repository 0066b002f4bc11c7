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
import os from 'node:os';
import { startListBench, GROUPS } from './list-data.js';
import { median } from './lib.js';
import type { PeerListBody, RouteListBody } from '../../sidecar/test/lib/protocol.js';

const PEERS = Number(process.env.BENCH_PEERS ?? 10_000);
const ROUTES = Number(process.env.BENCH_ROUTES ?? 1_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 50);
const ONLINE_WINDOW_MS = 180_000;

const p95 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil(0.95 * xs.length) - 1)];

async function main(): Promise<void> {
  const b = await startListBench({ name: 'peers-list', peers: PEERS, routes: ROUTES });
  const { api, rows, groupIds, now, databaseUrl, setupS } = b;
  try {
    const group = groupIds[3];
    const expectOnline = rows.filter(
      (r) => r.group_id === group && r.enabled && r.latest_handshake !== null && now - r.latest_handshake <= ONLINE_WINDOW_MS,
    ).length;
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
    console.log(
      `bench peers-list: ${os.cpus().length} cores, ${os.cpus()[0]?.model ?? ''}, load ${os.loadavg()[0].toFixed(1)}, ${databaseUrl ? 'PostgreSQL' : 'SQLite'}, sidecar via tsx; ` +
        `${PEERS} peers, ${ROUTES} routes, ${GROUPS} groups written in ${setupS.toFixed(1)} s; ${RUNS} runs per request (HTTP, no keep-alive)`,
    );
    const results: Record<string, unknown>[] = [];
    for (const [label, p] of cases) {
      for (let i = 0; i < 5; i++) await api(p);
      const lat: number[] = [];
      let last: (PeerListBody | RouteListBody) | undefined;
      for (let i = 0; i < RUNS; i++) {
        const s0 = performance.now();
        const r = await api<PeerListBody | RouteListBody>(p);
        lat.push(performance.now() - s0);
        if (r.status !== 200) throw new Error(`${p}: ${r.status} ${JSON.stringify(r.data).slice(0, 300)}`);
        last = r.data;
      }
      if (!last) throw new Error(`${p}: no run`);
      const rowsOut = 'peers' in last ? last.peers.length : last.routes.length;
      if (p.includes('group_id') && last.total !== expectOnline) throw new Error(`${p}: total ${last.total}, expected ${expectOnline}`);
      console.log(
        `  ${label.padEnd(40)} median ${median(lat).toFixed(1).padStart(6)} ms   p95 ${p95(lat).toFixed(1).padStart(6)} ms   (${rowsOut} rows of total ${last.total})`,
      );
      results.push({ label, path: p, median_ms: +median(lat).toFixed(2), p95_ms: +p95(lat).toFixed(2), total: last.total });
    }
    console.log(JSON.stringify({ bench: 'peers-list', database: databaseUrl ? 'postgres' : 'sqlite', peers: PEERS, routes: ROUTES, results }));
  } finally {
    await b.stop();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
