// Admin sign-in through an OpenID Connect provider in the browser (Debian's chromium): a real
// provider (npm oidc-provider in its own process on loopback, sidecar/test/lib/oidc-idp.ts) with two
// people in two groups. The sign-in page's "Sign in with …" button leads through the provider's login
// form back into the admin app as the mapped role, at `next`; someone outside the mapped groups gets
// the page that says why (in German too); a tampered state gets the page that says so. The Single
// sign-on screen adds a provider against the same real provider (Test: OK; a wrong issuer: the
// reason), edits and deletes it; a viewer sees it read-only, a user not at all. Screenshots at 1280
// and 390 px.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { adminPage, screenshot, settled, signIn, uiServer, watchedPage } from '../lib/browser.js';
import { startIdp, type Idp } from '../../sidecar/test/lib/oidc-idp.js';

const ui = uiServer({ GATEHOUSE_RATE_LIMIT_LOGIN: '1000' });
let idp: Idp;

ui.setup(async () => {
  idp = await startIdp({
    clients: [{ client_id: 'gatehouse-ui', client_secret: 'ui-client-secret-0123456789', redirect_uris: [`${ui.s.url}/auth/oidc/callback`] }],
    users: {
      olga: { email: 'olga@example.test', email_verified: true, groups: ['ops'] },
      sam: { email: 'sam@example.test', email_verified: true, groups: ['sales'] },
    },
  });
  const r = await ui.api('/auth/oidc/providers', 'POST', {
    name: 'Company ID',
    issuer: idp.issuer,
    client_id: 'gatehouse-ui',
    client_secret: 'ui-client-secret-0123456789',
    scopes: ['openid', 'profile', 'email', 'groups'],
    jit_create: true,
    allow_private: true,
    role_mappings: [{ match: { group: 'ops' }, role: 'operator' }],
  });
  assert.equal(r.status, 201, JSON.stringify(r.data));
});

test.after(async () => idp?.close());

/** From the sign-in page through the provider's login form; resolves once back on the sidecar. */
async function throughProvider(page: Page, user: string, path = '/peers'): Promise<void> {
  await page.goto(`${ui.s.url}${path}`);
  await page.waitForURL(/\/login/);
  await Promise.all([page.waitForURL((u) => u.origin === idp.issuer), page.click('a.sso')]);
  await page.fill('input[name=login]', user);
  await page.fill('input[name=password]', 'any password');
  await Promise.all([page.waitForURL((u) => u.origin === ui.s.url), page.click('button[type=submit]')]);
}

test('"Sign in with Company ID" leads through the provider into the admin app as the mapped role, at next', { timeout: 120_000 }, async () => {
  const { page, problems } = await watchedPage(ui.browser, { width: 1280 });
  await page.goto(`${ui.s.url}/login?next=%2Fpeers`);
  assert.equal(await page.textContent('a.sso'), 'Sign in with Company ID');
  await screenshot(page, 'en-1280-login-sso');
  assert.deepEqual(problems, [], 'the sign-in page');
  await throughProvider(page, 'olga');
  // the provider's own development pages load a web font and a favicon they cannot have here: not ours
  problems.length = 0;
  await page.waitForURL(/\/peers$/);
  await settled(page);
  const session = await page.evaluate(async () => (await fetch('/api/v1/session', { headers: { accept: 'application/json' } })).json());
  assert.equal(session.user.username, 'olga');
  assert.equal(session.user.role, 'operator');
  await screenshot(page, 'en-1280-sso-signed-in');
  assert.deepEqual(problems, []);
});

test('someone outside the mapped groups is refused with a page that says why (German, 390 px)', { timeout: 120_000 }, async () => {
  const { page } = await watchedPage(ui.browser, { width: 390, lang: 'de' });
  await page.goto(`${ui.s.url}/login`);
  assert.equal(await page.textContent('a.sso'), 'Mit Company ID anmelden');
  await throughProvider(page, 'sam');
  await page.waitForSelector('p.err[data-reason=no_mapping]');
  assert.match((await page.textContent('p.err'))!, /keiner der Gruppen/);
  assert.match((await page.textContent('main'))!, /Gruppen: sales/);
  assert.equal(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), true, 'no sideways scroll');
  await screenshot(page, 'de-390-sso-refused');
  assert.equal((await page.goto(`${ui.s.url}/api/v1/session`))?.status(), 401, 'not signed in');
});

