// Roles in the admin app: what each role sees. The navigation shows the pages a role may open; a
// page a role may look at but not change says "Read-only" and has no actions; the users form offers
// the four roles with what each may do. The server refuses the same things (authz-matrix test).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { screenshot, settled, signIn, uiServer, watchedPage } from '../lib/browser.js';

const ui = uiServer({ GATEHOUSE_RATE_LIMIT_LOGIN: '1000' });

async function account(role: string, language = 'en'): Promise<{ username: string; password: string }> {
  const user = { username: `ui-${role}`, password: `${role}-password-1` };
  const r = await ui.api('/users', 'POST', { ...user, role, language });
  assert.equal(r.status, 201, JSON.stringify(r.data));
  return user;
}

/** The navigation's page names, in order. */
const navItems = (page: import('playwright-core').Page) => page.$$eval('#nav .nav-section a', (as) => as.map((a) => a.textContent?.trim() ?? ''));

test('operator: manages peers (actions shown), sees the users page read-only with no way to create a user', async () => {
  const op = await account('operator');
  for (const width of [1280, 390]) {
    const { page, context, problems } = await watchedPage(ui.browser, { width });
    await signIn(page, ui.s.url, op, '/peers');
    await settled(page);
    assert.ok(await page.isVisible('main .page-actions >> text=Add peer'), 'an operator adds peers');
    assert.equal(await page.isVisible('main .read-only-badge'), false);
    await page.goto(`${ui.s.url}/users`);
    await page.waitForSelector('main .read-only-badge >> text=Read-only');
    await settled(page);
    assert.equal(await page.locator('main .page-actions').count(), 0, 'no create button on a read-only page');
    assert.ok(await page.isVisible('td >> text=ui-operator'), 'the accounts list is readable');
    await screenshot(page, `en-${width}-roles-operator-users-read-only`);
    assert.deepEqual(problems, []);
    await context.close();
  }
});

test('viewer: every page it may see, each read-only; user: no accounts page at all; German wording', async () => {
  const vw = await account('viewer', 'de');
  const peer = (await ui.api('/peers', 'POST', { name: 'viewer-sees-me' })).data.peer;
  const route = await ui.api('/routes', 'POST', {
    domain: 'viewer.roles.test',
    peer_id: peer.id,
    target_port: 80,
    https_enabled: true,
    basic_auth_user: 'a',
    basic_auth_password: 'a-password-1',
  });
  assert.equal(route.status, 201, JSON.stringify(route.data));
  const { page, context, problems } = await watchedPage(ui.browser, { width: 1280, lang: 'de' });
  await signIn(page, ui.s.url, vw, '/peers');
  await settled(page);
  await page.waitForSelector('main .read-only-badge >> text=Nur lesen');
  assert.equal(await page.locator('main .page-actions').count(), 0, 'a viewer adds no peer');
  // the rows show no change actions either (toggle, edit, delete), and the route detail no forms
  await page.waitForSelector('td >> text=viewer-sees-me');
  assert.equal(await page.locator('main .row-actions').filter({ visible: true }).count(), 0, 'no row actions on peers');
  await page.goto(`${ui.s.url}/routes`);
  await page.waitForSelector('td >> text=viewer.roles.test');
  assert.equal(await page.locator('main .row-actions').filter({ visible: true }).count(), 0, 'no row actions on routes');
  await page.goto(`${ui.s.url}/routes/${route.data.route.id}`);
  await settled(page);
  await page.waitForSelector('[data-testid="share-link-form"]', { state: 'attached' });
  assert.equal(await page.isVisible('[data-testid="share-link-form"]'), false, 'no share-link form for a viewer');
  assert.equal(await page.locator('main .write-only').filter({ visible: true }).count(), 0);
  const viewerNav = await navItems(page);
  assert.ok(viewerNav.includes('Benutzer'), `the viewer sees the accounts page: ${viewerNav.join(', ')}`);
  await screenshot(page, 'de-1280-roles-viewer-peers');
  await context.close();
  assert.deepEqual(problems, []);

  const us = await account('user');
  const u = await watchedPage(ui.browser, { width: 390 });
  await signIn(u.page, ui.s.url, us, '/peers');
  await settled(u.page);
  const userNav = await navItems(u.page);
  assert.ok(!userNav.includes('Users'), `a user does not see the accounts page: ${userNav.join(', ')}`);
  assert.ok(await u.page.isVisible('main .read-only-badge >> text=Read-only'));
  await u.page.goto(`${ui.s.url}/users`);
  await u.page.waitForSelector('text=Your role cannot open this page.');
  await screenshot(u.page, 'en-390-roles-user-refused');
  assert.deepEqual(u.problems, []);
  await u.context.close();
});

test('users form: the four roles, each with what it may do; an operator made there can sign in as one', async () => {
  const { page, context, problems } = await watchedPage(ui.browser, { width: 1280 });
  await signIn(page, ui.s.url, undefined, '/users');
  await settled(page);
  await page.click('main .page-actions >> text=Create user');
  await page.waitForSelector('#f-role');
  const options = await page.$$eval('#f-role option', (os) => os.map((o) => (o as HTMLOptionElement).value));
  assert.deepEqual(options, ['admin', 'operator', 'viewer', 'user']);
  await page.fill('#f-username', 'made-operator');
  await page.fill('#f-password', 'operator-password-2');
  await page.selectOption('#f-role', 'operator');
  await page.waitForSelector('text=Manages peers, groups, tags, gateways, routes');
  await screenshot(page, 'en-1280-roles-user-form');
  await page.click('dialog button[type=submit], form:has(#f-role) button[type=submit]');
  await page.waitForSelector('td >> text=made-operator');
  const made = (await ui.api('/users')).data.users.find((x: { username: string }) => x.username === 'made-operator');
  assert.equal(made!.role, 'operator');
  assert.deepEqual(problems, []);
  await context.close();
});
