// What an experienced self-hoster found when first trying the admin UI at desktop (1280 px) and
// phone (390 px) widths, each done the way they did it and checked against what they should see, in
// English and German, themes default and pro, light and dark, with a screenshot of every screen
// (<lang>-<width>-first-look-<screen>):
// - dashboard figures add up: the big number of Peers and Routes is the total with "n of N online"
//   / "n active" beneath; the disk's used + available + reserved-for-root = size (the statfs
//   figures of this machine's data directory); the uptime is Gatehouse's (the sidecar process), the
//   host's labelled as such; the figure cards leave no lone card in a row (4 in a row, 2 × 2, or one column);
// - light/dark switch beside the theme (system/light/dark), remembered across a reload and in force
//   at the first frame (before the app's code ran);
// - the navigation stays in view when the page scrolls; the header is one row on a phone;
// - a backup passphrase typed twice (download and automatic job): a mismatch sends nothing;
// - the restore preview names settings as a person knows them (the key as a detail);
// - the Debug checkbox sits beside its label; "Show configuration and QR code" fits on a phone;
// - the route-auth screen (live preview in a frame) and the visitor login page open at the top with
//   the form in view; a failed sign-in keeps the name typed (admin login and visitor login).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { ADMIN } from '../../sidecar/test/lib/server.js';
import { adminPage, axe, screenshot, serious, settled, uiServer, watchedPage } from '../lib/browser.js';

const ui = uiServer({ GATEHOUSE_RATE_LIMIT_ADMIN: '100000', GATEHOUSE_RATE_LIMIT_LOGIN: '100000', GATEHOUSE_WG_SUBNET: '10.82.0.0/24' }, {}, { api: 'token' });
const api = ui.api;
const PASS = 'first look passphrase 1';
const RA_DOMAIN = 'wiki.first-look.example.test';
let peerId: number;
let routeId: number;

ui.setup(async () => {
  peerId = (await api('/peers', 'POST', { name: 'laptop' })).data.peer.id;
  assert.equal((await api('/peers', 'POST', { name: 'phone' })).status, 201);
  const r = await api('/routes', 'POST', { domain: RA_DOMAIN, target_kind: 'peer', peer_id: peerId, target_port: 8080 });
  assert.equal(r.status, 201, JSON.stringify(r.data));
  routeId = r.data.route.id;
  const off = await api('/routes', 'POST', { domain: 'off.first-look.example.test', target_kind: 'peer', peer_id: peerId, target_port: 8081, enabled: false });
  assert.equal(off.status, 201, JSON.stringify(off.data));
  const auth = await api(`/routes/${routeId}/auth`, 'POST', {
    method: 'email_password',
    email: 'owner@example.test',
    password: 'owner-password-1',
    session_max_age: 86_400_000,
    title: 'Team wiki',
    description: 'For the team only',
  });
  assert.equal(auth.status, 200, JSON.stringify(auth.data));
});

type Lang = 'en' | 'de';
interface Look {
  lang: Lang;
  width: number;
  theme: 'default' | 'pro';
  scheme: 'light' | 'dark';
}
/** Every language at both widths, each theme and scheme at each width. */
const LOOKS: Look[] = [
  { lang: 'en', width: 1280, theme: 'default', scheme: 'light' },
  { lang: 'en', width: 390, theme: 'pro', scheme: 'dark' },
  { lang: 'de', width: 1280, theme: 'pro', scheme: 'dark' },
  { lang: 'de', width: 390, theme: 'default', scheme: 'light' },
];
const name = (l: Look, screen: string) => `${l.lang}-${l.width}-${l.theme}-${l.scheme}-first-look-${screen}`;

/** A signed-in page in the look's language and width, the OS in the look's scheme, the user's theme set. */
async function open(l: Look, p = '/dashboard') {
  await ui.s.deps.db.models.User.update({ language: l.lang, theme: l.theme }, { where: { username: ADMIN.username } });
  const w = await adminPage(ui.browser, ui.s.url, { lang: l.lang, width: l.width, colorScheme: l.scheme });
  await w.page.goto(ui.s.url + p);
  await w.page.waitForSelector('#page-title');
  await settled(w.page);
  assert.equal(await w.page.getAttribute('html', 'data-theme'), l.theme);
  assert.equal(await w.page.getAttribute('html', 'data-scheme'), l.scheme);
  return w;
}

