// End to end, as root: RDP routes with a real RDP server, a real RDP client and our reference client.
//
//   host namespace   the real sidecar (WireGuard managed with wireguard-go, the real custom Caddy)
//      │ veth         its API and Caddy listen on the "public" address of the client's link
//   client ns        the reference client (client/, gatehouse-client): register with a client-scope
//                    token, `up` (its own wireguard-go tunnel), `rdp list`, `rdp connect <id>` which
//                    starts a real xfreerdp (on an Xvfb display) with the credentials it decrypted
//   gateway ns       the gateway companion (from its envContent); behind it:
//      │ veth
//   LAN ns           xrdp (gateway-mode RDP route: Caddy's linked L4 route → tunnel → companion → LAN)
//   peer ns          a VPN peer running xrdp on its tunnel address (internal-mode RDP route: client
//                    tunnel → server → peer tunnel)
//
// Checked: the gateway-mode route's linked L4 route carries real RDP from the client's namespace
// (Caddy → tunnel → companion → LAN); the reference client registers with a client-scope token, brings
// its tunnel up, lists both routes, and `rdp connect` authenticates the stored credentials at each real
// xrdp (its session manager's verdict, with the address the connection came from: the companion's LAN
// address for the gateway route, the client's tunnel address for the internal one); a wrong stored
// password fails; the database file, the data directory and the server's log hold no plaintext password
// (nor does the client's state directory); a token bound to another machine fingerprint and a token of
// another scope are refused; a maintenance window refuses connect with its note; Wake-on-LAN magic
// packets arrive on UDP 9 in the LAN (gateway route, through the companion) and in the peer's
// namespace (internal route, through the tunnel); disconnect-all reaches the running client through
// its session heartbeat and it drops the connection; the history export parses as CSV and as JSON.
// Why xrdp's own log decides, not xfreerdp's exit code: see test/lib/rdp.ts.
//   node --import tsx --test test/e2e/rdp-routes.test.ts
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import winston from 'winston';
import { startTestServer, apiToken, bearer, requestAt, type TestServer } from '../../sidecar/test/lib/server.js';
import { encryptCredentials } from '@gatehouse/common/rdp-credentials.js';
import { createNetwork, skipReason, type Network } from '../lib/netns.js';
import { waitFor } from '../lib/wait.js';
import { freePort } from '../lib/ports.js';
import { CADDY, e2eServerEnv } from '../lib/e2e-server.js';
import type { HistoryEntry } from '../../sidecar/src/rdp/schema.js';
import type { ExportRow } from '../../sidecar/src/rdp/schema.js';
import { createRdpUser, rdpAuthenticate, startXrdp, startXvfb, RDP_TOOLS, type XrdpServer, type Xvfb } from '../lib/rdp.js';
import type { Gateway } from '../../sidecar/test/lib/protocol.js';
import { at, objsAt } from '../lib/json.js';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const CLIENT_MAIN = path.join(ROOT, 'client', 'src', 'main.ts');
const reason =
  skipReason(['wireguard-go', 'wg', ...RDP_TOOLS]) ??
  (fs.existsSync(CADDY) ? null : `no ${CADDY}: build it with bash scripts/build-caddy.sh`) ??
  (fs.existsSync(CLIENT_MAIN) ? null : 'no reference client (client/src/main.ts)');

// Exits 0 once host:port accepts a TCP connection (within 3 s), else 1.
const TCP_OPEN = `
const s = require('net').connect(Number(process.argv[2]), process.argv[1], () => process.exit(0));
s.on('error', () => process.exit(1));
setTimeout(() => process.exit(1), 3000);
`;

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

function magicPacketFor(hex: string, mac: string): boolean {
  const bytes = Buffer.from(hex, 'hex');
  if (bytes.length !== 102 || !bytes.subarray(0, 6).equals(Buffer.alloc(6, 0xff))) return false;
  const m = Buffer.from(mac.replace(/:/g, ''), 'hex');
  for (let i = 0; i < 16; i++) if (!bytes.subarray(6 + i * 6, 12 + i * 6).equals(m)) return false;
  return true;
}

