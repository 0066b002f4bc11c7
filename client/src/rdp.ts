// `gatehouse-client rdp connect <id>`:
//  1. makes a one-time RSA-OAEP key pair (3072 bits, in memory only; @gatehouse/common/rdp-credentials);
//  2. GET /client/rdp/:id/connect?key=<its public key>: the .rdp profile per candidate address and the
//     route's credentials re-encrypted for that key;
//  3. picks the address (access mode `both`: the first candidate that accepts a TCP connection within
//     --probe-timeout; otherwise the first), writes its profile to --out (default <state>/rdp/<id>.rdp,
//     mode 0600; it holds no user name and no password);
//  4. opens the credentials with the one-time private key;
//  5. when FreeRDP (`xfreerdp`, or --xfreerdp PATH) is installed: records the session start (POST
//     /client/rdp/:id/session), starts `xfreerdp <profile> /u:<user> [/d:<domain>] /from-stdin:force
//     <extra args>` and writes the password to its stdin (FreeRDP 2 reads it from there before it
//     connects), so the password never appears in a command line (ps) or an environment variable;
//     sends a session heartbeat (PATCH) at the interval the server names and kills xfreerdp when
//     the answer says disconnect (an admin's disconnect-all, the route disabled or deleted); ends the
//     session (DELETE) when xfreerdp exits. The exit code is xfreerdp's (with +auth-only: 0 = the
//     credentials were accepted).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { decryptCredentials, exportPublicKey, generateEnvelopeKeyPair, keyId, type RdpCredentials } from '@gatehouse/common/rdp-credentials.js';
import { ApiError, type ClientApi } from './api.js';
import type { ClientRdpConnectResponse, ConnectAddress } from './protocol.js';
import { writeFileAtomic } from './state.js';

export interface OneTimeKey {
  privateKey: CryptoKey;
  spki: string;
  kid: string;
}

export async function oneTimeKey(bits = 3072): Promise<OneTimeKey> {
  const pair = await generateEnvelopeKeyPair(bits);
  const spki = await exportPublicKey(pair.publicKey);
  return { privateKey: pair.privateKey, spki, kid: await keyId(spki) };
}

/** True when host:port accepts a TCP connection within timeoutMs. */
export function tcpReachable(host: string, port: number, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ host, port });
    const done = (ok: boolean) => {
      s.destroy();
      resolve(ok);
    };
    s.setTimeout(timeoutMs, () => done(false));
    s.once('connect', () => done(true));
    s.once('error', () => done(false));
  });
}

/** The candidate to use: for `both` the first one that answers, else the first (also when none answers). */
export async function pickCandidate<T extends ConnectAddress>(
  accessMode: string,
  candidates: T[],
  probe: (host: string, port: number) => Promise<boolean>,
): Promise<{ chosen: T; probed: Array<{ host: string; port: number; reachable: boolean }> }> {
  if (!candidates.length) throw new Error('the server offered no address for this route');
  const probed: Array<{ host: string; port: number; reachable: boolean }> = [];
  if (accessMode === 'both' && candidates.length > 1) {
    for (const c of candidates) {
      const reachable = await probe(c.host, c.port);
      probed.push({ host: c.host, port: c.port, reachable });
      if (reachable) return { chosen: c, probed };
    }
  }
  return { chosen: candidates[0], probed };
}

/** The xfreerdp command line (pure): the profile, the user and domain, /from-stdin:force, the extra arguments. Never the password. */
export function xfreerdpArgs(profile: string, creds: Pick<RdpCredentials, 'username' | 'domain'> | null, extra: string[]): string[] {
  const args = [profile];
  if (creds) {
    args.push(`/u:${creds.username}`);
    if (creds.domain) args.push(`/d:${creds.domain}`);
    args.push('/from-stdin:force');
  }
  return [...args, ...extra];
}

/** The first executable `name` on PATH (or the path itself when it contains a slash), else null. */
export function which(name: string, pathVar = process.env.PATH ?? ''): string | null {
  const candidates = name.includes('/')
    ? [name]
    : pathVar
        .split(':')
        .filter(Boolean)
        .map((d) => path.join(d, name));
  for (const c of candidates) {
    try {
      fs.accessSync(c, fs.constants.X_OK);
      if (fs.statSync(c).isFile()) return c;
    } catch {
      /* next */
    }
  }
  return null;
}

export interface RdpConnectOptions {
  api: ClientApi;
  routeId: number;
  /** where the .rdp profile goes */
  out: string;
  /** false: only write the profile (--no-launch) */
  launch: boolean;
  xfreerdp: string;
  extraArgs: string[];
  clientName: string;
  probeTimeoutMs: number;
  /** session heartbeat interval override (s); default: what the server names */
  heartbeatS?: number;
  /** progress messages (stderr) */
  say: (msg: string) => void;
  /** xfreerdp's output goes here (stderr by default: stdout stays machine-readable with --json) */
  childOutput?: NodeJS.WritableStream;
  /** a signal that makes a running xfreerdp stop and the session end (SIGINT/SIGTERM of the CLI) */
  abort?: AbortSignal;
}

