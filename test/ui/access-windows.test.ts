// Access windows and the country filter in a real browser against a real sidecar (one server, with a
// country database written by MaxMind's writer): a route and a peer get an access window through
// their forms (en at 1280 px, de at 390 px) and the API then holds exactly it; the lists and detail
// pages show the state ("Open until …" / "Closed until …", "Geschlossen bis …" with the schedule's
// time zone; an L4 route too); a window with the same from and to, and an unknown time zone, are
// refused by the server and its messages stand at those inputs (in German), nothing changed; the
// route form's country filter saves {mode, countries} and the System card shows the database. axe:
// no serious findings.
// Screenshots: <lang>-<width>-access-window-route-form, -peer-form, -route-detail; closed-route-detail,
// de-closed-peer-detail, geo-route-form, de-geo-system-card.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { adminPage, axe, screenshot, serious, settled, uiServer } from '../lib/browser.js';
import { writeTestMmdb } from '../lib/geoip.js';
import type { AccessSchedule as Schedule, AccessState as State } from '../../sidecar/test/lib/protocol.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-ui-windows-'));
const geoDb = path.join(dir, 'country.mmdb');
const ui = uiServer(async () => {
  await writeTestMmdb(geoDb, { '127.0.0.1': 'DE', '10.20.0.0/16': 'FR' }, { epoch: 1767225600 });
  return {
    GATEHOUSE_GEOIP_DB: geoDb,
    GATEHOUSE_WG_SUBNET: `127.81.${10 + (process.pid % 200)}.0/24`,
    GATEHOUSE_RATE_LIMIT_LOGIN: '1000',
    GATEHOUSE_RATE_LIMIT_ADMIN: '100000',
  };
});
const api = ui.api;
after(() => fs.rmSync(dir, { recursive: true, force: true }));

let peerId = 0;
ui.setup(async () => {
  const p = await api('/peers', 'POST', { name: 'web-host' });
  assert.equal(p.status, 201, JSON.stringify(p.data));
  peerId = p.data.peer.id;
});

const T = {
  en: {
    windows: 'Only in these windows',
    addPeer: 'Add peer',
    done: 'Done',
    open: 'Open until ',
    closed: 'Closed until ',
    add: 'Add window',
    overnight: 'Crosses midnight',
  },
  de: {
    windows: 'Nur in diesen Zeitfenstern',
    addPeer: 'Peer hinzufügen',
    done: 'Fertig',
    open: 'Geöffnet bis ',
    closed: 'Geschlossen bis ',
    add: 'Zeitfenster hinzufügen',
    overnight: 'Über Mitternacht',
  },
} as const;
const CASES = [
  { lang: 'en', width: 1280 },
  { lang: 'de', width: 390 },
] as const;

const setLang = async (lang: 'en' | 'de') => assert.equal((await api('/settings/language', 'POST', { language: lang })).status, 200);
async function check(page: Page, where: string, problems: string[]) {
  const v = serious(await axe(page));
  assert.deepEqual(v, [], `${where}: ${JSON.stringify(v, null, 1)}`);
  const wide = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(wide <= 0, `${where}: page ${wide}px wider than the window`);
  assert.deepEqual(problems, [], where);
}
/** The state badge's text as the API's state says it must read (open or closed, the zone named). */
function assertBadge(text: string | null, state: State, zone: string, lang: 'en' | 'de', where: string) {
  const s = (text ?? '').trim();
  assert.ok(s.startsWith(state.open ? T[lang].open : T[lang].closed), `${where}: ${s} (open: ${state.open})`);
  assert.ok(s.endsWith(`(${zone})`), `${where}: ${s}`);
}
/** A schedule closed now: one hour on the weekday three days from today (UTC). */
function closedSchedule(): NonNullable<Schedule> {
  const today = ((new Date().getUTCDay() + 6) % 7) + 1;
  return { timezone: 'UTC', windows: [{ days: [((today + 2) % 7) + 1], from: '00:00', to: '01:00' }] };
}

