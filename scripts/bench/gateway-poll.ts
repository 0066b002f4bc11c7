// Benchmark: 1,000 gateways polling GET /api/v1/gateway/config/check on loopback, each with its own
// real gateway token and its current config hash (the steady state: every answer is a 304).
//
// A throwaway sidecar (SQLite, no Caddy, no WireGuard) runs in a child process; 1,000 gateway peers
// are created through the peers service with real tokens (GatewaysService.issueTokens), each with
// one HTTP gateway route. Then, from this process:
//   1. warm-up: every gateway fetches GET /config once (its hash; checks the answers)
//   2. saturation: wrk -t1 -c1000, one keep-alive connection per gateway, tokens round-robin
//      (baseline from the same run: the same path without a token, answered 401 before any lookup)
//   3. the real schedule: every gateway polls every 10 s (random phase) for 30 s: latency at ~100 req/s
//   4. cold cache: a route write drops every cached config; the next check of all 1,000 gateways at once
// Prints requests/s, p50 and p99 for each.
//   node --import tsx scripts/bench/gateway-poll.ts        (BENCH_GATEWAYS=1000 BENCH_DURATION=10s)
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../../test/lib/ports.js';

const GATEWAYS = Number(process.env.BENCH_GATEWAYS ?? 1000);
const DURATION = process.env.BENCH_DURATION ?? '10s';

interface Setup {
  url: string;
  adminToken: string;
  routeId: number;
  gateways: { peerId: number; token: string }[];
  createMs: number;
}

// ------------------------------------------------------------------------------------ server side

async function serve(): Promise<void> {
  const { loadConfig } = await import('../../sidecar/src/config.js');
  const { startServer } = await import('../../sidecar/src/server.js');
  const { createLogger } = await import('../../sidecar/src/util/logger.js');
  const { blankRoute, routeToRow } = await import('../../sidecar/src/routes/model.js');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-bench-gw-'));
  const port = Number(process.argv[3]);
  const config = loadConfig({
    GATEHOUSE_DATA_DIR: dir,
    GATEHOUSE_PORT: String(port),
    GATEHOUSE_ADMIN_USER: 'admin',
    GATEHOUSE_ADMIN_PASSWORD: 'bench-password-1',
    GATEHOUSE_MANAGE_CADDY: 'false',
    GATEHOUSE_WG_MANAGE: 'false',
    GATEHOUSE_WG_SUBNET: '10.200.0.0/20',
    GATEHOUSE_PUBLIC_HOST: 'bench.example.test',
    GATEHOUSE_RATE_LIMIT_ADMIN: '100000000',
    GATEHOUSE_LOG_LEVEL: 'error',
    GATEHOUSE_GATEWAY_TUNNEL_LISTEN: 'false',
    // the simulated companions poll from 127.0.0.1, not from their tunnel addresses
    GATEHOUSE_GATEWAY_TOKEN_ANY_SOURCE: 'true',
  });
  const running = await startServer(config, { log: createLogger('error', true) });
  const { deps } = running;
  const peers = deps.peers;
  const gws = deps.gateways;
  const t0 = performance.now();
  const gateways: Setup['gateways'] = [];
  for (let i = 0; i < GATEWAYS; i++) {
    const p = await peers.create({ name: `bench-gw-${i}`, is_gateway: true });
    const { apiToken } = await gws.issueTokens(p.id);
    gateways.push({ peerId: p.id, token: apiToken });
  }
  const now = Date.now();
  await deps.db.models.Route.bulkCreate(
    gateways.map((g, i) =>
      routeToRow({
        ...blankRoute(now),
        domain: `gw${i}.bench.example.test`,
        target_kind: 'gateway',
        target_peer_id: g.peerId,
        target_lan_host: '192.168.1.10',
        target_lan_port: 8000 + (i % 1000),
      }),
    ),
  );
  await deps.proxy.apply({ reason: 'bench routes' });
  const createMs = performance.now() - t0;
  const admin = await deps.tokens.create({ name: 'bench', scopes: ['full-access'] });
  const routeId = Number((await deps.db.models.Route.findOne({ attributes: ['id'], order: [['id', 'ASC']] }))!.get('id'));
  const setup: Setup = { url: running.url.replace(/:\d+$/, `:${port}`), adminToken: admin.token, routeId, gateways, createMs };
  fs.writeFileSync(process.argv[4], JSON.stringify(setup));
  process.stdout.write('READY\n');
  const stop = async () => {
    await running.close();
    fs.rmSync(dir, { recursive: true, force: true });
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop());
}

// ------------------------------------------------------------------------------------ load side

const agent = new http.Agent({ keepAlive: true, maxSockets: 2000 });
function request(url: string, token?: string): Promise<{ status: number; body: string; ms: number }> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent, headers: token ? { authorization: `Bearer ${token}` } : {} }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, ms: performance.now() - t0 }));
    });
    req.on('error', reject);
  });
}

function pct(sorted: number[], p: number): number {
  if (!sorted.length) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}
const ms = (v: number) => `${v.toFixed(2)} ms`;

