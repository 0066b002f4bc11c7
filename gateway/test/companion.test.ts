// The companion against a REAL sidecar on loopback (no tunnel: GATEWAY_WG_MANAGE=false). The
// server's VPN subnet is 127.79.<n>.0/24, so the gateway peer's "tunnel address" is a loopback
// address (Linux delivers all of 127.0.0.0/8 locally): the companion binds it exactly as it would
// bind its tunnel address, and the server reaches the companion API there. LAN targets are loopback
// servers. The real tunnel, Caddy and namespaces are covered by test/e2e/gateways.test.ts.
//   cd gateway && npm test
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { startTestServer, apiToken, bearer, type ReqInit, type TestServer } from '../../sidecar/test/lib/server.js';
import { heartbeatSchema, parseEnvText, type Heartbeat } from '@gatehouse/common/gateway-protocol.js';
// reason: a gateway's health is its last heartbeat, which passed the heartbeat schema when the server took it
const healthOf = (g: { health: unknown }) => g.health as Heartbeat | null;
import type { GatewaysService } from '../../sidecar/src/gateways/service.js';
import { Companion } from '../src/companion.js';
import { Loop } from '@gatehouse/common/loop.js';
import { loadEnv, EnvError } from '../src/env.js';
import { createLogger } from '@gatehouse/common/json-log.js';
import { HostMap, hostOf } from '../src/proxy.js';
import { broadcastFor } from '../src/wol.js';
import { freePort, tcpRoundTrip } from '../../test/lib/ports.js';
import { getWithHost, type GetResult } from '../../test/lib/http-get.js';
import { waitFor } from '../../test/lib/wait.js';
import type { Gateway, Peer, Route, RouteReachability } from '../../sidecar/test/lib/protocol.js';
import { at } from '../../test/lib/json.js';

const n = 100 + (process.pid % 100);
const SUBNET = `127.79.${n}.0/24`;

function get(port: number, host: string, p = '/', bindHost = '127.0.0.1', headers: Record<string, string> = {}): Promise<GetResult | null> {
  return getWithHost(port, host, { path: p, bindHost, headers, timeoutMs: 8000 });
}

