// Backup and restore in a real browser, through the UI alone (the API only seeds and checks): an
// auto-backup job created in its dialog (the server's field error next to the input, nothing typed
// lost), run at once with its result shown, a backup downloaded with a passphrase, restored in merge
// mode after its dry-run list was shown and confirmed, the job deleted (confirmed once); axe and
// screenshots of the job dialog and the restore preview (en/de × 1280/360).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { adminPage, axe, screenshot, serious, settled, uiServer, type WatchedPage } from '../lib/browser.js';
import type { Peer } from '../../sidecar/test/lib/protocol.js';

const PASS = 'ui backup passphrase 1';
const ui = uiServer({ GATEHOUSE_RATE_LIMIT_LOGIN: '100000', GATEHOUSE_RATE_LIMIT_ADMIN: '100000' });
const api = ui.api;
const dialog = (page: Page) => page.locator('dialog[open]');
const realProblems = (w: WatchedPage) => w.problems.filter((p) => !/^console: Failed to load resource: the server responded with a status of 400/.test(p));
async function noSerious(page: Page, where: string) {
  const v = serious(await axe(page));
  assert.deepEqual(v, [], `${where}: ${JSON.stringify(v, null, 1)}`);
}

test('backup: job create/run/delete, download, restore with the dry-run list confirmed — through the UI', async () => {
  const w = await adminPage(ui.browser, ui.s.url, { lang: 'en' });
  const { page } = w;
  w.allowHttpError('/api/v1/settings/autobackup', 400);
  w.allowHttpError('/api/v1/settings/autobackup', 422); // a refusal the document cannot state (a combination, the stored state)
  await page.goto(`${ui.s.url}/settings/backup`);
  await settled(page);
  await page.getByText('No automatic backups yet').waitFor();

  // a job: a bad schedule is refused next to its input, nothing written, nothing typed lost
  await page.click('button:has-text("Create job")');
  await dialog(page).locator('#f-name').waitFor();
  await page.fill('#f-name', 'nightly');
  await page.fill('#f-schedule', 'sometimes');
  await page.fill('#f-passphrase', PASS);
  await page.fill('#f-passphrase_confirm', PASS);
  await dialog(page).locator('button[type=submit]').click();
  await page.waitForSelector('#f-schedule-err');
  assert.match((await page.textContent('#f-schedule-err'))!, /cron/);
  assert.equal(await page.inputValue('#f-name'), 'nightly');
  assert.equal((await api('/settings/autobackup')).data.jobs.length, 0);
  await page.fill('#f-schedule', 'daily');
  await page.fill('#f-keep', '3');
  await dialog(page).locator('button[type=submit]').click();
  await page.locator('tr[data-job="nightly"]').waitFor();
  const jobs = (await api('/settings/autobackup')).data.jobs;
  assert.equal(jobs.length, 1);
  assert.equal(jobs[0].keep, 3);
  assert.equal(jobs[0].schedule, 'daily');

  // run now: the result shows in the row
  await page.locator('tr[data-job="nightly"] button:has-text("Run now")').click();
  await page.locator('tr[data-job="nightly"] .badge:has-text("ok")').waitFor();
  assert.equal((await api('/settings/autobackup')).data.jobs[0].last_run!.status, 'ok');

  // a peer exists when the backup is made, and is deleted afterwards
  const peer = (await api('/peers', 'POST', { name: 'alpha' })).data.peer;
  await page.fill('#f-download_passphrase', PASS);
  await page.fill('#f-download_passphrase_confirm', PASS);
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('button:has-text("Download")')]);
  assert.match(download.suggestedFilename(), /^gatehouse-backup-\d{8}T\d{9}Z\.json$/);
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'gh-ui-backup-')), download.suggestedFilename());
  await download.saveAs(file);
  assert.equal(JSON.parse(fs.readFileSync(file, 'utf8')).format, 'gatehouse-backup');
  assert.equal((await api(`/peers/${peer.id}`, 'DELETE')).status, 200);

  // restore (merge): the preview lists the peer to be created; nothing written until confirmed
  await page.setInputFiles('#f-file', file);
  await page.fill('#f-restore_passphrase', PASS);
  await page.selectOption('#f-restore_mode', 'merge');
  await page.click('button:has-text("Preview")');
  const row = page.locator('tr[data-section="peers"]');
  await row.waitFor();
  assert.match((await row.textContent())!, /1: alpha/);
  assert.equal((await api('/peers')).data.peers.length, 0, 'the preview wrote nothing');
  await page.click('button:has-text("Restore now")');
  const c = dialog(page).filter({ hasText: /Restore this backup \(merge\)/ });
  await c.waitFor();
  await c.locator('button.danger').click();
  await page.getByText('Backup restored').waitFor();
  assert.deepEqual(
    (await api('/peers')).data.peers.map((p: Peer) => p.name),
    ['alpha'],
  );

  // delete the job, confirmed once
  await page.locator('tr[data-job="nightly"] button:has-text("Delete")').click();
  const d = dialog(page).filter({ hasText: /Delete the job nightly/ });
  await d.waitFor();
  await d.locator('button.danger').click();
  await page.getByText('No automatic backups yet').waitFor();
  assert.equal((await api('/settings/autobackup')).data.jobs.length, 0);
  assert.deepEqual(realProblems(w), []);
  await noSerious(page, 'screen');
  await w.context.close();

  // screenshots and axe: the job dialog (S3 fields) and the restore preview, en/de × 1280/360
  for (const lang of ['en', 'de'] as const) {
    for (const width of [1280, 360]) {
      const v = await adminPage(ui.browser, ui.s.url, { lang, width });
      await v.page.goto(`${ui.s.url}/settings/backup`);
      await settled(v.page);
      await v.page.setInputFiles('#f-file', file);
      await v.page.fill('#f-restore_passphrase', PASS);
      await v.page.locator('#f-restore_passphrase').press('Enter');
      await v.page.locator('table.table caption').waitFor();
      await screenshot(v.page, `${lang}-${width}-backup-preview`);
      await noSerious(v.page, `${lang} ${width} preview`);
      await v.page.click('button.btn.primary[type=button]');
      await dialog(v.page).locator('#f-name').waitFor();
      await v.page.selectOption('#f-target', 's3');
      await dialog(v.page).locator('#f-s3-bucket').waitFor();
      await screenshot(v.page, `${lang}-${width}-backup-job`);
      await noSerious(v.page, `${lang} ${width} job dialog`);
      const wide = await v.page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      assert.ok(wide <= 0, `${lang} ${width}: page ${wide}px wider than the window`);
      assert.deepEqual(v.problems, [], `${lang} ${width}`);
      await v.context.close();
    }
  }
});
