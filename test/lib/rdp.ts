// A real RDP server (Debian's xrdp + xrdp-sesman, PAM authentication, a TigerVNC desktop) inside a
// network namespace of test/lib/netns.ts, throwaway local users for it to authenticate, and a real
// RDP client (FreeRDP's xfreerdp on a virtual X display, Xvfb) — for the end-to-end tests of RDP routes (as root).
//
//   import { startXrdp, createRdpUser, runXfreerdp, rdpAuthenticate } from '../lib/rdp.js';
//
//   const user = await createRdpUser('S3cret pw');   t.after(() => user.remove());
//   const xrdp = await startXrdp(net, lanNs, { host: '10.241.7.2', port: 3389 });  // stopped by net.cleanup() too
//   const r = await rdpAuthenticate(net, clientNs, xrdp, { host: xrdp.host, port: xrdp.port, user: user.name, password: 'S3cret pw' });
//   r.auth?.ok === true   // xrdp's session manager accepted the password (PAM) and started the session
//
// How the verdict is read. xrdp 0.9 has no NLA (CredSSP): the password travels inside the TLS-protected
// RDP logon info and xrdp checks it (through xrdp-sesman and PAM) only AFTER the RDP connection is
// active. So `xfreerdp /auth-only` exits 0 for ANY password against xrdp (it stops at "connection
// active", before xrdp has looked at the password), `/sec:nla` fails negotiation (exit 133), and
// `/sec:rdp` is refused by this set-up (exit 131). What works: a full connection with TLS security
// (FreeRDP's default negotiation picks it; `/sec:tls` forces it) and the password from stdin
// (`/from-stdin:force`: plain `/from-stdin` only prompts when the server asks, which xrdp never does,
// and then xrdp drops the connection for missing credentials, exit 131). Every xrdp started here runs
// with `require_credentials=true`, so a wrong password ends the connection at once (no login dialog),
// and with a desktop that logs itself off one second after it started, so a right password ends the
// connection soon too. FreeRDP exits 12 (ERRINFO_LOGOFF_BY_USER) in BOTH cases: its exit code cannot
// tell. The verdict is xrdp-sesman's own log line for the attempt — "++ created session (access
// granted): username U, ip A:P" or "AUTHFAIL: user=U ip=A" — read from this instance's private log
// (authEvents / waitForAuth), which also names the address the connection came from (the route's path).
//
// Several instances (one per namespace) run side by side: each gets its own copy of /etc/xrdp and
// /run/xrdp, bind-mounted in its own mount namespace (the one `ip netns exec` creates), its own X
// display range, logs and TLS certificate; xrdp-sesman listens on 127.0.0.1:3350 of its namespace.
//
// API:
//   startXrdp(net, ns, { host, port, displayOffset?, sessionSeconds? }) → XrdpServer
//       { ns, host, port, dir, startupMs, authEvents(), waitForAuth(user, { after?, timeoutMs? }),
//         xrdpLog(), sesmanLog(), setSessionSeconds(s), stop() }   (stop() also removes its directory, logs included;
//       the directories of instances never stopped go when the process exits)
//   createRdpUser(password, { prefix? }) → RdpUser { name, home, setPassword(pw), remove() }
//       (useradd with a home in a temp directory, chpasswd from stdin; removed on remove() or exit)
//   startXvfb(net, ns) → { display, stop() }   a virtual X display for xfreerdp (DISPLAY=display)
//   runXfreerdp(net, ns, { host, port, user, password, args?, timeoutMs? }) → { code, ms, output }
//   rdpAuthenticate(net, ns, server, {...runXfreerdp options}) → { code, ms, output, auth: AuthEvent | null }
//   XFREERDP_ARGS   the client arguments that work against xrdp (besides /v: /u:)
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { which, type Network } from './netns.js';
import { waitFor } from './wait.js';

/** The Debian tools these tests need (for skipReason). */
export const RDP_TOOLS = ['xrdp', 'xrdp-sesman', 'Xvnc', 'xfreerdp', 'Xvfb', 'openssl', 'useradd', 'chpasswd'];

