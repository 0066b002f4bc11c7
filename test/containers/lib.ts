// Helpers of the container tests (test/containers/*.test.ts), which scripts/test-containers.sh runs
// after it has built the images: podman on the command line, the compose file as compose-go
// resolves it (test/containers/compose-config, the library Docker Compose is built on), the server
// container started in a network namespace, SIGTERM to a container, and the admin API.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { Network } from '../lib/netns.js';
import { waitFor } from '../lib/wait.js';
import type { BodyOf } from '../../sidecar/test/lib/api-types.js';

export const ROOT = path.resolve(import.meta.dirname, '..', '..');
export const SERVER_IMAGE = process.env.GATEHOUSE_TEST_SERVER_IMAGE ?? '';
export const CADDY_IMAGE = process.env.GATEHOUSE_TEST_CADDY_IMAGE ?? '';
export const GATEWAY_IMAGE = process.env.GATEHOUSE_TEST_GATEWAY_IMAGE ?? '';

/** Why these tests cannot run here, or null; `also` names further images a test needs (variable: value). */
export function containerSkipReason(also: Record<string, string> = {}): string | null {
  if (process.getuid?.() !== 0) return 'needs root (podman, network namespaces)';
  const images: Record<string, string> = { GATEHOUSE_TEST_SERVER_IMAGE: SERVER_IMAGE, GATEHOUSE_TEST_CADDY_IMAGE: CADDY_IMAGE, ...also };
  const missing = Object.keys(images).filter((k) => !images[k]);
  if (missing.length) return `run through scripts/test-containers.sh, which builds the images (${missing.join(', ')})`;
  return null;
}

export interface Run {
  stdout: string;
  stderr: string;
  code: number;
}

/** Runs a command to completion (never throws for a non-zero exit unless check). */
export function run(cmd: string, args: string[], o: { cwd?: string; timeoutMs?: number; check?: boolean } = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { cwd: o.cwd, timeout: o.timeoutMs ?? 60_000, maxBuffer: 64 * 1024 * 1024, encoding: 'utf8' }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : 128) : 0;
      const r = { stdout, stderr, code };
      if (o.check && code !== 0) reject(new Error(`${cmd} ${args.join(' ')}: exit ${code}: ${stderr.trim() || stdout.trim()}`));
      else resolve(r);
    });
  });
}

export const podman = (args: string[], o: { timeoutMs?: number; check?: boolean } = {}) => run('podman', args, o);

/** The compose file resolved and validated by compose-go: the project as JSON, or the error (code 1). */
export function composeConfig(file: string): Promise<Run> {
  return run('go', ['run', '.', path.resolve(ROOT, file)], { cwd: path.join(ROOT, 'test/containers/compose-config'), timeoutMs: 300_000 });
}

export interface ComposeService {
  image?: string;
  build?: { context: string; dockerfile: string; args?: Record<string, string> };
  cap_add?: string[];
  cap_drop?: string[];
  devices?: { source: string; target: string; permissions?: string }[];
  sysctls?: Record<string, string>;
  environment?: Record<string, string | null>;
  volumes?: { type: string; source: string; target: string }[];
  ports?: { target: number; published: string; protocol: string; host_ip?: string }[];
  stop_signal?: string;
  stop_grace_period?: string;
}

/**
 * The `podman run` options that carry a compose service's runtime settings: capabilities, devices,
 * sysctls, environment, stop signal, and its named volumes mapped to the given podman volumes. Its
 * ports are not published: the tests give the container a network namespace of their own.
 */
export function runOptionsOf(svc: ComposeService, volumes: Record<string, string>): string[] {
  const args: string[] = [];
  for (const c of svc.cap_drop ?? []) args.push('--cap-drop', c);
  for (const c of svc.cap_add ?? []) args.push('--cap-add', c);
  for (const d of svc.devices ?? []) args.push('--device', `${d.source}:${d.target}${d.permissions ? `:${d.permissions}` : ''}`);
  for (const [k, v] of Object.entries(svc.sysctls ?? {})) args.push('--sysctl', `${k}=${v}`);
  for (const [k, v] of Object.entries(svc.environment ?? {})) if (v !== null) args.push('--env', `${k}=${v}`);
  if (svc.stop_signal) args.push('--stop-signal', svc.stop_signal);
  for (const v of svc.volumes ?? []) {
    if (v.type !== 'volume') throw new Error(`compose volume of type ${v.type} is not mapped by the test`);
    const vol = volumes[v.source];
    if (!vol) throw new Error(`no test volume for the compose volume ${v.source}`);
    args.push('--volume', `${vol}:${v.target}`);
  }
  return args;
}

/** What a container printed so far (stdout and stderr). */
export async function containerLogs(name: string): Promise<string> {
  const r = await podman(['logs', name]);
  return r.stdout + r.stderr;
}

/**
 * Starts the server image detached as `name` in the network namespace ns (podman run with the given
 * options before the image) and waits for its /health on 127.0.0.1:3000 there: the parsed answer,
 * or the container's output when it exited first.
 */
