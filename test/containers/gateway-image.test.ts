// The gateway companion's image, run as a user would run it at home, against the server image:
//   server ns (the server container)  ──veth "internet"──  home ns (the gateway container)
//                                                            ──veth "LAN"──  lan ns: an HTTP app
// The server container starts as in server-image.test.ts (the compose service's runtime settings, a
// fresh install, the first sign-in); a gateway is created through the API and its gateway.env (the
// answer's envContent, nothing else) is mounted into the gateway container, which runs with podman
// in the home namespace as gateway/README.md runs it (NET_ADMIN, /dev/net/tun, /config/gateway.env,
// a /data volume): it brings up its WireGuard tunnel (wireguard-go) to the server's public address
// and reaches the server API through it. A route created through the API targets the app's LAN
// address via the gateway; the server namespace has no way to the LAN but the tunnel. Checked: the
// route answers 200 through Caddy in the server container with the app's body; the gateway is online
// with a heartbeat that found the LAN target reachable; the state file is on the data volume; the
// image's HEALTHCHECK passes; SIGTERM stops it with exit code 0 and its tunnel interface gone.
// Run by scripts/test-containers.sh (after it built the images).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { GATEWAY_DEFAULTS, parseEnvText, type Heartbeat } from '@gatehouse/common/gateway-protocol.js';
import { createNetwork, skipReason, type Network } from '../lib/netns.js';
import { waitFor } from '../lib/wait.js';
import {
  AdminApi,
  GATEWAY_IMAGE,
  composeConfig,
  containerLogs as logs,
  containerSkipReason,
  podman,
  runOptionsOf,
  sigtermContainer,
  startServerContainer,
  type ComposeService,
} from './lib.js';
import type { Route, RouteReachability } from '../../sidecar/test/lib/protocol.js';

const reason = containerSkipReason({ GATEHOUSE_TEST_GATEWAY_IMAGE: GATEWAY_IMAGE }) ?? skipReason(['ping']);
const STOP_BOUND_MS = 20_000;

