// Speed caps (speed_limit) in a real browser against a real sidecar: the group form's default cap and
// the peer form's own cap in en and de, both themes, at 390 and 1280 px; what is typed is what is
// stored; the peer's page says whose cap applies (own, or from its group); the groups list shows
// the default; a cap below 8 kbit/s is refused at its field with nothing changed.
// Screenshots: <lang>-<width>-speed-cap-group-form, <lang>-<width>-speed-cap-peer-form, <lang>-<width>-speed-cap-detail.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { adminPage, axe, screenshot, serious, settled, uiServer } from '../lib/browser.js';
import type { Peer } from '../../sidecar/test/lib/protocol.js';

const ui = uiServer({ GATEHOUSE_RATE_LIMIT_LOGIN: '1000', GATEHOUSE_WG_SUBNET: '10.62.0.0/24' });
const api = ui.api;
const dialog = (page: Page) => page.locator('dialog[open]');
const T = {
  en: {
    addGroup: 'Add group',
    addPeer: 'Add peer',
    done: 'Done',
    own: '(own)',
    fromGroup: 'from group',
    cap: 'Speed cap',
    hint: 'the group’s default applies (↓ 1 Mbit/s · ↑ 500 kbit/s)',
  },
  de: {
    addGroup: 'Gruppe hinzufügen',
    addPeer: 'Peer hinzufügen',
    done: 'Fertig',
    own: '(eigenes)',
    fromGroup: 'von Gruppe',
    cap: 'Geschwindigkeitslimit',
    hint: 'Standard der Gruppe (↓ 1 Mbit/s · ↑ 500 kbit/s)',
  },
} as const;
const CASES = [
  { lang: 'en', width: 1280, theme: 'default' },
  { lang: 'en', width: 390, theme: 'pro' },
  { lang: 'de', width: 1280, theme: 'pro' },
  { lang: 'de', width: 390, theme: 'default' },
] as const;

async function setLook(lang: 'en' | 'de', theme: 'default' | 'pro') {
  assert.equal((await api('/settings/language', 'POST', { language: lang })).status, 200);
  assert.equal((await api('/settings/theme', 'PUT', { theme })).status, 200);
}
async function check(page: Page, where: string, problems: string[]) {
  const v = serious(await axe(page));
  assert.deepEqual(v, [], `${where}: ${JSON.stringify(v, null, 1)}`);
  const wide = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(wide <= 0, `${where}: page ${wide}px wider than the window`);
  assert.deepEqual(problems, [], where);
}

