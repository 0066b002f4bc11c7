// Webhooks in a real browser, through the UI alone (the API and the database only check): create
// with the server's field errors next to the inputs and event kinds as checkboxes, the test button
// with its result (a real receiver verifies the signature), edit (the secret kept), disable and
// enable, the delivery log of a real event and of a failed test with the status filter, delete
// (confirmed once); axe and screenshots of the dialog and the detail page (en/de, 1280/360).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { adminPage, axe, screenshot, serious, settled, uiServer, type WatchedPage } from '../lib/browser.js';
import { startReceiver, type Receiver } from '../../sidecar/test/lib/webhook-receiver.js';
import type { Row } from '../../sidecar/test/lib/rows.js';

const SECRET = 'ui-test-secret-0123456789';
const ui = uiServer({ GATEHOUSE_WEBHOOK_ALLOW_PRIVATE: 'true', GATEHOUSE_RATE_LIMIT_LOGIN: '100000' });
const api = ui.api;
let rx: Receiver;
before(async () => {
  rx = await startReceiver(SECRET);
});
after(async () => {
  await ui.s.deps.webhookQueue.stop();
  await rx.close();
});
const dialog = (page: Page) => page.locator('dialog[open]');
const realProblems = (w: WatchedPage) => w.problems.filter((p) => !/^console: Failed to load resource: the server responded with a status of 400/.test(p));
async function noSerious(page: Page, where: string) {
  const v = serious(await axe(page));
  assert.deepEqual(v, [], `${where}: ${JSON.stringify(v, null, 1)}`);
}

