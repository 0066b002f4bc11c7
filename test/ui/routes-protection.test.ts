// The route list and detail show what protects each route and its certificate, against a sidecar
// that runs the real custom Caddy (bin/caddy, internal CA): no protection, basic auth, route login
// with a switch to TOTP pending verification, peer access list and IP filter, an L4 route without a
// domain; the certificate of an HTTPS route that Caddy issued (valid, "internal CA"), one not
// issued yet (pending) and "No TLS"; the link to the site opens in a new tab with rel=noopener.
// Screenshots of the list and the detail in en/de, light and dark, at 390 and 1280 px.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import tls from 'node:tls';
import type { Page } from 'playwright-core';
import { CADDY, managedCaddyEnv } from '../lib/caddy-env.js';
import { freePort } from '../lib/ports.js';
import { waitFor } from '../lib/wait.js';
import { adminPage, axe, screenshot, serious, settled, uiServer } from '../lib/browser.js';

const skip = fs.existsSync(CADDY) ? false : `no ${CADDY}: build it with bash scripts/build-caddy.sh`;
let httpsPort = 0;
const ui = uiServer(
  async () => {
    const ports = { http: await freePort(), https: await freePort(), admin: await freePort() };
    httpsPort = ports.https;
    const octet = 10 + (process.pid % 200);
    return { ...managedCaddyEnv(ports), GATEHOUSE_WG_SUBNET: `127.76.${octet}.0/24`, GATEHOUSE_RATE_LIMIT_ADMIN: '100000', GATEHOUSE_RATE_LIMIT_LOGIN: '1000' };
  },
  { startFeatures: true },
  { api: 'token', skip: !!skip },
);
const call = ui.api;
const ids: Record<string, number> = {};
let l4Port = 0;

/** A TLS handshake with this SNI on Caddy's HTTPS port: Caddy issues an exact name's certificate on demand. */
function handshake(name: string): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = tls.connect({ host: '127.0.0.1', port: httpsPort, servername: name, rejectUnauthorized: false }, () => {
      sock.end();
      resolve(true);
    });
    sock.setTimeout(3000, () => {
      sock.destroy();
      resolve(false);
    });
    sock.on('error', () => resolve(false));
  });
}

async function create(key: string, body: Record<string, unknown>): Promise<number> {
  const r = await call('/routes', 'POST', body);
  assert.equal(r.status, 201, JSON.stringify(r.data));
  ids[key] = r.data.route.id;
  return r.data.route.id;
}

ui.setup(async () => {
  if (skip) return;
  const p = await call('/peers', 'POST', { name: 'web-host' });
  assert.equal(p.status, 201, JSON.stringify(p.data));
  const peerId = p.data.peer.id;
  await create('open', { domain: 'open.example.test', peer_id: peerId, target_port: 8080 });
  await create('basic', {
    domain: 'basic.example.test',
    peer_id: peerId,
    target_port: 8080,
    https_enabled: true,
    basic_auth_user: 'family',
    basic_auth_password: 'a long shared secret',
  });
  const login = await create('login', { domain: 'login.example.test', peer_id: peerId, target_port: 8080, https_enabled: true });
  const ra = await call(`/routes/${login}/auth`, 'POST', {
    method: 'email_password',
    email: 'me@example.test',
    password: 'correct horse battery',
    session_max_age: 86_400_000,
  });
  assert.equal(ra.status, 200, JSON.stringify(ra.data));
  // the switch to TOTP waits for its verification
  const sw = await call(`/routes/${login}/auth`, 'POST', { method: 'totp', email: 'me@example.test', session_max_age: 86_400_000 });
  assert.equal(sw.data.route_auth.pending_method, 'totp');
  await create('acl', {
    domain: 'lan.example.test',
    peer_id: peerId,
    target_port: 8080,
    acl_enabled: true,
    acl_peer_ids: [peerId],
    ip_filter_enabled: true,
    ip_filter_rules: ['192.168.1.0/24'],
  });
  l4Port = await freePort();
  await create('l4', { route_type: 'l4', l4_protocol: 'tcp', l4_listen_port: l4Port, peer_id: peerId, target_port: 22 });
  // Caddy issues basic.example.test's certificate at its first handshake
  await waitFor(
    async () => {
      await handshake('basic.example.test');
      const c = (await call(`/routes/${ids.basic}`)).data.route.certificate;
      if (c.state !== 'valid') throw new Error(`state ${c.state}`);
      return true;
    },
    20_000,
    'the certificate of basic.example.test',
  );
});

/** The text of the list row of a route (the row that links to its detail). */
async function rowText(page: Page, id: number): Promise<string> {
  const row = page.locator(`tr:has(a[href="/routes/${id}"])`).first();
  await row.waitFor();
  return (await row.innerText()).replace(/\s+/g, ' ');
}

