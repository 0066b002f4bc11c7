// End to end, as root: RDP routes with a real RDP server, a real RDP client and our reference client.
//
//   host namespace   the real sidecar (WireGuard managed with wireguard-go, the real custom Caddy)
//      │ veth         its API and Caddy listen on the "public" address of the client's link
//   client ns        the reference client (client/, gatehouse-client): register with a client-scope
//                    token, `up` (its own wireguard-go tunnel), `rdp list`, `rdp connect <id>` which
//                    starts a real xfreerdp (under xvfb-run) with the credentials it decrypted
//   gateway ns       the gateway companion (from its envContent); behind it:
//      │ veth
//   LAN ns           xrdp (gateway-mode RDP route: Caddy's linked L4 route → tunnel → companion → LAN)
//   peer ns          a VPN peer running xrdp on its tunnel address (internal-mode RDP route: client
//                    tunnel → server → peer tunnel)
//
// Checked so far: the gateway-mode route's linked L4 route carries real RDP from the client's
// namespace (Caddy → tunnel → companion → LAN) and the stored credentials' user authenticates there;
// the reference client registers with a client-scope token and brings its tunnel up, and through it
// reaches the internal-mode peer's xrdp (client tunnel → server → peer tunnel). The reference client's
// `rdp list` / `rdp connect` and the rest follow when the desktop client's RDP endpoints land.
// Why xrdp's own log decides, not xfreerdp's exit code: see test/lib/rdp.ts.
//   node --import tsx --test test/e2e/rdp-routes.test.ts
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import winston from 'winston';
import { startTestServer, apiToken, bearer, type TestServer } from '../../sidecar/test/lib/server.js';
import { encryptCredentials } from '@gatehouse/common/rdp-credentials.js';
import { createNetwork, skipReason, waitFor, type Network } from '../lib/netns.js';
import { freePort } from '../lib/ports.js';
import { CADDY, e2eServerEnv } from '../lib/e2e-server.js';
import { createRdpUser, rdpAuthenticate, startXrdp, RDP_TOOLS, type XrdpServer } from '../lib/rdp.js';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const CLIENT_MAIN = path.join(ROOT, 'client', 'src', 'main.ts');
const reason =
  skipReason(['wireguard-go', 'wg', ...RDP_TOOLS]) ??
  (fs.existsSync(CADDY) ? null : `no ${CADDY}: build it with bash scripts/build-caddy.sh`) ??
  (fs.existsSync(CLIENT_MAIN) ? null : 'no reference client (client/src/main.ts)');

// Prints every UDP datagram it receives on 0.0.0.0:9 as one hex line.
const WOL_LISTENER = `
const s = require('dgram').createSocket({ type: 'udp4', reuseAddr: true });
s.on('message', (m, r) => console.log('PKT ' + r.address + ' ' + m.toString('hex')));
s.bind(9, '0.0.0.0', () => console.log('READY'));
`;

interface Proc {
  proc: ChildProcess;
  /** stdout and stderr as they came */
  out: () => string;
  stdout: () => string;
  stop: () => Promise<void>;
}

function spawnIn(n: Network, ns: string, cmd: string, args: string[], env: Record<string, string> = {}): Proc {
  let out = '';
  let stdout = '';
  const proc = n.spawn(ns, cmd, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  proc.stdout!.setEncoding('utf8').on('data', (d: string) => ((out += d), (stdout += d)));
  proc.stderr!.setEncoding('utf8').on('data', (d: string) => (out += d));
  return {
    proc,
    out: () => out,
    stdout: () => stdout,
    stop: async () => {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      const exited = new Promise<void>((r) => proc.once('exit', () => r()));
      proc.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 8000))]);
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
    },
  };
}

