// The peers screens in a real browser against a real sidecar, through the UI alone (the API only
// seeds data and checks what the server stored): create a peer and read its QR code and config at
// once, server-side field errors next to their inputs with nothing typed lost, edit, search /
// filter / sort in the API, batch disable, toggle, delete, the detail page with its live updates;
// axe-core and screenshots of the dialogs and the detail page (en/de, 1280/360).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { adminPage, axe, screenshot, serious, settled, uiServer, type WatchedPage } from '../lib/browser.js';
import type { Peer } from '../../sidecar/test/lib/protocol.js';

// sign-ins per address are limited (10 in 15 min by default): this file signs in more often than that
const ui = uiServer({ GATEHOUSE_RATE_LIMIT_LOGIN: '1000' });
const api = ui.api;
async function peerByName(name: string) {
  const r = await api(`/peers?q=${encodeURIComponent(name)}&limit=200`);
  return r.data.peers.find((p: Peer) => p.name === name);
}
async function setLanguage(lang: 'en' | 'de') {
  await api('/settings/language', 'POST', { language: lang });
}

/** The ui.browser logs each intended 4xx answer as a console error too; those (and only those) are expected here. */
function realProblems(w: WatchedPage): string[] {
  return w.problems.filter((p) => !/^console: Failed to load resource: the server responded with a status of (400|409)/.test(p));
}
async function noSerious(page: Page, where: string) {
  const v = serious(await axe(page));
  assert.deepEqual(v, [], `${where}: ${JSON.stringify(v, null, 1)}`);
}
async function rowNames(page: Page): Promise<string[]> {
  return page.$$eval('table.table tbody tr td:nth-child(2) a', (as) => as.map((a) => a.textContent!.trim()));
}
async function waitRows(page: Page, names: string[]) {
  await page
    .waitForFunction(
      (want) => {
        const got = [...document.querySelectorAll('table.table tbody tr td:nth-child(2) a')].map((a) => a.textContent!.trim());
        return JSON.stringify(got) === JSON.stringify(want);
      },
      names,
      { timeout: 10_000 },
    )
    .catch(async () => assert.deepEqual(await rowNames(page), names));
}
const dialog = (page: Page) => page.locator('dialog[open]');
async function confirmDialog(page: Page, expect: RegExp) {
  const c = page.locator('dialog[open]').filter({ hasText: expect });
  await c.waitFor();
  await c.locator('button.danger').click();
}

