// Network-namespace harness for end-to-end tests (runs as root). It builds small private networks on
// this machine — namespaces joined by veth pairs — runs servers and WireGuard peers inside them, and
// removes every thing it made, even when a test crashes.
//
//   import { createNetwork, skipReason } from '../lib/netns.js';
//   import { waitFor } from '../lib/wait.js';                       // the one waitFor of all tests
//
//   const reason = skipReason(['wireguard-go', 'wg', 'ping']);  // null when root and all tools exist
//   test('...', { skip: reason ?? false }, async (t) => {
//     const net = await createNetwork({ prefix: 'mytest' });       // prefix: [a-z0-9]{1,10}
//     t.after(() => net.cleanup());
//     const srv = await net.addNamespace('srv');                    // returns the real namespace name
//     const peer = await net.addNamespace('peer');
//     await net.link(srv, peer, '10.233.1.1/24', '10.233.1.2/24');  // veth pair, addresses, links up
//     ...
//   });
//
// API of a Network (every `ns` argument is a name returned by addNamespace, or null = the host):
//   id, prefix                      unique run id ([a-z0-9]{4}) and the caller's prefix
//   addNamespace(name)              new namespace "gtn-<prefix>-<pid>-<id>-<name>", loopback up
//   link(nsA, nsB, cidrA?, cidrB?)  veth pair between two namespaces (one side may be null = host);
//                                   addresses default to 10.233.<n>.1/24 and .2/24 (n counts links);
//                                   returns { ifA, ifB, addrA, addrB } (addrX without prefix)
//   ifName(tag)                     a run-unique interface name ("gtn<id><tag>", ≤ 15 chars) for
//                                   WireGuard interfaces: wireguard-go's sockets share one directory
//                                   (/var/run/wireguard) across namespaces, so names must differ
//   exec(ns, cmd, args, opts?)      run to completion → { stdout, stderr, code } (never throws on a
//                                   non-zero exit unless opts.check); opts: input, timeoutMs, env
//   spawn(ns, cmd, args, opts?)     long-running ChildProcess, killed by PID on cleanup
//   sysctl(ns, key, value)          e.g. sysctl(gw, 'net.ipv4.ip_forward', '1')
//   startHttpServer(ns, host, port, { name? })   HTTP server answering every request with JSON
//                                   { server, method, url, headers, body }; "/status/<code>" answers
//                                   with that status, "/delay/<ms>" waits first. Control: POST /__ctl
//                                   {status?: code|null (every answer), delay_ms?, queue?: [codes for
//                                   the next requests], reset?: true (forget hits)}; GET /__ctl →
//                                   { status, delay_ms, queue, hits, requests: the last 200
//                                   {at, method, url, headers, body} } (/__ctl itself is not counted)
//   startTcpEcho(ns, host, port) / startUdpEcho(ns, host, port)
//                                   each → Promise<Server { pid, host, port, stop(), output() }>
//   httpGet(ns, url, { method?, headers?, body?, timeoutMs? }) → { status, headers, body }
//   tcpRoundTrip(ns, host, port, message, timeoutMs?) → the echoed text, or null on failure
//   udpRoundTrip(ns, host, port, message, timeoutMs?) → the echoed text, or null on failure
//   ping(ns, address, { count?, timeoutS?, intervalS? }) → { ok, transmitted, received, output }
//   bringUpPeer(ns, ifName, configText, { mtu? })
//                                   a WireGuard client the way wg-quick would bring up the given
//                                   wg-quick file (as GET /peers/:id/config returns it): wireguard-go in
//                                   ns, `wg setconf` with the wg-quick-only lines (Address, DNS, MTU, …)
//                                   stripped, Address via `ip addr`, link up, AllowedIPs routed via the
//                                   interface → Peer { ifName, pid, addresses, allowedIps, stop() }
//   cleanup()                       kills our processes (tracked children and anything left inside our
//                                   namespaces), deletes our namespaces and host-side veths; idempotent.
//                                   Also runs (synchronously) on process exit, SIGINT and SIGTERM.
// Free functions: createNetwork({ prefix }), skipReason(tools) and which(tool).
//
// Addresses: use 10.233.0.0/16 (or any range) only INSIDE your namespaces; a link to the host (null)
// puts that address on the host, so prefer namespaces at both ends. Leftovers of crashed runs:
// scripts/netns-cleanup.sh removes namespaces named gtn-* whose owning process is gone.
import { waitFor } from './wait.js';
import { execFileSync, spawn as nodeSpawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface ExecResult {
  stdout: string;
  stderr: string;
  /** exit code; 128+n when killed by signal n (e.g. on timeout) */
  code: number;
}

export interface ExecOptions {
  input?: string;
  timeoutMs?: number;
  env?: NodeJS.ProcessEnv;
  /** throw when the exit code is not 0 */
  check?: boolean;
}

export interface Server {
  pid: number;
  host: string;
  port: number;
  stop(): Promise<void>;
  /** what the server printed so far */
  output(): string;
}

export interface HttpResult {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

export interface PingResult {
  ok: boolean;
  transmitted: number;
  received: number;
  output: string;
}

export interface Peer {
  ifName: string;
  pid: number;
  addresses: string[];
  allowedIps: string[];
  stop(): Promise<void>;
}

export interface LinkResult {
  ifA: string;
  ifB: string;
  addrA: string;
  addrB: string;
}

export interface Network {
  readonly id: string;
  readonly prefix: string;
  addNamespace(name: string): Promise<string>;
  link(nsA: string | null, nsB: string | null, cidrA?: string, cidrB?: string): Promise<LinkResult>;
  ifName(tag: string): string;
  exec(ns: string | null, cmd: string, args: string[], opts?: ExecOptions): Promise<ExecResult>;
  spawn(ns: string | null, cmd: string, args: string[], opts?: SpawnOptions): ChildProcess;
  sysctl(ns: string | null, key: string, value: string): Promise<void>;
  startHttpServer(ns: string | null, host: string, port: number, opts?: { name?: string }): Promise<Server>;
  startTcpEcho(ns: string | null, host: string, port: number): Promise<Server>;
  startUdpEcho(ns: string | null, host: string, port: number): Promise<Server>;
  httpGet(ns: string | null, url: string, opts?: { method?: string; headers?: Record<string, string>; body?: string; timeoutMs?: number }): Promise<HttpResult>;
  tcpRoundTrip(ns: string | null, host: string, port: number, message: string, timeoutMs?: number): Promise<string | null>;
  udpRoundTrip(ns: string | null, host: string, port: number, message: string, timeoutMs?: number): Promise<string | null>;
  ping(ns: string | null, address: string, opts?: { count?: number; timeoutS?: number; intervalS?: number }): Promise<PingResult>;
  bringUpPeer(ns: string | null, ifName: string, configText: string, opts?: { mtu?: number }): Promise<Peer>;
  cleanup(): Promise<void>;
}

const NAME_PREFIX = 'gtn';
const WG_SOCKET_DIR = '/var/run/wireguard';
const WG_ENV = { WG_I_PREFER_BUGGY_USERSPACE_TO_POLISHED_KMOD: '1' };

// ---------------------------------------------------------------- free helpers

/** Absolute path of an executable on PATH, or null. */
export function which(tool: string): string | null {
  for (const dir of (process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin').split(':')) {
    const p = path.join(dir || '.', tool);
    try {
      fs.accessSync(p, fs.constants.X_OK);
      return p;
    } catch {
      /* next */
    }
  }
  return null;
}

/** Why an e2e test cannot run here (not root, a tool missing), or null when it can. */
export function skipReason(tools: string[] = []): string | null {
  if (process.platform !== 'linux') return 'network namespaces need Linux';
  if (typeof process.getuid === 'function' && process.getuid() !== 0) return 'needs root (network namespaces)';
  const missing = ['ip', ...tools].filter((t) => !which(t));
  return missing.length ? `missing tools: ${missing.join(', ')}` : null;
}

function wrap(ns: string | null, cmd: string, args: string[]): [string, string[]] {
  return ns ? ['ip', ['netns', 'exec', ns, cmd, ...args]] : [cmd, args];
}

function alive(p: ChildProcess): boolean {
  return p.exitCode === null && p.signalCode === null;
}

function exited(p: ChildProcess, ms: number): Promise<boolean> {
  if (!alive(p)) return Promise.resolve(true);
  return new Promise((resolve) => {
    const t = setTimeout(() => resolve(!alive(p)), ms);
    p.once('exit', () => {
      clearTimeout(t);
      resolve(true);
    });
  });
}

function tryKill(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    /* gone */
  }
}

// ---------------------------------------------------------------- small programs run with `node -e`

const HTTP_SERVER = `
const http = require('http');
const [host, port, name] = process.argv.slice(1);
// behaviour set through POST /__ctl: status (null = normal), delay_ms, queue (statuses for the next requests)
const ctl = { status: null, delay_ms: 0, queue: [] };
let hits = 0;
const seen = [];
const srv = http.createServer((req, res) => {
  let body = '';
  req.on('data', (d) => (body += d));
  req.on('end', () => {
    if (req.url === '/__ctl') {
      if (req.method === 'POST') {
        const c = JSON.parse(body || '{}');
        for (const k of ['status', 'delay_ms', 'queue']) if (k in c) ctl[k] = c[k];
        if (c.reset) { hits = 0; seen.length = 0; }
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(JSON.stringify({ ...ctl, hits, requests: seen }));
    }
    hits++;
    seen.push({ at: Date.now(), method: req.method, url: req.url, headers: req.headers, body });
    if (seen.length > 200) seen.shift();
    const m = /^\\/(status|delay)\\/(\\d+)/.exec(req.url);
    const status = ctl.queue.length ? ctl.queue.shift() : ctl.status ?? (m && m[1] === 'status' ? Number(m[2]) : 200);
    const send = () => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ server: name, method: req.method, url: req.url, headers: req.headers, body }));
    };
    const delay = ctl.delay_ms || (m && m[1] === 'delay' ? Number(m[2]) : 0);
    if (delay) setTimeout(send, delay); else send();
  });
});
srv.listen(Number(port), host, () => console.log('READY'));
`;

const TCP_ECHO = `
const net = require('net');
const [host, port] = process.argv.slice(1);
net.createServer((s) => { s.on('error', () => {}); s.pipe(s); }).listen(Number(port), host, () => console.log('READY'));
`;

const UDP_ECHO = `
const dgram = require('dgram');
const [host, port] = process.argv.slice(1);
const s = dgram.createSocket(host.includes(':') ? 'udp6' : 'udp4');
s.on('message', (m, r) => s.send(m, r.port, r.address));
s.bind(Number(port), host, () => console.log('READY'));
`;

const TCP_CLIENT = `
const net = require('net');
const [host, port, msg, ms] = process.argv.slice(1);
let got = '';
const s = net.connect(Number(port), host, () => s.write(msg));
s.setEncoding('utf8');
s.on('data', (d) => { got += d; if (got.length >= msg.length) { process.stdout.write(got); s.destroy(); process.exit(0); } });
s.on('error', (e) => { console.error(e.message); process.exit(2); });
setTimeout(() => { console.error('timeout'); process.exit(3); }, Number(ms));
`;

const UDP_CLIENT = `
const dgram = require('dgram');
const [host, port, msg, ms] = process.argv.slice(1);
const s = dgram.createSocket(host.includes(':') ? 'udp6' : 'udp4');
s.on('message', (m) => { process.stdout.write(m.toString()); process.exit(0); });
s.on('error', (e) => { console.error(e.message); process.exit(2); });
const send = () => s.send(msg, Number(port), host);
send();
setInterval(send, 300);
setTimeout(() => { console.error('timeout'); process.exit(3); }, Number(ms));
`;

const HTTP_CLIENT = `
const http = require('http');
const [url, method, headersJson, body, ms] = process.argv.slice(1);
const req = http.request(url, { method, headers: JSON.parse(headersJson), timeout: Number(ms) }, (res) => {
  let data = '';
  res.setEncoding('utf8');
  res.on('data', (d) => (data += d));
  res.on('end', () => { process.stdout.write(JSON.stringify({ status: res.statusCode, headers: res.headers, body: data })); process.exit(0); });
});
req.on('timeout', () => req.destroy(new Error('timeout')));
req.on('error', (e) => { console.error(e.message); process.exit(2); });
req.end(body);
`;

// ---------------------------------------------------------------- wg-quick file handling

const WG_QUICK_ONLY = new Set(['address', 'dns', 'mtu', 'table', 'preup', 'postup', 'predown', 'postdown', 'saveconfig']);

/** Splits a wg-quick file into what `wg setconf` takes and the wg-quick-only values we apply ourselves. */
export function splitWgQuickConfig(text: string): { wgConfig: string; addresses: string[]; allowedIps: string[]; mtu?: number } {
  const keep: string[] = [];
  const addresses: string[] = [];
  const allowedIps: string[] = [];
  let mtu: number | undefined;
  let section = '';
  for (const raw of text.split('\n')) {
    const line = raw.replace(/#.*$/, '').trim();
    if (!line) continue;
    const sec = /^\[(\w+)\]$/.exec(line);
    if (sec) {
      section = sec[1].toLowerCase();
      keep.push(line);
      continue;
    }
    const kv = /^([A-Za-z]+)\s*=\s*(.*)$/.exec(line);
    if (!kv) throw new Error(`bad line in WireGuard config: ${raw}`);
    const key = kv[1].toLowerCase();
    const list = kv[2]
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    if (section === 'interface' && WG_QUICK_ONLY.has(key)) {
      if (key === 'address') addresses.push(...list);
      if (key === 'mtu') mtu = Number(kv[2]);
      continue;
    }
    if (section === 'peer' && key === 'allowedips') allowedIps.push(...list);
    keep.push(line);
  }
  return { wgConfig: keep.join('\n') + '\n', addresses, allowedIps, mtu };
}

// ---------------------------------------------------------------- the network

const live = new Set<NetworkImpl>();
let hooksInstalled = false;
function installHooks(): void {
  if (hooksInstalled) return;
  hooksInstalled = true;
  process.on('exit', () => {
    for (const n of live) n.cleanupSync();
  });
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    process.once(sig, () => {
      for (const n of live) n.cleanupSync();
      process.kill(process.pid, sig); // default action now that our handler is gone
    });
  }
}

class NetworkImpl implements Network {
  readonly id: string;
  private readonly namespaces: string[] = [];
  private readonly hostLinks: string[] = [];
  private readonly children = new Set<ChildProcess>();
  private linkCount = 0;
  private done = false;

  constructor(readonly prefix: string) {
    this.id = randomBytes(4).readUInt32BE(0).toString(36).padStart(4, '0').slice(-4);
  }

  ifName(tag: string): string {
    const name = `${NAME_PREFIX}${this.id}${tag}`;
    if (!/^[a-z0-9]{1,8}$/.test(tag) || name.length > 15) throw new Error(`ifName tag "${tag}" must be 1-8 of [a-z0-9]`);
    return name;
  }

  async addNamespace(name: string): Promise<string> {
    if (!/^[a-z0-9]{1,16}$/.test(name)) throw new Error(`namespace name "${name}" must be 1-16 of [a-z0-9]`);
    const ns = `${NAME_PREFIX}-${this.prefix}-${process.pid}-${this.id}-${name}`;
    await this.exec(null, 'ip', ['netns', 'add', ns], { check: true });
    this.namespaces.push(ns);
    await this.exec(ns, 'ip', ['link', 'set', 'lo', 'up'], { check: true });
    return ns;
  }

  async link(nsA: string | null, nsB: string | null, cidrA?: string, cidrB?: string): Promise<LinkResult> {
    if (!nsA && !nsB) throw new Error('link: at least one side must be a namespace');
    for (const ns of [nsA, nsB]) if (ns && !this.namespaces.includes(ns)) throw new Error(`link: ${ns} is not a namespace of this network`);
    const n = ++this.linkCount;
    const a = cidrA ?? `10.233.${n}.1/24`;
    const b = cidrB ?? `10.233.${n}.2/24`;
    const ifA = `${NAME_PREFIX}${this.id}v${n}a`;
    const ifB = `${NAME_PREFIX}${this.id}v${n}b`;
    const args = ['link', 'add', 'name', ifA, ...(nsA ? ['netns', nsA] : []), 'type', 'veth', 'peer', 'name', ifB, ...(nsB ? ['netns', nsB] : [])];
    await this.exec(null, 'ip', args, { check: true });
    if (!nsA) this.hostLinks.push(ifA);
    if (!nsB) this.hostLinks.push(ifB);
    for (const [ns, ifn, cidr] of [
      [nsA, ifA, a],
      [nsB, ifB, b],
    ] as const) {
      await this.exec(ns, 'ip', ['address', 'add', cidr, 'dev', ifn], { check: true });
      await this.exec(ns, 'ip', ['link', 'set', 'dev', ifn, 'up'], { check: true });
    }
    return { ifA, ifB, addrA: a.split('/')[0], addrB: b.split('/')[0] };
  }

  exec(ns: string | null, cmd: string, args: string[], opts: ExecOptions = {}): Promise<ExecResult> {
    const [file, argv] = wrap(ns, cmd, args);
    return new Promise((resolve, reject) => {
      const p = nodeSpawn(file, argv, { env: { ...process.env, ...opts.env }, stdio: ['pipe', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      p.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
      p.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
      const timer = setTimeout(() => p.kill('SIGKILL'), opts.timeoutMs ?? 20_000);
      p.once('error', (e) => {
        clearTimeout(timer);
        reject(new Error(`${[cmd, ...args].join(' ')}: ${e.message}`));
      });
      p.once('close', (code, signal) => {
        clearTimeout(timer);
        const r = { stdout, stderr, code: code ?? 128 + (signal ? (os.constants.signals[signal] ?? 0) : 0) };
        if (opts.check && r.code !== 0) {
          reject(new Error(`${ns ? `[${ns}] ` : ''}${[cmd, ...args].join(' ')}: exit ${r.code}: ${stderr.trim() || stdout.trim()}`));
        } else resolve(r);
      });
      p.stdin!.on('error', () => {});
      p.stdin!.end(opts.input ?? '');
    });
  }

  spawn(ns: string | null, cmd: string, args: string[], opts: SpawnOptions = {}): ChildProcess {
    const [file, argv] = wrap(ns, cmd, args);
    const p = nodeSpawn(file, argv, { stdio: ['ignore', 'pipe', 'pipe'], ...opts });
    this.children.add(p);
    p.once('exit', () => this.children.delete(p));
    p.on('error', () => {}); // reported through exit / the caller's own listeners
    return p;
  }

  async sysctl(ns: string | null, key: string, value: string): Promise<void> {
    await this.exec(ns, 'sysctl', ['-q', '-w', `${key}=${value}`], { check: true });
  }

  private async startNodeServer(ns: string | null, script: string, args: string[], what: string): Promise<Server> {
    const p = this.spawn(ns, process.execPath, ['-e', script, ...args]);
    let out = '';
    p.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
    p.stderr!.setEncoding('utf8').on('data', (d: string) => (out += d));
    try {
      await waitFor(
        () => {
          if (!alive(p)) throw new Error(`${what} exited: ${out.trim()}`);
          return out.includes('READY');
        },
        10_000,
        { intervalMs: 20, what },
      );
    } catch (e) {
      p.kill('SIGKILL');
      throw new Error(`${what} did not start: ${out.trim() || (e as Error).message}`);
    }
    const [host, port] = args;
    return {
      pid: p.pid!,
      host,
      port: Number(port),
      output: () => out,
      stop: async () => {
        p.kill('SIGTERM');
        if (!(await exited(p, 2000))) p.kill('SIGKILL');
        await exited(p, 2000);
      },
    };
  }

  startHttpServer(ns: string | null, host: string, port: number, opts: { name?: string } = {}): Promise<Server> {
    return this.startNodeServer(ns, HTTP_SERVER, [host, String(port), opts.name ?? `${ns ?? 'host'}:${port}`], `HTTP server ${host}:${port}`);
  }

  startTcpEcho(ns: string | null, host: string, port: number): Promise<Server> {
    return this.startNodeServer(ns, TCP_ECHO, [host, String(port)], `TCP echo ${host}:${port}`);
  }

  startUdpEcho(ns: string | null, host: string, port: number): Promise<Server> {
    return this.startNodeServer(ns, UDP_ECHO, [host, String(port)], `UDP echo ${host}:${port}`);
  }

  async httpGet(
    ns: string | null,
    url: string,
    opts: { method?: string; headers?: Record<string, string>; body?: string; timeoutMs?: number } = {},
  ): Promise<HttpResult> {
    const ms = opts.timeoutMs ?? 5000;
    const r = await this.exec(
      ns,
      process.execPath,
      ['-e', HTTP_CLIENT, url, opts.method ?? 'GET', JSON.stringify(opts.headers ?? {}), opts.body ?? '', String(ms)],
      {
        timeoutMs: ms + 3000,
      },
    );
    if (r.code !== 0) throw new Error(`HTTP ${opts.method ?? 'GET'} ${url} failed: ${r.stderr.trim() || `exit ${r.code}`}`);
    return JSON.parse(r.stdout) as HttpResult;
  }

  async tcpRoundTrip(ns: string | null, host: string, port: number, message: string, timeoutMs = 3000): Promise<string | null> {
    const r = await this.exec(ns, process.execPath, ['-e', TCP_CLIENT, host, String(port), message, String(timeoutMs)], { timeoutMs: timeoutMs + 3000 });
    return r.code === 0 ? r.stdout : null;
  }

  async udpRoundTrip(ns: string | null, host: string, port: number, message: string, timeoutMs = 3000): Promise<string | null> {
    const r = await this.exec(ns, process.execPath, ['-e', UDP_CLIENT, host, String(port), message, String(timeoutMs)], { timeoutMs: timeoutMs + 3000 });
    return r.code === 0 ? r.stdout : null;
  }

  async ping(ns: string | null, address: string, opts: { count?: number; timeoutS?: number; intervalS?: number } = {}): Promise<PingResult> {
    const count = opts.count ?? 1;
    const args = ['-n', '-c', String(count), '-W', String(opts.timeoutS ?? 1)];
    if (opts.intervalS !== undefined) args.push('-i', String(opts.intervalS));
    args.push(address);
    const r = await this.exec(ns, 'ping', args, { timeoutMs: 10_000 + count * 1000 * (opts.intervalS ?? 1) });
    const m = /(\d+) packets transmitted, (\d+) (?:packets )?received/.exec(r.stdout);
    const transmitted = m ? Number(m[1]) : 0;
    const received = m ? Number(m[2]) : 0;
    return { ok: r.code === 0 && received > 0, transmitted, received, output: r.stdout + r.stderr };
  }

  async bringUpPeer(ns: string | null, ifName: string, configText: string, opts: { mtu?: number } = {}): Promise<Peer> {
    if (!/^[a-zA-Z0-9_.=+-]{1,15}$/.test(ifName)) throw new Error(`bad interface name ${ifName}`);
    const cfg = splitWgQuickConfig(configText);
    const sock = path.join(WG_SOCKET_DIR, `${ifName}.sock`);
    const statOf = () => {
      try {
        return fs.statSync(sock);
      } catch {
        return null;
      }
    };
    const before = statOf();
    const p = this.spawn(ns, 'wireguard-go', ['-f', ifName], { env: { ...process.env, ...WG_ENV }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    p.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
    p.stderr!.setEncoding('utf8').on('data', (d: string) => (out += d));
    await waitFor(
      () => {
        if (!alive(p)) throw new Error(`wireguard-go ${ifName} exited: ${out.trim().slice(-500)}`);
        const st = statOf();
        return st !== null && (!before || st.ino !== before.ino || st.ctimeMs !== before.ctimeMs);
      },
      5000,
      { intervalMs: 20, what: `wireguard-go ${ifName} socket` },
    );
    const stop = async () => {
      await this.exec(ns, 'ip', ['link', 'del', 'dev', ifName]);
      if (!(await exited(p, 2000))) p.kill('SIGTERM');
      if (!(await exited(p, 2000))) p.kill('SIGKILL');
      await exited(p, 2000);
    };
    try {
      // wg reads the config from a file (Node's stdin pipes are sockets wg cannot fopen).
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gtn-wg-'));
      try {
        const file = path.join(dir, 'wg.conf');
        fs.writeFileSync(file, cfg.wgConfig, { mode: 0o600 });
        await this.exec(ns, 'wg', ['setconf', ifName, file], { check: true });
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
      for (const a of cfg.addresses) await this.exec(ns, 'ip', ['address', 'add', a, 'dev', ifName], { check: true });
      await this.exec(ns, 'ip', ['link', 'set', 'dev', ifName, 'mtu', String(opts.mtu ?? cfg.mtu ?? 1420), 'up'], { check: true });
      for (const cidr of cfg.allowedIps) {
        const family = cidr.includes(':') ? '-6' : '-4';
        const dest = cidr === '0.0.0.0/0' || cidr === '::/0' ? 'default' : cidr;
        await this.exec(ns, 'ip', [family, 'route', 'replace', dest, 'dev', ifName], { check: true });
      }
    } catch (e) {
      await stop();
      throw e;
    }
    return { ifName, pid: p.pid!, addresses: cfg.addresses, allowedIps: cfg.allowedIps, stop };
  }

  // ------------------------------------------------------------ cleanup

  private nsPids(ns: string): number[] {
    try {
      return execFileSync('ip', ['netns', 'pids', ns], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })
        .split('\n')
        .map(Number)
        .filter((n) => n > 0 && n !== process.pid);
    } catch {
      return [];
    }
  }

  async cleanup(): Promise<void> {
    if (this.done) return;
    // Our tracked children first, politely.
    const kids = [...this.children];
    for (const p of kids) p.kill('SIGTERM');
    await Promise.all(kids.map(async (p) => (await exited(p, 2000)) || p.kill('SIGKILL')));
    await Promise.all(kids.map((p) => exited(p, 2000)));
    // Anything else still inside our namespaces (e.g. a driver's wireguard-go) is ours too.
    for (const ns of this.namespaces) for (const pid of this.nsPids(ns)) tryKill(pid, 'SIGTERM');
    await waitFor(() => this.namespaces.every((ns) => this.nsPids(ns).length === 0), 2000, { intervalMs: 50 }).catch(() => {
      for (const ns of this.namespaces) for (const pid of this.nsPids(ns)) tryKill(pid, 'SIGKILL');
    });
    this.cleanupSync();
  }

  /** Synchronous last resort (process exit): kill, delete, forget. Safe to call twice. */
  cleanupSync(): void {
    if (this.done) return;
    this.done = true;
    live.delete(this);
    for (const p of this.children) if (p.pid && alive(p)) tryKill(p.pid, 'SIGKILL');
    for (const ns of this.namespaces) {
      for (const pid of this.nsPids(ns)) tryKill(pid, 'SIGKILL');
      try {
        execFileSync('ip', ['netns', 'del', ns], { stdio: 'ignore' });
      } catch {
        /* already gone */
      }
    }
    for (const l of this.hostLinks) {
      try {
        execFileSync('ip', ['link', 'del', 'dev', l], { stdio: 'ignore' });
      } catch {
        /* went with its namespace */
      }
    }
  }
}

/** A new, empty test network. prefix ([a-z0-9]{1,10}) names your test in the namespace names. */
export async function createNetwork(opts: { prefix: string }): Promise<Network> {
  if (!/^[a-z0-9]{1,10}$/.test(opts.prefix)) throw new Error('prefix must be 1-10 of [a-z0-9]');
  const reason = skipReason();
  if (reason) throw new Error(`createNetwork: ${reason}`);
  const n = new NetworkImpl(opts.prefix);
  installHooks();
  live.add(n);
  return n;
}
