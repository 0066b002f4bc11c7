// The routes screens in a real browser against a real sidecar (without Caddy): create an HTTP route
// for a peer and an L4 route through the form (only the fields that apply are shown), a bad input
// shows the server's field error next to its input and keeps what was typed, protection and
// resilience settings are edited and checked in what the API stored, toggle, batch and delete from
// the list, the detail page with DNS check (a DNS server on loopback), uptime check now (a backend
// on the peer's loopback address), trace and circuit breaker (a report makes it open live, the reset
// closes it); axe and screenshots of the form and the detail in en/de at 1280 and 360 px.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import dns from 'node:dns';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { localDns } from '../../sidecar/test/lib/local-dns.js';
import { breakerSecretPath } from '../../sidecar/src/proxy/fragments/resilience.js';
import type { RoutesService } from '../../sidecar/src/routes/service.js';
import { adminPage, axe, screenshot, serious, settled, uiServer } from '../lib/browser.js';
import type { Route } from '../../sidecar/test/lib/protocol.js';

let peerId: number;
let peerIp: string;
let backend: http.Server;
let dnsServer: { port: number; close(): void };
const octet = 100 + (process.pid % 100);
const ui = uiServer(
  { GATEHOUSE_WG_SUBNET: `127.79.${octet}.0/24`, GATEHOUSE_PUBLIC_IP: '203.0.113.7', GATEHOUSE_RATE_LIMIT_ADMIN: '100000', GATEHOUSE_RATE_LIMIT_LOGIN: '1000' },
  {},
  { api: 'token' },
);
const call = ui.api;

ui.setup(async () => {
  const p = await call('/peers', 'POST', { name: 'web-peer' });
  assert.equal(p.status, 201, JSON.stringify(p.data));
  peerId = p.data.peer.id;
  peerIp = String(p.data.peer.address).split('/')[0];
  // The backend the uptime check reaches: on the peer's (loopback) tunnel address.
  backend = http.createServer((_req, res) => res.end('ok'));
  await new Promise<void>((r) => backend.listen(0, peerIp, () => r()));
  dnsServer = await localDns({ 'app.example.com': ['203.0.113.7'] });
  const resolver = new dns.promises.Resolver({ timeout: 1000, tries: 1 });
  resolver.setServers([`127.0.0.1:${dnsServer.port}`]);
  (ui.s.deps.routes as RoutesService).resolver = resolver;
});
after(async () => {
  backend?.close();
  dnsServer?.close();
});

/** Opens a path and waits for the screen's own element (settled alone may run before the screen mounts). */
async function open(page: Page, path: string, ready: string): Promise<void> {
  await page.goto(`${ui.s.url}${path}`);
  await page.locator(ready).first().waitFor();
  await settled(page);
}
const T0 = Date.now();
const mark = (what: string) => {
  if (process.env.TEST_TIMING) console.log(`${((Date.now() - T0) / 1000).toFixed(1)}s ${what}`);
};

const backendPort = () => (backend.address() as AddressInfo).port;
const visible = (page: Page, sel: string) => page.locator(sel).isVisible();

async function routeByDomain(domain: string): Promise<Route> {
  const r = await call(`/routes?q=${encodeURIComponent(domain)}`);
  return r.data.routes.find((x) => x.domain === domain)!;
}