test('create a peer through the UI: field errors next to the input, nothing typed lost; the QR code and the config at once; edit', async () => {
  const office = (await api('/peer-groups', 'POST', { name: 'Office' })).data.group;
  const lab = (await api('/peer-groups', 'POST', { name: 'Lab' })).data.group;
  assert.equal((await api('/tags', 'POST', { name: 'web' })).status, 201);
  const w = await adminPage(ui.browser, ui.s.url, { lang: 'en' });
  const { page } = w;
  w.allowHttpError('/api/v1/peers', 400);
  w.allowHttpError('/api/v1/peers', 422); // a refusal the document cannot state (a combination, the stored state)
  w.allowHttpError('/api/v1/peers', 409);
  await page.goto(`${ui.s.url}/peers`);
  await settled(page);
  await page.getByText('No peers yet').waitFor();

  await page.click('.page-header button:has-text("Add peer")');
  await dialog(page).locator('#f-name').waitFor();
  await noSerious(page, 'create dialog');
  // Empty name: the server's field error sits next to the name; the description typed stays.
  await page.fill('#f-description', 'Anna’s laptop');
  await dialog(page).locator('button[type=submit]').click();
  await page.waitForSelector('#f-name-err');
  assert.match((await page.textContent('#f-name-err'))!, /required/);
  assert.equal(await page.getAttribute('#f-name', 'aria-invalid'), 'true');
  assert.equal(await page.inputValue('#f-description'), 'Anna’s laptop');
  assert.equal((await api('/peers')).data.total_all, 0, 'nothing written on a 400');
  await screenshot(page, 'en-1280-peers-create-error');

  await page.fill('#f-name', 'laptop-anna');
  await page.selectOption('#f-group_id', { label: 'Office' });
  await page.click('button[aria-label="Add tag web"]');
  assert.equal(await page.inputValue('#f-tags'), 'web');
  await page.fill('#f-tags', 'web, mobile');
  await dialog(page).locator('button[type=submit]').click();

  // The config and the QR code right away.
  const img = dialog(page).locator('img.qr');
  await img.waitFor();
  assert.match((await img.getAttribute('src'))!, /^data:image\/png;base64,/);
  assert.match((await img.getAttribute('alt'))!, /laptop-anna/);
  const stored = await peerByName('laptop-anna');
  assert.ok(stored, 'the peer exists on the server');
  assert.equal(stored.group_id, office.id);
  assert.equal(stored.tags, 'web,mobile');
  assert.equal(stored.description, 'Anna’s laptop');
  const conf = (await dialog(page).locator('pre').textContent())!;
  assert.match(conf, /\[Interface\]/);
  assert.ok(conf.includes(`${stored.address}/32`), 'the config holds the peer address');
  assert.equal(await dialog(page).locator('a[download]').getAttribute('href'), `/api/v1/peers/${stored.id}/config?download=1`);
  const dl = await page.request.get(`${ui.s.url}/api/v1/peers/${stored.id}/config?download=1`);
  assert.equal(dl.status(), 200);
  assert.match(dl.headers()['content-disposition'] ?? '', /attachment/);
  await noSerious(page, 'created dialog');
  await screenshot(page, 'en-1280-peers-created');
  await dialog(page).locator('button:has-text("Done")').click();
  await waitRows(page, ['laptop-anna']);

  // A duplicate name (any case): 409 with the reason next to the name, what was typed kept.
  await page.click('.page-header button:has-text("Add peer")');
  await page.fill('#f-name', 'LAPTOP-anna');
  await page.fill('#f-dns', '9.9.9.9');
  await dialog(page).locator('button[type=submit]').click();
  await page.waitForSelector('#f-name-err');
  assert.match((await page.textContent('#f-name-err'))!, /already exists/);
  assert.equal(await page.inputValue('#f-name'), 'LAPTOP-anna');
  assert.equal(await page.inputValue('#f-dns'), '9.9.9.9');
  await dialog(page).locator('button:has-text("Cancel")').click();
  assert.equal((await api('/peers')).data.total_all, 1);

  // Edit: the same form, prefilled; the server keeps what was saved.
  await page.click('button[aria-label="Edit laptop-anna"]');
  await dialog(page).locator('#f-name').waitFor();
  assert.equal(await page.inputValue('#f-name'), 'laptop-anna');
  assert.equal(await page.inputValue('#f-tags'), 'web, mobile');
  await noSerious(page, 'edit dialog');
  await page.fill('#f-name', 'laptop-anna-2');
  await page.selectOption('#f-group_id', { label: 'Lab' });
  await page.fill('#f-hostname', 'anna');
  await page.fill('#f-persistent_keepalive', '25');
  await dialog(page).locator('button[type=submit]').click();
  await page.waitForSelector('dialog[open]', { state: 'detached', timeout: 10_000 }).catch(() => undefined);
  await waitRows(page, ['laptop-anna-2']);
  const edited = (await api(`/peers/${stored.id}`)).data.peer;
  assert.equal(edited.name, 'laptop-anna-2');
  assert.equal(edited.group_id, lab.id);
  assert.equal(edited.hostname, 'anna');
  assert.equal(edited.persistent_keepalive, 25);
  assert.equal(edited.tags, 'web,mobile');
  assert.deepEqual(realProblems(w), []);
  await w.context.close();
  await api(`/peers/${stored.id}`, 'DELETE');
});

