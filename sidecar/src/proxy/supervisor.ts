// Runs our Caddy binary as a child process: a bootstrap configuration that only opens the admin API
// on GATEHOUSE_CADDY_ADMIN (loopback), its log lines forwarded into the winston log, restart when
// it dies (the first after a stable run at once, then back-off 1 s doubling to 30 s), and
// onReady() after every (re)start so the proxy service pushes the full configuration. Stopped by
// PID: SIGTERM, then SIGKILL after a timeout.
//
// Caddy gets its own XDG_DATA_HOME / XDG_CONFIG_HOME under <dataDir>/caddy, so certificates, the
// internal CA and Caddy's state live with Gatehouse's data and never in the invoking user's home.
// In a cluster the certificates are in PostgreSQL instead (fragments/storage.ts): the supervisor
// hands the database URL to Caddy in its environment (storageDsn), never in the configuration.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import type { Logger } from '../util/logger.js';
import type { Clock } from '../util/clock.js';
import { CaddyAdminClient } from './admin-client.js';
import { CADDY_STORAGE_DSN_ENV } from './fragments/storage.js';
import type { CaddyProcessStatus } from './schema.js';

export interface SupervisorOptions {
  bin: string;
  adminAddress: string;
  /** Gatehouse's data directory; Caddy's files go to <dataDir>/caddy. */
  dataDir: string;
  log: Logger;
  clock: Clock;
  /** Called after every start once the admin API answers (push the configuration here). */
  onReady: () => Promise<void>;
  /** Told when Caddy is ready after a (re)start, exited unexpectedly, or was stopped (the caddy_state event). */
  onState?: (state: { running: boolean; pid: number | null; reason: string }) => void;
  /** Every JSON log line of Caddy, parsed (the certificate store keeps the last obtain error per name from them). */
  onLogLine?: (entry: Record<string, unknown>) => void;
  minBackoffMs?: number;
  maxBackoffMs?: number;
  /** After SIGTERM, wait this long before SIGKILL. */
  stopTimeoutMs?: number;
  readyTimeoutMs?: number;
  /** PostgreSQL URL of the shared certificate storage (cluster), put in Caddy's environment as GATEHOUSE_CADDY_STORAGE_DSN. */
  storageDsn?: string;
}

export class CaddyBinaryMissing extends Error {}

export function caddyPaths(dataDir: string) {
  const dir = path.join(dataDir, 'caddy');
  return {
    dir,
    bootstrap: path.join(dir, 'bootstrap.json'),
    pidfile: path.join(dir, 'caddy.pid'),
    xdgData: path.join(dir, 'data'),
    xdgConfig: path.join(dir, 'config'),
    /** Root certificate of Caddy's internal CA (GATEHOUSE_TLS=internal). */
    internalRootCert: path.join(dir, 'data', 'caddy', 'pki', 'authorities', 'local', 'root.crt'),
  };
}

/** Delay of the first restart after a stable run (Caddy lived over a minute, or never died before). */
const QUICK_RESTART_MS = 100;

const LEVELS: Record<string, 'error' | 'warn' | 'info' | 'debug'> = {
  debug: 'debug',
  info: 'info',
  warn: 'warn',
  error: 'error',
  dpanic: 'error',
  panic: 'error',
  fatal: 'error',
};

export class CaddySupervisor {
  private child: ChildProcess | null = null;
  private startedAt = 0;
  private stopping = false;
  private restartTimer: NodeJS.Timeout | null = null;
  private backoff: number;
  /** the next restart is the first after a stable run: at once (QUICK_RESTART_MS) */
  private quickRestart = true;
  private restarts = 0;
  private recent: string[] = [];
  private readonly client: CaddyAdminClient;
  private readonly paths: ReturnType<typeof caddyPaths>;
  private readonly o: Required<Omit<SupervisorOptions, 'onState' | 'onLogLine' | 'storageDsn'>> &
    Pick<SupervisorOptions, 'onState' | 'onLogLine' | 'storageDsn'>;

  constructor(opts: SupervisorOptions) {
    this.o = { minBackoffMs: 1000, maxBackoffMs: 30_000, stopTimeoutMs: 10_000, readyTimeoutMs: 20_000, ...opts };
    this.backoff = this.o.minBackoffMs;
    this.client = new CaddyAdminClient(opts.adminAddress);
    this.paths = caddyPaths(opts.dataDir);
  }

  status(): CaddyProcessStatus {
    const running = this.child !== null && this.child.exitCode === null && this.child.signalCode === null;
    return {
      running,
      pid: running ? (this.child!.pid ?? null) : null,
      uptime_s: running ? Math.floor((this.o.clock() - this.startedAt) / 1000) : null,
      admin_api: this.o.adminAddress,
      restarts: this.restarts,
    };
  }

