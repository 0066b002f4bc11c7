// Several backends in the admin app against a sidecar that runs the real custom Caddy (bin/caddy on
// loopback ports; two peers whose tunnel addresses are in 127.75.<n>.0/24, an HTTP backend on each):
// a route made through the form with a second backend, a sticky policy, a health check, request and
// response headers and compression is what the API then holds; a protected header name is refused
// with the server's message at its input (nothing saved, nothing typed lost); the detail's Backends
// card shows both backends up as Caddy's health checks see them, and one turns down live (the
// route_backend_down event, no reload) when its server stops. The edit form in German on a phone
// shows the stored rows and the German field message. Axe and screenshots. Skipped without bin/caddy.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { CADDY, managedCaddyEnv } from '../lib/caddy-env.js';
import { freePort } from '../lib/ports.js';
import { adminPage, axe, screenshot, serious, settled, uiServer } from '../lib/browser.js';

const skip = fs.existsSync(CADDY) ? false : `no ${CADDY}: build it with bash scripts/build-caddy.sh`;
const ui = uiServer(
  async () => {
    const ports = { http: await freePort(), https: await freePort(), admin: await freePort() };
    const octet = 10 + (process.pid % 200);
    return { ...managedCaddyEnv(ports), GATEHOUSE_WG_SUBNET: `127.75.${octet}.0/24`, GATEHOUSE_RATE_LIMIT_ADMIN: '100000', GATEHOUSE_RATE_LIMIT_LOGIN: '1000' };
  },
  { startFeatures: true },
  { api: 'token', skip: !!skip },
);
const call = ui.api;
const peers: { id: number; addr: string; name: string }[] = [];
const servers: http.Server[] = [];
const ports: number[] = [];

/** An HTTP backend on a peer's address; `/health` answers 200. Started again on the same port. */
async function serve(i: number): Promise<void> {
  const srv = http.createServer((_req, res) => res.end(peers[i].name));
  await new Promise<void>((r) => srv.listen(ports[i] ?? 0, peers[i].addr, () => r()));
  ports[i] = (srv.address() as AddressInfo).port;
  servers[i] = srv;
}
async function stop(i: number): Promise<void> {
  const srv = servers[i];
  srv.closeAllConnections();
  await new Promise<void>((r) => srv.close(() => r()));
}

ui.setup(async () => {
  if (skip) return;
  for (const name of ['web-a', 'web-b']) {
    const p = await call('/peers', 'POST', { name });
    assert.equal(p.status, 201, JSON.stringify(p.data));
    peers.push({ id: p.data.peer.id, addr: p.data.peer.address.split('/')[0], name });
  }
  await serve(0);
  await serve(1);
});
after(async () => {
  for (const s of servers) if (s.listening) s.close();
});

async function open(page: Page, path: string, ready: string): Promise<void> {
  await page.goto(`${ui.s.url}${path}`);
  await page.locator(ready).first().waitFor();
  await settled(page);
}
const fieldError = (page: Page, id: string) => page.locator(`#${id}-err`);
const stateOf = (page: Page, row: number) => page.locator('[data-testid=backend-state]').nth(row).getAttribute('data-state');
async function waitState(page: Page, row: number, state: string, ms = 30_000): Promise<void> {
  await page.locator(`[data-testid=backend-state]:nth-child(${row + 1})[data-state=${state}]`).waitFor({ timeout: ms });
}

let routeId: number;

