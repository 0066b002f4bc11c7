// Two-factor sign-in in the browser: an operator sets up an authenticator under Profile with the code
// computed from the key shown on screen, sees the recovery codes once, signs out, and signs in again
// through the second-factor page (a wrong code first, then a recovery code on another sign-in). Then
// the admin requires a second factor for everyone (Security) and a viewer without one goes through
// the enrolment page (in German) and the recovery-codes page into the app; the admin resets the
// operator's second factor under Users. Screenshots at 1280 and 390 px, light and dark.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { screenshot, settled, signIn, uiServer, watchedPage } from '../lib/browser.js';
import { totpCode } from '../../sidecar/src/util/totp.js';

const ui = uiServer({ GATEHOUSE_RATE_LIMIT_LOGIN: '1000' });
const OPS = { username: 'ui-2fa-ops', password: 'ops-2fa-password-1' };
const VIEWER = { username: 'ui-2fa-viewer', password: 'viewer-2fa-password-1' };

/** The password step through the sign-in page; the page it lands on. */
async function passwordStep(page: import('playwright-core').Page, user: { username: string; password: string }, path = '/peers') {
  await page.goto(`${ui.s.url}${path}`);
  await page.waitForURL(/\/login/);
  await page.fill('#username', user.username);
  await page.fill('#password', user.password);
  await Promise.all([page.waitForURL(/\/login\/(second-factor|enrol)/), page.click('button[type=submit]')]);
}

test('an operator sets up an authenticator under Profile, then signs in with a code, and once with a recovery code', { timeout: 180_000 }, async () => {
  assert.equal((await ui.api('/users', 'POST', { ...OPS, role: 'operator' })).status, 201);
  const { page, context, problems } = await watchedPage(ui.browser, { width: 1280 });
  await signIn(page, ui.s.url, OPS, '/profile');
  await settled(page);
  await page.click('.second-factor >> text=Set up an authenticator app');
  await page.fill('.second-factor #f-current', OPS.password);
  await page.click('.second-factor button[type=submit]');
  await page.waitForSelector('#account-totp-secret');
  const secret = (await page.inputValue('#account-totp-secret')).trim();
  assert.match(secret, /^[A-Z2-7]{32}$/);
  assert.ok(await page.isVisible('.second-factor img.qr'));
  // a wrong code first: the field says so, nothing is on
  await page.fill('.second-factor #f-token', '000000');
  await page.click('.second-factor button[type=submit]');
  await page.waitForSelector('.second-factor #f-token[aria-invalid=true]');
  await screenshot(page, 'en-1280-second-factor-enrol-profile');
  await page.fill('.second-factor #f-token', totpCode(secret, Date.now()));
  await page.click('.second-factor button[type=submit]');
  await page.waitForSelector('#recovery-codes');
  const codes = (await page.inputValue('#recovery-codes')).match(/[A-Z2-9]{4}-[A-Z2-9]{4}-[A-Z2-9]{4}-[A-Z2-9]{4}/g) ?? [];
  assert.equal(codes.length, 10);
  await screenshot(page, 'en-1280-second-factor-recovery-codes');
  await page.click('text=I have saved them');
  await page.waitForSelector('.second-factor >> text=10 recovery codes left.');
  // sign out, sign in again: the second-factor page after the password
  await page.context().clearCookies();
  await passwordStep(page, OPS);
  assert.match(page.url(), /\/login\/second-factor\?next=%2Fpeers/);
  await page.fill('#code', '111111');
  await Promise.all([page.waitForURL(/error=invalid/), page.click('button[type=submit]')]);
  assert.ok(await page.isVisible('p.err[role=alert]'));
  await screenshot(page, 'en-1280-second-factor-sign-in-wrong');
  // the next 30-second step's code (the enrolment took this one)
  await page.fill('#code', totpCode(secret, Date.now() + 30_000));
  await Promise.all([page.waitForURL(/\/peers$/), page.click('button[type=submit]')]);
  await page.waitForSelector('#page-title');
  await context.close();
  // the one refusal is the wrong code this test typed
  assert.deepEqual(
    problems.filter((p) => !/totp\/verify|status of 422/.test(p)),
    [],
  );
  assert.equal(problems.filter((p) => /^HTTP 422: POST .*\/settings\/second-factor\/totp\/verify$/.test(p)).length, 1);

  // on a phone, in dark mode: a recovery code instead of the app
  const phone = await watchedPage(ui.browser, { width: 390, colorScheme: 'dark' });
  await passwordStep(phone.page, OPS);
  await screenshot(phone.page, 'en-390-dark-second-factor-sign-in');
  await phone.page.fill('#code', codes[3].toLowerCase());
  await Promise.all([phone.page.waitForURL(/\/peers$/), phone.page.click('button[type=submit]')]);
  await phone.page.goto(`${ui.s.url}/profile`);
  await phone.page.waitForSelector('.second-factor >> text=9 recovery codes left.');
  await screenshot(phone.page, 'en-390-dark-second-factor-profile');
  await phone.context.close();
  assert.deepEqual(phone.problems, []);
});

