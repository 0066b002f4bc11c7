// Shared by the benchmarks that run a throwaway sidecar with the real custom Caddy (routes.ts,
// route-modules.ts): HTTP and wait helpers, wrk output parsing, child processes stopped on exit,
// and startBenchSidecar().
//
// startBenchSidecar({ name, subnet, env }): a temporary data directory, the sidecar as a child process
// (SQLite, GATEHOUSE_MANAGE_CADDY=true with bin/caddy, GATEHOUSE_WG_MANAGE=false, GATEHOUSE_WG_SUBNET
// = subnet, which should be in 127.0.0.0/8 so peer addresses are loopback addresses that Caddy can
// dial and a backend can listen on), the trivial Go backend built from routes-backend.go, a signed-in
// full-access API token, and the PID of the Caddy the sidecar supervises. env adds to (or overrides)
// the sidecar's environment, which Caddy inherits.
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CADDY as BUILT_CADDY, managedCaddyEnv } from '../../test/lib/caddy-env.js';
import { freePort } from '../../test/lib/ports.js';
import { waitFor } from '../../test/lib/wait.js';
import type { CaddyStatusBody, TokenCreatedBody } from '../../sidecar/test/lib/protocol.js';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const CADDY = process.env.GATEHOUSE_CADDY_BIN ?? BUILT_CADDY;
const PASSWORD = 'bench-password-1';

export const median = (xs: number[]) => {
  const a = [...xs].sort((x, y) => x - y);
  return a.length % 2 ? a[(a.length - 1) / 2] : (a[a.length / 2 - 1] + a[a.length / 2]) / 2;
};

