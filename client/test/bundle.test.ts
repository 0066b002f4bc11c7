// The client as it ships: `npm run bundle` makes ONE JavaScript file (esbuild; @gatehouse/common and
// zod inlined). This test builds it with the same script, copies it with package.json into an empty
// directory outside the repository (no node_modules reachable) and runs it there.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const clientDir = path.resolve(import.meta.dirname, '..');
const BUNDLE = 'gatehouse-client.mjs';
const pkg = JSON.parse(fs.readFileSync(path.join(clientDir, 'package.json'), 'utf8')) as { version: string; bin: Record<string, string> };
let app: string;

before(async () => {
  await run('npm', ['run', '-s', 'bundle'], { cwd: clientDir });
  app = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-client-bundle-'));
  fs.mkdirSync(path.join(app, 'dist'));
  fs.copyFileSync(path.join(clientDir, 'dist', BUNDLE), path.join(app, 'dist', BUNDLE));
  fs.copyFileSync(path.join(clientDir, 'package.json'), path.join(app, 'package.json'));
});

after(() => {
  if (app) fs.rmSync(app, { recursive: true, force: true });
});

const node = (args: string[], env: NodeJS.ProcessEnv = {}) =>
  run(process.execPath, [path.join(app, 'dist', BUNDLE), ...args], { cwd: app, env: { PATH: process.env.PATH, ...env } }).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
  );

test('the package bin is the bundle the script makes', () => {
  assert.equal(pkg.bin['gatehouse-client'], `dist/${BUNDLE}`);
});

test('the bundle alone prints its usage and version', async () => {
  const h = await node(['--help']);
  assert.equal(h.code, 0, h.stderr);
  assert.match(h.stdout, /^usage: gatehouse-client <command>/);
  const v = await node(['--version']);
  assert.equal(v.stdout.trim(), pkg.version);
  const bad = await node(['frobnicate']);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /unknown command "frobnicate"/);
});

test('the bundle alone: status of an unregistered state directory, as JSON', async () => {
  const st = path.join(app, 'state');
  const r = await node(['status', '--json', '--state-dir', st, '--interface', 'ghcbundle0']);
  assert.equal(r.code, 0, r.stderr);
  const j = JSON.parse(r.stdout);
  assert.equal(j.registered, false);
  assert.equal(j.state_dir, st);
  assert.deepEqual(j.tunnel, { interface: 'ghcbundle0', up: false });
  const s = await node(['services', '--state-dir', st]);
  assert.equal(s.code, 1);
  assert.match(s.stderr, /not registered .*run: gatehouse-client register/);
});
