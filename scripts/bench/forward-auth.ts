// Benchmark: the cost of route auth (Caddy forward_auth → the sidecar's GET /route-auth/verify) on a
// proxied request, end to end through the real custom Caddy loaded by the sidecar itself
// (GATEHOUSE_MANAGE_CADDY=true, the renderer's own JSON). Two routes to the same backend:
// `open.bench` (no protection) and `protected.bench` (route auth, email_password), requested with a
// valid session cookie. wrk -t1 with 1 connection and with BENCH_CONNECTIONS (default 32).
// Prints requests/s, p50/p99, the p50 added by forward auth, and the non-2xx count of each run.
//
// No WireGuard is needed: the sidecar runs with GATEHOUSE_WG_MANAGE=false and a peer subnet inside
// 127.0.0.0/8 (127.77.0.0/24), so the peer's "tunnel address" is a loopback address and the backend
// (a node http server) listens there; nothing is added to any interface.
//   bash scripts/bench/forward-auth.sh
//   BENCH_DURATION=10s BENCH_CONNECTIONS=32 bash scripts/bench/forward-auth.sh
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { loadConfig } from '../../sidecar/src/config.js';
import { startServer } from '../../sidecar/src/server.js';
import { createLogger } from '../../sidecar/src/util/logger.js';
import { CADDY, managedCaddyEnv } from '../../test/lib/caddy-env.js';
import { freePort } from '../../test/lib/ports.js';

const run = promisify(execFile);
const duration = process.env.BENCH_DURATION ?? '10s';
const conns = Number(process.env.BENCH_CONNECTIONS ?? 32);

function toMs(v: string): number {
  const n = parseFloat(v);
  if (v.endsWith('us')) return n / 1000;
  if (v.endsWith('ms')) return n;
  if (v.endsWith('s')) return n * 1000;
  return n;
}

interface WrkResult {
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: string;
}

async function wrk(c: number, url: string, headers: Record<string, string>): Promise<WrkResult> {
  const h = Object.entries(headers).flatMap(([k, v]) => ['-H', `${k}: ${v}`]);
  await run('wrk', ['-t1', `-c${c}`, '-d2s', ...h, url]); // warm-up
  const { stdout } = await run('wrk', ['-t1', `-c${c}`, `-d${duration}`, '--latency', ...h, url]);
  const line = (re: RegExp) => stdout.split('\n').find((l) => re.test(l)) ?? '';
  return {
    rps: parseFloat(
      line(/Requests\/sec/)
        .split(/\s+/)
        .pop() ?? '0',
    ),
    p50: toMs(
      line(/^\s*50%/)
        .trim()
        .split(/\s+/)[1] ?? '0',
    ),
    p99: toMs(
      line(/^\s*99%/)
        .trim()
        .split(/\s+/)[1] ?? '0',
    ),
    non2xx:
      Number(
        line(/Non-2xx/)
          .trim()
          .split(/\s+/)
          .pop() ?? 0,
      ) || 0,
    errors: line(/Socket errors/).trim(),
  };
}

async function main(): Promise<void> {
  if (!fs.existsSync(CADDY)) throw new Error(`no ${CADDY}: build it with bash scripts/build-caddy.sh`);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-bench-fwd-'));
  const ports = { api: await freePort(), http: await freePort(), https: await freePort(), admin: await freePort() };
  const backendHost = '127.77.0.2';
  const backend = http.createServer((_q, s) => {
    s.setHeader('content-type', 'text/plain');
    s.end('ok\n');
  });
  backend.keepAliveTimeout = 65_000;
  await new Promise<void>((r) => backend.listen(0, backendHost, () => r()));
  const backendPort = (backend.address() as net.AddressInfo).port;
  const config = loadConfig({
    GATEHOUSE_DATA_DIR: dataDir,
    GATEHOUSE_PORT: String(ports.api),
    GATEHOUSE_BIND: '127.0.0.1',
    GATEHOUSE_ADMIN_PASSWORD: 'bench-password-1',
    GATEHOUSE_WG_MANAGE: 'false',
    GATEHOUSE_WG_SUBNET: '127.77.0.0/24',
    ...managedCaddyEnv(ports),
    GATEHOUSE_TLS: 'internal',
    GATEHOUSE_LOG_LEVEL: 'error',
  });
  const running = await startServer(config, { startFeatures: true, log: createLogger('error', true) });
  try {
    const deps = running.deps;
    const peer = await deps.peers.create({ name: 'bench-peer' });
    const peerId = Number(peer.id);
    const address = String(peer.address).split('/')[0];
    if (address !== backendHost) throw new Error(`the peer got ${address}, expected ${backendHost}`);
    await deps.routes.create({ domain: 'open.bench', peer_id: peerId, target_port: backendPort });
    const prot = await deps.routes.create({ domain: 'protected.bench', peer_id: peerId, target_port: backendPort });
    const svc = deps.routeAuth;
    await svc.save(Number(prot.id), { method: 'email_password', email: 'bench@example.test', password: 'bench password', session_max_age: 86_400_000 });
    const token = await svc.createSession(Number(prot.id), 'bench@example.test', 'active', 'email_password', 86_400_000);
    const cookie = `gh_ra_${prot.id}=${token}`;
    const url = `http://127.0.0.1:${ports.http}/some/page?x=1`;

    // sanity: the protected route refuses without the cookie and serves with it; the open one serves
    const probe = async (host: string, extra: Record<string, string> = {}) => {
      const { stdout } = await run('curl', [
        '-s',
        '-o',
        '/dev/null',
        '-w',
        '%{http_code}',
        '-H',
        `Host: ${host}`,
        ...Object.entries(extra).flatMap(([k, v]) => ['-H', `${k}: ${v}`]),
        url,
      ]);
      return stdout;
    };
    const checks = {
      open: await probe('open.bench'),
      noCookie: await probe('protected.bench'),
      withCookie: await probe('protected.bench', { Cookie: cookie }),
    };
    if (checks.open !== '200' || checks.noCookie !== '302' || checks.withCookie !== '200') throw new Error(`sanity check failed: ${JSON.stringify(checks)}`);

    const load = fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
    console.log(
      `bench forward-auth through Caddy: wrk -t1, ${duration} per run (2 s warm-up), loopback, ${os.cpus().length} cores, SQLite, sidecar under tsx, ${process.version}, load ${load}`,
    );
    console.log(`  sanity: open ${checks.open}, protected without cookie ${checks.noCookie}, with cookie ${checks.withCookie}`);
    const fmt = (name: string, r: WrkResult) =>
      console.log(
        `  ${name.padEnd(40)} ${r.rps.toFixed(0).padStart(8)} req/s   p50 ${r.p50.toFixed(3).padStart(7)} ms   p99 ${r.p99.toFixed(3).padStart(7)} ms   non-2xx ${r.non2xx} ${r.errors}`,
      );
    for (const c of [1, conns]) {
      console.log(`${c} connection${c === 1 ? '' : 's'}:`);
      const open = await wrk(c, url, { Host: 'open.bench' });
      fmt('unprotected route', open);
      const p = await wrk(c, url, { Host: 'protected.bench', Cookie: cookie });
      fmt('route auth, valid session', p);
      console.log(
        `  → added p50 ${(p.p50 - open.p50).toFixed(3)} ms, added p99 ${(p.p99 - open.p99).toFixed(3)} ms, throughput ratio ${(p.rps / open.rps).toFixed(2)}, protected non-2xx ${p.non2xx}`,
      );
    }
  } finally {
    await running.close();
    backend.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