test('a route and a peer get an access window in their forms; the API holds it; lists and details show the state (en 1280, de 390)', async () => {
  for (const c of CASES) {
    await setLang(c.lang);
    const w = await adminPage(ui.browser, ui.s.url, { lang: c.lang, width: c.width });
    const { page } = w;
    const tag = `${c.lang}-${c.width}`;

    // the route: an evening window over midnight (Mon–Sat 22:00–02:00) and the default weekday window
    await page.goto(`${ui.s.url}/routes/new`);
    await page.locator('#f-domain').waitFor();
    await settled(page);
    await page.fill('#f-domain', `win-${tag}.example.test`);
    await page.selectOption('#f-peer_id', String(peerId));
    await page.fill('#f-target_port', '8080');
    assert.equal(await page.locator('#f-access_schedule-timezone').count(), 0, 'always open: no windows shown');
    await page.getByLabel(T[c.lang].windows).check();
    const browserZone = await page.evaluate(() => Intl.DateTimeFormat().resolvedOptions().timeZone);
    assert.equal(await page.inputValue('#f-access_schedule-timezone'), browserZone, 'the browser’s zone is the default');
    assert.ok((await page.locator('#f-access_schedule-timezone-list option').count()) > 300, 'the zones are offered');
    await page.fill('#f-access_schedule-timezone', 'Europe/Berlin');
    const row0 = page.locator('[data-testid="schedule-window-0"]');
    await row0.locator('input[value="6"]').check();
    await page.fill('#f-access_schedule-windows-0-from', '22:00');
    await page.fill('#f-access_schedule-windows-0-to', '02:00');
    assert.match((await row0.locator('[data-testid="schedule-overnight"]').textContent()) ?? '', new RegExp(T[c.lang].overnight));
    await page.getByRole('button', { name: T[c.lang].add }).click();
    await page.locator('#f-access_schedule-windows-1-from').waitFor();
    await page.locator('[data-testid="schedule-section"]').scrollIntoViewIfNeeded();
    await screenshot(page, `${tag}-access-window-route-form`);
    await check(page, `${tag} route form`, w.problems);
    await Promise.all([page.waitForURL(/\/routes\/\d+$/), page.click('form.route-form button[type=submit]')]);
    const routeId = Number(new URL(page.url()).pathname.split('/').pop());
    const route = (await api(`/routes/${routeId}`)).data.route;
    assert.deepEqual(route.access_schedule, {
      timezone: 'Europe/Berlin',
      windows: [
        { days: [1, 2, 3, 4, 5, 6], from: '22:00', to: '02:00' },
        { days: [1, 2, 3, 4, 5], from: '08:00', to: '18:00' },
      ],
    });
    await settled(page);
    assertBadge(
      await page.locator('.route-status [data-testid="access-state"]').textContent(),
      route.access_state,
      'Europe/Berlin',
      c.lang,
      `${tag} route detail`,
    );
    assert.equal((await page.locator('[data-testid="closed-answers"]').textContent())?.trim(), '0');
    await screenshot(page, `${tag}-access-window-route-detail`);
    await check(page, `${tag} route detail`, w.problems);
    await page.goto(`${ui.s.url}/routes`);
    await settled(page);
    const listRow = page.locator('table.table tbody tr', { hasText: `win-${tag}.example.test` });
    assertBadge(await listRow.locator('[data-testid="access-state"]').textContent(), route.access_state, 'Europe/Berlin', c.lang, `${tag} route list`);

    // the peer: Mon–Fri 07:30–19:00 in the browser's zone
    await page.goto(`${ui.s.url}/peers`);
    await settled(page);
    await page.click(`.page-header button:has-text("${T[c.lang].addPeer}")`);
    const dialog = page.locator('dialog[open]');
    await dialog.locator('#f-name').waitFor();
    await page.fill('#f-name', `shift-${tag}`);
    await dialog.getByLabel(T[c.lang].windows).check();
    await page.fill('#f-access_schedule-windows-0-from', '07:30');
    await page.fill('#f-access_schedule-windows-0-to', '19:00');
    await dialog.locator('[data-testid="schedule-section"]').scrollIntoViewIfNeeded();
    await screenshot(page, `${tag}-access-window-peer-form`);
    await check(page, `${tag} peer form`, w.problems);
    await dialog.locator('button[type=submit]').click();
    await dialog.locator(`button:has-text("${T[c.lang].done}")`).click();
    const peer = (await api(`/peers?q=shift-${tag}`)).data.peers[0];
    assert.deepEqual(peer.access_schedule, { timezone: browserZone, windows: [{ days: [1, 2, 3, 4, 5], from: '07:30', to: '19:00' }] });
    const peerRow = page.locator('table.table tbody tr', { hasText: `shift-${tag}` });
    assertBadge(await peerRow.locator('[data-testid="access-state"]').textContent(), peer.access_state, browserZone, c.lang, `${tag} peer list`);
    await w.context.close();
  }
  await setLang('en');
});

