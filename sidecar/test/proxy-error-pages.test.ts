// The branded error answers of the proxy (fragments/error-pages.ts) through the real custom Caddy
// (bin/caddy) running the rendered configuration on loopback: instead of an empty 502, a small page
// in English or German by Accept-Language, or the API's JSON error body for JSON clients; the right
// status; nothing of the backend (address, port, upstream error) in the answer. The circuit
// breaker's open 503 gets its page too, with its Retry-After.
// A dial that times out (peer offline through the tunnel) is covered in test/e2e/error-pages.test.ts.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { renderCaddyConfig } from '../src/proxy/render.js';
import type { PeerTarget, ProxySettings } from '../src/proxy/render-context.js';
import { errorPageHtml } from '../src/proxy/fragments/error-pages.js';
import { blankRoute, type Route } from '../src/routes/model.js';
import { CADDY, stopCaddy } from '../../test/lib/caddy-env.js';
import { freePort } from '../../test/lib/ports.js';
import { waitFor } from '../../test/lib/wait.js';

const skip = fs.existsSync(CADDY) ? false : `no ${CADDY}: build it with bash scripts/build-caddy.sh`;
let caddy: ChildProcess | undefined;
let dir = '';
let port = 0;
let closedPort = 0;
let backend: http.Server | undefined;

before(async () => {
  if (skip) return;
  backend = http.createServer((_req, res) => res.end('backend ok'));
  await new Promise<void>((resolve) => backend!.listen(0, '127.0.0.1', () => resolve()));
  const backendPort = (backend.address() as { port: number }).port;
  port = await freePort();
  closedPort = await freePort(); // nothing listens: connection refused
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gh-error-pages-'));
  const settings: ProxySettings = {
    httpPort: port,
    httpsPort: await freePort(),
    adminListen: `127.0.0.1:${await freePort()}`,
    tls: 'internal',
    sidecarUpstream: '127.0.0.1:1',
    bind: '127.0.0.1',
    dataDir: dir,
    gatewayProxyPort: closedPort,
    lbCookieKey: 'test-lb-cookie-key',
  };
  const peers = new Map<number, PeerTarget>([
    [1, { address: '127.0.0.1/32', enabled: true }],
    [2, { address: '127.0.0.2/32', enabled: false }],
    [3, { address: '127.0.0.1/32', enabled: true }],
  ]);
  let id = 1;
  const route = (o: Partial<Route>): Route => ({ ...blankRoute(0), id: id++, peer_id: 1, target_port: String(backendPort), ...o });
  const routes = [
    route({ domain: 'ok.test' }),
    route({ domain: 'refused.test', target_port: String(closedPort) }),
    route({ domain: 'disabled.test', peer_id: 2 }),
    route({
      domain: 'gateway.test',
      target_kind: 'gateway',
      peer_id: null,
      target_port: null,
      target_peer_id: 3,
      target_lan_host: '192.168.1.10',
      target_lan_port: 80,
    }),
    route({
      domain: 'gateway-gone.test',
      target_kind: 'gateway',
      peer_id: null,
      target_port: null,
      target_peer_id: 77,
      target_lan_host: '192.168.1.10',
      target_lan_port: 80,
    }),
    route({
      domain: 'breaker.test',
      target_port: String(closedPort),
      circuit_breaker_enabled: true,
      circuit_breaker_threshold: 1,
      circuit_breaker_timeout: 30,
    }),
  ];
  fs.writeFileSync(path.join(dir, 'caddy-report.secret'), 'x'.repeat(32));
  fs.writeFileSync(path.join(dir, 'caddy.json'), JSON.stringify(renderCaddyConfig({ settings, routes, peers })));
  caddy = spawn(CADDY, ['run', '--config', path.join(dir, 'caddy.json')], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, HOME: dir, XDG_DATA_HOME: dir, XDG_CONFIG_HOME: dir },
  });
  let stderr = '';
  caddy.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  await waitFor(
    async () => {
      if (caddy!.exitCode !== null) throw new Error(`caddy exited: ${stderr}`);
      return (await get('ok.test')).status === 200;
    },
    15_000,
    { intervalMs: 100, what: 'caddy to serve ok.test' },
  );
});

