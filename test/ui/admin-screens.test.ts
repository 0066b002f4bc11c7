// Browser tests of the system screens (tokens, users, profile) done through the UI alone; the API is
// used only to check what the server stored and to seed. Screenshots of the dialogs the navigation
// walk does not reach (en/de × 1280/360), axe on each.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { ADMIN } from '../../sidecar/test/lib/server.js';
import { adminPage, axe, screenshot, serious, settled, uiServer } from '../lib/browser.js';
import { waitFor } from '../lib/wait.js';
import type { Token, User } from '../../sidecar/test/lib/protocol.js';

// Many sign-ins (one per page and language) and deliberate failed ones: lift the sign-in rate limit.
const ui = uiServer({ GATEHOUSE_RATE_LIMIT_LOGIN: '1000' });
const apiGet = async <P extends string>(p: P) => (await ui.api<never, P, 'GET'>(p)).data;
const apiSend = (method: string, p: string, json?: unknown) => ui.api(p, method, json);

/** Answers the one confirmation dialog with its confirm button. */
async function confirm(page: Page): Promise<void> {
  const btn = page.locator('dialog[open] .form-actions button').last();
  await btn.waitFor();
  await btn.click();
}
async function noSerious(page: Page, what: string): Promise<void> {
  assert.deepEqual(serious(await axe(page)), [], `axe: ${what}`);
}

test('tokens: create with a scope, the plaintext shown once and working with its scope; fingerprint reset; delete', async () => {
  const { page, problems, context, allowHttpError } = await adminPage(ui.browser, ui.s.url);
  allowHttpError('/api/v1/tokens', 400);
  allowHttpError('/api/v1/tokens', 422); // a refusal the document cannot state (a combination, the stored state)
  await page.goto(`${ui.s.url}/tokens`);
  await page.waitForSelector('text=No API tokens yet');
  await settled(page);
  await page.click('text=Create token');
  await page.waitForSelector('dialog[open] #f-name');
  assert.match(page.url(), /\/tokens\?new=1$/, 'the create dialog has its own URL (the API reference links there)');

  // No scope: the server's error lands next to the scope checkboxes; what was typed stays.
  await page.fill('#f-name', 'ci-logs');
  await page.click('dialog[open] button[type=submit]');
  await page.waitForSelector('#f-scopes-err');
  assert.match((await page.textContent('#f-scopes-err'))!, /at least one scope/);
  assert.equal(await page.inputValue('#f-name'), 'ci-logs');

  await page.check('input[name=scopes][value=logs]');
  await page.click('dialog[open] button[type=submit]');
  await page.waitForSelector('dialog[open] #new-token');
  const token = await page.inputValue('#new-token');
  assert.match(token, /^gth_[A-Za-z0-9_-]{43}$/);
  assert.ok(await page.isVisible('dialog[open] >> text=Copy'), 'copy button');
  await noSerious(page, 'token shown once');
  await screenshot(page, 'en-1280-tokens-created');
  await page.click('dialog[open] >> text=Done, I have copied it');
  await page.waitForSelector('#new-token', { state: 'detached' });
  assert.ok(!(await page.content()).includes(token), 'the plaintext is gone from the page once the dialog is closed');
  await page.waitForSelector('td >> text=ci-logs');

  const list = await apiGet('/tokens');
  assert.ok(!JSON.stringify(list).includes(token.slice(4)), 'GET /tokens never shows the token');
  const rec = list.tokens.find((x: Token) => x.name === 'ci-logs');
  assert.deepEqual(rec!.scopes, ['logs']);

  // The token works with its scope, and only with it; its first use binds the machine fingerprint.
  const bearer = { authorization: `Bearer ${token}`, 'x-machine-fingerprint': 'machine-a' };
  assert.equal((await ui.s.req('/api/v1/logs/activity', { headers: bearer })).status, 200);
  assert.equal((await ui.s.req('/api/v1/peers', { headers: bearer })).status, 403);
  assert.equal((await apiGet('/tokens')).tokens.find((x: Token) => x.id === rec!.id)!.fingerprint_bound, true);

  await page.reload();
  await settled(page);
  await page.click('tr:has-text("ci-logs") >> text=Reset fingerprint');
  await confirm(page);
  await page.waitForSelector('tr:has-text("ci-logs") >> text=not bound');
  assert.equal((await apiGet('/tokens')).tokens.find((x: Token) => x.id === rec!.id)!.fingerprint_bound, false);
  assert.equal(
    (await ui.s.req('/api/v1/logs/activity', { headers: { ...bearer, 'x-machine-fingerprint': 'machine-b' } })).status,
    200,
    'a new machine binds again after the reset',
  );

  await page.click('button[aria-label="Delete: ci-logs"]');
  await confirm(page);
  await page.waitForSelector('td >> text=ci-logs', { state: 'detached' });
  assert.equal(
    (await apiGet('/tokens')).tokens.some((x: Token) => x.id === rec!.id),
    false,
  );
  assert.equal((await ui.s.req('/api/v1/logs/activity', { headers: bearer })).status, 401, 'a deleted token is refused at once');
  assert.deepEqual(problems, []);
  await context.close();
});