test('a closed schedule: "Closed until …" on the route list and detail (en) and the peer list and detail (de), the route’s closed answers', async () => {
  const schedule = closedSchedule();
  const r = await api('/routes', 'POST', { domain: 'closed.example.test', peer_id: peerId, target_port: 8080, access_schedule: schedule });
  assert.equal(r.status, 201, JSON.stringify(r.data));
  const route = r.data.route;
  assert.equal(route.access_state.open, false);
  const l4 = await api('/routes', 'POST', {
    route_type: 'l4',
    l4_protocol: 'tcp',
    l4_listen_port: 40000 + (process.pid % 20000),
    peer_id: peerId,
    target_port: 22,
    access_schedule: schedule,
  });
  assert.equal(l4.status, 201, JSON.stringify(l4.data));
  const l4Route = l4.data.route;
  assert.equal(l4Route.access_state.open, false);
  const p = await api('/peers', 'POST', { name: 'night-shift', access_schedule: schedule });
  assert.equal(p.status, 201, JSON.stringify(p.data));
  const peer = p.data.peer;
  assert.equal(peer.access_state.open, false);

  const w = await adminPage(ui.browser, ui.s.url, { lang: 'en', width: 1280 });
  await w.page.goto(`${ui.s.url}/routes`);
  await settled(w.page);
  const row = w.page.locator('table.table tbody tr', { hasText: 'closed.example.test' });
  assertBadge(await row.locator('[data-testid="access-state"]').textContent(), route.access_state, 'UTC', 'en', 'route list');
  await w.page.goto(`${ui.s.url}/routes/${route.id}`);
  await settled(w.page);
  const badge = w.page.locator('.route-status [data-testid="access-state"]');
  assert.equal(await badge.getAttribute('data-open'), 'false');
  assertBadge(await badge.textContent(), route.access_state, 'UTC', 'en', 'route detail');
  // the time it names is the API's next_change_at on the UTC clock (a weekday and HH:MM)
  const at = new Date(route.access_state.next_change_at!);
  const weekday = new Intl.DateTimeFormat('en-GB', { weekday: 'short', timeZone: 'UTC' }).format(at);
  assert.match((await badge.textContent()) ?? '', new RegExp(`Closed until ${weekday}.* 00:00 \\(UTC\\)`));
  assert.match((await w.page.locator('[data-testid="access-windows"]').textContent()) ?? '', new RegExp(`${weekday} 00:00–01:00`));
  assert.equal((await w.page.locator('[data-testid="closed-answers"]').textContent())?.trim(), '0');
  await screenshot(w.page, 'closed-route-detail');
  await check(w.page, 'closed route detail', w.problems);
  // an L4 route: closed too (no listener), no 403 answers to count
  await w.page.goto(`${ui.s.url}/routes/${l4Route.id}`);
  await settled(w.page);
  assertBadge(await w.page.locator('.route-status [data-testid="access-state"]').textContent(), l4Route.access_state, 'UTC', 'en', 'L4 route detail');
  assert.equal(await w.page.locator('[data-testid="closed-answers"]').count(), 0, 'an L4 route has no closed answers');
  await check(w.page, 'closed L4 route detail', w.problems);
  await w.context.close();

  await setLang('de');
  const d = await adminPage(ui.browser, ui.s.url, { lang: 'de', width: 390 });
  await d.page.goto(`${ui.s.url}/peers`);
  await settled(d.page);
  const peerRow = d.page.locator('table.table tbody tr', { hasText: 'night-shift' });
  assertBadge(await peerRow.locator('[data-testid="access-state"]').textContent(), peer.access_state, 'UTC', 'de', 'peer list');
  await d.page.goto(`${ui.s.url}/peers/${peer.id}`);
  await settled(d.page);
  const peerBadge = d.page.locator('.facts [data-testid="access-state"]');
  assertBadge(await peerBadge.textContent(), peer.access_state, 'UTC', 'de', 'peer detail');
  assert.equal(await d.page.locator('[data-testid="closed-answers"]').count(), 0, 'a peer has no closed answers');
  await screenshot(d.page, 'de-closed-peer-detail');
  await check(d.page, 'closed peer detail', d.problems);
  await d.context.close();
  await setLang('en');
});