test('route list and detail show protection, certificate state and the site link (en/de, light/dark, 390/1280 px)', { skip }, async () => {
  const TEXT = {
    en: {
      none: 'No protection',
      basic: 'Basic auth',
      login: 'Route login: password',
      pending: 'TOTP pending verification',
      acl: 'Peer access list (1)',
      ip: 'IP allow list (1)',
      valid: 'Valid until',
      internal: 'internal CA',
      noTls: 'No TLS',
      pendingCert: 'No certificate yet',
      port: `port ${l4Port}`,
    },
    de: {
      none: 'Kein Schutz',
      basic: 'Basic Auth',
      login: 'Routen-Anmeldung: Passwort',
      pending: 'TOTP wartet auf Bestätigung',
      acl: 'Peer-Zugriffsliste (1)',
      ip: 'IP-Freigabeliste (1)',
      valid: 'Gültig bis',
      internal: 'interne CA',
      noTls: 'Kein TLS',
      pendingCert: 'Noch kein Zertifikat',
      port: `Port ${l4Port}`,
    },
  } as const;
  // the admin's language is a setting of their account
  const { cookie, csrf } = await ui.login();
  const setLanguage = (language: string) =>
    ui.s.req('/api/v1/settings/language', { method: 'POST', json: { language }, headers: { cookie, 'x-csrf-token': csrf } });
  after(() => setLanguage('en'));
  for (const lang of ['en', 'de'] as const) {
    assert.equal((await setLanguage(lang)).status, 200);
    for (const colorScheme of ['light', 'dark'] as const) {
      for (const width of [1280, 390]) {
        const x = TEXT[lang];
        const { page, problems, context } = await adminPage(ui.browser, ui.s.url, { lang, colorScheme, width });
        await page.goto(`${ui.s.url}/routes`);
        await page.locator(`a[href="/routes/${ids.open}"]`).first().waitFor();
        await settled(page);
        const open = await rowText(page, ids.open);
        assert.ok(open.includes(x.none) && open.includes(x.noTls), `${lang} open: ${open}`);
        const basic = await rowText(page, ids.basic);
        assert.ok(basic.includes(x.basic) && basic.includes(x.valid) && basic.includes(x.internal), `${lang} basic: ${basic}`);
        const login = await rowText(page, ids.login);
        assert.ok(login.includes(x.login) && login.includes(x.pending) && login.includes(x.pendingCert), `${lang} login: ${login}`);
        assert.ok(!login.includes(x.none));
        const acl = await rowText(page, ids.acl);
        assert.ok(acl.includes(x.acl) && acl.includes(x.ip), `${lang} acl: ${acl}`);
        const l4 = await rowText(page, ids.l4);
        assert.ok(l4.includes(x.port) && l4.includes(x.noTls), `${lang} l4: ${l4}`);
        // the site link: https for HTTPS routes, a new tab without access to this window
        const link = page.locator(`tr:has(a[href="/routes/${ids.basic}"]) a.site-link`).first();
        assert.equal(await link.getAttribute('href'), 'https://basic.example.test');
        assert.equal(await link.getAttribute('target'), '_blank');
        assert.match((await link.getAttribute('rel')) ?? '', /\bnoopener\b/);
        assert.equal(await page.locator(`tr:has(a[href="/routes/${ids.open}"]) a.site-link`).first().getAttribute('href'), 'http://open.example.test');
        assert.equal(await page.locator(`tr:has(a[href="/routes/${ids.l4}"]) a.site-link`).count(), 0, 'no site link for an L4 route');
        await screenshot(page, `${lang}-${width}-${colorScheme}-routes-protection-list`);
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
        assert.ok(overflow <= 1, `${lang} ${width}: the list scrolls sideways by ${overflow}px`);
        if (width === 1280 && colorScheme === 'light') assert.deepEqual(serious(await axe(page)), [], `${lang} list: axe`);

        // the detail of the route with route login: its protection, the pending switch, the certificate
        await page.goto(`${ui.s.url}/routes/${ids.login}`);
        await page.locator('.route-protection').first().waitFor();
        await settled(page);
        const card = (await page.locator('.card:has(.route-protection)').first().innerText()).replace(/\s+/g, ' ');
        assert.ok(card.includes(x.login) && card.includes(x.pending) && card.includes(x.pendingCert), `${lang} detail: ${card}`);
        assert.equal(await page.locator('.card:has(.route-protection) a.site-link').first().getAttribute('href'), 'https://login.example.test');
        await screenshot(page, `${lang}-${width}-${colorScheme}-routes-protection-detail`);
        // the HTTPS route Caddy issued a certificate for: issuer and expiry
        await page.goto(`${ui.s.url}/routes/${ids.basic}`);
        await page.locator('.route-protection').first().waitFor();
        await settled(page);
        const issued = (await page.locator('.card:has(.route-protection)').first().innerText()).replace(/\s+/g, ' ');
        assert.match(issued, /Caddy Local Authority/);
        assert.ok(issued.includes(x.valid) && issued.includes(x.internal), `${lang} issued: ${issued}`);
        await screenshot(page, `${lang}-${width}-${colorScheme}-routes-certificate-detail`);
        if (width === 1280 && colorScheme === 'light') assert.deepEqual(serious(await axe(page)), [], `${lang} detail: axe`);
        assert.deepEqual(problems, []);
        await context.close();
      }
    }
  }
});