  /** Starts Caddy and waits until its admin API answers and onReady() ran. */
  async start(): Promise<void> {
    this.stopping = false;
    checkBinary(this.o.bin);
    checkLoopback(this.o.adminAddress);
    fs.mkdirSync(this.paths.dir, { recursive: true, mode: 0o700 });
    await this.reapStale();
    if (await this.client.ping(1000)) {
      throw new Error(`Something already answers on GATEHOUSE_CADDY_ADMIN=${this.o.adminAddress} (another Caddy?). Stop it or choose another address.`);
    }
    fs.writeFileSync(this.paths.bootstrap, JSON.stringify({ admin: { listen: this.o.adminAddress, config: { persist: false } } }) + '\n', { mode: 0o600 });
    try {
      await this.spawnOnce();
    } catch (err) {
      // The first start failed: no restart loop, the caller reports the error.
      await this.stop();
      throw err;
    }
  }

  private async spawnOnce(): Promise<void> {
    const child = spawn(this.o.bin, ['run', '--config', this.paths.bootstrap], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: this.childEnv(),
    });
    this.child = child;
    this.startedAt = this.o.clock();
    this.recent = [];
    const spawnError = new Promise<Error>((resolve) => child.once('error', resolve));
    const exited = new Promise<string>((resolve) => child.once('exit', (code, signal) => resolve(signal ? `signal ${signal}` : `exit code ${code}`)));
    for (const stream of [child.stdout!, child.stderr!]) {
      readline.createInterface({ input: stream }).on('line', (line) => this.forward(line));
    }
    if (child.pid) fs.writeFileSync(this.paths.pidfile, `${child.pid}\n`);
    this.o.log.info('caddy started', { pid: child.pid, bin: this.o.bin, admin: this.o.adminAddress });
    void exited.then((how) => this.onExit(child, how));

