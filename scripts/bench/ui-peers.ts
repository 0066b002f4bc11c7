// Benchmark: the admin app's peers screen in Debian's Chromium (playwright-core) at 10,000 peers and
// 1,000 routes. Starts a throwaway sidecar as a child process on the bulk-written data of
// list-data.ts (SQLite, or PostgreSQL with BENCH_DATABASE_URL; Caddy and WireGuard not managed; it
// serves the built app from sidecar/ui/dist, so build first). Every run is a fresh browser context
// (empty cache) carrying the admin's session cookie; BENCH_RUNS runs (default 7) after one warm-up,
// medians printed:
//   first rows     navigation start → the first `table tbody tr` of /peers in the DOM, measured in
//                  the page (performance.now() in the first animation frame after the row appears)
//   filtered       the search box gets "peer-0424" (one input event, as a paste) → the table holds
//                  exactly the 10 matching rows (checked against the data), measured in the page
//   JS bytes       the .js responses of one cold load: bytes on the wire (Content-Encoding as the
//                  server sent it) and, for comparison, what gzip -9 makes of the same files
// Targets: first rows < 1 s, filtered result < 200 ms.
// Without a peers screen in the app (sidecar/ui/src/screens/peers), it measures the dashboard
// instead (first figure rendered; no filter) and says so.
//   npm run -s -w @gatehouse/ui build && node --import tsx scripts/bench/ui-peers.ts
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import type { Browser } from 'playwright-core';
import { CHROMIUM, openBrowser } from '../../test/lib/browser.js';
import { GROUPS, startListBench } from './list-data.js';
import { median, root } from './lib.js';

const PEERS = Number(process.env.BENCH_PEERS ?? 10_000);
const ROUTES = Number(process.env.BENCH_ROUTES ?? 1_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 7);
const QUERY = 'peer-0424';
const hasPeersScreen = fs.existsSync(path.join(root, 'sidecar/ui/src/screens/peers/meta.ts'));
const SCREEN = hasPeersScreen ? '/peers' : '/dashboard';
const READY = hasPeersScreen ? 'table tbody tr' : '[data-testid="peers-online"]';

interface JsFile {
  url: string;
  wire: number;
  decoded: number;
  gzip9: number;
  encoding: string;
}

/** One cold load of SCREEN in a new context; → ms to the first rendered row (and the .js files when asked). */
async function coldLoad(
  browser: Browser,
  base: string,
  cookie: string,
  withFilter: boolean,
  collectJs: boolean,
): Promise<{ firstMs: number; filterMs: number | null; js: JsFile[]; timeline: string[] }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, locale: 'en-GB' });
  const u = new URL(base);
  await context.addCookies(
    cookie.split('; ').map((kv) => {
      const i = kv.indexOf('=');
      return { name: kv.slice(0, i), value: kv.slice(i + 1), domain: u.hostname, path: '/' };
    }),
  );
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(e.message));
  const pending: Promise<JsFile | null>[] = [];
  if (collectJs) {
    page.on('response', (r) => {
      if (!new URL(r.url()).pathname.endsWith('.js')) return;
      pending.push(
        (async () => {
          const body = await r.body();
          const sizes = await r.request().sizes();
          return {
            url: new URL(r.url()).pathname,
            wire: sizes.responseBodySize,
            decoded: body.length,
            gzip9: zlib.gzipSync(body, { level: 9 }).length,
            encoding: (await r.allHeaders())['content-encoding'] ?? 'identity',
          };
        })().catch(() => null),
      );
    });
  }
  // tsx (esbuild keepNames) wraps named inner functions in __name(), which the page does not have.
  await page.addInitScript({ content: 'window.__name = (f) => f;' });
  // Time of the first animation frame after the first matching element exists (set before any page script runs).
  await page.addInitScript((sel: string) => {
    const w = window as Window & { __firstAt?: number | null };
    const mo = new MutationObserver(() => {
      if (w.__firstAt !== undefined || !document.querySelector(sel)) return;
      w.__firstAt = null;
      mo.disconnect();
      requestAnimationFrame(() => {
        w.__firstAt = performance.now();
      });
    });
    mo.observe(document, { childList: true, subtree: true });
  }, READY);
  await page.goto(base + SCREEN, { waitUntil: 'commit' });
  if (new URL(page.url()).pathname.startsWith('/login')) throw new Error('not signed in: the session cookie was refused');
  await page.waitForFunction(() => typeof (window as Window & { __firstAt?: number }).__firstAt === 'number', undefined, { timeout: 30_000 });
  const firstMs = await page.evaluate(() => (window as Window & { __firstAt?: number }).__firstAt as number);
  // Where the time went: when the document, each script and each API call finished (ms from navigation start).
  const timeline = await page.evaluate(() => [
    ...performance.getEntriesByType('navigation').map((e) => `document ${Math.round((e as PerformanceNavigationTiming).responseEnd)}`),
    ...(performance.getEntriesByType('resource') as PerformanceResourceTiming[])
      .filter((e) => e.responseEnd > 0 && (e.name.includes('/api/') || e.name.endsWith('.js')))
      .map((e) => `${new URL(e.name).pathname.replace(/^\/api\/v1/, '').replace(/^\/assets\//, '')} ${Math.round(e.startTime)}→${Math.round(e.responseEnd)}`),
  ]);
  if (hasPeersScreen) {
    const n = await page.locator('table tbody tr').count();
    if (n < 1) throw new Error('no rows');
  }
  let filterMs: number | null = null;
  if (withFilter) {
    await page.waitForLoadState('networkidle');
    filterMs = await page.evaluate(async (q: string) => {
      const input = document.querySelector<HTMLInputElement>('input[type=search]');
      if (!input) throw new Error('no search box (input[type=search]) on the peers screen');
      const done = () => {
        const rows = [...document.querySelectorAll('table tbody tr')];
        return rows.length === 10 && rows.every((r) => r.textContent?.includes(q));
      };
      const t0 = performance.now();
      input.value = q;
      input.dispatchEvent(new Event('input', { bubbles: true }));
      return new Promise<number>((resolve, reject) => {
        const limit = setTimeout(() => reject(new Error(`the table did not show the 10 rows of "${q}" within 10 s`)), 10_000);
        const check = () => {
          if (done()) {
            clearTimeout(limit);
            resolve(performance.now() - t0);
          } else requestAnimationFrame(check);
        };
        requestAnimationFrame(check);
      });
    }, QUERY);
  }
  const js = (await Promise.all(pending)).filter((f): f is JsFile => f !== null);
  await context.close();
  if (errors.length) throw new Error(`console errors on ${SCREEN}: ${errors.join(' | ')}`);
  return { firstMs, filterMs, js, timeline };
}

