// configs/docker-compose.yml, validated the way `docker compose config` validates it (compose-go: the
// Compose Specification's schema, interpolation, consistency), and held to the images it builds: the
// Dockerfiles it names exist, its volume is the server image's data volume, its ports are ones the
// image exposes, and it grants what the image's entry point needs. (The server image test runs the
// image with this service's runtime settings.) Run by scripts/test-containers.sh.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT, SERVER_IMAGE, composeConfig, containerSkipReason, podman, type ComposeService } from './lib.js';

const reason = containerSkipReason();
const FILE = 'configs/docker-compose.yml';

test('the compose file is valid and matches the images it builds', { skip: reason ?? false, timeout: 400_000 }, async () => {
  const r = await composeConfig(FILE);
  assert.equal(r.code, 0, `compose-go refuses ${FILE}: ${r.stderr}`);
  const project = JSON.parse(r.stdout) as { name: string; services: Record<string, ComposeService>; volumes: Record<string, unknown> };
  assert.equal(project.name, 'gatehouse');
  const caddy = project.services['caddy-image'];
  const server = project.services.gatehouse;
  assert.ok(caddy && server, `services: ${Object.keys(project.services).join(', ')}`);

  // The builds: the repository root as context, the two Dockerfiles, the server built on our Caddy image.
  assert.equal(caddy.build?.context, ROOT);
  assert.equal(server.build?.context, ROOT);
  assert.ok(fs.existsSync(path.join(ROOT, caddy.build!.dockerfile)), caddy.build!.dockerfile);
  assert.ok(fs.existsSync(path.join(ROOT, server.build!.dockerfile)), server.build!.dockerfile);
  assert.equal(caddy.build!.dockerfile, 'xcaddy.Dockerfile');
  assert.equal(server.build!.args?.CADDY_IMAGE, caddy.image, 'the server image copies Caddy from the image the caddy-image service builds');

  // Runtime settings against the built image.
  const inspect = JSON.parse((await podman(['image', 'inspect', SERVER_IMAGE], { check: true })).stdout)[0];
  const config = inspect.Config ?? {};
  const volumes = Object.keys(config.Volumes ?? {});
  const env = Object.fromEntries((config.Env as string[]).map((e) => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)]));
  const data = server.volumes?.find((v) => v.source === 'gatehouse-data');
  assert.ok(data, 'the named volume gatehouse-data is mounted');
  assert.deepEqual(volumes, [data.target], "the compose volume is the image's only VOLUME");
  assert.equal(server.environment?.GATEHOUSE_DATA_DIR ?? env.GATEHOUSE_DATA_DIR, data.target, 'GATEHOUSE_DATA_DIR is the volume');
  assert.ok('gatehouse-data' in project.volumes);

  const exposed = new Set(Object.keys(config.ExposedPorts ?? {}));
  for (const p of server.ports ?? [])
    assert.ok(exposed.has(`${p.target}/${p.protocol}`), `port ${p.target}/${p.protocol} is exposed by the image (${[...exposed].join(' ')})`);
  const admin = server.ports?.find((p) => p.target === 3000);
  assert.equal(admin?.host_ip, '127.0.0.1', 'the admin port is published on loopback only');
  assert.ok(
    server.ports?.some((p) => p.target === 51820 && p.protocol === 'udp'),
    'WireGuard 51820/udp is published',
  );

  assert.deepEqual(server.cap_drop, ['ALL']);
  for (const cap of ['NET_ADMIN', 'NET_BIND_SERVICE', 'CHOWN', 'SETUID', 'SETGID', 'SETPCAP']) assert.ok(server.cap_add?.includes(cap), `cap_add has ${cap}`);
  assert.ok(
    server.devices?.some((d) => d.source === '/dev/net/tun' && d.target === '/dev/net/tun'),
    'the tun device is passed',
  );
  assert.equal(server.stop_signal ?? config.StopSignal, 'SIGTERM');
  assert.equal(config.StopSignal, 'SIGTERM');
  assert.ok((inspect.Healthcheck ?? config.Healthcheck)?.Test?.length, 'the image keeps its HEALTHCHECK');
});

test('the compose check refuses a broken compose file', { skip: reason ?? false, timeout: 400_000 }, async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-compose-'));
  try {
    const text = fs.readFileSync(path.join(ROOT, FILE), 'utf8');
    const cases: [string, string, RegExp][] = [
      ['unknown-key.yml', text.replace(/^ {4}devices:$/m, '    devicez:'), /devicez/],
      ['bad-depends.yml', text.replace(/^ {6}caddy-image:\n {8}condition/m, '      caddy-imag:\n        condition'), /caddy-imag/],
    ];
    for (const [name, broken, why] of cases) {
      assert.notEqual(broken, text, `${name}: the mutation applies`);
      fs.writeFileSync(path.join(dir, name), broken);
      const r = await composeConfig(path.join(dir, name));
      assert.equal(r.code, 1, `${name} is refused`);
      assert.match(r.stderr, why);
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