test('routes through the UI: create HTTP and L4, field error keeps input, edit protection and resilience, toggle, batch, delete', async () => {
  const { page, problems, allowHttpError } = await adminPage(ui.browser, ui.s.url);
  await open(page, '/routes', '.empty');
  // Empty list: says what to do next.
  await page.getByText('No routes yet').waitFor();

  // --- a bad domain: the server's message next to the input, everything typed kept ---
  allowHttpError('/api/v1/routes', 400);
  allowHttpError('/api/v1/routes', 422); // a refusal the document cannot state (a combination, the stored state)
  mark('start');
  await page.click('a.btn.primary:has-text("New route")');
  await page.waitForURL(/\/routes\/new$/);
  await page.locator('#f-domain').waitFor();
  await page.fill('#f-domain', 'not a domain!');
  await page.fill('#f-description', 'kept text');
  await page.selectOption('#f-peer_id', String(peerId));
  await page.fill('#f-target_port', String(backendPort()));
  await page.click('form.route-form button[type=submit]');
  await page.locator('#f-domain-err').waitFor();
  assert.match((await page.locator('#f-domain-err').textContent()) ?? '', /bare domain name/);
  assert.equal(await page.getAttribute('#f-domain', 'aria-invalid'), 'true');
  // The error sits inside the domain's field, next to its input.
  assert.equal(await page.locator('.field:has(#f-domain) .field-error').count(), 1);
  assert.equal(await page.inputValue('#f-domain'), 'not a domain!');
  assert.equal(await page.inputValue('#f-description'), 'kept text');
  assert.equal(await page.inputValue('#f-peer_id'), String(peerId));
  assert.equal((await call('/routes')).data.total_all, 0, 'nothing stored on a 400');

  // --- fix it: the HTTP route for the peer is created ---
  mark('bad domain shown');
  await page.fill('#f-domain', 'app.example.com');
  await page.click('form.route-form button[type=submit]');
  await page.waitForURL(/\/routes\/\d+$/);
  const httpRoute = await routeByDomain('app.example.com');
  assert.ok(httpRoute, 'stored');
  assert.equal(httpRoute.route_type, 'http');
  assert.equal(httpRoute.target_kind, 'peer');
  assert.equal(httpRoute.peer_id, peerId);
  assert.equal(Number(httpRoute.target_port), backendPort());
  assert.equal(httpRoute.description, 'kept text');
  assert.equal(httpRoute.https_enabled, true);
  assert.equal(httpRoute.enabled, true);

  // --- an L4 route: only the applicable fields appear when the type changes ---
  mark('http created');
  await open(page, '/routes/new', '#f-domain');
  assert.ok(await visible(page, '#f-https_enabled'));
  assert.ok(await visible(page, '#f-rate_limit_enabled'));
  assert.ok(!(await visible(page, '#f-l4_protocol')));
  await page.selectOption('#f-route_type', 'l4');
  assert.ok(await visible(page, '#f-l4_protocol'));
  assert.ok(await visible(page, '#f-l4_listen_port'));
  assert.ok(await visible(page, '#f-l4_tls_mode'));
  for (const httpOnly of [
    '#f-https_enabled',
    '#f-rate_limit_enabled',
    '#f-retry_enabled',
    '#f-circuit_breaker_enabled',
    '#f-mirror_enabled',
    '#f-bot_blocker_enabled',
    '#f-basic_auth_user',
    '#f-debug_enabled',
    'input[name=compression]',
  ]) {
    assert.equal(await page.locator(httpOnly).count(), 0, `${httpOnly} is hidden for L4`);
  }
  assert.ok(await visible(page, '#f-ip_filter_enabled'), 'the IP filter applies to L4 too');
  await page.selectOption('#f-l4_protocol', 'udp');
  assert.equal(await page.locator('#f-l4_tls_mode').count(), 0, 'UDP has no TLS mode');
  assert.equal(await page.locator('#f-monitoring_enabled').count(), 0, 'UDP cannot be monitored');
  await page.selectOption('#f-l4_protocol', 'tcp');
  // Target kinds: gateway fields replace the peer's.
  await page.selectOption('#f-target_kind', 'gateway');
  assert.ok(await visible(page, '#f-target_lan_host'));
  assert.equal(await page.locator('#f-peer_id').count(), 0);
  await page.selectOption('#f-target_kind', 'peer');
  assert.equal(await page.locator('#f-target_lan_host').count(), 0);
  await page.fill('#f-domain', 'db.example.com');
  await page.fill('#f-l4_listen_port', '15432');
  await page.selectOption('#f-l4_tls_mode', 'passthrough');
  await page.selectOption('#f-peer_id', String(peerId));
  await page.fill('#f-target_port', '5432');
  await page.check('#f-monitoring_enabled');
  await page.click('form.route-form button[type=submit]');
  await page.waitForURL(/\/routes\/\d+$/);
  const l4 = await routeByDomain('db.example.com');
  assert.equal(l4.route_type, 'l4');
  assert.equal(l4.l4_protocol, 'tcp');
  assert.equal(l4.l4_listen_port, 15432);
  assert.equal(l4.l4_tls_mode, 'passthrough');
  assert.equal(l4.monitoring_enabled, true);
  assert.equal(l4.https_enabled, false);

  // --- edit protection and resilience of the HTTP route ---
  mark('l4 created');
  await open(page, `/routes/${httpRoute.id}/edit`, '#f-domain');
  assert.equal(await page.inputValue('#f-domain'), 'app.example.com');
  await page.check('#f-ip_filter_enabled');
  await page.selectOption('#f-ip_filter_mode', 'whitelist');
  await page.fill('#f-ip_filter_rules', '10.0.0.0/8\nnot-an-address');
  await page.check('#f-rate_limit_enabled');
  await page.fill('#f-rate_limit_requests', '50');
  await page.fill('#f-rate_limit_window', '30s');
  await page.check('#f-retry_enabled');
  await page.fill('#f-retry_count', '2');
  await page.fill('#f-retry_status_codes', '502,504');
  await page.check('#f-circuit_breaker_enabled');
  await page.fill('#f-circuit_breaker_threshold', '3');
  await page.fill('#f-circuit_breaker_timeout', '600');
  await page.check('#f-mirror_enabled');
  await page.fill('#f-mirror_targets', `http://127.0.0.1:9\npeer:${peerId}:8081`);
  await page.check('#f-bot_blocker_enabled');
  await page.selectOption('#f-bot_blocker_mode', 'log');
  await page.check('input[name="bot_blocker_config.categories"][value="scanner"]');
  await page.check('#f-bot_blocker_config-block_exploit_paths');
  await page.fill('#f-bot_blocker_config-custom_user_agents', 'BadBot\n^evil');
  await page.check('input[name=compression][value=zstd]');
  await page.check('#f-monitoring_enabled');
  await page.check('#f-debug_enabled');
  await page.check('#f-acl_enabled');
  await page.selectOption('#f-acl_peer_ids', [String(peerId)]);
  // A bad IP rule: the server names the line; the form keeps everything.
  await page.click('form.route-form button[type=submit]');
  await page.locator('#f-ip_filter_rules-entries').waitFor();
  assert.match((await page.locator('#f-ip_filter_rules-entries').textContent()) ?? '', /Line 2/);
  assert.equal(await page.inputValue('#f-rate_limit_window'), '30s');
  assert.equal((await call(`/routes/${httpRoute.id}`)).data.route.rate_limit_enabled, false, 'nothing stored on a 400');
  // Basic auth cannot be combined with the IP filter: the error sits next to that switch.
  await page.fill('#f-ip_filter_rules', '10.0.0.0/8\n192.168.1.1');
  await page.fill('#f-basic_auth_user', 'alice');
  await page.fill('#f-basic_auth_password', 'secret-pass-1');
  await page.click('form.route-form button[type=submit]');
  await page.locator('#f-ip_filter_enabled-err').waitFor();
  assert.equal(await page.inputValue('#f-basic_auth_user'), 'alice');
  await page.fill('#f-basic_auth_user', '');
  await page.click('form.route-form button[type=submit]');
  await page.waitForURL(new RegExp(`/routes/${httpRoute.id}$`));
  const stored = (await call(`/routes/${httpRoute.id}`)).data.route;
  assert.equal(stored.ip_filter_enabled, true);
  assert.equal(stored.ip_filter_mode, 'whitelist');
  assert.deepEqual(stored.ip_filter_rules, ['10.0.0.0/8', '192.168.1.1']);
  assert.equal(stored.rate_limit_enabled, true);
  assert.equal(stored.rate_limit_requests, 50);
  assert.equal(stored.rate_limit_window, '30s');
  assert.equal(stored.retry_enabled, true);
  assert.equal(stored.retry_count, 2);
  assert.equal(stored.retry_status_codes, '502,504');
  assert.equal(stored.circuit_breaker_enabled, true);
  assert.equal(stored.circuit_breaker_threshold, 3);
  assert.equal(stored.circuit_breaker_timeout, 600);
  assert.equal(stored.mirror_enabled, true);
  assert.deepEqual(stored.mirror_targets, [{ url: 'http://127.0.0.1:9' }, { peer_id: peerId, port: 8081 }]);
  assert.equal(stored.bot_blocker_enabled, true);
  assert.equal(stored.bot_blocker_mode, 'log');
  assert.deepEqual(stored.bot_blocker_config, { categories: ['scanner'], custom_user_agents: ['BadBot', '^evil'], block_exploit_paths: true });
  assert.equal(stored.compress_enabled, true);
  assert.deepEqual(stored.compression, ['zstd'], 'the ticked encoding');
  assert.equal(stored.monitoring_enabled, true);
  assert.equal(stored.debug_enabled, true);
  assert.equal(stored.acl_enabled, true);
  assert.deepEqual(stored.acl_peer_ids, [peerId]);
  assert.equal(stored.basic_auth_user, null);

  // Basic auth on its own (with HTTPS) is stored; the password is never shown back.
  await open(page, `/routes/${httpRoute.id}/edit`, '#f-domain');
  await page.uncheck('#f-ip_filter_enabled');
  await page.fill('#f-basic_auth_user', 'alice');
  await page.fill('#f-basic_auth_password', 'secret-pass-1');
  await page.click('form.route-form button[type=submit]');
  await page.waitForURL(new RegExp(`/routes/${httpRoute.id}$`));
  const withAuth = (await call(`/routes/${httpRoute.id}`)).data.route;
  assert.equal(withAuth.basic_auth_user, 'alice');
  assert.equal(withAuth.basic_auth_password_set, true);
  assert.equal(withAuth.ip_filter_enabled, false);
  // Editing something else keeps the password (the empty password field is not sent).
  await open(page, `/routes/${httpRoute.id}/edit`, '#f-domain');
  assert.equal(await page.inputValue('#f-basic_auth_password'), '');
  await page.fill('#f-description', 'changed');
  await page.click('form.route-form button[type=submit]');
  await page.waitForURL(new RegExp(`/routes/${httpRoute.id}$`));
  const kept = (await call(`/routes/${httpRoute.id}`)).data.route;
  assert.equal(kept.description, 'changed');
  assert.equal(kept.basic_auth_password_set, true);

  // --- list: search, filter, toggle, batch, delete ---
  mark('edited');
  await open(page, '/routes', 'table tbody tr >> nth=1');
  assert.equal(await page.locator('table tbody tr').count(), 2);
  await page.selectOption('select[aria-label="Filter by type"]', 'l4');
  await page.waitForURL(/type=l4/);
  await page.waitForFunction(() => document.querySelectorAll('table tbody tr').length === 1);
  assert.match((await page.locator('table tbody').textContent()) ?? '', /db\.example\.com/);
  await page.selectOption('select[aria-label="Filter by type"]', '');
  await page.fill('input[type=search]', 'app.exa');
  await page.waitForURL(/q=app\.exa/);
  await page.waitForFunction(() => document.querySelectorAll('table tbody tr').length === 1);
  await page.fill('input[type=search]', '');
  await page.waitForFunction(() => document.querySelectorAll('table tbody tr').length === 2);
  // Toggle from the list.
  await page.click('button[aria-label="Disable db.example.com"]');
  await page.locator('button[aria-label="Enable db.example.com"]').waitFor();
  assert.equal((await call(`/routes/${l4.id}`)).data.route.enabled, false);
  // Batch: select both, disable, then enable.
  await page.check('th.sel input[type=checkbox]');
  await page.click('.batch-bar button:has-text("Disable")');
  await page.locator('button[aria-label="Enable app.example.com"]').waitFor();
  assert.deepEqual((await call('/routes?enabled=true')).data.total, 0);
  await page.check('th.sel input[type=checkbox]');
  await page.click('.batch-bar button:has-text("Enable")');
  await page.locator('button[aria-label="Disable db.example.com"]').waitFor();
  assert.deepEqual((await call('/routes?enabled=false')).data.total, 0);
  // Delete asks once.
  await page.click('button[aria-label="Delete db.example.com"]');
  await page.click('dialog .btn.danger');
  await page.waitForFunction(() => document.querySelectorAll('table tbody tr').length === 1);
  assert.equal((await call(`/routes/${l4.id}`)).status, 404);
  // Batch delete of a fresh route.
  const extra = await call('/routes', 'POST', { domain: 'extra.example.com', peer_id: peerId, target_port: 81 });
  assert.equal(extra.status, 201);
  await page.locator('text=extra.example.com').waitFor(); // arrives by the live event
  await page.check('input[aria-label="Select extra.example.com"]');
  await page.click('.batch-bar button:has-text("Delete")');
  await page.click('dialog .btn.danger');
  await page.waitForFunction(() => !document.body.textContent!.includes('extra.example.com'));
  assert.equal((await call(`/routes/${extra.data.route.id}`)).status, 404);
  // The refused saves above are allowed 400s (their console lines too, test/lib/browser.ts); nothing else.
  assert.deepEqual(problems, []);
  await page.context().close();
});

