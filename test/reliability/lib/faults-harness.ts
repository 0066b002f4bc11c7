// What the "Faults, nothing lost" cases of the reliability suite share:
// - send(): one HTTP request (no keep-alive) with a hard timeout, never throwing: status or error, and its time;
// - Traffic: concurrent request loops against a list of targets, every request recorded, so a test
//   can ask what happened in a window (the longest request, the first full sweep of answers);
// - caddyRoutes(): the hosts Caddy's live configuration serves (GET /config/ on its admin API);
// - wgPeers(): the peers `wg show <if> dump` lists (public keys);
// - SidecarProcess: the real service (sidecar/src/main.ts) as its own process, so it can be killed
//   with a signal and started again on the same data directory / database.
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { waitFor } from '../../lib/wait.js';
import { TEST_PUBLIC_KEY_PEM, testLicenceKey } from '../../../sidecar/test/lib/licence.js';
import { at, obj } from '../../lib/json.js';
import type { BodyOf } from '../../../sidecar/test/lib/api-types.js';

export const ROOT = path.resolve(import.meta.dirname, '..', '..', '..');

export interface Sent {
  status: number | null;
  error: string | null;
  body: string;
  start: number;
  end: number;
  ms: number;
}

/** One request from the host to addr:port with Host `host` (no keep-alive); never throws. */
export function send(
  addr: string,
  port: number,
  host: string,
  p = '/',
  opts: { method?: string; json?: unknown; headers?: Record<string, string>; timeoutMs?: number } = {},
): Promise<Sent> {
  const start = Date.now();
  const t0 = performance.now();
  return new Promise((resolve) => {
    const headers: Record<string, string> = { host, ...opts.headers };
    const body = opts.json === undefined ? undefined : JSON.stringify(opts.json);
    if (body !== undefined) {
      headers['content-type'] = 'application/json';
      headers['content-length'] = String(Buffer.byteLength(body));
    }
    let done = false;
    const finish = (status: number | null, error: string | null, text = '') => {
      if (done) return;
      done = true;
      resolve({ status, error, body: text, start, end: Date.now(), ms: performance.now() - t0 });
    };
    const req = http.request({ host: addr, port, path: p, method: opts.method ?? 'GET', headers, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (text += c));
      res.on('end', () => finish(res.statusCode ?? 0, null, text));
      res.on('error', (e) => finish(null, e.message, text));
    });
    req.setTimeout(opts.timeoutMs ?? 10_000, () => {
      req.destroy(new Error('timeout'));
    });
    req.on('error', (e) => finish(null, (e as NodeJS.ErrnoException).code ?? e.message));
    req.end(body);
  });
}

/** Concurrent request loops; every request is kept with its start, end, status or error. */
export class Traffic {
  readonly results: (Sent & { target: string })[] = [];
  private running = true;
  private loops: Promise<void>[] = [];

  constructor(targets: { name: string; go: () => Promise<Sent> }[], concurrency: number) {
    for (let i = 0; i < concurrency; i++) {
      this.loops.push(
        (async () => {
          let k = i;
          while (this.running) {
            const t = targets[k++ % targets.length];
            const r = await t.go();
            this.results.push({ ...r, target: t.name });
            if (r.status === null) await new Promise((res) => setTimeout(res, 5)); // not a condition: refused, do not spin
          }
        })(),
      );
    }
  }

  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.loops);
  }

  /** Requests that ended after `from` (and started before `to`, when given). */
  between(from: number, to = Infinity) {
    return this.results.filter((r) => r.end >= from && r.start <= to);
  }
}

/** Percentile (0..100) of numbers. */
export function percentile(xs: number[], p: number): number {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
}

/** Caddy's live configuration (GET /config/ on its admin API; node:http, as fetch would trip its Origin check). */
export function caddyConfig(adminPort: number): Promise<unknown> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port: adminPort, path: '/config/', agent: false, timeout: 5000 }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c) => (text += c));
        res.on('end', () => (res.statusCode === 200 ? resolve(JSON.parse(text)) : reject(new Error(`GET /config/: ${res.statusCode} ${text}`))));
      })
      .on('error', reject)
      .on('timeout', function (this: http.ClientRequest) {
        this.destroy(new Error('GET /config/: timeout'));
      });
  });
}

