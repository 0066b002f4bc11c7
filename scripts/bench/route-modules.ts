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
//
// Method. On this kind of machine (two shared cores) Caddy's CPU cost per request drifts by ±15 %
// from one second to the next whatever it serves, far more than the modules cost, so one long run
// per route proves nothing. Instead wrk (-t1 -c32, a browser User-Agent) makes short runs
// (BENCH_DURATION, default 1 s) after one 2 s warm-up per route, in rounds (BENCH_ROUNDS, default
// 40): each round runs plain, all and control once, the order cycling through all six orders.
// control is a second plain route, an A/A check measured in the same rounds: its distance from
// 100 % is what the machine's noise does to a ratio. A ratio is that of the summed requests/s of
// the two routes over the rounds, with a 95 % interval from a moving block bootstrap (blocks of 4
// rounds, 2,000 resamples, fixed seed). Then plain and mirror in half as many rounds. Each run
// also reads Caddy's CPU time from /proc (user + system) and divides it by the requests served: µs
// of Caddy CPU per request, compared the same way. With two or more cores Caddy runs alone on CPU 1
// (GOMAXPROCS=1) and everything else on CPU 0 (BENCH_PIN=0 turns that off). Target: all >= 95 % of
// plain's requests/s. Last, `go test -bench` gives what the modules' own code costs per request
// (bot blocker, breaker, the bodiless matcher, retry_match evaluation on a success), as a share of
// Caddy's CPU per request; in the running server, with cold caches, these cost several times more.
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../../test/lib/ports.js';
import { median, parseWrk, request, root, startBenchSidecar, stopAll, track } from './lib.js';
import { waitFor } from '../../test/lib/wait.js';
import type { PeerCreatedBody } from '../../sidecar/test/lib/protocol.js';

const DURATION = process.env.BENCH_DURATION ?? '1s';
const CONNS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 40);
const UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36';

