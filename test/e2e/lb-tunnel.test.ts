// End to end, as root: several backends per route (load balancing, active health checks, sticky
// cookies, header operations, compression) through the real custom Caddy (bin/caddy) and real
// WireGuard tunnels (wireguard-go). The sidecar runs in the host namespace with its interface and
// Caddy on 127.0.0.1; peers web-a and web-b each bring their own config up in a namespace of their
// own, and each runs a netns.ts HTTP server on its tunnel address, port 8080: every request Caddy
// proxies and every health check crosses a tunnel. Checked:
// - round robin alternates between the two peers;
// - ip_hash keeps each client address on one backend (sixteen source addresses, both backends used);
// - cookie keeps a client on its backend, also across a Caddy reload; the cookie is not the HMAC of
//   the backend's address under an empty key (the route's own secret);
// - a backend's server killed: no 5xx, every request goes to the other; Caddy's health check takes
//   it out (GET /routes/:id/backends "down", route_backend_down on the live stream); started again,
//   it is back in the rotation ("up", route_backend_up);
// - a backend that answers 500: out of the rotation within one health-check interval (plus the
//   check's own timeout), no 5xx after that;
// - the backend sees the configured request headers, the client the response headers, and zstd and
//   gzip bodies.
//   cd /work/main && node --import tsx --test --test-concurrency=1 test/e2e/lb-tunnel.test.ts
import { test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import zlib from 'node:zlib';
import { skipReason, type Server } from '../lib/netns.js';
import { waitFor } from '../lib/wait.js';
import { CADDY, startE2e, tunnelPeers } from '../lib/e2e-server.js';
import type { TestServer } from '../../sidecar/test/lib/server.js';

const reason = skipReason(['wireguard-go', 'wg', 'ping']) ?? (fs.existsSync(CADDY) ? null : `no ${CADDY}: build it with bash scripts/build-caddy.sh`);
const INTERVAL_S = 1;
const TIMEOUT_S = 1;

interface Res {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** One request to Caddy on 127.0.0.1 (no keep-alive), from the source address `from` when given. */
function get(port: number, host: string, headers: Record<string, string> = {}, from?: string): Promise<Res> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: '/', agent: false, localAddress: from, headers: { host, ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.setTimeout(15_000, () => req.destroy(new Error(`timeout ${host}`)));
    req.on('error', reject);
    req.end();
  });
}
/** The name of the netns.ts server that answered (its JSON's `server`). */
const who = (r: { body: Buffer }) => (JSON.parse(r.body.toString('utf8')) as { server: string }).server;

interface StreamEvent {
  event: string;
  data: { backend?: string; route_id?: number };
}

/** The live event stream (GET /api/v1/events) read as it arrives: its domain events in order. */
function liveStream(s: TestServer, token: string): Promise<{ events: StreamEvent[]; close(): void }> {
  return new Promise((resolve, reject) => {
    const req = http.get(`${s.url}/api/v1/events`, { headers: { accept: 'text/event-stream', authorization: `Bearer ${token}` } }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`live stream: ${res.statusCode}`));
      res.setEncoding('utf8');
      const events: StreamEvent[] = [];
      let buf = '';
      res.on('data', (chunk: string) => {
        buf += chunk;
        let i: number;
        while ((i = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, i).split('\n');
          buf = buf.slice(i + 2);
          const event = block.find((l) => l.startsWith('event: '))?.slice(7);
          const data = block.filter((l) => l.startsWith('data: ')).map((l) => l.slice(6));
          if (event) events.push({ event, data: JSON.parse(data.join('\n')) as StreamEvent['data'] });
        }
      });
      res.on('error', () => {});
      resolve({ events, close: () => req.destroy() });
    });
    req.on('error', reject);
  });
}