/** The hosts Caddy's live configuration serves (the keys of every gatehouse_hostroute handler's host map). */
export async function caddyHosts(adminPort: number): Promise<Set<string>> {
  const cfg = await caddyConfig(adminPort);
  const hosts = new Set<string>();
  const walk = (v: unknown) => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') {
      const o = obj(v);
      if (o.handler === 'gatehouse_hostroute' && o.hosts) for (const h of Object.keys(obj(o.hosts, 'hosts'))) hosts.add(h);
      for (const x of Object.values(o)) walk(x);
    }
  };
  walk(at(cfg, 'apps', 'http', 'servers') ?? {});
  return hosts;
}

/** Public keys `wg show <iface> dump` lists (null when the interface is missing). */
export function wgPeers(iface: string): Set<string> | null {
  let out: string;
  try {
    out = execFileSync('wg', ['show', iface, 'dump'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  } catch {
    return null;
  }
  return new Set(
    out
      .trim()
      .split('\n')
      .slice(1)
      .filter(Boolean)
      .map((l) => l.split('\t')[0]),
  );
}

/** PID of the wireguard-go serving iface (its control socket's owner), null when none. */
export function wireguardGoPid(iface: string): number | null {
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const cmd = fs.readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0');
      if (path.basename(cmd[0]) === 'wireguard-go' && cmd.includes(iface)) return Number(d);
    } catch {
      /* gone */
    }
  }
  return null;
}

const LICENCE = testLicenceKey({ plan: 'test-all', issued_at: '2000-01-01T00:00:00.000Z', expires_at: null });

/** The real service, sidecar/src/main.ts, as its own process (killable with any signal). */
export class SidecarProcess {
  child!: ChildProcess;
  output = '';
  exited!: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  constructor(readonly env: Record<string, string>) {}

  get url(): string {
    return `http://127.0.0.1:${this.env.GATEHOUSE_PORT}`;
  }

