// RDP routes in a real browser, through the UI alone (the API, the database and the server's key
// only seed and check): the empty list, create with the server's field errors next to the inputs and
// the access-mode fields (internal on a peer), edit to `both`, the gateway mode with its linked TCP
// route, credentials encrypted in the browser (every request body the page sends is searched for the
// password: it never leaves in clear; the stored envelope opens with the server's key to exactly what
// was typed), clearing them, maintenance windows (the one in force marked), toggle, batch, delete, and
// the pending-rotations view (ack refused until the credentials are re-entered); axe and screenshots
// of the form and the detail page (en/de, 1280/360).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { decryptCredentials } from '@gatehouse/common/rdp-credentials.js';
import { adminPage, axe, screenshot, serious, settled, uiServer, type WatchedPage } from '../lib/browser.js';
import type { RdpRoute } from '../../sidecar/test/lib/protocol.js';

const ui = uiServer({ GATEHOUSE_RATE_LIMIT_LOGIN: '100000', GATEHOUSE_RATE_LIMIT_ADMIN: '100000' });
const api = ui.api;
const PASSWORD = 'Sup3r-secret "rdp" päss';
const dialog = (page: Page) => page.locator('dialog[open]');
const realProblems = (w: WatchedPage) => w.problems.filter((p) => !/^console: Failed to load resource: the server responded with a status of 400/.test(p));
async function noSerious(page: Page, where: string) {
  const v = serious(await axe(page));
  assert.deepEqual(v, [], `${where}: ${JSON.stringify(v, null, 1)}`);
}
/** Every request body the page sends, to search for what must never leave the browser in clear. */
function recordBodies(page: Page): string[] {
  const bodies: string[] = [];
  page.on('request', (r) => {
    const b = r.postData();
    if (b !== null) bodies.push(`${r.method()} ${r.url()} ${b}`);
  });
  return bodies;
}