test('search, filters and sort happen in the API and show in the rows; batch disable, toggle and delete through the UI', async () => {
  const g = (await api('/peer-groups', 'POST', { name: 'Sites' })).data.group;
  const seed = [
    { name: 'f-alpha', tags: 'db' },
    { name: 'f-bravo', tags: 'web', group_id: g.id },
    { name: 'f-charlie', tags: 'db,web', group_id: g.id },
    { name: 'f-delta' },
  ];
  const ids: Record<string, number> = {};
  for (const p of seed) {
    const r = await api('/peers', 'POST', p);
    assert.equal(r.status, 201, JSON.stringify(r.data));
    ids[p.name] = r.data.peer.id;
  }
  const w = await adminPage(ui.browser, ui.s.url, { lang: 'en' });
  const { page } = w;
  await page.goto(`${ui.s.url}/peers?sort=name`);
  await settled(page);
  await waitRows(page, ['f-alpha', 'f-bravo', 'f-charlie', 'f-delta']);

  await page.fill('input[type=search]', 'CHAR');
  await waitRows(page, ['f-charlie']);
  assert.match(page.url(), /q=CHAR/);
  await page.fill('input[type=search]', '');
  await waitRows(page, ['f-alpha', 'f-bravo', 'f-charlie', 'f-delta']);
  // Typed key by key: the first key goes out at once, the rest 250 ms after the last; the box keeps every key.
  await page.locator('input[type=search]').pressSequentially('f-br', { delay: 60 });
  await waitRows(page, ['f-bravo']);
  assert.equal(await page.inputValue('input[type=search]'), 'f-br');
  assert.match(page.url(), /q=f-br(&|$)/);
  await page.fill('input[type=search]', '');
  await waitRows(page, ['f-alpha', 'f-bravo', 'f-charlie', 'f-delta']);

  await page.selectOption('select[aria-label="Tag"]', 'db');
  await waitRows(page, ['f-alpha', 'f-charlie']);
  await page.selectOption('select[aria-label="Group"]', String(g.id));
  await waitRows(page, ['f-charlie']);
  assert.match(page.url(), new RegExp(`group_id=${g.id}`));
  await page.selectOption('select[aria-label="Tag"]', '');
  await waitRows(page, ['f-bravo', 'f-charlie']);
  await page.selectOption('select[aria-label="Group"]', 'none');
  await waitRows(page, ['f-alpha', 'f-delta']);
  await page.selectOption('select[aria-label="Group"]', '');
  await page.selectOption('select[aria-label="Connection"]', 'true');
  await page.getByText('No peer matches').waitFor();
  await page.click('button:has-text("Clear filters")');
  await waitRows(page, ['f-alpha', 'f-bravo', 'f-charlie', 'f-delta']);

  // Sort: the name header toggles ascending/descending (the API sorts).
  await page.click('th button.sort:has-text("Name")');
  await waitRows(page, ['f-delta', 'f-charlie', 'f-bravo', 'f-alpha']);
  assert.match(page.url(), /sort=-name/);
  assert.equal(await page.getAttribute('th[aria-sort="descending"]', 'aria-sort'), 'descending');
  await page.click('th button.sort:has-text("Name")');
  await waitRows(page, ['f-alpha', 'f-bravo', 'f-charlie', 'f-delta']);

  // Batch disable of two selected rows.
  await page.check('input[aria-label="Select f-alpha"]');
  await page.check('input[aria-label="Select f-charlie"]');
  await page.getByText('2 selected').first().waitFor();
  await page.click('button:has-text("Disable selected")');
  await page.waitForFunction(() => !document.querySelector('.toolbar.batch'));
  assert.equal((await api(`/peers/${ids['f-alpha']}`)).data.peer.enabled, 0);
  assert.equal((await api(`/peers/${ids['f-charlie']}`)).data.peer.enabled, 0);
  assert.equal((await api(`/peers/${ids['f-bravo']}`)).data.peer.enabled, 1);
  await page.selectOption('select[aria-label="State"]', 'false');
  await waitRows(page, ['f-alpha', 'f-charlie']);
  assert.match((await page.textContent('table.table tbody'))!, /disabled/);

  // Toggle one back on from its row.
  await page.click('button[aria-label="Enable f-alpha"]');
  await waitRows(page, ['f-charlie']);
  assert.equal((await api(`/peers/${ids['f-alpha']}`)).data.peer.enabled, 1);
  await page.selectOption('select[aria-label="State"]', '');
  await waitRows(page, ['f-alpha', 'f-bravo', 'f-charlie', 'f-delta']);

  // Delete asks once.
  await page.click('button[aria-label="Delete f-bravo"]');
  await confirmDialog(page, /Delete peer f-bravo\?/);
  await waitRows(page, ['f-alpha', 'f-charlie', 'f-delta']);
  assert.equal((await api(`/peers/${ids['f-bravo']}`)).status, 404);
  w.allowHttpError(`/api/v1/peers/${ids['f-bravo']}`, 404);

  // Batch delete.
  await page.check('input[aria-label="Select all"]');
  await page.click('button:has-text("Delete selected")');
  await confirmDialog(page, /Delete 3 peers\?/);
  await page.getByText('No peers yet').waitFor();
  assert.equal((await api('/peers')).data.total_all, 0);
  assert.deepEqual(realProblems(w), []);
  await w.context.close();
});

