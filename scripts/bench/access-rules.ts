// Benchmark: cost of a route's access rules through the real custom Caddy (bin/caddy): a route with
// a country filter (geo_filter allow [DE], our gatehouse_geo matcher: one MMDB lookup per request)
// and a route with an open access window (access_schedule, every day all day), against the same
// route without them. Run with `node --import tsx scripts/bench/access-rules.ts` (as the other
// route benchmarks: scripts/bench/lib.ts starts a throwaway sidecar with GATEHOUSE_MANAGE_CADDY=true,
// the peer's address in 127.0.0.0/8 and the trivial Go backend on it; no tunnel in the path).
//
// The country database is written by the benchmark (MaxMind's writer, test/lib/geoip.ts): wrk's
// source 127.0.0.1 is in DE, plus 20,000 other /24 networks in other countries so the tree has a
// realistic depth. Method: BENCH_ROUNDS (default 20) rounds of BENCH_DURATION (default 1 s) wrk
// runs (-t1 -c32), each round running every route once in a rotating order; plain and control
// (a second plain route, A/A: the machine's noise) in the same rounds. A ratio is the summed
// requests/s of a route over the rounds divided by plain's. Target: >= 0.95.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../../test/lib/ports.js';
import { waitFor } from '../../test/lib/wait.js';
import { writeTestMmdb } from '../../test/lib/geoip.js';
import { parseWrk, request, startBenchSidecar, stopAll, track } from './lib.js';
import type { PeerCreatedBody } from '../../sidecar/test/lib/protocol.js';

const DURATION = process.env.BENCH_DURATION ?? '1s';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 20);
const CONNS = Number(process.env.BENCH_CONNECTIONS ?? 32);

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-bench-geo-'));
  const db = path.join(dir, 'country.mmdb');
  const codes = ['FR', 'US', 'JP', 'BR', 'IN', 'NL', 'PL', 'SE'];
  const networks: Record<string, string> = { '127.0.0.1': 'DE' };
  for (let i = 0; i < 20_000; i++) networks[`${11 + (i >> 8) * 3}.${i & 255}.${(i * 7) & 255}.0/24`] = codes[i % codes.length];
  await writeTestMmdb(db, networks);
  const octet = 10 + (process.pid % 200);
  const bench = await startBenchSidecar({ name: 'access-rules', subnet: `127.81.${octet}.0/24`, env: { GATEHOUSE_GEOIP_DB: db } });
  const { api, backendBin } = bench;
  try {
    const peer = (await api<PeerCreatedBody>('POST', '/peers', { name: 'bench-peer' })).data.peer;
    const peerAddr = String(peer.address).split('/')[0];
    const backend = await freePort();
    track(spawn(backendBin, [`${peerAddr}:${backend}`], { stdio: 'ignore' }));
    await waitFor(async () => (await request(backend, 'GET', '/', { addr: peerAddr })).status === 200, 10_000, 'the backend');
    const routes: Record<string, Record<string, unknown> | null> = {
      'plain.bench.test': {},
      'control.bench.test': {},
      'geo.bench.test': { geo_filter: { mode: 'allow', countries: ['DE', 'AT', 'CH'] } },
      'window.bench.test': { access_schedule: { timezone: 'UTC', windows: [{ days: [1, 2, 3, 4, 5, 6, 7], from: '00:00', to: '24:00' }] } },
    };
    for (const [domain, extra] of Object.entries(routes)) {
      const r = await api('POST', '/routes', { domain, peer_id: peer.id, target_port: backend, ...extra });
      if (r.status !== 201) {
        console.log(`  ${domain}: not created (${r.status} ${JSON.stringify(r.data).slice(0, 200)}); left out`);
        routes[domain] = null;
        continue;
      }
      const st = (await request(bench.ports.http, 'GET', '/', { host: domain })).status;
      if (st !== 200) throw new Error(`${domain} answers ${st} through Caddy`);
    }
    const hosts = Object.keys(routes).filter((h) => routes[h] !== null);
    const url = `http://127.0.0.1:${bench.ports.http}/`;
    const wrk = (host: string, d: string) =>
      parseWrk(execFileSync('wrk', ['-t1', `-c${CONNS}`, `-d${d}`, '--latency', '-H', `Host: ${host}`, url], { encoding: 'utf8' }));
    for (const h of hosts) wrk(h, '2s');
    const sums = new Map(hosts.map((h) => [h, 0]));
    const errs: string[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const order = [...hosts.slice(i % hosts.length), ...hosts.slice(0, i % hosts.length)];
      for (const h of order) {
        const r = wrk(h, DURATION);
        sums.set(h, sums.get(h)! + r.rps);
        if (r.errors) errs.push(`${h}: ${r.errors}`);
      }
    }
    const plain = sums.get('plain.bench.test')!;
    console.log(
      `access rules through Caddy: wrk -t1 -c${CONNS}, ${ROUNDS} rounds of ${DURATION} per route in rotating order, load average ${os
        .loadavg()
        .map((x) => x.toFixed(2))
        .join(' ')}`,
    );
    for (const h of hosts) {
      const ratio = sums.get(h)! / plain;
      console.log(`  ${h.split('.')[0].padEnd(8)} ${String(Math.round(sums.get(h)! / ROUNDS)).padStart(7)} req/s  ratio to plain ${ratio.toFixed(3)}`);
    }
    for (const h of ['geo.bench.test', 'window.bench.test'].filter((x) => sums.has(x)))
      console.log(`  target ${h.split('.')[0]} >= 0.95 of plain: ${sums.get(h)! / plain >= 0.95 ? 'met' : 'NOT met'} (control shows the noise)`);
    if (errs.length) console.log(`  wrk errors: ${errs.join('; ')}`);
  } finally {
    stopAll();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  stopAll();
  process.exit(1);
});
