// End to end, as root, through the real custom Caddy (bin/caddy) and a real WireGuard tunnel:
// the sidecar runs with GATEHOUSE_WG_MANAGE=true and GATEHOUSE_MANAGE_CADDY=true in the host
// namespace (its own interface name, subnet and ports). A peer host is a network namespace whose
// WireGuard client is brought up from the peer's GET /peers/:id/config; on its tunnel address it runs
// an HTTP server, a TCP echo, a UDP echo and a TLS echo (ncat --ssl). Routes are created through the
// API and reached through Caddy on 127.0.0.1: curl --resolve for HTTP and HTTPS, TCP/UDP payloads
// for L4, node's TLS client for L4 passthrough (the peer's certificate) and terminate (Caddy's
// internal CA). Toggling a route off stops the answer (404 / refused), on brings it back.
//   cd /work/main && node --import tsx --test test/e2e/routes.test.ts
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import tls from 'node:tls';
import { caddyPaths, type CaddySupervisor } from '../../sidecar/src/proxy/supervisor.js';
import { skipReason, type Network } from '../lib/netns.js';
import { waitFor } from '../lib/wait.js';
import { freePort } from '../lib/ports.js';
import { CADDY, startE2e } from '../lib/e2e-server.js';

const reason =
  skipReason(['wireguard-go', 'wg', 'ping', 'curl', 'ncat']) ?? (fs.existsSync(CADDY) ? null : `no ${CADDY}: build it with bash scripts/build-caddy.sh`);

/** curl through Caddy on 127.0.0.1 with --resolve; → {status, body} or null when nothing answers. */
async function curl(n: Network, url: string, extra: string[] = []): Promise<{ status: number; body: string } | null> {
  const u = new URL(url);
  const port = u.port || (u.protocol === 'https:' ? '443' : '80');
  const r = await n.exec(null, 'curl', ['-s', '--max-time', '3', '--resolve', `${u.hostname}:${port}:127.0.0.1`, '-w', '\n%{http_code}', ...extra, url], {
    timeoutMs: 8000,
  });
  if (r.code !== 0) return null;
  const i = r.stdout.lastIndexOf('\n');
  return { status: Number(r.stdout.slice(i + 1)), body: r.stdout.slice(0, i) };
}

/** A TLS round trip to Caddy on 127.0.0.1 with the given SNI. */
function tlsRoundTrip(
  port: number,
  servername: string,
  message: string,
  opts: { ca?: Buffer } = {},
): Promise<{ echo: string; authorized: boolean; issuer: string } | null> {
  return new Promise((resolve) => {
    let done = false;
    const finish = (v: { echo: string; authorized: boolean; issuer: string } | null) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      sock.destroy();
      resolve(v);
    };
    const sock = tls.connect({ host: '127.0.0.1', port, servername, ...(opts.ca ? { ca: opts.ca } : { rejectUnauthorized: false }) });
    const timer = setTimeout(() => finish(null), 4000);
    let got = '';
    sock.on('secureConnect', () => sock.write(message));
    sock.on('data', (d) => {
      got += d.toString();
      if (got.length >= message.length) {
        const cert = sock.getPeerCertificate();
        finish({ echo: got, authorized: sock.authorized, issuer: String(cert?.issuer?.CN ?? cert?.issuer?.O ?? '') });
      }
    });
    sock.on('error', () => finish(null));
    sock.on('close', () => finish(null));
  });
}