test('the same from and to and an unknown time zone: the server’s messages at those inputs (de), nothing changed', async () => {
  const schedule = { timezone: 'Europe/Berlin', windows: [{ days: [1, 2, 3], from: '09:00', to: '17:00' }] };
  const r = await api('/routes', 'POST', { domain: 'bad-window.example.test', peer_id: peerId, target_port: 8080, access_schedule: schedule });
  assert.equal(r.status, 201, JSON.stringify(r.data));
  const id = r.data.route.id as number;
  await setLang('de');
  const w = await adminPage(ui.browser, ui.s.url, { lang: 'de', width: 390 });
  w.allowHttpError(`/api/v1/routes/${id}`, 400);
  const { page } = w;
  await page.goto(`${ui.s.url}/routes/${id}/edit`);
  await page.locator('#f-access_schedule-windows-0-to').waitFor();
  await settled(page);
  assert.equal(await page.inputValue('#f-access_schedule-timezone'), 'Europe/Berlin');
  assert.equal(await page.inputValue('#f-access_schedule-windows-0-from'), '09:00');
  await page.fill('#f-access_schedule-timezone', 'Mars/Olympus_Mons');
  await page.fill('#f-access_schedule-windows-0-to', '09:00');
  const [res] = await Promise.all([
    page.waitForResponse((x) => x.url().endsWith(`/api/v1/routes/${id}`) && x.request().method() === 'PUT'),
    page.click('form.route-form button[type=submit]'),
  ]);
  assert.equal(res.status(), 400);
  const body = (await res.json()) as { fields: Record<string, string> };
  assert.ok(body.fields['access_schedule.windows.0.to'], JSON.stringify(body.fields));
  assert.ok(body.fields['access_schedule.timezone'], JSON.stringify(body.fields));
  const toErr = page.locator('#f-access_schedule-windows-0-to-err');
  await toErr.waitFor();
  assert.equal((await toErr.textContent())?.trim(), 'Von und Bis müssen sich unterscheiden (00:00 bis 24:00 ist der ganze Tag)');
  assert.equal(await page.getAttribute('#f-access_schedule-windows-0-to', 'aria-invalid'), 'true');
  assert.equal((await page.locator('#f-access_schedule-timezone-err').textContent())?.trim(), 'muss eine IANA-Zeitzone sein, etwa Europe/Berlin oder UTC');
  assert.equal(await page.getAttribute('#f-access_schedule-timezone', 'aria-invalid'), 'true');
  assert.equal(await page.inputValue('#f-access_schedule-windows-0-to'), '09:00', 'what was typed stays');
  assert.deepEqual((await api(`/routes/${id}`)).data.route.access_schedule, schedule, 'nothing changed');
  await check(page, 'refused window', w.problems);
  // corrected, it saves
  await page.fill('#f-access_schedule-timezone', 'Europe/Vienna');
  await page.fill('#f-access_schedule-windows-0-to', '12:00');
  await Promise.all([page.waitForURL(/\/routes\/\d+$/), page.click('form.route-form button[type=submit]')]);
  assert.deepEqual((await api(`/routes/${id}`)).data.route.access_schedule, {
    timezone: 'Europe/Vienna',
    windows: [{ days: [1, 2, 3], from: '09:00', to: '12:00' }],
  });
  await w.context.close();
  await setLang('en');
});

