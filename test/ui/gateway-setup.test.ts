// Setting up a gateway in a real browser, as a new user would: the empty Gateways page offers "Add
// gateway"; the dialog creates it and shows its gateway.env once with Copy (read back from the
// browser's clipboard) and Download (a real download with the same content), and the copy-paste
// install (Docker, Podman, systemd) with that env file written by the script itself; the gateway's
// page later shows the install without the secret. Screenshots en/de × 390/1280 px, both themes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { parseEnvText } from '@gatehouse/common/gateway-protocol.js';
import { adminPage, axe, screenshot, serious, settled, uiServer, type WatchedPage } from '../lib/browser.js';

const ui = uiServer({
  GATEHOUSE_WG_SUBNET: '10.78.0.0/24',
  GATEHOUSE_PUBLIC_HOST: 'vpn.example.test',
  GATEHOUSE_RATE_LIMIT_ADMIN: '100000',
  GATEHOUSE_RATE_LIMIT_LOGIN: '100000',
});
const dialog = (page: Page) => page.locator('dialog[open]');

/** The admin's language and theme (their own settings, as the profile page saves them). */
async function look(lang: 'en' | 'de', theme: 'default' | 'pro') {
  assert.equal((await ui.api('/settings/language', 'POST', { language: lang })).status, 200);
  assert.equal((await ui.api('/settings/theme', 'PUT', { theme })).status, 200);
}

async function clipboardOf(w: WatchedPage): Promise<string> {
  return w.page.evaluate(() => navigator.clipboard.readText());
}

async function noOverflow(page: Page, where: string) {
  const wide = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  assert.ok(wide <= 1, `${where}: page ${wide}px wider than the window`);
}

let peerId = 0;
let envShown = '';

test('empty Gateways page → Add gateway → gateway.env copied and downloaded, the install command shown; later the install without the secret', async () => {
  await look('en', 'default');
  const w = await adminPage(ui.browser, ui.s.url);
  const { page } = w;
  await w.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: ui.s.url });
  await page.goto(`${ui.s.url}/gateways`);
  await settled(page);
  const empty = page.locator('.empty');
  await empty.getByText('No gateways yet').waitFor();
  await screenshot(page, 'en-1280-gateways-empty');
  await empty.locator('button:has-text("Add gateway")').click();
  await page.waitForURL((u) => u.searchParams.get('new') === '1');
  await dialog(page).locator('#f-name').waitFor();
  await page.fill('#f-name', 'Home NAS');
  await dialog(page).locator('button[type=submit]').click();

  // the env, shown once, with Copy and Download
  const env = dialog(page).locator('#gw-env');
  await env.waitFor();
  envShown = await env.inputValue();
  const gws = (await ui.api('/gateways')).data.gateways;
  assert.deepEqual(
    gws.map((g) => g.name),
    ['Home NAS'],
  );
  peerId = gws[0].peer_id;
  const values = parseEnvText(envShown);
  assert.equal(values.GATEWAY_PEER_ID, String(peerId));
  assert.match(values.GATEWAY_API_TOKEN, /^gthgw_/);
  assert.match(envShown, /Gateways → this gateway → Rotate tokens/, 'the file says where to rotate in the UI');
  await dialog(page).locator('.secret-once button:has-text("Copy gateway.env")').click();
  await dialog(page).locator('.secret-once button:has-text("Copied")').waitFor();
  assert.equal(await clipboardOf(w), envShown, 'the clipboard holds the env');
  const [download] = await Promise.all([page.waitForEvent('download'), dialog(page).locator('a:has-text("Download gateway.env")').click()]);
  assert.equal(download.suggestedFilename(), 'gateway.env');
  const chunks: Buffer[] = [];
  for await (const c of (await download.createReadStream())!) chunks.push(c as Buffer);
  assert.equal(Buffer.concat(chunks).toString('utf8'), envShown, 'the download is the same file');

  // the install: Docker by default, with the env written by the script; Podman and systemd a click away
  const script = dialog(page).locator('[data-testid=gw-install-script]');
  let text = (await script.textContent())!;
  assert.match(text, /docker build -f gateway\/Dockerfile -t gatehouse-gateway \./);
  assert.match(text, /docker run -d --name gatehouse-gateway --restart unless-stopped/);
  assert.match(text, /-v \/etc\/gatehouse\/gateway\.env:\/config\/gateway\.env:ro/);
  assert.ok(text.includes(values.GATEWAY_API_TOKEN), 'the script writes this gateway.env');
  await screenshot(page, 'en-1280-gateway-created');
  await dialog(page).getByLabel('systemd (no container)').check();
  text = (await script.textContent())!;
  assert.match(text, /systemctl daemon-reload && systemctl enable --now gatehouse-gateway/);
  assert.match(text, /ExecStart=\/usr\/bin\/node \/opt\/gatehouse-gateway\/dist\/gatehouse-gateway\.mjs --env \/etc\/gatehouse\/gateway\.env/);
  await dialog(page).locator('button:has-text("Copy the commands")').click();
  assert.equal(await clipboardOf(w), text, 'the commands copied as shown');
  await dialog(page).getByLabel('Podman').check();
  assert.match((await script.textContent())!, /^podman run -d/m);
  assert.deepEqual(serious(await axe(page)), []);

  // closed: the secret is gone; the gateway's page has the install without it
  await dialog(page).locator('.form-actions a:has-text("Open the gateway")').click();
  await page.waitForURL((u) => u.pathname === `/gateways/${peerId}`);
  await settled(page);
  const later = (await page.locator('[data-testid=gw-install-script]').textContent())!;
  assert.match(later, /install -D -m 0600 gateway\.env \/etc\/gatehouse\/gateway\.env/);
  assert.match(later, /docker run -d --name gatehouse-gateway/);
  assert.ok(!(await page.innerText('main')).includes(values.GATEWAY_API_TOKEN), 'no secret on the page');
  assert.ok(!later.includes('GATEWAY_API_TOKEN'));
  // the list now has it, and the header button opens the same dialog
  await page.goto(`${ui.s.url}/gateways`);
  await page.locator('table tbody tr', { hasText: 'Home NAS' }).waitFor();
  await page.click('.page-header button:has-text("Add gateway")');
  await dialog(page).locator('#f-name').waitFor();
  await dialog(page).locator('button:has-text("Cancel")').click();
  await page.waitForURL((u) => !u.searchParams.has('new'));
  assert.deepEqual(w.problems, []);
  await w.context.close();
});