test('a tampered state is refused with the page that says so', { timeout: 120_000 }, async () => {
  const { page } = await watchedPage(ui.browser, { width: 1280 });
  await page.goto(`${ui.s.url}/login`);
  await Promise.all([page.waitForURL((u) => u.origin === idp.issuer), page.click('a.sso')]);
  await page.fill('input[name=login]', 'olga');
  await page.fill('input[name=password]', 'any password');
  // the provider's answer is caught before the browser follows it, and its state changed
  const answer = page.waitForRequest((r) => r.url().startsWith(`${ui.s.url}/auth/oidc/callback`));
  await page.route(`${ui.s.url}/auth/oidc/callback**`, (route) => route.abort());
  await page.click('button[type=submit]').catch(() => undefined);
  const cb = new URL((await answer).url());
  await page.unroute(`${ui.s.url}/auth/oidc/callback**`);
  cb.searchParams.set('state', 'tampered-state');
  await page.goto(cb.href);
  await page.waitForSelector('p.err[data-reason=state_invalid]');
  assert.match((await page.textContent('p.err'))!, /tampered or replayed/);
  await screenshot(page, 'en-1280-sso-tampered-state');
});

test(
  'the Single sign-on screen: add a provider against the real one, Test says OK, a wrong issuer says why, edit, delete (390 px in German too)',
  { timeout: 120_000 },
  async () => {
    const { page, problems } = await adminPage(ui.browser, ui.s.url, { width: 1280 });
    await page.goto(`${ui.s.url}/settings/sso`);
    await settled(page);
    // the provider the setup made: the redirect URL to register, with its copy button
    assert.equal(await page.textContent('#sso-redirect-uri'), `${ui.s.url}/auth/oidc/callback`);
    await page.click('.page-actions >> text=Add provider');
    await page.fill('#f-name', 'Staff ID');
    await page.fill('#f-issuer', idp.issuer);
    await page.fill('#f-client_id', 'gatehouse-ui');
    await page.fill('#f-client_secret', 'ui-client-secret-0123456789');
    await page.fill('#f-scopes', 'openid profile email groups');
    await page.check('#f-allow_private');
    await page.click('text=Add rule');
    await page.fill('#f-role_mappings-0-match-group', 'ops');
    await page.selectOption('#f-role_mappings-0-role', 'operator');
    await page.click('text=Add rule');
    await page.selectOption('#sso-kind-1', 'email');
    await page.fill('#f-role_mappings-1-match-email', 'sam@example.test');
    await screenshot(page, 'en-1280-sso-provider-form');
    await page.click('dialog[open] button[type=submit]');
    await page.waitForSelector('text=Provider Staff ID added');
    const row = page.locator('tr', { hasText: 'Staff ID' });
    await row.waitFor();
    const stored = (await ui.api('/auth/oidc/providers', 'GET')).data.providers.find((p: { name: string }) => p.name === 'Staff ID')!;
    assert.deepEqual(stored.role_mappings, [
      { match: { group: 'ops' }, role: 'operator' },
      { match: { email: 'sam@example.test' }, role: 'viewer' },
    ]);
    assert.equal(stored.client_secret_set, true);
    assert.deepEqual(stored.scopes, ['openid', 'profile', 'email', 'groups']);

    // Test: the real provider's discovery document
    await page.click('button[aria-label="Test: Staff ID"]');
    await page.waitForSelector('.sso-test-result[data-reachable=true]');
    assert.match((await page.textContent('.sso-test-result'))!, /Discovery works: http:\/\/127\.0\.0\.1:\d+ names its authorization, token and key endpoints/);
    await screenshot(page, 'en-1280-sso-test-ok');

    // a wrong issuer (edited in the form; the stored secret kept): Test says what is wrong
    await page.click('button[aria-label="Edit: Staff ID"]');
    assert.match((await page.textContent('dialog[open] .sso-secret-state'))!, /secret set/);
    await page.fill('#f-issuer', `${idp.issuer}/wrong`);
    await page.fill('#f-name', 'Staff SSO');
    await page.click('dialog[open] button[type=submit]');
    await page.waitForSelector('text=Provider Staff SSO saved');
    await page.click('button[aria-label="Test: Staff SSO"]');
    await page.waitForSelector('.sso-test-result[data-reachable=false]');
    assert.match((await page.textContent('.sso-test-result'))!, /The discovery document answered HTTP 404/);
    assert.match((await page.textContent('.sso-test-result'))!, /\/wrong\/\.well-known\/openid-configuration/);
    const edited = (await ui.api(`/auth/oidc/providers/${stored.id}`, 'GET')).data.provider;
    assert.equal(edited.issuer, `${idp.issuer}/wrong`);
    assert.equal(edited.client_secret_set, true, 'an empty secret field keeps the stored one');
    await screenshot(page, 'en-1280-sso-test-wrong-issuer');

    // delete, after the confirmation
    await page.click('button[aria-label="Delete: Staff SSO"]');
    await page.locator('dialog[open]', { hasText: 'Delete the provider Staff SSO?' }).locator('button.danger').click();
    await page.waitForSelector('text=Provider Staff SSO deleted');
    assert.equal((await ui.api(`/auth/oidc/providers/${stored.id}`, 'GET')).status, 404);
    assert.deepEqual(problems, []);

    // German, on a phone: the list and the form fit without sideways scroll
    const de = await adminPage(ui.browser, ui.s.url, { width: 390, lang: 'de' });
    /** The admin's own language (a session-only setting: through the signed-in page). */
    const language = (l: 'en' | 'de') =>
      de.page.evaluate(async (language) => {
        const { csrfToken } = await (await fetch('/api/v1/session', { headers: { accept: 'application/json' } })).json();
        const headers = { accept: 'application/json', 'content-type': 'application/json', 'x-csrf-token': csrfToken };
        return (await fetch('/api/v1/settings/language', { method: 'POST', headers, body: JSON.stringify({ language }) })).status;
      }, l);
    assert.equal(await language('de'), 200);
    await de.page.goto(`${ui.s.url}/settings/sso`);
    await settled(de.page);
    assert.equal(await de.page.textContent('#page-title'), 'Single Sign-on');
    await de.page.click('button[aria-label="Bearbeiten: Company ID"]');
    await de.page.waitForSelector('dialog[open] legend:has-text("Wer sich anmelden darf")');
    assert.equal(await de.page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), true, 'no sideways scroll');
    await screenshot(de.page, 'de-390-sso-provider-form');
    assert.equal(await language('en'), 200);
    assert.deepEqual(de.problems, []);
  },
);