test('RDP routes: create, edit, gateway mode, credentials encrypted in the browser, maintenance, toggle, delete — through the UI', async () => {
  const peer = (await api('/peers', 'POST', { name: 'desk-peer' })).data.peer;
  assert.ok(peer?.id, 'peer seeded');
  const w = await adminPage(ui.browser, ui.s.url, { lang: 'en' });
  const { page } = w;
  w.allowHttpError('/api/v1/rdp', 400);
  w.allowHttpError('/api/v1/rdp', 422); // a refusal the document cannot state (a combination, the stored state)
  const bodies = recordBodies(page);
  await page.goto(`${ui.s.url}/rdp`);
  await settled(page);
  await page.getByText('No RDP routes yet').waitFor();

  // Create: an empty name is refused next to its input; nothing written, nothing typed lost.
  await page.click('.page-header a:has-text("New RDP route")');
  await page.waitForURL((u) => u.pathname === '/rdp/new');
  await page.locator('#f-name').waitFor();
  await page.selectOption('#f-target_peer_id', String(peer.id));
  await page.fill('#f-target_port', '3390');
  await page.click('form.rdp-form button[type=submit]');
  await page.waitForSelector('#f-name-err');
  assert.equal(await page.inputValue('#f-target_port'), '3390');
  assert.equal((await api('/rdp')).data.routes.length, 0, 'nothing written on a 400');
  await page.fill('#f-name', 'Office PC');
  await page.uncheck('#f-full_screen');
  await page.fill('#f-resolution', '1280x720');
  await page.selectOption('#f-color_depth', '24');
  await page.selectOption('#f-audio_mode', 'off');
  await page.uncheck('#f-clipboard_enabled');
  await page.check('#f-wol_enabled');
  await page.fill('#f-wol_mac', 'aa:bb:cc:dd:ee:01');
  await page.click('form.rdp-form button[type=submit]');
  await page.waitForURL((u) => /^\/rdp\/\d+$/.test(u.pathname));
  await settled(page);
  let [route] = (await api('/rdp')).data.routes;
  assert.deepEqual(
    {
      name: route.name,
      mode: route.access_mode,
      peer: route.target_peer_id,
      port: route.target_port,
      res: route.resolution,
      depth: route.color_depth,
      audio: route.audio_mode,
      clip: route.clipboard_enabled,
      nla: route.network_level_auth,
      wol: route.wol_enabled,
      users: route.allowed_user_ids,
    },
    {
      name: 'Office PC',
      mode: 'internal',
      peer: peer.id,
      port: 3390,
      res: '1280x720',
      depth: 24,
      audio: 'off',
      clip: false,
      nla: true,
      wol: true,
      users: null,
    },
  );

  // Credentials: encrypted in the browser; the password is in no request body; the stored envelope
  // opens with the server's key to what was typed.
  await page.fill('#f-username', 'alice');
  await page.fill('#f-password', PASSWORD);
  await page.fill('#f-domain', 'CORP');
  const put = page.waitForRequest((r) => r.method() === 'PUT' && r.url().endsWith(`/api/v1/rdp/${route.id}/credentials`));
  await page.click('.rdp-creds button[type=submit]');
  const sent = JSON.parse((await put).postData() ?? '{}');
  await page
    .locator('.rdp-creds')
    .getByText(/^stored$/)
    .waitFor();
  assert.equal(sent.credentials.alg, 'RSA-OAEP-256+A256GCM');
  assert.equal(await page.inputValue('#f-password'), '', 'the password is not kept in the form');
  for (const b of bodies) assert.ok(!b.includes(PASSWORD) && !b.includes('alice'), `clear text in a request: ${b.slice(0, 200)}`);
  const stored = (await api(`/rdp/${route.id}/credentials`)).data;
  assert.deepEqual(stored.credentials, sent.credentials, 'the server stored exactly the envelope the browser made');
  assert.ok(!JSON.stringify(stored).includes(PASSWORD));
  const key = await ui.s.deps.rdp.keys.privateKeyFor(stored.credentials!.kid);
  assert.deepEqual(await decryptCredentials(key, stored.credentials!.kid, stored.credentials), { username: 'alice', password: PASSWORD, domain: 'CORP' });
  route = (await api(`/rdp/${route.id}`)).data.route;
  assert.equal(route.has_credentials, true);

  // Maintenance: a window in force now (with its note) and one tomorrow.
  await page.click('.rdp-maint button:has-text("Add window")');
  await page.click('.rdp-maint button:has-text("Add window")');
  const local = (ms: number) => {
    const d = new Date(ms);
    const p = (n: number) => String(n).padStart(2, '0');
    return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;
  };
  const now = Date.now();
  await page.fill('#f-windows-0-from', local(now - 3600_000));
  await page.fill('#f-windows-0-to', local(now + 3600_000));
  await page.fill('#f-windows-0-note', 'Patch day');
  await page.fill('#f-windows-1-from', local(now + 86400_000));
  await page.fill('#f-windows-1-to', local(now + 86400_000 - 3600_000));
  await page.click('.rdp-maint button[type=submit]');
  await page.waitForSelector('#f-windows-1-to-err');
  assert.equal((await api(`/rdp/${route.id}/maintenance`)).data.windows.length, 0, 'nothing written on a 400');
  await page.fill('#f-windows-1-to', local(now + 86400_000 + 3600_000));
  await page.click('.rdp-maint button[type=submit]');
  await page
    .locator('.rdp-maint')
    .getByText(/In maintenance until .*: Patch day/)
    .waitFor();
  const maint = (await api(`/rdp/${route.id}/maintenance`)).data;
  assert.equal(maint.windows.length, 2);
  assert.equal(maint.active?.note, 'Patch day');
  assert.ok(Math.abs(Date.parse(maint.windows[0].from) - Math.floor((now - 3600_000) / 60_000) * 60_000) < 60_000);

  // Edit: access mode both, with its public address; the internal target stays.
  await page.click('.page-header a:has-text("Edit")');
  await page.waitForURL((u) => u.pathname === `/rdp/${route.id}/edit`);
  await page.locator('#f-name').waitFor();
  assert.equal(await page.inputValue('#f-resolution'), '1280x720');
  await page.selectOption('#f-access_mode', 'both');
  await page.fill('#f-external_host', 'rdp.example.com');
  await page.fill('#f-listen_port', '13389');
  // Only the admin's client tokens may use it.
  await page.uncheck('#f-all_users');
  await page.locator('#f-allowed_user_ids label.check:has-text("admin") input').check();
  // The route has credentials: the form says a new destination drops them.
  await page.locator('[data-testid=rdp-creds-dest-hint]').waitFor();
  await page.click('form.rdp-form button[type=submit]');
  await page.waitForURL((u) => u.pathname === `/rdp/${route.id}`);
  route = (await api(`/rdp/${route.id}`)).data.route;
  assert.deepEqual([route.access_mode, route.external_host, route.listen_port, route.target_peer_id], ['both', 'rdp.example.com', 13389, peer.id]);
  const adminId = (await api('/users')).data.users.find((u) => u.username === 'admin')!.id;
  assert.deepEqual(route.allowed_user_ids, [adminId]);
  // Mode both adds a public address the credentials would go to: the edit dropped them.
  assert.equal(route.has_credentials, false, 'an edit that adds a destination drops the credentials');
  assert.equal((await api(`/rdp/${route.id}/credentials`, 'PUT', { credentials: stored.credentials })).status, 200);
  await page.reload();
  await page
    .locator('.rdp-creds')
    .getByText(/^stored$/)
    .waitFor();

  // Clear credentials (confirmed once).
  await page.click('.rdp-creds button:has-text("Clear credentials")');
  await dialog(page).locator('button.danger').click();
  await page.locator('.rdp-creds').getByText('none stored').waitFor();
  assert.equal((await api(`/rdp/${route.id}/credentials`)).data.credentials, null);
  assert.deepEqual(realProblems(w), []);
  await noSerious(page, 'detail');

  // Toggle and delete from the list.
  await page.goto(`${ui.s.url}/rdp`);
  await settled(page);
  await page.click('button[aria-label="Disable Office PC"]');
  await page.locator('button[aria-label="Enable Office PC"]').waitFor();
  assert.equal((await api(`/rdp/${route.id}`)).data.route.enabled, false);
  await page.click('button[aria-label="Enable Office PC"]');
  await page.locator('button[aria-label="Disable Office PC"]').waitFor();
  assert.equal((await api(`/rdp/${route.id}`)).data.route.enabled, true);
  assert.deepEqual(realProblems(w), []);
  await w.context.close();
});

