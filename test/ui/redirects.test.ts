// Redirect hosts and the default site in a real browser, through the UI alone (the API seeds and
// checks): create with the server's field errors next to the inputs, the domain clash with a route
// at the domain, the enabled switch, edit, delete; the default site set to custom HTML (a missing
// page named at its field). axe-core and screenshots (test-results/ui-screenshots) of the list,
// the dialog and the default-site card in en/de, 390 and 1280 px, both themes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { adminPage, axe, screenshot, serious, settled, uiServer, type WatchedPage } from '../lib/browser.js';

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

test('redirects: create with field errors, a route domain refused at the field, enable switch, edit, delete; the default site set to custom HTML', async () => {
  const w = await adminPage(ui.browser, ui.s.url, { lang: 'en' });
  const { page } = w;
  for (const code of [400, 409, 422]) w.allowHttpError('/api/v1/redirect-hosts', code);
  w.allowHttpError('/api/v1/settings/default-site', 422);
  const peer = (await api('/peers', 'POST', { name: 'redir-peer' })).data.peer;
  assert.equal((await api('/routes', 'POST', { domain: 'app.example.com', peer_id: peer.id, target_port: 8080 })).status, 201);

  await page.goto(`${ui.s.url}/redirects`);
  await settled(page);
  await page.getByText('No redirects yet').waitFor();
  await page.click('.page-header button:has-text("Add redirect")');
  await dialog(page).locator('#f-domain').waitFor();
  await page.fill('#f-domain', 'old.example.com');
  await page.fill('#f-target_url', 'ftp://files.example.org/');
  await dialog(page).locator('button[type=submit]').click();
  await page.waitForSelector('#f-target_url-err');
  assert.match((await page.textContent('#f-target_url-err'))!, /http:\/\/ or https:\/\//);
  assert.equal((await api('/redirect-hosts')).data.redirect_hosts.length, 0, 'nothing written on a 400');

  // a route's domain: refused, the reason at the domain
  await page.fill('#f-domain', 'app.example.com');
  await page.fill('#f-target_url', 'https://www.example.org/');
  await dialog(page).locator('button[type=submit]').click();
  await page.waitForSelector('#f-domain-err');
  assert.match((await page.textContent('#f-domain-err'))!, /already used by route/);

  await page.fill('#f-domain', 'old.example.com');
  await page.selectOption('#f-status_code', '302');
  await dialog(page).locator('button[type=submit]').click();
  await page.locator('table.table').getByText('old.example.com').waitFor();
  const [rh] = (await api('/redirect-hosts')).data.redirect_hosts;
  assert.deepEqual(
    { domain: rh.domain, target_url: rh.target_url, status_code: rh.status_code, preserve_path: rh.preserve_path, enabled: rh.enabled },
    { domain: 'old.example.com', target_url: 'https://www.example.org/', status_code: 302, preserve_path: true, enabled: true },
  );

  // the switch in the list
  await page.click('input[aria-label="old.example.com enabled"]');
  await page.getByText('Redirect old.example.com disabled').waitFor();
  assert.equal((await api(`/redirect-hosts/${rh.id}`)).data.redirect_host.enabled, false);

  // edit
  await page.click('button[aria-label="Edit old.example.com"]');
  await dialog(page).locator('#f-target_url').waitFor();
  await page.fill('#f-target_url', 'https://new.example.org/');
  await page.uncheck('#f-preserve_path');
  await dialog(page).locator('button[type=submit]').click();
  await page.locator('table.table').getByText('https://new.example.org/').waitFor();
  const edited = (await api(`/redirect-hosts/${rh.id}`)).data.redirect_host;
  assert.deepEqual([edited.target_url, edited.preserve_path], ['https://new.example.org/', false]);

  // the default site: custom HTML without a page is named at the field; then saved
  const card = page.locator('section.default-site');
  await card.locator('#f-mode').selectOption('custom_html');
  await card.locator('button[type=submit]').click();
  await card.locator('#f-html-err').waitFor();
  assert.equal((await api('/settings/default-site')).data.default_site.mode, 'default', 'nothing saved on a 422');
  await card.locator('#f-html').fill('<!doctype html><h1>Nothing here</h1>');
  await card.locator('button[type=submit]').click();
  await page.getByText('Default site saved').waitFor();
  assert.deepEqual((await api('/settings/default-site')).data.default_site, {
    mode: 'custom_html',
    redirect_url: null,
    html: '<!doctype html><h1>Nothing here</h1>',
  });
  const cfg = await (ui.s.deps.proxy as { render(): Promise<unknown> }).render();
  assert.match(JSON.stringify(cfg), /Nothing here/, 'the page is in the rendered configuration');

  // delete
  await page.click('button[aria-label="Delete old.example.com"]');
  const c = page.locator('dialog[open]').filter({ hasText: /Delete the redirect of old\.example\.com\?/ });
  await c.waitFor();
  await c.locator('button.danger').click();
  await page.getByText('No redirects yet').waitFor();
  assert.equal((await api(`/redirect-hosts/${rh.id}`)).status, 404);
  assert.deepEqual(realProblems(w), []);
  await w.context.close();
});

test('redirects screen: axe clean, no sideways scrolling, screenshots en/de at 390 and 1280 px in both themes', async () => {
  await api('/redirect-hosts', 'POST', { domain: 'shop.example.com', target_url: 'https://www.example.com/shop/', description: 'old shop' });
  await api('/redirect-hosts', 'POST', { domain: 'promo.example.com', target_url: 'https://www.example.com/summer', preserve_path: false, status_code: 307 });
  await api('/settings/default-site', 'PUT', { mode: 'redirect', redirect_url: 'https://www.example.com/' });
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
    await page.goto(`${ui.s.url}/redirects`);
    await settled(page);
    await page.waitForFunction((th) => document.documentElement.dataset.theme === th, c.theme);
    await page.locator('table.table').getByText('shop.example.com').waitFor();
    assert.equal(await page.locator('section.default-site #f-redirect_url').inputValue(), 'https://www.example.com/');
    await check(page, `${c.lang} ${c.width} list`);
    await screenshot(page, `${c.lang}-${c.width}-${c.theme}-redirects`);
    await page.click('.page-header button.primary');
    await dialog(page).locator('#f-domain').waitFor();
    await check(page, `${c.lang} ${c.width} create dialog`);
    await screenshot(page, `${c.lang}-${c.width}-${c.theme}-redirects-create`);
    await page.keyboard.press('Escape');
    assert.deepEqual(realProblems(w), [], `${c.lang} ${c.width}`);
    await w.context.close();
  }
  await api('/settings/language', 'POST', { language: 'en' });
  await api('/settings/theme', 'PUT', { theme: 'default' });
});