test('the country filter: the route form saves {mode, countries}; the System card shows the database (de)', async () => {
  const w = await adminPage(ui.browser, ui.s.url, { lang: 'en', width: 1280 });
  const { page } = w;
  await page.goto(`${ui.s.url}/routes/new`);
  await page.locator('#f-domain').waitFor();
  await settled(page);
  assert.equal(await page.locator('[data-testid="geo-no-db"]').count(), 0, 'the database is there: no warning');
  await page.fill('#f-domain', 'geo.example.test');
  await page.selectOption('#f-peer_id', String(peerId));
  await page.fill('#f-target_port', '8080');
  await page.check('#f-geo_filter_enabled');
  await page.selectOption('#f-geo_filter-mode', 'deny');
  await page.fill('#geo-search', 'germ');
  assert.equal(await page.locator('#f-geo_filter-countries option').count(), 1, 'the search narrows the list');
  await page.selectOption('#f-geo_filter-countries', ['DE']);
  await page.fill('#geo-search', '');
  await page.selectOption('#f-geo_filter-countries', ['DE', 'FR']);
  await page.locator('.geo-chip', { hasText: 'France' }).waitFor();
  await page.locator('.geo-section').scrollIntoViewIfNeeded();
  await screenshot(page, 'geo-route-form');
  await check(page, 'geo route form', w.problems);
  await Promise.all([page.waitForURL(/\/routes\/\d+$/), page.click('form.route-form button[type=submit]')]);
  const id = Number(new URL(page.url()).pathname.split('/').pop());
  assert.deepEqual((await api(`/routes/${id}`)).data.route.geo_filter, { mode: 'deny', countries: ['DE', 'FR'] });
  // a chip removes its country
  await page.goto(`${ui.s.url}/routes/${id}/edit`);
  await page.locator('.geo-chip', { hasText: 'France' }).click();
  await Promise.all([page.waitForURL(/\/routes\/\d+$/), page.click('form.route-form button[type=submit]')]);
  assert.deepEqual((await api(`/routes/${id}`)).data.route.geo_filter, { mode: 'deny', countries: ['DE'] });
  await w.context.close();

  await setLang('de');
  const d = await adminPage(ui.browser, ui.s.url, { lang: 'de', width: 390 });
  await d.page.goto(`${ui.s.url}/system`);
  const card = d.page.locator('[data-testid="geoip-card"]');
  await card.waitFor();
  await settled(d.page);
  const text = (await card.textContent()) ?? '';
  assert.match(text, /vorhanden/);
  assert.match(text, /GeoLite2-Country/);
  assert.ok(text.includes(geoDb), text);
  assert.match((await d.page.locator('[data-testid="geoip-built"]').textContent()) ?? '', /2026/);
  const routes = await card.locator('dt', { hasText: 'Routen mit Länderfilter' }).locator('xpath=following-sibling::dd[1]').textContent();
  assert.equal(routes?.trim(), '1');
  await card.scrollIntoViewIfNeeded();
  await screenshot(d.page, 'de-geo-system-card');
  await check(d.page, 'geo system card', d.problems);
  await d.context.close();
  await setLang('en');
});
