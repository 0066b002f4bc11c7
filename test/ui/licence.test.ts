// The licence screen in a real browser, through the UI alone (the API only checks): the community
// state (every feature of the product on without a licence; what the community edition includes and what a
// licence adds, en and de), a tampered key refused with the reason next to the field (nothing stored, the text kept), a
// key activated, refresh against a real local licence service (renewed; then failing: the grace
// period shown), remove (confirmed once); axe and screenshots of the licensed state (en/de, 1280/360).
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { adminPage, axe, screenshot, serious, settled, uiServer } from '../lib/browser.js';
import { testLicenceKey } from '../../sidecar/test/lib/licence.js';

const DAY = 24 * 3600 * 1000;
let answer: () => { status: number; json: unknown } = () => ({ status: 503, json: { error: 'not ready' } });
const service = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    const a = answer();
    res.writeHead(a.status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(a.json));
  });
});
await new Promise<void>((r) => service.listen(0, '127.0.0.1', r));
const serviceUrl = `http://127.0.0.1:${(service.address() as AddressInfo).port}/refresh`;

const ui = uiServer({
  GATEHOUSE_LICENCE_KEY: '',
  GATEHOUSE_LICENCE_URL: serviceUrl,
  GATEHOUSE_OUTBOUND_ALLOW_PRIVATE: 'licence',
  GATEHOUSE_LICENCE_GRACE_DAYS: '5',
  GATEHOUSE_RATE_LIMIT_LOGIN: '100000',
});
const api = ui.api;
after(async () => {
  service.closeAllConnections();
  await new Promise((r) => service.close(r));
});
const dialog = (page: Page) => page.locator('dialog[open]');
async function noSerious(page: Page, where: string) {
  const v = serious(await axe(page));
  assert.deepEqual(v, [], `${where}: ${JSON.stringify(v, null, 1)}`);
}

