// The server image, run as a user would run it: podman with the compose service's runtime settings
// (cap_drop ALL + its cap_add list, /dev/net/tun, sysctls, environment, the data volume), in a network
// namespace of its own (the "server"), WireGuard in userspace (wireguard-go) inside the container.
//   server ns (the container)  ──veth──  peer ns: a WireGuard peer brought up from the peer config
//                              ──veth──  inet ns: an HTTP client on "the internet"
// A fresh install: the admin's one-time password from the data volume, the first sign-in changes it,
// then a peer and an HTTP route through the API; the backend listens on the peer's tunnel address
// only, so Caddy in the container reaches it through the real tunnel. SIGTERM stops the container
// cleanly (exit code 0, within a bound); a second container on the same volume has the same admin
// password, peer, route and WireGuard key (the tunnel and the route work again without any change).
// Run by scripts/test-containers.sh (after it built the images).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { createNetwork, skipReason, type Network } from '../lib/netns.js';
import { waitFor } from '../lib/wait.js';
import { str } from '../lib/json.js';
import {
  AdminApi,
  CADDY_IMAGE,
  composeConfig,
  containerLogs as logs,
  containerSkipReason,
  oneTimePasswordOf,
  podman,
  runOptionsOf,
  sigtermContainer,
  startServerContainer,
  type ComposeService,
} from './lib.js';

const reason = containerSkipReason() ?? skipReason(['wireguard-go', 'wg', 'ping']);
const STOP_BOUND_MS = 20_000;

test('the Caddy image has our modules', { skip: reason ?? false, timeout: 120_000 }, async () => {
  const r = await podman(['run', '--rm', '--network', 'none', CADDY_IMAGE, 'caddy', 'list-modules'], { check: true });
  for (const m of ['http.handlers.gatehouse_hostroute', 'http.handlers.rate_limit', 'layer4'])
    assert.match(r.stdout, new RegExp(`^${m.replaceAll('.', '\\.')}$`, 'm'));
  const caps = await podman(['run', '--rm', '--network', 'none', '--entrypoint', 'getcap', CADDY_IMAGE, '/usr/bin/caddy'], { check: true });
  assert.match(caps.stdout, /cap_net_bind_service=ep/, 'Caddy may bind 80/443 when run with --user');
});