async function main(): Promise<void> {
  if (!fs.existsSync(path.join(root, 'sidecar/ui/dist/index.html'))) throw new Error('build the admin app first: npm run -s -w @gatehouse/ui build');
  if (!fs.existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}`);
  const b = await startListBench({ name: 'ui-peers', peers: PEERS, routes: ROUTES });
  let browser: Browser | undefined;
  try {
    const expected = b.rows.filter((r) => r.name.includes(QUERY)).length;
    if (expected !== 10) throw new Error(`the data has ${expected} peers matching ${QUERY}, expected 10`);
    browser = await openBrowser();
    console.log(
      `bench ui-peers: ${os.cpus().length} cores, ${os.cpus()[0]?.model ?? ''}, load ${os.loadavg()[0].toFixed(1)}, ${b.databaseUrl ? 'PostgreSQL' : 'SQLite'}, sidecar via tsx, Chromium ${browser.version()} headless; ` +
        `${PEERS} peers, ${ROUTES} routes, ${GROUPS} groups written in ${b.setupS.toFixed(1)} s; ${RUNS} cold loads (new context each) after 1 warm-up`,
    );
    if (!hasPeersScreen)
      console.log('  NOTE: the app has no peers screen (sidecar/ui/src/screens/peers): measuring the dashboard instead (first figure; no filter)');
    await coldLoad(browser, b.url, b.cookie, hasPeersScreen, false);
    const first: number[] = [];
    const filtered: number[] = [];
    let js: JsFile[] = [];
    let timeline: string[] = [];
    for (let i = 0; i < RUNS; i++) {
      const r = await coldLoad(browser, b.url, b.cookie, hasPeersScreen, i === 0);
      first.push(r.firstMs);
      if (r.filterMs !== null) filtered.push(r.filterMs);
      if (i === 0) js = r.js;
      if (i === RUNS - 1) timeline = r.timeline;
    }
    const sum = (k: 'wire' | 'decoded' | 'gzip9') => js.reduce((a, f) => a + f[k], 0);
    const encodings = [...new Set(js.map((f) => f.encoding))].join(', ');
    const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;
    const verdict = (v: number, target: number) => (v < target ? `target < ${target} ms: met` : `target < ${target} ms: NOT met`);
    console.log(
      `  ${`${SCREEN} first ${hasPeersScreen ? 'rows' : 'figure'}`.padEnd(30)} median ${median(first).toFixed(0).padStart(5)} ms   (runs: ${first.map((x) => x.toFixed(0)).join(', ')})   ${verdict(median(first), 1000)}`,
    );
    if (filtered.length)
      console.log(
        `  ${`filtered "${QUERY}" (10 rows)`.padEnd(30)} median ${median(filtered).toFixed(0).padStart(5)} ms   (runs: ${filtered.map((x) => x.toFixed(0)).join(', ')})   ${verdict(median(filtered), 200)}`,
      );
    console.log(
      `  JavaScript of one cold load: ${js.length} files, ${kb(sum('wire'))} on the wire (Content-Encoding: ${encodings || 'none'}), ${kb(sum('decoded'))} decoded, ${kb(sum('gzip9'))} if gzip -9 compressed`,
    );
    console.log(`  last run, finished at (ms from navigation start): ${timeline.join(', ')}`);
    for (const f of js) console.log(`    ${f.url.padEnd(44)} wire ${kb(f.wire).padStart(9)}   gzip -9 ${kb(f.gzip9).padStart(8)}`);
    console.log(
      JSON.stringify({
        bench: 'ui-peers',
        screen: SCREEN,
        database: b.databaseUrl ? 'postgres' : 'sqlite',
        peers: PEERS,
        routes: ROUTES,
        runs: RUNS,
        first_rows_median_ms: +median(first).toFixed(1),
        filtered_median_ms: filtered.length ? +median(filtered).toFixed(1) : null,
        js: { files: js.length, wire_bytes: sum('wire'), decoded_bytes: sum('decoded'), gzip9_bytes: sum('gzip9'), content_encoding: encodings },
      }),
    );
  } finally {
    await browser?.close();
    await b.stop();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
