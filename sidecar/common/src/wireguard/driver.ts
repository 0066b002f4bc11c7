// Drives one host's WireGuard interfaces with `ip` and `wg` (execFile, never a shell), using the
// kernel module when it is there and a supervised userspace `wireguard-go` otherwise.
//
// - up(spec): reuse the interface if it exists (its peers are synced, no tunnel drops); else
//   `ip link add <if> type wireguard`, or, when the kernel has no WireGuard, `wireguard-go -f <if>`
//   as our child (we keep its PID; it is stopped in down() and when this process exits unless
//   keepOnExit). Then `wg setconf` (the config goes through a 0600 file in a private 0700 temp
//   directory, on /dev/shm when there is one, deleted right after: wg reads keys from files only,
//   and Node's stdin pipes are sockets that wg cannot open as /dev/stdin), the address with
//   `ip address`, MTU and link up.
// - sync(spec): `wg syncconf` (only the differences are applied: other tunnels keep running).
// - setPeer / removePeer: one peer. On a wireguard-go interface they are written straight to its
//   control socket (the cross-platform UAPI: `set=1`, hex keys, `replace_allowed_ips`), ~1.5 ms
//   instead of ~8 ms for spawning `wg`, and the preshared key never touches a file. On a kernel
//   interface, or when the socket does not answer, `wg set`.
// - dump(): `wg show <if> dump` parsed; null when the interface does not exist.
// - down(): `ip link del` and stop our wireguard-go child.
// With `netns`, every command runs inside `ip netns exec <netns>` (tests run drivers in namespaces).
// Note: wireguard-go's control sockets live in one directory (/var/run/wireguard/<if>.sock) that all
// network namespaces share, so interface names must differ between namespaces.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parseWgDump } from './dump.js';
import { socketExchange } from '../socket.js';
import { isWgKey } from './keys.js';
import { renderPeerSection, renderServerConfig } from './render.js';
import type { WgDump, WgInterfaceSpec, WgPeerSpec, WireGuardDriver } from './types.js';

export interface WgDriverOptions {
  /** run every command inside this network namespace (`ip netns exec <netns> ...`) */
  netns?: string;
  /** interface MTU (default 1420) */
  mtu?: number;
  ipBin?: string;
  wgBin?: string;
  wireguardGoBin?: string;
  /** where wireguard-go puts its control sockets (default /var/run/wireguard) */
  socketDir?: string;
  /** skip the kernel module even when present */
  userspaceOnly?: boolean;
  /** how long wireguard-go may take to open its socket (default 5000 ms) */
  startTimeoutMs?: number;
  /** per-command timeout (default 15000 ms) */
  commandTimeoutMs?: number;
  /** leave our wireguard-go running when this process exits (default: stop it) */
  keepOnExit?: boolean;
  /** told when a wireguard-go child exits on its own (not through down()) */
  onUserspaceExit?: (iface: string, code: number | null, signal: NodeJS.Signals | null, output: string) => void;
}

/** How long a UAPI transaction may take before the driver falls back to `wg`. */
const UAPI_TIMEOUT_MS = 5000;
/** A WireGuard key as UAPI writes it: hex instead of base64. */
const hexKey = (b64: string): string => Buffer.from(b64, 'base64').toString('hex');

/** A failed `ip` / `wg` / `wireguard-go` run; carries the command line and what it printed. */
export class WgCommandError extends Error {
  constructor(
    message: string,
    public readonly command: string,
    public readonly args: string[],
    public readonly code: number | null,
    public readonly stderr: string,
    public readonly stdout = '',
  ) {
    super(message);
  }
}

export interface RunResult {
  stdout: string;
  stderr: string;
  code: number;
}

const IFACE_RE = /^[a-zA-Z0-9_.=+-]{1,15}$/;
const OUTPUT_KEEP = 16 * 1024;

interface Child {
  proc: ChildProcess;
  output: string;
  exited: Promise<void>;
  stopping: boolean;
}

// wireguard-go children of every driver in this process, stopped on exit unless keepOnExit.
const exitKill = new Set<ChildProcess>();
let exitHookInstalled = false;
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const p of exitKill) {
      if (p.pid && p.exitCode === null && p.signalCode === null) {
        try {
          process.kill(p.pid, 'SIGTERM');
        } catch {
          /* already gone */
        }
      }
    }
  });
}

function checkIface(iface: string): void {
  if (typeof iface !== 'string' || !IFACE_RE.test(iface)) throw new Error(`invalid interface name "${String(iface)}"`);
}