after(async () => {
  await stopCaddy(caddy);
  backend?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

function get(host: string, headers: Record<string, string> = {}): Promise<{ status: number; type: string; body: string; retryAfter: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: '/some/path', headers: { host, ...headers }, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          type: String(res.headers['content-type'] ?? ''),
          body: Buffer.concat(chunks).toString('utf8'),
          retryAfter: String(res.headers['retry-after'] ?? ''),
        }),
      );
    });
    req.setTimeout(10_000, () => req.destroy(new Error(`timeout ${host}`)));
    req.on('error', reject);
    req.end();
  });
}

const noBackendDetail = (body: string) => {
  assert.doesNotMatch(body, new RegExp(`127\\.0\\.0\\.[12]|:${closedPort}|dial|refused|192\\.168`), 'no backend detail in the answer');
};

test('nothing accepts the connection: 502 page "service unavailable" in English by default, German for de, JSON for JSON clients', { skip }, async () => {
  const en = await get('refused.test');
  assert.equal(en.status, 502);
  assert.match(en.type, /^text\/html/);
  assert.equal(en.body, errorPageHtml('upstream_unreachable', 'en'));
  assert.match(en.body, /Service unavailable/);
  noBackendDetail(en.body);
  const de = await get('refused.test', { 'accept-language': 'de-DE,de;q=0.9,en;q=0.5' });
  assert.equal(de.status, 502);
  assert.equal(de.body, errorPageHtml('upstream_unreachable', 'de'));
  assert.equal(
    (await get('refused.test', { 'accept-language': 'en-US,de;q=0.8' })).body,
    errorPageHtml('upstream_unreachable', 'en'),
    'German only when it comes first',
  );
  const json = await get('refused.test', { accept: 'application/json' });
  assert.equal(json.status, 502);
  assert.equal(json.type, 'application/json');
  assert.equal(JSON.parse(json.body).ok, false);
  assert.equal(JSON.parse(json.body).error, 'upstream_unreachable');
  noBackendDetail(json.body);
  // A browser (text/html first) gets the page even if it also accepts JSON.
  assert.match((await get('refused.test', { accept: 'text/html,application/json;q=0.9' })).type, /^text\/html/);
});

test('a disabled peer: 502 page "device offline"; a gateway route: "gateway offline" (gone, or its companion not answering)', { skip }, async () => {
  const off = await get('disabled.test');
  assert.equal(off.status, 502);
  assert.equal(off.body, errorPageHtml('peer_offline', 'en'));
  assert.equal((await get('disabled.test', { 'accept-language': 'de' })).body, errorPageHtml('peer_offline', 'de'));
  assert.equal(JSON.parse((await get('disabled.test', { accept: 'application/problem+json' })).body).error, 'peer_offline');
  for (const host of ['gateway.test', 'gateway-gone.test']) {
    const gw = await get(host);
    assert.equal(gw.status, 502, host);
    assert.equal(gw.body, errorPageHtml('gateway_offline', 'en'), host);
    noBackendDetail(gw.body);
    assert.equal(JSON.parse((await get(host, { accept: 'application/json' })).body).error, 'gateway_offline', host);
  }
});

test(
  'a working route is untouched; a route behind a circuit breaker gets the page for its failure, then the "paused" 503 page with Retry-After while open',
  { skip },
  async () => {
    const ok = await get('ok.test');
    assert.equal(ok.status, 200);
    assert.equal(ok.body, 'backend ok');
    const cb = await get('breaker.test');
    assert.equal(cb.status, 502);
    assert.equal(cb.body, errorPageHtml('upstream_unreachable', 'en'));
    // threshold 1: that failure opened the breaker
    const open = await get('breaker.test');
    assert.equal(open.status, 503);
    assert.equal(open.body, errorPageHtml('circuit_open', 'en'));
    assert.match(open.body, /circuit breaker open/i);
    assert.ok(Number(open.retryAfter) >= 1 && Number(open.retryAfter) <= 30, `Retry-After ${open.retryAfter}`);
    assert.equal((await get('breaker.test', { 'accept-language': 'de-CH' })).body, errorPageHtml('circuit_open', 'de'));
    const json = await get('breaker.test', { accept: 'application/json' });
    assert.equal(json.status, 503);
    assert.equal(JSON.parse(json.body).error, 'circuit_open');
  },
);