test('routes through the real Caddy and a real WireGuard tunnel', { skip: reason ?? false, timeout: 240_000 }, async (t) => {
  const run = await startE2e(t, {
    prefix: 'routes',
    iface: `ghr${process.pid % 1000}`,
    vpnOctet: 238,
    peers: [{ name: 'peer', octet: 239 }],
    proxyBind: '127.0.0.1',
    env: { GATEHOUSE_TLS: 'internal' },
  });
  const { network, s, api, ports, serverIp, health } = run;
  const [ns] = run.ns;
  const l4 = { tcp: await freePort('tcp'), udp: await freePort('udp'), pass: await freePort('tcp'), term: await freePort('tcp') };
  assert.equal(health.data.checks!.wireguard.ok, true);
  // Caddy keeps its state under the test's data directory.
  const caddyPid = (s.deps.caddySupervisor as CaddySupervisor).status().pid!;
  assert.ok(
    fs
      .readFileSync(`/proc/${caddyPid}/environ`, 'utf8')
      .split('\0')
      .includes(`XDG_DATA_HOME=${caddyPaths(s.dataDir).xdgData}`),
  );

  // ---- the peer host: tunnel up from its own config, servers on its tunnel address
  const peer = (await api('/peers', 'POST', { name: 'e2e-routes-peer' })).data.peer;
  const conf = await api(`/peers/${peer.id}/config`);
  await network.bringUpPeer(ns, network.ifName('r'), conf.data as string);
  await waitFor(async () => (await network.ping(ns, serverIp, { count: 1, timeoutS: 1 })).ok, 20_000, { what: 'the tunnel' });
  const peerIp = peer.address.split('/')[0];
  const web = await network.startHttpServer(ns, peerIp, 8080, { name: 'peer-web' });
  const tcpEcho = await network.startTcpEcho(ns, peerIp, 7001);
  const udpEcho = await network.startUdpEcho(ns, peerIp, 7002);
  const tlsEcho = network.spawn(ns, 'ncat', ['--ssl', '-l', '-k', peerIp, '7443', '--exec', '/bin/cat']);
  await waitFor(async () => (await network.exec(ns, 'ss', ['-ltn', `sport = :7443`])).stdout.includes(`${peerIp}:7443`), 10_000, {
    what: 'the TLS echo (ncat --ssl)',
  });

  // ---- HTTP route app.test
  const app = await api('/routes', 'POST', { domain: 'app.test', peer_id: peer.id, target_port: 8080 });
  assert.equal(app.status, 201, JSON.stringify(app.data));
  const appUrl = `http://app.test:${ports.http}/hello?x=1`;
  const r1 = await curl(network, appUrl);
  assert.equal(r1?.status, 200, JSON.stringify(r1));
  const j = JSON.parse(r1!.body);
  assert.equal(j.server, 'peer-web');
  assert.equal(j.url, '/hello?x=1');
  assert.equal(j.headers.host, `app.test:${ports.http}`);
  assert.equal((await curl(network, `http://other.test:${ports.http}/`))?.status, 404, 'an unknown host gets 404');

  // ---- L4 TCP and UDP routes
  const tcpRoute = await api('/routes', 'POST', {
    domain: 'tcp.test',
    route_type: 'l4',
    l4_protocol: 'tcp',
    l4_listen_port: l4.tcp,
    peer_id: peer.id,
    target_port: tcpEcho.port,
  });
  assert.equal(tcpRoute.status, 201, JSON.stringify(tcpRoute.data));
  const udpRoute = await api('/routes', 'POST', {
    domain: 'udp.test',
    route_type: 'l4',
    l4_protocol: 'udp',
    l4_listen_port: l4.udp,
    peer_id: peer.id,
    target_port: udpEcho.port,
  });
  assert.equal(udpRoute.status, 201, JSON.stringify(udpRoute.data));
  assert.equal(await network.tcpRoundTrip(null, '127.0.0.1', l4.tcp, 'hello over tcp'), 'hello over tcp');
  assert.equal(await network.udpRoundTrip(null, '127.0.0.1', l4.udp, 'hello over udp'), 'hello over udp');

  // ---- toggles: off → no answer, on → answer
  assert.equal((await api(`/routes/${app.data.route.id}/toggle`, 'PUT')).data.enabled, false);
  assert.equal((await curl(network, appUrl))?.status, 404);
  assert.equal((await api(`/routes/${app.data.route.id}/toggle`, 'PUT')).data.enabled, true);
  assert.equal((await curl(network, appUrl))?.status, 200);
  await api(`/routes/${tcpRoute.data.route.id}/toggle`, 'PUT');
  await api(`/routes/${udpRoute.data.route.id}/toggle`, 'PUT');
  assert.equal(await network.tcpRoundTrip(null, '127.0.0.1', l4.tcp, 'x', 1500), null, 'TCP refused while off');
  assert.equal(await network.udpRoundTrip(null, '127.0.0.1', l4.udp, 'x', 1500), null, 'no UDP answer while off');
  await api(`/routes/${tcpRoute.data.route.id}/toggle`, 'PUT');
  await api(`/routes/${udpRoute.data.route.id}/toggle`, 'PUT');
  assert.equal(await network.tcpRoundTrip(null, '127.0.0.1', l4.tcp, 'tcp again'), 'tcp again');
  assert.equal(await network.udpRoundTrip(null, '127.0.0.1', l4.udp, 'udp again'), 'udp again');

  // ---- HTTPS route: Caddy's internal CA, HTTP redirects
  const root = caddyPaths(s.dataDir).internalRootCert;
  const sec = await api('/routes', 'POST', { domain: 'secure.test', peer_id: peer.id, target_port: 8080, https_enabled: true });
  assert.equal(sec.status, 201, JSON.stringify(sec.data));
  const redirect = await curl(network, `http://secure.test:${ports.http}/a`, ['-o', '/dev/null', '-D', '-']);
  assert.equal(redirect?.status, 308);
  const viaTls = await waitFor(
    async () => {
      if (!fs.existsSync(root)) return null;
      const r = await curl(network, `https://secure.test:${ports.https}/tls`, ['--cacert', root]);
      return r?.status === 200 ? r : null;
    },
    15_000,
    { what: 'HTTPS through Caddy with a certificate from its internal CA' },
  );
  assert.equal(JSON.parse(viaTls.body).url, '/tls');

  // ---- L4 passthrough: TLS goes untouched to the peer (its own certificate), matched by SNI
  const pass = await api('/routes', 'POST', {
    domain: 'pass.test',
    route_type: 'l4',
    l4_protocol: 'tcp',
    l4_listen_port: l4.pass,
    l4_tls_mode: 'passthrough',
    peer_id: peer.id,
    target_port: 7443,
  });
  assert.equal(pass.status, 201, JSON.stringify(pass.data));
  const p1 = await tlsRoundTrip(l4.pass, 'pass.test', 'hello passthrough');
  assert.ok(p1, 'TLS through the passthrough route');
  assert.equal(p1.echo, 'hello passthrough');
  assert.doesNotMatch(p1.issuer, /Caddy/, `the peer's certificate, not Caddy's (issuer ${p1.issuer})`);
  assert.equal(await tlsRoundTrip(l4.pass, 'wrong.test', 'x'), null, 'another SNI is not proxied');

  // ---- L4 terminate: Caddy ends TLS with the route's certificate and proxies plain bytes
  const term = await api('/routes', 'POST', {
    domain: 'term.test',
    route_type: 'l4',
    l4_protocol: 'tcp',
    l4_listen_port: l4.term,
    l4_tls_mode: 'terminate',
    peer_id: peer.id,
    target_port: tcpEcho.port,
  });
  assert.equal(term.status, 201, JSON.stringify(term.data));
  const t1 = await waitFor(() => tlsRoundTrip(l4.term, 'term.test', 'hello terminate', { ca: fs.readFileSync(root) }), 15_000, {
    what: 'TLS terminated by Caddy',
  });
  assert.equal(t1.echo, 'hello terminate');
  assert.equal(t1.authorized, true, 'the certificate chains to Caddy’s internal root');
  assert.match(t1.issuer, /Caddy Local Authority/);
  await api(`/routes/${term.data.route.id}/toggle`, 'PUT');
  assert.equal(await tlsRoundTrip(l4.term, 'term.test', 'x', { ca: fs.readFileSync(root) }), null, 'terminate route off: refused');

  // ---- deleting the HTTP route: 404
  assert.equal((await api(`/routes/${app.data.route.id}`, 'DELETE')).status, 200);
  assert.equal((await curl(network, appUrl))?.status, 404);

  tlsEcho.kill('SIGTERM');
  await web.stop();
  await tcpEcho.stop();
  await udpEcho.stop();
});