function wrk(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    // wrk needs a file descriptor per connection: raise the limit for it
    execFile('bash', ['-c', 'ulimit -n 65536 2>/dev/null; exec wrk "$@"', 'wrk', ...args], { maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) =>
      err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout),
    );
  });
}

function parseWrk(out: string): { rps: number; p50: string; p99: string; requests: number; errors: string } {
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1]);
  const p50 = /^\s+50%\s+(\S+)/m.exec(out)?.[1] ?? '?';
  const p99 = /^\s+99%\s+(\S+)/m.exec(out)?.[1] ?? '?';
  const requests = Number(/(\d+) requests in/.exec(out)?.[1]);
  const non = /Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1];
  const sock = /Socket errors:([^\n]+)/.exec(out)?.[1]?.trim();
  return { rps, p50, p99, requests, errors: [non ? `${non} non-2xx/3xx` : '', sock ? `socket errors: ${sock}` : ''].filter(Boolean).join(', ') || 'none' };
}

async function main(): Promise<void> {
  if (process.argv[2] === '--serve') return serve();
  const haveWrk = await new Promise<boolean>((r) => execFile('wrk', ['--version'], (err, out, errOut) => r(!err || /wrk/.test(`${out}${errOut}`))));
  if (!haveWrk) throw new Error('wrk is missing: apt-get install wrk');
  const port = await freePort();
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-bench-gw-load-'));
  const setupFile = path.join(tmp, 'setup.json');
  const child = spawn(
    'bash',
    ['-c', 'ulimit -n 65536 2>/dev/null; exec "$@"', 'node', process.execPath, '--import', 'tsx', import.meta.filename, '--serve', String(port), setupFile],
    {
      cwd: path.resolve(import.meta.dirname, '..', '..'),
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const stopChild = () => {
    if (child.exitCode === null) child.kill('SIGTERM');
  };
  process.on('exit', stopChild);
  try {
    await new Promise<void>((resolve, reject) => {
      let out = '';
      child.stdout!.on('data', (d) => {
        out += d;
        if (out.includes('READY')) resolve();
      });
      child.once('exit', (code) => reject(new Error(`server exited (${code})`)));
    });
    const setup = JSON.parse(fs.readFileSync(setupFile, 'utf8')) as Setup;
    const base = `${setup.url}/api/v1/gateway`;
    console.log(
      `bench gateway-poll: ${GATEWAYS} gateway peers created through the peers service with real tokens and one gateway route each in ${(setup.createMs / 1000).toFixed(1)} s`,
    );
    console.log(`  conditions: loopback, ${os.cpus().length} cores (server, wrk and this script share them), SQLite, node ${process.version}`);

    // 1. warm-up: every gateway's current hash
    const hashes: string[] = new Array(GATEWAYS);
    for (let i = 0; i < GATEWAYS; i += 50) {
      await Promise.all(
        setup.gateways.slice(i, i + 50).map(async (g, j) => {
          const r = await request(`${base}/config`, g.token);
          if (r.status !== 200) throw new Error(`GET /config: ${r.status} ${r.body}`);
          const data = JSON.parse(r.body);
          if (data.peer_id !== g.peerId || data.routes.length !== 1) throw new Error('unexpected configuration');
          hashes[i + j] = data.config_hash;
        }),
      );
    }
    const check304 = await request(`${base}/config/check?hash=${hashes[0]}`, setup.gateways[0].token);
    if (check304.status !== 304) throw new Error(`expected 304, got ${check304.status}`);

    // 2. saturation with wrk: one connection per gateway
    const lua = path.join(tmp, 'poll.lua');
    fs.writeFileSync(
      lua,
      [
        `local tokens = {${setup.gateways.map((g) => `"${g.token}"`).join(',')}}`,
        `local hashes = {${hashes.map((x) => `"${x}"`).join(',')}}`,
        'local i = 0',
        'request = function()',
        '  i = i + 1',
        '  local k = (i % #tokens) + 1',
        '  return wrk.format("GET", "/api/v1/gateway/config/check?hash=" .. hashes[k], { ["Authorization"] = "Bearer " .. tokens[k] })',
        'end',
      ].join('\n'),
    );
    const conns = Math.min(GATEWAYS, 1000);
    await wrk(['-t1', `-c${conns}`, '-d2s', '-s', lua, setup.url]); // warm-up
    const sat = parseWrk(await wrk(['-t1', `-c${conns}`, `-d${DURATION}`, '--latency', '-s', lua, setup.url]));
    const baseLua = path.join(tmp, 'base.lua');
    fs.writeFileSync(baseLua, `request = function() return wrk.format("GET", "/api/v1/gateway/config/check?hash=${hashes[0]}") end`);
    const baseline = parseWrk(await wrk(['-t1', `-c${conns}`, `-d${DURATION}`, '--latency', '-s', baseLua, setup.url]));
    const c32 = parseWrk(await wrk(['-t1', '-c32', `-d${DURATION}`, '--latency', '-s', lua, setup.url]));
    // the same tokens through the generic endpoint chain (session, router, zod), for comparison
    const fullLua = path.join(tmp, 'full.lua');
    fs.writeFileSync(fullLua, fs.readFileSync(lua, 'utf8').replace('"/api/v1/gateway/config/check?hash=" .. hashes[k]', '"/api/v1/gateway/config"'));
    const full32 = parseWrk(await wrk(['-t1', '-c32', `-d${DURATION}`, '--latency', '-s', fullLua, setup.url]));
    console.log(`  saturation, wrk -t1 -c${conns} -d${DURATION} (one keep-alive connection per gateway, ${conns} distinct tokens, every answer 304):`);
    console.log(`    config/check (304) requests/s: ${sat.rps.toFixed(0)}   p50: ${sat.p50}   p99: ${sat.p99}   errors: ${sat.errors}`);
    console.log(
      `    baseline (same path without a token: 401 before any lookup) requests/s: ${baseline.rps.toFixed(0)}   p50: ${baseline.p50}   p99: ${baseline.p99}   → config/check = ${(sat.rps / baseline.rps).toFixed(2)} × baseline`,
    );
    console.log(
      `  wrk -t1 -c32 -d${DURATION} (same tokens round-robin): config/check requests/s: ${c32.rps.toFixed(0)}   p50: ${c32.p50}   p99: ${c32.p99}   errors: ${c32.errors}`,
    );
    console.log(
      `    for comparison, GET /config (200 + JSON) through the generic endpoint chain: requests/s: ${full32.rps.toFixed(0)}   p50: ${full32.p50}   p99: ${full32.p99}   → config/check = ${(c32.rps / full32.rps).toFixed(2)} × that`,
    );

    // 3. the real schedule: every 10 s per gateway, random phase
    const periodMs = 10_000;
    const runMs = 30_000;
    const lat: number[] = [];
    const statuses = new Map<number, number>();
    const t0 = performance.now();
    await Promise.all(
      setup.gateways.map(async (g, i) => {
        await new Promise((r) => setTimeout(r, Math.random() * periodMs));
        while (performance.now() - t0 < runMs) {
          const next = performance.now() + periodMs;
          const r = await request(`${base}/config/check?hash=${hashes[i]}`, g.token);
          lat.push(r.ms);
          statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
          const wait = next - performance.now();
          if (performance.now() + wait - t0 >= runMs) break;
          await new Promise((res) => setTimeout(res, Math.max(0, wait)));
        }
      }),
    );
    const real = (performance.now() - t0) / 1000;
    lat.sort((a, b) => a - b);
    console.log(
      `  real schedule: ${GATEWAYS} gateways every ${periodMs / 1000} s for ${real.toFixed(0)} s: ${lat.length} checks, ${(lat.length / real).toFixed(0)} requests/s, p50: ${ms(pct(lat, 50))}, p99: ${ms(pct(lat, 99))}, statuses ${JSON.stringify(Object.fromEntries(statuses))}`,
    );

    // 4. cold cache: a route write invalidates every cached config; all gateways check at once
    // (first the same burst with a warm cache, as its baseline)
    const burst = async () => {
      const lat: number[] = [];
      const b0 = performance.now();
      const st = await Promise.all(
        setup.gateways.map(async (g, i) => {
          const r = await request(`${base}/config/check?hash=${hashes[i]}`, g.token);
          lat.push(r.ms);
          return r.status;
        }),
      );
      lat.sort((a, b) => a - b);
      return { lat, st, s: (performance.now() - b0) / 1000 };
    };
    await burst();
    const warm = await burst();
    console.log(
      `  burst, warm cache (${GATEWAYS} checks at once from this script): ${(GATEWAYS / warm.s).toFixed(0)} requests/s, p50: ${ms(pct(warm.lat, 50))}, p99: ${ms(pct(warm.lat, 99))}`,
    );
    const adminH = { authorization: `Bearer ${setup.adminToken}`, 'content-type': 'application/json' };
    const write = await fetch(`${setup.url}/api/v1/routes/${setup.routeId}`, {
      method: 'PUT',
      headers: adminH,
      body: JSON.stringify({ description: `bench ${Date.now()}` }),
    });
    if (write.status !== 200) throw new Error(`route write: ${write.status} ${await write.text()}`);
    const coldB = await burst();
    const changed = coldB.st.filter((x) => x === 200).length;
    console.log(
      `  burst, cold cache (right after a route write: the first miss refills every gateway's config with one query): ${(GATEWAYS / coldB.s).toFixed(0)} requests/s, p50: ${ms(pct(coldB.lat, 50))}, p99: ${ms(pct(coldB.lat, 99))} → p99 = ${(pct(coldB.lat, 99) / pct(warm.lat, 99)).toFixed(2)} × warm; ${changed} × 200 (a description is in no gateway config: 0 expected), ${coldB.st.filter((x) => x === 304).length} × 304`,
    );
    const rss = fs.readFileSync(`/proc/${child.pid}/status`, 'utf8').match(/VmRSS:\s+(\d+ kB)/)?.[1];
    if (rss) console.log(`  server RSS (bash wrapper excluded when exec'd): ${rss}`);
  } finally {
    agent.destroy();
    stopChild();
    await new Promise((r) => setTimeout(r, 300));
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