describe('pure parts', () => {
  test('host matching: exact names, one-label wildcards, ports and case ignored', () => {
    const base = {
      l4_protocol: null,
      target_lan_host: 'x',
      target_lan_port: 1,
      listen_port: null,
      backend_https: false,
      wol_enabled: false,
      wol_mac: null,
    } as const;
    const m = new HostMap([
      { ...base, id: 1, domain: 'nas.example.com', route_type: 'http' },
      { ...base, id: 2, domain: '*.apps.example.com', route_type: 'http' },
      { ...base, id: 3, domain: 'ssh.example.com', route_type: 'l4' },
    ]);
    assert.equal(m.match(hostOf('NAS.example.com:8080'))?.id, 1);
    assert.equal(m.match(hostOf('a.apps.example.com'))?.id, 2);
    assert.equal(m.match(hostOf('a.b.apps.example.com')), undefined);
    assert.equal(m.match(hostOf('apps.example.com')), undefined);
    assert.equal(m.match(hostOf('ssh.example.com')), undefined, 'L4 routes are not HTTP hosts');
    assert.equal(hostOf('[::1]:80'), '::1');
  });

  test('broadcast address of the LAN holding the target', () => {
    // reason: a fixture with only the fields broadcastFor reads, typed as os.networkInterfaces() returns them
    const ifaces = {
      eth0: [{ address: '192.168.7.20', netmask: '255.255.255.0', family: 'IPv4', mac: '', internal: false, cidr: '192.168.7.20/24' }],
      wg0: [{ address: '10.8.0.5', netmask: '255.255.255.255', family: 'IPv4', mac: '', internal: false, cidr: '10.8.0.5/32' }],
      eth1: [{ address: '10.1.0.1', netmask: '255.255.0.0', family: 'IPv4', mac: '', internal: false, cidr: '10.1.0.1/16' }],
    } as unknown as NodeJS.Dict<os.NetworkInterfaceInfo[]>;
    assert.equal(broadcastFor('192.168.7.99', ifaces), '192.168.7.255');
    assert.equal(broadcastFor('10.1.200.3', ifaces), '10.1.255.255');
    assert.equal(broadcastFor('10.8.0.9', ifaces), null, 'not over the tunnel');
    assert.equal(broadcastFor('172.16.0.1', ifaces), null);
  });

  test('back-off doubles from the interval up to the ceiling, with ±10 % jitter', () => {
    assert.equal(Loop.backoff(10_000, 0, 300_000), 10_000);
    for (const [errors, base] of [
      [1, 20_000],
      [2, 40_000],
      [4, 160_000],
      [5, 300_000],
      [30, 300_000],
    ] as const) {
      const d = Loop.backoff(10_000, errors, 300_000);
      assert.ok(d >= base * 0.9 && d <= base * 1.1, `${errors} errors: ${d}`);
    }
  });

  test('env: the file, the process environment over it, and clear errors', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-env-'));
    const f = path.join(dir, 'gateway.env');
    fs.writeFileSync(
      f,
      'GATEHOUSE_SERVER_URL=http://10.8.0.1:3000\nGATEWAY_PEER_ID=4\nGATEWAY_API_TOKEN=gthgw_x\nGATEWAY_PUSH_TOKEN=gthgp_y\nGATEWAY_WG_ADDRESS=10.8.0.4/32\nGATEWAY_WG_MANAGE=false\n',
    );
    const e = loadEnv(f, { GATEWAY_PROXY_PORT: '8181' });
    assert.equal(e.serverUrl, 'http://10.8.0.1:3000');
    assert.equal(e.proxyPort, 8181);
    assert.equal(e.bind, '10.8.0.4', 'binds the tunnel address by default');
    assert.equal(e.stateFile, path.join(dir, 'gateway-state.json'));
    assert.throws(
      () => loadEnv(f, { GATEWAY_WG_MANAGE: 'true' }),
      /GATEWAY_WG_PRIVATE_KEY, GATEWAY_WG_SERVER_PUBLIC_KEY, GATEWAY_WG_ENDPOINT, GATEWAY_WG_ALLOWED_IPS required/,
    );
    assert.throws(
      () => loadEnv(f, { GATEWAY_API_TOKEN: 'gth_admin' }),
      (err: Error) => err instanceof EnvError && /GATEWAY_API_TOKEN: must start with gthgw_/.test(err.message),
    );
    assert.throws(() => loadEnv(path.join(dir, 'missing.env'), {}), /cannot read/);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});

describe('companion with a real sidecar on loopback', () => {
  let s: TestServer;
  let h: Record<string, string>;
  let dir: string;
  let companion: Companion;
  let envContent: string;
  let peer: Peer;
  let lanHttp: http.Server;
  let lanEcho: net.Server;
  const lanHttpPort = () => (lanHttp.address() as net.AddressInfo).port;
  const logs: string[] = [];
  const api = <P extends string, M extends string = 'GET'>(p: P, init: ReqInit<M> = {}) =>
    s.req<never, `/api/v1${P}`, M>(`/api/v1${p}`, { ...init, headers: { ...h } });
  let routeHttp: Route;
  let routeTcp: Route;
  let routeWol: Route;
  let l4Port: number;
  let proxyPort: number;
  let apiPort: number;
  let wolPort: number;
  let wolSock: dgram.Socket;
  const wolPackets: Buffer[] = [];

  const startLanHttp = async (port = 0) => {
    lanHttp = http.createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ lan: true, url: req.url, host: req.headers.host }));
    });
    await new Promise<void>((r) => lanHttp.listen(port, '127.0.0.1', () => r()));
  };

  const makeCompanion = (extra: Record<string, string> = {}) => {
    const file = path.join(dir, 'gateway.env');
    fs.writeFileSync(file, envContent, { mode: 0o600 });
    const env = loadEnv(file, {
      GATEWAY_WG_MANAGE: 'false',
      GATEHOUSE_SERVER_URL: s.url, // the main listener; the tunnel-address listener is tested in the sidecar tests
      GATEWAY_HEARTBEAT_INTERVAL: '0.3',
      GATEWAY_POLL_INTERVAL: '0.2',
      GATEWAY_STATUS_INTERVAL: '0.5',
      GATEWAY_MAX_BACKOFF: '1',
      GATEWAY_WOL_BROADCAST: '127.0.0.1',
      GATEWAY_WOL_PORT: String(wolPort),
      GATEWAY_PROBE_TIMEOUT: '500',
      GATEWAY_LAN_CONNECT_TIMEOUT: '1000',
      GATEWAY_HOSTNAME: 'loop-gw',
      GATEWAY_PROXY_PORT: String(proxyPort),
      ...extra,
    });
    return new Companion(
      env,
      createLogger('debug', (line) => logs.push(line)),
    );
  };

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gw-companion-'));
    s = await startTestServer({
      GATEHOUSE_WG_SUBNET: SUBNET,
      GATEHOUSE_PUBLIC_HOST: 'vpn.example.test',
      GATEHOUSE_WG_PORT: '51997',
      GATEHOUSE_RATE_LIMIT_ADMIN: '100000',
    });
    h = bearer(await apiToken(s));
    proxyPort = await freePort();
    apiPort = await freePort();
    l4Port = await freePort();
    wolSock = dgram.createSocket('udp4');
    wolSock.on('message', (m) => wolPackets.push(m));
    await new Promise<void>((r) => wolSock.bind(0, '127.0.0.1', () => r()));
    wolPort = wolSock.address().port;
    await startLanHttp();
    lanEcho = net.createServer((c) => c.pipe(c));
    await new Promise<void>((r) => lanEcho.listen(0, '127.0.0.1', () => r()));
    const created = await api('/peers', { method: 'POST', json: { name: 'loopback gw', is_gateway: true, api_port: apiPort } });
    assert.equal(created.status, 201, JSON.stringify(created.data));
    peer = created.data.peer;
    envContent = created.data.gateway!.envContent;
    const mk = async (json: unknown) => {
      const r = await api('/routes', { method: 'POST', json });
      assert.equal(r.status, 201, JSON.stringify(r.data));
      return r.data.route;
    };
    routeHttp = await mk({
      domain: 'nas.loop.test',
      target_kind: 'gateway',
      target_peer_id: peer.id,
      target_lan_host: '127.0.0.1',
      target_lan_port: lanHttpPort(),
    });
    routeTcp = await mk({
      domain: 'echo.loop.test',
      route_type: 'l4',
      l4_protocol: 'tcp',
      l4_listen_port: l4Port,
      target_kind: 'gateway',
      target_peer_id: peer.id,
      target_lan_host: '127.0.0.1',
      target_lan_port: (lanEcho.address() as net.AddressInfo).port,
    });
    routeWol = await mk({
      domain: 'sleepy.loop.test',
      target_kind: 'gateway',
      target_peer_id: peer.id,
      target_lan_host: '127.0.0.1',
      target_lan_port: await freePort(),
      wol_enabled: true,
      wol_mac: '02:00:5e:10:20:30',
    });
    companion = makeCompanion();
  });

  after(async () => {
    await companion?.stop();
    await s?.close();
    lanHttp?.close();
    lanEcho?.close();
    wolSock?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('the env the API returned starts the companion: it binds the gateway address, fetches its config, serves HTTP and TCP routes', async () => {
    const env = parseEnvText(envContent);
    assert.equal(companion.env.bind, peer.address);
    assert.equal(companion.env.apiPort, apiPort);
    assert.equal(env.GATEWAY_API_TOKEN, companion.env.apiToken);
    await companion.start();
    await waitFor(() => companion.configSource === 'server' && companion.config?.routes.length === 3, 5000, 'config from the server');
    const r = await get(companion.env.proxyPort, 'nas.loop.test', '/hello?x=1', peer.address);
    assert.equal(r?.status, 200, JSON.stringify(r));
    assert.deepEqual(JSON.parse(r!.body), { lan: true, url: '/hello?x=1', host: 'nas.loop.test' });
    const unknown = await get(companion.env.proxyPort, 'nobody.loop.test', '/', peer.address);
    assert.equal(unknown?.status, 404);
    assert.equal(await tcpRoundTrip(peer.address, l4Port, 'ping through the companion'), 'ping through the companion');
    // the container health check (`main.js --health`) finds the running companion from the same env
    const { execFile } = await import('node:child_process');
    const health = (file: string) =>
      new Promise<number>((resolve) => {
        execFile(
          process.execPath,
          ['--import', 'tsx', path.join(import.meta.dirname, '..', 'src', 'main.ts'), '--env', file, '--health'],
          { env: { ...process.env, GATEWAY_WG_MANAGE: 'false' } },
          (err) => resolve(err ? Number((err as { code?: number }).code ?? 1) : 0),
        );
      });
    assert.equal(await health(path.join(dir, 'gateway.env')), 0);
    const other = path.join(dir, 'other.env');
    fs.writeFileSync(other, envContent.replace(/^GATEWAY_API_PORT=.*$/m, `GATEWAY_API_PORT=${await freePort()}`));
    assert.equal(await health(other), 1, 'nothing answers there');
  });

  test('heartbeats are accepted by the server, stored, with one reachability entry per route', async () => {
    const view = await waitFor(
      async () => {
        const g = (await api('/gateways')).data.gateways.find((x: Gateway) => x.peer_id === peer.id);
        return (g && healthOf(g))?.route_reachability?.length === 3 && g!.status === 'online' && g!.hostname ? g : null;
      },
      5000,
      'stored heartbeat',
    );
    assert.ok(heartbeatSchema.safeParse(view.health).success);
    const hb = healthOf(view)!;
    const rr = new Map<number, RouteReachability>(hb.route_reachability.map((x: RouteReachability) => [x.route_id, x]));
    assert.equal(rr.get(routeHttp.id)!.reachable, true);
    assert.equal(rr.get(routeTcp.id)!.reachable, true);
    assert.equal(rr.get(routeWol.id)!.reachable, false, 'nothing listens on the sleepy target');
    assert.equal(hb.http_proxy_healthy, true);
    assert.equal(hb.api_healthy, true);
    assert.deepEqual(hb.tcp_listeners, [{ port: l4Port, status: 'listening', route_id: routeTcp.id }]);
    assert.equal(hb.config_hash, view.config_hash);
    assert.equal(view.config_in_sync, true);
    assert.equal(view.hostname, 'loop-gw');
    const t = hb.telemetry;
    assert.equal(t.cpu_cores, os.availableParallelism());
    assert.equal(t.mem_total, os.totalmem());
    assert.ok(t.disk!.total > 0 && t.disk!.used > 0);
    assert.equal(t.node_version, process.version);
    assert.equal(t.gateway_version, '0.1.0');
    assert.equal(t.os_platform, 'linux');
  });

  test('LAN server stopped: the proxy answers 502 lan-unreachable and the next heartbeat reports the route unreachable', async () => {
    const port = lanHttpPort();
    await new Promise<void>((r) => lanHttp.close(() => r()));
    const r = await get(companion.env.proxyPort, 'nas.loop.test', '/', peer.address);
    assert.equal(r?.status, 502);
    assert.equal(r?.headers['x-gatehouse-gateway-error'], 'lan-unreachable');
    const since = Date.now();
    await waitFor(
      async () => {
        const g = (await api(`/peers/${peer.id}/gateway-info`)).data.gateway;
        return g.last_seen_at! > since && healthOf(g)!.route_reachability.find((x: RouteReachability) => x.route_id === routeHttp.id)?.reachable === false;
      },
      5000,
      'unreachable in a heartbeat',
    );
    await startLanHttp(port);
    await waitFor(async () => (await get(companion.env.proxyPort, 'nas.loop.test', '/', peer.address))?.status === 200, 5000, 'LAN server back');
  });

  test('Wake-on-LAN: the server asks the companion (push token), the companion sends the magic packet', async () => {
    wolPackets.length = 0;
    const r = await api(`/routes/${routeWol.id}/wol`, { method: 'POST' });
    assert.equal(r.status, 200, JSON.stringify(r.data));
    assert.equal(r.data.wol.mac, '02:00:5E:10:20:30');
    await waitFor(() => wolPackets.length >= 1, 3000, 'magic packet');
    const p = wolPackets[0];
    assert.equal(p.length, 102);
    assert.ok(p.subarray(0, 6).equals(Buffer.alloc(6, 0xff)));
    for (let i = 0; i < 16; i++) assert.equal(p.subarray(6 + i * 6, 12 + i * 6).toString('hex'), '02005e102030');
    // the companion API refuses anything but the push token
    const url = `http://${peer.address}:${apiPort}`;
    assert.equal(
      (await fetch(`${url}/wol`, { method: 'POST', body: '{"mac":"02:00:5e:10:20:30"}', headers: { authorization: `Bearer ${companion.env.apiToken}` } }))
        .status,
      401,
    );
    assert.equal((await fetch(`${url}/status`)).status, 401);
    const bad = await fetch(`${url}/wol`, { method: 'POST', body: '{"mac":"zz"}', headers: { authorization: `Bearer ${companion.env.pushToken}` } });
    assert.equal(bad.status, 400);
    assert.ok(((await bad.json()) as { fields: Record<string, unknown> }).fields.mac);
    assert.equal((await fetch(`${url}/health`)).status, 200);
    // the waking-up page (what Caddy hands the visitor to) triggers it as well, once per resend window
    wolPackets.length = 0;
    const page = await s.req('/gateway-wol/wait', { headers: { 'X-Gatehouse-Wol-Route': String(routeWol.id), accept: 'text/html' } });
    assert.equal(page.status, 503);
    assert.equal(page.headers.get('retry-after'), '5');
    assert.match(String(page.data), /Waking up sleepy\.loop\.test/);
    assert.match(String(page.data), /http-equiv="refresh"/);
    await waitFor(() => wolPackets.length >= 1, 3000, 'magic packet from the waiting page');
    const again = await s.req('/gateway-wol/wait', { headers: { 'X-Gatehouse-Wol-Route': String(routeWol.id), accept: 'application/json' } });
    assert.equal(again.status, 503);
    assert.equal(at(again.data, 'waking'), true);
    const notWol = await s.req('/gateway-wol/wait', { headers: { 'X-Gatehouse-Wol-Route': String(routeHttp.id) } });
    assert.equal(notWol.status, 404, 'a route without a MAC has no waking page');
  });

  test("POST /disconnect (push token): the live connections of a route's TCP listener are closed, the listener keeps accepting", async () => {
    const url = `http://${peer.address}:${apiPort}`;
    const sock = net.connect({ host: peer.address, port: l4Port });
    const closed = new Promise<void>((r) => sock.once('close', () => r()));
    sock.on('error', () => undefined);
    const echoed = await new Promise<string>((resolve) => {
      sock.once('data', (d) => resolve(d.toString()));
      sock.write('still here?');
    });
    assert.equal(echoed, 'still here?');
    assert.equal(
      (
        await fetch(`${url}/disconnect`, {
          method: 'POST',
          body: JSON.stringify({ route_id: routeTcp.id }),
          headers: { authorization: `Bearer ${companion.env.apiToken}` },
        })
      ).status,
      401,
    );
    const bad = await fetch(`${url}/disconnect`, { method: 'POST', body: '{"route_id":"x"}', headers: { authorization: `Bearer ${companion.env.pushToken}` } });
    assert.equal(bad.status, 400);
    assert.ok(((await bad.json()) as { fields: Record<string, unknown> }).fields.route_id);
    const other = await fetch(`${url}/disconnect`, {
      method: 'POST',
      body: JSON.stringify({ route_id: routeHttp.id }),
      headers: { authorization: `Bearer ${companion.env.pushToken}` },
    });
    assert.deepEqual(await other.json(), { ok: true, route_id: routeHttp.id, closed: 0 });
    const r = await fetch(`${url}/disconnect`, {
      method: 'POST',
      body: JSON.stringify({ route_id: routeTcp.id }),
      headers: { authorization: `Bearer ${companion.env.pushToken}` },
    });
    assert.equal(r.status, 200);
    assert.deepEqual(await r.json(), { ok: true, route_id: routeTcp.id, closed: 1 });
    await closed;
    assert.equal(await tcpRoundTrip(peer.address, l4Port, 'a new connection'), 'a new connection');
  });

  test('server down: the last configuration keeps serving, calls back off, and a restart serves it from the state file', async () => {
    const statePath = companion.env.stateFile!;
    assert.ok(fs.existsSync(statePath));
    const saved = JSON.parse(fs.readFileSync(statePath, 'utf8'));
    assert.equal(saved.config_hash, companion.configHash);
    // a fresh companion pointed at a dead server starts from the state file
    await companion.stop();
    const deadPort = await freePort();
    const c2 = makeCompanion({ GATEHOUSE_SERVER_URL: `http://127.0.0.1:${deadPort}` });
    await c2.start();
    try {
      assert.equal(c2.configSource, 'state-file');
      assert.equal(c2.configHash, saved.config_hash);
      assert.equal((await get(proxyPort, 'nas.loop.test', '/', peer.address))?.status, 200);
      assert.equal(await tcpRoundTrip(peer.address, l4Port, 'still here'), 'still here');
      await waitFor(() => c2.server.last_error?.includes('server unreachable'), 3000, 'failed server calls');
      assert.equal(c2.server.reachable, false);
    } finally {
      await c2.stop();
    }
    companion = makeCompanion();
    await companion.start();
    await waitFor(() => companion.configSource === 'server', 5000, 'back on the server');
  });

  test('token rotation: the running companion gets 401 at once and keeps serving its last configuration', async () => {
    const before = (await api(`/peers/${peer.id}/gateway-info`)).data.gateway.last_seen_at;
    const r = await api(`/peers/${peer.id}/gateway-env/rotate`, { method: 'POST' });
    assert.equal(r.status, 200);
    await waitFor(() => companion.server.auth_rejected, 3000, 'a 401 for the old token');
    assert.equal(companion.server.last_status, 401);
    assert.ok(logs.some((l) => l.includes("rejected this gateway's token (401)")));
    const seen = (await api(`/peers/${peer.id}/gateway-info`)).data.gateway.last_seen_at;
    await new Promise((res) => setTimeout(res, 800)); // not a condition: proves no heartbeat gets through
    assert.equal((await api(`/peers/${peer.id}/gateway-info`)).data.gateway.last_seen_at, seen, 'no heartbeat gets through any more');
    assert.ok(seen! >= before!);
    assert.equal((await get(proxyPort, 'nas.loop.test', '/', peer.address))?.status, 200, 'LAN still served');
    // the new env (new tokens) works after a restart
    await companion.stop();
    envContent = r.data.gateway.envContent;
    companion = makeCompanion();
    await companion.start();
    await waitFor(async () => (await api(`/peers/${peer.id}/gateway-info`)).data.gateway.last_seen_at! > seen!, 5000, 'heartbeats with the new token');
    assert.equal(companion.server.auth_rejected, false);
  });

  test('a UDP L4 route: the companion relays datagrams both ways, per client', async () => {
    const echo = dgram.createSocket('udp4');
    echo.on('message', (m, r) => echo.send(Buffer.concat([Buffer.from('echo:'), m]), r.port, r.address));
    await new Promise<void>((r) => echo.bind(0, '127.0.0.1', () => r()));
    const udpPort = await (async () => {
      const t = dgram.createSocket('udp4');
      await new Promise<void>((r) => t.bind(0, '127.0.0.1', () => r()));
      const p = t.address().port;
      await new Promise<void>((r) => t.close(() => r()));
      return p;
    })();
    try {
      const old = companion.configHash;
      const r = await api('/routes', {
        method: 'POST',
        json: {
          domain: 'dns.loop.test',
          route_type: 'l4',
          l4_protocol: 'udp',
          l4_listen_port: udpPort,
          target_kind: 'gateway',
          target_peer_id: peer.id,
          target_lan_host: '127.0.0.1',
          target_lan_port: echo.address().port,
        },
      });
      assert.equal(r.status, 201, JSON.stringify(r.data));
      await waitFor(
        () => companion.configHash !== old && companion.udp.status().some((l) => l.port === udpPort && l.status === 'listening'),
        5000,
        'UDP listener',
      );
      const ask = (msg: string) =>
        new Promise<string | null>((resolve) => {
          const c = dgram.createSocket('udp4');
          const t = setTimeout(() => {
            c.close();
            resolve(null);
          }, 2000);
          c.on('message', (m) => {
            clearTimeout(t);
            c.close();
            resolve(m.toString());
          });
          c.send(msg, udpPort, peer.address);
        });
      assert.equal(await ask('one'), 'echo:one');
      assert.equal(await ask('two'), 'echo:two', 'a second client gets its own session');
      await api(`/routes/${r.data.route.id}`, { method: 'DELETE' });
      await waitFor(() => !companion.udp.status().some((l) => l.port === udpPort), 5000, 'UDP listener removed');
    } finally {
      echo.close();
    }
  });

  test('a route change reaches the companion through polling', async () => {
    const old = companion.configHash;
    const r = await api(`/routes/${routeHttp.id}`, { method: 'PUT', json: { domain: 'nas2.loop.test' } });
    assert.equal(r.status, 200, JSON.stringify(r.data));
    await waitFor(() => companion.configHash !== old, 5000, 'new config');
    assert.equal((await get(proxyPort, 'nas2.loop.test', '/', peer.address))?.status, 200);
    assert.equal((await get(proxyPort, 'nas.loop.test', '/', peer.address))?.status, 404);
    const svc = s.deps.gateways as GatewaysService;
    assert.equal((await svc.config(peer.id)).hash, companion.configHash);
  });
});
