// The route form against a sidecar that runs the real custom Caddy (bin/caddy, managed on loopback
// ports): a configuration Caddy refuses (an L4 route on a port another process already holds) shows
// the proxy's reason next to the form, saves nothing, and keeps every typed value, on create and on
// edit; once the port is free, the same submit saves the route and Caddy serves it. Axe and
// screenshots of the refused form in en/de.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import type { Page } from 'playwright-core';
import { CADDY, managedCaddyEnv } from '../lib/caddy-env.js';
import { freePort, tcpRoundTrip } from '../lib/ports.js';
import { adminPage, axe, screenshot, serious, settled, uiServer } from '../lib/browser.js';
import type { Route } from '../../sidecar/test/lib/protocol.js';

const skip = fs.existsSync(CADDY) ? false : `no ${CADDY}: build it with bash scripts/build-caddy.sh`;
const ui = uiServer(
  async () => {
    const ports = { http: await freePort(), https: await freePort(), admin: await freePort() };
    const octet = 10 + (process.pid % 200);
    return { ...managedCaddyEnv(ports), GATEHOUSE_WG_SUBNET: `127.78.${octet}.0/24`, GATEHOUSE_RATE_LIMIT_ADMIN: '100000', GATEHOUSE_RATE_LIMIT_LOGIN: '1000' };
  },
  { startFeatures: true },
  { api: 'token', skip: !!skip },
);
let peerId: number;
let peerAddr: string;
const echoes: net.Server[] = [];
const call = ui.api;

/** A TCP listener on loopback that is not Caddy: Caddy cannot bind its port. */
async function squat(): Promise<net.Server> {
  const srv = net.createServer((c) => c.end());
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  return srv;
}
const portOf = (srv: net.Server) => (srv.address() as net.AddressInfo).port;
const close = (srv: net.Server) => new Promise<void>((r) => srv.close(() => r()));

ui.setup(async () => {
  if (skip) return;
  const p = await call('/peers', 'POST', { name: 'db-host' });
  assert.equal(p.status, 201, JSON.stringify(p.data));
  peerId = p.data.peer.id;
  peerAddr = p.data.peer.address.split('/')[0];
  // what the route forwards to: an echo server on the peer's (loopback) tunnel address
  const echo = net.createServer((c) => c.pipe(c));
  await new Promise<void>((r) => echo.listen(0, peerAddr, () => r()));
  echoes.push(echo);
});
after(async () => {
  for (const e of echoes) e.close();
});

async function formError(page: Page): Promise<string> {
  const banner = page.locator('form.route-form [role=alert]').first();
  await banner.waitFor({ timeout: 15_000 });
  return (await banner.innerText()).trim();
}

test(
  'create: the proxy refuses the configuration; its reason is shown next to the form, nothing is saved, nothing typed is lost; after the port is freed the same submit saves',
  { skip },
  async () => {
    const squatter = await squat();
    const taken = portOf(squatter);
    const echoPort = portOf(echoes[0]);
    const w = await adminPage(ui.browser, ui.s.url);
    const { page, problems } = w;
    w.allowHttpError('/api/v1/routes', 502);
    await page.goto(`${ui.s.url}/routes/new`);
    await page.locator('#f-domain').waitFor();
    await settled(page);
    await page.selectOption('#f-route_type', 'l4');
    await page.fill('#f-domain', 'squat.example.com');
    await page.fill('#f-description', 'database for the shop');
    await page.fill('#f-l4_listen_port', String(taken));
    await page.selectOption('#f-peer_id', String(peerId));
    await page.fill('#f-target_port', String(echoPort));
    const before = (await call('/routes')).data.total_all ?? (await call('/routes')).data.routes.length;
    const [res] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith('/api/v1/routes') && r.request().method() === 'POST'),
      page.click('form.route-form button[type=submit]'),
    ]);
    assert.equal(res.status(), 502, 'the proxy refused the configuration');
    const msg = await formError(page);
    assert.match(
      msg,
      /^The proxy \(Caddy\) refused this configuration, so nothing was saved\. Its reason: .*address already in use/,
      `the proxy's reason is shown: ${msg}`,
    );
    assert.match(page.url(), /\/routes\/new$/, 'the form stays open');
    // nothing typed is lost
    assert.equal(await page.inputValue('#f-domain'), 'squat.example.com');
    assert.equal(await page.inputValue('#f-description'), 'database for the shop');
    assert.equal(await page.inputValue('#f-l4_listen_port'), String(taken));
    assert.equal(await page.inputValue('#f-route_type'), 'l4');
    assert.equal(await page.inputValue('#f-target_port'), String(echoPort));
    // nothing saved
    const after = (await call('/routes')).data;
    assert.equal(after.total_all ?? after.routes.length, before);
    assert.equal(
      after.routes.some((r: Route) => r.domain === 'squat.example.com'),
      false,
    );
    assert.deepEqual(serious(await axe(page)), []);
    await screenshot(page, 'en-1280-routes-form-proxy-refused');

    // the port is freed: the same form, submitted again unchanged, saves and Caddy serves the route
    await close(squatter);
    await page.click('form.route-form button[type=submit]');
    await page.waitForURL(/\/routes\/\d+$/, { timeout: 15_000 });
    const saved = (await call('/routes?q=squat.example.com')).data.routes.find((r: Route) => r.domain === 'squat.example.com');
    assert.ok(saved, 'saved on the second submit');
    assert.equal(saved.description, 'database for the shop');
    assert.equal(saved.l4_listen_port, taken);
    assert.equal(await tcpRoundTrip('127.0.0.1', taken, 'through caddy'), 'through caddy', 'Caddy serves the new route');
    assert.deepEqual(problems, []);
    await w.context.close();
  },
);