test('route detail: DNS check, uptime check now and history, trace, breaker opened live and reset, route login link', async () => {
  const { page, problems } = await adminPage(ui.browser, ui.s.url);
  const r = await routeByDomain('app.example.com');
  await open(page, `/routes/${r.id}`, '.breaker-state');
  assert.equal(await page.locator('#page-title').textContent(), 'app.example.com');
  assert.equal(await page.getAttribute(`a[href="/routes/${r.id}/auth"]`, 'href'), `/routes/${r.id}/auth`);
  // DNS: the local DNS server answers with this server's public IP.
  await page.click('button:has-text("Check DNS")');
  await page.locator('.dns-result.ok').waitFor();
  assert.match((await page.locator('.dns-result').textContent()) ?? '', /203\.0\.113\.7/);
  // Uptime: check now reaches the backend on the peer's address; the history shows it.
  await page.click('button:has-text("Check now")');
  await page.locator('.uptime-bar li.up').first().waitFor();
  const checks = (await call(`/routes/${r.id}/checks`)).data.checks;
  assert.equal(checks.length, 1);
  assert.equal(checks[0].up, true);
  assert.match((await page.locator('.route-uptime').textContent()) ?? '', /1 of the last 1 checks up/);
  // Trace: no request has reached the route (no Caddy in this test): the empty state.
  await page.locator('.route-trace').getByText('No request has reached this route yet.').waitFor();
  // Breaker: Caddy's module reports it open → the page shows it without a reload; reset closes it.
  await page.locator('.breaker-state:has-text("breaker closed")').waitFor();
  const secret = fs.readFileSync(breakerSecretPath(ui.s.dataDir), 'utf8').trim();
  const now = Date.now();
  const rep = await ui.s.req('/internal/circuit-breaker', {
    method: 'POST',
    headers: { 'x-gatehouse-secret': secret },
    json: { route_id: String(r.id), state: 'open', failure_count: 3, opened_at: now, at: now },
  });
  assert.equal(rep.status, 200, JSON.stringify(rep.data));
  await page.locator('.breaker-state:has-text("breaker open")').waitFor();
  await page.locator('.breaker-state:has-text("3 failures")').waitFor();
  await page.click('button:has-text("Reset breaker")');
  await page.locator('.breaker-state:has-text("breaker closed")').waitFor();
  const after = (await call(`/routes/${r.id}`)).data.route;
  assert.equal(after.cb_opened_at, null);
  assert.equal(after.cb_failure_count, 0);
  // Toggle from the detail.
  await page.click('.page-actions button:has-text("Disable")');
  await page.locator('.page-actions button:has-text("Enable")').waitFor();
  assert.equal((await call(`/routes/${r.id}`)).data.route.enabled, false);
  await page.click('.page-actions button:has-text("Enable")');
  await page.locator('.page-actions button:has-text("Disable")').waitFor();
  assert.deepEqual(problems, []);
  await page.context().close();
});

