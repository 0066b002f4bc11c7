// Gateways screen in a real browser: the list with status, last seen, health and reachability, the
// detail page with telemetry, a live status change (gateway_offline pushed by the server while the
// page is open), and token rotation through the UI: the new gateway.env is shown once and the old
// API token no longer works against the gateway API. axe, screenshots en/de × 1280/360.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bearer, type ReqInit } from '../../sidecar/test/lib/server.js';
import { parseEnvText } from '@gatehouse/common/gateway-protocol.js';
import { adminPage, axe, screenshot, serious, settled, uiServer } from '../lib/browser.js';

const ui = uiServer(
  { GATEHOUSE_WG_SUBNET: '10.79.0.0/24', GATEHOUSE_PUBLIC_HOST: 'vpn.example.test', GATEHOUSE_RATE_LIMIT_ADMIN: '100000' },
  {},
  { api: 'token' },
);
const api = ui.api;
const gw = <P extends string, M extends string = 'GET'>(token: string, p: P, init: ReqInit<M> = {}) =>
  ui.s.req<never, `/api/v1/gateway${P}`, M>(`/api/v1/gateway${p}`, {
    ...init,
    headers: { ...bearer(token), ...(init.headers as Record<string, string> | undefined) },
  });

function heartbeat(routeId: number, reachable: boolean) {
  return {
    uptime_s: 7300,
    http_proxy_healthy: true,
    api_healthy: true,
    dns_resolve_ok: true,
    overall_healthy: true,
    tcp_listeners: [{ port: 8080, status: 'listening' }],
    wg_handshake_age_s: 12,
    route_reachability: [{ route_id: routeId, reachable, latency_ms: reachable ? 4 : null }],
    hostname: 'nas-gateway',
    config_hash: null,
    telemetry: {
      gateway_version: '0.3.1',
      node_version: 'v22.1.0',
      wg_tools_version: 'wireguard-tools v1.0.20210914',
      cpu_cores: 4,
      cpu_load_avg: [0.5, 0.25, 0.1],
      mem_total: 8 * 1024 ** 3,
      mem_free: 6 * 1024 ** 3,
      mem_used: 2 * 1024 ** 3,
      disk: { total: 100 * 1024 ** 3, free: 60 * 1024 ** 3, used: 40 * 1024 ** 3 },
      os_platform: 'linux',
      os_release: '6.1.0',
      arch: 'x64',
      dns_resolvers: ['192.168.50.1'],
      default_gateway_ip: '192.168.50.1',
    },
  };
}

let peerId: number;
let routeId: number;
let token: string;

ui.setup(async () => {
  const g = await api('/peers', { method: 'POST', json: { name: 'NAS gateway', is_gateway: true } });
  assert.equal(g.status, 201, JSON.stringify(g.data));
  peerId = g.data.peer.id;
  token = g.data.gateway!.apiToken;
  const r = await api('/routes', {
    method: 'POST',
    json: { domain: 'nas.gw-ui.example.test', target_kind: 'gateway', target_peer_id: peerId, target_lan_host: '192.168.50.10', target_lan_port: 5000 },
  });
  assert.equal(r.status, 201, JSON.stringify(r.data));
  routeId = r.data.route.id;
  const hb = await gw(token, '/heartbeat', { method: 'POST', json: heartbeat(routeId, true) });
  assert.equal(hb.status, 200, JSON.stringify(hb.data));
});

test('list and detail: status, last seen, health, reachability, telemetry; a status change arrives live', async () => {
  const w = await adminPage(ui.browser, ui.s.url);
  const { page, problems } = w;
  await page.goto(`${ui.s.url}/gateways`);
  await page.waitForSelector('table tbody tr');
  await settled(page);
  const row = page.locator('table tbody tr', { hasText: 'NAS gateway' });
  assert.match(await row.innerText(), /online/);
  assert.match(await row.innerText(), /healthy/);
  assert.match(await row.innerText(), /1 of 1 reachable/);
  await page.click('a:has-text("NAS gateway")');
  await page.waitForURL((u) => u.pathname === `/gateways/${peerId}`);
  await settled(page);
  assert.equal((await page.textContent('#page-title'))?.trim(), 'NAS gateway');
  const body = await page.innerText('main');
  for (const expected of [
    '0.3.1',
    'v22.1.0',
    '4 cores',
    '2 GB of 8 GB used',
    'nas.gw-ui.example.test',
    '192.168.50.10:5000',
    'reachable · 4 ms',
    '8080 (listening)',
  ]) {
    assert.ok(body.includes(expected), `detail shows ${expected}`);
  }
  assert.match(await page.innerText('[data-testid=gw-status]'), /online/);
  // the gateway reports its only route unreachable: the server turns it offline and pushes gateway_offline
  const hb = await gw(token, '/heartbeat', { method: 'POST', json: heartbeat(routeId, false) });
  assert.equal(hb.data.status, 'offline');
  await page.waitForFunction(() => /offline/.test(document.querySelector('[data-testid=gw-status]')?.textContent ?? ''), undefined, { timeout: 10_000 });
  assert.match(await page.innerText('main'), /unreachable/);
  await page.waitForFunction(
    () => /heartbeat received, but no LAN target reachable \(0 of 1\)/.test(document.querySelector('[data-testid=gw-reason]')?.textContent ?? ''),
    undefined,
    { timeout: 10_000 },
  );
  assert.deepEqual(serious(await axe(page)), []);
  assert.deepEqual(problems, []);
  await w.context.close();
  await gw(token, '/heartbeat', { method: 'POST', json: heartbeat(routeId, true) });
});

