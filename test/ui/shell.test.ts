// The admin app in a real browser (Debian chromium via playwright-core) against a real sidecar:
// sign-in, the frame, every screen in the navigation (no console error, no failed request, no
// serious or critical axe-core violation in either theme, light and dark), screenshots of every
// screen at 1280 and 360 px in German and English (test-results/ui-screenshots/), language and
// theme switches that persist, history fallback, caching and CSP headers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { adminPage, axe, screenshot, serious, settled, signIn, uiServer, watchedPage } from '../lib/browser.js';

// Every test signs in through the form: more than the default 10 sign-ins per 15 minutes.
const ui = uiServer({ GATEHOUSE_RATE_LIMIT_LOGIN: '1000' });

async function navLinks(page: Page): Promise<{ href: string; text: string }[]> {
  return page.$$eval('nav#nav a', (as) => as.map((a) => ({ href: a.getAttribute('href')!, text: a.textContent!.trim() })));
}

test('the app is served with a strict CSP, index never cached, hashed assets immutable; signed out → sign-in with next', async () => {
  const anon = await ui.s.req('/peers?q=web', { headers: { accept: 'text/html' } });
  assert.equal(anon.status, 302);
  assert.equal(anon.headers.get('location'), `/login?next=${encodeURIComponent('/peers?q=web')}`);
  const json404 = await ui.s.req('/no-such-thing', { headers: { accept: 'application/json' } });
  assert.equal(json404.status, 404, 'API clients keep the JSON 404');
  const { cookie } = await ui.login();
  const page = await ui.s.req('/routes/12', { headers: { cookie, accept: 'text/html' } });
  assert.equal(page.status, 200);
  assert.equal(page.headers.get('cache-control'), 'no-cache');
  const csp = page.headers.get('content-security-policy')!;
  assert.match(csp, /script-src 'self'(;|$)/);
  assert.match(csp, /frame-ancestors 'none'/);
  assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|https?:/);
  const html = String(page.data);
  assert.doesNotMatch(html.replace(/<script[^>]*src="[^"]+"[^>]*><\/script>/g, ''), /<script/i, 'no inline script');
  const asset = /src="(\/assets\/[^"]+\.js)"/.exec(html)![1];
  const a = await ui.s.req(asset);
  assert.equal(a.status, 200);
  assert.match(a.headers.get('content-type')!, /javascript/);
  assert.equal(a.headers.get('cache-control'), 'public, max-age=31536000, immutable');
  // Gzipped for browsers that accept it (fetch sends Accept-Encoding gzip and decodes), plain otherwise.
  assert.equal(a.headers.get('content-encoding'), 'gzip');
  assert.match(a.headers.get('vary') ?? '', /Accept-Encoding/);
  const plain = await ui.s.req(asset, { headers: { 'accept-encoding': 'identity' } });
  assert.equal(plain.headers.get('content-encoding'), null);
  assert.equal(plain.data, a.data, 'same script either way');
  assert.equal((await ui.s.req('/assets/..%2Fpackage.json')).status, 404);
  assert.equal((await ui.s.req('/assets/nope-123.js')).status, 404);
});