export async function startServerContainer(
  net: Network,
  ns: string,
  name: string,
  runOptions: string[],
): Promise<{ health?: BodyOf<'GET', '/health'>; exited?: string }> {
  await podman(['run', '--detach', '--name', name, `--network=ns:/run/netns/${ns}`, ...runOptions, SERVER_IMAGE], { check: true });
  return waitFor(
    async () => {
      const state = (await podman(['inspect', '--format', '{{.State.Status}}', name])).stdout.trim();
      if (state === 'exited') return { exited: await containerLogs(name) };
      const r = await net.httpGet(ns, 'http://127.0.0.1:3000/health', { timeoutMs: 3000 });
      return r.status === 200 ? { health: JSON.parse(r.body) } : null;
    },
    120_000,
    { intervalMs: 500, what: `GET /health of ${name}` },
  );
}

/**
 * SIGTERM to a container, as `docker stop` sends it, then `podman wait` for at most boundMs: how
 * long it took, podman wait's result (its code is not 0 when the bound was reached) and the
 * container's exit code.
 */
export async function sigtermContainer(name: string, boundMs: number): Promise<{ ms: number; waited: Run; exitCode: number }> {
  const t0 = Date.now();
  await podman(['kill', '--signal', 'TERM', name], { check: true });
  const waited = await podman(['wait', name], { timeoutMs: boundMs });
  const ms = Date.now() - t0;
  const exitCode = Number((await podman(['inspect', '--format', '{{.State.ExitCode}}', name], { check: true })).stdout.trim());
  return { ms, waited, exitCode };
}

/** The one-time admin password a fresh install wrote to its data volume (podman volume `volume`). */
export async function oneTimePasswordOf(volume: string): Promise<{ mount: string; file: string; password: string | undefined }> {
  const mount = (await podman(['volume', 'inspect', '--format', '{{.Mountpoint}}', volume], { check: true })).stdout.trim();
  const file = path.join(mount, 'initial-admin-password.txt');
  const password = fs.existsSync(file) ? /^password: (\S+)$/m.exec(fs.readFileSync(file, 'utf8'))?.[1] : undefined;
  return { mount, file, password };
}

/**
 * The admin API of a server container, called from inside its network namespace on 127.0.0.1:3000,
 * with the session cookie and the CSRF token of the last sign-in (csrf may be set from a session).
 */
export class AdminApi {
  csrf = '';
  private readonly jar = new Cookies();
  constructor(
    private readonly net: Network,
    private readonly ns: string,
  ) {}

  /** A JSON answer is parsed; anything else is the body as text. The body is typed by method and path, as with s.req(). */
  api = async <P extends string, M extends string = 'GET'>(p: P, m?: M, json?: unknown): Promise<{ status: number; data: BodyOf<M, P> }> => {
    const method = m ?? 'GET';
    const headers: Record<string, string> = { accept: 'application/json', cookie: this.jar.header() };
    if (json !== undefined) headers['content-type'] = 'application/json';
    if (method !== 'GET') headers['x-csrf-token'] = this.csrf;
    const r = await this.net.httpGet(this.ns, `http://127.0.0.1:3000${p}`, { method, headers, body: json === undefined ? undefined : JSON.stringify(json) });
    this.jar.take(r.headers);
    const type = String(r.headers['content-type'] ?? '');
    return { status: r.status, data: type.includes('json') ? JSON.parse(r.body) : r.body };
  };

  login = async (password: string) => {
    const r = await this.api('/login', 'POST', { username: 'admin', password });
    if (r.status === 200) this.csrf = r.data.csrfToken!;
    return r;
  };

  /** A fresh install's first sign-in: the one-time password from the volume, changed to `password`. */
  async firstSignIn(volume: string, password: string): Promise<void> {
    const { password: oneTime } = await waitFor(
      async () => {
        const o = await oneTimePasswordOf(volume);
        return o.password ? o : null;
      },
      10_000,
      { what: `the one-time password on ${volume}` },
    );
    const l = await this.login(oneTime!);
    if (l.status !== 200) throw new Error(`sign-in with the one-time password: ${l.status} ${JSON.stringify(l.data)}`);
    const change = await this.api('/api/v1/settings/password', 'PUT', { current: oneTime, next: password });
    if (change.status !== 200) throw new Error(`password change: ${change.status} ${JSON.stringify(change.data)}`);
    const session = await this.api('/api/v1/session');
    if (session.status !== 200) throw new Error(`session: ${session.status} ${JSON.stringify(session.data)}`);
    this.csrf = session.data.csrfToken!;
  }
}

/** A tiny cookie jar for the session cookies of the admin API. */
export class Cookies {
  private readonly jar = new Map<string, string>();
  take(headers: Record<string, string | string[] | undefined>): void {
    const set = headers['set-cookie'];
    for (const c of Array.isArray(set) ? set : set ? [set] : []) {
      const [pair] = c.split(';');
      const i = pair.indexOf('=');
      if (i > 0) this.jar.set(pair.slice(0, i).trim(), pair.slice(i + 1).trim());
    }
  }
  header(): string {
    return [...this.jar].map(([k, v]) => `${k}=${v}`).join('; ');
  }
}
