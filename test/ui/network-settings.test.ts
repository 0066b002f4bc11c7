// Network settings in a real browser: with GATEHOUSE_PUBLIC_HOST unset and a single-label hostname
// ("gatehouse-box"), an admin's dashboard shows the first-sign-in Network step (prefilled with the
// hostname and the warning that the internet cannot resolve it), in en and de, themes default and
// pro, at 390 and 1280 px. Saving it sets the public host: the next peer config carries it, and a peer
// whose config was downloaded before is marked "new config needed" until its config is shown again.
// The Network screen (Settings → Network) shows what is in effect and where it comes from and
// changes it. Screenshots: <lang>-<width>-network-setup, <lang>-<width>-network-screen.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { z } from 'zod';
import { adminPage, axe, screenshot, serious, settled, uiServer } from '../lib/browser.js';

const ui = uiServer({ GATEHOUSE_PUBLIC_HOST: '', GATEHOUSE_WG_PORT: '51820', GATEHOUSE_RATE_LIMIT_LOGIN: '100000' }, { hostname: () => 'gatehouse-box' });

const network = z.object({
  network: z.object({
    public_host: z.object({ value: z.string(), source: z.string(), stored: z.string().nullable() }),
    tls_mode: z.object({ value: z.string(), source: z.string() }),
    endpoint: z.string(),
    setup: z.string(),
  }),
});
const peerView = z.object({ peer: z.object({ id: z.number(), config_outdated: z.boolean() }) });
const TITLE = { en: 'Set up: how is this server reached?', de: 'Einrichtung: Wie ist dieser Server erreichbar?' } as const;
const WHY = { en: /Peers outside this network cannot reach "gatehouse-box"/, de: /Peers außerhalb dieses Netzes erreichen „gatehouse-box“ nicht/ } as const;
const CASES = [
  { lang: 'en', width: 1280, theme: 'default' },
  { lang: 'en', width: 390, theme: 'pro' },
  { lang: 'de', width: 1280, theme: 'pro' },
  { lang: 'de', width: 390, theme: 'default' },
] as const;

async function getNetwork() {
  return network.parse((await ui.api('/settings/network')).data).network;
}
async function configEndpoint(id: number): Promise<string | undefined> {
  const r = await ui.api(`/peers/${id}/config`);
  assert.equal(r.status, 200);
  return /^Endpoint = (.+)$/m.exec(String(r.data))?.[1];
}
async function check(page: Page, where: string, problems: string[]) {
  const v = serious(await axe(page));
  assert.deepEqual(v, [], `${where}: ${JSON.stringify(v, null, 1)}`);
  const wide = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(wide <= 0, `${where}: page ${wide}px wider than the window`);
  assert.deepEqual(problems, [], where);
}
async function setLook(lang: 'en' | 'de', theme: 'default' | 'pro') {
  assert.equal((await ui.api('/settings/language', 'POST', { language: lang })).status, 200);
  assert.equal((await ui.api('/settings/theme', 'PUT', { theme })).status, 200);
}

