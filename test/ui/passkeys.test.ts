// Passkeys in the browser, with Chromium's virtual authenticator (CDP WebAuthn.*: ctap2, internal,
// resident keys, user verification): an operator adds a passkey under Profile (and sees the
// recovery codes of a first second factor once), signs out and signs in again without a password
// ("Sign in with a passkey"), then, with a second factor required for everyone, signs in with the
// password plus the passkey on the second-factor page; the last passkey cannot be removed under the
// policy, and is removed once it is lifted. An account without a second factor under the policy
// enrols a passkey at the forced /login/enrol (its recovery codes shown once), signs in with it, and
// renames it in place under Profile. The server runs on a fixed port with
// GATEHOUSE_ADMIN_ORIGIN=http://localhost:<port>: WebAuthn needs a host name (never a bare IP)
// in a secure context, which localhost is.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { screenshot, settled, signIn, uiServer, watchedPage } from '../lib/browser.js';

/** A free loopback port (the origin must be known before the server starts). */
async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const { port } = srv.address() as net.AddressInfo;
  await new Promise((resolve) => srv.close(resolve));
  return port;
}

let origin = '';
const ui = uiServer(
  async () => {
    const port = await freePort();
    origin = `http://localhost:${port}`;
    return { GATEHOUSE_PORT: String(port), GATEHOUSE_BIND: '127.0.0.1', GATEHOUSE_ADMIN_ORIGIN: origin, GATEHOUSE_RATE_LIMIT_LOGIN: '1000' };
  },
  { listen: true },
);
const OPS = { username: 'ui-pk-ops', password: 'ui-pk-ops-password-1' };

test('passkeys: enrol under Profile, sign in without a password, sign in with password + passkey under the policy, remove', { timeout: 180_000 }, async () => {
  assert.equal((await ui.api('/users', 'POST', { ...OPS, role: 'operator' })).status, 201);
  const { page, context, problems, allowHttpError } = await watchedPage(ui.browser, { width: 1280 });
  const cdp = await context.newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true },
  });

  // enrol under Profile: a name and the password, then the authenticator; a first factor shows the recovery codes once
  await signIn(page, origin, OPS, '/profile');
  await settled(page);
  await page.click('.passkeys >> text=Add a passkey');
  await page.fill('.passkeys #f-name', 'Laptop');
  await page.fill('.passkeys #f-current', OPS.password);
  await page.click('.passkeys button[type=submit]');
  await page.waitForSelector('.passkeys #recovery-codes');
  const codes = (await page.inputValue('.passkeys #recovery-codes')).match(/[A-Z2-9]{4}-[A-Z2-9]{4}-[A-Z2-9]{4}-[A-Z2-9]{4}/g) ?? [];
  assert.equal(codes.length, 10);
  await page.click('.passkeys >> text=I have saved them');
  await page.waitForSelector('.passkeys li:has-text("Laptop")');
  await screenshot(page, 'en-1280-passkeys-profile');
  const creds = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
  assert.equal(creds.credentials.length, 1);
  assert.equal(creds.credentials[0].isResidentCredential, true);
  assert.equal(creds.credentials[0].rpId, 'localhost');

  // sign out; sign in without a password
  await context.clearCookies();
  await page.goto(`${origin}/peers`);
  await page.waitForURL(/\/login/);
  await screenshot(page, 'en-1280-passkeys-login');
  await Promise.all([page.waitForURL(/\/peers$/), page.click('#passkey-button')]);
  await page.waitForSelector('#page-title');
  const who = await page.evaluate(() => fetch('/api/v1/session', { headers: { accept: 'application/json' } }).then((r) => r.json()));
  assert.equal(who.user.username, OPS.username);

  // a second factor for everyone: the password, then the passkey on the second-factor page
  assert.equal((await ui.api('/settings/security', 'PUT', { second_factor: { required: true } })).status, 200);
  await context.clearCookies();
  await page.goto(`${origin}/dashboard`);
  await page.waitForURL(/\/login/);
  await page.fill('#username', OPS.username);
  await page.fill('#password', OPS.password);
  await Promise.all([page.waitForURL(/\/login\/second-factor/), page.click('button[type=submit]')]);
  assert.ok(await page.isVisible('#passkey-button'));
  await screenshot(page, 'en-1280-passkeys-second-factor');
  await Promise.all([page.waitForURL(/\/dashboard$/), page.click('#passkey-button')]);
  await page.waitForSelector('#page-title');

  // the last second factor stays while the policy holds; removed once it is lifted
  await page.goto(`${origin}/profile`);
  await settled(page);
  await page.waitForSelector('.second-factor >> text=Your passkeys are your second factor');
  allowHttpError('/settings/second-factor/passkeys/', 409);
  await page.click('button[aria-label="Remove passkey Laptop"]');
  await page.fill('.passkeys #f-current', OPS.password);
  await page.click('.passkeys button[type=submit]');
  await page.waitForSelector('.passkeys >> text=this is your last one');
  assert.equal((await ui.api('/settings/security', 'PUT', { second_factor: { required: false } })).status, 200);
  await page.click('.passkeys button[type=submit]');
  await page.waitForSelector('text=Passkey removed');
  await page.waitForSelector('.passkeys >> text=No passkey yet.');
  await context.close();
  assert.deepEqual(problems, []);
  const list = await ui.api('/users', 'GET');
  assert.ok(list.data.users.some((u: { username: string }) => u.username === OPS.username));
});