/** One HTTP request without keep-alive; the body is parsed as JSON when it is JSON. */
export function request<T = unknown>(
  port: number,
  method: string,
  p: string,
  opts: { host?: string; headers?: Record<string, string>; body?: unknown; addr?: string } = {},
): Promise<{ status: number; data: T }> {
  return new Promise((resolve, reject) => {
    const body = opts.body === undefined ? undefined : JSON.stringify(opts.body);
    const req = http.request(
      {
        host: opts.addr ?? '127.0.0.1',
        port,
        method,
        path: p,
        agent: false,
        headers: { ...(opts.host ? { host: opts.host } : {}), ...(body ? { 'content-type': 'application/json' } : {}), ...opts.headers },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c) => (text += c));
        res.on('end', () => {
          let data: unknown = text;
          try {
            data = JSON.parse(text);
          } catch {
            /* text */
          }
          // reason: the caller names the body's type (the endpoint's response schema); the text when it is not JSON
          resolve({ status: res.statusCode ?? 0, data: data as T });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

function parseLatency(v: string): number {
  const m = /^([\d.]+)(us|ms|s)$/.exec(v);
  if (!m) return NaN;
  const x = Number(m[1]);
  return m[2] === 'us' ? x / 1000 : m[2] === 's' ? x * 1000 : x;
}

export interface WrkOutput {
  rps: number;
  requests: number;
  /** milliseconds */
  p50: number;
  p99: number;
  /** non-2xx responses and socket errors, '' when none */
  errors: string;
}

/** The figures of one `wrk --latency` run. */
export function parseWrk(out: string): WrkOutput {
  const non2xx = /Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1];
  const sockErr = /Socket errors:(.*)/.exec(out)?.[1]?.trim();
  return {
    rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1]),
    requests: Number(/(\d+) requests in/.exec(out)?.[1]),
    p50: parseLatency(/^\s+50%\s+(\S+)/m.exec(out)?.[1] ?? ''),
    p99: parseLatency(/^\s+99%\s+(\S+)/m.exec(out)?.[1] ?? ''),
    errors: [non2xx ? `non-2xx ${non2xx}` : '', sockErr ? `socket errors ${sockErr}` : ''].filter(Boolean).join(', '),
  };
}

const children: ChildProcess[] = [];
/** SIGTERM to every tracked child still running. */
export function stopAll(): void {
  for (const c of children) if (c.exitCode === null && c.signalCode === null && c.pid) process.kill(c.pid, 'SIGTERM');
}
/** A child process that is stopped (SIGTERM) when the benchmark exits, however it exits. */
export function track<T extends ChildProcess>(c: T): T {
  children.push(c);
  return c;
}
process.on('exit', stopAll);
process.on('SIGINT', () => process.exit(130));
process.on('SIGTERM', () => process.exit(143));

export interface BenchSidecar {
  dir: string;
  /** the sidecar's environment (GATEHOUSE_DATA_DIR etc.) */
  env: Record<string, string>;
  ports: { api: number; http: number; https: number; admin: number };
  sidecar: ChildProcess;
  caddyPid: number;
  /** the trivial Go backend (usage: routes-backend <host:port>) */
  backendBin: string;
  api<T = unknown>(method: string, p: string, body?: unknown): Promise<{ status: number; data: T }>;
}

let built = false;
/**
 * The sidecar as `npm start` runs it: compiled (sidecar/dist, built here once per benchmark run so it
 * is the tree's code), without tsx's on-the-fly compilation and source-mapped stack traces, which
 * cost every database query a few hundred microseconds (Sequelize reads a stack per query).
 */
function buildSidecar(): void {
  if (built) return;
  execFileSync('npm', ['run', '-s', '-w', '@gatehouse/sidecar', 'build'], { cwd: root, stdio: 'inherit' });
  built = true;
}

export async function startBenchSidecar(opts: { name: string; subnet: string; env?: Record<string, string> }): Promise<BenchSidecar> {
  if (!fs.existsSync(CADDY)) throw new Error(`${CADDY} not found: build it with bash scripts/build-caddy.sh`);
  buildSidecar();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `gatehouse-bench-${opts.name}-`));
  const ports = { api: await freePort(), http: await freePort(), https: await freePort(), admin: await freePort() };
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    GATEHOUSE_DATA_DIR: path.join(dir, 'data'),
    GATEHOUSE_PORT: String(ports.api),
    GATEHOUSE_BIND: '127.0.0.1',
    GATEHOUSE_ADMIN_USER: 'admin',
    GATEHOUSE_ADMIN_PASSWORD: PASSWORD,
    ...managedCaddyEnv(ports, '127.0.0.1', CADDY),
    GATEHOUSE_WG_MANAGE: 'false',
    GATEHOUSE_WG_SUBNET: opts.subnet,
    GATEHOUSE_RATE_LIMIT_ADMIN: '100000000',
    GATEHOUSE_LOG_LEVEL: 'warn',
    ...opts.env,
  };
  delete env.DATABASE_URL;
  const backendBin = path.join(dir, 'routes-backend');
  execFileSync('go', ['build', '-o', backendBin, path.join(root, 'scripts/bench/routes-backend.go')], { stdio: 'inherit', cwd: dir });

  const log = fs.openSync(path.join(dir, 'sidecar.log'), 'a');
  const sidecar = track(
    spawn(process.execPath, ['--conditions=gatehouse-compiled', path.join(root, 'sidecar/dist/main.js')], {
      env,
      stdio: ['ignore', log, log],
      cwd: path.join(root, 'sidecar'),
    }),
  );
  await waitFor(async () => (await request(ports.api, 'GET', '/health')).status === 200, 60_000, `the sidecar (see ${dir}/sidecar.log)`);
  const login = await new Promise<{ cookie: string; csrf: string }>((resolve, reject) => {
    const body = JSON.stringify({ username: 'admin', password: PASSWORD });
    const req = http.request(
      { host: '127.0.0.1', port: ports.api, method: 'POST', path: '/login', headers: { 'content-type': 'application/json', accept: 'application/json' } },
      (res) => {
        let t = '';
        res.on('data', (c) => (t += c));
        res.on('end', () => resolve({ cookie: (res.headers['set-cookie'] ?? []).map((c) => c.split(';')[0]).join('; '), csrf: JSON.parse(t).csrfToken }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
  const tok = await request<TokenCreatedBody>(ports.api, 'POST', '/api/v1/tokens', {
    headers: { cookie: login.cookie, 'x-csrf-token': login.csrf },
    body: { name: 'bench', scopes: ['full-access'] },
  });
  const auth = { authorization: `Bearer ${tok.data.token}` };
  const api = <T = unknown>(method: string, p: string, body?: unknown) => request<T>(ports.api, method, `/api/v1${p}`, { headers: auth, body });
  const caddyPid = Number((await api<CaddyStatusBody>('GET', '/caddy/status')).data.pid);
  if (!caddyPid) throw new Error('the sidecar reports no Caddy process');
  return { dir, env, ports, sidecar, caddyPid, backendBin, api };
}