test(
  'the server image: fresh install, peer and route through the API, Caddy serves it through WireGuard, SIGTERM, second start on the same volume',
  { skip: reason ?? false, timeout: 600_000 },
  async (t) => {
    const compose = await composeConfig('configs/docker-compose.yml');
    assert.equal(compose.code, 0, compose.stderr);
    const svc = (JSON.parse(compose.stdout).services as Record<string, ComposeService>).gatehouse;

    const net: Network = await createNetwork({ prefix: 'ctr' });
    const n = (process.pid % 200) + 20;
    const srv = await net.addNamespace('srv');
    const peerNs = await net.addNamespace('peer');
    const inet = await net.addNamespace('inet');
    const wan = await net.link(srv, peerNs, `10.226.${n}.1/24`, `10.226.${n}.2/24`);
    const lan = await net.link(srv, inet, `10.227.${n}.1/24`, `10.227.${n}.2/24`);
    const volume = `gatehouse-ct-${net.id}`;
    const names: string[] = [];
    t.after(async () => {
      for (const name of names) await podman(['rm', '--force', '--time', '5', name]);
      await podman(['volume', 'rm', '--force', volume]);
      await net.cleanup();
    });
    await podman(['volume', 'create', volume], { check: true });

    const start = async (name: string) => {
      names.push(name);
      const answer = await startServerContainer(net, srv, name, [
        ...runOptionsOf(svc, { 'gatehouse-data': volume }),
        '--env',
        `GATEHOUSE_PUBLIC_HOST=${wan.addrA}`,
      ]);
      assert.ok(answer.health, `the container exited: ${answer.exited?.slice(-2000)}`);
      const { health } = answer;
      assert.equal(health.ok, true, JSON.stringify(health));
      assert.equal(health.checks!.wireguard.ok, true, JSON.stringify(health.checks));
      assert.equal(health.checks!.proxy.ok, true, JSON.stringify(health.checks));
      return health;
    };
    /** SIGTERM to the container, as `docker stop` sends it; it must exit 0 by itself, well within the bound. */
    const stop = async (name: string) => {
      const { ms, waited, exitCode: exit } = await sigtermContainer(name, STOP_BOUND_MS);
      assert.equal(waited.code, 0, `podman wait: ${waited.stderr}`);
      assert.equal(exit, 0, `exit code of ${name} after SIGTERM (logs: ${(await logs(name)).slice(-1500)})`);
      assert.ok(ms < STOP_BOUND_MS, `stopped in ${ms} ms`);
      assert.match(await logs(name), /SIGTERM: shutting down/);
      const wg = await net.exec(srv, 'ip', ['link', 'show', 'dev', 'wg0']);
      assert.notEqual(wg.code, 0, 'the WireGuard interface is gone with the container');
      return ms;
    };

    const admin = new AdminApi(net, srv);
    const { api, login } = admin;
    /** GET through Caddy in the container, from the inet namespace, with the route's Host. */
    const viaCaddy = (host: string, p: string) => net.httpGet(inet, `http://${lan.addrA}${p}`, { headers: { host }, timeoutMs: 4000 });

    // ---- first start: a fresh install on an empty volume
    const first = `gatehouse-ct-${net.id}-1`;
    await start(first);
    const hc = await podman(['healthcheck', 'run', first]);
    assert.equal(hc.code, 0, `the image's HEALTHCHECK passes: ${hc.stdout}${hc.stderr}`);
    const top = (await podman(['top', first, 'user', 'comm', 'capeff'], { check: true })).stdout;
    assert.match(top, /^gatehouse\s+node\s+NET_ADMIN,NET_BIND_SERVICE$/m, `the sidecar runs as gatehouse with two capabilities:\n${top}`);
    assert.doesNotMatch(top, /^root/m, `nothing runs as root:\n${top}`);

    const { mount, file: pwFile, password: oneTime } = await oneTimePasswordOf(volume);
    assert.ok(fs.existsSync(pwFile), 'the first start wrote the one-time password to the data volume');
    assert.equal(fs.statSync(pwFile).mode & 0o777, 0o600);
    assert.ok(oneTime, 'the file names the password');
    assert.match(await logs(first), /initial-admin-password\.txt/, 'the log says where the password is');

    const l1 = await login(oneTime);
    assert.equal(l1.status, 200, JSON.stringify(l1.data));
    assert.equal(l1.data.must_change_password, true);
    const password = `ct-${net.id}-Admin-pass`;
    const change = await api('/api/v1/settings/password', 'PUT', { current: oneTime, next: password });
    assert.equal(change.status, 200, JSON.stringify(change.data));
    assert.equal(fs.existsSync(pwFile), false, 'the one-time password file is gone once changed');
    const session = await api('/api/v1/session');
    assert.equal(session.status, 200, JSON.stringify(session.data));
    assert.equal(session.data.must_change_password, false);
    admin.csrf = session.data.csrfToken!;

    // ---- a peer through the API, brought up in its own namespace from its config
    const created = await api('/api/v1/peers', 'POST', { name: 'container-peer' });
    assert.equal(created.status, 201, JSON.stringify(created.data));
    const peer = created.data.peer;
    const conf = await api(`/api/v1/peers/${peer.id}/config`);
    assert.equal(conf.status, 200);
    assert.match(str(conf.data), new RegExp(`Endpoint = ${wan.addrA.replaceAll('.', '\\.')}:51820`));
    await net.bringUpPeer(peerNs, net.ifName('p'), str(conf.data));
    const serverVpnIp = (await net.exec(srv, 'ip', ['-4', '-o', 'addr', 'show', 'dev', 'wg0'], { check: true })).stdout.match(/inet ([\d.]+)\//)![1];
    await waitFor(async () => (await net.ping(peerNs, serverVpnIp, { count: 1, timeoutS: 1 })).ok, 30_000, {
      what: 'the tunnel from the peer to the container',
    });
    const peerIp = peer.address.split('/')[0];
    await net.startHttpServer(peerNs, peerIp, 8080, { name: 'peer-web' });

    // ---- an HTTP route through the API, served by Caddy inside the container
    const route = await api('/api/v1/routes', 'POST', { domain: 'app.test', peer_id: peer.id, target_port: 8080 });
    assert.equal(route.status, 201, JSON.stringify(route.data));
    const served = await waitFor(
      async () => {
        const r = await viaCaddy('app.test', '/hello?x=1');
        return r.status === 200 ? r : null;
      },
      30_000,
      { what: 'the route served by Caddy in the container' },
    );
    const echo = JSON.parse(served.body);
    assert.equal(echo.server, 'peer-web');
    assert.equal(echo.url, '/hello?x=1');
    assert.equal((await viaCaddy('other.test', '/')).status, 404, 'an unknown host gets 404');

    // ---- SIGTERM: a clean exit, the volume kept
    const ms1 = await stop(first);
    t.diagnostic(`first container stopped ${ms1} ms after SIGTERM`);
    assert.ok(fs.existsSync(path.join(mount, 'gatehouse.db')), 'the database is on the volume');
    assert.ok(fs.existsSync(path.join(mount, 'master.key')), 'the master key is on the volume');
    assert.equal((await viaCaddy('app.test', '/').catch(() => null))?.status ?? null, null, 'nothing answers while stopped');

    // ---- second start on the same volume: same password, peer, route and WireGuard key
    const second = `gatehouse-ct-${net.id}-2`;
    await start(second);
    assert.doesNotMatch(await logs(second), /first start: admin account/, 'no new admin on a volume that has one');
    assert.equal((await login(oneTime)).status, 401, 'the one-time password no longer works');
    const l2 = await login(password);
    assert.equal(l2.status, 200, `the changed admin password works after the restart: ${JSON.stringify(l2.data)}`);
    assert.equal(l2.data.must_change_password, false);
    const peers = await api('/api/v1/peers');
    assert.ok(JSON.stringify(peers.data).includes(String(peer.id)), `the peer is still there: ${JSON.stringify(peers.data).slice(0, 500)}`);
    const routes = await api('/api/v1/routes');
    assert.ok(JSON.stringify(routes.data).includes('"app.test"'), `the route is still there: ${JSON.stringify(routes.data).slice(0, 500)}`);
    // The peer kept its config: the tunnel and the route work again only if the server key and the
    // peer came back from the volume.
    await waitFor(async () => (await net.ping(peerNs, serverVpnIp, { count: 1, timeoutS: 1 })).ok, 30_000, { what: 'the tunnel after the restart' });
    const again = await waitFor(
      async () => {
        const r = await viaCaddy('app.test', '/again');
        return r.status === 200 ? r : null;
      },
      30_000,
      { what: 'the route after the restart' },
    );
    assert.equal(JSON.parse(again.body).url, '/again');
    // The operator commands in the running container (podman exec runs as root; the CLI drops to
    // gatehouse, so the data volume keeps its owner)
    const reset = await podman(['exec', second, 'gatehouse-cli', 'reset-admin-password', 'admin'], { check: true });
    const fresh = /^new password for admin: (\S+)$/m.exec(reset.stdout)?.[1];
    assert.ok(fresh, `gatehouse-cli reset-admin-password prints the new password: ${reset.stdout}${reset.stderr}`);
    const l3 = await login(fresh);
    assert.equal(l3.status, 200, `the password from gatehouse-cli works: ${JSON.stringify(l3.data)}`);
    assert.equal(l3.data.must_change_password, true, 'and must be changed at the next sign-in');
    const unlock = await podman(['exec', second, 'gatehouse-cli', 'unlock-account', 'admin']);
    assert.equal(unlock.code, 0, unlock.stderr);
    const owners = fs.readdirSync(mount).map((f) => ({ f, uid: fs.statSync(path.join(mount, f)).uid }));
    assert.equal(owners.filter((o) => o.uid === 0 && o.f !== 'lost+found').length, 0, `nothing on the volume owned by root: ${JSON.stringify(owners)}`);
    const ms2 = await stop(second);
    t.diagnostic(`second container stopped ${ms2} ms after SIGTERM`);
  },
);