test('create a route with two backends, sticky policy, health check, headers and compression through the form (en, desktop)', { skip }, async () => {
  const w = await adminPage(ui.browser, ui.s.url);
  const { page, problems } = w;
  w.allowHttpError('/api/v1/routes', 400);
  await open(page, '/routes/new', '#f-domain');
  await page.fill('#f-domain', 'shop.example.com');
  await page.uncheck('#f-https_enabled');
  await page.selectOption('#f-peer_id', String(peers[0].id));
  await page.fill('#f-target_port', String(ports[0]));
  // no policy until there is a second backend
  assert.equal(await page.locator('#f-lb_policy').count(), 0);
  await page.getByRole('button', { name: 'Add a backend' }).click();
  const row = page.locator('[data-testid=backend-row]');
  assert.equal(await row.count(), 1);
  await page.selectOption('#f-extra_backends-0-peer_id', String(peers[1].id));
  await page.fill('#f-extra_backends-0-target_port', String(ports[1]));
  await page.selectOption('#f-lb_policy', 'cookie');
  await page.fill('#f-lb_cookie_name', 'shop_lb');
  await page.check('#f-health_check_enabled');
  await page.fill('#f-health_check-path', '/health');
  await page.fill('#f-health_check-interval_s', '1');
  await page.fill('#f-health_check-timeout_s', '1');
  // a request header the proxy manages: refused, the message at its name
  await page.getByRole('button', { name: 'Add a header: Request headers (to the backend)' }).click();
  await page.fill('#f-header_rows-request_headers-0-name', 'X-Forwarded-For');
  await page.fill('#f-header_rows-request_headers-0-value', '{client_ip}');
  await page.getByRole('button', { name: 'Add a header: Response headers (to the client)' }).click();
  await page.fill('#f-header_rows-response_headers-0-name', 'Server');
  await page.selectOption('#f-header_rows-response_headers-0-action', 'delete');
  await page.check('input[name=compression][value=gzip]');
  assert.equal(await page.locator('#f-header_rows-response_headers-0-value').count(), 0, 'a delete has no value');
  assert.match(await page.locator('.headers-section > .hint').innerText(), /\{client_ip\}, \{host\}, \{route_id\}, \{route_domain\}, \{user\}/);

  const [refused] = await Promise.all([
    page.waitForResponse((r) => r.url().endsWith('/api/v1/routes') && r.request().method() === 'POST'),
    page.click('form.route-form button[type=submit]'),
  ]);
  assert.equal(refused.status(), 400);
  const err = fieldError(page, 'f-header_rows-request_headers-0-name');
  await err.waitFor();
  assert.match(await err.innerText(), /X-Forwarded-For/);
  assert.equal(await page.getAttribute('#f-header_rows-request_headers-0-name', 'aria-invalid'), 'true');
  assert.equal((await call('/routes?q=shop.example.com')).data.routes.length, 0, 'nothing saved');
  assert.equal(await page.inputValue('#f-extra_backends-0-target_port'), String(ports[1]), 'nothing typed is lost');
  assert.deepEqual(serious(await axe(page)), []);
  await screenshot(page, 'en-1280-backends-form-refused-header');

  await page.fill('#f-header_rows-request_headers-0-name', 'X-Shop-Client');
  assert.equal(await err.count(), 0, 'the message goes with the edit');
  await page.click('form.route-form button[type=submit]');
  await page.waitForURL(/\/routes\/\d+$/, { timeout: 15_000 });
  routeId = Number(/\/routes\/(\d+)$/.exec(page.url())![1]);

  const r = (await call(`/routes/${routeId}`)).data.route;
  assert.deepEqual(r.backends, [
    { target_kind: 'peer', peer_id: peers[0].id, target_host: null, target_port: ports[0], weight: 1 },
    { target_kind: 'peer', peer_id: peers[1].id, target_host: null, target_port: ports[1], weight: 1 },
  ]);
  assert.equal(r.peer_id, peers[0].id, 'the first backend is the route target');
  assert.equal(r.lb_policy, 'cookie');
  assert.equal(r.lb_cookie_name, 'shop_lb');
  assert.deepEqual(r.health_check, { path: '/health', interval_s: 1, timeout_s: 1, expect_status: 200 });
  assert.deepEqual(r.request_headers, { set: { 'X-Shop-Client': '{client_ip}' }, delete: [] });
  assert.deepEqual(r.response_headers, { set: {}, delete: ['Server'] });
  assert.deepEqual(r.compression, ['gzip']);
  assert.equal(r.compress_enabled, true);

  // the detail: both backends, up once Caddy's checks pass; one turns down live when its server stops
  const card = page.locator('section.backends-card');
  await page.locator('[data-testid=backend-state]').nth(1).waitFor();
  assert.equal(await page.locator('[data-testid=backend-state]').count(), 2);
  const text = await card.innerText();
  for (const p of peers) assert.ok(text.includes(p.name), `${p.name} listed: ${text}`);
  await waitState(page, 0, 'up');
  await waitState(page, 1, 'up');
  assert.match(await page.locator('[data-testid=backend-state]').nth(1).innerText(), /\bup\b/);
  const url = page.url();
  await stop(1);
  await waitState(page, 1, 'down');
  assert.equal(page.url(), url);
  assert.equal(await stateOf(page, 0), 'up');
  assert.match(await page.locator('[data-testid=backend-state]').nth(1).innerText(), /\bdown\b/);
  assert.deepEqual(serious(await axe(page)), []);
  await screenshot(page, 'en-1280-backends-detail');
  assert.deepEqual(problems, []);
  await w.context.close();
});

