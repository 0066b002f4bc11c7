// Benchmark: requests/s through a route with two backends (round robin, on two peers) against a
// single-target route, through the real custom Caddy (bin/caddy). Run with
// scripts/bench/route-backends.sh. Target: two backends >= 95 % of the single target's requests/s.
//
// Setup (as scripts/bench/route-modules.ts): a throwaway sidecar (SQLite, GATEHOUSE_MANAGE_CADDY=true,
// GATEHOUSE_WG_MANAGE=false, GATEHOUSE_WG_SUBNET in 127.0.0.0/8 so the peers' addresses are loopback
// addresses) and the trivial Go backend (routes-backend.go), one instance on each peer's address. No
// tunnel in the path. Routes, created with POST /api/v1/routes:
//   single - peer A's backend (the route's single target)
//   lb     - backends [peer A, peer B], lb_policy round_robin
// Method: wrk -t1 -c32, short runs (BENCH_DURATION, default 1 s) after a 2 s warm-up each, in
// BENCH_ROUNDS rounds (default 20) that alternate which route runs first; the ratio is that of the
// summed requests/s.
import { spawn, execFileSync } from 'node:child_process';
import { freePort } from '../../test/lib/ports.js';
import { median, parseWrk, request, startBenchSidecar, stopAll, track } from './lib.js';
import { waitFor } from '../../test/lib/wait.js';
import type { PeerCreatedBody } from '../../sidecar/test/lib/protocol.js';

const DURATION = process.env.BENCH_DURATION ?? '1s';
const CONNS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 20);

const wrk = (url: string, host: string, duration = DURATION) =>
  parseWrk(execFileSync('wrk', ['-t1', `-c${CONNS}`, `-d${duration}`, '--latency', '-H', `Host: ${host}`, url], { encoding: 'utf8' }));

async function main(): Promise<void> {
  const octet = 10 + (process.pid % 200);
  const bench = await startBenchSidecar({ name: 'backends', subnet: `127.81.${octet}.0/24` });
  const { backendBin, api } = bench;
  const port = await freePort();
  try {
    const peers = [];
    for (const name of ['bench-a', 'bench-b']) {
      const peer = (await api<PeerCreatedBody>('POST', '/peers', { name })).data.peer;
      const addr = String(peer.address).split('/')[0];
      track(spawn(backendBin, [`${addr}:${port}`], { stdio: 'ignore' }));
      await waitFor(async () => (await request(port, 'GET', '/', { addr })).status === 200, 10_000, `the backend on ${addr}`);
      peers.push(peer);
    }
    const routes: Record<string, Record<string, unknown>> = {
      'single.bench.test': { peer_id: peers[0].id, target_port: port },
      'lb.bench.test': {
        backends: peers.map((p) => ({ peer_id: p.id, target_port: port })),
        lb_policy: 'round_robin',
      },
    };
    for (const [domain, body] of Object.entries(routes)) {
      const r = await api('POST', '/routes', { domain, ...body });
      if (r.status !== 201) throw new Error(`creating ${domain}: ${JSON.stringify(r.data)}`);
      if ((await request(bench.ports.http, 'GET', '/', { host: domain })).status !== 200) throw new Error(`${domain} does not answer through Caddy`);
    }
    const url = `http://127.0.0.1:${bench.ports.http}/`;
    for (const h of Object.keys(routes)) wrk(url, h, '2s');
    const runs: Record<string, { rps: number; p99: number; errors: string }[]> = { 'single.bench.test': [], 'lb.bench.test': [] };
    for (let i = 0; i < ROUNDS; i++) {
      const order = i % 2 ? ['lb.bench.test', 'single.bench.test'] : ['single.bench.test', 'lb.bench.test'];
      for (const h of order) runs[h].push(wrk(url, h));
    }
    const sum = (h: string) => runs[h].reduce((a, x) => a + x.rps, 0);
    const row = (label: string, h: string) => {
      const xs = runs[h];
      const errors = xs
        .map((x) => x.errors)
        .filter(Boolean)
        .join('; ');
      console.log(
        `  ${label.padEnd(44)} ${String(Math.round(sum(h) / xs.length)).padStart(7)} req/s  p99 ${median(xs.map((x) => x.p99))
          .toFixed(2)
          .padStart(6)} ms${errors ? `  (${errors})` : ''}`,
      );
    };
    console.log(`route backends through Caddy: wrk -t1 -c${CONNS}, ${DURATION} runs, ${ROUNDS} rounds alternating the order`);
    row('single target (one backend)', 'single.bench.test');
    row('two backends, round_robin (two peers)', 'lb.bench.test');
    const ratio = sum('lb.bench.test') / sum('single.bench.test');
    console.log(`  ratio two backends / single target: ${(ratio * 100).toFixed(1)}% (target >= 95%: ${ratio >= 0.95 ? 'met' : 'NOT met'})`);
  } finally {
    stopAll();
  }
}

main().catch((e) => {
  console.error(e);
  stopAll();
  process.exit(1);
});