test('rotate the tokens through the UI: confirmation, the new gateway.env shown once, the old token refused at once', async () => {
  const w = await adminPage(ui.browser, ui.s.url);
  const { page, problems } = w;
  await page.goto(`${ui.s.url}/gateways/${peerId}`);
  await page.waitForSelector('[data-testid=gw-status]');
  await settled(page);
  const old = token;
  assert.equal((await gw(old, '/config')).status, 200);
  // cancelling changes nothing
  await page.click('.page-header button:has-text("Rotate tokens")');
  await page.click('dialog[open] button:has-text("Cancel")');
  assert.equal((await gw(old, '/config')).status, 200);
  await page.click('.page-header button:has-text("Rotate tokens")');
  await screenshot(page, 'en-1280-gateway-rotate-confirm');
  await page.click('dialog[open] button:has-text("Rotate tokens")');
  await page.waitForSelector('dialog[open] #gw-env');
  const env = await page.inputValue('dialog[open] #gw-env');
  const shown = parseEnvText(env).GATEWAY_API_TOKEN;
  assert.match(shown, /^gthgw_/);
  assert.notEqual(shown, old);
  // the install with this env comes with it
  assert.ok((await page.textContent('dialog[open] [data-testid=gw-install-script]'))!.includes(shown), 'the install script writes the new env');
  assert.equal((await gw(old, '/config')).status, 401, 'the old token no longer works');
  assert.equal((await gw(shown, '/config')).status, 200, 'the new one does');
  // the download offers the same file
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('a:has-text("Download gateway.env")')]);
  assert.equal(download.suggestedFilename(), 'gateway.env');
  const chunks: Buffer[] = [];
  for await (const c of (await download.createReadStream())!) chunks.push(c as Buffer);
  assert.equal(Buffer.concat(chunks).toString('utf8'), env);
  assert.deepEqual(serious(await axe(page)), []);
  await screenshot(page, 'en-1280-gateway-rotated');
  await page.click('dialog[open] > .modal-body > .form-actions button:has-text("Close")');
  await page.waitForFunction(() => !document.querySelector('dialog[open]'));
  assert.ok(!(await page.innerText('main')).includes(shown), 'the token is not shown again');
  assert.match(await page.innerText('[data-testid=token-hint]'), new RegExp(shown.slice(0, 10)));
  token = shown;
  assert.deepEqual(problems, []);
  await w.context.close();
});

test('screenshots and axe: list and detail in en/de at 1280 and 360 px, both themes', async () => {
  const { cookie, csrf } = await ui.login();
  for (const lang of ['en', 'de'] as const) {
    await ui.s.req('/api/v1/settings/language', { method: 'POST', json: { language: lang }, headers: { cookie, 'x-csrf-token': csrf } });
    for (const width of [1280, 360]) {
      const w = await adminPage(ui.browser, ui.s.url, { lang, width });
      const { page, problems } = w;
      await page.goto(`${ui.s.url}/gateways`);
      await page.waitForSelector('table tbody tr');
      await settled(page);
      await screenshot(page, `${lang}-${width}-gateways-list`);
      await page.goto(`${ui.s.url}/gateways/${peerId}`);
      await page.waitForSelector('[data-testid=gw-status]');
      await settled(page);
      assert.equal((await page.textContent('#page-title'))?.trim(), 'NAS gateway');
      // the status reason is worded in the page's language from the API's status_detail, not the server's English
      assert.equal(
        (await page.textContent('[data-testid=gw-reason]'))?.trim(),
        lang === 'de' ? '1 von 1 LAN-Zielen erreichbar' : '1 of 1 LAN targets reachable',
      );
      await screenshot(page, `${lang}-${width}-gateways-detail`);
      assert.deepEqual(serious(await axe(page)), [], `${lang} ${width}`);
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      assert.ok(overflow <= 1, `${lang} ${width}: no horizontal scrolling (${overflow}px)`);
      assert.deepEqual(problems, []);
      await w.context.close();
    }
  }
  await ui.s.req('/api/v1/settings/language', { method: 'POST', json: { language: 'en' }, headers: { cookie, 'x-csrf-token': csrf } });
  for (const colorScheme of ['dark'] as const) {
    const w = await adminPage(ui.browser, ui.s.url, { colorScheme });
    await w.page.goto(`${ui.s.url}/gateways/${peerId}`);
    await w.page.waitForSelector('[data-testid=gw-status]');
    await settled(w.page);
    assert.deepEqual(serious(await axe(w.page)), [], colorScheme);
    await w.context.close();
  }
  const none = await adminPage(ui.browser, ui.s.url);
  await none.page.goto(`${ui.s.url}/gateways/999999`);
  await none.page.waitForSelector('.empty');
  await settled(none.page);
  assert.match(await none.page.innerText('main'), /no gateway with this id/);
  assert.deepEqual(none.problems, []);
  await none.context.close();
});