test(
  'the gateway image: a LAN route through Caddy and the gateway, heartbeat, HEALTHCHECK, SIGTERM',
  { skip: reason ?? false, timeout: 600_000 },
  async (t) => {
    const compose = await composeConfig('configs/docker-compose.yml');
    assert.equal(compose.code, 0, compose.stderr);
    const svc = (JSON.parse(compose.stdout).services as Record<string, ComposeService>).gatehouse;

    const net: Network = await createNetwork({ prefix: 'ctg' });
    const n = (process.pid % 200) + 20;
    const srv = await net.addNamespace('srv');
    const home = await net.addNamespace('home');
    const lanNs = await net.addNamespace('lan');
    const wan = await net.link(srv, home, `10.228.${n}.1/24`, `10.228.${n}.2/24`);
    const lan = await net.link(home, lanNs, `10.229.${n}.1/24`, `10.229.${n}.2/24`);
    const serverVolume = `gatehouse-ctg-${net.id}`;
    const gatewayVolume = `gatehouse-gateway-ctg-${net.id}`;
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-ctg-'));
    const names: string[] = [];
    t.after(async () => {
      for (const name of names) await podman(['rm', '--force', '--time', '5', name]);
      for (const v of [serverVolume, gatewayVolume]) await podman(['volume', 'rm', '--force', v]);
      await net.cleanup();
      fs.rmSync(dir, { recursive: true, force: true });
    });
    for (const v of [serverVolume, gatewayVolume]) await podman(['volume', 'create', v], { check: true });

    // ---- the server container (short gateway intervals, so that the test does not wait for defaults)
    const server = `gatehouse-ctg-${net.id}-server`;
    names.push(server);
    const started = await startServerContainer(net, srv, server, [
      ...runOptionsOf(svc, { 'gatehouse-data': serverVolume }),
      '--env',
      `GATEHOUSE_PUBLIC_HOST=${wan.addrA}`,
      '--env',
      'GATEHOUSE_GATEWAY_POLL_INTERVAL=2',
      '--env',
      'GATEHOUSE_GATEWAY_HEARTBEAT_INTERVAL=2',
    ]);
    assert.ok(started.health, `the server container exited: ${started.exited?.slice(-2000)}`);
    assert.equal(started.health.ok, true, JSON.stringify(started.health));
    const admin = new AdminApi(net, srv);
    const { api } = admin;
    await admin.firstSignIn(serverVolume, `ctg-${net.id}-Admin-pass`);

    // ---- a gateway through the API: its envContent is the gateway.env, all the container gets
    const created = await api('/api/v1/peers', 'POST', { name: 'home-gateway', is_gateway: true });
    assert.equal(created.status, 201, JSON.stringify(created.data));
    const peer = created.data.peer;
    const envContent: string = created.data.gateway!.envContent;
    const env = parseEnvText(envContent);
    assert.equal(env.GATEWAY_WG_ENDPOINT, `${wan.addrA}:51820`, 'the gateway dials the server at its public address');
    const envFile = path.join(dir, 'gateway.env');
    fs.writeFileSync(envFile, envContent, { mode: 0o600 });

    // ---- the app on the LAN, and a route to it via the gateway
    const app = await net.startHttpServer(lanNs, lan.addrB, 8081, { name: 'lan-app' });
    assert.equal((await net.ping(srv, lan.addrB, { count: 1, timeoutS: 1 })).ok, false, 'the server has no way to the LAN but the gateway');
    const route = await api('/api/v1/routes', 'POST', {
      domain: 'nas.home.test',
      target_kind: 'gateway',
      target_peer_id: peer.id,
      target_lan_host: lan.addrB,
      target_lan_port: app.port,
    });
    assert.equal(route.status, 201, JSON.stringify(route.data));
    const routeId = route.data.route.id;

    // ---- the gateway container, as gateway/README.md runs it, in the home namespace
    const gateway = `gatehouse-ctg-${net.id}-gateway`;
    names.push(gateway);
    await podman(
      [
        'run',
        '--detach',
        '--name',
        gateway,
        `--network=ns:/run/netns/${home}`,
        '--cap-add',
        'NET_ADMIN',
        '--device',
        '/dev/net/tun',
        '--volume',
        `${envFile}:/config/gateway.env:ro`,
        '--volume',
        `${gatewayVolume}:/data`,
        GATEWAY_IMAGE,
      ],
      { check: true },
    );

    const gatewayView = async () => (await api('/api/v1/gateways')).data.gateways.find((g) => g.peer_id === peer.id);
    // reason: a gateway's health is its last heartbeat, which passed the heartbeat schema when the server took it
    const healthOf = (g: { health: unknown }) => g.health as Heartbeat | null;
    const t0 = Date.now();
    const online = await waitFor(
      async () => {
        const state = (await podman(['inspect', '--format', '{{.State.Status}}', gateway])).stdout.trim();
        if (state === 'exited') throw new Error(`the gateway container exited: ${(await logs(gateway)).slice(-3000)}`);
        const g = await gatewayView();
        const reach = (g && healthOf(g))?.route_reachability?.find((r: RouteReachability) => r.route_id === routeId);
        return g?.status === 'online' && g.config_in_sync && reach?.reachable ? g : null;
      },
      120_000,
      { intervalMs: 500, what: 'the gateway online, its heartbeat finding the LAN app' },
    ).catch(async (e) => {
      throw new Error(`${(e as Error).message}\ngateway container output:\n${(await logs(gateway)).slice(-4000)}`);
    });
    t.diagnostic(`gateway online with a heartbeat ${Date.now() - t0} ms after podman run`);
    const hb = healthOf(online)!;
    assert.ok(hb.wg_handshake_age_s !== null && hb.wg_handshake_age_s < 30, `a real handshake: ${JSON.stringify(online.health)}`);
    assert.equal(hb.http_proxy_healthy, true);
    assert.equal(hb.api_healthy, true);
    const info = (await api(`/api/v1/peers/${peer.id}/gateway-info`)).data.gateway;
    assert.equal(info.status, 'online');
    assert.ok(info.last_seen_at! > t0, 'a heartbeat stored since the container started');

    // ---- the route through Caddy in the server container, the tunnel and the gateway container
    const served = await waitFor(
      async () => {
        const r = await net.httpGet(srv, 'http://127.0.0.1/through/the/gateway?x=1', { headers: { host: 'nas.home.test' }, timeoutMs: 4000 });
        return r.status === 200 ? r : null;
      },
      30_000,
      { what: 'the gateway route served by Caddy in the server container' },
    );
    const body = JSON.parse(served.body);
    assert.equal(body.server, 'lan-app');
    assert.equal(body.url, '/through/the/gateway?x=1');
    assert.equal(body.headers.host, 'nas.home.test');

    // ---- the image's HEALTHCHECK, the state file on the data volume
    const hc = await podman(['healthcheck', 'run', gateway]);
    assert.equal(hc.code, 0, `the image's HEALTHCHECK passes: ${hc.stdout}${hc.stderr}`);
    const mount = (await podman(['volume', 'inspect', '--format', '{{.Mountpoint}}', gatewayVolume], { check: true })).stdout.trim();
    const state = JSON.parse(fs.readFileSync(path.join(mount, 'gateway-state.json'), 'utf8'));
    assert.equal(state.peer_id, peer.id, 'the last configuration is kept on the data volume');
    assert.deepEqual(
      state.config.routes.map((r: Route) => [r.id, r.target_lan_host, r.target_lan_port]),
      [[routeId, lan.addrB, app.port]],
    );

    // ---- SIGTERM, as `docker stop` sends it: exit code 0 by itself, the tunnel interface gone
    const iface = GATEWAY_DEFAULTS.wgInterface;
    assert.equal((await net.exec(home, 'ip', ['link', 'show', 'dev', iface])).code, 0, `the tunnel interface ${iface} is in the home namespace`);
    const stop = await sigtermContainer(gateway, STOP_BOUND_MS);
    assert.equal(stop.waited.code, 0, `podman wait: ${stop.waited.stderr}`);
    assert.equal(stop.exitCode, 0, `exit code of the gateway container after SIGTERM (logs: ${(await logs(gateway)).slice(-1500)})`);
    assert.ok(stop.ms < STOP_BOUND_MS, `stopped in ${stop.ms} ms`);
    assert.match(await logs(gateway), /SIGTERM: stopping/);
    assert.notEqual((await net.exec(home, 'ip', ['link', 'show', 'dev', iface])).code, 0, 'the tunnel interface is gone with the container');
    t.diagnostic(`gateway container stopped ${stop.ms} ms after SIGTERM`);
  },
);