test('the Single sign-on screen is read-only for a viewer (as for an operator) and not there for a user', { timeout: 60_000 }, async () => {
  const viewer = { username: 'ui-sso-viewer', password: 'ui-sso-viewer-password-1' };
  const user = { username: 'ui-sso-user', password: 'ui-sso-user-password-1' };
  assert.equal((await ui.api('/users', 'POST', { ...viewer, role: 'viewer' })).status, 201);
  assert.equal((await ui.api('/users', 'POST', { ...user, role: 'user' })).status, 201);
  const v = await watchedPage(ui.browser, { width: 1280 });
  await signIn(v.page, ui.s.url, viewer, '/settings/sso');
  await settled(v.page);
  await v.page.waitForSelector('main .read-only-badge >> text=Read-only');
  await v.page.waitForSelector('td >> text=Company ID');
  assert.equal(await v.page.locator('main .page-actions').count(), 0, 'no Add provider');
  assert.equal(await v.page.locator('main .row-actions').filter({ visible: true }).count(), 0, 'no Test, Edit or Delete');
  assert.equal(await v.page.textContent('#sso-redirect-uri'), `${ui.s.url}/auth/oidc/callback`);
  await screenshot(v.page, 'en-1280-sso-viewer-read-only');
  assert.deepEqual(v.problems, []);
  await v.context.close();
  const o = await watchedPage(ui.browser, { width: 390 });
  await signIn(o.page, ui.s.url, user, '/peers');
  await settled(o.page);
  assert.equal(await o.page.locator('#nav a[href="/settings/sso"]').count(), 0, 'not in the navigation');
  await o.page.goto(`${ui.s.url}/settings/sso`);
  await o.page.waitForSelector('text=Your role cannot open this page.');
  assert.deepEqual(o.problems, []);
  await o.context.close();
});
