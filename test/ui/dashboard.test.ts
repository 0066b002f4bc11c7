// The dashboard in Debian's Chromium with data: traffic buckets written into the database (30 minutes
// and 3 days ago) show in the chart's totals per period (1h/24h/7d tabs, each a request for its
// period, the figures as the API reports them), peers created through the API meanwhile reach the
// open page without a reload (peer count, recent activity), in en and de at 1280 and 360 px, with
// axe and screenshots (<lang>-<width>-dashboard-data); the host's resources card shows what
// GET /system/resources reports. The live tunnel part (online, rates, resume)
// is test/e2e/ui-live.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { addSamples } from '../../sidecar/src/peers/traffic.js';
import { adminPage, axe, screenshot, serious, settled, uiServer } from '../lib/browser.js';

const ui = uiServer({}, {}, { api: 'token' });
const api = ui.api;
let session: { cookie: string; csrf: string };
const MIB = 1024 * 1024;

ui.setup(async () => {
  session = await ui.login();
  const peer = (await api('/peers', 'POST', { name: 'dash-seeded' })).data.peer;
  const now = Date.now();
  await addSamples(ui.s.deps.db.sequelize, [{ peerId: peer.id, rx: 5 * MIB, tx: 2 * MIB }], now - 30 * 60_000);
  await addSamples(ui.s.deps.db.sequelize, [{ peerId: peer.id, rx: 40 * MIB, tx: 10 * MIB }], now - 3 * 86_400_000);
});

const LABELS = {
  en: {
    tabs: { '1h': '1 hour', '24h': '24 hours', '7d': '7 days' },
    totals: (up: string, down: string) => `Upload ${up} · Download ${down} in this period`,
    online: (o: number, t: number) => `${o} of ${t} online`,
  },
  de: {
    tabs: { '1h': '1 Stunde', '24h': '24 Stunden', '7d': '7 Tage' },
    totals: (up: string, down: string) => `Upload ${up} · Download ${down} in diesem Zeitraum`,
    online: (o: number, t: number) => `${o} von ${t} online`,
  },
} as const;
/** The app's byte format (binary units, the language's decimal sign). */
const bytes = (n: number, lang: 'en' | 'de') => {
  const units = ['B', 'KB', 'MB', 'GB'];
  let i = 0;
  let v = n;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${new Intl.NumberFormat(lang === 'de' ? 'de-DE' : 'en-GB', { maximumFractionDigits: i === 0 ? 0 : v < 10 ? 2 : 1 }).format(v)} ${units[i]}`;
};

let created = 0;
for (const lang of ['en', 'de'] as const) {
  for (const width of [1280, 360]) {
    test(`dashboard with data, ${lang} ${width} px: chart periods, live peer count and activity`, async () => {
      const L = LABELS[lang];
      // The user's saved language decides.
      await ui.s.req('/api/v1/settings/language', {
        method: 'POST',
        json: { language: lang },
        headers: { cookie: session.cookie, 'x-csrf-token': session.csrf },
      });
      const { page, problems, context } = await adminPage(ui.browser, ui.s.url, { lang, width });
      await page.goto(`${ui.s.url}/dashboard`);
      await settled(page);
      await page.evaluate(() => {
        (window as Window & { __sameDocument?: unknown }).__sameDocument = true;
      });

      // Each period tab asks the API for its period and shows the totals the API reports.
      for (const period of ['7d', '1h', '24h'] as const) {
        const [req] = await Promise.all([
          page.waitForRequest((r) => r.url().includes(`/api/v1/dashboard/traffic?period=${period}`)),
          page.click(`role=tab[name="${L.tabs[period]}"]`),
        ]);
        assert.ok(req);
        const server = (await api(`/dashboard/traffic?period=${period}`)).data;
        assert.equal(server.total_rx, period === '7d' ? 45 * MIB : 5 * MIB);
        await page.waitForFunction(
          (want) => document.querySelector('[data-testid="traffic-period-total"]')?.textContent === want,
          L.totals(bytes(server.total_rx, lang), bytes(server.total_tx, lang)),
        );
        await page.waitForSelector('.chart canvas');
        assert.equal(await page.getAttribute(`role=tab[name="${L.tabs[period]}"]`, 'aria-selected'), 'true');
      }
      // The host's resources as GET /system/resources reports them (totals and the CPU are stable; the used figures move).
      const res = (await api('/system/resources')).data;
      await page.waitForSelector('[data-testid="resources"]');
      assert.equal(
        await page.textContent('[data-testid="res-cpu-model"]'),
        lang === 'de' ? `${res.cpu.cores} Kerne · ${res.cpu.model}` : `${res.cpu.cores} cores · ${res.cpu.model}`,
      );
      assert.match((await page.textContent('[data-testid="res-cpu"]'))!, /^\d+([.,]\d)? %$/);
      assert.ok((await page.textContent('[data-testid="res-memory"]'))!.includes(`${lang === 'de' ? 'von' : 'of'} ${bytes(res.memory.total, lang)}`));
      assert.ok((await page.textContent('[data-testid="res-disk"]'))!.includes(`${lang === 'de' ? 'von' : 'of'} ${bytes(res.disk.total, lang)}`));
      const up = await page.textContent('[data-testid="res-uptime"]');
      // Gatehouse's own uptime (the sidecar process), not the host's
      assert.match(
        up!,
        lang === 'de'
          ? new RegExp(`^${res.gatehouse_uptime.days} T\\. \\d+ Std\\. \\d+ Min\\.$`)
          : new RegExp(`^${res.gatehouse_uptime.days} d \\d+ h \\d+ min$`),
      );
      await screenshot(page, `${lang}-${width}-dashboard-data`);
      assert.deepEqual(serious(await axe(page)), []);

      // A peer created elsewhere: the open page follows without a reload.
      const before = (await api('/dashboard/stats')).data.peers.total;
      const name = `dash-live-${lang}-${width}-${++created}`;
      assert.equal((await api('/peers', 'POST', { name })).status, 201);
      await page.waitForFunction((want) => document.querySelector('[data-testid="peers-online-label"]')?.textContent === want, L.online(0, before + 1));
      await page.waitForFunction((n) => document.querySelector('[data-testid="activity"]')?.textContent?.includes(n), name);
      assert.ok(await page.evaluate(() => (window as Window & { __sameDocument?: unknown }).__sameDocument === true), 'no reload');
      const stats = (await api('/dashboard/stats')).data;
      assert.equal(await page.textContent('[data-testid="traffic-today"]'), bytes(stats.traffic.today, lang));
      await settled(page);
      assert.deepEqual(problems, []);
      await context.close();
    });
  }
}
