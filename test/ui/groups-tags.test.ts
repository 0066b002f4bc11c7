// Peer groups and tags in a real browser, through the UI alone (the API seeds and checks): create
// with the server's field errors next to the input, edit, counts that link to the filtered peers
// list, delete that says what it takes away; axe-core and screenshots of the dialogs (en/de,
// 1280/360).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { adminPage, axe, screenshot, serious, settled, uiServer, type WatchedPage } from '../lib/browser.js';
import type { Group, Peer, Tag } from '../../sidecar/test/lib/protocol.js';

const ui = uiServer();
const api = ui.api;
/** The ui.browser logs each intended 4xx answer as a console error too; those (and only those) are expected here. */
const realProblems = (w: WatchedPage) =>
  w.problems.filter((p) => !/^console: Failed to load resource: the server responded with a status of (400|409)/.test(p));
async function noSerious(page: Page, where: string) {
  const v = serious(await axe(page));
  assert.deepEqual(v, [], `${where}: ${JSON.stringify(v, null, 1)}`);
}
const dialog = (page: Page) => page.locator('dialog[open]');
async function confirmDialog(page: Page, expect: RegExp) {
  const c = page.locator('dialog[open]').filter({ hasText: expect });
  await c.waitFor();
  await c.locator('button.danger').click();
}

test('groups: create with field errors next to the name, edit, the count links to the filtered peers list, delete says how many peers lose the group', async () => {
  const w = await adminPage(ui.browser, ui.s.url, { lang: 'en' });
  const { page } = w;
  w.allowHttpError('/api/v1/peer-groups', 400);
  w.allowHttpError('/api/v1/peer-groups', 422); // a refusal the document cannot state (a combination, the stored state)
  w.allowHttpError('/api/v1/peer-groups', 409);
  await page.goto(`${ui.s.url}/groups`);
  await settled(page);
  await page.getByText('No groups yet').waitFor();
  await page.click('.page-header button:has-text("Add group")');
  await dialog(page).locator('#f-name').waitFor();
  await page.fill('#f-description', 'all desks');
  await page.fill('#f-color', 'blue');
  await dialog(page).locator('button[type=submit]').click();
  await page.waitForSelector('#f-name-err');
  assert.match((await page.textContent('#f-name-err'))!, /required/);
  assert.match((await page.textContent('#f-color-err'))!, /hex colour/);
  assert.equal(await page.inputValue('#f-description'), 'all desks');
  assert.equal((await api('/peer-groups')).data.groups.length, 0, 'nothing written on a 400');
  await page.fill('#f-name', 'Office');
  await page.fill('#f-color', '#3b82f6');
  await dialog(page).locator('button[type=submit]').click();
  await page.locator('table.table').getByText('Office').waitFor();
  const office = (await api('/peer-groups')).data.groups.find((g: Group) => g.name === 'Office');
  assert.deepEqual({ color: office!.color, description: office!.description }, { color: '#3b82f6', description: 'all desks' });

  // Duplicate (any case): the reason next to the name.
  await page.click('.page-header button:has-text("Add group")');
  await page.fill('#f-name', 'OFFICE');
  await dialog(page).locator('button[type=submit]').click();
  await page.waitForSelector('#f-name-err');
  assert.match((await page.textContent('#f-name-err'))!, /already exists/);
  assert.equal(await page.inputValue('#f-name'), 'OFFICE');
  await dialog(page).locator('button:has-text("Cancel")').click();

  // Edit.
  await page.click('button[aria-label="Edit Office"]');
  await dialog(page).locator('#f-name').waitFor();
  assert.equal(await page.inputValue('#f-name'), 'Office');
  await page.fill('#f-name', 'Head office');
  await page.fill('#f-color', '');
  await dialog(page).locator('button[type=submit]').click();
  await page.locator('table.table').getByText('Head office').waitFor();
  const edited = (await api(`/peer-groups/${office!.id}`)).data.group;
  assert.equal(edited.name, 'Head office');
  assert.equal(edited.color, null);

  // Counts (live) link to the peers list filtered by the group.
  const a = (await api('/peers', 'POST', { name: 'grp-a', group_id: office!.id })).data.peer;
  await api('/peers', 'POST', { name: 'grp-b' });
  const link = page.locator(`a[href="/peers?group_id=${office!.id}"]`);
  await page.waitForFunction((id) => document.querySelector(`a[href="/peers?group_id=${id}"]`)?.textContent?.includes('1 peers'), office!.id);
  await link.click();
  await page.waitForURL((u) => u.pathname === '/peers' && u.searchParams.get('group_id') === String(office!.id));
  await settled(page);
  assert.deepEqual(await page.$$eval('table.table tbody tr td:nth-child(2) a', (as) => as.map((x) => x.textContent)), ['grp-a']);
  assert.equal(await page.inputValue('select[aria-label="Group"]'), String(office!.id));

  // Delete: the question says how many peers lose their group.
  await page.goto(`${ui.s.url}/groups`);
  await settled(page);
  await page.click('button[aria-label="Delete Head office"]');
  await confirmDialog(page, /Delete group Head office\? Its 1 peers stay/);
  await page.getByText('No groups yet').waitFor();
  assert.equal((await api(`/peer-groups/${office!.id}`)).status, 404);
  w.allowHttpError(`/api/v1/peer-groups/${office!.id}`, 404);
  assert.equal((await api(`/peers/${a.id}`)).data.peer.group_id, null);
  assert.deepEqual(realProblems(w), []);
  await w.context.close();
  for (const p of (await api('/peers')).data.peers) await api(`/peers/${p.id}`, 'DELETE');
});