test('webhooks: create, test, edit, disable, delivery log, delete — through the UI', async () => {
  ui.s.deps.webhookQueue.start();
  const w = await adminPage(ui.browser, ui.s.url, { lang: 'en' });
  const { page } = w;
  w.allowHttpError('/api/v1/webhooks', 400);
  w.allowHttpError('/api/v1/webhooks', 422); // a refusal the document cannot state (a combination, the stored state)
  await page.goto(`${ui.s.url}/webhooks`);
  await settled(page);
  await page.getByText('No webhooks yet').waitFor();

  // Create: an empty form gets the reasons next to the inputs, nothing written, nothing typed lost.
  await page.click('.page-header button:has-text("Add webhook")');
  await dialog(page).locator('#f-name').waitFor();
  await dialog(page).getByText('login_failed').waitFor();
  await page.fill('#f-name', '   ');
  await page.fill('#f-url', 'ftp://nowhere');
  await page.fill('#f-secret', 'short');
  await dialog(page).locator('button[type=submit]').click();
  await page.waitForSelector('#f-name-err');
  assert.match((await page.textContent('#f-url-err'))!, /http/);
  assert.match((await page.textContent('#f-name-err'))!, /required/);
  assert.match((await page.textContent('#f-secret-err'))!, /16/);
  assert.ok(await page.isVisible('#f-events-err'));
  assert.equal(await page.inputValue('#f-url'), 'ftp://nowhere');
  assert.equal((await api('/webhooks')).data.webhooks.length, 0, 'nothing written on a 400');
  await dialog(page).locator('button:has-text("Generate a secret")').click();
  assert.match(await page.inputValue('#f-secret'), /^[0-9a-f]{48}$/);
  await page.fill('#f-name', 'Alerts');
  await page.fill('#f-url', rx.url);
  await page.fill('#f-secret', SECRET);
  await page.fill('#f-retry_count', '2');
  await dialog(page).locator('label.check:has-text("login_failed") input').check();
  await dialog(page).locator('label.check:has-text("peer_created") input').check();
  await dialog(page).locator('button[type=submit]').click();
  await page.locator('table.table').getByText('Alerts').waitFor();
  const [hook] = (await api('/webhooks')).data.webhooks;
  assert.deepEqual(
    { name: hook.name, url: hook.url, events: hook.events, enabled: hook.enabled, retry_count: hook.retry_count },
    { name: 'Alerts', url: rx.url, events: ['login_failed', 'peer_created'], enabled: true, retry_count: 2 },
  );
  const row = async () => ((await ui.s.deps.db.models.Webhook.findByPk(hook.id, { raw: true })) as Row<'Webhook'> | null)!;
  assert.equal(ui.s.deps.crypto.open((await row()).secret_enc), SECRET);

  // Test button: the result on the page; the receiver verified the signature.
  await page.click('button[aria-label="Send test: Alerts"]');
  await page.locator('.webhook-test-result').getByText('Test delivered to Alerts (HTTP 200)').waitFor();
  assert.equal(rx.got.length, 1);
  assert.equal(rx.got[0].event, 'webhook_test');
  assert.ok(rx.got[0].signatureValid);

  // Edit: name and events; the secret (left empty) is kept.
  await page.click('button[aria-label="Edit: Alerts"]');
  await dialog(page).locator('#f-name').waitFor();
  assert.equal(await page.inputValue('#f-name'), 'Alerts');
  assert.ok(await dialog(page).locator('label.check:has-text("peer_created") input').isChecked());
  await page.fill('#f-name', 'Ops alerts');
  await dialog(page).locator('label.check:has-text("peer_created") input').uncheck();
  await dialog(page).locator('button[type=submit]').click();
  await page.locator('table.table').getByText('Ops alerts').waitFor();
  const edited = (await api(`/webhooks/${hook.id}`)).data.webhook;
  assert.deepEqual([edited.name, edited.events], ['Ops alerts', ['login_failed']]);
  assert.equal(ui.s.deps.crypto.open((await row()).secret_enc), SECRET, 'secret kept');

  // Disable and enable.
  await page.click('button[aria-label="Disable: Ops alerts"]');
  await page.locator('button[aria-label="Enable: Ops alerts"]').waitFor();
  assert.equal((await api(`/webhooks/${hook.id}`)).data.webhook.enabled, false);
  await page.click('button[aria-label="Enable: Ops alerts"]');
  await page.locator('button[aria-label="Disable: Ops alerts"]').waitFor();
  assert.equal((await api(`/webhooks/${hook.id}`)).data.webhook.enabled, true);

  // A real event: a failed sign-in is delivered and shows in the webhook's delivery log.
  await page.click('a:has-text("Ops alerts")');
  await page.waitForURL((u) => u.pathname === `/webhooks/${hook.id}`);
  await settled(page);
  const bad = await ui.s.req('/login', { method: 'POST', json: { username: 'intruder', password: 'wrong-password' }, headers: { accept: 'application/json' } });
  assert.equal(bad.status, 401);
  await page.locator('table.table code:has-text("login_failed")').waitFor();
  await page.locator('table.table tr:has-text("login_failed")').getByText('delivered').waitFor();
  assert.ok(rx.got.some((g) => g.event === 'login_failed' && g.signatureValid && g.json!.data.username === 'intruder'));

  // A failed test: the result says why, the log shows it, the status filter finds it.
  rx.status = 500;
  await page.click('.page-header button:has-text("Send test")');
  await page.locator('.webhook-test-result').getByText('Test to Ops alerts failed: HTTP 500').waitFor();
  await page.selectOption('#webhook-status', 'failed');
  await page.waitForURL((u) => u.searchParams.get('status') === 'failed');
  await page.waitForFunction(() => document.querySelectorAll('table.table tbody tr').length === 1);
  assert.match((await page.textContent('table.table tbody tr'))!, /webhook_test.*failed.*500.*HTTP 500/s);
  assert.deepEqual(realProblems(w), []);
  await noSerious(page, 'detail');
  await w.context.close();

  // Screenshots and axe of the dialog and the detail page, en/de × 1280/360.
  for (const lang of ['en', 'de'] as const) {
    for (const width of [1280, 360]) {
      const v = await adminPage(ui.browser, ui.s.url, { lang, width });
      await v.page.goto(`${ui.s.url}/webhooks/${hook.id}`);
      await settled(v.page);
      await v.page.locator('table.table tbody tr').first().waitFor();
      await screenshot(v.page, `${lang}-${width}-webhooks-detail`);
      await noSerious(v.page, `${lang} ${width} detail`);
      await v.page.goto(`${ui.s.url}/webhooks?edit=${hook.id}`);
      await settled(v.page);
      await dialog(v.page).locator('#f-name').waitFor();
      await screenshot(v.page, `${lang}-${width}-webhooks-edit`);
      await noSerious(v.page, `${lang} ${width} edit`);
      const wide = await v.page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      assert.ok(wide <= 0, `${lang} ${width}: page ${wide}px wider than the window`);
      assert.deepEqual(v.problems, [], `${lang} ${width}`);
      await v.context.close();
    }
  }

  // Delete, confirmed once, from the detail page.
  const d = await adminPage(ui.browser, ui.s.url, { lang: 'en' });
  await d.page.goto(`${ui.s.url}/webhooks/${hook.id}`);
  await settled(d.page);
  await d.page.click('.page-header button:has-text("Delete")');
  const c = dialog(d.page).filter({ hasText: /Delete the webhook Ops alerts/ });
  await c.waitFor();
  await c.locator('button.danger').click();
  await d.page.waitForURL((u) => u.pathname === '/webhooks');
  await d.page.getByText('No webhooks yet').waitFor();
  assert.equal((await api('/webhooks')).data.webhooks.length, 0);
  assert.equal(await ui.s.deps.db.models.WebhookDelivery.count({ where: { webhook_id: hook.id } }), 0, 'its log went with it');
  assert.deepEqual(d.problems, []);
  await d.context.close();
});