test('edit: a refused update shows the reason, keeps the edited values, and leaves the stored route as it was (de)', { skip }, async () => {
  const listen = await freePort();
  const c = await call('/routes', 'POST', {
    domain: 'edit-squat.example.com',
    route_type: 'l4',
    l4_protocol: 'tcp',
    l4_listen_port: listen,
    peer_id: peerId,
    target_port: portOf(echoes[0]),
  });
  assert.equal(c.status, 201, JSON.stringify(c.data));
  const stored = (await call(`/routes/${c.data.route.id}`)).data.route;
  const squatter = await squat();
  try {
    const taken = portOf(squatter);
    // the admin's own language setting decides the app's language: German for this test
    const session = await ui.login();
    const setLang = (language: string) =>
      ui.s.req('/api/v1/settings/language', { method: 'POST', json: { language }, headers: { cookie: session.cookie, 'x-csrf-token': session.csrf } });
    assert.equal((await setLang('de')).status, 200);
    const w = await adminPage(ui.browser, ui.s.url, { lang: 'de' });
    const { page, problems } = w;
    w.allowHttpError(`/api/v1/routes/${stored.id}`, 502);
    await page.goto(`${ui.s.url}/routes/${stored.id}/edit`);
    await page.locator('#f-l4_listen_port').waitFor();
    await settled(page);
    await page.fill('#f-description', 'neuer Text');
    await page.fill('#f-l4_listen_port', String(taken));
    await page.click('form.route-form button[type=submit]');
    const msg = await formError(page);
    assert.match(
      msg,
      /^Der Proxy \(Caddy\) hat diese Konfiguration abgelehnt, daher wurde nichts gespeichert\. Seine Begründung: .*address already in use/,
      `the proxy's reason is shown in German words: ${msg}`,
    );
    assert.equal(await page.inputValue('#f-description'), 'neuer Text');
    assert.equal(await page.inputValue('#f-l4_listen_port'), String(taken));
    assert.deepEqual((await call(`/routes/${stored.id}`)).data.route, stored, 'the stored route is unchanged');
    assert.equal(await tcpRoundTrip('127.0.0.1', listen, 'still here'), 'still here', 'the old configuration keeps serving');
    assert.deepEqual(serious(await axe(page)), []);
    await screenshot(page, 'de-1280-routes-form-proxy-refused');
    assert.deepEqual(problems, []);
    await w.context.close();

    // Caddy's last error on the dashboard and the system screen: its category in German words,
    // Caddy's own text beside it (GET /caddy/status last_error_code, last_error)
    const st = (await call('/caddy/status')).data;
    assert.equal(st.last_error_code?.code, 'caddy.error.rejected', JSON.stringify(st));
    for (const [width, scheme] of [
      [1280, 'light'],
      [390, 'dark'],
    ] as const) {
      const d = await adminPage(ui.browser, ui.s.url, { lang: 'de', width, colorScheme: scheme });
      for (const [path, name] of [
        ['/', 'dashboard'],
        ['/system', 'system'],
      ]) {
        await d.page.goto(`${ui.s.url}${path}`);
        await settled(d.page);
        const shown = d.page.locator('[data-testid=caddy-last-error]').first();
        await shown.waitFor();
        const text = (await shown.innerText()).trim();
        assert.match(text, new RegExp(`^Caddy hat die Konfiguration abgelehnt \\(HTTP ${st.last_error_code.params!.status}\\)`), text);
        assert.equal((await shown.locator('.caddy-error-detail').innerText()).trim(), st.last_error, "Caddy's own words, secondary");
        assert.deepEqual(serious(await axe(d.page)), [], `${name} ${width}`);
        await screenshot(d.page, `de-${width}-${name}-caddy-last-error`);
      }
      assert.deepEqual(d.problems, []);
      await d.context.close();
    }
    assert.equal((await setLang('en')).status, 200);
  } finally {
    await close(squatter);
  }
});
