// End to end, as root, through the real custom Caddy (bin/caddy) and a real WireGuard tunnel: what
// route changes do to connections that are open through OTHER routes (proxy/apply.ts).
// The peer host runs, on its tunnel address, a server that echoes every upgraded connection
// (`Upgrade: gatehouse-echo`, HTTP 101 then an echo of every byte) and streams long downloads.
// Through route A an upgraded connection stays open and a download runs while route B is created,
// edited, toggled off and on and deleted and route auth is switched on for route C: every change is
// a host change in Caddy, so the connection echoes after each and the download arrives byte-complete.
// Then a full load (POST /caddy/reload): the connection survives it by the documented grace
// (STREAM_CLOSE_DELAY, proxy/fragments/servers.ts), and is closed after it.
//   WG_I_PREFER_BUGGY_USERSPACE_TO_POLISHED_KMOD=1 node --import tsx --test test/e2e/live-changes.test.ts
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type net from 'node:net';
import { skipReason } from '../lib/netns.js';
import { waitFor } from '../lib/wait.js';
import { CADDY, startE2e } from '../lib/e2e-server.js';
import { STREAM_CLOSE_DELAY } from '../../sidecar/src/proxy/fragments/servers.js';
import type { ProxyService } from '../../sidecar/src/proxy/service.js';

const reason = skipReason(['wireguard-go', 'wg', 'ping']) ?? (fs.existsSync(CADDY) ? null : `no ${CADDY}: build it with bash scripts/build-caddy.sh`);
const GRACE_MS = Number(STREAM_CLOSE_DELAY.replace(/s$/, '')) * 1000;

// The peer's server: 101 + echo for `Upgrade: gatehouse-echo`; GET /download?bytes=N streams N
// bytes (byte i = i % 251) in 64 KiB chunks every `gap` ms; anything else: 200 "ok <host>".
const PEER_SERVER = `
const http = require('node:http');
const [host, port] = process.argv.slice(1);
const srv = http.createServer((req, res) => {
  const u = new URL(req.url, 'http://x');
  if (u.pathname === '/download') {
    const total = Number(u.searchParams.get('bytes'));
    const gap = Number(u.searchParams.get('gap') ?? 50);
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': total });
    let sent = 0;
    const tick = () => {
      if (sent >= total) return res.end();
      const n = Math.min(65536, total - sent);
      const b = Buffer.alloc(n);
      for (let i = 0; i < n; i++) b[i] = (sent + i) % 251;
      sent += n;
      res.write(b);
      setTimeout(tick, gap);
    };
    tick();
    return;
  }
  res.end('ok ' + req.headers.host);
});
srv.on('upgrade', (req, sock) => {
  sock.write('HTTP/1.1 101 Switching Protocols\\r\\nConnection: Upgrade\\r\\nUpgrade: gatehouse-echo\\r\\n\\r\\n');
  sock.pipe(sock);
  sock.on('error', () => {});
});
srv.listen(Number(port), host, () => console.log('READY'));
`;

/** An upgraded connection through Caddy: send(text) resolves with the echo (or null within 3 s). */
async function upgrade(
  port: number,
  host: string,
): Promise<{ echo: (text: string) => Promise<string | null>; closed: () => boolean; closedAt: () => number | null; destroy: () => void }> {
  const sock = await new Promise<net.Socket>((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: '/echo', headers: { host, connection: 'Upgrade', upgrade: 'gatehouse-echo' }, agent: false });
    req.on('upgrade', (res, s) => (res.statusCode === 101 ? resolve(s) : reject(new Error(`status ${res.statusCode}`))));
    req.on('response', (res) => reject(new Error(`no upgrade: ${res.statusCode}`)));
    req.on('error', reject);
    req.end();
  });
  let buf = '';
  let closedAt: number | null = null;
  sock.setEncoding('utf8');
  sock.on('data', (d: string) => (buf += d));
  sock.on('close', () => (closedAt = Date.now()));
  sock.on('error', () => undefined);
  return {
    echo: async (text) => {
      if (closedAt !== null) return null;
      buf = '';
      sock.write(text);
      try {
        await waitFor(() => buf.includes(text) || closedAt !== null, 3000, { intervalMs: 10, what: `the echo of ${text}` });
      } catch {
        return null;
      }
      return buf.includes(text) ? text : null;
    },
    closed: () => closedAt !== null,
    closedAt: () => closedAt,
    destroy: () => sock.destroy(),
  };
}