interface WrkResult {
  rps: number;
  p99: number;
  errors: string;
  requests: number;
  /** Caddy's CPU time (user + system) during the measured run, in microseconds. */
  caddyCpuUs: number;
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

const wrkArgs = (host: string, duration: string, url: string) => [
  '-t1',
  `-c${CONNS}`,
  `-d${duration}`,
  '--latency',
  '-H',
  `Host: ${host}`,
  '-H',
  `User-Agent: ${UA}`,
  url,
];
const warm = (url: string, host: string) => execFileSync(...pinned('wrk', wrkArgs(host, '2s', url)), { stdio: 'pipe' });
function wrk(url: string, host: string): WrkResult {
  const before = cpuTicks(caddyPid);
  const out = execFileSync(...pinned('wrk', wrkArgs(host, DURATION, url)), { encoding: 'utf8' });
  const ticks = cpuTicks(caddyPid) - before;
  const { rps, p99, requests, errors } = parseWrk(out);
  return { rps, p99, requests, caddyCpuUs: ticks * TICK_US, errors };
}

/** Summary of one side's runs: summed figures, median p99, the errors seen. */
interface Side {
  rps: number;
  p99: number;
  caddyUs: number;
  errors: string;
}
const side = (xs: WrkResult[]): Side => ({
  rps: xs.reduce((a, x) => a + x.rps, 0) / xs.length,
  p99: median(xs.map((x) => x.p99)),
  caddyUs: xs.reduce((a, x) => a + x.caddyCpuUs, 0) / xs.reduce((a, x) => a + x.requests, 0),
  errors: xs
    .map((x) => x.errors)
    .filter(Boolean)
    .join('; '),
});

/**
 * Ratio of the summed b to the summed a (one entry per round) and its 95 % interval by a moving
 * block bootstrap: rounds are resampled in runs of BLOCK consecutive ones, because the machine's
 * slow spells last several seconds and so touch neighbouring rounds alike. Below 2 × BLOCK rounds
 * the resamples can hardly differ: no interval (lo and hi NaN).
 */
const BLOCK = 4;
function pairedRatio(a: number[], b: number[], resamples = 2000): { ratio: number; lo: number; hi: number } {
  const n = a.length;
  const sum = (xs: number[], idx: number[]) => idx.reduce((s, i) => s + xs[i], 0);
  const all = a.map((_, i) => i);
  const ratio = sum(b, all) / sum(a, all);
  if (n < 2 * BLOCK) return { ratio, lo: NaN, hi: NaN };
  let seed = 0x2545f491; // xorshift32, fixed seed: the same runs give the same interval
  const rnd = () => {
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    return (seed >>> 0) / 2 ** 32;
  };
  const rs: number[] = [];
  for (let k = 0; k < resamples; k++) {
    const idx: number[] = [];
    while (idx.length < n) {
      const start = Math.floor(rnd() * (n - BLOCK + 1));
      for (let j = 0; j < BLOCK && idx.length < n; j++) idx.push(start + j);
    }
    rs.push(sum(b, idx) / sum(a, idx));
  }
  rs.sort((x, y) => x - y);
  return { ratio, lo: rs[Math.floor(resamples * 0.025)], hi: rs[Math.ceil(resamples * 0.975) - 1] };
}

/** Every order of xs (Heap's algorithm); rounds cycle through them so no host always runs first. */
function permutations<T>(xs: T[]): T[][] {
  const out: T[][] = [];
  const a = [...xs];
  const c = a.map(() => 0);
  out.push([...a]);
  for (let i = 1; i < a.length;) {
    if (c[i] < i) {
      const j = i % 2 ? c[i] : 0;
      [a[j], a[i]] = [a[i], a[j]];
      out.push([...a]);
      c[i]++;
      i = 1;
    } else c[i++] = 0;
  }
  return out;
}

async function main(): Promise<void> {
  const octet = 10 + (process.pid % 200);
  // pinned: Caddy's Go runtime sizes itself to the one CPU it gets (it starts before taskset)
  const bench = await startBenchSidecar({ name: 'modules', subnet: `127.79.${octet}.0/24`, env: PIN ? { GOMAXPROCS: '1' } : {} });
  const { sidecar, backendBin, api } = bench;
  const ports = { ...bench.ports, backend: await freePort(), mirror: await freePort() };
  try {
    const peer = (await api<PeerCreatedBody>('POST', '/peers', { name: 'bench-peer' })).data.peer;
    const peerAddr = String(peer.address).split('/')[0];
    for (const p of [ports.backend, ports.mirror]) {
      track(spawn(...pinned(backendBin, [`${peerAddr}:${p}`]), { stdio: 'ignore' }));
      await waitFor(async () => (await request(p, 'GET', '/', { addr: peerAddr })).status === 200, 10_000, 'a backend');
    }
    const routes: Record<string, Record<string, unknown>> = {
      'plain.bench.test': {},
      'control.bench.test': {}, // the same as plain: the A/A control shows this machine's noise
      'all.bench.test': {
        bot_blocker_enabled: true,
        bot_blocker_mode: 'block',
        circuit_breaker_enabled: true,
        retry_enabled: true,
        retry_count: 3,
        retry_status_codes: '502,503,504',
        compress_enabled: false,
      },
      'mirror.bench.test': { mirror_enabled: true, mirror_targets: [{ peer_id: peer.id, port: ports.mirror }] },
      // BENCH_BREAKDOWN=1: one module at a time
      'bots.bench.test': { bot_blocker_enabled: true, bot_blocker_mode: 'block' },
      'breaker.bench.test': { circuit_breaker_enabled: true },
      'retry.bench.test': { retry_enabled: true, retry_count: 3, retry_status_codes: '502,503,504' },
    };
    for (const [domain, extra] of Object.entries(routes)) {
      const r = await api('POST', '/routes', { domain, peer_id: peer.id, target_port: ports.backend, ...extra });
      if (r.status !== 201) throw new Error(`creating ${domain}: ${JSON.stringify(r.data)}`);
      if ((await request(ports.http, 'GET', '/', { host: domain, headers: { 'user-agent': UA } })).status !== 200)
        throw new Error(`${domain} does not answer through Caddy`);
    }
    if ((await request(ports.http, 'GET', '/', { host: 'all.bench.test', headers: { 'user-agent': 'sqlmap/1.7' } })).status !== 403)
      throw new Error('the bot blocker does not block sqlmap');

    caddyPid = bench.caddyPid;
    pin(caddyPid, 1);
    pin(sidecar.pid!, 0);
    const url = `http://127.0.0.1:${ports.http}/`;
    for (const h of Object.keys(routes)) warm(url, h);
    const PLAIN = 'plain.bench.test';
    // n rounds; each round runs every host once, in an order that cycles through all orders
    const measure = (hosts: string[], n: number) => {
      const runs = new Map<string, WrkResult[]>(hosts.map((h) => [h, []]));
      const orders = permutations(hosts);
      for (let i = 0; i < n; i++) {
        for (const h of orders[i % orders.length]) runs.get(h)!.push(wrk(url, h));
        if (process.env.BENCH_VERBOSE === '1')
          process.stderr.write(
            `  round ${i + 1}: ${hosts
              .map((h) => {
                const x = runs.get(h)!.at(-1)!;
                return `${h.split('.')[0]} ${Math.round(x.rps)} req/s ${(x.caddyCpuUs / x.requests).toFixed(1)} µs`;
              })
              .join(', ')}\n`,
          );
      }
      const p = runs.get(PLAIN)!;
      const cpuPerReq = (xs: WrkResult[]) => xs.map((x) => x.caddyCpuUs / x.requests);
      const vs = (h: string) => ({
        plain: side(p),
        other: side(runs.get(h)!),
        rps: pairedRatio(
          p.map((x) => x.rps),
          runs.get(h)!.map((x) => x.rps),
        ),
        cpu: pairedRatio(cpuPerReq(p), cpuPerReq(runs.get(h)!)),
      });
      return vs;
    };
    process.stderr.write(`measuring plain, all modules and control (a second plain route: A/A) in ${ROUNDS} rounds\n`);
    const main3 = measure([PLAIN, 'all.bench.test', 'control.bench.test'], ROUNDS);
    const all = main3('all.bench.test');
    const control = main3('control.bench.test');
    process.stderr.write(`measuring plain and mirror in ${Math.ceil(ROUNDS / 2)} rounds\n`);
    const mir = measure([PLAIN, 'mirror.bench.test'], Math.ceil(ROUNDS / 2))('mirror.bench.test');
    const breakdown: [string, ReturnType<typeof main3>][] = [];
    if (process.env.BENCH_BREAKDOWN === '1') {
      const one = ['bots.bench.test', 'breaker.bench.test', 'retry.bench.test'];
      process.stderr.write(`measuring plain and each module alone in ${ROUNDS} rounds\n`);
      const m = measure([PLAIN, ...one], ROUNDS);
      for (const h of one) breakdown.push([h, m(h)]);
    }
    const mirrorMetrics = await new Promise<string>((resolve) => {
      http
        .get({ host: '127.0.0.1', port: ports.admin, path: '/metrics' }, (res) => {
          let t = '';
          res.on('data', (c) => (t += c));
          res.on('end', () => resolve(t));
        })
        .on('error', () => resolve(''));
    });
    const mirrored = mirrorMetrics
      .split('\n')
      .filter((l) => l.startsWith('gatehouse_mirror_requests_total'))
      .join('\n    ');

    console.log(
      `route modules through Caddy: wrk -t1 -c${CONNS}, ${DURATION} runs, ${ROUNDS} rounds of plain/all/control (and ${Math.ceil(ROUNDS / 2)} of plain/mirror) in rotating order, ${PIN ? 'Caddy pinned to CPU 1 (GOMAXPROCS=1), the rest to CPU 0' : 'no CPU pinning'}, load average ${os
        .loadavg()
        .map((x) => x.toFixed(2))
        .join(' ')}`,
    );
    console.log(
      `  requests/s: mean over the runs; p99: median over the runs; ratios to plain: summed figures, [95 % interval, bootstrap over blocks of ${BLOCK} rounds]`,
    );
    const pct = (r: { ratio: number; lo: number; hi: number }) =>
      `${(r.ratio * 100).toFixed(1)}% ${Number.isNaN(r.lo) ? '[no interval]' : `[${(r.lo * 100).toFixed(1)}-${(r.hi * 100).toFixed(1)}]`}`;
    const row = (label: string, r: Side, extra = '') =>
      console.log(
        `  ${label.padEnd(58)} ${String(Math.round(r.rps)).padStart(7)} req/s  p99 ${r.p99.toFixed(2).padStart(6)} ms  Caddy CPU ${r.caddyUs.toFixed(1).padStart(5)} µs/req  ${extra}${r.errors ? `  (${r.errors})` : ''}`,
      );
    const ratio = (p: ReturnType<ReturnType<typeof measure>>) => `throughput ${pct(p.rps)}, Caddy CPU/req ${pct(p.cpu)}`;
    row('plain route (no module)', all.plain);
    row('all modules (bot blocker, breaker, retries; no compression)', all.other, ratio(all));
    row('control: another plain route (A/A, same rounds)', control.other, `${ratio(control)} (the noise of this measurement)`);
    row('plain route (in the mirror rounds)', mir.plain);
    row('mirror only (one target)', mir.other, ratio(mir));
    for (const [h, r] of breakdown) row(`${h.split('.')[0]} only (paired plain ${Math.round(r.plain.rps)} req/s)`, r.other, ratio(r));
    const verdict = Number.isNaN(all.rps.lo)
      ? `not shown: ${ROUNDS} rounds give no interval (BENCH_ROUNDS >= ${2 * BLOCK})`
      : all.rps.lo >= 0.95
        ? 'met: the whole interval is at or above 95%'
        : all.rps.ratio >= 0.95
          ? 'met by the estimate, but the interval reaches below 95%: run more rounds (BENCH_ROUNDS)'
          : 'NOT met';
    console.log(`  target, all modules >= 95% of plain's requests/s: ${verdict}`);
    if (mirrored) console.log(`  mirror counters:\n    ${mirrored}`);
    // What the modules' own code costs per request, measured in-process (steadier than wrk here).
    const goBench = execFileSync(
      'go',
      [
        'test',
        '-run',
        '^$',
        '-bench',
        'ServeHTTP/browser|HandlerClosed|RetryMatchOnSuccess/lean|Bodiless',
        '-benchtime',
        '2s',
        '-cpu',
        '1',
        './botblock',
        './circuitbreaker',
        './bodiless',
        './retrytest',
      ],
      { cwd: path.join(root, 'caddy-modules'), encoding: 'utf8' },
    );
    // -cpu 1: ns/op is CPU time per request (the breaker's benchmark runs in parallel); the first
    // "ns/op" after a benchmark's name is its figure (a module's debug log may come in between)
    const ns = (name: string) => Number(/([\d.]+) ns\/op/.exec(goBench.slice(goBench.indexOf(`Benchmark${name}`)))?.[1]);
    const own = {
      'bot blocker (browser UA)': ns('ServeHTTP/browser'),
      'circuit breaker (closed)': ns('HandlerClosed'),
      gatehouse_bodiless: ns('Bodiless'),
      'retry_match on a 200 (lean copy)': ns('RetryMatchOnSuccess/lean'),
    };
    const sum = Object.values(own).reduce((a, b) => a + b, 0);
    console.log(
      `  the modules' own code per request (go test -bench): ${Object.entries(own)
        .map(([k, v]) => `${k} ${v.toFixed(0)} ns`)
        .join(
          ', ',
        )}; together ${(sum / 1000).toFixed(2)} µs = ${((sum / 1000 / all.plain.caddyUs) * 100).toFixed(2)}% of Caddy's CPU per plain request in this run`,
    );
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
