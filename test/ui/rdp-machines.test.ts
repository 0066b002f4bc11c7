// Desktop-client tokens and their machines in a real browser: a client-scope token with a machine
// registered through the client API (the real POST /client/register with the fingerprint header)
// shows a "Machines" button (tokens of other scopes do not); its dialog lists the machine with its
// platform, version and peer; the split-tunnel override is refused next to its input for a bad range,
// then stored, then reset to the server default; forgetting the machine (confirmed once) removes it
// and keeps its peer. Axe and screenshots of the dialog (en/de, 1280/360).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { adminPage, axe, screenshot, serious, settled, uiServer, type WatchedPage } from '../lib/browser.js';
import { bearer } from '../../sidecar/test/lib/server.js';
import { waitFor } from '../lib/wait.js';
import type { Token } from '../../sidecar/test/lib/protocol.js';

const ui = uiServer({ GATEHOUSE_RATE_LIMIT_LOGIN: '100000', GATEHOUSE_RATE_LIMIT_ADMIN: '100000' });
const api = ui.api;
const dialog = (page: Page) => page.locator('dialog[open]');
const realProblems = (w: WatchedPage) => w.problems.filter((p) => !/^console: Failed to load resource: the server responded with a status of 400/.test(p));
async function noSerious(page: Page, where: string) {
  const v = serious(await axe(page));
  assert.deepEqual(v, [], `${where}: ${JSON.stringify(v, null, 1)}`);
}

test('client tokens: registered machines, split-tunnel override, forget a machine — through the UI', async () => {
  const made = (await api('/tokens', 'POST', { name: 'Alice laptop', scopes: ['client'] })).data;
  const other = (await api('/tokens', 'POST', { name: 'Backup script', scopes: ['read-only'] })).data;
  assert.ok(made.token && other.token);
  const reg = await ui.s.req('/api/v1/client/register', {
    method: 'POST',
    json: { hostname: 'alice-t14', platform: 'linux-x64', client_version: '0.3.1' },
    headers: { ...bearer(made.token), 'X-Machine-Fingerprint': 'machine-fp-alice-0001' },
  });
  assert.equal(reg.status, 201, JSON.stringify(reg.data));
  const peerId = reg.data.machine.peer_id;
  assert.ok(peerId);

  const w = await adminPage(ui.browser, ui.s.url, { lang: 'en' });
  const { page } = w;
  w.allowHttpError('/api/v1/tokens', 400);
  w.allowHttpError('/api/v1/tokens', 422); // a refusal the document cannot state (a combination, the stored state)
  await page.goto(`${ui.s.url}/tokens`);
  await settled(page);
  assert.equal(await page.locator('button[aria-label="Machines of Backup script"]').count(), 0, 'only client tokens have machines');
  await page.click('button[aria-label="Machines of Alice laptop"]');
  const d = dialog(page);
  await d.locator('tr:has-text("alice-t14")').waitFor();
  assert.match((await d.locator('tr:has-text("alice-t14")').textContent())!, /linux-x64 · 0\.3\.1/);

  // Split tunnel: a bad range refused next to the input, then stored, then back to the default.
  await d.locator('#f-override').check();
  await d.locator('#f-split_tunnel').fill('10.20.0.0/16\nnot-a-range');
  await d.locator('form.split-tunnel button[type=submit]').click();
  await d.locator('.split-tunnel .field-error, .split-tunnel [role=alert]').first().waitFor();
  assert.equal((await api('/tokens')).data.tokens.find((x) => x.id === made.record.id)!.split_tunnel, null, 'nothing written on a 400');
  await d.locator('#f-split_tunnel').fill('10.20.0.0/16\n192.168.8.0/24');
  await d.locator('form.split-tunnel button[type=submit]').click();
  await page.getByText('Split tunnel of Alice laptop saved').waitFor();
  assert.deepEqual((await api('/tokens')).data.tokens.find((x) => x.id === made.record.id)!.split_tunnel, ['10.20.0.0/16', '192.168.8.0/24']);
  await noSerious(page, 'machines dialog');
  await screenshot(page, 'en-1280-tokens-machines');
  await d.locator('#f-override').uncheck();
  await d.locator('form.split-tunnel button[type=submit]').click();
  let tk: Token | undefined;
  await waitFor(
    async () => {
      tk = (await api('/tokens')).data.tokens.find((x: Token) => x.id === made.record.id);
      return tk!.split_tunnel === null;
    },
    5000,
    { intervalMs: 100, what: 'the split tunnel back to the server default' },
  );
  assert.equal(tk!.split_tunnel, null, 'back to the server default');

  // Forget the machine (its peer stays).
  await d.locator('button[aria-label="Forget alice-t14"]').click();
  await page
    .locator('dialog[open]')
    .filter({ hasText: /Forget the machine alice-t14\?/ })
    .locator('button.danger')
    .click();
  await page.getByText('Machine alice-t14 forgotten').waitFor();
  await dialog(page)
    .getByText(/No machine has registered with this token yet/)
    .waitFor();
  assert.deepEqual((await api(`/tokens/${made.record.id}/machines`)).data.machines, []);
  assert.equal((await api(`/peers/${peerId}`)).status, 200, 'the peer is kept');
  assert.deepEqual(realProblems(w), []);
  await w.context.close();

  // Register again and take the screenshots of the dialog with a machine.
  const again = await ui.s.req('/api/v1/client/register', {
    method: 'POST',
    json: { hostname: 'alice-t14', platform: 'linux-x64', client_version: '0.3.1' },
    headers: { ...bearer(made.token), 'X-Machine-Fingerprint': 'machine-fp-alice-0001' },
  });
  assert.ok([200, 201].includes(again.status), JSON.stringify(again.data));
  for (const lang of ['en', 'de'] as const) {
    // The app speaks the signed-in user's language.
    assert.equal((await api('/settings/language', 'POST', { language: lang })).status, 200);
    for (const width of [1280, 360]) {
      const v = await adminPage(ui.browser, ui.s.url, { lang, width });
      assert.equal(await v.page.evaluate(() => document.documentElement.lang), lang);
      await v.page.goto(`${ui.s.url}/tokens?machines=${made.record.id}`);
      await settled(v.page);
      await dialog(v.page).locator('tr:has-text("alice-t14")').waitFor();
      await screenshot(v.page, `${lang}-${width}-tokens-machines`);
      await noSerious(v.page, `${lang} ${width} machines`);
      assert.deepEqual(v.problems, [], `${lang} ${width}`);
      await v.context.close();
    }
  }
});
