// End to end, as root, in Debian's Chromium: the admin app updates an open tab from the live event
// stream, without a reload. The real sidecar runs with its WireGuard interface (wireguard-go) and the
// supervised custom Caddy (startE2e), polling the interface every second. The dashboard is open in a
// browser tab while a peer is created through the API and its own config is brought up in a network
// namespace (a real handshake): the tab's peers-online figure goes from "0 of 1" to "1 of 1" (and a
// second tab on /peers shows the peer's row as online) and the
// live upload rate moves while the peer pings, with the page never reloaded. Disabling the peer
// brings the figure back to 0 (the 180 s online window makes waiting for a silent peer too slow).
// Then the tab goes offline and its TCP connections are cut (ss -K: the live stream drops), a peer is
// created meanwhile, the tab comes back
// online: the stream reconnects with Last-Event-ID, the server replays what was missed (ready
// {resumed: true}) and the tab shows the new peer and its activity row without a reload.
// No console error and no failed request, apart from the stream's reconnect attempts while offline.
//   cd /work/main && npm run -s -w @gatehouse/ui build && node --import tsx --test test/e2e/ui-live.test.ts
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { skipReason } from '../lib/netns.js';
import { waitFor } from '../lib/wait.js';
import { CADDY, startE2e, tunnelPeers } from '../lib/e2e-server.js';
import { CHROMIUM, openBrowser, screenshot, settled, signIn, watchedPage } from '../lib/browser.js';

/** What the init script records in the page (window.__live): the stream's ready events, errors, connections opened. */
type LiveRecord = { ready: { resumed: boolean; boot: string }[]; errors: number; opened: number };

const DIST = fileURLToPath(new URL('../../sidecar/ui/dist/index.html', import.meta.url));
const reason =
  skipReason(['wireguard-go', 'wg', 'ping', 'ss']) ??
  (fs.existsSync(CADDY) ? null : `no ${CADDY}: build it with bash scripts/build-caddy.sh`) ??
  (fs.existsSync(CHROMIUM) ? null : `no ${CHROMIUM}`) ??
  (fs.existsSync(DIST) ? null : 'the admin app is not built: npm run -s -w @gatehouse/ui build');

/** Destroys (ss -K) the established TCP connections a Chromium process holds to 127.0.0.1:port; → how many. */
function dropBrowserConnections(port: number): number {
  const out = execFileSync('ss', ['-tnpH', 'state', 'established', 'dst', `127.0.0.1:${port}`], { encoding: 'utf8' });
  const sports = out
    .split('\n')
    .filter((l) => /chrom/i.test(l))
    .map((l) => l.trim().split(/\s+/)[2]?.split(':').pop())
    .filter(Boolean) as string[];
  for (const sport of sports) execFileSync('ss', ['-K', 'dst', `127.0.0.1:${port}`, 'sport', '=', `:${sport}`], { encoding: 'utf8' });
  return sports.length;
}

const text = (page: Page, testid: string) => page.textContent(`[data-testid="${testid}"]`);
/** Waits until the element's text is `want` (the DOM changed by itself: the test never reloads). */
async function waitText(page: Page, testid: string, want: string, timeout = 30_000): Promise<void> {
  try {
    await page.waitForFunction(([id, w]) => document.querySelector(`[data-testid="${id}"]`)?.textContent === w, [testid, want] as const, { timeout });
  } catch (e) {
    throw new Error(`[data-testid=${testid}] stayed ${JSON.stringify(await text(page, testid))}, expected ${JSON.stringify(want)}: ${(e as Error).message}`);
  }
}