test('form and detail: axe clean and screenshots in en/de at 1280 and 360 px', async () => {
  // The route of the first test (created here when this test runs alone).
  const r =
    (await routeByDomain('app.example.com')) ??
    (
      await call('/routes', 'POST', {
        domain: 'app.example.com',
        peer_id: peerId,
        target_port: backendPort(),
        circuit_breaker_enabled: true,
        rate_limit_enabled: true,
      })
    ).data.route;
  const { cookie, csrf } = await ui.login();
  try {
    for (const lang of ['en', 'de'] as const) {
      await ui.s.req('/api/v1/settings/language', { method: 'POST', json: { language: lang }, headers: { cookie, 'x-csrf-token': csrf } });
      for (const width of [1280, 360]) {
        const { page, problems } = await adminPage(ui.browser, ui.s.url, { lang, width });
        for (const [path, state] of [
          ['/routes', 'list'],
          ['/routes/new', 'new'],
          [`/routes/${r.id}/edit`, 'edit'],
          [`/routes/${r.id}`, 'detail'],
        ] as const) {
          await open(page, path, state === 'list' ? 'table' : state === 'detail' ? '.breaker-state' : '#f-domain');
          if (state === 'new') await page.selectOption('#f-route_type', 'l4');
          const v = serious(await axe(page));
          assert.deepEqual(v, [], `${lang} ${width} ${path}: ${JSON.stringify(v, null, 1)}`);
          await screenshot(page, `${lang}-${width}-routes-${state}`);
        }
        // The width of the form at 360 px: nothing wider than the screen.
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
        assert.ok(overflow <= 1, `${lang} ${width}: page scrolls sideways by ${overflow}px`);
        assert.deepEqual(problems, [], `${lang} ${width}`);
        await page.context().close();
      }
    }
  } finally {
    await ui.s.req('/api/v1/settings/language', { method: 'POST', json: { language: 'en' }, headers: { cookie, 'x-csrf-token': csrf } });
  }
});