test('a peer created with the gateway option in Peers shows the same: the gateway.env with Copy and Download, and the install', async () => {
  const w = await adminPage(ui.browser, ui.s.url);
  const { page } = w;
  await w.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: ui.s.url });
  await page.goto(`${ui.s.url}/peers`);
  await settled(page);
  await page.click('.page-header button:has-text("Add peer")');
  await dialog(page).locator('#f-name').waitFor();
  await page.fill('#f-name', 'Cabin gateway');
  await dialog(page)
    .getByLabel(/This peer is a gateway/)
    .check();
  await dialog(page).locator('button[type=submit]').click();
  await dialog(page).locator('#gw-env').waitFor();
  const env = await dialog(page).locator('#gw-env').inputValue();
  assert.match(parseEnvText(env).GATEWAY_API_TOKEN, /^gthgw_/);
  await dialog(page).locator('button:has-text("Copy gateway.env")').click();
  assert.equal(await clipboardOf(w), env);
  assert.equal(await dialog(page).locator('a[download="gateway.env"]').count(), 1);
  assert.ok((await dialog(page).locator('[data-testid=gw-install-script]').textContent())!.includes(parseEnvText(env).GATEWAY_API_TOKEN));
  await screenshot(page, 'en-1280-peers-gateway-created');
  assert.deepEqual(serious(await axe(page)), []);
  assert.deepEqual(w.problems, []);
  await w.context.close();
});

test('screenshots and axe: the create dialog with the env and install, and the gateway page, en/de × 390/1280 px × both themes', async () => {
  assert.ok(peerId, 'the first test made a gateway');
  for (const theme of ['default', 'pro'] as const) {
    for (const lang of ['en', 'de'] as const) {
      await look(lang, theme);
      for (const width of [390, 1280]) {
        const tag = `${lang}-${width}-${theme}`;
        const w = await adminPage(ui.browser, ui.s.url, { lang, width });
        const { page } = w;
        await page.goto(`${ui.s.url}/gateways?new=1`);
        await settled(page);
        await dialog(page).locator('#f-name').waitFor();
        await page.fill('#f-name', `gw ${tag}`);
        await dialog(page).locator('button[type=submit]').click();
        await dialog(page).locator('#gw-env').waitFor();
        assert.equal(await page.evaluate(() => document.documentElement.dataset.theme), theme);
        assert.match(
          await dialog(page).innerText(),
          lang === 'de' ? /Begleiter installieren[\s\S]*Befehle kopieren/ : /Install the companion[\s\S]*Copy the commands/,
        );
        await screenshot(page, `${tag}-gateway-created`);
        assert.deepEqual(serious(await axe(page)), [], `${tag} dialog`);
        await noOverflow(page, `${tag} dialog`);
        await page.goto(`${ui.s.url}/gateways/${peerId}`);
        await page.waitForSelector('[data-testid=gw-install-script]');
        await settled(page);
        await screenshot(page, `${tag}-gateway-detail-install`);
        assert.deepEqual(serious(await axe(page)), [], `${tag} detail`);
        await noOverflow(page, `${tag} detail`);
        assert.deepEqual(w.problems, [], tag);
        await w.context.close();
      }
    }
  }
  await look('en', 'default');
});
