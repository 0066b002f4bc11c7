// Data quotas (quota, quota_state) in a real browser against a real sidecar, with real peer_traffic
// rows (the poller's addSamples) counted by the real quota service: the usage bar in the peer list
// and on the peer's page (amber from 80 %, red at 100 %), the grant and reset buttons, and the peer
// form's quota fields (a throttle without its speed refused at its field, nothing changed; then
// stored). en at 1280 px and de at 390 px, axe and no sideways scroll.
// Screenshots: <lang>-<width>-quota-list, <lang>-<width>-quota-detail, <lang>-<width>-quota-form.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { adminPage, axe, screenshot, serious, settled, uiServer } from '../lib/browser.js';
import { addSamples } from '../../sidecar/src/peers/traffic.js';
import type { Peer } from '../../sidecar/test/lib/protocol.js';

const ui = uiServer({ GATEHOUSE_RATE_LIMIT_LOGIN: '1000', GATEHOUSE_WG_SUBNET: '10.63.0.0/24' });
const api = ui.api;
const MB = 1024 * 1024;
const dialog = (page: Page) => page.locator('dialog[open]');
const T = {
  en: { grant: 'Grant', reset: 'Reset count', edit: 'Edit', exceeded: 'Quota used up', ok: 'Within quota' },
  de: { grant: 'Gewähren', reset: 'Zählung zurücksetzen', edit: 'Bearbeiten', exceeded: 'Kontingent verbraucht', ok: 'Im Kontingent' },
} as const;

async function check(page: Page, where: string, problems: string[]) {
  const v = serious(await axe(page));
  assert.deepEqual(v, [], `${where}: ${JSON.stringify(v, null, 1)}`);
  const wide = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(wide <= 0, `${where}: page ${wide}px wider than the window`);
  assert.deepEqual(problems, [], where);
}
const level = (page: Page) => page.locator('[data-testid="quota-facts"] [data-testid="quota-bar"]').getAttribute('data-level');

test('the usage bar in the list and on the page, grant and reset, and the form’s quota fields (en 1280, de 390)', async () => {
  for (const c of [
    { lang: 'en', width: 1280 },
    { lang: 'de', width: 390 },
  ] as const) {
    assert.equal((await api('/settings/language', 'POST', { language: c.lang })).status, 200);
    const tag = `${c.lang}-${c.width}`;
    const created = await api('/peers', 'POST', { name: `quota-${tag}`, quota: { bytes: 10 * MB, period: 'monthly', action: 'disable' } });
    const peer = created.data.peer as Peer;
    // 8.5 MB of 10: amber
    await addSamples(ui.s.deps.db.sequelize, [{ peerId: peer.id, rx: 5 * MB, tx: 3.5 * MB }], Date.now());
    await ui.s.deps.quotas.check();
    const w = await adminPage(ui.browser, ui.s.url, { lang: c.lang, width: c.width });
    w.allowHttpError(`/api/v1/peers/${peer.id}`, 422);
    const { page } = w;

    await page.goto(`${ui.s.url}/peers?q=quota-${tag}`);
    await settled(page);
    const row = page.locator('[data-testid="quota-bar"]').first();
    await row.waitFor();
    assert.equal(await row.getAttribute('data-level'), 'warn');
    assert.match((await row.textContent()) ?? '', /8[.,]5 MB/);
    await screenshot(page, `${tag}-quota-list`);
    await check(page, `${tag} list`, w.problems);

    // over 100 %: red, disabled by its quota
    await addSamples(ui.s.deps.db.sequelize, [{ peerId: peer.id, rx: 2 * MB, tx: 0 }], Date.now());
    await ui.s.deps.quotas.check();
    await page.goto(`${ui.s.url}/peers/${peer.id}`);
    await settled(page);
    await page.locator('[data-testid="quota-facts"]', { hasText: T[c.lang].exceeded }).waitFor();
    assert.equal(await level(page), 'bad');
    assert.equal(((await api(`/peers/${peer.id}`)).data.peer as Peer).enabled, 0);
    await screenshot(page, `${tag}-quota-detail`);
    await check(page, `${tag} detail`, w.problems);

    // grant 5 MB: 10.5 of 15 = 70 %, green, on again
    await page.getByRole('button', { name: T[c.lang].grant, exact: true }).click();
    await page.fill('#f-bytes', '5');
    await page.locator('.quota-grant button[type=submit]').click();
    await page.locator('[data-testid="quota-facts"]', { hasText: T[c.lang].ok }).waitFor();
    assert.equal(await level(page), 'ok');
    let v = (await api(`/peers/${peer.id}`)).data.peer as Peer;
    assert.deepEqual([v.enabled, v.quota_state?.granted_bytes, v.quota_state?.limit_bytes], [1, 5 * MB, 15 * MB]);

    // reset: zero used
    await page.getByRole('button', { name: T[c.lang].reset }).click();
    await page.locator('dialog[open] button.primary, dialog[open] button.danger').last().click();
    await page.waitForFunction(() => document.querySelector('[data-testid="quota-facts"] [role="progressbar"]')?.getAttribute('aria-valuenow') === '0');
    v = (await api(`/peers/${peer.id}`)).data.peer as Peer;
    assert.equal(v.quota_state?.used_bytes, 0);

    // the form: a throttle without its speed is refused at its field, nothing changed; then stored
    await page.getByRole('button', { name: T[c.lang].edit }).click();
    await dialog(page).locator('#f-name').waitFor();
    assert.equal(await page.inputValue('#f-quota-bytes'), '10');
    await dialog(page).locator('#f-quota-period').selectOption('weekly');
    await page.fill('#f-quota-resets_on', '3');
    await dialog(page).locator('#f-quota-action').selectOption('throttle');
    await dialog(page).locator('[data-testid="quota-field"]').scrollIntoViewIfNeeded();
    await dialog(page).locator('button[type=submit]').click();
    await dialog(page).locator('#f-quota-throttle_kbit-err').waitFor();
    assert.equal(await page.getAttribute('#f-quota-throttle_kbit', 'aria-invalid'), 'true');
    assert.equal(((await api(`/peers/${peer.id}`)).data.peer as Peer).quota?.period, 'monthly', 'nothing changed');
    await page.fill('#f-quota-throttle_kbit', '512');
    await screenshot(page, `${tag}-quota-form`);
    await check(page, `${tag} form`, w.problems);
    await dialog(page).locator('button[type=submit]').click();
    await dialog(page).waitFor({ state: 'detached' });
    v = (await api(`/peers/${peer.id}`)).data.peer as Peer;
    assert.deepEqual(v.quota, { bytes: 10 * MB, period: 'weekly', resets_on: 3, action: 'throttle', throttle_kbit: 512 });
    await w.context.close();
  }
  assert.equal((await api('/settings/language', 'POST', { language: 'en' })).status, 200);
});
