// Benchmark: cost of the route-resilience modules through the real custom Caddy (bin/caddy). Run
// with scripts/bench/route-modules.sh.
//
// Setup (as scripts/bench/routes.ts): a throwaway sidecar (SQLite, GATEHOUSE_MANAGE_CADDY=true,
// GATEHOUSE_WG_MANAGE=false, GATEHOUSE_WG_SUBNET in 127.0.0.0/8 so the peer's address is a loopback
// address) and the trivial Go backend (routes-backend.go) on that address. No tunnel in the path.
// Routes through the same Caddy, created with POST /api/v1/routes:
//   plain    - no module (and control, the same again)
//   all      - bot blocker (block), circuit breaker, retries (3 on 502,503,504); compression off
//   mirror   - mirroring only, to a second backend instance
// wrk (-t1 -c32, BENCH_DURATION, 2 s warm-up, a browser User-Agent) runs plain and all in
// alternation (ABBA order) BENCH_ROUNDS times (shared machine: medians of each side, ratio of the
// medians), then plain against control (an A/A check: its distance from 100% is what this
// machine's noise does to a ratio), then plain and mirror. Target: all >= 95% of plain's
// requests/s. Each run also reads Caddy's CPU time from /proc (user + system) and divides it by
// the requests served: µs of Caddy CPU per request, which moves less with the load of other
// processes than requests/s. With two or more cores Caddy runs alone on CPU 1 and everything else
// on CPU 0 (BENCH_PIN=0 turns that off). Last, `go test -bench` gives what the modules' own code costs per
// request (bot blocker, breaker, retry_match evaluation on a success), as a share of that figure.
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../../test/lib/ports.js';
import { median, parseWrk, request, root, startBenchSidecar, stopAll, track, waitUntil } from './lib.js';

const DURATION = process.env.BENCH_DURATION ?? '5s';
const CONNS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36';




interface WrkResult {
  rps: number;
  p99: number;
  errors: string;
  /** Caddy's CPU time (user + system) per request during the measured run, in microseconds. */
  caddyUs: number;
}

// CPU time of a process in clock ticks (utime + stime, /proc/<pid>/stat fields 14 and 15).
const TICK_US = 1e6 / Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
function cpuTicks(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(f[11]) + Number(f[12]);
}
let caddyPid = 0;

// BENCH_PIN (default on with 2+ cores): Caddy gets CPU 1 to itself; wrk, the backends and the
// sidecar share CPU 0. Caddy is what the modules change, and on two shared cores the scheduler's
// mixing of wrk, backend and Caddy otherwise moves requests/s more than the modules do.
const PIN = process.env.BENCH_PIN !== '0' && os.availableParallelism() >= 2;
const pinned = (cmd: string, args: string[]): [string, string[]] => (PIN ? ['taskset', ['-c', '0', cmd, ...args]] : [cmd, args]);
function pin(pid: number, cpu: number): void {
  if (PIN) execFileSync('taskset', ['-a', '-pc', String(cpu), String(pid)], { stdio: 'ignore' });
}


function wrk(url: string, host: string): WrkResult {
  const hdr = ['-H', `Host: ${host}`, '-H', `User-Agent: ${UA}`];
  execFileSync(...pinned('wrk', ['-t1', `-c${CONNS}`, '-d2s', ...hdr, url]), { stdio: 'pipe' });
  const before = cpuTicks(caddyPid);
  const out = execFileSync(...pinned('wrk', ['-t1', `-c${CONNS}`, `-d${DURATION}`, '--latency', ...hdr, url]), { encoding: 'utf8' });
  const ticks = cpuTicks(caddyPid) - before;
  const { rps, p99, requests, errors } = parseWrk(out);
  return { rps, p99, caddyUs: (ticks * TICK_US) / requests, errors };
}