test('users: create a user and change its role through the UI; reset password shown once', async () => {
  const { page, problems, context } = await adminPage(ui.browser, ui.s.url);
  await page.goto(`${ui.s.url}/users`);
  await page.waitForSelector('td >> text=admin');
  await settled(page);
  await page.click('text=Create user');
  await page.fill('dialog[open] #f-username', 'alice');
  await page.fill('dialog[open] #f-email', 'alice@example.com');
  await page.fill('dialog[open] #f-password', 'alice-password-1');
  await page.selectOption('dialog[open] #f-role', 'user');
  await page.click('dialog[open] button[type=submit]');
  await page.waitForSelector('td >> text=alice', { timeout: 10_000 });
  let alice = (await apiGet('/users')).users.find((u: User) => u.username === 'alice');
  assert.equal(alice!.role, 'user');
  assert.equal(alice!.email, 'alice@example.com');

  await page.click('button[aria-label="Edit: alice"]');
  await page.selectOption('dialog[open] #f-role', 'admin');
  await noSerious(page, 'edit user');
  await page.click('dialog[open] button[type=submit]');
  await page.waitForSelector('dialog[open]', { state: 'detached' });
  alice = (await apiGet('/users')).users.find((u: User) => u.username === 'alice');
  assert.equal(alice!.role, 'admin');

  await page.click('button[aria-label="Reset password: alice"]');
  await confirm(page);
  await page.waitForSelector('dialog[open] #new-password');
  const pw = await page.inputValue('#new-password');
  assert.equal(
    (await ui.s.req('/login', { method: 'POST', json: { username: 'alice', password: pw }, headers: { accept: 'application/json' } })).status,
    200,
    'the shown password signs in',
  );
  await page.click('dialog[open] >> text=Done');
  assert.deepEqual(problems, []);
  await context.close();
});