  /** Starts it and waits until GET /health answers (any status: the API is up). */
  async start(timeoutMs = 60_000): Promise<void> {
    this.output = '';
    this.child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'sidecar', 'src', 'main.ts')], {
      cwd: ROOT,
      // like startTestServer: the test key pair trusted and a perpetual licence with every feature
      // (circuit breaker, ...) unless the test sets GATEHOUSE_LICENCE_KEY itself
      env: { ...process.env, GATEHOUSE_LOG_LEVEL: 'info', GATEHOUSE_LICENCE_PUBLIC_KEY: TEST_PUBLIC_KEY_PEM, GATEHOUSE_LICENCE_KEY: LICENCE, ...this.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const child = this.child;
    child.stdout!.on('data', (d) => (this.output += d));
    child.stderr!.on('data', (d) => (this.output += d));
    this.exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
    await waitFor(
      async () => {
        if (child.exitCode !== null || child.signalCode !== null) throw new Error(`the sidecar exited: ${this.output.slice(-3000)}`);
        const r = await fetch(`${this.url}/health`).catch(() => null);
        return r !== null;
      },
      timeoutMs,
      { intervalMs: 100, what: 'the sidecar to answer' },
    ).catch((e) => {
      throw new Error(`${e.message}\n${this.output.slice(-3000)}`);
    });
  }

  /** Waits until startServer() returned (features started): the "listening" log line. */
  async ready(timeoutMs = 60_000): Promise<void> {
    await waitFor(() => /gatehouse listening on/.test(this.output), timeoutMs, {
      intervalMs: 50,
      what: `the sidecar's features started (${this.output.slice(-2000)})`,
    });
  }

  kill(signal: NodeJS.Signals): void {
    if (this.child && this.child.exitCode === null && this.child.signalCode === null) this.child.kill(signal);
  }

  /** Stops it (SIGTERM, SIGKILL after 20 s); resolves when it exited. */
  async stop(): Promise<void> {
    if (!this.child || this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.child.kill('SIGTERM');
    const t = setTimeout(() => this.kill('SIGKILL'), 20_000);
    await this.exited;
    clearTimeout(t);
  }

  /** fetch against the API with JSON in and out; the body typed by method and path, as with s.req(). */
  async req<P extends string, M extends string = 'GET'>(
    p: P,
    init: { method?: M; json?: unknown; headers?: Record<string, string>; timeoutMs?: number } = {},
  ): Promise<{ status: number; data: BodyOf<M, P> }> {
    const headers: Record<string, string> = { ...init.headers };
    if (init.json !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(this.url + p, {
      method: init.method ?? 'GET',
      headers,
      body: init.json === undefined ? undefined : JSON.stringify(init.json),
      signal: AbortSignal.timeout(init.timeoutMs ?? 30_000),
    });
    const text = await res.text();
    let data: unknown = text;
    try {
      data = JSON.parse(text);
    } catch {
      /* not JSON */
    }
    // reason: the parsed answer is the body the server declares for this method and path (BodyOf)
    return { status: res.status, data: data as BodyOf<M, P> };
  }
}

/** Signs in as the bootstrap admin of a SidecarProcess and creates a full-access API token. */
export async function processToken(sp: SidecarProcess, user: { username: string; password: string }): Promise<string> {
  const res = await fetch(`${sp.url}/login`, {
    method: 'POST',
    headers: { accept: 'application/json', 'content-type': 'application/json' },
    body: JSON.stringify(user),
  });
  const data = (await res.json()) as BodyOf<'POST', '/login'>;
  if (res.status !== 200) throw new Error(`login: ${res.status} ${JSON.stringify(data)}`);
  const cookie = res.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
  const tok = await sp.req('/api/v1/tokens', {
    method: 'POST',
    json: { name: `faults-${Date.now()}`, scopes: ['full-access'] },
    headers: { cookie, 'x-csrf-token': data.csrfToken! },
  });
  if (tok.status !== 201) throw new Error(`token: ${tok.status} ${JSON.stringify(tok.data)}`);
  return tok.data.token;
}

/**
 * A PostgreSQL cluster of the test's own (initdb in a temporary directory, run as the postgres
 * user on a loopback port, trust authentication), so it can be stopped and started without
 * touching the shared one of scripts/pg-test-server.sh.
 */
export class PgCluster {
  readonly dir: string;
  readonly bin: string;
  constructor(readonly port: number) {
    const ver = fs
      .readdirSync('/usr/lib/postgresql')
      .sort((a, b) => Number(a) - Number(b))
      .at(-1);
    this.bin = `/usr/lib/postgresql/${ver}/bin`;
    this.dir = fs.mkdtempSync('/tmp/gatehouse-pg-');
  }
  static available(): boolean {
    try {
      return fs.readdirSync('/usr/lib/postgresql').length > 0 && process.getuid?.() === 0;
    } catch {
      return false;
    }
  }
  private pg(tool: string, args: string[]): string {
    return execFileSync('runuser', ['-u', 'postgres', '--', `${this.bin}/${tool}`, ...args], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      cwd: '/tmp',
    });
  }
  /** the same without blocking the event loop (the test's load goes on meanwhile) */
  private async pgAsync(tool: string, args: string[]): Promise<void> {
    await promisify(execFile)('runuser', ['-u', 'postgres', '--', `${this.bin}/${tool}`, ...args], { cwd: '/tmp' });
  }
  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/gatehouse`;
  }
  init(): void {
    execFileSync('chown', ['postgres:postgres', this.dir]);
    this.pg('initdb', ['-D', `${this.dir}/data`, '-A', 'trust', '-U', 'postgres', '--no-sync']);
    this.start();
    this.pg('createdb', ['-h', '127.0.0.1', '-p', String(this.port), '-U', 'postgres', 'gatehouse']);
  }
  private startArgs(): string[] {
    return ['-D', `${this.dir}/data`, '-l', `${this.dir}/log`, '-w', '-o', `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1`, 'start'];
  }
  start(): void {
    this.pg('pg_ctl', this.startArgs());
  }
  startAsync(): Promise<void> {
    return this.pgAsync('pg_ctl', this.startArgs());
  }
  /** mode fast: open connections are cut (what a restart under load does) */
  stop(mode: 'fast' | 'immediate' = 'fast'): void {
    this.pg('pg_ctl', ['-D', `${this.dir}/data`, '-m', mode, '-w', 'stop']);
  }
  stopAsync(mode: 'fast' | 'immediate' = 'fast'): Promise<void> {
    return this.pgAsync('pg_ctl', ['-D', `${this.dir}/data`, '-m', mode, '-w', 'stop']);
  }
  destroy(): void {
    try {
      this.stop('immediate');
    } catch {
      /* not running */
    }
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Rows of one query on an SQLite file (the sqlite3 command line, read-only). */
export function sqliteRows<T = Record<string, unknown>>(file: string, sql: string): T[] {
  const out = execFileSync('sqlite3', ['-readonly', '-json', file, sql], { encoding: 'utf8' }).trim();
  return out ? (JSON.parse(out) as T[]) : [];
}

/** A write sent through the API: what it was, and whether it was acknowledged (2xx), refused or left without an answer. */
export interface Write {
  kind: 'peer' | 'route' | 'setting';
  key: string;
  value?: number;
  outcome: 'acked' | 'refused' | 'no answer';
  status?: number;
  start: number;
  end?: number;
}