/** The xfreerdp arguments (besides /v:host:port and /u:user) that authenticate against xrdp, the password on stdin. */
export const XFREERDP_ARGS = ['/from-stdin:force', '/cert:ignore', '/sec:tls'];

export interface AuthEvent {
  ok: boolean;
  user: string;
  /** the address the RDP connection came from, as xrdp saw it */
  ip: string;
  /** the line's index in the sesman log (use with waitForAuth's `after`) */
  index: number;
  line: string;
}

export interface XrdpServer {
  ns: string;
  host: string;
  port: number;
  dir: string;
  /** from spawn to xrdp accepting TCP connections */
  startupMs: number;
  /** every authentication verdict xrdp-sesman logged so far, oldest first */
  authEvents(): AuthEvent[];
  /** the next verdict for `user` with index > after (default -1) */
  waitForAuth(user: string, opts?: { after?: number; timeoutMs?: number }): Promise<AuthEvent>;
  xrdpLog(): string;
  sesmanLog(): string;
  /** how long the desktop of the NEXT successful logins lives before it logs itself off */
  setSessionSeconds(seconds: number): void;
  stop(): Promise<void>;
}

export interface RdpUser {
  name: string;
  home: string;
  setPassword(password: string): Promise<void>;
  remove(): Promise<void>;
}

let instances = 0;
/** instance directories still to remove (stop() removes its own; the rest go at exit) */
const dirs = new Set<string>();
let dirHook = false;

