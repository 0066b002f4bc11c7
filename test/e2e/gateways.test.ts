// End to end, as root: home gateways through the real custom Caddy and real WireGuard tunnels.
//
//   host namespace   the real sidecar (GATEHOUSE_WG_MANAGE=true, GATEHOUSE_MANAGE_CADDY=true, its own
//                    interface, subnet and ports; Caddy listens on 127.0.0.1)
//        │ veth (the server's "public" address)
//   gateway ns       the companion (gateway/src/main.ts), started from the exact envContent that
//                    POST /peers returned: it brings up its own WireGuard tunnel (wireguard-go) and
//                    reaches the server API through it
//        │ veth (broadcast addresses set, like a real LAN)
//   LAN ns           an HTTP server, a TCP echo, a UDP listener on port 9 (Wake-on-LAN); not
//                    reachable from the host at all
//
// Checked: an HTTP gateway route and an L4 gateway route reach the LAN servers through Caddy and the
// tunnel; the gateway is online with a stored heartbeat and a route_reachability entry per route;
// stopping the LAN HTTP server makes that route unreachable in the next heartbeat; Wake-on-LAN: a
// visit to a sleeping route gets the waking-up page, the magic packet arrives on the LAN with the
// route's MAC, and once the host answers the visitor gets the site; rotating the tokens makes the
// running companion's calls fail with 401 at once (and the new env works); stopping the companion
// turns the gateway offline within offline_after (shortened to 6 s here) plus one evaluation tick.
//   cd /work/main && node --import tsx --test test/e2e/gateways.test.ts
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTestServer, apiToken, bearer, type ReqInit, type TestServer } from '../../sidecar/test/lib/server.js';
import { parseEnvText, type Heartbeat } from '@gatehouse/common/gateway-protocol.js';
import { createNetwork, skipReason, type Network } from '../lib/netns.js';
import { waitFor } from '../lib/wait.js';
import { freePort, tcpRoundTrip } from '../lib/ports.js';
import { getWithHost, type GetResult } from '../lib/http-get.js';
import { CADDY, e2eServerEnv } from '../lib/e2e-server.js';
import type { ListenerStatus, RouteReachability } from '../../sidecar/test/lib/protocol.js';
import { at, str } from '../lib/json.js';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const reason = skipReason(['wireguard-go', 'wg']) ?? (fs.existsSync(CADDY) ? null : `no ${CADDY}: build it with bash scripts/build-caddy.sh`);

const OFFLINE_AFTER_S = 6;
const TICK_S = 1; // tickInterval({offlineAfterMs: 6000}) = 1 s

/** GET through Caddy on 127.0.0.1 with a Host header; null when nothing answers. */
function viaCaddy(port: number, host: string, p = '/', headers: Record<string, string> = {}): Promise<GetResult | null> {
  return getWithHost(port, host, { path: p, headers, timeoutMs: 15_000 });
}

// Prints every UDP datagram it receives on 0.0.0.0:9 as one hex line.
const WOL_LISTENER = `
const s = require('dgram').createSocket({ type: 'udp4', reuseAddr: true });
s.on('message', (m, r) => console.log('PKT ' + r.address + ' ' + m.toString('hex')));
s.bind(9, '0.0.0.0', () => console.log('READY'));
`;

interface Running {
  proc: ChildProcess;
  out: () => string;
  stop: () => Promise<void>;
}

function startCompanion(n: Network, ns: string, envFile: string, extraEnv: Record<string, string>): Running {
  let out = '';
  const proc = n.spawn(ns, process.execPath, ['--import', 'tsx', path.join(ROOT, 'gateway', 'src', 'main.ts'), '--env', envFile], {
    cwd: ROOT,
    env: { ...process.env, ...extraEnv },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  proc.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  proc.stderr!.setEncoding('utf8').on('data', (d: string) => (out += d));
  return {
    proc,
    out: () => out,
    stop: async () => {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      const exited = new Promise<void>((r) => proc.once('exit', () => r()));
      proc.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 8000))]);
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
    },
  };
}