test('RDP routes end to end: reference client, gateway and internal modes, real xrdp and xfreerdp', { skip: reason ?? false, timeout: 300_000 }, async (t) => {
  const started = Date.now();
  const lap = (what: string) => t.diagnostic(`${((Date.now() - started) / 1000).toFixed(1)} s: ${what}`);
  const n = (process.pid % 200) + 20;
  const net = await createNetwork({ prefix: 'rdp' });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-rdp-e2e-'));
  const running: { s?: TestServer; procs: Proc[]; xrdp: XrdpServer[] } = { procs: [], xrdp: [] };
  t.after(async () => {
    const t0 = Date.now();
    const steps: string[] = [];
    const step = (what: string) => steps.push(`${what} ${Date.now() - t0} ms`);
    await Promise.all(running.procs.map((p) => p.stop()));
    step('processes');
    await Promise.all(running.xrdp.map((x) => x.stop()));
    step('xrdp');
    await running.s?.close();
    step('server');
    await net.cleanup();
    step('network');
    fs.rmSync(dir, { recursive: true, force: true });
    if (process.env.RDP_E2E_TIMING) console.error(`cleanup: ${steps.join(', ')}`);
  });
  const cliNs = await net.addNamespace('cli');
  const gwNs = await net.addNamespace('gw');
  const lanNs = await net.addNamespace('lan');
  const peerNs = await net.addNamespace('peer');
  const cliLink = await net.link(null, cliNs, `10.245.${n}.1/24`, `10.245.${n}.2/24`);
  const gwLink = await net.link(null, gwNs, `10.246.${n}.1/24`, `10.246.${n}.2/24`);
  const peerLink = await net.link(null, peerNs, `10.248.${n}.1/24`, `10.248.${n}.2/24`);
  const lan = await net.link(gwNs, lanNs, `10.247.${n}.1/24`, `10.247.${n}.2/24`);
  // a real LAN has broadcast addresses on its interfaces (Wake-on-LAN uses the subnet broadcast)
  await net.exec(gwNs, 'ip', ['address', 'change', `10.247.${n}.1/24`, 'brd', '+', 'dev', lan.ifA], { check: true });
  await net.exec(lanNs, 'ip', ['address', 'change', `10.247.${n}.2/24`, 'brd', '+', 'dev', lan.ifB], { check: true });
  const publicHost = cliLink.addrA;

  // ---- two local users for the two RDP servers (their passwords are what the routes store)
  const gwPassword = `gw-${Math.random().toString(36).slice(2)}-Pässword`;
  const peerPassword = `peer-${Math.random().toString(36).slice(2)}-secret`;
  const gwUser = await createRdpUser(gwPassword);
  t.after(() => gwUser.remove());
  const peerUser = await createRdpUser(peerPassword);
  t.after(() => peerUser.remove());

  // ---- the server: API and Caddy on the public address; its log captured for the plaintext search
  const iface = `ghrdp${process.pid % 10000}`;
  const base = await e2eServerEnv({ iface, subnet: `10.249.${n}`, publicHost, proxyBind: publicHost });
  const l4Port = await freePort('tcp');
  const logFile = path.join(dir, 'sidecar.log');
  const log = winston.createLogger({
    level: 'debug',
    format: winston.format.combine(winston.format.timestamp(), winston.format.json()),
    transports: [new winston.transports.File({ filename: logFile })],
  });
  const started_ = await startTestServer(
    {
      ...base.env,
      GATEHOUSE_BIND: publicHost,
      GATEHOUSE_WG_POLL_INTERVAL: '2',
      GATEHOUSE_GATEWAY_POLL_INTERVAL: '1',
      GATEHOUSE_GATEWAY_HEARTBEAT_INTERVAL: '1',
      // the client here checks and heartbeats every 2 s (its defaults stay within 100 per 15 min)
      GATEHOUSE_RATE_LIMIT_CLIENT: '100000',
    },
    { startFeatures: true, listen: true, log },
  );
  running.s = started_;
  // the API listens on the public address only (the client namespace registers there): the test's
  // requests go there too (TestServer.req assumes 127.0.0.1)
  const baseUrl = `http://${publicHost}:${base.ports.api}`;
  const s: TestServer = {
    ...started_,
    req: async (p: string, init: RequestInit & { json?: unknown } = {}) => {
      const headers = new Headers(init.headers);
      let body = init.body;
      if (init.json !== undefined) {
        headers.set('content-type', 'application/json');
        body = JSON.stringify(init.json);
      }
      const res = await fetch(baseUrl + p, { ...init, headers, body, redirect: 'manual' });
      const text = await res.text();
      let data: any = text;
      try {
        data = JSON.parse(text);
      } catch {
        /* not JSON */
      }
      return Object.assign(res, { data });
    },
  };
  // the client reaches the internal-mode peer through the server: forward between tunnel peers (only
  // on this interface, which goes away with the test)
  await net.sysctl(null, `net.ipv4.conf.${iface}.forwarding`, '1');
  const h = bearer(await apiToken(s));
  const api = (p: string, method = 'GET', json?: unknown, headers: Record<string, string> = h) => s.req(`/api/v1${p}`, { method, headers, ...(json !== undefined ? { json } : {}) });
  lap('server up');

  // ---- the gateway companion in gwNs, from its envContent
  const gwCreated = await api('/peers', 'POST', { name: 'rdp e2e gateway', is_gateway: true });
  assert.equal(gwCreated.status, 201, JSON.stringify(gwCreated.data));
  const gwPeer = gwCreated.data.peer;
  const envFile = path.join(dir, 'gateway.env');
  fs.writeFileSync(envFile, (gwCreated.data.gateway.envContent as string).replace(`${publicHost}:`, `${gwLink.addrA}:`), { mode: 0o600 });
  const companion = spawnIn(net, gwNs, process.execPath, ['--import', 'tsx', path.join(ROOT, 'gateway', 'src', 'main.ts'), '--env', envFile], {
    GATEWAY_WG_INTERFACE: net.ifName('gw'),
    GATEWAY_STATE_FILE: path.join(dir, 'gw-state.json'),
  });
  running.procs.push(companion);

  // ---- the internal peer: a plain VPN peer whose tunnel address xrdp listens on
  const hostCreated = await api('/peers', 'POST', { name: 'rdp e2e desktop' });
  assert.equal(hostCreated.status, 201, JSON.stringify(hostCreated.data));
  const deskPeer = hostCreated.data.peer;
  const deskConf = ((await api(`/peers/${deskPeer.id}/config`)).data as string).replace(`${publicHost}:`, `${peerLink.addrA}:`);
  const deskWg = await net.bringUpPeer(peerNs, net.ifName('p'), deskConf);
  const deskIp = deskWg.addresses[0].split('/')[0];
  await waitFor(async () => (await net.ping(peerNs, base.serverIp, { count: 1, timeoutS: 1 })).ok, 20_000, { what: 'the desktop peer tunnel' });

  // ---- the two RDP servers and the Wake-on-LAN listeners
  const [lanXrdp, peerXrdp] = await Promise.all([startXrdp(net, lanNs, { host: lan.addrB, port: 3389 }), startXrdp(net, peerNs, { host: deskIp, port: 3389 })]);
  running.xrdp.push(lanXrdp, peerXrdp);
  t.diagnostic(`xrdp started in ${lanXrdp.startupMs} ms (LAN) and ${peerXrdp.startupMs} ms (peer)`);
  const wolOut = { lan: '', peer: '' };
  for (const [ns, key] of [[lanNs, 'lan'], [peerNs, 'peer']] as const) {
    const p = net.spawn(ns, process.execPath, ['-e', WOL_LISTENER]);
    p.stdout!.setEncoding('utf8').on('data', (d: string) => (wolOut[key] += d));
  }
  await waitFor(() => wolOut.lan.includes('READY') && wolOut.peer.includes('READY'), 5000, { what: 'UDP listeners on port 9' });

  // ---- the RDP routes
  const MAC_GW = '52:54:00:aa:bb:01';
  const MAC_PEER = '52:54:00:aa:bb:02';
  const gwRouteRes = await api('/rdp', 'POST', {
    name: 'lan desktop',
    access_mode: 'gateway',
    gateway_peer_id: gwPeer.id,
    target_host: lan.addrB,
    target_port: 3389,
    listen_port: l4Port,
    network_level_auth: false,
    wol_enabled: true,
    wol_mac: MAC_GW,
  });
  assert.equal(gwRouteRes.status, 201, JSON.stringify(gwRouteRes.data));
  const gwRoute = gwRouteRes.data.route;
  assert.ok(gwRoute.gateway_l4_route_id, 'gateway mode made its linked L4 route');
  const intRouteRes = await api('/rdp', 'POST', {
    name: 'peer desktop',
    access_mode: 'internal',
    target_peer_id: deskPeer.id,
    target_port: 3389,
    network_level_auth: false,
    wol_enabled: true,
    wol_mac: MAC_PEER,
  });
  assert.equal(intRouteRes.status, 201, JSON.stringify(intRouteRes.data));
  const intRoute = intRouteRes.data.route;
  assert.equal(intRoute.target_host, deskIp, "internal mode targets the peer's tunnel address");

  // ---- credentials, encrypted here with the server's public key (as the admin app does in the browser)
  const pub = await api('/rdp/pubkey');
  assert.equal(pub.status, 200, JSON.stringify(pub.data));
  const storeCredentials = async (routeId: number, username: string, password: string) => {
    const envelope = await encryptCredentials(pub.data.public_key, { username, password, domain: '' });
    const r = await api(`/rdp/${routeId}/credentials`, 'PUT', { credentials: envelope });
    assert.equal(r.status, 200, JSON.stringify(r.data));
  };
  await storeCredentials(gwRoute.id, gwUser.name, gwPassword);
  await storeCredentials(intRoute.id, peerUser.name, peerPassword);

  // ---- the companion online with the linked route's listener
  await waitFor(async () => {
    if (companion.proc.exitCode !== null) throw new Error(`companion exited: ${companion.out().slice(-3000)}`);
    const g = ((await api('/gateways')).data.gateways as any[]).find((x) => x.peer_id === gwPeer.id);
    return g?.status === 'online' && g.config_in_sync;
  }, 60_000, { intervalMs: 250, what: 'the gateway online and in sync' }).catch((e) => {
    throw new Error(`${(e as Error).message}\ncompanion output:\n${companion.out().slice(-4000)}`);
  });
  lap('gateway online');
  // the linked L4 route carries RDP: a plain xfreerdp from the client namespace at the public port
  // (the reference client's own connect comes below)
  const plain = await waitFor(async () => {
    const r = await rdpAuthenticate(net, cliNs, lanXrdp, { host: publicHost, port: l4Port, user: gwUser.name, password: gwPassword });
    return r.auth ? r : null;
  }, 30_000, { intervalMs: 500, what: 'RDP through the linked L4 route' });
  assert.equal(plain.auth!.ok, true, plain.output.slice(-2000));
  assert.equal(plain.auth!.ip, lan.addrA, "the connection reached the LAN from the companion's LAN address");
  t.diagnostic(`plain xfreerdp through the linked L4 route: authenticated in ${plain.ms} ms`);

  // ---- the reference client: a client-scope token, register, up
  const clientToken = await apiToken(s, ['client']);
  const tokenFile = path.join(dir, 'client-token');
  fs.writeFileSync(tokenFile, clientToken, { mode: 0o600 });
  const clientHome = path.join(dir, 'client-home');
  fs.mkdirSync(clientHome);
  const FINGERPRINT = 'a'.repeat(24) + Buffer.from(`rdp-e2e-${process.pid}`).toString('hex').padEnd(40, '0').slice(0, 40);
  const clientEnv = {
    HOME: clientHome,
    GATEHOUSE_CLIENT_STATE_DIR: path.join(dir, 'client-state'),
    GATEHOUSE_CLIENT_FINGERPRINT: FINGERPRINT,
    GATEHOUSE_CLIENT_INTERFACE: net.ifName('c'),
    GATEHOUSE_CLIENT_HOSTNAME: 'rdp-e2e-laptop',
  };
  const client = async (args: string[], o: { xvfb?: boolean; timeoutMs?: number } = {}) => {
    const argv = [process.execPath, '--import', 'tsx', CLIENT_MAIN, ...args];
    const r = await net.exec(cliNs, o.xvfb ? 'xvfb-run' : argv[0], o.xvfb ? ['-a', ...argv] : argv.slice(1), { env: clientEnv, timeoutMs: o.timeoutMs ?? 60_000 });
    let json: any = null;
    try {
      json = JSON.parse(r.stdout);
    } catch {
      /* not JSON */
    }
    return { ...r, json };
  };
  const reg = await client(['register', '--server', `http://${publicHost}:${base.ports.api}`, '--token-file', tokenFile, '--json']);
  assert.equal(reg.code, 0, reg.stdout + reg.stderr);
  const up = spawnIn(net, cliNs, process.execPath, ['--import', 'tsx', CLIENT_MAIN, 'up', '--userspace', '--poll-interval', '2', '--heartbeat-interval', '2'], clientEnv);
  running.procs.push(up);
  await waitFor(async () => {
    if (up.proc.exitCode !== null) throw new Error(`gatehouse-client up exited: ${up.out().slice(-3000)}`);
    return (await net.ping(cliNs, base.serverIp, { count: 1, timeoutS: 1 })).ok;
  }, 30_000, { what: "the client's tunnel" }).catch((e) => {
    throw new Error(`${(e as Error).message}\n${up.out().slice(-3000)}`);
  });
  const clientIp = (await net.exec(cliNs, 'ip', ['-4', '-o', 'addr', 'show', 'dev', clientEnv.GATEHOUSE_CLIENT_INTERFACE], { check: true })).stdout.match(/inet (\S+)\//)![1];
  lap(`client registered and up (tunnel address ${clientIp})`);
  // the client's tunnel reaches the peer's xrdp through the server (plain xfreerdp first)
  const plainTunnel = await waitFor(async () => {
    const r = await rdpAuthenticate(net, cliNs, peerXrdp, { host: deskIp, port: 3389, user: peerUser.name, password: peerPassword });
    return r.auth ? r : null;
  }, 30_000, { intervalMs: 500, what: "RDP through the client's tunnel to the peer" });
  assert.equal(plainTunnel.auth!.ok, true, plainTunnel.output.slice(-2000));
  assert.equal(plainTunnel.auth!.ip, clientIp);

  lap('done');
});