function readOr(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

/** Parses xrdp-sesman's log into authentication verdicts. */
export function parseSesmanAuth(log: string): AuthEvent[] {
  const out: AuthEvent[] = [];
  log.split('\n').forEach((line, index) => {
    let m = /\+\+ created session \(access granted\): username (\S+), ip ([^\s,]+?)(?::\d+)?(?: - |,|$)/.exec(line);
    if (m) return void out.push({ ok: true, user: m[1], ip: m[2], index, line });
    m = /AUTHFAIL: user=(\S+) ip=(\S+)/.exec(line);
    if (m) out.push({ ok: false, user: m[1], ip: m[2].replace(/:\d+$/, ''), index, line });
  });
  return out;
}

function xrdpIni(dir: string, host: string, port: number): string {
  return `[Globals]
ini_version=1
fork=false
port=tcp://${host}:${port}
use_vsock=false
tcp_nodelay=true
tcp_keepalive=true
security_layer=negotiate
crypt_level=high
certificate=${dir}/etc/cert.pem
key_file=${dir}/etc/key.pem
ssl_protocols=TLSv1.2, TLSv1.3
autorun=Xvnc
allow_channels=true
allow_multimon=true
bitmap_cache=true
bitmap_compression=true
bulk_compression=true
max_bpp=24
new_cursors=true
use_fastpath=both
; no login dialog: a wrong password ends the connection at once
require_credentials=true
hidelogwindow=true

[Logging]
LogFile=${dir}/log/xrdp.log
LogLevel=INFO
EnableSyslog=false

[Xvnc]
name=Xvnc
lib=libvnc.so
username=ask
password=ask
ip=127.0.0.1
port=-1
`;
}

function sesmanIni(dir: string, displayOffset: number): string {
  return `[Globals]
ListenAddress=127.0.0.1
ListenPort=3350
EnableUserWindowManager=false
DefaultWindowManager=${dir}/session.sh

[Security]
AllowRootLogin=false
MaxLoginRetry=4
AlwaysGroupCheck=false

[Sessions]
X11DisplayOffset=${displayOffset}
MaxSessions=20
KillDisconnected=true
DisconnectedTimeLimit=0
IdleTimeLimit=0
Policy=Default

[Logging]
LogFile=${dir}/log/sesman.log
LogLevel=INFO
EnableSyslog=false

[Xvnc]
param=Xvnc
param=-bs
param=-nolisten
param=tcp
param=-localhost
param=-dpi
param=96

[Chansrv]
FuseMountName=thinclient_drives

[ChansrvLogging]
LogLevel=INFO
EnableSyslog=false

[SessionVariables]
`;
}

/**
 * Starts xrdp and xrdp-sesman in namespace `ns`, xrdp listening on host:port (an address of that
 * namespace). Resolves once xrdp accepts TCP connections there. net.cleanup() ends it too (it kills
 * everything inside the namespace); stop() ends it earlier.
 * sessionSeconds: how long the desktop of a successful login lives before it logs itself off (default 1).
 */
export async function startXrdp(
  net: Network,
  ns: string,
  o: { host: string; port: number; displayOffset?: number; sessionSeconds?: number },
): Promise<XrdpServer> {
  const n = ++instances;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `gatehouse-xrdp-${n}-`));
  dirs.add(dir);
  if (!dirHook) {
    dirHook = true;
    process.once('exit', () => {
      for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
    });
  }
  // the session (running as the test user) reads session.sh and writes into log/
  fs.chmodSync(dir, 0o755);
  fs.mkdirSync(path.join(dir, 'etc'));
  fs.mkdirSync(path.join(dir, 'run', 'sockdir'), { recursive: true });
  fs.chmodSync(path.join(dir, 'run', 'sockdir'), 0o1777); // chansrv (as the user) makes its socket here
  fs.mkdirSync(path.join(dir, 'log'), { mode: 0o755 });
  // keymaps and the rest of the package's files; our own xrdp.ini, sesman.ini and certificate
  for (const f of fs.readdirSync('/etc/xrdp')) {
    if (/^km-.*\.ini$|^xrdp_keyboard\.ini$|^rsakeys\.ini$/.test(f)) fs.copyFileSync(path.join('/etc/xrdp', f), path.join(dir, 'etc', f));
  }
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '2',
      '-subj',
      `/CN=xrdp-${ns}`,
      '-keyout',
      path.join(dir, 'etc', 'key.pem'),
      '-out',
      path.join(dir, 'etc', 'cert.pem'),
    ],
    {
      stdio: 'ignore',
    },
  );
  fs.writeFileSync(path.join(dir, 'etc', 'xrdp.ini'), xrdpIni(dir, o.host, o.port));
  // every instance its own display range (the X sockets in /tmp/.X11-unix are shared by all namespaces)
  const displayOffset = o.displayOffset ?? 100 + ((process.pid * 37 + n * 50) % 800);
  fs.writeFileSync(path.join(dir, 'etc', 'sesman.ini'), sesmanIni(dir, displayOffset));
  // the desktop session's program: it logs itself off after sessionSeconds
  const setSessionSeconds = (sec: number) => fs.writeFileSync(path.join(dir, 'session-seconds'), `${sec}\n`, { mode: 0o644 });
  setSessionSeconds(o.sessionSeconds ?? 1);
  fs.writeFileSync(
    path.join(dir, 'session.sh'),
    `#!/bin/sh\necho "session $(id -un) $DISPLAY $(date +%s)" >> ${dir}/log/sessions.log 2>/dev/null\nexec sleep "$(cat ${dir}/session-seconds)"\n`,
    { mode: 0o755 },
  );
  fs.writeFileSync(path.join(dir, 'log', 'sessions.log'), '', { mode: 0o666 });
  fs.chmodSync(path.join(dir, 'log', 'sessions.log'), 0o666);
  fs.mkdirSync('/run/xrdp', { recursive: true });
  // `ip netns exec` gives the command its own mount namespace: the bind mounts stay in it
  const script = [
    'set -e',
    `mount --bind "$1/etc" /etc/xrdp`,
    `mount --bind "$1/run" /run/xrdp`,
    `xrdp-sesman --nodaemon -c "$1/etc/sesman.ini" > "$1/log/sesman.out" 2>&1 &`,
    `echo $! > "$1/sesman.pid"`,
    'exec xrdp --nodaemon',
  ].join('\n');
  const started = Date.now();
  const p = net.spawn(ns, 'sh', ['-c', script, 'xrdp-start', dir]);
  let out = '';
  p.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  p.stderr!.setEncoding('utf8').on('data', (d: string) => (out += d));
  const exited = () => p.exitCode !== null || p.signalCode !== null;
  await waitFor(
    async () => {
      if (exited()) throw new Error(`xrdp exited: ${out.trim()} ${readOr(path.join(dir, 'log', 'xrdp.log')).slice(-1000)}`);
      // xrdp answers TCP once listening, and sesman must be listening too
      const r = await net.exec(ns, 'ss', ['-Hltn']);
      return r.stdout.includes(`${o.host}:${o.port} `) && r.stdout.includes(':3350 ');
    },
    15_000,
    { intervalMs: 50, what: `xrdp on ${o.host}:${o.port} in ${ns}` },
  ).catch((e) => {
    p.kill('SIGKILL');
    throw e;
  });
  const startupMs = Date.now() - started;
  const sesmanLog = () => readOr(path.join(dir, 'log', 'sesman.log'));
  const authEvents = () => parseSesmanAuth(sesmanLog());
  return {
    ns,
    host: o.host,
    port: o.port,
    dir,
    startupMs,
    authEvents,
    xrdpLog: () => readOr(path.join(dir, 'log', 'xrdp.log')),
    sesmanLog,
    setSessionSeconds,
    waitForAuth: (user, opts = {}) =>
      waitFor(() => authEvents().find((e) => e.user === user && e.index > (opts.after ?? -1)), opts.timeoutMs ?? 10_000, {
        intervalMs: 50,
        what: `xrdp-sesman's verdict for ${user}`,
      }),
    stop: async () => {
      const sesman = Number(readOr(path.join(dir, 'sesman.pid')).trim());
      if (!exited()) {
        const gone = new Promise<void>((r) => p.once('exit', () => r()));
        p.kill('SIGTERM');
        await Promise.race([gone, new Promise((r) => setTimeout(r, 3000))]);
        if (!exited()) p.kill('SIGKILL');
      }
      if (sesman > 0) {
        try {
          process.kill(sesman, 'SIGTERM');
        } catch {
          /* gone */
        }
      }
      fs.rmSync(dir, { recursive: true, force: true });
      dirs.delete(dir);
    },
  };
}