/** Writes secret text to a 0600 file in a fresh 0700 directory, runs fn(path), removes both. */
export async function withSecretFile<T>(text: string, fn: (file: string) => Promise<T>): Promise<T> {
  let base = os.tmpdir();
  try {
    fs.accessSync('/dev/shm', fs.constants.W_OK); // memory only: secrets never reach a disk
    base = '/dev/shm';
  } catch {
    /* no /dev/shm: the temp directory */
  }
  const dir = fs.mkdtempSync(path.join(base, 'gatehouse-wg-'));
  try {
    fs.chmodSync(dir, 0o700);
    const file = path.join(dir, 'wg.conf');
    fs.writeFileSync(file, text, { mode: 0o600, flag: 'wx' });
    return await fn(file);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

export class WgDriver implements WireGuardDriver {
  readonly netns?: string;
  private readonly ip: string;
  private readonly wg: string;
  private readonly wgGo: string;
  private readonly socketDir: string;
  private readonly mtu: number;
  private readonly children = new Map<string, Child>();

  constructor(private readonly opts: WgDriverOptions = {}) {
    this.netns = opts.netns;
    this.ip = opts.ipBin ?? 'ip';
    this.wg = opts.wgBin ?? 'wg';
    this.wgGo = opts.wireguardGoBin ?? 'wireguard-go';
    this.socketDir = opts.socketDir ?? '/var/run/wireguard';
    this.mtu = opts.mtu ?? 1420;
  }

  // ------------------------------------------------------------ commands

  /** The file and argv that run `cmd args` here (wrapped in `ip netns exec` with a namespace). */
  commandLine(cmd: string, args: string[]): [string, string[]] {
    return this.netns ? [this.ip, ['netns', 'exec', this.netns, cmd, ...args]] : [cmd, args];
  }

  /** Runs one command; rejects with WgCommandError on a non-zero exit unless allowFail. */
  run(cmd: string, args: string[], o: { input?: string; allowFail?: boolean } = {}): Promise<RunResult> {
    const [file, argv] = this.commandLine(cmd, args);
    return new Promise((resolve, reject) => {
      const child = execFile(
        file,
        argv,
        { timeout: this.opts.commandTimeoutMs ?? 15_000, maxBuffer: 64 * 1024 * 1024, encoding: 'utf8' },
        (err, stdout, stderr) => {
          if (!err) return resolve({ stdout, stderr, code: 0 });
          const e = err as NodeJS.ErrnoException & { code?: number | string; killed?: boolean; signal?: string };
          const code = typeof e.code === 'number' ? e.code : null;
          if (code !== null && o.allowFail) return resolve({ stdout, stderr, code });
          const why = code !== null ? `exit ${code}` : e.killed ? `timed out (${e.signal ?? 'killed'})` : String(e.code ?? e.message);
          const line = [cmd, ...args].join(' ');
          reject(new WgCommandError(`${line}: ${why}${stderr.trim() ? `: ${stderr.trim()}` : ''}`, file, argv, code, stderr, stdout));
        },
      );
      child.stdin?.on('error', () => {}); // a command that exits without reading its input
      child.stdin?.end(o.input ?? '');
    });
  }

  // ------------------------------------------------------------ queries

  async exists(iface: string): Promise<boolean> {
    checkIface(iface);
    const r = await this.run(this.ip, ['link', 'show', 'dev', iface], { allowFail: true });
    return r.code === 0;
  }

  /** kernel or userspace for an existing interface, null when missing. */
  async mode(iface: string): Promise<'kernel' | 'userspace' | null> {
    checkIface(iface);
    const r = await this.run(this.ip, ['-d', 'link', 'show', 'dev', iface], { allowFail: true });
    if (r.code !== 0) return null;
    return /\bwireguard\b/.test(r.stdout) ? 'kernel' : 'userspace';
  }

  /** PID of the wireguard-go this driver runs for iface (null when none). */
  userspacePid(iface: string): number | null {
    const c = this.children.get(iface);
    return c && c.proc.exitCode === null && c.proc.signalCode === null ? (c.proc.pid ?? null) : null;
  }

  private socketPath(iface: string): string {
    return path.join(this.socketDir, `${iface}.sock`);
  }

  // ------------------------------------------------------------ contract

  async up(spec: WgInterfaceSpec): Promise<{ mode: 'kernel' | 'userspace' }> {
    checkIface(spec.iface);
    const config = renderServerConfig(spec); // validates spec before anything changes
    const iface = spec.iface;
    let mode = await this.mode(iface);
    if (mode) {
      if (mode === 'userspace' && !fs.existsSync(this.socketPath(iface))) {
        throw new WgCommandError(
          `interface ${iface} exists but is neither a kernel WireGuard device nor run by wireguard-go (no ${this.socketPath(iface)})`,
          this.ip,
          [],
          null,
          '',
        );
      }
      await this.applyConfig('syncconf', iface, config);
    } else {
      mode = await this.create(iface);
      try {
        await this.applyConfig('setconf', iface, config);
      } catch (e) {
        await this.down(iface).catch(() => {});
        throw e;
      }
    }
    await this.setAddress(iface, spec.address);
    await this.run(this.ip, ['link', 'set', 'dev', iface, 'mtu', String(this.mtu), 'up']);
    return { mode };
  }

  async sync(spec: WgInterfaceSpec): Promise<void> {
    checkIface(spec.iface);
    await this.applyConfig('syncconf', spec.iface, renderServerConfig(spec));
  }

  async setPeer(iface: string, peer: WgPeerSpec): Promise<void> {
    checkIface(iface);
    renderPeerSection(peer); // validates
    // UAPI takes only a numeric endpoint; `wg` resolves names.
    if (!peer.endpoint || net.isIP(peer.endpoint.replace(/:\d+$/, '').replace(/^\[(.*)\]$/, '$1'))) {
      const lines = [
        `public_key=${hexKey(peer.publicKey)}`,
        `preshared_key=${peer.presharedKey ? hexKey(peer.presharedKey) : '0'.repeat(64)}`,
        ...(peer.endpoint ? [`endpoint=${peer.endpoint}`] : []),
        `persistent_keepalive_interval=${peer.persistentKeepalive ?? 0}`,
        'replace_allowed_ips=true',
        ...peer.allowedIps.map((a) => `allowed_ip=${a}`),
      ];
      if (await this.uapiSet(iface, 'set peer', lines)) return;
    }
    const args = (pskFile: string) => [
      'set',
      iface,
      'peer',
      peer.publicKey,
      // wg reads keys from files only; /dev/null removes the key.
      'preshared-key',
      pskFile,
      ...(peer.endpoint ? ['endpoint', peer.endpoint] : []),
      'persistent-keepalive',
      peer.persistentKeepalive ? String(peer.persistentKeepalive) : 'off',
      'allowed-ips',
      peer.allowedIps.join(','),
    ];
    if (peer.presharedKey) await withSecretFile(`${peer.presharedKey}\n`, (f) => this.run(this.wg, args(f)));
    else await this.run(this.wg, args('/dev/null'));
  }

  async removePeer(iface: string, publicKey: string): Promise<void> {
    checkIface(iface);
    if (!isWgKey(publicKey)) throw new Error('publicKey must be a WireGuard key');
    if (await this.uapiSet(iface, 'remove peer', [`public_key=${hexKey(publicKey)}`, 'remove=true'])) return;
    await this.run(this.wg, ['set', iface, 'peer', publicKey, 'remove']);
  }

  /**
   * One `set=1` transaction on wireguard-go's control socket. false when there is no socket or it
   * cannot be reached (the caller falls back to `wg`); throws when wireguard-go refuses the change.
   */
  private async uapiSet(iface: string, what: string, lines: string[]): Promise<boolean> {
    const sock = this.socketPath(iface);
    try {
      if (!fs.statSync(sock).isSocket()) return false;
    } catch {
      return false;
    }
    const reply = await socketExchange({ path: sock }, `set=1\n${lines.join('\n')}\n\n`, (a) => a.endsWith('\n\n'), UAPI_TIMEOUT_MS);
    if (reply === null) return false;
    const errno = /^errno=(-?\d+)$/m.exec(reply)?.[1];
    if (errno === '0') return true;
    throw new WgCommandError(
      `wireguard-go ${iface}: ${what} refused (errno=${errno ?? '?'})`,
      sock,
      ['set=1'],
      errno === undefined ? null : Number(errno),
      reply.trim(),
    );
  }

  async dump(iface: string): Promise<WgDump | null> {
    checkIface(iface);
    const r = await this.run(this.wg, ['show', iface, 'dump'], { allowFail: true });
    if (r.code === 0) return parseWgDump(r.stdout);
    if (!(await this.exists(iface))) return null;
    throw new WgCommandError(`wg show ${iface} dump: exit ${r.code}: ${r.stderr.trim()}`, this.wg, ['show', iface, 'dump'], r.code, r.stderr, r.stdout);
  }

  async down(iface: string): Promise<void> {
    checkIface(iface);
    const child = this.children.get(iface);
    // Deleting the link makes wireguard-go exit by itself: that exit is expected, not a crash.
    if (child) child.stopping = true;
    const del = await this.run(this.ip, ['link', 'del', 'dev', iface], { allowFail: true });
    if (child) {
      await this.stopChild(child);
      this.children.delete(iface);
    }
    if (del.code !== 0 && (await this.exists(iface))) {
      throw new WgCommandError(
        `ip link del dev ${iface}: exit ${del.code}: ${del.stderr.trim()}`,
        this.ip,
        ['link', 'del', 'dev', iface],
        del.code,
        del.stderr,
      );
    }
  }

  // ------------------------------------------------------------ internals

  private async applyConfig(verb: 'setconf' | 'syncconf', iface: string, config: string): Promise<void> {
    await withSecretFile(config, (file) => this.run(this.wg, [verb, iface, file]));
  }

  private async create(iface: string): Promise<'kernel' | 'userspace'> {
    if (!this.opts.userspaceOnly) {
      const r = await this.run(this.ip, ['link', 'add', 'dev', iface, 'type', 'wireguard'], { allowFail: true });
      if (r.code === 0) return 'kernel';
    }
    await this.startUserspace(iface);
    return 'userspace';
  }

  private async startUserspace(iface: string): Promise<void> {
    const sock = this.socketPath(iface);
    const statOf = (): fs.Stats | null => {
      try {
        return fs.statSync(sock);
      } catch {
        return null;
      }
    };
    const before = statOf(); // a stale socket from a killed wireguard-go must not count as ready
    const [file, argv] = this.commandLine(this.wgGo, ['-f', iface]);
    const proc = spawn(file, argv, {
      env: { ...process.env, WG_I_PREFER_BUGGY_USERSPACE_TO_POLISHED_KMOD: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const child: Child = { proc, output: '', exited: Promise.resolve(), stopping: false };
    const keep = (d: Buffer): void => {
      child.output = (child.output + d.toString('utf8')).slice(-OUTPUT_KEEP);
    };
    proc.stdout?.on('data', keep);
    proc.stderr?.on('data', keep);
    const state: { spawnError: Error | null; exit: { code: number | null; signal: NodeJS.Signals | null } | null } = { spawnError: null, exit: null };
    child.exited = new Promise<void>((resolve) => {
      proc.once('error', (e) => {
        state.spawnError = e;
        resolve();
      });
      proc.once('exit', (code, signal) => {
        state.exit = { code, signal };
        exitKill.delete(proc);
        if (this.children.get(iface) === child) this.children.delete(iface);
        if (!child.stopping && this.opts.onUserspaceExit) this.opts.onUserspaceExit(iface, code, signal, child.output);
        resolve();
      });
    });
    // Never keep the event loop alive for it; down() or process exit stops it.
    proc.unref();
    for (const s of [proc.stdout, proc.stderr]) (s as Partial<net.Socket> | null)?.unref?.();
    if (!this.opts.keepOnExit) {
      installExitHook();
      exitKill.add(proc);
    }

    const fail = (why: string): WgCommandError =>
      new WgCommandError(
        `${this.wgGo} -f ${iface}: ${why}${child.output.trim() ? `: ${child.output.trim().slice(-2000)}` : ''}`,
        file,
        argv,
        state.exit?.code ?? null,
        child.output,
      );
    const deadline = Date.now() + (this.opts.startTimeoutMs ?? 5000);
    for (;;) {
      if (state.spawnError) throw fail(`could not start (${state.spawnError.message})`);
      if (state.exit) throw fail(`exited during start (${state.exit.signal ?? `code ${state.exit.code}`})`);
      const st = statOf();
      if (st && st.isSocket() && (!before || st.ino !== before.ino || st.ctimeMs !== before.ctimeMs)) break;
      if (Date.now() > deadline) {
        child.stopping = true;
        proc.kill('SIGKILL');
        await child.exited;
        throw fail('its control socket did not appear in time');
      }
      await sleep(20);
    }
    this.children.set(iface, child);
  }

  private async stopChild(child: Child): Promise<void> {
    const p = child.proc;
    child.stopping = true;
    if (p.exitCode !== null || p.signalCode !== null) return;
    // After `ip link del` wireguard-go exits by itself; give it a moment, then insist.
    const exited = (ms: number) => Promise.race([child.exited.then(() => true), sleep(ms).then(() => false)]);
    if (await exited(1000)) return;
    p.kill('SIGTERM');
    if (await exited(3000)) return;
    p.kill('SIGKILL');
    await child.exited;
  }

  private async setAddress(iface: string, address: string): Promise<void> {
    const want = address.includes('/') ? address : `${address}/32`;
    const r = await this.run(this.ip, ['-j', 'address', 'show', 'dev', iface]);
    let present = false;
    let links: Array<{ addr_info?: Array<{ family: string; local: string; prefixlen: number; scope?: string }> }> = [];
    try {
      links = JSON.parse(r.stdout || '[]');
    } catch {
      throw new WgCommandError(`ip -j address show dev ${iface}: unreadable output`, this.ip, [], 0, r.stderr, r.stdout);
    }
    for (const a of links.flatMap((l) => l.addr_info ?? [])) {
      if (a.family === 'inet6' && a.scope === 'link') continue;
      const cidr = `${a.local}/${a.prefixlen}`;
      if (cidr === want) present = true;
      else await this.run(this.ip, ['address', 'del', cidr, 'dev', iface]);
    }
    if (!present) await this.run(this.ip, ['address', 'add', want, 'dev', iface]);
  }
}