const locale = (l: Lang) => (l === 'de' ? 'de-DE' : 'en-GB');
/** The app's byte format (binary units, the language's decimal sign). */
function bytes(n: number, l: Lang): string {
  const units = ['B', 'KB', 'MB', 'GB', 'TB', 'PB'];
  let i = 0;
  let v = n;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${new Intl.NumberFormat(locale(l), { maximumFractionDigits: i === 0 ? 0 : v < 10 ? 2 : 1 }).format(v)} ${units[i]}`;
}
const text = async (page: Page, testid: string) => ((await page.textContent(`[data-testid="${testid}"]`)) ?? '').trim();

/** The cards of the figures grid, grouped by row (their top edge). */
async function cardRows(page: Page): Promise<number[]> {
  return page.$$eval('[data-testid="dash-figures"] > .card', (cards) => {
    const rows = new Map<number, number>();
    for (const c of cards) {
      const top = Math.round(c.getBoundingClientRect().top);
      rows.set(top, (rows.get(top) ?? 0) + 1);
    }
    return [...rows.values()];
  });
}

async function noHorizontalOverflow(page: Page, where: string): Promise<void> {
  const { scroll, client } = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth }));
  assert.ok(scroll <= client, `${where}: the page is ${scroll} px wide in a ${client} px window`);
}

for (const l of LOOKS) {
  test(`dashboard figures add up, ${l.lang} ${l.width} px ${l.theme}/${l.scheme}`, async () => {
    const w = await open(l);
    const { page } = w;
    const stats = (await api('/dashboard/stats')).data;
    assert.equal(stats.peers.total, 2);
    assert.equal(stats.routes.total, 2);
    assert.equal(stats.routes.active, 1);
    // Peers: the big number is the total, the online count beneath it.
    assert.equal(await text(page, 'peers-total'), '2');
    assert.equal(await text(page, 'peers-online-label'), l.lang === 'de' ? '0 von 2 online' : '0 of 2 online');
    // Routes: the total, and how many of them are active.
    assert.equal(await text(page, 'routes-total'), '2');
    assert.equal(await text(page, 'routes-active-label'), l.lang === 'de' ? '1 aktiv' : '1 active');

    // Disk: the API's parts add up to the size, and are this machine's statfs figures of the data directory.
    const res = (await api('/system/resources')).data;
    const st = fs.statfsSync(ui.s.dataDir);
    assert.equal(res.disk.total, st.blocks * st.bsize);
    assert.equal(res.disk.used + res.disk.available + res.disk.reserved, res.disk.total);
    assert.ok(Math.abs(res.disk.reserved - (st.bfree - st.bavail) * st.bsize) < 64 * 1024 * 1024, 'reserved = statfs bfree - bavail');
    await page.waitForSelector('[data-testid="res-disk-parts"]');
    const parts = await text(page, 'res-disk-parts');
    const b = (n: number) => bytes(n, l.lang);
    if (res.disk.reserved > 0) {
      const want =
        l.lang === 'de'
          ? `${b(res.disk.used)} belegt + ${b(res.disk.available)} verfügbar + ${b(res.disk.reserved)} für root reserviert = ${b(res.disk.total)}`
          : `${b(res.disk.used)} used + ${b(res.disk.available)} available + ${b(res.disk.reserved)} reserved for root = ${b(res.disk.total)}`;
      // used moves a little between the two reads: compare the wording and the fixed figures
      assert.ok(parts.includes(`+ ${b(res.disk.reserved).split(' ')[1]}`) || parts.includes(b(res.disk.reserved)), `${parts} vs ${want}`);
      assert.ok(parts.endsWith(`= ${b(res.disk.total)}`), parts);
      assert.match(parts, l.lang === 'de' ? /belegt \+ .* verfügbar \+ .* für root reserviert = / : /used \+ .* available \+ .* reserved for root = /);
    } else assert.ok(parts.endsWith(`= ${b(res.disk.total)}`), parts);

    // Uptime: Gatehouse's own (this process started seconds ago), the host's separately labelled.
    assert.ok(res.gatehouse_uptime.seconds <= res.uptime.seconds);
    assert.equal(
      await text(page, 'res-uptime'),
      l.lang === 'de'
        ? `${res.gatehouse_uptime.days} T. ${res.gatehouse_uptime.hours} Std. ${res.gatehouse_uptime.minutes} Min.`
        : `${res.gatehouse_uptime.days} d ${res.gatehouse_uptime.hours} h ${res.gatehouse_uptime.minutes} min`,
    );
    const labels = await page.$$eval('[data-testid="resources"] dt', (dts) => dts.map((d) => d.textContent));
    assert.ok(labels.includes(l.lang === 'de' ? 'Laufzeit von Gatehouse' : 'Gatehouse uptime'), JSON.stringify(labels));
    assert.ok(labels.includes(l.lang === 'de' ? 'Laufzeit des Hosts' : 'Host uptime'), JSON.stringify(labels));
    assert.match(await text(page, 'res-host-uptime'), new RegExp(`^${res.uptime.days} `));

    // The figure cards: no row with a lone card (one column on a phone).
    const rows = await cardRows(page);
    if (l.width === 390) assert.deepEqual(rows, [1, 1, 1, 1]);
    else assert.deepEqual(rows, [4]);
    await noHorizontalOverflow(page, 'dashboard');
    await screenshot(page, name(l, 'dashboard'));
    assert.deepEqual(serious(await axe(page)), []);
    // Other common widths: 2 × 2.
    if (l.width === 1280) {
      for (const width of [1024, 768, 600]) {
        await page.setViewportSize({ width, height: 860 });
        assert.deepEqual(await cardRows(page), [2, 2], `${width} px`);
      }
    }
    assert.deepEqual(w.problems, []);
    await w.context.close();
  });
}

test('light/dark switch beside the theme: system, light, dark; remembered, in force at the first frame', async () => {
  for (const l of LOOKS) {
    // the OS says the opposite of what the user picks
    const system = l.scheme === 'dark' ? 'light' : 'dark';
    const w = await open({ ...l, scheme: system });
    const { page } = w;
    const label = l.lang === 'de' ? 'Hell oder dunkel' : 'Light or dark';
    if (l.width === 390) {
      // on a phone the switches sit in the menu
      assert.equal(await page.isVisible(`header select[aria-label="${label}"]`), false);
      await page.click('button.menu');
    }
    const select = page.locator(`select[aria-label="${label}"]:visible`);
    assert.equal(await select.inputValue(), 'system');
    assert.deepEqual(
      await select.locator('option').allTextContents(),
      l.lang === 'de' ? ['Wie das System', 'Hell', 'Dunkel'] : ['Like the system', 'Light', 'Dark'],
    );
    await select.selectOption(l.scheme);
    await page.waitForFunction((s) => document.documentElement.dataset.scheme === s, l.scheme);
    const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    const dark = (c: string) => {
      const [r, g, b] = (c.match(/\d+/g) ?? []).map(Number);
      return r + g + b < 200;
    };
    assert.equal(dark(bg), l.scheme === 'dark', `${l.scheme}: body ${bg}`);
    if (l.width === 390) await page.click('button.menu');
    await screenshot(page, name(l, 'scheme-switched'));

    // a reload: the choice holds, and held at the first frame (before the app's module ran)
    await page.addInitScript(() => {
      requestAnimationFrame(() => {
        const root = document.documentElement;
        root.setAttribute('data-first-frame', `${root.dataset.scheme}|${root.dataset.theme}|${getComputedStyle(document.body ?? root).backgroundColor}`);
      });
    });
    await page.reload();
    await page.waitForSelector('#page-title');
    const [first, firstTheme, firstBg] = ((await page.getAttribute('html', 'data-first-frame')) ?? '').split('|');
    assert.equal(first, l.scheme, 'scheme at the first frame');
    assert.equal(firstTheme, l.theme, 'theme at the first frame (the last one seen in this browser)');
    assert.equal(dark(firstBg), l.scheme === 'dark', `first frame background ${firstBg}`);
    assert.equal(await page.evaluate(() => localStorage.getItem('gatehouse.scheme')), l.scheme);

    // back to "like the system": the OS decides again
    if (l.width === 390) await page.click('button.menu');
    await page.locator(`select[aria-label="${label}"]:visible`).selectOption('system');
    await page.waitForFunction((s) => document.documentElement.dataset.scheme === s, system);
    assert.deepEqual(w.problems, []);
    await w.context.close();
  }
});

test('the navigation stays in view while the page scrolls; the header is one row on a phone', async () => {
  for (const l of LOOKS) {
    const w = await open(l);
    const { page } = w;
    const topbar = await page.locator('header.topbar').boundingBox();
    assert.ok(topbar && topbar.height <= 56, `header ${topbar?.height} px tall`);
    // every part of the header on the one row
    const tops = await page.$$eval('header.topbar > *, header.topbar .topbar-tools > *', (els) =>
      els.filter((e) => (e as HTMLElement).offsetParent !== null && !e.classList.contains('sr-only')).map((e) => Math.round(e.getBoundingClientRect().bottom)),
    );
    assert.ok(Math.max(...tops) <= topbar!.y + topbar!.height + 1, `header parts end at ${JSON.stringify(tops)}`);
    await noHorizontalOverflow(page, 'header');
    if (l.width === 1280) {
      await page.evaluate(() => window.scrollTo(0, document.documentElement.scrollHeight));
      await page.waitForFunction(() => window.scrollY > 200);
      const nav = await page.locator('nav#nav').boundingBox();
      const vh = page.viewportSize()!.height;
      assert.ok(nav && Math.abs(nav.y - topbar!.height) <= 2, `nav top at ${nav?.y}`);
      assert.ok(Math.abs(nav!.y + nav!.height - vh) <= 2, `nav bottom at ${nav!.y + nav!.height} of ${vh}`);
      assert.ok(await page.locator('nav#nav a[href="/dashboard"]').isVisible());
      const link = await page.locator('nav#nav a[href="/dashboard"]').boundingBox();
      assert.ok(link && link.y >= topbar!.height && link.y < vh, 'the first link is in view');
      await screenshot(page, name(l, 'scrolled-nav'));
    } else {
      await screenshot(page, name(l, 'header'));
      await page.click('button.menu');
      assert.equal(await page.locator('nav#nav select[aria-label]:visible').count(), 3);
      await screenshot(page, name(l, 'menu'));
    }
    assert.deepEqual(w.problems, []);
    await w.context.close();
  }
});

test('a backup passphrase is typed twice: a mismatch sends nothing (download, automatic job); the restore preview names settings', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gh-first-look-'));
  await ui.s.deps.settings.set('wg.expiry_watermark', 1_000);
  await ui.s.deps.settings.set('security.lockout.max_attempts', 5);
  let file = '';
  for (const l of LOOKS) {
    const w = await open(l, '/settings/backup');
    const { page } = w;
    const mismatch = l.lang === 'de' ? 'Die beiden Passphrasen unterscheiden sich' : 'The two passphrases differ';
    // download: a typo in the second field, nothing is asked from the server
    let asked = 0;
    page.on('request', (r) => void (r.url().includes('/api/v1/settings/backup?format=download') && asked++));
    await page.fill('#f-download_passphrase', PASS);
    await page.fill('#f-download_passphrase_confirm', `${PASS}x`);
    await page.click('#f-download_passphrase_confirm >> xpath=ancestor::form//button[@type="submit"]');
    await page.waitForSelector('#f-download_passphrase_confirm-err');
    assert.ok((await page.textContent('#f-download_passphrase_confirm-err'))!.startsWith(mismatch));
    assert.equal(await page.getAttribute('#f-download_passphrase_confirm', 'aria-invalid'), 'true');
    assert.equal(asked, 0, 'nothing sent');
    await screenshot(page, name(l, 'backup-mismatch'));
    await page.fill('#f-download_passphrase_confirm', PASS);
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.click('#f-download_passphrase_confirm >> xpath=ancestor::form//button[@type="submit"]'),
    ]);
    file = path.join(dir, `${l.lang}-${l.width}.json`);
    await download.saveAs(file);
    assert.equal(asked, 1);

    // an automatic job: the same
    const jobs = (await api('/settings/autobackup')).data.jobs.length;
    await page.click('button.btn.primary[type=button]');
    const dlg = page.locator('dialog[open]');
    await dlg.locator('#f-name').waitFor();
    await page.fill('#f-name', `job-${l.lang}-${l.width}`);
    await page.fill('#f-passphrase', PASS);
    await page.fill('#f-passphrase_confirm', 'another passphrase');
    await dlg.locator('button[type=submit]').click();
    await page.waitForSelector('#f-passphrase_confirm-err');
    assert.ok((await page.textContent('#f-passphrase_confirm-err'))!.startsWith(mismatch));
    assert.equal((await api('/settings/autobackup')).data.jobs.length, jobs, 'no job created');
    await screenshot(page, name(l, 'backup-job-mismatch'));
    await page.fill('#f-passphrase_confirm', PASS);
    await dlg.locator('button[type=submit]').click();
    await page.locator(`tr[data-job="job-${l.lang}-${l.width}"]`).waitFor();
    assert.equal((await api('/settings/autobackup')).data.jobs.length, jobs + 1);

    // restore preview after two settings changed: named as a person knows them, the key as a detail
    await ui.s.deps.settings.set('wg.expiry_watermark', 2_000);
    await ui.s.deps.settings.set('security.lockout.max_attempts', 7);
    await page.setInputFiles('#f-file', file);
    await page.fill('#f-restore_passphrase', PASS);
    await page.locator('#f-restore_passphrase').press('Enter');
    const row = page.locator('tr[data-section="settings"]');
    await row.waitFor();
    const rowText = (await row.textContent()) ?? '';
    assert.ok(rowText.startsWith(l.lang === 'de' ? 'Einstellungen' : 'Settings'), rowText);
    assert.ok(rowText.includes(l.lang === 'de' ? 'WireGuard: Prüfung abgelaufener Peers (intern)' : 'WireGuard: peer expiry check (internal)'), rowText);
    assert.ok(rowText.includes(l.lang === 'de' ? 'Fehlversuche, bis ein Konto gesperrt wird' : 'Failed sign-ins before an account is locked'), rowText);
    const keys = await row.locator('code').allTextContents();
    assert.ok(keys.includes('wg.expiry_watermark') && keys.includes('security.lockout.max_attempts'), JSON.stringify(keys));
    await screenshot(page, name(l, 'backup-preview'));
    assert.deepEqual(serious(await axe(page)), []);
    await ui.s.deps.settings.set('wg.expiry_watermark', 1_000);
    await ui.s.deps.settings.set('security.lockout.max_attempts', 5);
    assert.deepEqual(w.problems, []);
    await w.context.close();
  }
});

test('the Debug checkbox sits beside its label; "Show configuration and QR code" fits on a phone', async () => {
  for (const l of LOOKS) {
    const w = await open(l, `/routes/${routeId}/edit`);
    const { page } = w;
    // Both boxes in one frame: panels that load after the form (share links, backends) move the
    // form down, and two separate measurements could straddle that move.
    const [box, label] = await page.evaluate(() =>
      ['#f-debug_enabled', 'label[for="f-debug_enabled"]'].map((sel) => {
        const r = document.querySelector(sel)?.getBoundingClientRect();
        return r ? { x: r.x, y: r.y, width: r.width, height: r.height } : null;
      }),
    );
    assert.ok(box && label, 'the Debug checkbox and its label');
    assert.ok(box.x + box.width <= label.x, `the box (${box.x}) left of its label (${label.x})`);
    assert.ok(box.y >= label.y - 4 && box.y < label.y + label.height, `the box (y ${box.y}) on the label's first line (y ${label.y})`);
    await page.locator('#f-debug_enabled').scrollIntoViewIfNeeded();
    await screenshot(page, name(l, 'route-form'));
    await noHorizontalOverflow(page, 'route form');

    await page.goto(`${ui.s.url}/peers/${peerId}`);
    await settled(page);
    const btn = page.locator('button[aria-expanded]', { hasText: l.lang === 'de' ? 'Konfiguration und QR-Code zeigen' : 'Show configuration and QR code' });
    const b = await btn.boundingBox();
    const card = await btn.locator('xpath=ancestor::section[contains(@class,"card")]').boundingBox();
    assert.ok(b && card, 'button and card');
    assert.ok(b.x >= card.x && b.x + b.width <= card.x + card.width, `the button (${b.x}–${b.x + b.width}) inside its card (${card.x}–${card.x + card.width})`);
    await noHorizontalOverflow(page, 'peer');
    await screenshot(page, name(l, 'peer'));
    await btn.click();
    await page.waitForSelector('img[alt]');
    await noHorizontalOverflow(page, 'peer config shown');
    assert.deepEqual(w.problems, []);
    await w.context.close();
  }
});