test('webhook form: the generated secret revealed and copied, event kinds grouped by area with select-all per group, a LAN receiver allowed — en/de × 390/1280 × both themes', async () => {
  const w = await adminPage(ui.browser, ui.s.url, { lang: 'en' });
  const { page } = w;
  await w.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: ui.s.url });
  await page.goto(`${ui.s.url}/webhooks?new=1`);
  await settled(page);
  const d = dialog(page);
  await d.locator('#f-name').waitFor();

  // the secret: masked until shown; a generated one is shown at once and can be copied for the receiver
  assert.equal(await page.getAttribute('#f-secret', 'type'), 'password');
  await page.fill('#f-secret', 'typed-secret-0123456789');
  await d.locator('button:has-text("Show")').click();
  assert.equal(await page.getAttribute('#f-secret', 'type'), 'text');
  await d.locator('button:has-text("Hide")').click();
  assert.equal(await page.getAttribute('#f-secret', 'type'), 'password');
  await d.locator('button:has-text("Generate a secret")').click();
  const secret = await page.inputValue('#f-secret');
  assert.match(secret, /^[0-9a-f]{48}$/);
  assert.equal(await page.getAttribute('#f-secret', 'type'), 'text', 'a generated secret is shown');
  await d.locator('button:has-text("Copy the secret")').click();
  await d.locator('button:has-text("Copied")').waitFor();
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), secret);

  // grouped by area, in the server's order; select-all per group, mixed when some are chosen
  const groups = await d.locator('.check-group').evaluateAll((els) => els.map((e) => (e as HTMLElement).dataset.group));
  assert.deepEqual(groups, ['peers', 'gateways', 'routes', 'monitoring', 'rdp', 'users', 'tokens', 'system']);
  const kinds = (await api('/webhooks/events')).data.events as { name: string; area: string }[];
  const peerKinds = kinds.filter((k) => k.area === 'peers').map((k) => k.name);
  const all = (label: string) => d.getByLabel(`Select all: ${label}`);
  await all('Peers').check();
  for (const k of peerKinds) assert.ok(await d.locator(`.check-group[data-group=peers] input[value=${k}]`).isChecked(), k);
  await d.locator('.check-group[data-group=peers] input[value=peer_updated]').uncheck();
  assert.equal(await all('Peers').isChecked(), false);
  assert.equal(await all('Peers').evaluate((e) => (e as HTMLInputElement).indeterminate), true, 'mixed');
  await all('Gateways').check();
  await all('Gateways').uncheck();
  await all('Monitoring').check();

  // the LAN receiver: the admin's explicit choice, stored with the webhook and in the activity log
  await page.fill('#f-name', 'Home Assistant');
  await page.fill('#f-url', rx.url);
  await d.getByLabel('Allow a receiver on a private network (LAN, this server)').check();
  await screenshot(page, 'en-1280-webhooks-create-grouped');
  await d.locator('button[type=submit]').click();
  await page.locator('table.table').getByText('Home Assistant').waitFor();
  const made = (await api('/webhooks')).data.webhooks.find((x) => x.name === 'Home Assistant')!;
  const monitoring = kinds.filter((k) => k.area === 'monitoring').map((k) => k.name);
  assert.deepEqual(new Set(made.events), new Set([...peerKinds.filter((k) => k !== 'peer_updated'), ...monitoring]));
  assert.equal(made.allow_private, true);
  const stored = await ui.s.deps.db.models.Webhook.findByPk(made.id);
  assert.equal(ui.s.deps.crypto.open(String(stored?.get('secret_enc'))), secret);
  const act = (await api('/logs/activity?source=webhooks&event_type=webhook_created')).data.entries;
  assert.equal(act.find((e) => e.details?.webhook_id === made.id)?.details?.allow_private, true);
  assert.deepEqual(realProblems(w), []);
  await w.context.close();

  // the edit dialog (groups, the choice, the secret actions) in both languages, widths and themes
  for (const theme of ['default', 'pro'] as const) {
    for (const lang of ['en', 'de'] as const) {
      assert.equal((await api('/settings/language', 'POST', { language: lang })).status, 200);
      assert.equal((await api('/settings/theme', 'PUT', { theme })).status, 200);
      for (const width of [390, 1280]) {
        const v = await adminPage(ui.browser, ui.s.url, { lang, width });
        await v.page.goto(`${ui.s.url}/webhooks?edit=${made.id}`);
        await settled(v.page);
        await dialog(v.page).locator('.check-group').first().waitFor();
        await dialog(v.page).locator('#f-secret').fill('another-secret-0123456789');
        assert.equal(await v.page.evaluate(() => document.documentElement.dataset.theme), theme);
        assert.ok(await dialog(v.page).locator('#f-allow_private').isChecked());
        assert.match(await dialog(v.page).innerText(), lang === 'de' ? /Benutzer und Anmeldung/ : /Users and sign-in/);
        await screenshot(v.page, `${lang}-${width}-${theme}-webhooks-edit-grouped`);
        await noSerious(v.page, `${lang} ${width} ${theme} edit`);
        const wide = await v.page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
        assert.ok(wide <= 0, `${lang} ${width} ${theme}: page ${wide}px wider than the window`);
        assert.deepEqual(v.problems, [], `${lang} ${width} ${theme}`);
        await v.context.close();
      }
    }
  }
  await api('/settings/language', 'POST', { language: 'en' });
  await api('/settings/theme', 'PUT', { theme: 'default' });
});