test('edit in German on a phone: the stored rows, a refused response header with its German message, the card in German', { skip }, async () => {
  assert.ok(routeId, 'the first test made the route');
  const session = await ui.login();
  const setLang = (language: string) =>
    ui.s.req('/api/v1/settings/language', { method: 'POST', json: { language }, headers: { cookie: session.cookie, 'x-csrf-token': session.csrf } });
  assert.equal((await setLang('de')).status, 200);
  try {
    const w = await adminPage(ui.browser, ui.s.url, { lang: 'de', width: 390, colorScheme: 'dark' });
    const { page, problems } = w;
    w.allowHttpError(`/api/v1/routes/${routeId}`, 400);
    await open(page, `/routes/${routeId}/edit`, '#f-extra_backends-0-peer_id');
    assert.equal(await page.inputValue('#f-extra_backends-0-peer_id'), String(peers[1].id));
    assert.equal(await page.inputValue('#f-extra_backends-0-target_port'), String(ports[1]));
    assert.equal(await page.inputValue('#f-lb_policy'), 'cookie');
    assert.equal(await page.inputValue('#f-lb_cookie_name'), 'shop_lb');
    assert.equal(await page.inputValue('#f-health_check-path'), '/health');
    assert.equal(await page.inputValue('#f-header_rows-request_headers-0-name'), 'X-Shop-Client');
    assert.equal(await page.inputValue('#f-header_rows-response_headers-0-action'), 'delete');
    assert.equal(await page.isChecked('input[name=compression][value=gzip]'), true);
    assert.equal(await page.isChecked('input[name=compression][value=zstd]'), false);
    assert.ok(await page.getByRole('group', { name: 'Weitere Backends' }).isVisible());

    await page.getByRole('button', { name: 'Header hinzufügen: Antwort-Header (zum Client)' }).click();
    await page.fill('#f-header_rows-response_headers-1-name', 'Content-Length');
    await page.fill('#f-header_rows-response_headers-1-value', '0');
    await page.click('form.route-form button[type=submit]');
    const err = fieldError(page, 'f-header_rows-response_headers-1-name');
    await err.waitFor();
    const msg = await err.innerText();
    assert.match(msg, /Content-Length/);
    assert.doesNotMatch(msg, /\b(cannot|protected|header)\b/, `German words: ${msg}`);
    assert.deepEqual((await call(`/routes/${routeId}`)).data.route.response_headers, { set: {}, delete: ['Server'] }, 'nothing saved');
    assert.deepEqual(serious(await axe(page)), []);
    await screenshot(page, 'de-390-backends-form-refused-header');

    // removed again, the form saves as it was; the card in German (web-b is still down)
    await page.getByRole('button', { name: 'Header 2 entfernen: Antwort-Header (zum Client)' }).click();
    await page.click('form.route-form button[type=submit]');
    await page.waitForURL(/\/routes\/\d+$/, { timeout: 15_000 });
    const card = page.locator('section.backends-card');
    await card.waitFor();
    await waitState(page, 1, 'down');
    assert.match(await page.locator('[data-testid=backend-state]').nth(1).innerText(), /ausgefallen/);
    assert.match(await card.innerText(), /Sitzungsbindung \(Cookie\)/);
    assert.deepEqual(serious(await axe(page)), []);
    await screenshot(page, 'de-390-backends-detail');
    assert.deepEqual(problems, []);
    await w.context.close();
  } finally {
    assert.equal((await setLang('en')).status, 200);
  }
});
