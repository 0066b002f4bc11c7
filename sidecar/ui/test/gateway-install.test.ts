// The install commands the admin app shows for the gateway companion (screens/gateways/install.ts)
// are the documented and CI-tested ones: the docker/podman run of gateway/Dockerfile's header and
// gateway/README.md, the README's systemd unit; the scripts are valid shell, the here-document
// writes the gateway.env byte for byte readable by root only, and systemd accepts the unit.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ENV_PATH, INSTALL_KINDS, envStep, installScript, runCommand, SYSTEMD_UNIT } from '../src/screens/gateways/install.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const readme = readFileSync(join(root, 'gateway/README.md'), 'utf8');
const dockerfile = readFileSync(join(root, 'gateway/Dockerfile'), 'utf8');
const ENV = `# Gatehouse gateway companion for peer "home" (#7)\nGATEHOUSE_SERVER_URL=http://10.8.0.1:3000\nGATEWAY_API_TOKEN=gthgw_abc'def"ghi\nGATEWAY_WG_PRIVATE_KEY=aGVsbG8gd29ybGQ=\n`;

test('the container run is the one gateway/Dockerfile and gateway/README.md document, for docker and podman', () => {
  assert.ok(readme.includes(runCommand('docker')), 'README: docker run');
  const header = dockerfile
    .split('\n')
    .filter((l) => l.startsWith('#   '))
    .map((l) => l.slice(4))
    .join('\n');
  assert.ok(header.includes(runCommand('docker')), 'Dockerfile header: docker run');
  assert.ok(readme.includes('docker build -f gateway/Dockerfile -t gatehouse-gateway .'));
  assert.equal(runCommand('podman'), runCommand('docker').replace(/^docker /, 'podman '));
});

test('the systemd unit is the README one; systemd-analyze accepts it', (t) => {
  assert.ok(readme.includes(SYSTEMD_UNIT), 'README: the unit');
  const r = spawnSync('systemd-analyze', ['--version']);
  if (r.status !== 0) return t.skip('no systemd-analyze');
  const dir = mkdtempSync(join(tmpdir(), 'gw-unit-'));
  try {
    const unit = join(dir, 'gatehouse-gateway.service');
    writeFileSync(unit, SYSTEMD_UNIT.replace('/opt/gatehouse-gateway/dist/gatehouse-gateway.mjs', fileURLToPath(import.meta.url)));
    const v = spawnSync('systemd-analyze', ['verify', unit], { encoding: 'utf8' });
    // only what concerns our unit: the host's own units may have their own complaints
    const ours = `${v.stdout}${v.stderr}`.split('\n').filter((l) => l.includes('gatehouse-gateway.service'));
    assert.deepEqual(ours, []);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('every script is valid shell; the here-document writes the gateway.env byte for byte, mode 0600', () => {
  for (const kind of INSTALL_KINDS) {
    for (const env of [ENV, undefined]) {
      const script = installScript(kind, env);
      execFileSync('bash', ['-n'], { input: script });
      assert.ok(script.includes(ENV_PATH));
      if (env) assert.ok(script.includes(env.trimEnd()), `${kind}: the env content is in the script`);
      else assert.ok(!script.includes('GATEWAY_API_TOKEN'), `${kind}: no secret without it`);
    }
  }
  const dir = mkdtempSync(join(tmpdir(), 'gw-env-'));
  try {
    const step = envStep(ENV).join('\n').replaceAll('/etc/gatehouse', join(dir, 'etc/gatehouse'));
    execFileSync('bash', ['-e'], { input: step });
    const file = join(dir, 'etc/gatehouse/gateway.env');
    assert.equal(readFileSync(file, 'utf8'), ENV);
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.equal(statSync(join(dir, 'etc/gatehouse')).mode & 0o777, 0o700);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