test('the route-auth screen and the visitor login page open at the top with the form in view; a failed sign-in keeps the name', async () => {
  for (const l of LOOKS) {
    // admin: the screen with the login page's live preview (a frame) stays at the top
    const w = await open(l, `/routes/${routeId}/auth`);
    const { page } = w;
    await page.waitForSelector('iframe.ra-preview');
    await page.frameLocator('iframe.ra-preview').locator('#email').waitFor();
    // not a condition: a frame's autofocus scrolls the page just after the frame loads; when it does not, nothing happens to wait for
    await page.waitForTimeout(300);
    assert.equal(await page.evaluate(() => window.scrollY), 0, 'the admin screen stays at the top');
    await screenshot(page, name(l, 'route-auth-screen'));
    assert.deepEqual(w.problems, []);
    await w.context.close();

    // the visitor's login page (as Caddy forwards it: X-Route-Domain names the route)
    const v = await watchedPage(ui.browser, { lang: l.lang, width: l.width, colorScheme: l.scheme });
    await v.context.setExtraHTTPHeaders({ 'X-Route-Domain': RA_DOMAIN, 'Accept-Language': l.lang });
    v.allowHttpError('/route-auth/login', 401);
    v.allowHttpError('/favicon.ico', 404); // the browser's own request on the route's domain (Caddy serves the site there)
    const vp = v.page;
    await vp.goto(`${ui.s.url}/route-auth/login?rd=${encodeURIComponent('/')}`);
    await vp.waitForSelector('#email');
    assert.equal(await vp.evaluate(() => window.scrollY), 0, 'the login page opens at the top');
    const form = await vp.locator('form').boundingBox();
    const h = vp.viewportSize()!.height;
    assert.ok(form && form.y >= 0 && form.y + form.height <= h, `the form (${form?.y}–${(form?.y ?? 0) + (form?.height ?? 0)}) in the ${h} px window`);
    await screenshot(vp, name(l, 'visitor-login'));
    await vp.fill('#email', 'owner@example.test');
    await vp.fill('#password', 'not the password');
    await Promise.all([vp.waitForNavigation(), vp.click('button[type=submit]')]);
    await vp.waitForSelector('#form-error');
    assert.equal(await vp.inputValue('#email'), 'owner@example.test', 'the name typed is kept');
    assert.equal(await vp.inputValue('#password'), '', 'never the password');
    assert.equal(await vp.evaluate(() => document.activeElement?.id), 'password', 'the focus on the password');
    assert.equal(await vp.evaluate(() => window.scrollY), 0);
    await screenshot(vp, name(l, 'visitor-login-failed'));
    const problems = v.problems.filter((p) => !/status of 40[13]/.test(p));
    assert.deepEqual(problems, []);
    await v.context.close();

    // the admin sign-in page keeps the username too
    const a = await watchedPage(ui.browser, { lang: l.lang, width: l.width, colorScheme: l.scheme });
    await a.page.goto(`${ui.s.url}/login`);
    await a.page.fill('#username', ADMIN.username);
    await a.page.fill('#password', 'wrong password');
    await Promise.all([a.page.waitForURL(/error=invalid/), a.page.click('button[type=submit]')]);
    assert.equal(await a.page.inputValue('#username'), ADMIN.username, 'the username is kept');
    assert.equal(await a.page.inputValue('#password'), '');
    assert.equal(await a.page.evaluate(() => document.activeElement?.id), 'password');
    await screenshot(a.page, name(l, 'admin-login-failed'));
    // and the right password goes through from there
    await a.page.fill('#password', ADMIN.password);
    await Promise.all([a.page.waitForURL((u) => !u.pathname.startsWith('/login')), a.page.click('button[type=submit]')]);
    await a.context.close();
  }
});