// ---------------------------------------------------------------- throwaway local users

const users = new Set<string>();
let exitHook = false;

function removeUserSync(name: string): void {
  try {
    execFileSync('userdel', ['-r', '-f', name], { stdio: 'ignore' });
  } catch {
    /* already gone */
  }
  users.delete(name);
}

/** A new local user (name gtrdp<random>) with this password and a home in a temp directory. */
export async function createRdpUser(password: string, o: { prefix?: string } = {}): Promise<RdpUser> {
  const name = `${o.prefix ?? 'gtrdp'}${randomBytes(3).toString('hex')}`;
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-rdpuser-'));
  fs.chmodSync(base, 0o755);
  const home = path.join(base, name);
  execFileSync('useradd', ['--create-home', '--home-dir', home, '--shell', '/bin/sh', '--comment', 'gatehouse e2e test user', name], { stdio: 'ignore' });
  users.add(name);
  if (!exitHook) {
    exitHook = true;
    process.once('exit', () => {
      for (const u of [...users]) removeUserSync(u);
    });
  }
  const setPassword = async (pw: string) => {
    if (pw.includes('\n') || pw.includes(':')) throw new Error('chpasswd: the password may not contain a newline or a colon here');
    execFileSync('chpasswd', [], { input: `${name}:${pw}\n`, stdio: ['pipe', 'ignore', 'pipe'] });
  };
  await setPassword(password);
  return {
    name,
    home,
    setPassword,
    remove: async () => {
      removeUserSync(name);
      fs.rmSync(base, { recursive: true, force: true });
    },
  };
}