export interface RdpConnectResult {
  route_id: number;
  name: string;
  access_mode: string;
  address: ConnectAddress;
  probed: Array<{ host: string; port: number; reachable: boolean }>;
  profile: string;
  has_credentials: boolean;
  launched: boolean;
  xfreerdp: string | null;
  session_id: number | null;
  /** xfreerdp's exit code (null when not launched or killed by a signal) */
  exit_code: number | null;
  /** why the connection was dropped by the server (disconnect order), if it was */
  disconnected: { reason: string | null; message: string | null } | null;
}

export async function rdpConnect(o: RdpConnectOptions): Promise<RdpConnectResult> {
  const key = await oneTimeKey();
  const r: ClientRdpConnectResponse = await o.api.rdpConnect(o.routeId, key.spki);
  if (r.kid !== key.kid) throw new Error(`the server read another one-time key (kid ${r.kid}, expected ${key.kid})`);
  const candidates = r.candidates?.length ? r.candidates : [{ ...r.address, rdp_file: r.rdp_file }];
  const { chosen, probed } = await pickCandidate(r.access_mode, candidates, (h, p) => tcpReachable(h, p, o.probeTimeoutMs));
  writeFileAtomic(o.out, chosen.rdp_file);
  const creds = r.credentials ? await decryptCredentials(key.privateKey, key.kid, r.credentials) : null;
  const result: RdpConnectResult = {
    route_id: r.rdp_route_id,
    name: r.name,
    access_mode: r.access_mode,
    address: { host: chosen.host, port: chosen.port, mode: chosen.mode },
    probed,
    profile: o.out,
    has_credentials: !!creds,
    launched: false,
    xfreerdp: null,
    session_id: null,
    exit_code: null,
    disconnected: null,
  };
  o.say(
    `profile for "${r.name}" (${chosen.mode} ${chosen.host}:${chosen.port}) written to ${o.out}${creds ? '; credentials decrypted' : '; the route has no stored credentials'}`,
  );
  if (!o.launch) return result;
  const bin = which(o.xfreerdp);
  if (!bin) {
    o.say(`FreeRDP (${o.xfreerdp}) is not installed: open ${o.out} with an RDP client (apt-get install freerdp2-x11)`);
    return result;
  }
  if (creds && /[\r\n]/.test(creds.password)) throw new Error('the stored password contains a line break, which FreeRDP cannot read from stdin');
  result.xfreerdp = bin;

  let sessionId: number | null = null;
  try {
    sessionId = (await o.api.rdpSessionStart(o.routeId, o.clientName)).session.id;
  } catch (err) {
    // a server whose connect answer names no session endpoint may not have them (404/405): connect unrecorded
    if (r.session || !(err instanceof ApiError) || (err.status !== 404 && err.status !== 405)) throw err;
    o.say('this server records no RDP sessions (no session endpoints): connecting without a session record');
  }
  result.session_id = sessionId;
  const child = spawn(bin, xfreerdpArgs(o.out, creds, o.extraArgs), { stdio: ['pipe', 'pipe', 'pipe'] });
  result.launched = true;
  const out = o.childOutput ?? process.stderr;
  child.stdout.on('data', (d) => out.write(d));
  child.stderr.on('data', (d) => out.write(d));
  child.stdin.on('error', () => undefined); // xfreerdp may exit before reading
  child.stdin.end(creds ? `${creds.password}\n` : '');
  o.say(`xfreerdp started (pid ${child.pid})${sessionId !== null ? `, session ${sessionId}` : ''}`);

  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
    child.once('error', (err) => {
      o.say(`xfreerdp could not start: ${err.message}`);
      resolve({ code: 127, signal: null });
    });
  });
  let ended = false;
  const kill = () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 3000).unref();
  };
  const intervalMs = Math.max(1, o.heartbeatS ?? r.session?.heartbeat_interval_s ?? 30) * 1000;
  const hb = setInterval(() => {
    if (sessionId === null) return;
    o.api.rdpSessionHeartbeat(o.routeId, sessionId).then(
      (a) => {
        if (a.disconnect && !result.disconnected) {
          result.disconnected = { reason: a.reason, message: a.message };
          if (a.status === 'ended') ended = true;
          o.say(`the server ended this session (${a.reason ?? 'disconnect'}${a.message ? `: ${a.message}` : ''}): dropping the connection`);
          kill();
        }
      },
      (err) => o.say(`session heartbeat failed: ${(err as Error).message}`),
    );
  }, intervalMs);
  const onAbort = () => kill();
  o.abort?.addEventListener('abort', onAbort, { once: true });
  const { code, signal } = await exited;
  clearInterval(hb);
  o.abort?.removeEventListener('abort', onAbort);
  result.exit_code = signal ? null : code;
  if (!ended && sessionId !== null) {
    await o.api.rdpSessionEnd(o.routeId, sessionId).catch((err) => o.say(`ending the session failed: ${(err as Error).message}`));
  }
  o.say(`xfreerdp exited (${signal ?? `code ${code}`})`);
  return result;
}