test('first sign-in: the Network step (en, de; 390 and 1280 px; both themes) sets the public host; the next peer config carries it; an older config is marked outdated', async () => {
  assert.equal((await getNetwork()).setup, 'pending');
  // a peer whose config was downloaded with the hostname endpoint
  const laptop = peerView.parse((await ui.api('/peers', 'POST', { name: 'laptop' })).data).peer.id;
  assert.equal(await configEndpoint(laptop), 'gatehouse-box:51820');

  for (const c of CASES) {
    await setLook(c.lang, c.theme);
    const w = await adminPage(ui.browser, ui.s.url, { lang: c.lang, width: c.width });
    await w.page.goto(`${ui.s.url}/`);
    await settled(w.page);
    const step = w.page.locator('[data-testid="network-setup"]');
    await step.waitFor();
    assert.equal(await step.locator('h2').textContent(), TITLE[c.lang]);
    assert.equal(await step.locator('#f-public_host').inputValue(), 'gatehouse-box', 'prefilled with the hostname');
    assert.match((await step.textContent()) ?? '', WHY[c.lang]);
    await w.page.waitForFunction((th) => document.documentElement.dataset.theme === th, c.theme);
    await screenshot(w.page, `${c.lang}-${c.width}-network-setup`);
    await check(w.page, `${c.lang} ${c.width} set-up step`, w.problems);
    await w.context.close();
  }
  await setLook('en', 'default');

  // save the step: the public host is stored, the step goes away
  const w = await adminPage(ui.browser, ui.s.url, { lang: 'en', width: 1280 });
  const { page } = w;
  await page.goto(`${ui.s.url}/`);
  await settled(page);
  const step = page.locator('[data-testid="network-setup"]');
  await step.waitFor();
  await step.locator('#f-public_host').fill('vpn.example.com');
  await step.locator('#f-tls_mode').selectOption('internal');
  await step.locator('button[type=submit]').click();
  await page.waitForSelector('text=Network set up: new peer configs use vpn.example.com:51820');
  await step.waitFor({ state: 'detached' });
  const n = await getNetwork();
  assert.deepEqual(
    [n.public_host.value, n.public_host.source, n.tls_mode.value, n.tls_mode.source, n.setup],
    ['vpn.example.com', 'settings', 'internal', 'settings', 'saved'],
  );
  // the public-host warning is gone from the dashboard, and the step does not come back
  assert.equal(await page.locator('[data-testid="public-host-warning"]').count(), 0);
  await page.reload();
  await settled(page);
  assert.equal(await page.locator('[data-testid="network-setup"]').count(), 0);

  // the next peer config carries the new host
  const phone = peerView.parse((await ui.api('/peers', 'POST', { name: 'phone' })).data).peer.id;
  assert.equal(await configEndpoint(phone), 'vpn.example.com:51820');

  // the laptop's config carries the old endpoint: badge in the list, banner on its page until the config is shown
  await page.goto(`${ui.s.url}/peers`);
  await settled(page);
  const badges = page.locator('[data-testid="config-outdated"]');
  await badges.first().waitFor();
  assert.equal(await badges.count(), 1);
  await page.goto(`${ui.s.url}/peers/${laptop}`);
  await settled(page);
  const banner = page.locator('[data-testid="config-outdated-banner"]');
  await banner.waitFor();
  assert.match((await banner.textContent()) ?? '', /points to gatehouse-box:51820, but this server is now reached at vpn\.example\.com:51820/);
  await screenshot(page, 'en-1280-peer-config-outdated');
  await check(page, 'peer page with an outdated config', w.problems);
  await page.getByRole('button', { name: 'Show configuration and QR code' }).click();
  await page.locator('.peer-config pre').waitFor();
  assert.match((await page.locator('.peer-config pre').textContent()) ?? '', /Endpoint = vpn\.example\.com:51820/);
  assert.match((await page.locator('.peer-config pre').textContent()) ?? '', /# .*download a fresh config from the admin UI, Peers → laptop/);
  await banner.waitFor({ state: 'detached' });
  assert.equal(peerView.parse((await ui.api(`/peers/${laptop}`)).data).peer.config_outdated, false);
  await w.context.close();
});

test('the Network screen: what is in effect and where it comes from; a change applies to the next config (en, de; 390 and 1280 px)', async () => {
  for (const c of CASES) {
    await setLook(c.lang, c.theme);
    const w = await adminPage(ui.browser, ui.s.url, { lang: c.lang, width: c.width });
    await w.page.goto(`${ui.s.url}/settings/network`);
    await settled(w.page);
    await w.page.locator('[data-testid="network-effective"]').waitFor();
    assert.equal(await w.page.locator('#f-public_host').inputValue(), 'vpn.example.com');
    assert.equal(await w.page.locator('[data-testid="network-endpoint"]').textContent(), 'vpn.example.com:51820');
    await w.page.waitForFunction((th) => document.documentElement.dataset.theme === th, c.theme);
    await screenshot(w.page, `${c.lang}-${c.width}-network-screen`);
    await check(w.page, `${c.lang} ${c.width} Network screen`, w.problems);
    await w.context.close();
  }
  await setLook('en', 'default');

  const w = await adminPage(ui.browser, ui.s.url, { lang: 'en', width: 390 });
  const { page } = w;
  await page.goto(`${ui.s.url}/settings/network`);
  await settled(page);
  await page.locator('[data-testid="network-effective"]').waitFor();
  // bad input: the message next to the field, nothing stored
  await page.fill('#f-public_host', 'not a host');
  await page.click('main button[type=submit]');
  await page.waitForSelector('#f-public_host-err');
  assert.equal((await getNetwork()).public_host.value, 'vpn.example.com');
  // a new host: stored, shown as in effect, carried by the next config
  await page.fill('#f-public_host', 'edge.example.net');
  await page.click('main button[type=submit]');
  await page.waitForSelector('text=Network settings saved');
  await page.waitForFunction(() => document.querySelector('[data-testid="network-endpoint"]')?.textContent === 'edge.example.net:51820');
  const phone = peerView.parse((await ui.api('/peers', 'POST', { name: 'tablet' })).data).peer.id;
  assert.equal(await configEndpoint(phone), 'edge.example.net:51820');
  // emptied: back to the hostname, with the warning on the screen
  await page.fill('#f-public_host', '');
  await page.click('main button[type=submit]');
  await page.waitForFunction(() => document.querySelector('[data-testid="network-endpoint"]')?.textContent === 'gatehouse-box:51820');
  await page.locator('[data-testid="network-unreachable"]').waitFor();
  assert.equal((await getNetwork()).public_host.source, 'hostname');
  // the one 400 is the bad input above, answered as it should be
  const expected = (p: string) => /^HTTP 400: PUT .*\/api\/v1\/settings\/network$/.test(p) || /status of 400 \(Bad Request\)/.test(p);
  assert.deepEqual(
    w.problems.filter((p) => !expected(p)),
    [],
  );
  assert.equal(w.problems.filter(expected).length, 2, JSON.stringify(w.problems));
  await w.context.close();
});
