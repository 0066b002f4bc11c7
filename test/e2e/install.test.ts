// The bare-metal install: scripts/install.sh into a temporary root, then
// `systemd-analyze verify` of the installed unit against that root (the target system's own units
// are copied in, so dependencies such as network-online.target resolve, and ExecStart points at the
// launcher the script installed in the root), plus what the script must have put there: the app
// that runs (the launcher starts the installed sidecar, which answers /health), the system user,
// the configuration with the system paths, the module list. `systemd-analyze security` states the
// unit's exposure as a figure. The container files cannot be built here (no container engine).
//   node --import tsx --test test/e2e/install.test.ts   (builds the sidecar and UI if not built)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { which } from '../lib/netns.js';
import { waitFor } from '../lib/wait.js';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const reason = !which('systemd-analyze')
  ? 'no systemd-analyze (Debian package systemd)'
  : !which('systemd-sysusers')
    ? 'no systemd-sysusers'
    : !fs.existsSync(path.join(ROOT, 'bin', 'caddy'))
      ? 'no bin/caddy (scripts/build-caddy.sh)'
      : null;

function ensureBuilt(): void {
  if (!fs.existsSync(path.join(ROOT, 'sidecar/dist/main.js')) || !fs.existsSync(path.join(ROOT, 'sidecar/common/dist')))
    execFileSync('npm', ['run', '-s', '-w', '@gatehouse/sidecar', 'build'], { cwd: ROOT, stdio: 'inherit' });
  if (!fs.existsSync(path.join(ROOT, 'sidecar/ui/dist/index.html')))
    execFileSync('npm', ['run', '-s', '-w', '@gatehouse/ui', 'build'], { cwd: ROOT, stdio: 'inherit' });
}