test('an empty route form shows every missing field at once; a taken domain shows at its input (en/de, 1280/390)', async () => {
  const taken = await call('/routes', 'POST', { domain: 'taken.example.com', peer_id: peerId, target_port: backendPort() });
  assert.equal(taken.status, 201, JSON.stringify(taken.data));
  for (const [lang, width] of [
    ['en', 1280],
    ['de', 390],
  ] as const) {
    await call('/settings/language', 'POST', { language: lang });
    const w = await adminPage(ui.browser, ui.s.url, { lang, width });
    const { page } = w;
    w.allowHttpError('/api/v1/routes', 400);
    w.allowHttpError('/api/v1/routes', 409);
    await open(page, '/routes/new', '#f-domain');
    const before = (await call('/routes')).data.total_all;
    // nothing filled in: one submit names the domain, the peer and the port together
    await page.click('form.route-form button[type=submit]');
    for (const field of ['domain', 'peer_id', 'target_port']) await page.locator(`#f-${field}-err`).waitFor();
    assert.equal(await page.getAttribute('#f-peer_id', 'aria-invalid'), 'true');
    assert.equal(await page.getAttribute('#f-target_port', 'aria-invalid'), 'true');
    assert.match((await page.textContent('#f-peer_id-err'))!, lang === 'en' ? /required for peer targets/ : /Peer/);
    assert.equal((await call('/routes')).data.total_all, before, 'nothing stored');
    await screenshot(page, `${lang}-${width}-routes-form-all-errors`);
    // a domain another route has: the conflict sits at the domain's input
    await page.fill('#f-domain', 'taken.example.com');
    await page.selectOption('#f-peer_id', String(peerId));
    await page.fill('#f-target_port', String(backendPort()));
    await page.click('form.route-form button[type=submit]');
    await page.waitForFunction(() => /taken\.example\.com/.test(document.querySelector('#f-domain-err')?.textContent ?? ''), undefined, { timeout: 10_000 });
    assert.equal(await page.getAttribute('#f-domain', 'aria-invalid'), 'true');
    await screenshot(page, `${lang}-${width}-routes-form-conflict`);
    await w.context.close();
  }
  await call('/settings/language', 'POST', { language: 'en' });
});