test(
  'home gateways end to end: tunnel, Caddy, companion, LAN, heartbeats, Wake-on-LAN, rotation, offline',
  { skip: reason ?? false, timeout: 240_000 },
  async (t) => {
    const n = (process.pid % 200) + 20;
    const net_ = await createNetwork({ prefix: 'gw' });
    const started: { server?: TestServer } = {};
    const companions: Running[] = [];
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-gw-e2e-'));
    t.after(async () => {
      for (const c of companions) await c.stop();
      await started.server?.close();
      await net_.cleanup();
      fs.rmSync(dir, { recursive: true, force: true });
    });
    const gwNs = await net_.addNamespace('gw');
    const lanNs = await net_.addNamespace('lan');
    const up = await net_.link(null, gwNs, `10.240.${n}.1/24`, `10.240.${n}.2/24`);
    const lan = await net_.link(gwNs, lanNs, `10.241.${n}.1/24`, `10.241.${n}.2/24`);
    // a real LAN has broadcast addresses on its interfaces (Wake-on-LAN uses the subnet broadcast)
    await net_.exec(gwNs, 'ip', ['address', 'change', `10.241.${n}.1/24`, 'brd', '+', 'dev', lan.ifA], { check: true });
    await net_.exec(lanNs, 'ip', ['address', 'change', `10.241.${n}.2/24`, 'brd', '+', 'dev', lan.ifB], { check: true });
    const lanIp = lan.addrB;

    // ---- the server
    const iface = `ghgw${process.pid % 10000}`;
    const base = await e2eServerEnv({ iface, subnet: `10.242.${n}`, publicHost: up.addrA, proxyBind: '127.0.0.1' });
    const ports = { ...base.ports, l4: await freePort('tcp') };
    const s = await startTestServer(
      {
        ...base.env,
        GATEHOUSE_WG_POLL_INTERVAL: '2',
        GATEHOUSE_GATEWAY_POLL_INTERVAL: '1',
        GATEHOUSE_GATEWAY_HEARTBEAT_INTERVAL: '1',
        GATEHOUSE_GATEWAY_OFFLINE_AFTER: String(OFFLINE_AFTER_S),
        GATEHOUSE_GATEWAY_WOL_TIMEOUT: '120',
      },
      { startFeatures: true, listen: true },
    );
    started.server = s;
    const h = bearer(await apiToken(s));
    const api = <T = never, P extends string = string, M extends string = 'GET'>(p: P, init: ReqInit<[T] extends [never] ? M : string> = {}) =>
      s.req<T, `/api/v1${P}`, M>(`/api/v1${p}`, { ...init, headers: h });

    // ---- the gateway peer: its envContent is all the companion gets
    const created = await api('/peers', { method: 'POST', json: { name: 'e2e home gateway', is_gateway: true } });
    assert.equal(created.status, 201, JSON.stringify(created.data));
    const peer = created.data.peer;
    const envContent: string = created.data.gateway!.envContent;
    const env = parseEnvText(envContent);
    assert.equal(env.GATEHOUSE_SERVER_URL, `http://10.242.${n}.1:${ports.api}`, 'the server API through the tunnel');
    const envFile = path.join(dir, 'gateway.env');
    fs.writeFileSync(envFile, envContent, { mode: 0o600 });
    const local = { GATEWAY_WG_INTERFACE: net_.ifName('gw'), GATEWAY_STATE_FILE: path.join(dir, 'state.json'), GATEWAY_LOG_LEVEL: 'debug' };

    // ---- LAN servers and routes
    const lanHttp = await net_.startHttpServer(lanNs, lanIp, 8081, { name: 'lan-nas' });
    await net_.startTcpEcho(lanNs, lanIp, 7001);
    const mkRoute = async (json: Record<string, unknown>) => {
      const r = await api('/routes', { method: 'POST', json: { target_kind: 'gateway', target_peer_id: peer.id, target_lan_host: lanIp, ...json } });
      assert.equal(r.status, 201, JSON.stringify(r.data));
      return r.data.route;
    };
    const webRoute = await mkRoute({ domain: 'nas.gw-e2e.test', target_lan_port: 8081 });
    const tcpRoute = await mkRoute({ domain: 'echo.gw-e2e.test', route_type: 'l4', l4_protocol: 'tcp', l4_listen_port: ports.l4, target_lan_port: 7001 });
    const MAC = '52:54:00:12:34:56';
    const wolRoute = await mkRoute({ domain: 'sleepy.gw-e2e.test', target_lan_port: 8082, wol_enabled: true, wol_mac: MAC });

    // the LAN is reachable from the gateway namespace only
    assert.equal((await net_.ping(null, lanIp, { count: 1, timeoutS: 1 })).ok, false, 'the host cannot reach the LAN');

    // ---- the companion, from the exact envContent
    let companion = startCompanion(net_, gwNs, envFile, local);
    companions.push(companion);
    const gatewayView = async () => (await api('/gateways')).data.gateways.find((g) => g.peer_id === peer.id);
    // reason: a gateway's health is its last heartbeat, which passed the heartbeat schema when the server took it
    const healthOf = (g: { health: unknown }) => g.health as Heartbeat | null;
    const online = await waitFor(
      async () => {
        if (companion.proc.exitCode !== null) throw new Error(`companion exited: ${companion.out().slice(-3000)}`);
        const g = await gatewayView();
        return g?.status === 'online' && healthOf(g)?.route_reachability?.length === 3 && g.config_in_sync ? g : null;
      },
      60_000,
      { intervalMs: 250, what: 'the gateway online with a heartbeat' },
    ).catch((e) => {
      throw new Error(`${(e as Error).message}\ncompanion output:\n${companion.out().slice(-4000)}`);
    });
    const hb = healthOf(online)!;
    const reach = new Map<number, RouteReachability>(hb.route_reachability.map((r: RouteReachability) => [r.route_id, r]));
    assert.equal(reach.get(webRoute.id)!.reachable, true);
    assert.equal(reach.get(tcpRoute.id)!.reachable, true);
    assert.equal(reach.get(wolRoute.id)!.reachable, false, 'the sleepy host does not answer yet');
    assert.ok(hb.wg_handshake_age_s !== null && hb.wg_handshake_age_s < 30, 'a real handshake');
    assert.match(hb.telemetry.wg_tools_version ?? '', /wireguard-tools/);
    assert.deepEqual(
      hb.tcp_listeners.map((l: ListenerStatus) => [l.port, l.status]),
      [[ports.l4, 'listening']],
    );
    assert.equal(online.health!.http_proxy_healthy, true);
    assert.equal(online.health!.api_healthy, true);
    const info = (await api(`/peers/${peer.id}/gateway-info`)).data.gateway;
    assert.equal(info.status, 'online');
    assert.equal(info.health!.route_reachability.length, 3);
    assert.ok(info.last_seen_at! > Date.now() - 10_000);

    // ---- HTTP and L4 gateway routes through the real Caddy
    const web = await waitFor(
      async () => {
        const r = await viaCaddy(ports.http, 'nas.gw-e2e.test', '/through/the/gateway?x=1');
        return r?.status === 200 ? r : null;
      },
      20_000,
      { what: 'HTTP through Caddy, the tunnel and the companion' },
    );
    const body = JSON.parse(web.body);
    assert.equal(body.server, 'lan-nas');
    assert.equal(body.url, '/through/the/gateway?x=1');
    assert.equal(body.headers.host, 'nas.gw-e2e.test');
    assert.equal(
      await waitFor(() => tcpRoundTrip('127.0.0.1', ports.l4, 'hello LAN over L4', 5000), 20_000, { what: 'TCP through Caddy L4' }),
      'hello LAN over L4',
    );

    // ---- the LAN HTTP server stops: the next heartbeat says so
    await lanHttp.stop();
    const stoppedAt = Date.now();
    await waitFor(
      async () => {
        const g = await gatewayView();
        return g!.last_seen_at! > stoppedAt && healthOf(g!)!.route_reachability.find((r: RouteReachability) => r.route_id === webRoute.id)?.reachable === false;
      },
      10_000,
      { what: 'the stopped LAN server reported unreachable' },
    );
    const g2 = await gatewayView();
    assert.equal(healthOf(g2!)!.route_reachability.find((r: RouteReachability) => r.route_id === tcpRoute.id)!.reachable, true);
    assert.equal(g2!.status, 'online', 'one LAN target still answers');
    const down = await viaCaddy(ports.http, 'nas.gw-e2e.test', '/');
    assert.equal(down?.status, 502, 'no Wake-on-LAN on this route: a plain 502');
    assert.match(down!.body, /unreachable/);

    // ---- Wake-on-LAN: waking-up page, the magic packet on the LAN, then the site
    const wol = net_.spawn(lanNs, process.execPath, ['-e', WOL_LISTENER]);
    let wolOut = '';
    wol.stdout!.setEncoding('utf8').on('data', (d: string) => (wolOut += d));
    await waitFor(() => wolOut.includes('READY'), 5000, { what: 'UDP listener on port 9' });
    const page = await viaCaddy(ports.http, 'sleepy.gw-e2e.test', '/dashboard', { accept: 'text/html' });
    assert.equal(page?.status, 503, JSON.stringify(page));
    assert.match(page!.body, /Waking up sleepy\.gw-e2e\.test/);
    assert.match(page!.body, /<meta http-equiv="refresh" content="5">/);
    assert.equal(page!.headers['retry-after'], '5');
    const pkt = await waitFor(() => /PKT (\S+) ([0-9a-f]+)/.exec(wolOut), 10_000, { what: 'the magic packet on the LAN' });
    const bytes = Buffer.from(pkt[2], 'hex');
    assert.equal(bytes.length, 102);
    assert.ok(bytes.subarray(0, 6).equals(Buffer.alloc(6, 0xff)), 'six 0xFF bytes');
    const mac = Buffer.from(MAC.replace(/:/g, ''), 'hex');
    for (let i = 0; i < 16; i++) assert.ok(bytes.subarray(6 + i * 6, 12 + i * 6).equals(mac), `MAC repetition ${i + 1}`);
    assert.equal(pkt[1], lan.addrA, 'sent by the gateway on its LAN interface');
    const acts = (await api('/logs/activity?event_type=gateway_wol_sent')).data.entries;
    assert.ok(acts.some((e) => at(e.details, 'route_id') === wolRoute.id && at(e.details, 'trigger') === 'visitor'));
    // the host "wakes up": the next reload gets the site
    await net_.startHttpServer(lanNs, lanIp, 8082, { name: 'woken-host' });
    const woke = await waitFor(
      async () => {
        const r = await viaCaddy(ports.http, 'sleepy.gw-e2e.test', '/dashboard', { accept: 'text/html' });
        return r?.status === 200 ? r : null;
      },
      10_000,
      { what: 'the woken host through Caddy' },
    );
    assert.equal(JSON.parse(woke.body).server, 'woken-host');
    // the admin can wake it on demand too
    const manual = await api(`/routes/${wolRoute.id}/wol`, { method: 'POST' });
    assert.equal(manual.status, 200, JSON.stringify(manual.data));
    assert.deepEqual(at(manual.data.wol.companion, 'sent_to'), [`10.241.${n}.255:9`]);

    // ---- rotation: the running companion is refused at once; the new env works
    const lastSeen = (await gatewayView())!.last_seen_at;
    const rotated = await api(`/peers/${peer.id}/gateway-env/rotate`, { method: 'POST' });
    assert.equal(rotated.status, 200);
    const rotatedAt = Date.now();
    await waitFor(() => companion.out().includes("rejected this gateway's token (401)"), 5000, { what: 'the companion told 401' });
    assert.ok(Date.now() - rotatedAt < 5000);
    const frozen = (await gatewayView())!.last_seen_at;
    assert.ok(frozen! >= lastSeen!);
    await new Promise((r) => setTimeout(r, 2500)); // not a condition: proves no heartbeat is accepted meanwhile
    assert.equal((await gatewayView())!.last_seen_at, frozen, 'no heartbeat accepted with the old token');
    assert.equal(JSON.parse((await viaCaddy(ports.http, 'sleepy.gw-e2e.test', '/'))!.body).server, 'woken-host', 'the LAN stays served meanwhile');
    await companion.stop();
    fs.writeFileSync(envFile, rotated.data.gateway.envContent, { mode: 0o600 });
    companion = startCompanion(net_, gwNs, envFile, local);
    companions.push(companion);
    await waitFor(async () => (await gatewayView())!.last_seen_at! > frozen!, 30_000, { what: 'heartbeats with the new tokens' }).catch((e) => {
      throw new Error(`${(e as Error).message}\n${companion.out().slice(-3000)}`);
    });
    await waitFor(async () => (await gatewayView())!.status === 'online', 10_000, { what: 'online again' });

    // ---- the companion stops: offline within offline_after + one evaluation tick (the logged transition)
    await companion.stop();
    const stopped = Date.now();
    const offlineEvent = await waitFor(
      async () => {
        const entries = (await api('/logs/activity?event_type=gateway_offline&limit=50')).data.entries;
        return entries.find((e) => e.details?.peer_id === peer.id && Number(e.details.at) >= stopped);
      },
      (OFFLINE_AFTER_S + TICK_S + 5) * 1000,
      { intervalMs: 100, what: 'the gateway_offline transition' },
    );
    const took = (Number(at(offlineEvent.details, 'at')) - stopped) / 1000;
    assert.ok(took <= OFFLINE_AFTER_S + TICK_S + 1.5, `offline after ${took.toFixed(1)} s`);
    assert.match(str(at(offlineEvent.details, 'reason')), /no heartbeat for \d+ s \(offline after 6 s\)/);
    const last = await gatewayView();
    assert.equal(last!.status, 'offline');
    const events = (await api('/logs/activity?source=gateways&limit=200')).data.entries.filter((e) => e.details?.peer_id === peer.id).map((e) => e.event_type);
    assert.ok(events.includes('gateway_online') && events.includes('gateway_offline') && events.includes('gateway_tokens_rotated'), events.join());
    t.diagnostic(`offline ${took.toFixed(1)} s after the companion stopped (offline_after ${OFFLINE_AFTER_S} s, tick ${TICK_S} s)`);
  },
);