test('scripts/install.sh --root: the unit passes systemd-analyze verify, the installed app starts', { skip: reason ?? false, timeout: 900_000 }, async (t) => {
  ensureBuilt();
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-install-'));
  t.after(() => fs.rmSync(root, { recursive: true, force: true }));
  const out = execFileSync('bash', [path.join(ROOT, 'scripts/install.sh'), '--root', root, '--no-build'], { encoding: 'utf8' });
  assert.match(out, /nothing enabled or started/);

  // what the script installed
  const unit = path.join(root, 'etc/systemd/system/gatehouse.service');
  for (const f of [
    'opt/gatehouse/bin/gatehouse',
    'opt/gatehouse/bin/gatehouse-cli',
    'opt/gatehouse/bin/caddy',
    'opt/gatehouse/sidecar/dist/main.js',
    'opt/gatehouse/sidecar/ui/dist/index.html',
    'etc/gatehouse/gatehouse.env',
    'usr/lib/sysusers.d/gatehouse.conf',
    'etc/modules-load.d/gatehouse.conf',
  ]) {
    assert.ok(fs.existsSync(path.join(root, f)), `${f} installed`);
  }
  assert.ok(fs.statSync(path.join(root, 'opt/gatehouse/bin/gatehouse')).mode & 0o111, 'launcher executable');
  assert.equal(fs.statSync(path.join(root, 'etc/gatehouse/gatehouse.env')).mode & 0o777, 0o640);
  const env = fs.readFileSync(path.join(root, 'etc/gatehouse/gatehouse.env'), 'utf8');
  assert.match(env, /^GATEHOUSE_DATA_DIR=\/var\/lib\/gatehouse$/m);
  assert.match(env, /^GATEHOUSE_CADDY_BIN=\/opt\/gatehouse\/bin\/caddy$/m);
  assert.match(fs.readFileSync(path.join(root, 'etc/passwd'), 'utf8'), /^gatehouse:x:\d+:\d+:Gatehouse:\/var\/lib\/gatehouse:/m, 'system user created');
  assert.ok(!fs.existsSync(path.join(root, 'opt/gatehouse/node_modules/typescript')), 'dev dependencies pruned');
  assert.ok(fs.existsSync(path.join(root, 'opt/gatehouse/node_modules/koa-body')), 'production dependencies kept');

  // systemd-analyze verify against the temporary root: the target's systemd units are there as on a
  // real system; any warning (unknown key, bad value, missing executable) fails the test
  fs.mkdirSync(path.join(root, 'usr/lib/systemd'), { recursive: true });
  fs.cpSync('/usr/lib/systemd/system', path.join(root, 'usr/lib/systemd/system'), { recursive: true, verbatimSymlinks: true });
  const verify = spawnSync('systemd-analyze', ['verify', `--root=${root}`, '--man=no', 'gatehouse.service'], { encoding: 'utf8' });
  assert.equal(verify.status, 0, verify.stderr + verify.stdout);
  assert.equal((verify.stderr + verify.stdout).trim(), '', `systemd-analyze verify printed:\n${verify.stderr}${verify.stdout}`);
  // the check itself works: a broken copy of the unit is reported
  const broken = fs
    .readFileSync(unit, 'utf8')
    .replace('ExecStart=/opt/gatehouse/bin/gatehouse', 'ExecStart=/opt/gatehouse/bin/missing')
    .replace('NoNewPrivileges=yes', 'NoNewPrivileges=maybe');
  fs.writeFileSync(path.join(root, 'etc/systemd/system/gatehouse-broken.service'), broken);
  const bad = spawnSync('systemd-analyze', ['verify', `--root=${root}`, '--man=no', 'gatehouse-broken.service'], { encoding: 'utf8' });
  assert.match(bad.stderr + bad.stdout, /missing|not executable/i);
  assert.match(bad.stderr + bad.stdout, /Failed to parse boolean value.*maybe/);
  fs.rmSync(path.join(root, 'etc/systemd/system/gatehouse-broken.service'));

  // the exposure systemd computes for the hardening options (lower is better; 10 = none)
  const sec = spawnSync('systemd-analyze', ['security', `--root=${root}`, '--offline=yes', '--no-pager', 'gatehouse.service'], { encoding: 'utf8' });
  const score = /Overall exposure level for gatehouse\.service:\s*([\d.]+)\s*(\w+)/.exec(sec.stdout + sec.stderr);
  assert.ok(score, sec.stdout + sec.stderr);
  console.log(`# figure: systemd exposure of gatehouse.service: ${score[1]} ${score[2]}`);
  assert.ok(Number(score[1]) <= 5, `exposure ${score[1]} ${score[2]}`);

  // the installed launcher runs the installed app (outside systemd, as this user, no Caddy or WireGuard)
  const data = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-install-data-'));
  t.after(() => fs.rmSync(data, { recursive: true, force: true }));
  const port = 20000 + Math.floor(Math.random() * 20000);
  const child = spawn(path.join(root, 'opt/gatehouse/bin/gatehouse'), [], {
    env: {
      PATH: process.env.PATH,
      GATEHOUSE_DATA_DIR: data,
      GATEHOUSE_PORT: String(port),
      GATEHOUSE_MANAGE_CADDY: 'false',
      GATEHOUSE_WG_MANAGE: 'false',
      GATEHOUSE_GATEWAY_TUNNEL_LISTEN: 'false',
      GATEHOUSE_LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  child.stdout.on('data', (d) => (log += d));
  child.stderr.on('data', (d) => (log += d));
  const exited = new Promise<number | null>((r) => child.on('exit', (c) => r(c)));
  try {
    // the launcher is a shell script whose ExecStart path is in the unit; the app must not read the checkout
    assert.ok(!fs.readFileSync(path.join(root, 'opt/gatehouse/bin/gatehouse'), 'utf8').includes(ROOT));
    await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/health`)).ok, 120_000, { what: 'the installed app answering /health', intervalMs: 200 });
    const page = await fetch(`http://127.0.0.1:${port}/login`);
    assert.equal(page.status, 200);
    child.kill('SIGTERM');
    assert.equal(await exited, 0, log);
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
  }

  // the installed operator commands act on the same data directory (the caller's environment wins
  // over the settings file; as root on a system with a gatehouse user they would run as that user)
  const cli = (args: string[]) =>
    spawnSync(path.join(root, 'opt/gatehouse/bin/gatehouse-cli'), args, {
      encoding: 'utf8',
      env: {
        PATH: process.env.PATH,
        GATEHOUSE_DATA_DIR: data,
        GATEHOUSE_ENV_FILE: path.join(root, 'etc/gatehouse/gatehouse.env'),
        GATEHOUSE_LOG_LEVEL: 'warn',
      },
    });
  const reset = cli(['reset-admin-password', 'admin']);
  assert.equal(reset.status, 0, reset.stderr);
  assert.match(reset.stdout, /^new password for admin: \S{12,}$/m);
  const unknown = cli(['reset-admin-password', 'nobody']);
  assert.equal(unknown.status, 1);
  assert.match(unknown.stderr, /no such user: nobody/);
  const usage = cli([]);
  assert.equal(usage.status, 2);
  assert.match(usage.stderr, /usage: gatehouse-cli /);
});
