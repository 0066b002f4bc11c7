// The public-host warning in a real browser: GATEHOUSE_PUBLIC_HOST unset and this machine's hostname a
// single label (the test's hostname, "gatehouse-box"), so peer configs would carry an endpoint the
// internet cannot resolve: the dashboard and the peer config (on the peer's page and right after
// creating a peer) say so, in en and de, with axe and screenshots (<lang>-<width>-public-host-*).
// With GATEHOUSE_PUBLIC_HOST set, neither shows it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { adminPage, axe, screenshot, serious, settled, uiServer } from '../lib/browser.js';

const unset = uiServer({ GATEHOUSE_PUBLIC_HOST: '', GATEHOUSE_WG_PORT: '51820', GATEHOUSE_RATE_LIMIT_LOGIN: '100000' }, { hostname: () => 'gatehouse-box' });
const set = uiServer({ GATEHOUSE_PUBLIC_HOST: 'vpn.example.com', GATEHOUSE_RATE_LIMIT_LOGIN: '100000' }, { hostname: () => 'gatehouse-box' });

const TEXT = {
  en: /Peers outside this network cannot connect: GATEHOUSE_PUBLIC_HOST is not set, so peer configs use this machine's hostname "gatehouse-box" as their endpoint, and a name without a domain cannot be resolved on the internet\. Set this server's public DNS name or IP address under Settings → Network/,
  de: /Peers außerhalb dieses Netzes können sich nicht verbinden: GATEHOUSE_PUBLIC_HOST ist nicht gesetzt, .*„gatehouse-box“ als Endpunkt, und ein Name ohne Domain lässt sich im Internet nicht auflösen\./,
} as const;
const SHOW = { en: 'Show configuration and QR code', de: 'Konfiguration und QR-Code zeigen' } as const;
const warning = (page: Page) => page.locator('[data-testid="public-host-warning"]');

async function noSerious(page: Page, where: string) {
  const v = serious(await axe(page));
  assert.deepEqual(v, [], `${where}: ${JSON.stringify(v, null, 1)}`);
}

test('unset public host with a single-label hostname: the warning on the dashboard and with the peer config (en, de)', async () => {
  const app = (await unset.api('/settings/app')).data.app;
  assert.equal(app.public_host.problem, 'single_label');
  assert.ok(app.public_host.warning);
  const peer = (await unset.api('/peers', 'POST', { name: 'laptop' })).data.peer;
  for (const lang of ['en', 'de'] as const) {
    await unset.api('/settings/language', 'POST', { language: lang });
    for (const width of [1280, 360]) {
      const w = await adminPage(unset.browser, unset.s.url, { lang, width });
      const { page } = w;
      await page.goto(`${unset.s.url}/`);
      await settled(page);
      await warning(page).waitFor();
      assert.match((await warning(page).textContent())!, TEXT[lang]);
      await screenshot(page, `${lang}-${width}-public-host-dashboard`);
      await noSerious(page, `${lang} ${width} dashboard`);

      await page.goto(`${unset.s.url}/peers/${peer.id}`);
      await settled(page);
      assert.equal(await warning(page).count(), 0, 'not before the config is shown');
      await page.getByRole('button', { name: SHOW[lang] }).click();
      await page.locator('.peer-config pre').waitFor();
      await warning(page).waitFor();
      assert.match((await warning(page).textContent())!, TEXT[lang]);
      assert.match((await page.locator('.peer-config pre').textContent())!, /Endpoint = gatehouse-box:51820/);
      await screenshot(page, `${lang}-${width}-public-host-peer-config`);
      await noSerious(page, `${lang} ${width} peer config`);
      const wide = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      assert.ok(wide <= 0, `${lang} ${width}: page ${wide}px wider than the window`);
      assert.deepEqual(w.problems, [], `${lang} ${width}`);
      await w.context.close();
    }
  }
  await unset.api('/settings/language', 'POST', { language: 'en' });

  // right after creating a peer through the UI: the config dialog carries the warning too
  const w = await adminPage(unset.browser, unset.s.url, { lang: 'en' });
  await w.page.goto(`${unset.s.url}/peers`);
  await settled(w.page);
  await w.page
    .getByRole('button', { name: /add peer/i })
    .first()
    .click();
  await w.page.fill('#f-name', 'phone');
  await w.page.locator('dialog[open] button[type=submit]').click();
  await w.page.locator('dialog[open] .peer-config pre').waitFor();
  await w.page.locator('dialog[open] [data-testid="public-host-warning"]').waitFor();
  assert.deepEqual(w.problems, []);
  await w.context.close();
});

test('GATEHOUSE_PUBLIC_HOST set: no warning on the dashboard or with the peer config', async () => {
  assert.equal((await set.api('/settings/app')).data.app.public_host.warning, null);
  const peer = (await set.api('/peers', 'POST', { name: 'laptop' })).data.peer;
  const w = await adminPage(set.browser, set.s.url, { lang: 'en' });
  const { page } = w;
  await page.goto(`${set.s.url}/`);
  await settled(page);
  await page.getByRole('heading', { name: 'Dashboard', exact: true }).waitFor();
  assert.equal(await warning(page).count(), 0);
  await page.goto(`${set.s.url}/peers/${peer.id}`);
  await settled(page);
  await page.getByRole('button', { name: SHOW.en }).click();
  await page.locator('.peer-config pre').waitFor();
  assert.match((await page.locator('.peer-config pre').textContent())!, /Endpoint = vpn\.example\.com:/);
  assert.equal(await warning(page).count(), 0);
  assert.deepEqual(w.problems, []);
  await w.context.close();
});