test(
  'load balancing through real WireGuard tunnels: round robin, ip_hash, cookie, health-check failover and return, headers',
  { skip: reason ?? false, timeout: 240_000 },
  async (t) => {
    const run = await startE2e(t, {
      prefix: 'lbtun',
      iface: `ghb${process.pid % 1000}`,
      vpnOctet: 224,
      peers: [
        { name: 'a', octet: 225 },
        { name: 'b', octet: 230 },
      ],
      proxyBind: '127.0.0.1',
      // a real listener: the live stream is read over HTTP
      start: { listen: true },
    });
    const { network, api, ports, s } = run;
    const [peerA, peerB] = await tunnelPeers(run, ['web-a', 'web-b']);
    const ip = (p: { address: string }) => p.address.split('/')[0];
    const servers: Server[] = [
      await network.startHttpServer(run.ns[0], ip(peerA), 8080, { name: 'web-a' }),
      await network.startHttpServer(run.ns[1], ip(peerB), 8080, { name: 'web-b' }),
    ];
    const dialB = `${ip(peerB)}:8080`;
    const both = [
      { peer_id: peerA.id, target_port: 8080 },
      { peer_id: peerB.id, target_port: 8080 },
    ];
    const create = async (body: Record<string, unknown>) => {
      const r = await api('/routes', 'POST', { backends: both, ...body });
      assert.equal(r.status, 201, JSON.stringify(r.data));
      return r.data.route;
    };
    const visit = (domain: string, headers: Record<string, string> = {}, from?: string) => get(ports.http, domain, headers, from);
    const token = String((await api('/tokens', 'POST', { name: 'live stream', scopes: ['routes'] })).data.token);
    const live = await liveStream(s, token);
    t.after(() => live.close());

    await t.test('round robin alternates between the two peers', async () => {
      await create({ domain: 'rr.lb.test' });
      const seq: string[] = [];
      for (let i = 0; i < 6; i++) {
        const r = await visit('rr.lb.test');
        assert.equal(r.status, 200, r.body.toString());
        seq.push(who(r));
      }
      assert.deepEqual(new Set(seq), new Set(['web-a', 'web-b']), seq.join(' '));
      for (let i = 1; i < seq.length; i++) assert.notEqual(seq[i], seq[i - 1], `alternates: ${seq.join(' ')}`);
    });

    await t.test('ip_hash keeps each client address on one backend', async () => {
      await create({ domain: 'hash.lb.test', lb_policy: 'ip_hash' });
      const byClient = new Map<string, Set<string>>();
      for (let i = 1; i <= 16; i++) {
        const from = `127.0.0.${i}`;
        const seen = new Set<string>();
        for (let k = 0; k < 3; k++) seen.add(who(await visit('hash.lb.test', {}, from)));
        byClient.set(from, seen);
      }
      for (const [from, seen] of byClient) assert.equal(seen.size, 1, `${from} stays on one backend, got ${[...seen].join(', ')}`);
      const used = new Set([...byClient.values()].flatMap((x) => [...x]));
      assert.equal(
        used.size,
        2,
        `sixteen clients spread over both backends (all on one: odds 1 in 32768): ${JSON.stringify([...byClient].map(([k, v]) => [k, ...v]))}`,
      );
    });

    await t.test('cookie keeps a client on its backend (across a Caddy reload); the cookie is signed with the route secret', async () => {
      await create({ domain: 'sticky.lb.test', lb_policy: 'cookie', lb_cookie_name: 'app_lb' });
      const clients: { cookie: string; backend: string }[] = [];
      // cookie-less clients are placed by the fallback (round robin): two of them land on different backends
      for (let i = 0; i < 2; i++) {
        const first = await visit('sticky.lb.test');
        assert.equal(first.status, 200);
        const cookie = String([first.headers['set-cookie']].flat()[0] ?? '').split(';')[0];
        assert.match(cookie, /^app_lb=[0-9a-f]{64}$/);
        clients.push({ cookie, backend: who(first) });
      }
      assert.deepEqual(new Set(clients.map((c) => c.backend)), new Set(['web-a', 'web-b']));
      for (const c of clients) {
        // Caddy's cookie is HMAC-SHA256(secret, dial): with an empty secret anyone could compute it from the tunnel address
        const dial = c.backend === 'web-a' ? `${ip(peerA)}:8080` : dialB;
        assert.notEqual(c.cookie.slice('app_lb='.length), crypto.createHmac('sha256', '').update(dial).digest('hex'), 'not the empty-key HMAC of the address');
      }
      const sticks = async (what: string) => {
        for (const c of clients) for (let i = 0; i < 4; i++) assert.equal(who(await visit('sticky.lb.test', { cookie: c.cookie })), c.backend, what);
      };
      await sticks('the cookie keeps the client on its backend');
      const reload = await api('/caddy/reload', 'POST');
      assert.equal(reload.status, 200, JSON.stringify(reload.data));
      await sticks('the same after a reload (the route keeps its secret)');
    });

    const hc = await create({ domain: 'hc.lb.test', health_check: { path: '/', interval_s: INTERVAL_S, timeout_s: TIMEOUT_S } });
    const stateB = async () => (await api(`/routes/${hc.id}/backends`)).data.backends.find((b) => b.dial === dialB)?.state;
    /** Waits for a route_backend_down/up event of web-b on the live stream, after position `from`; returns its position. */
    const eventB = async (type: string, from: number) => {
      await waitFor(() => live.events.slice(from).some((e) => e.event === type && e.data.backend === dialB && e.data.route_id === hc.id), 30_000, {
        what: `${type} for ${dialB} on the live stream`,
      });
      return live.events.findIndex((e, i) => i >= from && e.event === type && e.data.backend === dialB);
    };
    /** Requests until web-b answers again (back in the rotation); every answer a 200. */
    const backInRotation = () =>
      waitFor(
        async () => {
          const r = await visit('hc.lb.test');
          assert.equal(r.status, 200, r.body.toString());
          return who(r) === 'web-b';
        },
        15_000,
        { what: 'web-b back in the rotation', intervalMs: 100 },
      );
    await backInRotation();

    await t.test("a killed backend's requests go to the other, no 5xx; it leaves the rotation (down) and comes back (up)", async () => {
      const mark = live.events.length;
      await servers[1].stop();
      // a dial refused before the check notices is tried on the other backend (retries): no 5xx at any time
      const t0 = Date.now();
      let detected = false;
      while (!detected) {
        for (let i = 0; i < 4; i++) {
          const r = await visit('hc.lb.test');
          assert.equal(r.status, 200, `no 5xx after the kill: ${r.status} ${r.body.toString()}`);
          assert.equal(who(r), 'web-a');
        }
        detected = (await stateB()) === 'down';
        assert.ok(Date.now() - t0 < 30_000, 'web-b seen down in GET /routes/:id/backends');
      }
      const down = await eventB('route_backend_down', mark);
      for (let i = 0; i < 10; i++) {
        const r = await visit('hc.lb.test');
        assert.equal(r.status, 200, 'no 5xx after detection');
        assert.equal(who(r), 'web-a');
      }

      servers[1] = await network.startHttpServer(run.ns[1], ip(peerB), 8080, { name: 'web-b' });
      await backInRotation();
      await waitFor(async () => (await stateB()) === 'up', 30_000, { what: 'web-b up in GET /routes/:id/backends' });
      await eventB('route_backend_up', down + 1);
    });

    await t.test('a backend answering 500 leaves the rotation within one health-check interval; no 5xx after that', async () => {
      const ctl = (status: number | null) => network.httpGet(null, `http://${dialB}/__ctl`, { method: 'POST', body: JSON.stringify({ status }) });
      assert.equal((await ctl(500)).status, 200);
      const t0 = Date.now();
      // the next check (at most one interval away) fails and takes web-b out; the check itself may take up to its timeout
      const deadline = t0 + (INTERVAL_S + TIMEOUT_S) * 1000 + 500;
      const seen: { at: number; status: number; server: string }[] = [];
      while (Date.now() < deadline + 1500) {
        const r = await visit('hc.lb.test');
        seen.push({ at: Date.now() - t0, status: r.status, server: who(r) });
      }
      const late = seen.filter((x) => x.at > deadline - t0);
      t.diagnostic(
        `after the 500s began: ${seen.filter((x) => x.status >= 500).length} of ${seen.length} answers 5xx, the last at ${Math.max(0, ...seen.filter((x) => x.status >= 500).map((x) => x.at))} ms`,
      );
      assert.ok(late.length >= 5, `requests after the detection bound: ${late.length}`);
      for (const x of late) assert.deepEqual([x.status, x.server], [200, 'web-a'], `${x.at} ms after the 500s began (bound ${deadline - t0} ms)`);
      assert.equal((await ctl(null)).status, 200);
      await backInRotation();
    });
    live.close();

    await t.test('headers: the backend sees the request headers, the client the response headers; zstd and gzip bodies', async () => {
      const r = await api('/routes', 'POST', {
        domain: 'hdr.lb.test',
        peer_id: peerA.id,
        target_port: 8080,
        request_headers: { set: { 'X-Client': '{client_ip}', 'X-Route': '{route_domain}#{route_id}' }, delete: ['X-Secret'] },
        response_headers: { set: { 'X-Served-Via': 'gatehouse' }, delete: ['Content-Type'] },
      });
      assert.equal(r.status, 201, JSON.stringify(r.data));
      // compression on a route of its own: encode compresses only known content types (JSON is one)
      const z = await api('/routes', 'POST', { domain: 'zip.lb.test', peer_id: peerA.id, target_port: 8080, compression: ['zstd', 'gzip'] });
      assert.equal(z.status, 201, JSON.stringify(z.data));
      const id = r.data.route.id;
      const x = await visit('hdr.lb.test', { 'x-secret': 'hidden' });
      assert.equal(x.status, 200);
      const seen = (JSON.parse(x.body.toString('utf8')) as { headers: Record<string, string> }).headers;
      assert.equal(seen['x-client'], '127.0.0.1');
      assert.equal(seen['x-route'], `hdr.lb.test#${id}`);
      assert.equal(seen['x-secret'], undefined);
      assert.equal(x.headers['x-served-via'], 'gatehouse');
      assert.equal(x.headers['content-type'], undefined);

      // the backend echoes the request headers: a padded one makes the body worth compressing
      const pad = { 'x-pad': 'x'.repeat(2000) };
      const gz = await visit('zip.lb.test', { ...pad, 'accept-encoding': 'gzip' });
      assert.equal(gz.headers['content-encoding'], 'gzip');
      assert.equal(who({ body: zlib.gunzipSync(gz.body) }), 'web-a');
      const zs = await visit('zip.lb.test', { ...pad, 'accept-encoding': 'zstd' });
      assert.equal(zs.headers['content-encoding'], 'zstd');
      // a zstd frame (RFC 8878: magic number 0xFD2FB528, little-endian)
      assert.deepEqual([...zs.body.subarray(0, 4)], [0x28, 0xb5, 0x2f, 0xfd]);
      assert.ok(zs.body.length < 1500, `compressed: ${zs.body.length} bytes`);
    });
  },
);