test('the list updates live: a peer created, changed and deleted elsewhere shows without a reload', async () => {
  const w = await adminPage(ui.browser, ui.s.url, { lang: 'en' });
  const { page } = w;
  await page.goto(`${ui.s.url}/peers`);
  await settled(page);
  await page.evaluate(() => {
    (window as Window & { __noReload?: unknown }).__noReload = true;
  });
  const p = (await api('/peers', 'POST', { name: 'live-one' })).data.peer;
  await waitRows(page, ['live-one']);
  await api(`/peers/${p.id}`, 'PUT', { name: 'live-renamed' });
  await waitRows(page, ['live-renamed']);
  await api(`/peers/${p.id}/toggle`, 'PUT');
  await page.locator('table.table tbody').getByText('disabled').waitFor();
  await api(`/peers/${p.id}`, 'DELETE');
  await page.getByText('No peers yet').waitFor();
  assert.equal(await page.evaluate(() => (window as Window & { __noReload?: unknown }).__noReload), true, 'the page was not reloaded');
  assert.deepEqual(realProblems(w), []);
  await w.context.close();
});

test('detail page: facts, config and QR code on demand, traffic periods, live changes; dialogs and detail screenshots en/de at 1280 and 360 px, axe clean', async () => {
  const g = (await api('/peer-groups', 'POST', { name: 'Detail group' })).data.group;
  const p = (await api('/peers', 'POST', { name: 'detail-peer', tags: 'web,db', group_id: g.id, description: 'first line' })).data.peer;
  for (const lang of ['en', 'de'] as const) {
    await setLanguage(lang);
    for (const width of [1280, 360]) {
      const w = await adminPage(ui.browser, ui.s.url, { lang, width });
      const { page } = w;
      await page.goto(`${ui.s.url}/peers/${p.id}`);
      await settled(page);
      assert.equal((await page.textContent('#page-title'))!.trim(), 'detail-peer');
      const facts = (await page.textContent('dl.facts'))!;
      assert.ok(facts.includes(p.address), 'address shown');
      assert.ok(facts.includes(p.public_key), 'public key shown');
      // The group's name comes from its own request (GET /peer-groups), which may still be on its way.
      await page
        .waitForFunction(() => document.querySelector('dl.facts')?.textContent?.includes('Detail group'), undefined, { timeout: 10_000 })
        .catch(() => undefined);
      assert.ok((await page.textContent('dl.facts'))!.includes('Detail group'), 'group shown');
      await page.click(lang === 'en' ? 'button:has-text("Show configuration")' : 'button:has-text("Konfiguration und QR-Code zeigen")');
      const img = page.locator('img.qr');
      await img.waitFor();
      assert.match((await img.getAttribute('src'))!, /^data:image\/png;base64,/);
      assert.match((await page.textContent('.peer-config pre'))!, /\[Interface\]/);
      await page.click('#tab-7d');
      await page.waitForSelector('#tab-7d[aria-selected="true"]');
      await settled(page);
      await page.waitForSelector('.chart .uplot');
      await noSerious(page, `${lang} ${width} detail`);
      await screenshot(page, `${lang}-${width}-peers-detail`);

      if (lang === 'en' && width === 1280) {
        // Live: a change made elsewhere shows without a reload.
        await api(`/peers/${p.id}`, 'PUT', { description: 'changed elsewhere' });
        await page.getByText('changed elsewhere').waitFor();
      }

      await page.click('.page-header button:has-text("' + (lang === 'en' ? 'Edit' : 'Bearbeiten') + '")');
      await dialog(page).locator('#f-name').waitFor();
      await noSerious(page, `${lang} ${width} edit dialog`);
      await screenshot(page, `${lang}-${width}-peers-edit`);
      await page.keyboard.press('Escape');

      await page.goto(`${ui.s.url}/peers`);
      await settled(page);
      await page.click('.page-header button.primary');
      await dialog(page).locator('#f-name').waitFor();
      await noSerious(page, `${lang} ${width} create dialog`);
      await screenshot(page, `${lang}-${width}-peers-create`);
      await page.keyboard.press('Escape');
      if (width === 360) {
        // The table stays usable at 360 px: no horizontal overflow of the page.
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
        assert.ok(overflow <= 1, `no horizontal scrolling at 360 px (${overflow}px)`);
      }
      assert.deepEqual(realProblems(w), [], `${lang} ${width}`);
      await w.context.close();
    }
  }
  await setLanguage('en');
});