test('tags: register with field errors, counts of names found on peers link to the filtered list, rename, delete says how many peers it is stripped from', async () => {
  const w = await adminPage(ui.browser, ui.s.url, { lang: 'en' });
  const { page } = w;
  w.allowHttpError('/api/v1/tags', 400);
  w.allowHttpError('/api/v1/tags', 422); // a refusal the document cannot state (a combination, the stored state)
  await page.goto(`${ui.s.url}/tags`);
  await settled(page);
  await page.getByText('No tags yet').waitFor();
  await page.click('.page-header button:has-text("Add tag")');
  await page.fill('#f-name', 'bad,name');
  await dialog(page).locator('button[type=submit]').click();
  await page.waitForSelector('#f-name-err');
  assert.match((await page.textContent('#f-name-err'))!, /comma/);
  assert.equal(await page.inputValue('#f-name'), 'bad,name');
  await page.fill('#f-name', 'web');
  await dialog(page).locator('button[type=submit]').click();
  await page.locator('table.table').getByText('web').waitFor();
  const reg = (await api('/tags')).data.tags;
  assert.deepEqual(
    reg.map((x: Tag) => [x.name, x.registered, x.peer_count]),
    [['web', true, 0]],
  );

  // Peers carrying tags (one only on peers) show up live with their counts.
  await api('/peers', 'POST', { name: 'tag-a', tags: 'web,db' });
  await api('/peers', 'POST', { name: 'tag-b', tags: 'WEB' });
  await page.waitForFunction(() => document.querySelector('a[href="/peers?tag=web"]')?.textContent?.includes('2 peers'));
  await page.locator('table.table').getByText('only on peers').waitFor();
  await page.click('a[href="/peers?tag=db"]');
  await page.waitForURL((u) => u.pathname === '/peers' && u.searchParams.get('tag') === 'db');
  await settled(page);
  assert.deepEqual(await page.$$eval('table.table tbody tr td:nth-child(2) a', (as) => as.map((x) => x.textContent)), ['tag-a']);

  await page.goto(`${ui.s.url}/tags`);
  await settled(page);
  // Rename through the UI: a name another tag has is refused next to the input (what was typed
  // stays), then a free name replaces the old one on every peer, in place.
  w.allowHttpError('/api/v1/tags/db', 409);
  await page.click('button[aria-label="Rename db"]');
  await page.fill('dialog[open] #f-name', 'WEB');
  await page.click('dialog[open] button[type=submit]');
  await page.waitForSelector('dialog[open] #f-name-err');
  assert.equal(await page.inputValue('dialog[open] #f-name'), 'WEB');
  assert.equal((await api('/peers?sort=name')).data.peers[0].tags, 'web,db', 'nothing changed on a refused rename');
  await page.fill('dialog[open] #f-name', 'database');
  await page.click('dialog[open] button[type=submit]');
  await page.waitForFunction(() => !!document.querySelector('a[href="/peers?tag=database"]'));
  assert.equal((await api('/peers?sort=name')).data.peers[0].tags, 'web,database');
  await page.click('button[aria-label="Delete web"]');
  await confirmDialog(page, /Delete tag web\? It is removed from 2 peers/);
  await page.waitForFunction(() => !document.querySelector('a[href="/peers?tag=web"]'));
  const peers = (await api('/peers?sort=name')).data.peers;
  assert.deepEqual(
    peers.map((p: Peer) => [p.name, p.tags]),
    [
      ['tag-a', 'database'],
      ['tag-b', ''],
    ],
  );
  assert.deepEqual(
    (await api('/tags')).data.tags.map((x: Tag) => x.name),
    ['database'],
  );
  assert.deepEqual(realProblems(w), []);
  await w.context.close();
});

test('group and tag dialogs: axe clean, screenshots en/de at 1280 and 360 px', async () => {
  await api('/peer-groups', 'POST', { name: 'Screens', color: '#16a34a', description: 'for the screenshots' });
  for (const lang of ['en', 'de'] as const) {
    await api('/settings/language', 'POST', { language: lang });
    for (const width of [1280, 360]) {
      const w = await adminPage(ui.browser, ui.s.url, { lang, width });
      const { page } = w;
      await page.goto(`${ui.s.url}/groups`);
      await settled(page);
      await page.click(`button[aria-label="${lang === 'en' ? 'Edit Screens' : 'Screens bearbeiten'}"]`);
      await dialog(page).locator('#f-name').waitFor();
      await noSerious(page, `${lang} ${width} group edit`);
      await screenshot(page, `${lang}-${width}-groups-edit`);
      await page.keyboard.press('Escape');
      await page.goto(`${ui.s.url}/tags`);
      await settled(page);
      await page.click('.page-header button.primary');
      await dialog(page).locator('#f-name').waitFor();
      await noSerious(page, `${lang} ${width} tag create`);
      await screenshot(page, `${lang}-${width}-tags-create`);
      await page.keyboard.press('Escape');
      assert.deepEqual(realProblems(w), [], `${lang} ${width}`);
      await w.context.close();
    }
  }
  await api('/settings/language', 'POST', { language: 'en' });
});