test('licence: community state, a refused key, activate, refresh (renewed, then grace), remove — through the UI', async () => {
  const w = await adminPage(ui.browser, ui.s.url, { lang: 'en' });
  const { page } = w;
  w.allowHttpError('/api/v1/license/activate', 400);
  w.allowHttpError('/api/v1/license/activate', 422); // a refusal the document cannot state (a combination, the stored state)
  await page.goto(`${ui.s.url}/licence`);
  await settled(page);
  await page.locator('[data-testid="licence-state"]').getByText('Community edition (no licence)').waitFor();
  assert.equal(await page.locator('button:has-text("Refresh now")').count(), 0, 'nothing to refresh without a licence');
  const community = page.locator('[data-testid="licence-state"]');
  for (const f of ['Internal DNS', 'Remote desktop', 'Circuit breaker', 'Prometheus metrics']) await community.getByText(`${f}: on`).waitFor();
  await community.getByText('Cluster (several edges on one database): off').waitFor();
  await page.getByText(/It includes internal DNS, remote desktop, circuit breaker and Prometheus metrics, with no size limits/).waitFor();
  const editions = page.locator('[data-testid="licence-editions"]');
  const [includes, adds] = await editions.locator('dd').allTextContents();
  assert.match(includes, /Internal DNS.*Remote desktop.*Circuit breaker.*Prometheus metrics.*No limit on peers or routes/);
  assert.equal(adds, 'Cluster (several edges on one database)');
  assert.match((await editions.textContent())!, /The community edition includes.*A licence adds/);

  // A tampered key: the reason next to the field, nothing stored, the text kept.
  const good = testLicenceKey({ id: 'UI-1', customer: 'Example GmbH', plan: 'business', features: ['cluster'], limits: { max_peers: 50 } });
  const [p, kid, payload, sig] = good.split('.');
  const doc = JSON.parse(Buffer.from(payload, 'base64url').toString());
  doc.features.push('future_feature');
  const tampered = [p, kid, Buffer.from(JSON.stringify(doc)).toString('base64url'), sig].join('.');
  await page.fill('#f-key', tampered);
  await page.click('button[type=submit]:has-text("Activate")');
  await page.waitForSelector('#f-key-err');
  assert.match((await page.textContent('#f-key-err'))!, /altered or damaged/);
  assert.equal(await page.inputValue('#f-key'), tampered);
  assert.equal((await api('/license')).data.license.status, 'community', 'nothing stored');

  // The real key.
  await page.fill('#f-key', good);
  await page.click('button[type=submit]:has-text("Activate")');
  const state = page.locator('[data-testid="licence-state"]');
  await state.getByText('Example GmbH').waitFor();
  await state.getByText('Active', { exact: true }).waitFor();
  await state.getByText('Circuit breaker: on').waitFor();
  await state.getByText('Cluster (several edges on one database): on').waitFor();
  assert.match((await state.textContent())!, /Peers: 50/);
  assert.equal(await page.inputValue('#f-key'), '', 'the field is emptied after activation');
  const l1 = (await api('/license')).data.license;
  assert.deepEqual(
    [l1.status, l1.licence!.id, l1.features],
    ['active', 'UI-1', ['internal_dns', 'remote_desktop', 'circuit_breaker', 'prometheus_metrics', 'cluster']],
  );

  // Refresh: the licence service renews the key.
  const renewedExpiry = new Date(Date.now() + 500 * DAY).toISOString();
  answer = () => ({
    status: 200,
    json: {
      key: testLicenceKey({
        id: 'UI-1',
        customer: 'Example GmbH',
        plan: 'business',
        features: ['cluster'],
        limits: { max_peers: 50 },
        expires_at: renewedExpiry,
      }),
    },
  });
  await page.click('button:has-text("Refresh now")');
  await page.getByText('Licence refreshed').waitFor();
  const l2 = (await api('/license')).data.license;
  assert.equal(l2.licence!.expires_at, new Date(renewedExpiry).toISOString());
  assert.ok(l2.licence!.last_refresh_at);

  // The service fails: the licence stays in force, the grace period is shown.
  answer = () => ({ status: 503, json: { error: 'maintenance' } });
  await page.click('button:has-text("Refresh now")');
  await page.getByText(/Refresh failed: .*HTTP 503: maintenance/).waitFor();
  await page.getByText(/The licence service could not be reached\. The licence stays in force until/).waitFor();
  await state.getByText('Active (grace period)').waitFor();
  const l3 = (await api('/license')).data.license;
  assert.equal(l3.status, 'grace');
  assert.equal(l3.grace!.days, 5);
  assert.deepEqual(w.problems, []);
  await noSerious(page, 'grace');
  await w.context.close();

  // Screenshots and axe of the licensed state (the navigation walk sees only the community state).
  for (const lang of ['en', 'de'] as const) {
    // The user's saved language decides (the switch in the top bar saves it).
    await api('/settings/language', 'POST', { language: lang });
    for (const width of [1280, 360]) {
      const v = await adminPage(ui.browser, ui.s.url, { lang, width });
      await v.page.goto(`${ui.s.url}/licence`);
      await settled(v.page);
      await v.page.locator('[data-testid="licence-state"]').getByText('Example GmbH').waitFor();
      await v.page.getByRole('heading', { name: lang === 'de' ? 'Lizenz' : 'Licence', exact: true }).waitFor();
      await v.page
        .locator('[data-testid="licence-editions"]')
        .getByText(lang === 'de' ? 'Die Community-Edition enthält' : 'The community edition includes')
        .waitFor();
      await screenshot(v.page, `${lang}-${width}-licence-grace`);
      await noSerious(v.page, `${lang} ${width}`);
      const wide = await v.page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      assert.ok(wide <= 0, `${lang} ${width}: page ${wide}px wider than the window`);
      assert.deepEqual(v.problems, [], `${lang} ${width}`);
      await v.context.close();
    }
  }

  await api('/settings/language', 'POST', { language: 'en' });

  // Remove, confirmed once.
  const d = await adminPage(ui.browser, ui.s.url, { lang: 'en' });
  await d.page.goto(`${ui.s.url}/licence`);
  await settled(d.page);
  await d.page.click('button.danger:has-text("Remove licence")');
  const c = dialog(d.page).filter({ hasText: /Remove the licence UI-1\?/ });
  await c.waitFor();
  await screenshot(d.page, 'en-1280-licence-remove');
  await c.locator('button.danger').click();
  await d.page.locator('[data-testid="licence-state"]').getByText('Community edition (no licence)').waitFor();
  await d.page.locator('[data-testid="licence-state"]').getByText('Cluster (several edges on one database): off').waitFor();
  await d.page.locator('[data-testid="licence-state"]').getByText('Remote desktop: on').waitFor();
  assert.equal((await api('/license')).data.license.status, 'community');
  assert.equal(await ui.s.deps.db.models.Setting.count({ where: { key: 'licence' } }), 0);
  assert.deepEqual(d.problems, []);
  await d.context.close();
});