// ---------------------------------------------------------------- the client

export interface Xvfb {
  /** e.g. ":12", for DISPLAY */
  display: string;
  stop(): Promise<void>;
}

/**
 * A virtual X server (Xvfb) in namespace ns for xfreerdp: run clients with DISPLAY=display. Used
 * instead of xvfb-run, whose own exit code replaces the command's when its cleanup races (exit 5,
 * "problem while cleaning up temporary directory"). Xvfb picks a free display number itself.
 */
export async function startXvfb(net: Network, ns: string | null): Promise<Xvfb> {
  const p = net.spawn(ns, 'Xvfb', ['-displayfd', '3', '-nolisten', 'tcp', '-screen', '0', '1280x1024x24'], { stdio: ['ignore', 'pipe', 'pipe', 'pipe'] });
  let out = '';
  let fd3 = '';
  p.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  p.stderr!.setEncoding('utf8').on('data', (d: string) => (out += d));
  (p.stdio[3] as NodeJS.ReadableStream).setEncoding('utf8');
  (p.stdio[3] as NodeJS.ReadableStream).on('data', (d: string) => (fd3 += d));
  const exited = () => p.exitCode !== null || p.signalCode !== null;
  const n = await waitFor(
    () => {
      if (exited()) throw new Error(`Xvfb exited: ${out.trim().slice(-1000)}`);
      return /^\d+\n/.exec(fd3)?.[0].trim();
    },
    10_000,
    { intervalMs: 20, what: 'Xvfb' },
  ).catch((e) => {
    p.kill('SIGKILL');
    throw e;
  });
  return {
    display: `:${n}`,
    stop: async () => {
      if (exited()) return;
      const gone = new Promise<void>((r) => p.once('exit', () => r()));
      p.kill('SIGTERM');
      await Promise.race([gone, new Promise((r) => setTimeout(r, 3000))]);
      if (!exited()) p.kill('SIGKILL');
    },
  };
}

export interface XfreerdpResult {
  /** xfreerdp's exit code (12 = the server ended the session, whether or not the password was right) */
  code: number;
  ms: number;
  output: string;
}

/**
 * Runs `xfreerdp /v:host:port /u:user` + XFREERDP_ARGS (+ args) in namespace ns on a virtual X
 * display (startXvfb, one for this call), the password on stdin (never on the command line), HOME in
 * a temp directory (FreeRDP writes its config and certificate store there).
 */
export async function runXfreerdp(
  net: Network,
  ns: string | null,
  o: { host: string; port: number; user: string; password: string; args?: string[]; timeoutMs?: number },
): Promise<XfreerdpResult> {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-xfreerdp-'));
  const x = await startXvfb(net, ns);
  try {
    const started = Date.now();
    const r = await net.exec(ns, 'xfreerdp', [`/v:${o.host}:${o.port}`, `/u:${o.user}`, ...XFREERDP_ARGS, ...(o.args ?? [])], {
      input: `${o.password}\n`,
      timeoutMs: o.timeoutMs ?? 30_000,
      env: { HOME: home, XDG_CONFIG_HOME: path.join(home, '.config'), DISPLAY: x.display },
    });
    return { code: r.code, ms: Date.now() - started, output: r.stdout + r.stderr };
  } finally {
    await x.stop();
    fs.rmSync(home, { recursive: true, force: true });
  }
}

/** runXfreerdp, then the server's verdict on that attempt (null when xrdp-sesman never saw one). */
export async function rdpAuthenticate(
  net: Network,
  ns: string | null,
  server: XrdpServer,
  o: { host: string; port: number; user: string; password: string; args?: string[]; timeoutMs?: number },
): Promise<XfreerdpResult & { auth: AuthEvent | null }> {
  const before = server.authEvents().at(-1)?.index ?? -1;
  const r = await runXfreerdp(net, ns, o);
  const auth = await server.waitForAuth(o.user, { after: before, timeoutMs: 2000 }).catch(() => null);
  return { ...r, auth };
}

export { which };