    const ready = await Promise.race([
      this.waitReady(child).then((ok) => (ok ? 'ready' : 'timeout')),
      exited.then((how) => `exited (${how})`),
      spawnError.then((err) => `failed to start (${err.message})`),
    ]);
    if (ready !== 'ready') {
      const tail = this.recent.slice(-5).join(' | ');
      if (ready === 'timeout') this.kill(child, 'SIGKILL');
      throw new Error(
        `Caddy ${ready === 'timeout' ? `admin API did not answer on ${this.o.adminAddress} within ${this.o.readyTimeoutMs} ms` : ready}${tail ? `: ${tail}` : ''}`,
      );
    }
    try {
      await this.o.onReady();
    } catch (err) {
      this.o.log.error('pushing the configuration to the new Caddy failed (the reconcile loop retries)', { err: String(err) });
    }
    this.o.onState?.({ running: true, pid: child.pid ?? null, reason: this.restarts ? 'restarted' : 'started' });
  }

  /** Caddy's environment: ours, its XDG directories, and the storage URL in a cluster (only then). */
  private childEnv(): NodeJS.ProcessEnv {
    const env: NodeJS.ProcessEnv = { ...process.env, XDG_DATA_HOME: this.paths.xdgData, XDG_CONFIG_HOME: this.paths.xdgConfig };
    delete env[CADDY_STORAGE_DSN_ENV];
    if (this.o.storageDsn) env[CADDY_STORAGE_DSN_ENV] = this.o.storageDsn;
    return env;
  }

  private async waitReady(child: ChildProcess): Promise<boolean> {
    const deadline = this.o.clock() + this.o.readyTimeoutMs;
    while (this.o.clock() < deadline) {
      if (child.exitCode !== null || child.signalCode !== null) return false;
      if (await this.client.ping(500)) return child.exitCode === null;
      await new Promise((r) => setTimeout(r, 50));
    }
    return false;
  }

  private forward(line: string): void {
    if (!line.trim()) return;
    this.recent.push(line.length > 500 ? line.slice(0, 500) + '…' : line);
    if (this.recent.length > 20) this.recent.shift();
    let level: 'error' | 'warn' | 'info' | 'debug' = 'info';
    let msg = line;
    let meta: Record<string, unknown> = {};
    try {
      const j = JSON.parse(line) as Record<string, unknown>;
      try {
        this.o.onLogLine?.(j);
      } catch {
        /* a listener's failure never stops the log */
      }
      const { level: lv, msg: m, ts: _ts, ...rest } = j;
      level = LEVELS[String(lv)] ?? 'info';
      // Every admin API request (each /load, each reconcile GET) is logged by Caddy at info.
      if (level === 'info' && rest.logger === 'admin.api') level = 'debug';
      msg = String(m ?? '');
      meta = rest;
    } catch {
      /* not JSON: Caddy's plain start-up lines */
    }
    this.o.log.log(level, `caddy: ${msg}`, { component: 'caddy', ...meta });
  }

  private onExit(child: ChildProcess, how: string): void {
    if (this.child !== child) return;
    try {
      fs.rmSync(this.paths.pidfile, { force: true });
    } catch {
      /* ignore */
    }
    if (this.stopping) return;
    const lived = this.o.clock() - this.startedAt;
    if (lived > 60_000) {
      this.backoff = this.o.minBackoffMs;
      this.quickRestart = true;
    }
    // The first restart after a stable run comes at once (every route is down meanwhile); only a
    // Caddy that keeps dying waits 1 s, 2 s, … 30 s between attempts.
    let delay: number;
    if (this.quickRestart) {
      this.quickRestart = false;
      delay = Math.min(QUICK_RESTART_MS, this.o.minBackoffMs);
    } else {
      delay = this.backoff;
      this.backoff = Math.min(this.backoff * 2, this.o.maxBackoffMs);
    }
    this.o.log.error(`caddy exited (${how}); restarting in ${delay} ms`, { last_lines: this.recent.slice(-5) });
    this.o.onState?.({ running: false, pid: null, reason: `exited (${how})` });
    this.restartTimer = setTimeout(() => {
      this.restartTimer = null;
      if (this.stopping) return;
      this.restarts++;
      this.spawnOnce().catch((err) => this.o.log.error('caddy restart failed', { err: String(err) }));
    }, delay);
    this.restartTimer.unref();
  }

  private kill(child: ChildProcess, signal: NodeJS.Signals): void {
    try {
      if (child.pid && child.exitCode === null && child.signalCode === null) process.kill(child.pid, signal);
    } catch {
      /* already gone */
    }
  }

  /** SIGTERM to our Caddy's PID, SIGKILL after stopTimeoutMs. */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.restartTimer = null;
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    this.kill(child, 'SIGTERM');
    const timer = setTimeout(() => this.kill(child, 'SIGKILL'), this.o.stopTimeoutMs);
    await gone;
    clearTimeout(timer);
    fs.rmSync(this.paths.pidfile, { force: true });
    this.o.log.info('caddy stopped', { pid: child.pid });
    this.o.onState?.({ running: false, pid: null, reason: 'stopped' });
  }

  /** A Caddy left behind by a previous run of this sidecar (crash, SIGKILL): identified by our pidfile AND its command line. */
  private async reapStale(): Promise<void> {
    let pid: number;
    try {
      pid = Number(fs.readFileSync(this.paths.pidfile, 'utf8').trim());
    } catch {
      return;
    }
    if (!Number.isInteger(pid) || pid <= 1) return;
    let cmdline = '';
    try {
      cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    } catch {
      fs.rmSync(this.paths.pidfile, { force: true });
      return;
    }
    if (!cmdline.includes(this.paths.bootstrap)) {
      fs.rmSync(this.paths.pidfile, { force: true });
      return;
    }
    this.o.log.warn('stopping the Caddy left behind by a previous run', { pid });
    try {
      process.kill(pid, 'SIGTERM');
    } catch {
      return;
    }
    const deadline = Date.now() + this.o.stopTimeoutMs;
    while (Date.now() < deadline && processAlive(pid)) await new Promise((r) => setTimeout(r, 50));
    if (processAlive(pid)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
    fs.rmSync(this.paths.pidfile, { force: true });
  }
}

/** True while the process exists and is not a zombie (an orphan's zombie waits for init to reap it). */
export function processAlive(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/** Caddy's admin API can change everything Caddy does: it must only ever listen on loopback. */
export function checkLoopback(address: string): void {
  const host = address.slice(0, address.lastIndexOf(':')).replace(/^\[|\]$/g, '');
  if (!(host === 'localhost' || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host))) {
    throw new Error(`GATEHOUSE_CADDY_ADMIN=${address} is not a loopback address: Caddy's admin API must listen on 127.0.0.1 (or ::1) only`);
  }
}

export function checkBinary(bin: string): void {
  try {
    fs.accessSync(bin, fs.constants.X_OK);
  } catch {
    throw new CaddyBinaryMissing(
      `Caddy binary not found or not executable at ${bin}. Build Gatehouse's Caddy with "bash scripts/build-caddy.sh" (or "npm run build"), or point GATEHOUSE_CADDY_BIN at it.`,
    );
  }
}