test('sign in through the form, the frame shows where you are, every screen opens cleanly without sideways scrolling (en, de; 1280, 360 px; en 1920 px)', async () => {
  const { cookie, csrf } = await ui.login();
  for (const lang of ['en', 'de'] as const) {
    // The user's saved language decides (the switch in the top bar saves it).
    await ui.s.req('/api/v1/settings/language', { method: 'POST', json: { language: lang }, headers: { cookie, 'x-csrf-token': csrf } });
    // 1920 px (a wide desktop) in English only: the layout check, not another set of screenshots.
    for (const width of lang === 'en' ? [1280, 360, 1920] : [1280, 360]) {
      const w = await adminPage(ui.browser, ui.s.url, { lang, width });
      const { page, problems } = w;
      await settled(page);
      assert.equal(await page.getAttribute('html', 'lang'), lang);
      if (width === 360) await page.click('button.menu');
      const links = await navLinks(page);
      assert.ok(links.length >= 1, 'navigation has entries');
      for (const l of links) {
        if (width === 360 && !(await page.isVisible('nav#nav'))) await page.click('button.menu');
        await page.click(`nav#nav a[href="${l.href}"]`);
        await page.waitForURL((u) => u.pathname === l.href);
        await settled(page);
        assert.equal(await page.getAttribute(`nav#nav a[href="${l.href}"]`, 'aria-current'), 'page', `${l.href} marked as current`);
        assert.ok((await page.textContent('#page-title'))?.trim(), `${l.href} has a heading`);
        // Usable at this width: nothing wider than the window (no sideways scrolling of the page).
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
        assert.ok(overflow <= 0, `${l.href} at ${width}px is ${overflow}px wider than the window`);
        if (width !== 1920) await screenshot(page, `${lang}-${width}-${l.href.slice(1) || 'home'}`);
      }
      assert.deepEqual(problems, [], `${lang} ${width}px: no console error or failed request`);
      await w.context.close();
    }
  }
  await ui.s.req('/api/v1/settings/language', { method: 'POST', json: { language: 'en' }, headers: { cookie, 'x-csrf-token': csrf } });
});

test('accessibility: no serious or critical axe-core violation on any screen, themes default and pro, light and dark', async () => {
  for (const colorScheme of ['light', 'dark'] as const) {
    const w = await adminPage(ui.browser, ui.s.url, { colorScheme });
    const { page, problems } = w;
    for (const theme of ['default', 'pro']) {
      await page.selectOption('select[aria-label="Theme"]', theme);
      await page.waitForFunction((th) => document.documentElement.dataset.theme === th, theme);
      for (const l of await navLinks(page)) {
        await page.click(`nav#nav a[href="${l.href}"]`);
        await page.waitForURL((u) => u.pathname === l.href);
        await settled(page);
        const v = serious(await axe(page));
        assert.deepEqual(v, [], `${theme}/${colorScheme} ${l.href}: ${JSON.stringify(v, null, 1)}`);
      }
      await screenshot(page, `theme-${theme}-${colorScheme}-dashboard`);
    }
    await page.selectOption('select[aria-label="Theme"]', '');
    assert.deepEqual(problems, []);
    await w.context.close();
  }
});

test('language and theme switches persist (saved on the server, applied after a reload)', async () => {
  const w = await adminPage(ui.browser, ui.s.url, { lang: 'en' });
  const { page, problems } = w;
  await page.selectOption('select[aria-label="Language"]', 'de');
  await page.waitForFunction(() => document.documentElement.lang === 'de');
  await page.waitForSelector('nav#nav >> text=Übersicht');
  await page.selectOption('select[aria-label="Design"]', 'pro');
  await page.waitForFunction(() => document.documentElement.dataset.theme === 'pro');
  await page.waitForLoadState('networkidle');
  await page.reload();
  await page.waitForSelector('#page-title');
  assert.equal(await page.getAttribute('html', 'lang'), 'de');
  assert.equal(await page.getAttribute('html', 'data-theme'), 'pro');
  const { cookie } = await ui.login();
  const me = await ui.s.req('/api/v1/session', { headers: { cookie } });
  assert.equal(me.data.user!.language, 'de');
  assert.equal(me.data.user!.theme, 'pro');
  // Back to the defaults for the other tests.
  await page.selectOption('select[aria-label="Sprache"]', 'en');
  await page.waitForFunction(() => document.documentElement.lang === 'en');
  await page.selectOption('select[aria-label="Theme"]', '');
  await page.waitForLoadState('networkidle');
  assert.deepEqual(problems, []);
  await w.context.close();
});

test('keyboard: the skip link comes first and moves focus to the content; an unknown path says so; sign-out works', async () => {
  const w = await watchedPage(ui.browser);
  const { page, problems } = w;
  await signIn(page, ui.s.url, undefined, '/no/such/screen');
  await settled(page);
  assert.match((await page.textContent('#page-title'))!, /Not found/);
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement?.className), 'skip');
  await page.keyboard.press('Enter');
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'main');
  await Promise.all([page.waitForURL(/\/login/), page.click('form.logout button')]);
  assert.deepEqual(problems, []);
  await w.context.close();
});