test('forced enrolment with a passkey: the recovery codes once, then the passkey signs in; renamed in place under Profile', { timeout: 120_000 }, async () => {
  const NEW = { username: 'ui-pk-enrol', password: 'ui-pk-enrol-password-1' };
  assert.equal((await ui.api('/users', 'POST', { ...NEW, role: 'viewer' })).status, 201);
  assert.equal((await ui.api('/settings/security', 'PUT', { second_factor: { required: true } })).status, 200);
  try {
    const { page, context, problems } = await watchedPage(ui.browser, { width: 390 });
    const cdp = await context.newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true },
    });
    await page.goto(`${origin}/peers`);
    await page.waitForURL(/\/login/);
    await page.fill('#username', NEW.username);
    await page.fill('#password', NEW.password);
    await Promise.all([page.waitForURL(/\/login\/enrol/), page.click('button[type=submit]')]);
    // the TOTP and the passkey, side by side; the passkey's name, then the authenticator
    await page.waitForSelector('#passkey-enrol:not([hidden])');
    assert.ok(await page.isVisible('#totp-secret'));
    await screenshot(page, 'en-390-passkeys-enrol');
    await page.fill('#passkey-name', 'Phone');
    await page.click('#passkey-enrol-button');
    await page.waitForSelector('#passkey-codes:not([hidden])');
    const codes = (await page.locator('#recovery-codes code').allTextContents()).filter((c) => /^[A-Z2-9]{4}-[A-Z2-9]{4}-[A-Z2-9]{4}-[A-Z2-9]{4}$/.test(c));
    assert.equal(codes.length, 10);
    assert.equal(await page.isVisible('#totp-enrol'), false, 'the TOTP form is gone');
    assert.equal(await page.getAttribute('#passkey-continue', 'href'), '/peers');
    await screenshot(page, 'en-390-passkeys-enrol-codes');
    await Promise.all([page.waitForURL(/\/peers$/), page.click('#passkey-continue')]);
    await page.waitForSelector('#page-title');
    assert.equal((await cdp.send('WebAuthn.getCredentials', { authenticatorId })).credentials.length, 1);

    // signed out: the password, then the enrolled passkey on the second-factor page
    await context.clearCookies();
    await page.goto(`${origin}/profile`);
    await page.waitForURL(/\/login/);
    await page.fill('#username', NEW.username);
    await page.fill('#password', NEW.password);
    await Promise.all([page.waitForURL(/\/login\/second-factor/), page.click('button[type=submit]')]);
    await Promise.all([page.waitForURL(/\/profile$/), page.click('#passkey-button')]);
    await settled(page);

    // renamed in place: the old name, then the new one
    await page.waitForSelector('.passkeys li:has-text("Phone")');
    await page.click('button[aria-label="Rename passkey Phone"]');
    await page.fill('.passkey-rename #f-name', 'Work phone');
    await screenshot(page, 'en-390-passkeys-rename');
    await page.click('.passkey-rename button[type=submit]');
    await page.waitForSelector('text=Passkey renamed');
    await page.waitForSelector('.passkeys li:has-text("Work phone")');
    assert.equal(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), true, 'no sideways scroll');
    const mine = await page.evaluate(() => fetch('/api/v1/settings/second-factor/passkeys', { headers: { accept: 'application/json' } }).then((r) => r.json()));
    assert.deepEqual(
      mine.passkeys.map((p: { name: string }) => p.name),
      ['Work phone'],
    );
    await context.close();
    assert.deepEqual(problems, []);
  } finally {
    await ui.api('/settings/security', 'PUT', { second_factor: { required: false } });
  }
});