test('profile: email, language and theme saved on the server; wrong current password shown next to the field; password change; default theme', async () => {
  const { page, problems, context, allowHttpError } = await adminPage(ui.browser, ui.s.url);
  allowHttpError('/api/v1/settings/password', 400);
  allowHttpError('/api/v1/settings/password', 422); // a refusal the document cannot state (a combination, the stored state)
  await page.goto(`${ui.s.url}/profile`);
  await page.waitForSelector('#f-email');
  await settled(page);
  await page.fill('#f-email', 'admin@example.com');
  await page.selectOption('#f-language', 'de');
  await page.click('form:has(#f-email) button[type=submit]');
  await page.waitForFunction(() => document.documentElement.lang === 'de');
  let me = (await apiGet('/settings/profile')).profile;
  assert.equal(me.email, 'admin@example.com');
  assert.equal(me.language, 'de');

  await page.selectOption('#f-theme', 'pro');
  await page.click('form:has(#f-theme) button[type=submit]');
  await page.waitForFunction(() => document.documentElement.dataset.theme === 'pro');
  await waitFor(async () => (await apiGet('/settings/profile')).profile.theme === 'pro', 10_000, 'the theme saved');
  await page.selectOption('#f-theme', '');
  await page.click('form:has(#f-theme) button[type=submit]');
  // the save is in flight after the click ('networkidle' may come before it starts): wait for its effect
  await waitFor(async () => (await apiGet('/settings/profile')).profile.theme === null, 10_000, 'back to the server default');

  await page.selectOption('#f-default_theme', 'pro');
  await page.click('form:has(#f-default_theme) button[type=submit]');
  await page.waitForFunction(() => document.documentElement.dataset.theme === 'pro');
  assert.equal((await apiGet('/settings/app')).app.default_theme, 'pro');

  await page.fill('#f-current', 'not-my-password');
  await page.fill('#f-next', 'a-new-password-2');
  await page.click('form:has(#f-current) button[type=submit]');
  await page.waitForSelector('#f-current-err');
  // the UI is German here: the server's field code (field.does_not_match) is worded in German
  assert.match((await page.textContent('#f-current-err'))!, /stimmt nicht überein/);
  assert.equal(await page.getAttribute('#f-current', 'aria-invalid'), 'true');
  assert.equal(await page.inputValue('#f-next'), 'a-new-password-2', 'nothing typed is lost');
  await screenshot(page, 'de-1280-profile-password-error');
  await noSerious(page, 'profile with a field error');

  await page.fill('#f-current', ADMIN.password);
  await page.click('form:has(#f-current) button[type=submit]');
  await page.waitForFunction(() => (document.getElementById('f-current') as HTMLInputElement).value === '');
  assert.equal(
    (await ui.s.req('/login', { method: 'POST', json: { username: ADMIN.username, password: 'a-new-password-2' }, headers: { accept: 'application/json' } }))
      .status,
    200,
    'the new password signs in',
  );
  assert.deepEqual(problems, []);
  await context.close();

  // The other sessions (the test's API session) ended with the change: sign in again, restore.
  await ui.login({ username: ADMIN.username, password: 'a-new-password-2' });
  assert.equal((await apiSend('PUT', '/settings/password', { current: 'a-new-password-2', next: ADMIN.password })).status, 200);
  await ui.login();
  assert.equal((await apiSend('PUT', '/settings/default-theme', { theme: 'default' })).status, 200);

  assert.equal((await apiSend('POST', '/settings/language', { language: 'en' })).status, 200);
  me = (await apiGet('/settings/profile')).profile;
  assert.equal(me.language, 'en');
});

test('dialogs at 1280 and 360 px in English and German: screenshots, no serious axe violation', async () => {
  for (const lang of ['en', 'de'] as const) {
    for (const width of [1280, 360]) {
      const { page, problems, context } = await adminPage(ui.browser, ui.s.url, { lang, width });
      if ((await apiGet('/settings/profile')).profile.language !== lang) {
        await page.evaluate(async (l) => {
          await fetch('/api/v1/settings/language', {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-csrf-token': (await (await fetch('/api/v1/csrf')).json()).csrfToken },
            body: JSON.stringify({ language: l }),
          });
        }, lang);
      }
      await page.goto(`${ui.s.url}/tokens?new=1`);
      await page.waitForSelector('dialog[open] #f-name');
      await settled(page);
      await screenshot(page, `${lang}-${width}-tokens-create`);
      await noSerious(page, `${lang} ${width} token create`);
      await page.fill('#f-name', `shot-${lang}-${width}`);
      await page.check('input[name=scopes][value=read-only]');
      await page.click('dialog[open] button[type=submit]');
      await page.waitForSelector('dialog[open] #new-token');
      await screenshot(page, `${lang}-${width}-tokens-shown-once`);
      await noSerious(page, `${lang} ${width} token shown once`);
      await page.keyboard.press('Escape');

      await page.goto(`${ui.s.url}/users`);
      await settled(page);
      await page.locator('.page-actions button').first().click();
      await page.waitForSelector('dialog[open] #f-username');
      await screenshot(page, `${lang}-${width}-users-create`);
      await noSerious(page, `${lang} ${width} user create`);
      await page.keyboard.press('Escape');
      assert.deepEqual(problems, [], `${lang} ${width}`);
      await context.close();
    }
  }
  await apiSend('POST', '/settings/language', { language: 'en' });
});