test(
  'required for everyone: a viewer without one enrols on the way in (German), and the admin resets the operator under Users',
  { timeout: 180_000 },
  async () => {
    assert.equal((await ui.api('/users', 'POST', { ...VIEWER, role: 'viewer', language: 'de' })).status, 201);
    const admin = await watchedPage(ui.browser, { width: 1280 });
    await signIn(admin.page, ui.s.url, undefined, '/settings/security');
    await settled(admin.page);
    await admin.page.check('text=Require a second factor for every account');
    await admin.page.click('.card:has-text("Two-factor sign-in") button[type=submit]');
    await admin.page.waitForSelector('text=Two-factor policy saved');
    await screenshot(admin.page, 'en-1280-second-factor-policy');

    const v = await watchedPage(ui.browser, { width: 390, lang: 'de' });
    await passwordStep(v.page, VIEWER, '/dashboard');
    assert.match(v.page.url(), /\/login\/enrol/);
    await v.page.waitForSelector('text=Zweiten Faktor einrichten');
    const secret = (await v.page.textContent('#totp-secret'))!.trim();
    await screenshot(v.page, 'de-390-second-factor-enrol-page');
    await v.page.fill('#code', totpCode(secret, Date.now()));
    await Promise.all([v.page.waitForURL(/\/login\/enrol$/), v.page.click('button[type=submit]')]);
    await v.page.waitForSelector('#recovery-codes li');
    assert.equal(await v.page.locator('#recovery-codes li').count(), 10);
    await screenshot(v.page, 'de-390-second-factor-codes-page');
    await Promise.all([v.page.waitForURL(/\/dashboard$/), v.page.click('text=Weiter')]);
    await v.page.waitForSelector('#page-title');
    // the profile says it is required, and offers no way to turn it off
    await v.page.goto(`${ui.s.url}/profile`);
    await v.page.waitForSelector('.second-factor >> text=An');
    assert.equal(await v.page.locator('.second-factor >> text=Ausschalten').count(), 0);
    await v.context.close();
    assert.deepEqual(v.problems, []);

    await admin.page.goto(`${ui.s.url}/users`);
    await settled(admin.page);
    await admin.page.waitForSelector(`tr:has-text("${OPS.username}") >> text=2FA`);
    await admin.page.click(`button[aria-label="Reset 2FA: ${OPS.username}"]`);
    await admin.page.click('dialog >> text=Reset 2FA');
    await admin.page.waitForSelector(`text=Second factor of ${OPS.username} removed`);
    await screenshot(admin.page, 'en-1280-second-factor-users');
    assert.deepEqual(admin.problems, []);
    await admin.context.close();
    const st = await ui.api('/users', 'GET');
    assert.equal(st.data.users.find((u) => u.username === OPS.username)!.totp_active, false);
    await ui.api('/settings/security', 'PUT', { second_factor: { required: false } });
  },
);