async function main(): Promise<void> {
  const octet = 10 + (process.pid % 200);
  const bench = await startBenchSidecar({ name: 'modules', subnet: `127.79.${octet}.0/24` });
  const { sidecar, backendBin, api } = bench;
  const ports = { ...bench.ports, backend: await freePort(), mirror: await freePort() };
  try {
    const peer = (await api('POST', '/peers', { name: 'bench-peer' })).data.peer;
    const peerAddr = String(peer.address).split('/')[0];
    for (const p of [ports.backend, ports.mirror]) {
      track(spawn(...pinned(backendBin, [`${peerAddr}:${p}`]), { stdio: 'ignore' }));
      await waitUntil(async () => (await request(p, 'GET', '/', { addr: peerAddr })).status === 200, 10_000, 'a backend');
    }
    const routes: Record<string, Record<string, unknown>> = {
      'plain.bench.test': {},
      'control.bench.test': {}, // the same as plain: the A/A control shows this machine's noise
      'all.bench.test': { bot_blocker_enabled: true, bot_blocker_mode: 'block', circuit_breaker_enabled: true, retry_enabled: true, retry_count: 3, retry_status_codes: '502,503,504', compress_enabled: false },
      'mirror.bench.test': { mirror_enabled: true, mirror_targets: [{ peer_id: peer.id, port: ports.mirror }] },
      // BENCH_BREAKDOWN=1: one module at a time
      'bots.bench.test': { bot_blocker_enabled: true, bot_blocker_mode: 'block' },
      'breaker.bench.test': { circuit_breaker_enabled: true },
      'retry.bench.test': { retry_enabled: true, retry_count: 3, retry_status_codes: '502,503,504' },
    };
    for (const [domain, extra] of Object.entries(routes)) {
      const r = await api('POST', '/routes', { domain, peer_id: peer.id, target_port: ports.backend, ...extra });
      if (r.status !== 201) throw new Error(`creating ${domain}: ${JSON.stringify(r.data)}`);
      if ((await request(ports.http, 'GET', '/', { host: domain, headers: { 'user-agent': UA } })).status !== 200) throw new Error(`${domain} does not answer through Caddy`);
    }
    if ((await request(ports.http, 'GET', '/', { host: 'all.bench.test', headers: { 'user-agent': 'sqlmap/1.7' } })).status !== 403) throw new Error('the bot blocker does not block sqlmap');

    caddyPid = bench.caddyPid;
    pin(caddyPid, 1);
    pin(sidecar.pid!, 0);
    const url = `http://127.0.0.1:${ports.http}/`;
    const pair = (other: string) => {
      const a: WrkResult[] = [];
      const b: WrkResult[] = [];
      for (let i = 0; i < ROUNDS; i++) {
        // ABBA order, so a drift in the machine's load does not favour one side
        if (i % 2 === 0) {
          a.push(wrk(url, 'plain.bench.test'));
          b.push(wrk(url, other));
        } else {
          b.push(wrk(url, other));
          a.push(wrk(url, 'plain.bench.test'));
        }
        const [x, y] = [a.at(-1)!, b.at(-1)!];
        process.stderr.write(`  round ${i + 1}: plain ${Math.round(x.rps)} req/s ${x.caddyUs.toFixed(1)} µs CPU/req, ${other} ${Math.round(y.rps)} req/s ${y.caddyUs.toFixed(1)} µs CPU/req\n`);
      }
      const med = (xs: WrkResult[]) => ({ rps: median(xs.map((r) => r.rps)), p99: median(xs.map((r) => r.p99)), caddyUs: median(xs.map((r) => r.caddyUs)), errors: xs.map((x) => x.errors).filter(Boolean).join('; ') });
      return { plain: med(a), other: med(b) };
    };
    process.stderr.write('measuring plain vs all modules\n');
    const all = pair('all.bench.test');
    process.stderr.write('measuring plain vs control (a second plain route: A/A)\n');
    const control = pair('control.bench.test');
    process.stderr.write('measuring plain vs mirror\n');
    const mir = pair('mirror.bench.test');
    const breakdown: [string, ReturnType<typeof pair>][] = [];
    if (process.env.BENCH_BREAKDOWN === '1') {
      for (const h of ['bots.bench.test', 'breaker.bench.test', 'retry.bench.test']) {
        process.stderr.write(`measuring plain vs ${h}\n`);
        breakdown.push([h, pair(h)]);
      }
    }
    const mirrorMetrics = await new Promise<string>((resolve) => {
      http.get({ host: '127.0.0.1', port: ports.admin, path: '/metrics' }, (res) => {
        let t = '';
        res.on('data', (c) => (t += c));
        res.on('end', () => resolve(t));
      }).on('error', () => resolve(''));
    });
    const mirrored = mirrorMetrics.split('\n').filter((l) => l.startsWith('gatehouse_mirror_requests_total')).join('\n    ');

    console.log(`route modules through Caddy: wrk -t1 -c${CONNS} -d${DURATION} (2 s warm-up), medians of ${ROUNDS} alternating rounds, ${PIN ? 'Caddy pinned to CPU 1, the rest to CPU 0' : 'no CPU pinning'}, load average ${os.loadavg().map((x) => x.toFixed(2)).join(' ')}`);
    type Med = { rps: number; p99: number; caddyUs: number; errors: string };
    const row = (label: string, r: Med, extra = '') =>
      console.log(`  ${label.padEnd(58)} ${String(Math.round(r.rps)).padStart(7)} req/s  p99 ${r.p99.toFixed(2).padStart(6)} ms  Caddy CPU ${r.caddyUs.toFixed(1).padStart(5)} µs/req  ${extra}${r.errors ? `  (${r.errors})` : ''}`);
    const ratio = (p: { plain: Med; other: Med }) => `throughput ${((p.other.rps / p.plain.rps) * 100).toFixed(1)}%, Caddy CPU/req ${((p.other.caddyUs / p.plain.caddyUs) * 100).toFixed(1)}%`;
    row('plain route (no module)', all.plain);
    row('all modules (bot blocker, breaker, retries; no compression)', all.other, `${ratio(all)} (target: throughput >= 95%)`);
    row('control: another plain route (A/A, same scheme)', control.other, `${ratio(control)} (the noise of this measurement)`);
    row('plain route (paired with mirror)', mir.plain);
    row('mirror only (one target)', mir.other, ratio(mir));
    for (const [h, r] of breakdown) row(`${h.split('.')[0]} only (paired plain ${Math.round(r.plain.rps)} req/s)`, r.other, ratio(r));
    if (mirrored) console.log(`  mirror counters:\n    ${mirrored}`);
    // What the modules' own code costs per request, measured in-process (steadier than wrk here).
    const goBench = execFileSync('go', ['test', '-run', '^$', '-bench', 'ServeHTTP/browser|HandlerClosed|RetryMatchOnSuccess', '-benchtime', '2s', '-cpu', '1', './botblock', './circuitbreaker', './retrytest'], { cwd: path.join(root, 'caddy-modules'), encoding: 'utf8' });
    // -cpu 1: ns/op is CPU time per request (the breaker's benchmark runs in parallel); the first
    // "ns/op" after a benchmark's name is its figure (a module's debug log may come in between)
    const ns = (name: string) => Number(/([\d.]+) ns\/op/.exec(goBench.slice(goBench.indexOf(`Benchmark${name}`)))?.[1]);
    const own = { 'bot blocker (browser UA)': ns('ServeHTTP/browser'), 'circuit breaker (closed)': ns('HandlerClosed'), 'retry_match on a 200': ns('RetryMatchOnSuccess') };
    const sum = Object.values(own).reduce((a, b) => a + b, 0);
    console.log(`  the modules' own code per request (go test -bench): ${Object.entries(own).map(([k, v]) => `${k} ${v.toFixed(0)} ns`).join(', ')}; together ${(sum / 1000).toFixed(2)} µs = ${((sum / 1000 / all.plain.caddyUs) * 100).toFixed(2)}% of Caddy's CPU per plain request in this run`);
  } finally {
    stopAll();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