test('exposure: an internal route with each answer for outsiders through the form, its field error, the badge (en/de, light/dark, 1280/390)', async () => {
  const w = await adminPage(ui.browser, ui.s.url);
  const { page } = w;
  w.allowHttpError('/api/v1/routes', 422);
  await open(page, '/routes/new', '#f-domain');
  await page.fill('#f-domain', 'intranet.example.com');
  await page.selectOption('#f-peer_id', String(peerId));
  await page.fill('#f-target_port', String(backendPort()));
  assert.ok(!(await visible(page, '#f-exposure_answer')), 'no answer to choose for a public route');
  await page.selectOption('#f-exposure', 'internal');
  await page.selectOption('#f-exposure_answer', 'redirect');
  // a redirect to the route's own domain would send outsiders round in a loop: the server's reason at the input
  await page.fill('#f-exposure_redirect_url', 'https://intranet.example.com/away');
  await page.click('form.route-form button[type=submit]');
  await page.locator('#f-exposure_redirect_url-err').waitFor();
  assert.match((await page.textContent('#f-exposure_redirect_url-err'))!, /itself/);
  assert.equal(await page.inputValue('#f-exposure_redirect_url'), 'https://intranet.example.com/away', 'what was typed is kept');
  await page.fill('#f-exposure_redirect_url', 'https://www.example.com/vpn');
  await page.click('form.route-form button[type=submit]');
  await page.waitForURL(/\/routes\/\d+$/);
  let r = await routeByDomain('intranet.example.com');
  assert.equal(r.exposure, 'internal');
  assert.equal(r.exposure_answer, 'redirect');
  assert.equal(r.exposure_redirect_url, 'https://www.example.com/vpn');
  // the detail shows the badge
  await page.locator('.exposure-badge').first().waitFor();
  // edit: a page of its own; the redirect URL stays stored
  await open(page, `/routes/${r.id}/edit`, '#f-exposure');
  assert.equal(await page.inputValue('#f-exposure'), 'internal');
  await page.selectOption('#f-exposure_answer', 'page');
  await page.fill('#f-exposure_page', '<h1>Only through the VPN</h1>');
  await page.click('form.route-form button[type=submit]');
  await page.waitForURL(/\/routes\/\d+$/);
  r = await routeByDomain('intranet.example.com');
  assert.equal(r.exposure_answer, 'page');
  assert.equal(r.exposure_page, '<h1>Only through the VPN</h1>');
  assert.equal(r.exposure_redirect_url, 'https://www.example.com/vpn');
  assert.deepEqual(w.problems, []);
  await w.context.close();

  const pub = await call('/routes', 'POST', { domain: 'everyone.example.com', peer_id: peerId, target_port: backendPort() });
  assert.equal(pub.status, 201, JSON.stringify(pub.data));
  const { cookie, csrf } = await ui.login();
  const setLanguage = (language: string) =>
    ui.s.req('/api/v1/settings/language', { method: 'POST', json: { language }, headers: { cookie, 'x-csrf-token': csrf } });
  try {
    for (const lang of ['en', 'de'] as const) {
      assert.equal((await setLanguage(lang)).status, 200);
      // one signed-in page per language; the theme and the width change on it
      const { page, problems, context } = await adminPage(ui.browser, ui.s.url, { lang });
      for (const colorScheme of ['light', 'dark'] as const) {
        for (const width of [1280, 390]) {
          await page.emulateMedia({ colorScheme });
          await page.setViewportSize({ width, height: 900 });
          await open(page, '/routes', `a[href="/routes/${r.id}"]`);
          const row = (id: number) => page.locator(`tr:has(a[href="/routes/${id}"])`).first().innerText();
          assert.match(await row(r.id), lang === 'en' ? /Internal/ : /Intern/);
          assert.doesNotMatch(await row(pub.data.route.id), /Intern/);
          await screenshot(page, `${lang}-${width}-${colorScheme}-routes-exposure-list`);
          await open(page, `/routes/${r.id}/edit`, '#f-exposure');
          await page.locator('.exposure-section').scrollIntoViewIfNeeded();
          assert.match(await page.locator('.exposure-section legend').innerText(), lang === 'en' ? /Exposure/ : /Erreichbarkeit/);
          assert.equal(await page.inputValue('#f-exposure_page'), '<h1>Only through the VPN</h1>');
          if (width === 1280 && colorScheme === 'light') assert.deepEqual(serious(await axe(page)), [], `${lang} exposure form: axe`);
          await screenshot(page, `${lang}-${width}-${colorScheme}-routes-exposure-form`);
          const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
          assert.ok(overflow <= 1, `${lang} ${width}: the form scrolls sideways by ${overflow}px`);
        }
      }
      assert.deepEqual(problems, [], lang);
      await context.close();
    }
  } finally {
    await setLanguage('en');
  }
});
