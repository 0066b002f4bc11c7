// Helpers of the container tests (test/containers/*.test.ts), which scripts/test-containers.sh runs
// after it has built the images: podman on the command line, and the compose file as compose-go
// resolves it (test/containers/compose-config, the library Docker Compose is built on).
import { execFile } from 'node:child_process';
import path from 'node:path';

export const ROOT = path.resolve(import.meta.dirname, '..', '..');
export const SERVER_IMAGE = process.env.GATEHOUSE_TEST_SERVER_IMAGE ?? '';
export const CADDY_IMAGE = process.env.GATEHOUSE_TEST_CADDY_IMAGE ?? '';

/** Why these tests cannot run here, or null. */
export function containerSkipReason(): string | null {
  if (process.getuid?.() !== 0) return 'needs root (podman, network namespaces)';
  if (!SERVER_IMAGE || !CADDY_IMAGE) return 'run through scripts/test-containers.sh, which builds the images (GATEHOUSE_TEST_SERVER_IMAGE, GATEHOUSE_TEST_CADDY_IMAGE)';
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
