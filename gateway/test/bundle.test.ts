// The companion as it ships: `npm run bundle` makes ONE JavaScript file (esbuild, the shared
// @gatehouse/common modules and zod inlined), and gateway/Dockerfile copies only that file and
// gateway/package.json. This test builds the bundle with the same script, copies it into an empty
// directory outside the repository laid out like the image (/app/dist/<bundle>, /app/package.json;
// no node_modules reachable), and runs it there: a module missing from the bundle, or one that only
// loads through the workspace, fails here and not first in a container.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../../test/lib/ports.js';
import { waitFor } from '../../test/lib/wait.js';

const run = promisify(execFile);
const gatewayDir = path.resolve(import.meta.dirname, '..');
const BUNDLE = 'gatehouse-gateway.mjs';
const pkg = JSON.parse(fs.readFileSync(path.join(gatewayDir, 'package.json'), 'utf8')) as { version: string; bin: Record<string, string> };
let app: string;
let child: ChildProcess | null = null;

before(async () => {
  await run('npm', ['run', '-s', 'bundle'], { cwd: gatewayDir });
  app = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-gateway-bundle-'));
  fs.mkdirSync(path.join(app, 'dist'));
  fs.copyFileSync(path.join(gatewayDir, 'dist', BUNDLE), path.join(app, 'dist', BUNDLE));
  fs.copyFileSync(path.join(gatewayDir, 'package.json'), path.join(app, 'package.json'));
});

after(() => {
  if (child && child.exitCode === null) child.kill('SIGKILL');
  if (app) fs.rmSync(app, { recursive: true, force: true });
});

const node = (args: string[], env: NodeJS.ProcessEnv = {}) =>
  run(process.execPath, [path.join(app, 'dist', BUNDLE), ...args], { cwd: app, env: { PATH: process.env.PATH, ...env } }).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
  );

test('the package bin is the bundle the script makes', () => {
  assert.equal(pkg.bin['gatehouse-gateway'], `dist/${BUNDLE}`);
});

test('the bundle alone prints its usage', async () => {
  const r = await node(['--help']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^usage: gatehouse-gateway /);
});

test('the bundle alone validates its settings with the shared protocol and key checks', async () => {
  const envFile = path.join(app, 'bad.env');
  fs.writeFileSync(
    envFile,
    'GATEHOUSE_SERVER_URL=http://127.0.0.1:1\nGATEWAY_PEER_ID=1\nGATEWAY_API_TOKEN=wrong\nGATEWAY_PUSH_TOKEN=gthgp_x\nGATEWAY_WG_ADDRESS=10.8.0.9/32\nGATEWAY_WG_PRIVATE_KEY=nokey\n',
  );
  const r = await node(['--env', envFile]);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /GATEWAY_API_TOKEN: must start with gthgw_/);
  assert.match(r.stderr, /GATEWAY_WG_PRIVATE_KEY: must be a WireGuard key/);
});

test('the bundle alone starts the companion, answers /health with its version, passes --health and stops on SIGTERM', async () => {
  const apiPort = await freePort();
  const env = {
    GATEHOUSE_SERVER_URL: `http://127.0.0.1:${await freePort()}`, // nothing listens: the companion keeps retrying
    GATEWAY_PEER_ID: '7',
    GATEWAY_API_TOKEN: 'gthgw_bundletestbundletestbundletestbundletes',
    GATEWAY_PUSH_TOKEN: 'gthgp_bundletestbundletestbundletestbundletes',
    GATEWAY_WG_ADDRESS: '10.8.0.9/32',
    GATEWAY_WG_MANAGE: 'false',
    GATEWAY_BIND: '127.0.0.1',
    GATEWAY_API_PORT: String(apiPort),
    GATEWAY_PROXY_PORT: String(await freePort()),
    GATEWAY_STATE_FILE: path.join(app, 'state.json'),
    GATEWAY_LOG_LEVEL: 'error',
  };
  child = spawn(process.execPath, [path.join(app, 'dist', BUNDLE)], { cwd: app, env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  // on a time-out the assertion below names what the bundle wrote to stderr
  const health = await waitFor(
    () => fetch(`http://127.0.0.1:${apiPort}/health`).then((r) => (r.status === 200 ? (r.json() as Promise<{ ok: boolean; version: string }>) : null)),
    10_000,
    { intervalMs: 100, what: "the bundle's /health" },
  ).catch(() => null);
  assert.deepEqual(health, { ok: true, version: pkg.version }, stderr);
  const h = await node(['--health'], env);
  assert.equal(h.code, 0, h.stderr);
  const exited = new Promise<number | null>((r) => child!.once('exit', (code) => r(code)));
  child.kill('SIGTERM');
  assert.equal(await exited, 0, stderr);
  const gone = await node(['--health'], env);
  assert.equal(gone.code, 1, 'nothing answers once the companion stopped');
});