test(
  'a peer going online shows in the open dashboard without a reload; a dropped live stream resumes with Last-Event-ID and misses nothing',
  { skip: reason ?? false, timeout: 240_000 },
  async (t) => {
    const run = await startE2e(t, {
      prefix: 'uilive',
      iface: `ghu${process.pid % 1000}`,
      vpnOctet: 226,
      peers: [{ name: 'pa', octet: 227 }],
      proxyBind: '127.0.0.1',
      env: { GATEHOUSE_WG_POLL_INTERVAL: '1' },
    });
    const browser = await openBrowser();
    t.after(() => browser.close());
    const w = await watchedPage(browser);
    const { page, problems, context } = w;
    // Every EventSource the app opens, its `ready` events and errors, and every stream request with
    // its Last-Event-ID (recorded, nothing changed: the app's own stream is used as it is).
    await page.addInitScript(() => {
      const NativeES = window.EventSource;
      const rec = ((window as Window & { __live?: LiveRecord }).__live = { ready: [] as LiveRecord['ready'], errors: 0, opened: 0 });
      window.EventSource = class extends NativeES {
        constructor(url: string | URL, init?: EventSourceInit) {
          super(url, init);
          rec.opened++;
          this.addEventListener('ready', (e) => rec.ready.push(JSON.parse((e as MessageEvent).data)));
          this.addEventListener('error', () => {
            rec.errors++;
          });
        }
      };
    });
    const streamRequests: { at: number; lastEventId: string | null; url: string }[] = [];
    page.on('request', async (r) => {
      if (!r.url().includes('/api/v1/events')) return;
      const h = await r.allHeaders();
      streamRequests.push({ at: Date.now(), lastEventId: h['last-event-id'] ?? new URL(r.url()).searchParams.get('last_event_id'), url: r.url() });
    });
    const live = () => page.evaluate(() => (window as Window & { __live?: LiveRecord }).__live as LiveRecord);

    await signIn(page, run.s.url, undefined, '/dashboard');
    await settled(page);
    await page.waitForFunction(() => (window as Window & { __live?: LiveRecord }).__live!.ready.length > 0, undefined, { timeout: 15_000 });
    // A reload or navigation would drop this marker.
    await page.evaluate(() => {
      (window as Window & { __sameDocument?: unknown }).__sameDocument = true;
    });
    const sameDocument = () => page.evaluate(() => (window as Window & { __sameDocument?: unknown }).__sameDocument === true);
    assert.equal(await text(page, 'peers-online-label'), '0 of 0 online');
    assert.ok(await page.isVisible('text=No peers yet'), 'the empty dashboard says what to do next');
    assert.ok(await page.isVisible('a[href="/peers"]'));
    await waitFor(async () => (await text(page, 'wg-state'))?.trim() === 'running', 15_000, { what: 'the WireGuard card says running' });
    await waitFor(async () => (await text(page, 'caddy-state'))?.trim() === 'running', 15_000, { what: 'the Caddy card says running' });

    // A second tab on the peers list (same session).
    const list = await context.newPage();
    const listProblems: string[] = [];
    list.on('console', (m) => {
      if (m.type() === 'error') listProblems.push(`console: ${m.text()}`);
    });
    list.on('pageerror', (e) => listProblems.push(`exception: ${e.message}`));
    await list.goto(`${run.s.url}/peers`);
    await settled(list);
    await list.evaluate(() => {
      (window as Window & { __sameDocument?: unknown }).__sameDocument = true;
    });

    // ---- a real handshake from the namespace: the open tabs follow (peer_created, then peer_online)
    const [peer] = await tunnelPeers(run, ['ui-live-peer']);
    await list.waitForFunction(
      (name) =>
        [...document.querySelectorAll('table tbody tr')].some(
          (r) => r.textContent?.includes(name) && /\bonline\b/.test(r.querySelector('.status')?.textContent ?? ''),
        ),
      peer.name,
      { timeout: 30_000 },
    );
    assert.ok(await list.evaluate(() => (window as Window & { __sameDocument?: unknown }).__sameDocument === true), 'the peers tab was never reloaded');
    assert.deepEqual(listProblems, []);
    await list.close();
    await waitText(page, 'peers-online-label', '1 of 1 online');
    await waitText(page, 'peers-total', '1');
    const stats = (await run.api('/dashboard/stats')).data;
    assert.equal(stats.peers.online, 1, 'the server counts the peer online too');
    assert.ok((await run.api(`/peers/${peer.id}`)).data.peer.isOnline);
    await page.waitForFunction((name) => document.querySelector('[data-testid="activity"]')?.textContent?.includes(name), peer.name, { timeout: 15_000 });
    assert.equal(await page.isVisible('text=No peers yet'), false, 'the empty state is gone');

    // ---- traffic through the tunnel moves the live rate (peer_traffic events)
    const pinging = run.network.ping(run.ns[0], run.serverIp, { count: 15, intervalS: 0.2, timeoutS: 1 });
    await page.waitForFunction(
      () => {
        const v = document.querySelector('[data-testid="rate-up"]')?.textContent;
        return !!v && v !== '0 B/s';
      },
      undefined,
      { timeout: 20_000 },
    );
    assert.ok((await pinging).received > 0);
    await screenshot(page, 'e2e-live-dashboard-online');

    // ---- the peer goes away (disabled): back to 0 online
    assert.equal((await run.api(`/peers/${peer.id}/toggle`, 'PUT')).status, 200);
    await waitText(page, 'peers-online-label', '0 of 1 online');
    assert.ok(await sameDocument(), 'the tab was never reloaded');

    // ---- drop the live stream (the tab goes offline), emit events meanwhile, come back online
    const before = await live();
    const problemsBefore = problems.length;
    await context.setOffline(true);
    // Offline mode keeps open connections: cut the browser's own TCP connections to the sidecar (the
    // live stream among them) as a dropped network would; new ones fail while the tab is offline.
    assert.ok(dropBrowserConnections(Number(new URL(run.s.url).port)) >= 1, 'the browser had a connection to cut');
    await page.waitForFunction((n) => (window as Window & { __live?: LiveRecord }).__live!.errors > n, before.errors, { timeout: 20_000 });
    const offlineAt = Date.now();
    const created = (await run.api('/peers', 'POST', { name: 'ui-live-missed' })).data.peer;
    assert.ok(created?.id);
    const emittedAt = Date.now();
    // Still offline: the tab cannot have seen it yet.
    assert.equal(await text(page, 'peers-online-label'), '0 of 1 online');
    await context.setOffline(false);
    await waitText(page, 'peers-online-label', '0 of 2 online');
    await page.waitForFunction((name) => document.querySelector('[data-testid="activity"]')?.textContent?.includes(name), created.name, { timeout: 15_000 });
    // Back online, nothing shows an error any more (a figure refresh that failed offline is redone).
    await page.waitForFunction(() => !document.querySelector('.banner.error'), undefined, { timeout: 15_000 });
    const after = await live();
    const resumed = after.ready.slice(before.ready.length);
    assert.ok(resumed.length >= 1 && resumed.every((r) => r.resumed === true), `the stream came back resumed: ${JSON.stringify(after.ready)}`);
    const reconnect = streamRequests.filter((r) => r.at > emittedAt);
    assert.ok(reconnect.length >= 1, 'the stream reconnected after the event was emitted');
    const first = streamRequests[0];
    assert.equal(first.lastEventId, null, 'the first connection starts fresh');
    for (const r of reconnect) assert.match(String(r.lastEventId), /^[\w-]+-\d+$/, `reconnect carries Last-Event-ID: ${r.url}`);
    assert.ok(emittedAt >= offlineAt);
    assert.ok(await sameDocument(), 'the tab was never reloaded');

    // While offline, only the cut stream (aborted) and requests made without network may fail.
    const offlineProblems = problems.splice(problemsBefore);
    // A request the page makes while offline (a throttled refresh of the figures) fails with no network;
    // only the cut stream may be aborted.
    const allowed = (p: string) =>
      /ERR_INTERNET_DISCONNECTED/.test(p) || (/ERR_CONNECTION_ABORTED/.test(p) && (/\/api\/v1\/events/.test(p) || /^console: Failed to load resource/.test(p)));
    const unexpected = offlineProblems.filter((p) => !allowed(p));
    assert.deepEqual(unexpected, [], `only the stream's reconnects failed while offline: ${JSON.stringify(offlineProblems)}`);
    await settled(page);
    assert.deepEqual(problems, []);
    await context.close();
  },
);
