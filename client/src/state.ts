// The client's state directory (mode 0700; every file 0600, written atomically):
//   client.json   server URL, token, the fingerprint override if one was given at register, and
//                 what the server answered to register (machine and peer)
//   tunnel.json   the last tunnel configuration from the server and its config_hash: `up` starts
//                 from it when the server is unreachable, and keeps using it until the server
//                 sends another one
//   status.json   the running daemon's view (interface, mode, last check/heartbeat, server state)
//   daemon.pid    the pid of the running `up` (removed when it stops)
//   rdp/<id>.rdp  connect profiles written by `rdp connect`
// Default directory: $GATEHOUSE_CLIENT_STATE_DIR, else /var/lib/gatehouse-client for root, else
// $XDG_CONFIG_HOME/gatehouse-client (~/.config/gatehouse-client).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface ClientState {
  server_url: string;
  token: string;
  /** only when register was given --fingerprint (tests); otherwise recomputed from the machine id on every run */
  fingerprint?: string;
  registered_at: string;
  /** what POST /client/register answered (machine, peer) */
  registration: Record<string, unknown>;
}

export interface SavedTunnel {
  config_hash: string;
  /** the GET /client/config answer, as received */
  config: Record<string, unknown>;
  saved_at: string;
}

export interface DaemonStatus {
  pid: number;
  started_at: string;
  updated_at: string;
  iface: string;
  tunnel_mode: 'kernel' | 'userspace' | 'none' | null;
  tunnel_up: boolean;
  config_hash: string | null;
  config_source: 'server' | 'state' | null;
  hostname: string;
  server: { reachable: boolean; auth_rejected: boolean; last_ok_at: string | null; last_error: string | null; last_error_at: string | null };
  last_check_at: string | null;
  /** config checks answered 304 (unchanged) and 200 (changed) since the daemon started */
  checks: { unchanged: number; changed: number };
  /** heartbeats the server accepted since the daemon started */
  heartbeats: number;
  last_heartbeat_at: string | null;
  last_heartbeat: Record<string, unknown> | null;
  last_hostname_report: { hostname: string; at: string } | null;
}

export class StateError extends Error {}

export function defaultStateDir(env: NodeJS.ProcessEnv = process.env, uid = process.getuid?.() ?? 0): string {
  if (env.GATEHOUSE_CLIENT_STATE_DIR) return env.GATEHOUSE_CLIENT_STATE_DIR;
  if (uid === 0) return '/var/lib/gatehouse-client';
  const base = env.XDG_CONFIG_HOME || path.join(os.homedir(), '.config');
  return path.join(base, 'gatehouse-client');
}

/** Writes JSON (or text) to a file atomically with mode 0600 (temp file in the same directory, then rename). */
export function writeFileAtomic(file: string, content: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.${Math.random().toString(36).slice(2, 8)}.tmp`;
  try {
    fs.writeFileSync(tmp, content, { mode: 0o600, flag: 'wx' });
    fs.renameSync(tmp, file);
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    throw err;
  }
}

export class StateDir {
  constructor(readonly dir: string) {}

  get clientFile(): string {
    return path.join(this.dir, 'client.json');
  }
  get tunnelFile(): string {
    return path.join(this.dir, 'tunnel.json');
  }
  get statusFile(): string {
    return path.join(this.dir, 'status.json');
  }
  get pidFile(): string {
    return path.join(this.dir, 'daemon.pid');
  }
  rdpFile(id: number | string): string {
    return path.join(this.dir, 'rdp', `${id}.rdp`);
  }

  /** Creates the directory (0700) and makes an existing one 0700 again. */
  ensure(): void {
    fs.mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    fs.chmodSync(this.dir, 0o700);
  }

  private read<T>(file: string): T | null {
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw new StateError(`cannot read ${file}: ${(err as Error).message}`);
    }
    try {
      return JSON.parse(text) as T;
    } catch {
      throw new StateError(`${file} is not valid JSON; remove it (or run register again)`);
    }
  }

  private write(file: string, value: unknown): void {
    this.ensure();
    writeFileAtomic(file, JSON.stringify(value, null, 2) + '\n');
  }

  readClient(): ClientState | null {
    const s = this.read<ClientState>(this.clientFile);
    if (s && (typeof s.server_url !== 'string' || typeof s.token !== 'string'))
      throw new StateError(`${this.clientFile} lacks server_url or token; run register again`);
    return s;
  }

  /** The registration, or an error telling the user to register first. */
  requireClient(): ClientState {
    const s = this.readClient();
    if (!s) throw new StateError(`not registered (no ${this.clientFile}); run: gatehouse-client register --server URL --token TOKEN`);
    return s;
  }

  writeClient(s: ClientState): void {
    this.write(this.clientFile, s);
  }

  readTunnel(): SavedTunnel | null {
    const t = this.read<SavedTunnel>(this.tunnelFile);
    if (!t || typeof t.config_hash !== 'string' || !t.config || typeof t.config !== 'object') return null;
    return t;
  }

  writeTunnel(config_hash: string, config: Record<string, unknown>): void {
    this.write(this.tunnelFile, { config_hash, config, saved_at: new Date().toISOString() } satisfies SavedTunnel);
  }

  readStatus(): DaemonStatus | null {
    try {
      return this.read<DaemonStatus>(this.statusFile);
    } catch {
      return null;
    }
  }

  writeStatus(s: DaemonStatus): void {
    this.write(this.statusFile, s);
  }

  /** The pid in daemon.pid when that process is alive; null otherwise. */
  runningPid(): number | null {
    let text: string;
    try {
      text = fs.readFileSync(this.pidFile, 'utf8').trim();
    } catch {
      return null;
    }
    const pid = Number(text);
    if (!Number.isInteger(pid) || pid <= 1) return null;
    return pidAlive(pid) ? pid : null;
  }

  /** Claims daemon.pid for this process; throws when another live daemon holds it. */
  claimPid(pid = process.pid): void {
    const other = this.runningPid();
    if (other !== null && other !== pid)
      throw new StateError(`a daemon is already running for ${this.dir} (pid ${other}); stop it with: gatehouse-client down`);
    this.ensure();
    writeFileAtomic(this.pidFile, `${pid}\n`);
  }

  releasePid(pid = process.pid): void {
    try {
      if (Number(fs.readFileSync(this.pidFile, 'utf8').trim()) === pid) fs.rmSync(this.pidFile, { force: true });
    } catch {
      /* gone already */
    }
  }
}

export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