test('RDP routes: gateway mode links its TCP route, batch actions, pending rotations with ack after re-entry; screenshots', async () => {
  const gw = (await api('/peers', 'POST', { name: 'home-gw', is_gateway: true })).data.peer;
  assert.equal(gw?.peer_type, 'gateway', 'gateway seeded');
  const w = await adminPage(ui.browser, ui.s.url, { lang: 'en' });
  const { page } = w;
  const bodies = recordBodies(page);
  w.allowHttpError('/api/v1/rdp', 400);
  w.allowHttpError('/api/v1/rdp', 422); // a refusal the document cannot state (a combination, the stored state)
  await page.goto(`${ui.s.url}/rdp/new`);
  await settled(page);
  await page.fill('#f-name', 'Lab server');
  await page.selectOption('#f-access_mode', 'gateway');
  await page.selectOption('#f-gateway_peer_id', String(gw.id));
  await page.fill('#f-target_host', '192.168.50.20');
  await page.fill('#f-listen_port', '23389');
  await page.click('form.rdp-form button[type=submit]');
  await page.waitForURL((u) => /^\/rdp\/\d+$/.test(u.pathname));
  await settled(page);
  const lab = (await api('/rdp')).data.routes.find((r: RdpRoute) => r.name === 'Lab server');
  assert.deepEqual([lab!.access_mode, lab!.gateway_peer_id, lab!.target_host, lab!.listen_port], ['gateway', gw.id, '192.168.50.20', 23389]);
  assert.ok(lab!.gateway_l4_route_id, 'the linked route exists');
  // The linked route is shown with a link to it.
  const link = page.locator(`a[href="/routes/${lab!.gateway_l4_route_id}"]`);
  await link.waitFor();
  const l4 = (await api(`/routes/${lab!.gateway_l4_route_id}`)).data.route;
  assert.equal(l4.l4_listen_port, 23389);
  // The routes screens show the linked route as managed by its RDP route: no edit, toggle or delete
  // there (the API refuses them with 409), only the way back to the RDP route.
  assert.equal(l4.rdp_route_id, lab!.id);
  await page.goto(`${ui.s.url}/routes/${lab!.gateway_l4_route_id}`);
  await settled(page);
  await page
    .locator(`header a[href="/rdp/${lab!.id}"]`)
    .or(page.locator(`a[href="/rdp/${lab!.id}"]`).first())
    .first()
    .waitFor();
  await page.getByText(/belongs to an RDP route in gateway mode/).waitFor();
  assert.equal(await page.locator(`a[href="/routes/${lab!.gateway_l4_route_id}/edit"]`).count(), 0, 'no edit link on a linked route');
  assert.equal(await page.getByRole('button', { name: 'Delete', exact: true }).count(), 0, 'no delete button on a linked route');
  await page.goto(`${ui.s.url}/routes`);
  await settled(page);
  await page.locator(`td a[href="/rdp/${lab!.id}"]`).waitFor();
  assert.equal(await page.locator(`a[aria-label="Edit ${l4.domain}"]`).count(), 0, 'no edit action in the list for a linked route');
  await page.goto(`${ui.s.url}/rdp/${lab!.id}`);
  await settled(page);

  // Credentials for this route, then a master-key rotation makes it pending.
  await page.fill('#f-username', 'bob');
  await page.fill('#f-password', PASSWORD);
  await page.click('.rdp-creds button[type=submit]');
  await page
    .locator('.rdp-creds')
    .getByText(/^stored$/)
    .waitFor();
  const oldKid = (await api(`/rdp/${lab!.id}`)).data.route.credentials_kid;
  await ui.s.deps.rdp.onMasterKeyRotated();
  await page.goto(`${ui.s.url}/rdp`);
  await settled(page);
  await page.getByText(/1 RDP routes wait for their credentials/).waitFor();
  await page.click('.rdp-pending-banner a');
  await page.waitForURL((u) => u.pathname === '/rdp/rotation');
  await settled(page);
  await page.getByText(/Re-enter the credentials first \(they are encrypted for the new key\)/).waitFor();
  assert.ok(await page.locator('button[aria-label="Acknowledge the rotation of Lab server"]').isDisabled(), 'ack waits for the re-entry');
  await page.locator('table.table').getByText('not yet re-entered').waitFor();
  await screenshot(page, 'en-1280-rdp-rotation');
  await noSerious(page, 'rotation');
  // Re-enter on the route's page (encrypted for the new key), then acknowledge.
  await page.click('a[aria-label="Re-enter credentials: Lab server"]');
  await page.waitForURL((u) => u.pathname === `/rdp/${lab!.id}`);
  await settled(page);
  await page.getByText(/Credentials must be re-entered after a master-key rotation/).waitFor();
  await page.fill('#f-username', 'bob');
  await page.fill('#f-password', PASSWORD);
  await page.click('.rdp-creds button[type=submit]');
  await page.waitForFunction(
    (kid) => !!document.querySelector('.rdp-cred-state code') && document.querySelector('.rdp-cred-state code')!.textContent !== kid,
    oldKid,
  );
  await page.goto(`${ui.s.url}/rdp/rotation`);
  await settled(page);
  await page
    .locator('table.table')
    .getByText(/^re-entered/)
    .waitFor();
  await page.click('button[aria-label="Acknowledge the rotation of Lab server"]');
  await page.getByText('No rotation pending').waitFor();
  const acked = (await api(`/rdp/${lab!.id}`)).data.route;
  assert.equal(acked.rotation_state, 'none');
  assert.notEqual(acked.credentials_kid, oldKid);
  for (const b of bodies) assert.ok(!b.includes(PASSWORD), `clear text in a request: ${b.slice(0, 200)}`);

  // Batch: disable both routes, then delete them (confirmed once; the linked route goes too).
  await page.goto(`${ui.s.url}/rdp`);
  await settled(page);
  await page.click('input[aria-label="Select all"]');
  await page.click('.batch-bar button:has-text("Disable")');
  await page.getByText(/2 done, 0 failed/).waitFor();
  assert.ok((await api('/rdp')).data.routes.every((r: RdpRoute) => !r.enabled));
  assert.deepEqual(realProblems(w), []);
  await w.context.close();

  // Screenshots and axe of the list, the form and the detail page, en/de × 1280/360.
  for (const lang of ['en', 'de'] as const) {
    // The app speaks the signed-in user's language.
    assert.equal((await api('/settings/language', 'POST', { language: lang })).status, 200);
    for (const width of [1280, 360]) {
      const v = await adminPage(ui.browser, ui.s.url, { lang, width });
      assert.equal(await v.page.evaluate(() => document.documentElement.lang), lang);
      for (const [path, name] of [
        ['/rdp', 'list'],
        [`/rdp/${lab!.id}`, 'detail'],
        [`/rdp/${lab!.id}/edit`, 'edit'],
        ['/rdp/new', 'new'],
      ] as const) {
        await v.page.goto(`${ui.s.url}${path}`);
        await settled(v.page);
        if (name === 'detail') await v.page.locator('.rdp-maint form').waitFor();
        await screenshot(v.page, `${lang}-${width}-rdp-${name}`);
        await noSerious(v.page, `${lang} ${width} ${name}`);
        const wide = await v.page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
        assert.ok(wide <= 0, `${lang} ${width} ${name}: page ${wide}px wider than the window`);
      }
      assert.deepEqual(v.problems, [], `${lang} ${width}`);
      await v.context.close();
    }
  }

  assert.equal((await api('/settings/language', 'POST', { language: 'en' })).status, 200);
  const d = await adminPage(ui.browser, ui.s.url, { lang: 'en' });
  await d.page.goto(`${ui.s.url}/rdp`);
  await settled(d.page);
  await d.page.click('input[aria-label="Select all"]');
  await d.page.click('.batch-bar button:has-text("Delete")');
  await dialog(d.page)
    .filter({ hasText: /Delete 2 RDP routes/ })
    .locator('button.danger')
    .click();
  await d.page.getByText('No RDP routes yet').waitFor();
  assert.equal((await api('/rdp')).data.routes.length, 0);
  assert.equal((await api(`/routes/${lab!.gateway_l4_route_id}`)).status, 404, 'the linked route went with it');
  assert.deepEqual(d.problems, []);
  await d.context.close();
});
