// Route auth screen (/routes/:id/auth) in a real browser, through the UI alone (the API only seeds
// a peer, a route and a user, and checks what was stored): turn route auth on with method TOTP,
// set up TOTP by reading the secret the screen shows and typing a code computed from it (a wrong
// code first: its error shows next to the input), a server-side field error next to its input with
// nothing typed lost, a logo upload (a PNG made here) shown as the current image and in the live
// preview of the login page, the preview following unsaved values, a route user with their own
// TOTP, removal. axe, screenshots en/de × 1280/360, no console error.
import { test } from 'node:test';
import { waitFor } from '../lib/wait.js';
import assert from 'node:assert/strict';
import zlib from 'node:zlib';
import speakeasy from 'speakeasy';
import type { Page } from 'playwright-core';
import { adminPage, axe, screenshot, serious, settled, uiServer } from '../lib/browser.js';

const ui = uiServer({ GATEHOUSE_WG_SUBNET: '10.81.0.0/24', GATEHOUSE_RATE_LIMIT_ADMIN: '100000', GATEHOUSE_RATE_LIMIT_LOGIN: '100000' }, {}, { api: 'token' });
const api = ui.api;

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
function crc32(b: Buffer): number {
  let c = 0xffffffff;
  for (const x of b) c = CRC_TABLE[(c ^ x) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}
/** A w×h RGB PNG of one colour. */
function makePng(w: number, h: number, rgb: [number, number, number]): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const td = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(td));
    return Buffer.concat([len, td, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(w, 0);
  ihdr.writeUInt32BE(h, 4);
  ihdr[8] = 8;
  ihdr[9] = 2;
  ihdr[10] = 0;
  ihdr[11] = 0;
  ihdr[12] = 0;
  const rows = Buffer.concat(Array.from({ length: h }, () => Buffer.concat([Buffer.from([0]), Buffer.from(Array.from({ length: w }, () => rgb).flat())])));
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', zlib.deflateSync(rows)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

let routeId: number;
let userId: number;
const DOMAIN = 'wiki.ra-ui.example.test';

ui.setup(async () => {
  const p = await api('/peers', { method: 'POST', json: { name: 'wiki-host' } });
  assert.equal(p.status, 201, JSON.stringify(p.data));
  const r = await api('/routes', { method: 'POST', json: { domain: DOMAIN, target_kind: 'peer', peer_id: p.data.peer.id, target_port: 8080 } });
  assert.equal(r.status, 201, JSON.stringify(r.data));
  routeId = r.data.route.id;
  const u = await api('/users', { method: 'POST', json: { username: 'alice', email: 'alice@example.test', password: 'alice-password-1', role: 'user' } });
  assert.equal(u.status, 201, JSON.stringify(u.data));
  userId = u.data.user.id;
});

const stored = async () => (await api(`/routes/${routeId}/auth`)).data.route_auth;
const preview = (page: Page) => page.frameLocator('iframe.ra-preview');

async function openScreen(page: Page): Promise<void> {
  await page.goto(`${ui.s.url}/routes/${routeId}/auth`);
  await page.waitForSelector('[data-testid=ra-state]');
  await settled(page);
}

/** Reads the secret the screen shows in a TOTP panel, types a code made from it, confirms. */
async function completeTotp(page: Page, panel: string): Promise<string> {
  const secret = (await page.inputValue(`${panel} .ra-secret`)).trim();
  assert.match(secret, /^[A-Z2-7]{16,}$/);
  assert.ok((await page.inputValue(`${panel} .ra-otpauth`)).includes(`secret=${secret}`));
  // shown once: Copy and Download beside each (components/secret.tsx)
  assert.equal(await page.locator(`${panel} .secret-once a[download]`).count(), 2);
  assert.ok(await page.locator(`${panel} img.qr`).evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 100), 'the QR code is shown');
  await page.fill(`${panel} input[name=token]`, speakeasy.totp({ secret, encoding: 'base32' }));
  await page.click(`${panel} button[type=submit]`);
  await page.waitForSelector(`${panel} .ra-totp-setup`, { state: 'detached' });
  return secret;
}

test('turn route auth on with TOTP, confirm the set-up with a code computed from the shown secret; field errors next to inputs', async () => {
  const w = await adminPage(ui.browser, ui.s.url);
  const { page, problems } = w;
  w.allowHttpError('/totp-verify', 400);
  w.allowHttpError('/totp-verify', 422); // a refusal the document cannot state (a combination, the stored state)
  w.allowHttpError(`/routes/${routeId}/auth`, 400);
  w.allowHttpError(`/routes/${routeId}/auth`, 422); // a refusal the document cannot state (a combination, the stored state)
  await openScreen(page);
  assert.match((await page.textContent('#page-title')) ?? '', new RegExp(DOMAIN.replace(/\./g, '\\.')));
  assert.equal(await page.getAttribute('[data-testid=ra-state]', 'data-on'), 'no');
  await page.selectOption('#f-method', 'totp');
  assert.equal(await page.locator('#f-password').count(), 0, 'no password for method TOTP');
  await page.fill('#f-email', 'owner@example.test');
  await page.selectOption('#f-session_max_age', String(7 * 86_400_000));
  await page.fill('#f-title', 'Team wiki');
  await page.fill('#f-primary_color', 'red');
  await page.click('form[aria-label="Sign-in"] button[type=submit]');
  await page.waitForSelector('#f-primary_color-err');
  assert.match((await page.textContent('#f-primary_color-err')) ?? '', /colour/);
  assert.equal(await page.getAttribute('#f-primary_color', 'aria-invalid'), 'true');
  assert.equal(await page.inputValue('#f-title'), 'Team wiki', 'nothing typed is lost');
  assert.equal(await page.inputValue('#f-email'), 'owner@example.test');
  assert.equal(await stored(), null, 'nothing written on a 400');
  await page.fill('#f-primary_color', '#123456');
  // the preview follows the unsaved values
  await preview(page).locator('h1', { hasText: 'Team wiki' }).waitFor();
  assert.equal(await preview(page).locator('input[name=step]').first().getAttribute('value'), 'totp');
  await page.click('form[aria-label="Sign-in"] button[type=submit]');
  await page.waitForSelector('[data-testid=ra-state][data-on=yes]');
  let ra = await stored();
  assert.equal(ra!.method, 'totp');
  assert.equal(ra!.email, 'owner@example.test');
  assert.equal(ra!.session_max_age, 7 * 86_400_000);
  assert.equal(ra!.title, 'Team wiki');
  assert.equal(ra!.primary_color, '#123456');
  assert.equal(ra!.totp_active, false);

  // TOTP: a wrong code first (error next to the input), then a code computed from the secret shown
  await page.click('[data-testid=totp-account] button:has-text("Set up TOTP")');
  await page.waitForSelector('[data-testid=totp-account] .ra-secret');
  await screenshot(page, 'en-1280-routeauth-totp-setup');
  await page.fill('[data-testid=totp-account] input[name=token]', '12');
  await page.click('[data-testid=totp-account] button[type=submit]');
  await page.waitForSelector('[data-testid=totp-account] #f-token-err');
  assert.equal((await stored())!.totp_active, false);
  const secret = await completeTotp(page, '[data-testid=totp-account]');
  await page.waitForFunction(() => /set up/.test(document.querySelector('main')?.textContent ?? '') && !!document.querySelector('.badge.ok'));
  ra = await stored();
  assert.equal(ra!.totp_active, true, 'the API stored an active TOTP');
  assert.equal(ra!.totp_setup_pending, false);
  // the stored secret is the one shown: a code from it is accepted by the service
  const svc = ui.s.deps.routeAuth as { checkTotp(cfg: unknown, token: string): Promise<boolean>; config(id: number): Promise<unknown> };
  const cfg = await svc.config(routeId);
  const next = speakeasy.totp({ secret, encoding: 'base32', time: Math.floor(Date.now() / 1000) + 30 });
  assert.equal(await svc.checkTotp(cfg, next), true);
  assert.deepEqual(serious(await axe(page)), []);
  assert.deepEqual(problems, []);
  await w.context.close();
});

test('upload a logo: shown as the current image and in the preview; a non-image is refused next to the input; remove it', async () => {
  const w = await adminPage(ui.browser, ui.s.url);
  const { page, problems } = w;
  w.allowHttpError(`/routes/${routeId}/branding/logo`, 400);
  w.allowHttpError(`/routes/${routeId}/branding/logo`, 422); // a refusal the document cannot state (a combination, the stored state)
  await openScreen(page);
  const png = makePng(24, 12, [200, 30, 30]);
  await page.setInputFiles('#ra-logo', { name: 'logo.png', mimeType: 'image/png', buffer: png });
  await page.waitForSelector('[data-testid=current-logo]');
  await page.waitForFunction(() => (document.querySelector('[data-testid=current-logo]') as HTMLImageElement | null)?.naturalWidth === 24);
  const img = await fetch(`${ui.s.url}/api/v1/routes/${routeId}/branding/logo`, { headers: ui.headers });
  assert.deepEqual(Buffer.from(await img.arrayBuffer()), png, 'the API stored the uploaded bytes');
  const logo = preview(page).locator('img.logo');
  await logo.waitFor();
  await page.waitForFunction(
    () => {
      const img = (document.querySelector('iframe.ra-preview') as HTMLIFrameElement | null)?.contentDocument?.querySelector(
        'img.logo',
      ) as HTMLImageElement | null;
      return !!img && img.complete && img.naturalWidth === 24 && img.naturalHeight === 12;
    },
    undefined,
    { timeout: 10_000 },
  );
  // SVG is refused by content; the error shows next to the file input
  await page.setInputFiles('#ra-logo', { name: 'evil.png', mimeType: 'image/png', buffer: Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>') });
  await page.waitForSelector('#ra-logo-err');
  assert.match((await page.textContent('#ra-logo-err')) ?? '', /PNG, JPEG, GIF or WebP/);
  assert.deepEqual(
    Buffer.from(await (await fetch(`${ui.s.url}/api/v1/routes/${routeId}/branding/logo`, { headers: ui.headers })).arrayBuffer()),
    png,
    'the refused file changed nothing',
  );
  await screenshot(page, 'en-1280-routeauth-logo');
  // the preview language switch
  await page.selectOption('.ra-pv-lang select', 'de');
  await preview(page).locator('html[lang=de]').waitFor();
  assert.deepEqual(serious(await axe(page)), []);
  await page.click('.ra-image button:has-text("Remove")');
  await page.waitForSelector('[data-testid=current-logo]', { state: 'detached' });
  assert.equal((await stored())!.logo, null);
  await page.setInputFiles('#ra-logo', { name: 'logo.png', mimeType: 'image/png', buffer: png });
  await page.waitForSelector('[data-testid=current-logo]');
  assert.deepEqual(problems, []);
  await w.context.close();
});

test('a route user with their own TOTP; remove route auth after one confirmation', async () => {
  const w = await adminPage(ui.browser, ui.s.url);
  const { page, problems } = w;
  await openScreen(page);
  await page.check('.ra-users label:has-text("alice") input');
  await page.click('button:has-text("Save users")');
  await page.waitForSelector(`[data-testid=totp-${userId}]`);
  const route = (await api(`/routes/${routeId}`)).data.route;
  assert.deepEqual(route.user_ids, [userId]);
  await page.click(`[data-testid=totp-${userId}] button:has-text("Set up TOTP")`);
  await page.waitForSelector(`[data-testid=totp-${userId}] .ra-secret`);
  await completeTotp(page, `[data-testid=totp-${userId}]`);
  await page.waitForFunction(() => document.querySelectorAll('.badge.ok').length >= 2);
  const ra = await stored();
  assert.deepEqual(
    ra!.users.map((u: { user_id: number; totp_active: boolean }) => [u.user_id, u.totp_active]),
    [[userId, true]],
  );

  // cancelling keeps it, confirming removes it
  await page.click('button:has-text("Remove route login")');
  await page.click('dialog[open] button:has-text("Cancel")');
  assert.notEqual(await stored(), null);
  await page.click('button:has-text("Remove route login")');
  await page.click('dialog[open] button:has-text("Remove route login")');
  await page.waitForSelector('[data-testid=ra-state][data-on=no]');
  assert.equal(await stored(), null);
  assert.deepEqual(problems, []);
  await w.context.close();
});

test('screenshots and axe: en/de at 1280 and 360 px, light and dark', async () => {
  // configured again (through the API: this test is about the look)
  const saved = await api(`/routes/${routeId}/auth`, {
    method: 'POST',
    json: {
      method: 'email_password',
      two_factor_enabled: true,
      two_factor_method: 'totp',
      email: 'owner@example.test',
      password: 'owner-password-1',
      session_max_age: 86_400_000,
      title: 'Team wiki',
      description: 'For the team only',
      primary_color: '#0f6b62',
    },
  });
  assert.equal(saved.status, 200, JSON.stringify(saved.data));
  const { cookie, csrf } = await ui.login();
  for (const lang of ['en', 'de'] as const) {
    await ui.s.req('/api/v1/settings/language', { method: 'POST', json: { language: lang }, headers: { cookie, 'x-csrf-token': csrf } });
    for (const width of [1280, 360]) {
      const w = await adminPage(ui.browser, ui.s.url, { lang, width });
      const { page, problems } = w;
      await openScreen(page);
      await preview(page).locator('h1').waitFor();
      await screenshot(page, `${lang}-${width}-routeauth`);
      assert.deepEqual(serious(await axe(page)), [], `${lang} ${width}`);
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      assert.ok(overflow <= 1, `${lang} ${width}: no horizontal scrolling (${overflow}px)`);
      assert.deepEqual(problems, []);
      await w.context.close();
    }
  }
  await ui.s.req('/api/v1/settings/language', { method: 'POST', json: { language: 'en' }, headers: { cookie, 'x-csrf-token': csrf } });
  const dark = await adminPage(ui.browser, ui.s.url, { colorScheme: 'dark' });
  await openScreen(dark.page);
  assert.deepEqual(serious(await axe(dark.page)), [], 'dark');
  assert.deepEqual(dark.problems, []);
  await dark.context.close();
});

test('share links on the route detail: a field error, a link shown once with Copy, listed with uses; revoked, its page says so; en/de at 1280 and 390 px, dark', async () => {
  for (const [lang, width] of [
    ['en', 1280],
    ['de', 390],
  ] as const) {
    const { cookie, csrf } = await ui.login();
    await ui.s.req('/api/v1/settings/language', { method: 'POST', json: { language: lang }, headers: { cookie, 'x-csrf-token': csrf } });
    const w = await adminPage(ui.browser, ui.s.url, { lang, width });
    const { page, problems } = w;
    // a path prefix with a dot segment: a rule the schema cannot state, 422 (share-links/paths.ts)
    w.allowHttpError(`/routes/${routeId}/share-links`, 422);
    await w.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: ui.s.url });
    await page.goto(`${ui.s.url}/routes/${routeId}`);
    await settled(page);
    const card = page.locator('.share-links');
    await card.locator('[data-testid=share-link-form]').waitFor();
    await card.locator('input[name=path_prefix]').fill('/docs/../admin');
    await card.locator('input[name=note]').fill('auditor');
    await card.locator('button[type=submit]').click();
    await card.locator('.field-error').waitFor();
    assert.equal(await card.locator('input[name=note]').inputValue(), 'auditor', 'nothing typed is lost');
    const before = (await api(`/routes/${routeId}/share-links`)).data.share_links.length;
    await card.locator('input[name=path_prefix]').fill('/docs');
    await card.locator('input[name=max_uses]').fill('3');
    await card.locator('button[type=submit]').click();
    const shown = card.locator('[data-testid=share-link-url]');
    await shown.waitFor();
    const url = (await shown.textContent())!.trim();
    assert.match(url, new RegExp(`^https?://${DOMAIN.replace(/\./g, '\\.')}/route-auth/share\\?t=gthsl_[A-Za-z0-9_-]{43}$`));
    await card.locator('.secret-once button').click();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), url, 'Copy puts the link on the clipboard');
    const links = (await api(`/routes/${routeId}/share-links`)).data.share_links;
    assert.equal(links.length, before + 1);
    assert.equal(links[0].path_prefix, '/docs');
    assert.equal(links[0].max_uses, 3);
    assert.equal(links[0].note, 'auditor');

    // a visitor opens it (on the sidecar itself, with the route's domain as Caddy names it): the list counts the use, live
    const visitor = await ui.browser.newContext({
      locale: lang === 'en' ? 'en-US' : 'de-DE',
      viewport: { width, height: 800 },
      extraHTTPHeaders: { 'x-route-domain': DOMAIN },
    });
    const vp = await visitor.newPage();
    const path = new URL(url).pathname + new URL(url).search;
    const opened = await vp.request.get(`${ui.s.url}${path}`, { maxRedirects: 0 });
    assert.equal(opened.status(), 303);
    assert.equal(opened.headers().location, '/docs');
    await card.locator('tr[data-share-state=active]', { hasText: '1 / 3' }).first().waitFor();
    assert.deepEqual(serious(await axe(page)), [], `${lang} ${width}`);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 1, `${lang} ${width}: no horizontal scrolling (${overflow}px)`);
    await screenshot(page, `${lang}-${width}-route-share-links`);

    // revoked through the UI: the visitor's page says so in their language
    const revokedBefore = ((await api(`/routes/${routeId}/share-links`)).data.share_links as { state: string }[]).filter((l) => l.state === 'revoked').length;
    await card.locator('tr[data-share-state=active] button.danger').first().click();
    const c = page.locator('dialog[open]');
    await c.waitFor();
    await c.locator('button.danger').click();
    await card.locator('tr[data-share-state=revoked]').first().waitFor();
    // the server has revoked it (and ended its sessions) before the visitor comes back
    await waitFor(
      async () =>
        ((await api(`/routes/${routeId}/share-links`)).data.share_links as { state: string }[]).filter((l) => l.state === 'revoked').length > revokedBefore,
      10_000,
      'the link revoked on the server',
    );
    const gone = await vp.goto(`${ui.s.url}${path}`);
    assert.equal(gone?.status(), 410);
    assert.match((await vp.textContent('main'))!, lang === 'en' ? /was revoked/ : /wurde widerrufen/);
    await screenshot(vp, `${lang}-${width}-share-link-revoked`);
    await visitor.close();
    assert.deepEqual(problems, []);
    await w.context.close();
  }
  const { cookie, csrf } = await ui.login();
  await ui.s.req('/api/v1/settings/language', { method: 'POST', json: { language: 'en' }, headers: { cookie, 'x-csrf-token': csrf } });
  const dark = await adminPage(ui.browser, ui.s.url, { colorScheme: 'dark', width: 390 });
  await dark.page.goto(`${ui.s.url}/routes/${routeId}`);
  await settled(dark.page);
  await dark.page.locator('.share-links tr[data-share-state]').first().waitFor();
  assert.deepEqual(serious(await axe(dark.page)), [], 'dark');
  await screenshot(dark.page, 'en-390-dark-route-share-links');
  assert.deepEqual(dark.problems, []);
  await dark.context.close();
});