/** RFC 4180-ish CSV (quoted fields with "" escapes, CRLF or LF lines) → rows of fields. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
    } else field += c;
  }
  if (field !== '' || row.length) {
    row.push(field);
    rows.push(row);
  }
  return rows;
}

test('RDP routes end to end: reference client, gateway and internal modes, real xrdp and xfreerdp', { skip: reason ?? false, timeout: 300_000 }, async (t) => {
  const started = Date.now();
  const lap = (what: string) => t.diagnostic(`${((Date.now() - started) / 1000).toFixed(1)} s: ${what}`);
  const n = (process.pid % 200) + 20;
  const net = await createNetwork({ prefix: 'rdp' });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-rdp-e2e-'));
  const running: { s?: TestServer; procs: Proc[]; xrdp: XrdpServer[]; xvfb?: Xvfb } = { procs: [], xrdp: [] };
  t.after(async () => {
    const t0 = Date.now();
    const steps: string[] = [];
    const step = (what: string) => steps.push(`${what} ${Date.now() - t0} ms`);
    await Promise.all(running.procs.map((p) => p.stop()));
    step('processes');
    await Promise.all(running.xrdp.map((x) => x.stop()));
    await running.xvfb?.stop();
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
  const s: TestServer = { ...started_, req: requestAt(baseUrl) };
  // the client reaches the internal-mode peer through the server: forward between tunnel peers (only
  // on this interface, which goes away with the test)
  await net.sysctl(null, `net.ipv4.conf.${iface}.forwarding`, '1');
  const h = bearer(await apiToken(s));
  const api = <T = never, P extends string = string, M extends string = 'GET'>(
    p: P,
    method?: [T] extends [never] ? M : string,
    json?: unknown,
    headers: Record<string, string> = h,
  ) => s.req<T, `/api/v1${P}`, M>(`/api/v1${p}`, { method, headers, ...(json !== undefined ? { json } : {}) });
  lap('server up');

  // ---- the gateway companion in gwNs, from its envContent
  const gwCreated = await api('/peers', 'POST', { name: 'rdp e2e gateway', is_gateway: true });
  assert.equal(gwCreated.status, 201, JSON.stringify(gwCreated.data));
  const gwPeer = gwCreated.data.peer;
  const envFile = path.join(dir, 'gateway.env');
  fs.writeFileSync(envFile, (gwCreated.data.gateway!.envContent as string).replaceAll(`${publicHost}:`, `${gwLink.addrA}:`), { mode: 0o600 });
  const companion = spawnIn(net, gwNs, process.execPath, ['--import', 'tsx', path.join(ROOT, 'gateway', 'src', 'main.ts'), '--env', envFile], {
    GATEWAY_WG_INTERFACE: net.ifName('gw'),
    GATEWAY_STATE_FILE: path.join(dir, 'gw-state.json'),
  });
  running.procs.push(companion);

  // ---- the internal peer: a plain VPN peer whose tunnel address xrdp listens on
  const hostCreated = await api('/peers', 'POST', { name: 'rdp e2e desktop' });
  assert.equal(hostCreated.status, 201, JSON.stringify(hostCreated.data));
  const deskPeer = hostCreated.data.peer;
  const deskConf = ((await api(`/peers/${deskPeer.id}/config`)).data as string).replaceAll(`${publicHost}:`, `${peerLink.addrA}:`);
  const deskWg = await net.bringUpPeer(peerNs, net.ifName('p'), deskConf);
  const deskIp = deskWg.addresses[0].split('/')[0];
  await waitFor(async () => (await net.ping(peerNs, base.serverIp, { count: 1, timeoutS: 1 })).ok, 20_000, { what: 'the desktop peer tunnel' });

  // ---- the two RDP servers and the Wake-on-LAN listeners
  const [lanXrdp, peerXrdp] = await Promise.all([startXrdp(net, lanNs, { host: lan.addrB, port: 3389 }), startXrdp(net, peerNs, { host: deskIp, port: 3389 })]);
  running.xrdp.push(lanXrdp, peerXrdp);
  t.diagnostic(`xrdp started in ${lanXrdp.startupMs} ms (LAN) and ${peerXrdp.startupMs} ms (peer)`);
  const wolOut = { lan: '', peer: '' };
  for (const [ns, key] of [
    [lanNs, 'lan'],
    [peerNs, 'peer'],
  ] as const) {
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
  await waitFor(
    async () => {
      if (companion.proc.exitCode !== null) throw new Error(`companion exited: ${companion.out().slice(-3000)}`);
      const g = ((await api('/gateways')).data.gateways as Gateway[]).find((x) => x.peer_id === gwPeer.id);
      return g?.status === 'online' && g.config_in_sync;
    },
    60_000,
    { intervalMs: 250, what: 'the gateway online and in sync' },
  ).catch((e) => {
    throw new Error(`${(e as Error).message}\ncompanion output:\n${companion.out().slice(-4000)}`);
  });
  lap('gateway online');
  // the linked L4 route carries RDP: a plain xfreerdp from the client namespace at the public port
  // (the reference client's own connect comes below)
  const plain = await waitFor(
    async () => {
      const r = await rdpAuthenticate(net, cliNs, lanXrdp, { host: publicHost, port: l4Port, user: gwUser.name, password: gwPassword });
      return r.auth ? r : null;
    },
    30_000,
    { intervalMs: 500, what: 'RDP through the linked L4 route' },
  );
  assert.equal(plain.auth!.ok, true, plain.output.slice(-2000));
  assert.equal(plain.auth!.ip, lan.addrA, "the connection reached the LAN from the companion's LAN address");
  t.diagnostic(`plain xfreerdp through the linked L4 route: authenticated in ${plain.ms} ms`);

  // ---- the reference client: a client-scope token, register, up
  const clientToken = await apiToken(s, ['client']);
  const tokenFile = path.join(dir, 'client-token');
  fs.writeFileSync(tokenFile, clientToken, { mode: 0o600 });
  const clientHome = path.join(dir, 'client-home');
  fs.mkdirSync(clientHome);
  // the client's X display for xfreerdp (a virtual one)
  const xvfb = await startXvfb(net, cliNs);
  running.xvfb = xvfb;
  const FINGERPRINT = 'a'.repeat(24) + Buffer.from(`rdp-e2e-${process.pid}`).toString('hex').padEnd(40, '0').slice(0, 40);
  const clientEnv = {
    HOME: clientHome,
    GATEHOUSE_CLIENT_STATE_DIR: path.join(dir, 'client-state'),
    GATEHOUSE_CLIENT_FINGERPRINT: FINGERPRINT,
    GATEHOUSE_CLIENT_INTERFACE: net.ifName('c'),
    GATEHOUSE_CLIENT_HOSTNAME: 'rdp-e2e-laptop',
    DISPLAY: xvfb.display,
  };
  const client = async (args: string[], o: { timeoutMs?: number } = {}) => {
    const argv = [process.execPath, '--import', 'tsx', CLIENT_MAIN, ...args];
    const r = await net.exec(cliNs, argv[0], argv.slice(1), { env: clientEnv, timeoutMs: o.timeoutMs ?? 60_000 });
    let json: unknown = null;
    try {
      json = JSON.parse(r.stdout);
    } catch {
      /* not JSON */
    }
    return { ...r, json };
  };
  const reg = await client(['register', '--server', `http://${publicHost}:${base.ports.api}`, '--token-file', tokenFile, '--json']);
  assert.equal(reg.code, 0, reg.stdout + reg.stderr);
  const up = spawnIn(
    net,
    cliNs,
    process.execPath,
    ['--import', 'tsx', CLIENT_MAIN, 'up', '--userspace', '--poll-interval', '2', '--heartbeat-interval', '2'],
    clientEnv,
  );
  running.procs.push(up);
  await waitFor(
    async () => {
      if (up.proc.exitCode !== null) throw new Error(`gatehouse-client up exited: ${up.out().slice(-3000)}`);
      return (await net.ping(cliNs, base.serverIp, { count: 1, timeoutS: 1 })).ok;
    },
    30_000,
    { what: "the client's tunnel" },
  ).catch((e) => {
    throw new Error(`${(e as Error).message}\n${up.out().slice(-3000)}`);
  });
  const clientIp = (await net.exec(cliNs, 'ip', ['-4', '-o', 'addr', 'show', 'dev', clientEnv.GATEHOUSE_CLIENT_INTERFACE], { check: true })).stdout.match(
    /inet (\S+)\//,
  )![1];
  lap(`client registered and up (tunnel address ${clientIp})`);
  // the client's tunnel reaches the peer's xrdp through the server (plain xfreerdp first)
  const plainTunnel = await waitFor(
    async () => {
      const r = await rdpAuthenticate(net, cliNs, peerXrdp, { host: deskIp, port: 3389, user: peerUser.name, password: peerPassword });
      return r.auth ? r : null;
    },
    30_000,
    { intervalMs: 500, what: "RDP through the client's tunnel to the peer" },
  );
  assert.equal(plainTunnel.auth!.ok, true, plainTunnel.output.slice(-2000));
  assert.equal(plainTunnel.auth!.ip, clientIp);

  // ---- rdp list
  const list = await client(['rdp', 'list', '--json']);
  assert.equal(list.code, 0, list.stdout + list.stderr);
  const listed = objsAt(list.json, 'routes');
  assert.deepEqual(listed.map((r) => r.id).sort(), [gwRoute.id, intRoute.id].sort(), JSON.stringify(list.json));

  // ---- rdp connect: the stored credentials authenticate at the real xrdp, along each route's path
  const FREERDP = ['--', '/cert:ignore', '/sec:tls'];
  const connect = async (routeId: number, extra: string[] = []) => client(['rdp', 'connect', String(routeId), '--json', ...extra, ...FREERDP]);
  const verdict = async (x: XrdpServer, user: string, routeId: number, extra: string[] = []) => {
    const before = x.authEvents().at(-1)?.index ?? -1;
    const t0 = Date.now();
    const r = await connect(routeId, extra);
    const auth = await x.waitForAuth(user, { after: before, timeoutMs: 3000 }).catch(() => null);
    return { r, auth, ms: Date.now() - t0 };
  };
  const viaGw = await verdict(lanXrdp, gwUser.name, gwRoute.id);
  t.diagnostic(`gateway route: client exit ${viaGw.r.code} after ${viaGw.ms} ms; ${viaGw.auth?.line}`);
  assert.equal(viaGw.auth?.ok, true, `${viaGw.r.stdout}\n${viaGw.r.stderr.slice(-3000)}\n${lanXrdp.sesmanLog().slice(-1500)}`);
  assert.equal(viaGw.auth!.ip, lan.addrA, 'through the companion (its LAN address)');
  assert.equal(at(viaGw.r.json, 'address', 'mode'), 'gateway');
  assert.equal(at(viaGw.r.json, 'address', 'port'), l4Port);
  // the path first, so a broken tunnel path fails here by name instead of as a hanging RDP client
  // (once, 1 of 8 runs, xfreerdp hung in TCP connect here with no verdict; cause not found yet: the
  // forwarding setting is re-applied in case the sidecar re-created its interface)
  await net.sysctl(null, `net.ipv4.conf.${iface}.forwarding`, '1');
  await waitFor(async () => (await net.exec(cliNs, process.execPath, ['-e', TCP_OPEN, deskIp, '3389'], { timeoutMs: 5000 })).code === 0, 20_000, {
    intervalMs: 500,
    what: "TCP from the client's namespace to the peer's xrdp through the tunnel",
  });
  const viaTunnel = await verdict(peerXrdp, peerUser.name, intRoute.id);
  t.diagnostic(`internal route: client exit ${viaTunnel.r.code} after ${viaTunnel.ms} ms; ${viaTunnel.auth?.line}`);
  assert.equal(
    viaTunnel.auth?.ok,
    true,
    `${viaTunnel.r.stdout}\n${viaTunnel.r.stderr.slice(-3000)}\n${peerXrdp.sesmanLog().slice(-1500)}\n${peerXrdp.xrdpLog().slice(-1500)}\n${up.out().slice(-1500)}`,
  );
  assert.equal(viaTunnel.auth!.ip, clientIp, "through the tunnel (the client's tunnel address)");
  assert.equal(at(viaTunnel.r.json, 'address', 'host'), deskIp);
  lap('both routes authenticated');

  // ---- a wrong stored password fails that authentication
  await storeCredentials(gwRoute.id, gwUser.name, `${gwPassword}-not`);
  const wrong = await verdict(lanXrdp, gwUser.name, gwRoute.id);
  assert.equal(wrong.auth?.ok, false, `${wrong.r.stderr.slice(-2000)}\n${lanXrdp.sesmanLog().slice(-1500)}`);
  await storeCredentials(gwRoute.id, gwUser.name, gwPassword);

  // ---- the server never saw a plaintext password: database file, data directory, logs
  const needles = [gwPassword, peerPassword, `${gwPassword}-not`].map((p) => Buffer.from(p, 'utf8'));
  const haystacks: string[] = [logFile];
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) haystacks.push(p);
    }
  };
  walk(s.dataDir);
  assert.ok(haystacks.some((f) => /\.(db|sqlite)$/.test(f)) || s.databaseUrl?.startsWith('postgres'), `the database file is among ${haystacks.join(', ')}`);
  for (const f of haystacks) {
    const bytes = fs.readFileSync(f);
    for (const needle of needles) assert.equal(bytes.indexOf(needle), -1, `${f} holds a plaintext password`);
  }
  // the search can find things: the routes' names (stored in clear) are there, and the log has lines
  assert.ok(
    haystacks.some((f) => fs.readFileSync(f).includes('lan desktop')),
    'a plaintext field is found by the same search',
  );
  assert.ok(fs.statSync(logFile).size > 0, 'the sidecar logged');
  // …nor does the client's state directory (its profile holds no password)
  const stateFiles: string[] = [];
  const walkState = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walkState(p);
      else if (e.isFile()) stateFiles.push(p);
    }
  };
  walkState(clientEnv.GATEHOUSE_CLIENT_STATE_DIR);
  for (const f of stateFiles) for (const needle of needles) assert.equal(fs.readFileSync(f).indexOf(needle), -1, `${f} holds a plaintext password`);
  t.diagnostic(
    `no plaintext password in ${haystacks.length} server files (${haystacks.map((f) => path.basename(f)).join(', ')}) nor ${stateFiles.length} client files`,
  );

  // ---- fingerprint mismatch and another scope are refused
  const asClient = (fp: string | null, token = clientToken) => {
    const headers: Record<string, string> = { authorization: `Bearer ${token}` };
    if (fp) headers['x-machine-fingerprint'] = fp;
    return s.req(`/api/v1/client/rdp`, { headers });
  };
  assert.equal((await asClient(FINGERPRINT)).status, 200, 'the registered machine');
  const otherMachine = await asClient('b'.repeat(64));
  assert.equal(otherMachine.status, 401, JSON.stringify(otherMachine.data));
  const otherScope = await asClient(FINGERPRINT, await apiToken(s, ['routes']));
  assert.ok(otherScope.status === 401 || otherScope.status === 403, `${otherScope.status} ${JSON.stringify(otherScope.data)}`);
  assert.equal(otherScope.status, 403, JSON.stringify(otherScope.data));

  // ---- a maintenance window refuses connect with its note
  const NOTE = 'patch tuesday: back at noon';
  const maint = await api(`/rdp/${intRoute.id}/maintenance`, 'PUT', {
    windows: [{ from: new Date(Date.now() - 60_000).toISOString(), to: new Date(Date.now() + 3_600_000).toISOString(), note: NOTE }],
  });
  assert.equal(maint.status, 200, JSON.stringify(maint.data));
  const before = peerXrdp.authEvents().length;
  const refused = await connect(intRoute.id);
  assert.notEqual(refused.code, 0);
  assert.ok((refused.stdout + refused.stderr).includes(NOTE), `the note in: ${refused.stdout} ${refused.stderr.slice(-1000)}`);
  assert.equal(peerXrdp.authEvents().length, before, 'no RDP connection was made');
  assert.equal((await api(`/rdp/${intRoute.id}/maintenance`, 'PUT', { windows: [] })).status, 200);

  // ---- Wake-on-LAN: through the companion onto the LAN, directly to the peer
  const wolGw = await api(`/rdp/${gwRoute.id}/wol`, 'POST', {});
  assert.equal(wolGw.status, 200, JSON.stringify(wolGw.data));
  const wolInt = await api(`/rdp/${intRoute.id}/wol`, 'POST', {});
  assert.equal(wolInt.status, 200, JSON.stringify(wolInt.data));
  await waitFor(() => [...wolOut.lan.matchAll(/PKT (\S+) ([0-9a-f]+)/g)].some((m) => magicPacketFor(m[2], MAC_GW)), 10_000, {
    what: 'the magic packet on the LAN',
  });
  await waitFor(() => [...wolOut.peer.matchAll(/PKT (\S+) ([0-9a-f]+)/g)].some((m) => magicPacketFor(m[2], MAC_PEER)), 10_000, {
    what: "the magic packet in the peer's namespace",
  });
  assert.ok(![...wolOut.lan.matchAll(/PKT (\S+) ([0-9a-f]+)/g)].some((m) => magicPacketFor(m[2], MAC_PEER)), "the peer's packet is not on the LAN");

  // ---- disconnect-all reaches the running client (session heartbeat) and it drops the connection
  peerXrdp.setSessionSeconds(120);
  const mark = peerXrdp.authEvents().at(-1)?.index ?? -1;
  const live = spawnIn(
    net,
    cliNs,
    process.execPath,
    ['--import', 'tsx', CLIENT_MAIN, 'rdp', 'connect', String(intRoute.id), '--json', '--session-heartbeat', '1', ...FREERDP],
    clientEnv,
  );
  running.procs.push(live);
  const liveAuth = await peerXrdp.waitForAuth(peerUser.name, { after: mark, timeoutMs: 20_000 });
  assert.equal(liveAuth.ok, true);
  const sessions = await waitFor(
    async () => {
      const hist = await api(`/rdp/${intRoute.id}/history?limit=20`);
      const rows = hist.data.sessions as HistoryEntry[];
      return rows.filter((x) => x.status === 'active').length ? rows : null;
    },
    10_000,
    { what: 'the active session recorded' },
  );
  assert.ok(sessions.length >= 1);
  await new Promise((r) => setTimeout(r, 1500)); // not a condition: the desktop is up and running, and the client stays connected
  assert.equal(live.proc.exitCode, null, `the client is still connected: ${live.out().slice(-2000)}`);
  const da = await api(`/rdp/${intRoute.id}/sessions/disconnect-all`, 'POST');
  assert.equal(da.status, 200, JSON.stringify(da.data));
  const orderedAt = Date.now();
  const code = await new Promise<number | null>((resolve) => {
    if (live.proc.exitCode !== null) return resolve(live.proc.exitCode);
    live.proc.once('exit', (c) => resolve(c));
    setTimeout(() => resolve(null), 15_000);
  });
  t.diagnostic(`disconnect-all: the client dropped the connection ${Date.now() - orderedAt} ms after the order (exit ${code})`);
  assert.equal(code, 3, `exit 3 = the server ordered the disconnect: ${live.out().slice(-3000)}`);
  const liveJson = JSON.parse(live.stdout() || 'null');
  assert.ok(liveJson?.disconnected, JSON.stringify(liveJson));
  peerXrdp.setSessionSeconds(1);

  // ---- history export, CSV and JSON
  const csv = await s.req('/api/v1/rdp/history/export?format=csv', { headers: h });
  assert.equal(csv.status, 200);
  assert.match(String(csv.headers.get('content-type')), /text\/csv/);
  const rows = parseCsv(String(csv.data).trim());
  const header = rows[0];
  assert.ok(header.length > 3, header.join());
  const routeCol = header.indexOf('rdp_route_id');
  assert.ok(routeCol >= 0, `an rdp_route_id column in ${header.join()}`);
  const body = rows.slice(1);
  for (const r of body) assert.equal(r.length, header.length, `every row has ${header.length} fields: ${r.join()}`);
  assert.ok(body.some((r) => Number(r[routeCol]) === gwRoute.id) && body.some((r) => Number(r[routeCol]) === intRoute.id), 'sessions of both routes');
  const json = await s.req('/api/v1/rdp/history/export?format=json', { headers: h });
  assert.equal(json.status, 200);
  const entries = json.data as ExportRow[];
  assert.ok(Array.isArray(entries), JSON.stringify(json.data).slice(0, 500));
  assert.equal(entries.length, body.length, 'the same sessions in both formats');
  const endReasons = new Set(entries.filter((e) => e.rdp_route_id === intRoute.id).map((e) => e.end_reason));
  assert.ok(endReasons.has('disconnected'), `the disconnect-all shows in the history: ${[...endReasons].join()}`);
  lap('done');
});