test('a group default and a peer’s own cap, set in the forms, stored and shown (en, de; 390 and 1280 px; both themes)', async () => {
  for (const c of CASES) {
    await setLook(c.lang, c.theme);
    const w = await adminPage(ui.browser, ui.s.url, { lang: c.lang, width: c.width });
    const { page } = w;
    const tag = `${c.lang}-${c.width}`;
    // the group with a default cap
    await page.goto(`${ui.s.url}/groups`);
    await settled(page);
    await page.click(`.page-header button:has-text("${T[c.lang].addGroup}")`);
    await dialog(page).locator('#f-name').waitFor();
    await page.fill('#f-name', `slow-${tag}`);
    await page.fill('#f-speed_limit-down_kbit', '1000');
    await page.fill('#f-speed_limit-up_kbit', '500');
    await page.waitForFunction((th) => document.documentElement.dataset.theme === th, c.theme);
    await screenshot(page, `${tag}-speed-cap-group-form`);
    await check(page, `${tag} group form`, w.problems);
    await dialog(page).locator('button[type=submit]').click();
    await dialog(page).waitFor({ state: 'detached' });
    const groups = (await api('/peer-groups')).data.groups;
    const g = groups.find((x) => x.name === `slow-${tag}`)!;
    assert.deepEqual(g.speed_limit, { down_kbit: 1000, up_kbit: 500 });
    await page
      .locator('table.table tbody tr', { hasText: `slow-${tag}` })
      .getByText('↓ 1 Mbit/s · ↑ 500 kbit/s')
      .waitFor();

    // a member without its own cap: the detail says it comes from the group
    const member = (await api('/peers', 'POST', { name: `member-${tag}`, group_id: g.id })).data.peer as Peer;
    await page.goto(`${ui.s.url}/peers/${member.id}`);
    await settled(page);
    // the group's default comes with the groups list, which may arrive after the peer: wait for it
    await page
      .locator('[data-testid="speed-limit"]')
      .filter({ hasText: new RegExp(`↓ 1 Mbit/s · ↑ 500 kbit/s \\(${T[c.lang].fromGroup} slow-${tag}\\)`) })
      .waitFor({ timeout: 10_000 });

    // a peer with its own cap, made in the form: the hint names the group default it replaces
    await page.goto(`${ui.s.url}/peers`);
    await settled(page);
    await page.click(`.page-header button:has-text("${T[c.lang].addPeer}")`);
    await dialog(page).locator('#f-name').waitFor();
    await page.fill('#f-name', `capped-${tag}`);
    await dialog(page)
      .locator('#f-group_id')
      .selectOption({ label: `slow-${tag}` });
    const field = dialog(page).locator('[data-testid="speed-limit-field"]');
    assert.ok(((await field.textContent()) ?? '').includes(T[c.lang].hint), (await field.textContent()) ?? '');
    await page.fill('#f-speed_limit-down_kbit', '20000');
    await page.fill('#f-speed_limit-up_kbit', '2000');
    await field.scrollIntoViewIfNeeded();
    await screenshot(page, `${tag}-speed-cap-peer-form`);
    await check(page, `${tag} peer form`, w.problems);
    await dialog(page).locator('button[type=submit]').click();
    await dialog(page).locator(`button:has-text("${T[c.lang].done}")`).click();
    const stored = ((await api(`/peers?q=capped-${tag}`)).data.peers as Peer[])[0] as Peer & { speed_limit: unknown };
    assert.deepEqual(stored.speed_limit, { down_kbit: 20000, up_kbit: 2000 });
    await page.goto(`${ui.s.url}/peers/${stored.id}`);
    await settled(page);
    assert.equal((await page.locator('[data-testid="speed-limit"]').textContent())?.trim(), `↓ 20 Mbit/s · ↑ 2 Mbit/s ${T[c.lang].own}`);
    await screenshot(page, `${tag}-speed-cap-detail`);
    await check(page, `${tag} detail`, w.problems);
    await w.context.close();
  }
  await setLook('en', 'default');
});

test('a cap below 8 kbit/s is refused at its field, nothing changed; emptied fields go back to the group default', async () => {
  const peer = (await api('/peers', 'POST', { name: 'cap-edit', speed_limit: { down_kbit: 3000, up_kbit: null } })).data.peer as Peer;
  const w = await adminPage(ui.browser, ui.s.url, { lang: 'en', width: 390 });
  w.allowHttpError(`/api/v1/peers/${peer.id}`, 400);
  const { page } = w;
  await page.goto(`${ui.s.url}/peers/${peer.id}`);
  await settled(page);
  await page.getByRole('button', { name: 'Edit' }).click();
  await dialog(page).locator('#f-name').waitFor();
  assert.equal(await page.inputValue('#f-speed_limit-down_kbit'), '3000');
  assert.equal(await page.inputValue('#f-speed_limit-up_kbit'), '');
  await page.fill('#f-speed_limit-down_kbit', '5');
  await dialog(page).locator('button[type=submit]').click();
  await dialog(page).locator('#f-speed_limit-down_kbit-err').waitFor();
  assert.equal(await page.getAttribute('#f-speed_limit-down_kbit', 'aria-invalid'), 'true');
  assert.deepEqual(((await api(`/peers/${peer.id}`)).data.peer as { speed_limit: unknown }).speed_limit, { down_kbit: 3000, up_kbit: null }, 'nothing changed');
  await page.fill('#f-speed_limit-down_kbit', '');
  await dialog(page).locator('button[type=submit]').click();
  await dialog(page).waitFor({ state: 'detached' });
  assert.equal(((await api(`/peers/${peer.id}`)).data.peer as { speed_limit: unknown }).speed_limit, null);
  await page.locator('[data-testid="speed-limit"]', { hasText: 'No cap' }).waitFor();
  await w.context.close();
});