/** A download through Caddy: resolves with the status, the bytes received and whether each byte is right. */
function download(
  port: number,
  host: string,
  bytes: number,
  gapMs: number,
): Promise<{ status: number; received: number; intact: boolean; error: string | null }> {
  return new Promise((resolve) => {
    let received = 0;
    let intact = true;
    const req = http.get({ host: '127.0.0.1', port, path: `/download?bytes=${bytes}&gap=${gapMs}`, headers: { host }, agent: false }, (res) => {
      res.on('data', (d: Buffer) => {
        for (let i = 0; i < d.length; i++) if (d[i] !== (received + i) % 251) intact = false;
        received += d.length;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, received, intact, error: null }));
      res.on('error', (e) => resolve({ status: res.statusCode ?? 0, received, intact, error: e.message }));
      res.on('aborted', () => resolve({ status: res.statusCode ?? 0, received, intact, error: 'aborted' }));
    });
    req.on('error', (e) => resolve({ status: 0, received, intact, error: e.message }));
  });
}

test('route changes do not cut connections of other routes; a full load keeps them for the grace', { skip: reason ?? false, timeout: 300_000 }, async (t) => {
  const run = await startE2e(t, {
    prefix: 'live',
    iface: `ghl${process.pid % 1000}`,
    vpnOctet: 231,
    peers: [{ name: 'peer', octet: 232 }],
    proxyBind: '127.0.0.1',
    env: { GATEHOUSE_TLS: 'internal' },
    // listen: Caddy forwards the route-auth verify subrequests to GATEHOUSE_PORT.
    start: { listen: true },
  });
  const { network, api, ports, serverIp } = run;
  const [ns] = run.ns;
  const peer = (await api('/peers', 'POST', { name: 'e2e-live-peer' })).data.peer;
  await network.bringUpPeer(ns, network.ifName('l'), (await api(`/peers/${peer.id}/config`)).data as string);
  await waitFor(async () => (await network.ping(ns, serverIp, { count: 1, timeoutS: 1 })).ok, 20_000, { what: 'the tunnel' });
  const peerIp = peer.address.split('/')[0];
  const p = network.spawn(ns, process.execPath, ['-e', PEER_SERVER, peerIp, '8090']);
  let out = '';
  p.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  await waitFor(() => out.includes('READY'), 10_000, { what: "the peer's echo and download server" });

  const create = async (body: Record<string, unknown>) => {
    const r = await api('/routes', 'POST', { peer_id: peer.id, target_port: 8090, ...body });
    assert.equal(r.status, 201, JSON.stringify(r.data));
    return r.data.route;
  };
  const get = (host: string) =>
    new Promise<{ status: number; body: string } | null>((resolve) => {
      const req = http.get({ host: '127.0.0.1', port: ports.http, path: '/', headers: { host }, agent: false, timeout: 3000 }, (res) => {
        let b = '';
        res.on('data', (d) => (b += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: b }));
      });
      req.on('error', () => resolve(null));
      req.on('timeout', () => req.destroy());
    });

  await create({ domain: 'a.live.test' });
  const c = await create({ domain: 'c.live.test' });
  assert.equal((await get('a.live.test'))?.body, 'ok a.live.test');

  // ---- an upgraded connection and a long download (8 MiB over ~6 s) through route A
  const conn = await upgrade(ports.http, 'a.live.test');
  assert.equal(await conn.echo('hello'), 'hello');
  const dl = download(ports.http, 'a.live.test', 8 * 1024 * 1024, 45);
  const proxy = run.s.deps.proxy as ProxyService;
  const fullLoadsBefore = proxy.fullLoads;
  const changesBefore = proxy.hostChanges;

  // ---- route B: created, edited, toggled off and on, deleted; route auth on for route C
  const b = await create({ domain: 'b.live.test' });
  assert.equal((await get('b.live.test'))?.status, 200);
  assert.equal(await conn.echo('after B created'), 'after B created');
  const edited = await api(`/routes/${b.id}`, 'PUT', { domain: 'b2.live.test', compress_enabled: true });
  assert.equal(edited.status, 200, JSON.stringify(edited.data));
  assert.equal((await get('b2.live.test'))?.body, 'ok b2.live.test');
  assert.equal((await get('b.live.test'))?.status, 404, 'the old name is gone');
  assert.equal(await conn.echo('after B edited'), 'after B edited');
  assert.equal((await api(`/routes/${b.id}/toggle`, 'PUT')).data.enabled, false);
  assert.equal((await get('b2.live.test'))?.status, 404);
  assert.equal(await conn.echo('after B off'), 'after B off');
  assert.equal((await api(`/routes/${b.id}/toggle`, 'PUT')).data.enabled, true);
  assert.equal((await get('b2.live.test'))?.status, 200);
  assert.equal(await conn.echo('after B on'), 'after B on');
  assert.equal((await api(`/routes/${b.id}`, 'DELETE')).status, 200);
  assert.equal((await get('b2.live.test'))?.status, 404);
  assert.equal(await conn.echo('after B deleted'), 'after B deleted');
  const auth = await api(`/routes/${c.id}/auth`, 'POST', {
    method: 'email_password',
    email: 'owner@example.test',
    password: 'correct horse battery',
    session_max_age: 3_600_000,
  });
  assert.ok(auth.status === 200 || auth.status === 201, JSON.stringify(auth.data));
  const cNow = await get('c.live.test');
  assert.ok(cNow && cNow.status >= 300 && cNow.status < 400, `route C now asks to sign in: ${JSON.stringify(cNow)}`);
  assert.equal(await conn.echo('after route auth on C'), 'after route auth on C');
  assert.equal(proxy.fullLoads, fullLoadsBefore, 'none of these changes was a full load');
  assert.ok(proxy.hostChanges - changesBefore >= 6, 'each was a host change');

  const done = await dl;
  assert.deepEqual(done, { status: 200, received: 8 * 1024 * 1024, intact: true, error: null }, 'the download finished byte-complete across the changes');
  assert.equal(conn.closed(), false);
  assert.equal((await get('a.live.test'))?.body, 'ok a.live.test');

  // ---- a full load: the connection keeps working through the grace, then is closed
  const reload = await api('/caddy/reload', 'POST');
  assert.equal(reload.status, 200, JSON.stringify(reload.data));
  assert.equal(reload.data.loaded, true);
  const loadedAt = Date.now();
  assert.equal(await conn.echo('right after the full load'), 'right after the full load');
  assert.equal((await get('a.live.test'))?.body, 'ok a.live.test', 'new requests go through the new configuration');
  // not a condition: the connection must stay open for the grace, so time has to pass
  await new Promise((r) => setTimeout(r, GRACE_MS - 5000 - (Date.now() - loadedAt)));
  assert.equal(await conn.echo('near the end of the grace'), 'near the end of the grace', `the connection survives the full load for ${STREAM_CLOSE_DELAY}`);
  await waitFor(() => conn.closed(), 20_000, { what: 'the connection closed after the grace' });
  assert.ok(conn.closedAt()! - loadedAt >= GRACE_MS - 1000, `closed ${conn.closedAt()! - loadedAt} ms after the load`);
  // a new connection works at once
  const again = await upgrade(ports.http, 'a.live.test');
  assert.equal(await again.echo('reconnected'), 'reconnected');
  again.destroy();
});
