// Full or split tunnel (client_allowed_ips) in a real browser against a real sidecar: the peer form's
// "Client traffic" choice (VPN only, Full tunnel, Custom) in en and de, both themes, at 390 and 1280
// px; "Full tunnel" chosen in the form lands in the downloaded config (AllowedIPs = 0.0.0.0/0, ::/0);
// the list marks it and the detail page shows the choice; a bad CIDR under Custom is refused at its field with nothing
// changed; a change after the download marks the config outdated with the tunnel text.
// Screenshots: <lang>-<width>-peer-tunnel-form, <lang>-<width>-peer-tunnel-detail.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { adminPage, axe, screenshot, serious, settled, uiServer } from '../lib/browser.js';
import type { Peer } from '../../sidecar/test/lib/protocol.js';

const ui = uiServer({ GATEHOUSE_RATE_LIMIT_LOGIN: '1000', GATEHOUSE_WG_SUBNET: '10.61.0.0/24' });
const api = ui.api;
const dialog = (page: Page) => page.locator('dialog[open]');
const T = {
  en: {
    add: 'Add peer',
    full: 'Full tunnel',
    split: 'VPN only (split)',
    custom: 'Custom',
    done: 'Done',
    traffic: 'Client traffic',
    edit: 'Edit',
    save: 'Save',
  },
  de: {
    add: 'Peer hinzufügen',
    full: 'Voller Tunnel',
    split: 'Nur VPN (Split)',
    custom: 'Eigene Netze',
    done: 'Fertig',
    traffic: 'Client-Verkehr',
    edit: 'Bearbeiten',
    save: 'Speichern',
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
async function peerByName(name: string): Promise<Peer | undefined> {
  const r = await api(`/peers?q=${encodeURIComponent(name)}&limit=200`);
  return (r.data.peers as Peer[]).find((p) => p.name === name);
}

test('"Full tunnel" chosen in the peer form: the downloaded config routes everything; the detail shows it (en, de; 390 and 1280 px; both themes)', async () => {
  for (const c of CASES) {
    await setLook(c.lang, c.theme);
    const w = await adminPage(ui.browser, ui.s.url, { lang: c.lang, width: c.width });
    const { page } = w;
    const name = `tunnel-${c.lang}-${c.width}`;
    await page.goto(`${ui.s.url}/peers`);
    await settled(page);
    await page.click(`.page-header button:has-text("${T[c.lang].add}")`);
    await dialog(page).locator('#f-name').waitFor();
    const field = dialog(page).locator('[data-testid="client-tunnel-field"]');
    assert.equal(await field.getByLabel(T[c.lang].split).isChecked(), true, 'the default: VPN only');
    assert.match((await field.textContent()) ?? '', /10\.61\.0\.0\/24/, 'the hint names the VPN subnet');
    await page.fill('#f-name', name);
    await field.getByLabel(T[c.lang].full).check();
    await page.waitForFunction((th) => document.documentElement.dataset.theme === th, c.theme);
    await screenshot(page, `${c.lang}-${c.width}-peer-tunnel-form`);
    await check(page, `${c.lang} ${c.width} form`, w.problems);
    await dialog(page).locator('button[type=submit]').click();

    // the config at once, and the download carries the full tunnel
    await dialog(page).locator('img.qr').waitFor();
    assert.match((await dialog(page).locator('pre').textContent()) ?? '', /^AllowedIPs = 0\.0\.0\.0\/0, ::\/0$/m);
    const [download] = await Promise.all([page.waitForEvent('download'), dialog(page).locator('a[download]').click()]);
    const conf = readFileSync((await download.path())!, 'utf8');
    assert.match(conf, /^AllowedIPs = 0\.0\.0\.0\/0, ::\/0$/m, 'the downloaded config');
    const stored = await peerByName(name);
    assert.deepEqual(stored?.client_allowed_ips, ['0.0.0.0/0', '::/0']);
    assert.equal(stored?.full_tunnel, true);
    await dialog(page).locator(`button:has-text("${T[c.lang].done}")`).click();
    // the list marks it
    await page.locator('table.table tbody tr', { hasText: name }).locator('[data-testid="full-tunnel"]').waitFor();

    // the detail page says so
    await page.goto(`${ui.s.url}/peers/${stored!.id}`);
    await settled(page);
    const shown = page.locator('[data-testid="client-tunnel"]');
    await shown.waitFor();
    assert.equal((await shown.textContent())?.trim(), T[c.lang].full);
    await screenshot(page, `${c.lang}-${c.width}-peer-tunnel-detail`);
    await check(page, `${c.lang} ${c.width} detail`, w.problems);
    await w.context.close();
  }
  await setLook('en', 'default');
});

test('Custom: a bad CIDR is refused at its field with nothing changed; a good list is saved normalised and the downloaded config is outdated until shown again', async () => {
  const peer = (await api('/peers', 'POST', { name: 'custom-laptop' })).data.peer as Peer;
  assert.equal((await api(`/peers/${peer.id}/config`)).status, 200, 'a config handed out');
  const w = await adminPage(ui.browser, ui.s.url, { lang: 'en', width: 390 });
  w.allowHttpError(`/api/v1/peers/${peer.id}`, 400);
  const { page } = w;
  await page.goto(`${ui.s.url}/peers/${peer.id}`);
  await settled(page);
  assert.match((await page.locator('[data-testid="client-tunnel"]').textContent()) ?? '', /VPN only \(split\)\s*10\.61\.0\.0\/24/);
  await page.getByRole('button', { name: 'Edit' }).click();
  const field = dialog(page).locator('[data-testid="client-tunnel-field"]');
  await field.getByLabel('Custom').check();
  assert.equal(await page.inputValue('#f-client_allowed_ips'), '10.61.0.0/24', 'prefilled with the VPN subnet');
  await page.fill('#f-client_allowed_ips', '10.61.0.0/24, 192.168.7.0/33');
  await dialog(page).locator('button[type=submit]').click();
  await page.waitForSelector('#f-client_allowed_ips-err');
  assert.match((await page.textContent('#f-client_allowed_ips-err')) ?? '', /"192\.168\.7\.0\/33" is not a CIDR/);
  assert.equal((await api(`/peers/${peer.id}`)).data.peer.client_allowed_ips, null, 'nothing changed');
  await screenshot(page, 'en-390-peer-tunnel-custom-error');

  await page.fill('#f-client_allowed_ips', '10.61.0.0/24\n192.168.7.9/24');
  await dialog(page).locator('button[type=submit]').click();
  await dialog(page).waitFor({ state: 'detached' });
  assert.deepEqual((await api(`/peers/${peer.id}`)).data.peer.client_allowed_ips, ['10.61.0.0/24', '192.168.7.0/24']);
  await page.locator('[data-testid="client-tunnel"]').filter({ hasText: '192.168.7.0/24' }).waitFor();
  const banner = page.locator('[data-testid="config-outdated-banner"]');
  await banner.waitFor();
  assert.match((await banner.textContent()) ?? '', /made before its client traffic changed/);
  await page.getByRole('button', { name: 'Show configuration and QR code' }).click();
  await page.locator('.peer-config pre').waitFor();
  assert.match((await page.locator('.peer-config pre').textContent()) ?? '', /^AllowedIPs = 10\.61\.0\.0\/24, 192\.168\.7\.0\/24$/m);
  await banner.waitFor({ state: 'detached' });
  await check(page, 'detail after the change', w.problems);
  await w.context.close();
});