test('a one-time download link: made on the detail page and copied, the recipient downloads the config once, then the link says it was used (en/de, 1280/390)', async () => {
  const p = (await api('/peers', 'POST', { name: 'link-recipient' })).data.peer;
  const config = (await api(`/peers/${p.id}/config`)).data as string;
  for (const [lang, width] of [
    ['en', 1280],
    ['de', 390],
  ] as const) {
    await setLanguage(lang);
    const w = await adminPage(ui.browser, ui.s.url, { lang, width });
    const { page } = w;
    await w.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: ui.s.url });
    await page.goto(`${ui.s.url}/peers/${p.id}`);
    await settled(page);
    const card = page.locator('.config-links');
    await card.locator('input[type=text]').fill(lang === 'en' ? 'for Ana' : 'für Ana');
    await card.locator('button[type=submit]').click();
    const shown = card.locator('[data-testid=config-link-url]');
    await shown.waitFor();
    const url = (await shown.textContent())!.trim();
    assert.match(url, /\/c\/gthcl_[A-Za-z0-9_-]{43}$/);
    await card.locator('.secret-once button').click();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), url, 'Copy puts the link on the clipboard');
    await card.locator('tr[data-link-state=active]').first().waitFor();
    await noSerious(page, `${lang} ${width} config links`);
    await screenshot(page, `${lang}-${width}-peers-config-link`);

    // the recipient: a browser without a session opens the link and downloads
    const visitor = await ui.browser.newContext({ locale: lang === 'en' ? 'en-US' : 'de-DE', viewport: { width, height: 800 }, acceptDownloads: true });
    const vp = await visitor.newPage();
    await vp.goto(url);
    assert.ok((await vp.textContent('main'))!.includes('link-recipient'));
    await screenshot(vp, `${lang}-${width}-config-link-page`);
    const [download] = await Promise.all([vp.waitForEvent('download'), vp.click('button[type=submit]')]);
    const file = await download.path();
    assert.equal(readFileSync(file!, 'utf8'), config, 'the download is the peer config');
    const again = await vp.goto(url);
    assert.equal(again?.status(), 410);
    assert.match((await vp.textContent('main'))!, lang === 'en' ? /already used/ : /bereits verwendet/);
    await screenshot(vp, `${lang}-${width}-config-link-used`);
    await visitor.close();
    // the admin's list shows it used, live
    await card.locator('tr[data-link-state=used]').first().waitFor();
    assert.deepEqual(realProblems(w), [], `${lang} ${width}`);
    await w.context.close();
  }
  await setLanguage('en');
});

test('the peer list draws each peer’s live transfer rate as a sparkline from the live traffic events (1280 and 390 px)', async () => {
  const p = (await api('/peers', 'POST', { name: 'spark-peer' })).data.peer;
  for (const width of [1280, 390]) {
    const w = await adminPage(ui.browser, ui.s.url, { lang: 'en', width });
    const { page } = w;
    await page.goto(`${ui.s.url}/peers?q=spark-peer`);
    await settled(page);
    await page.getByText('spark-peer').first().waitFor();
    // what the WireGuard poller emits after each poll: rates of the peers that moved data
    for (const [i, rate] of [1000, 4000, 2500].entries()) {
      await ui.s.deps.events.emit(
        {
          type: 'peer_traffic',
          interval_s: 10,
          rx_rate: rate,
          tx_rate: 0,
          peers: [{ peer_id: p.id, rx_rate: rate, tx_rate: 0, total_rx: 10_000 * (i + 1), total_tx: 0 }],
        },
        { transient: true },
      );
      await page.waitForFunction(
        (n) => (document.querySelector('svg.sparkline polyline')?.getAttribute('points') ?? '').split(' ').length === n,
        i < 1 ? 2 : i + 1,
        {
          timeout: 10_000,
        },
      );
    }
    assert.equal(await page.getAttribute('svg.sparkline', 'aria-label'), 'Live rate: 2.44 KB/s');
    await screenshot(page, `en-${width}-peers-sparkline`);
    assert.deepEqual(realProblems(w), []);
    await w.context.close();
  }
});
