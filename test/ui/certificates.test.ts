// Custom certificates in a real browser: upload through the dialog (a key of another certificate is
// named at the key field, nothing written), the certificate in the list with its names and days left,
// chosen in the route form, and the route list saying "Custom certificate: <name>, expires …". axe,
// no sideways scrolling, screenshots (test-results/ui-screenshots) en/de at 390 and 1280 px, both themes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { adminPage, axe, screenshot, serious, settled, uiServer, type WatchedPage } from '../lib/browser.js';
import { makeChain } from '../lib/certs.js';

const ui = uiServer();
const api = ui.api;
const realProblems = (w: WatchedPage) =>
  w.problems.filter((p) => !/^console: Failed to load resource: the server responded with a status of (400|409|422)/.test(p));
const dialog = (page: Page) => page.locator('dialog[open]');
async function check(page: Page, where: string) {
  const v = serious(await axe(page));
  assert.deepEqual(v, [], `${where}: ${JSON.stringify(v, null, 1)}`);
  const wide = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(wide <= 0, `${where}: page ${wide}px wider than the window`);
}

test('certificates: upload with the key refused at its field, listed with names and days left, chosen on a route, shown in the route list', async () => {
  const w = await adminPage(ui.browser, ui.s.url, { lang: 'en' });
  const { page } = w;
  for (const code of [400, 409, 422]) w.allowHttpError('/api/v1/certificates', code);
  const chain = makeChain({ names: ['shop.example.com', 'www.shop.example.com'] });
  const other = makeChain({ names: ['other.example.com'] });
  const peer = (await api('/peers', 'POST', { name: 'cert-ui-peer' })).data.peer;
  const route = (await api('/routes', 'POST', { domain: 'www.shop.example.com', peer_id: peer.id, target_port: 8080, https_enabled: true })).data.route;

  await page.goto(`${ui.s.url}/certificates`);
  await settled(page);
  await page.getByText('No custom certificates').waitFor();
  await page.click('.page-header button:has-text("Upload certificate")');
  await dialog(page).locator('#f-name').waitFor();
  await page.fill('#f-name', 'Shop');
  await page.fill('#f-certificate_pem', chain.chain);
  await page.fill('#f-private_key_pem', other.key);
  await dialog(page).locator('button[type=submit]').click();
  await page.waitForSelector('#f-private_key_pem-err');
  assert.match((await page.textContent('#f-private_key_pem-err'))!, /does not belong to the certificate/);
  assert.equal((await api('/certificates')).data.certificates.length, 0, 'nothing written');
  await page.fill('#f-private_key_pem', chain.key);
  await dialog(page).locator('button[type=submit]').click();
  await page.locator('table.table').getByText('shop.example.com, www.shop.example.com').waitFor();
  await page
    .locator('table.table')
    .getByText(/\d+ days left/)
    .waitFor();
  const [cert] = (await api('/certificates')).data.certificates;
  assert.equal(cert.fingerprint_sha256, chain.fingerprint);

  // the route form: choose it
  await page.goto(`${ui.s.url}/routes/${route.id}/edit`);
  await settled(page);
  await page.locator('#f-certificate_id').waitFor();
  await page.locator(`#f-certificate_id option[value="${cert.id}"]`).waitFor({ state: 'attached' });
  await page.selectOption('#f-certificate_id', String(cert.id));
  await page.locator('form button[type=submit]', { hasText: 'Save' }).click();
  await page.waitForFunction(() => !location.pathname.endsWith('/edit'));
  assert.equal((await api(`/routes/${route.id}`)).data.route.certificate_id, cert.id);
  await page.goto(`${ui.s.url}/routes`);
  await settled(page);
  await page
    .getByText(/Custom certificate: Shop, expires/)
    .first()
    .waitFor();
  await page.goto(`${ui.s.url}/certificates`);
  await settled(page);
  await page.locator('table.table').getByRole('link', { name: 'www.shop.example.com' }).waitFor();
  assert.deepEqual(realProblems(w), []);
  await w.context.close();
});

test('certificates screen: axe clean, no sideways scrolling, screenshots en/de at 390 and 1280 px in both themes', async () => {
  const cases = [
    { lang: 'en', width: 1280, theme: 'default' },
    { lang: 'en', width: 390, theme: 'pro' },
    { lang: 'de', width: 1280, theme: 'pro' },
    { lang: 'de', width: 390, theme: 'default' },
  ] as const;
  for (const c of cases) {
    assert.equal((await api('/settings/language', 'POST', { language: c.lang })).status, 200);
    assert.equal((await api('/settings/theme', 'PUT', { theme: c.theme })).status, 200);
    const w = await adminPage(ui.browser, ui.s.url, { lang: c.lang, width: c.width });
    const { page } = w;
    await page.goto(`${ui.s.url}/certificates`);
    await settled(page);
    await page.waitForFunction((th) => document.documentElement.dataset.theme === th, c.theme);
    await page.locator('table.table').getByText('Shop').first().waitFor();
    await check(page, `${c.lang} ${c.width} list`);
    await screenshot(page, `${c.lang}-${c.width}-${c.theme}-certificates`);
    await page.click('.page-header button.primary');
    await dialog(page).locator('#f-name').waitFor();
    await check(page, `${c.lang} ${c.width} upload dialog`);
    await screenshot(page, `${c.lang}-${c.width}-${c.theme}-certificates-upload`);
    await page.keyboard.press('Escape');
    assert.deepEqual(realProblems(w), [], `${c.lang} ${c.width}`);
    await w.context.close();
  }
  await api('/settings/language', 'POST', { language: 'en' });
  await api('/settings/theme', 'PUT', { theme: 'default' });
});
