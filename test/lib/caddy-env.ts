// The custom Caddy (bin/caddy) and the sidecar environment that has the sidecar start and supervise
// it on given loopback ports: shared by the sidecar's Caddy tests, the end-to-end tests and the
// benchmarks. Each caller spreads its own keys (data directory, WireGuard, rate limits…) around it.
import type { ChildProcess } from 'node:child_process';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export const CADDY = path.resolve(import.meta.dirname, '..', '..', 'bin', 'caddy');

export interface CaddyPorts {
  http: number;
  https: number;
  admin: number;
}

/** GATEHOUSE_MANAGE_CADDY with `bin`, its admin API on 127.0.0.1:admin, its listeners on `bind`. */
export function managedCaddyEnv(ports: CaddyPorts, bind = '127.0.0.1', bin = CADDY): Record<string, string> {
  return {
    GATEHOUSE_MANAGE_CADDY: 'true',
    GATEHOUSE_CADDY_BIN: bin,
    GATEHOUSE_CADDY_ADMIN: `127.0.0.1:${ports.admin}`,
    GATEHOUSE_HTTP_PORT: String(ports.http),
    GATEHOUSE_HTTPS_PORT: String(ports.https),
    GATEHOUSE_PROXY_BIND: bind,
  };
}

/** Stops a Caddy the test spawned itself (SIGTERM, then waits for it to exit); nothing when it is not running. */
export async function stopCaddy(caddy: ChildProcess | undefined): Promise<void> {
  if (caddy && caddy.exitCode === null) {
    caddy.kill('SIGTERM');
    await new Promise((r) => caddy.once('exit', r));
  }
}

/**
 * `caddy validate` on each <dir>/<name>.json (modules provisioned, nothing listens), in a throw-away
 * HOME, with `env` added to Caddy's environment; fails with Caddy's error lines.
 */
export function assertCaddyValidates(dir: string, names: string[], env: Record<string, string> = {}): void {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-caddy-validate-'));
  try {
    for (const name of names) {
      const file = path.join(dir, `${name}.json`);
      try {
        execFileSync(CADDY, ['validate', '--config', file], {
          env: { ...process.env, ...env, XDG_DATA_HOME: path.join(home, 'data'), XDG_CONFIG_HOME: path.join(home, 'config'), HOME: home },
          stdio: 'pipe',
        });
      } catch (e: unknown) {
        const err = e as { stderr?: Buffer; message: string };
        assert.fail(
          `caddy validate ${name}.json: ${
            String(err.stderr)
              .split('\n')
              .filter((l) => /error|Error/.test(l))
              .join('\n') || err.message
          }`,
        );
      }
    }
  } finally {
    fs.rmSync(home, { recursive: true, force: true });
  }
}
