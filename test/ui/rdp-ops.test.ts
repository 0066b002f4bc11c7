// RDP operations in a real browser: live status (a target that listens is reachable with its latency,
// one that does not is unreachable, both in the list and on "check now"), Wake-on-LAN with progress
// for a target that never answers (the timeout is shown, as the server's wake cycle says), and the
// sessions with history: an active and an ended session shown with client, peer and end reason,
// "disconnect all" (confirmed once) recorded on the active session, the export links serving the
// CSV and JSON history; axe and screenshots of the detail page with sessions (en/de, 1280/360).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import type { Page } from 'playwright-core';
import { adminPage, axe, screenshot, serious, settled, uiServer } from '../lib/browser.js';
import type { RdpSession } from '../../sidecar/test/lib/protocol.js';

const ui = uiServer({ GATEHOUSE_RATE_LIMIT_LOGIN: '100000', GATEHOUSE_RATE_LIMIT_ADMIN: '100000', GATEHOUSE_RDP_WOL_PORT: '9' });
const api = ui.api;
let listener: net.Server;
let openPort = 0;
let closedPort = 0;
before(async () => {
  listener = net.createServer((s) => s.destroy());
  await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
  openPort = (listener.address() as net.AddressInfo).port;
  // A port nobody listens on: taken and released again.
  const probe = net.createServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  closedPort = (probe.address() as net.AddressInfo).port;
  await new Promise<void>((r) => probe.close(() => r()));
});
after(() => new Promise<void>((r) => listener.close(() => r())));
const dialog = (page: Page) => page.locator('dialog[open]');
async function noSerious(page: Page, where: string) {
  const v = serious(await axe(page));
  assert.deepEqual(v, [], `${where}: ${JSON.stringify(v, null, 1)}`);
}
async function rdpRoute(body: Record<string, unknown>) {
  const res = await api('/rdp', 'POST', { access_mode: 'internal', ...body });
  assert.equal(res.status, 201, JSON.stringify(res.data));
  return res.data.route;
}

test('RDP status live, WoL timeout shown, sessions with disconnect-all and history export — through the UI', async () => {
  const up = await rdpRoute({ name: 'Listening host', target_host: '127.0.0.1', target_port: openPort });
  const down = await rdpRoute({ name: 'Sleeping host', target_host: '127.0.0.1', target_port: closedPort, wol_enabled: true, wol_mac: '02:00:00:00:00:42' });
  const w = await adminPage(ui.browser, ui.s.url, { lang: 'en' });
  const { page } = w;

  // The list: each route's reachability (the first status request checks routes never checked).
  await page.goto(`${ui.s.url}/rdp`);
  await settled(page);
  await page
    .locator('tr:has-text("Listening host")')
    .getByText(/^reachable, [\d.]+ ms$/)
    .waitFor();
  await page.locator('tr:has-text("Sleeping host")').getByText('unreachable').waitFor();

  // Detail + check now: the path with its error.
  await page.goto(`${ui.s.url}/rdp/${down.id}`);
  await settled(page);
  await page.click('.rdp-status-card button:has-text("Check now")');
  await page
    .locator('.rdp-status-card')
    .getByText(/unreachable \(connection refused\)/)
    .waitFor();

  // WoL: the packet goes out, the wait runs, nothing answers: the timeout is shown.
  await page.fill('#wol-timeout', '3');
  await page.click('.rdp-wol button:has-text("Wake up")');
  await page.locator('.rdp-wol progress').waitFor();
  await page
    .locator('.rdp-wol')
    .getByText(/waiting for the host to answer/)
    .waitFor();
  await page.locator('.rdp-wol').getByText('No answer within 3 s').waitFor({ timeout: 15_000 });
  const wol = (await api(`/rdp/${down.id}/wol/status`)).data.wol;
  assert.equal(wol.state, 'timeout');
  assert.equal(wol.timeout_ms, 3000);
  assert.deepEqual(wol.sent_to, ['127.0.0.1:9']);
  assert.ok(!(await page.locator('.rdp-wol button:has-text("Wake up")').isDisabled()), 'the button is usable again');

  // Sessions: one ended (the client closed it), one active.
  const ended = await ui.s.deps.rdpSessions.start(up.id, { client_name: 'laptop-1' });
  await ui.s.deps.rdpSessions.end(ended.id, {}, 'client');
  const active = await ui.s.deps.rdpSessions.start(up.id, { client_name: 'desk-2' });
  await page.goto(`${ui.s.url}/rdp/${up.id}`);
  await settled(page);
  const hist = page.locator('.rdp-history');
  await hist.getByText('1 active sessions').waitFor();
  await hist.locator('tr:has-text("laptop-1")').getByText('closed by the client').waitFor();
  await hist.locator('tr:has-text("desk-2")').getByText('active').waitFor();
  await hist.locator('button:has-text("Disconnect all")').click();
  await dialog(page)
    .filter({ hasText: /Disconnect all 1 active sessions of Listening host/ })
    .locator('button.danger')
    .click();
  await page.getByText('1 sessions told to disconnect').waitFor();
  await hist.locator('tr:has-text("desk-2")').getByText('disconnecting').waitFor();
  const h = (await api(`/rdp/${up.id}/history`)).data.sessions;
  assert.ok(h.find((x: RdpSession) => x.id === active.id)!.disconnect_requested_at, 'the order is recorded');

  // Export links: CSV and JSON of every route's history.
  for (const fmt of ['csv', 'json']) {
    const href = await hist.locator(`a:has-text("Export ${fmt.toUpperCase()}")`).getAttribute('href');
    assert.equal(href, `/api/v1/rdp/history/export?format=${fmt}`);
    const body = await page.evaluate(async (u) => (await fetch(u)).text(), href!);
    if (fmt === 'csv') assert.match(body.split('\n')[0], /started_at/);
    else assert.ok(JSON.stringify(JSON.parse(body)).includes('laptop-1'));
    assert.ok(body.includes('desk-2'));
  }
  assert.deepEqual(w.problems, []);
  await noSerious(page, 'detail with sessions');
  await w.context.close();

  for (const lang of ['en', 'de'] as const) {
    // The app speaks the signed-in user's language.
    assert.equal((await api('/settings/language', 'POST', { language: lang })).status, 200);
    for (const width of [1280, 360]) {
      const v = await adminPage(ui.browser, ui.s.url, { lang, width });
      assert.equal(await v.page.evaluate(() => document.documentElement.lang), lang);
      for (const [id, name] of [
        [up.id, 'sessions'],
        [down.id, 'wol'],
      ] as const) {
        await v.page.goto(`${ui.s.url}/rdp/${id}`);
        await settled(v.page);
        await screenshot(v.page, `${lang}-${width}-rdp-${name}`);
        await noSerious(v.page, `${lang} ${width} ${name}`);
        const wide = await v.page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
        assert.ok(wide <= 0, `${lang} ${width} ${name}: page ${wide}px wider than the window`);
      }
      assert.deepEqual(v.problems, [], `${lang} ${width}`);
      await v.context.close();
    }
  }
});
