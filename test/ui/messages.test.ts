// Server messages in the reader's language: the server sends every message as a code with its
// parameters beside the English text (error bodies: code, params, field_codes; activity rows: code,
// params), and the admin app words them from its en and de dictionaries. In the German UI a refused
// write shows a German error (the form's message and the field's), and the activity log and the
// dashboard show German entries; the same in English shows the server's own text. A webhook
// receiver's failed answer (a coded category with its parameters) is German too, and so are an RDP
// route that became unreachable (its access mode and the check's reason) and gateway status rows
// stored before their reason was a code (read back from the stored English text).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import type { Page } from 'playwright-core';
import { adminPage, settled, uiServer } from '../lib/browser.js';
import { startReceiver, type Receiver } from '../../sidecar/test/lib/webhook-receiver.js';

const SECRET = 'messages-test-secret-0123456789';
const ui = uiServer({ GATEHOUSE_WEBHOOK_ALLOW_PRIVATE: 'true' });
const api = ui.api;
let rx: Receiver;
before(async () => {
  rx = await startReceiver(SECRET);
});
after(async () => {
  await ui.s.deps.webhookQueue.stop();
  await rx.close();
});

ui.setup(async () => {
  assert.equal((await api('/peer-groups', 'POST', { name: 'Office' })).status, 201);
  assert.equal((await api('/peers', 'POST', { name: 'laptop-anna' })).status, 201);
});

const dialog = (page: Page) => page.locator('dialog[open]');
/** A signed-in page in a language (the admin's own setting, which the app follows). */
async function pageIn(lang: 'en' | 'de') {
  assert.equal((await api('/settings/language', 'POST', { language: lang })).status, 200);
  const w = await adminPage(ui.browser, ui.s.url, { lang });
  await w.page.waitForFunction((l) => document.documentElement.lang === l, lang);
  return w;
}

async function refusedGroup(page: Page, add: string) {
  await page.goto(`${ui.s.url}/groups`);
  await settled(page);
  await page.click(`.page-header button:has-text("${add}")`);
  await dialog(page).locator('#f-name').waitFor();
  await page.fill('#f-name', 'OFFICE');
  await dialog(page).locator('button[type=submit]').click();
  await page.waitForSelector('#f-name-err');
  return { field: (await page.textContent('#f-name-err'))!.trim(), form: (await dialog(page).locator('[role=alert]').first().textContent())!.trim() };
}

test('the German UI shows a refused write in German: the form error and the field error come from the codes, not the English text', async () => {
  // the server's answer itself: English text, with the code and parameters beside it
  const raw = await api('/peer-groups', 'POST', { name: 'office' });
  assert.equal(raw.status, 409);
  assert.equal(raw.data.error, 'A peer group named "office" already exists');
  assert.equal(raw.data.code, 'group.name_taken');
  assert.deepEqual(raw.data.params, { name: 'office' });
  assert.deepEqual(raw.data.field_codes, { name: { code: 'group.field.name_taken' } });

  const de = await pageIn('de');
  de.allowHttpError('/api/v1/peer-groups', 409);
  const shownDe = await refusedGroup(de.page, 'Gruppe hinzufügen');
  assert.equal(shownDe.field, 'eine Gruppe mit diesem Namen existiert bereits');
  assert.match(shownDe.form, /^Eine Peer-Gruppe namens "OFFICE" existiert bereits/);
  assert.doesNotMatch(shownDe.form, /already exists/);
  assert.deepEqual(
    de.problems.filter((p) => !/status of 409/.test(p)),
    [],
  );
  await de.context.close();

  const en = await pageIn('en');
  en.allowHttpError('/api/v1/peer-groups', 409);
  const shownEn = await refusedGroup(en.page, 'Add group');
  assert.equal(shownEn.field, 'a group with this name already exists');
  assert.match(shownEn.form, /^A peer group named "OFFICE" already exists/);
  await en.context.close();
  assert.equal((await api('/peer-groups')).data.groups.length, 1, 'nothing written');
});

test('the German UI shows German activity entries in the activity log and on the dashboard; stored rows keep the English text with the code', async () => {
  const rows = (await api('/logs/activity?limit=100')).data.entries;
  const peer = rows.find((r) => r.code === 'peer.created');
  assert.ok(peer, JSON.stringify(rows.map((r) => r.code)));
  assert.match(peer.message, /^Peer "laptop-anna" created \(10\.\d+\.\d+\.\d+\)$/);
  assert.equal(peer.params?.name, 'laptop-anna');
  assert.ok(rows.some((r) => r.code === 'group.created' && r.message === 'Peer group "Office" created'));

  const de = await pageIn('de');
  await de.page.goto(`${ui.s.url}/logs`);
  await settled(de.page);
  const log = de.page.locator('td.log-msg');
  await log.filter({ hasText: 'Peer "laptop-anna" angelegt' }).first().waitFor();
  await log.filter({ hasText: 'Peer-Gruppe "Office" angelegt' }).first().waitFor();
  const texts = await log.allTextContents();
  assert.ok(!texts.some((t) => / created\b/.test(t)), `English entries in the German log: ${texts.join(' | ')}`);
  // a row written while the page is open arrives live and is worded too
  assert.equal((await api('/peer-groups', 'POST', { name: 'Lager' })).status, 201);
  await log.filter({ hasText: 'Peer-Gruppe "Lager" angelegt' }).first().waitFor();

  await de.page.goto(`${ui.s.url}/`);
  await settled(de.page);
  await de.page.locator('[data-testid=activity] .dash-activity-msg').filter({ hasText: 'Peer-Gruppe "Lager" angelegt' }).first().waitFor();
  assert.deepEqual(de.problems, []);
  await de.context.close();

  const en = await pageIn('en');
  await en.page.goto(`${ui.s.url}/logs`);
  await settled(en.page);
  await en.page.locator('td.log-msg').filter({ hasText: 'Peer "laptop-anna" created' }).first().waitFor();
  await en.context.close();
});

test("the German UI words a webhook receiver's failed answer by its category (webhook.delivery.status), the English UI shows the server's text", async () => {
  rx.status = 500;
  const hook = await api('/webhooks', 'POST', { name: 'Ops', url: rx.url, secret: SECRET, events: ['peer_created'], enabled: true });
  assert.equal(hook.status, 201, JSON.stringify(hook.data));
  const id = hook.data.webhook.id as number;
  const sent = await api(`/webhooks/${id}/test`, 'POST');
  assert.equal(sent.data.delivery.last_error, 'HTTP 500');
  assert.deepEqual(sent.data.delivery.last_error_code, { code: 'webhook.delivery.status', params: { status: 500 } });

  const de = await pageIn('de');
  await de.page.goto(`${ui.s.url}/webhooks/${id}`);
  await settled(de.page);
  const cell = de.page.locator('.webhook-error').first();
  await cell.waitFor();
  assert.equal((await cell.textContent())!.trim(), 'Der Empfänger antwortete mit HTTP 500');
  assert.deepEqual(de.problems, []);
  await de.context.close();
  const en = await pageIn('en');
  await en.page.goto(`${ui.s.url}/webhooks/${id}`);
  await settled(en.page);
  await en.page.locator('.webhook-error').getByText('HTTP 500').waitFor();
  await en.context.close();
});

test('the German UI words an unreachable RDP route (mode and reason) and gateway rows stored without a reason code', async (t) => {
  // a real RDP host: reachable, then gone (connection refused)
  const socks = new Set<net.Socket>();
  const host = net.createServer((c) => {
    socks.add(c);
    c.on('error', () => undefined);
  });
  await new Promise<void>((r) => host.listen(0, '127.0.0.1', () => r()));
  t.after(() => {
    for (const c of socks) c.destroy();
    host.close();
  });
  const port = (host.address() as net.AddressInfo).port;
  const made = await api('/rdp', 'POST', { name: 'Buchhaltung', access_mode: 'internal', target_host: '127.0.0.1', target_port: port });
  assert.equal(made.status, 201, JSON.stringify(made.data));
  const id = made.data.route.id as number;
  const up = await api(`/rdp/${id}/status?refresh=1`);
  assert.equal(up.data.status.reachable, true, JSON.stringify(up.data));
  for (const c of socks) c.destroy();
  await new Promise<void>((r) => host.close(() => r()));
  const down = (await api(`/rdp/${id}/status?refresh=1`)).data.status;
  assert.equal(down.reachable, false);
  const row = (await api('/logs/activity?event_type=rdp_status_changed&limit=10')).data.entries[0];
  assert.equal(row.code, 'rdp.unreachable');
  assert.deepEqual(row.params!.reason, down.error_code);
  assert.equal(row.message, 'RDP route "Buchhaltung" is unreachable (internal: internal: connection refused)');

  // gateway rows as older servers stored them: before codes, and with the reason as unworded text
  const Activity = ui.s.deps.db.models.Activity;
  const gw = { severity: 'warning', source: 'gateways', event_type: 'gateway_offline', user_id: null, ip: null, created_at: Date.now() };
  const before = { peer_id: 990_002, name: 'Keller', from: 'online', to: 'offline', last_seen_at: null, at: Date.now() };
  await Activity.create({
    ...gw,
    message: 'Gateway "Keller" is offline (was online): no heartbeat for 95 s (offline after 90 s)',
    code: null,
    params: null,
    details: JSON.stringify({ ...before, reason: 'no heartbeat for 95 s (offline after 90 s)' }),
  });
  await Activity.create({
    ...gw,
    message: 'Gateway "Keller" is offline (was online): switched off by hand',
    code: 'gateway.status_changed',
    params: JSON.stringify({ name: 'Keller', to: 'offline', from: 'online', reason: { code: 'field.unworded', params: { text: 'switched off by hand' } } }),
    details: JSON.stringify({ ...before, reason: 'switched off by hand' }),
  });

  const de = await pageIn('de');
  await de.page.goto(`${ui.s.url}/logs`);
  await settled(de.page);
  const log = de.page.locator('td.log-msg');
  await log.filter({ hasText: 'RDP-Route "Buchhaltung" ist nicht erreichbar (intern: intern: Verbindung abgelehnt)' }).first().waitFor();
  await log.filter({ hasText: 'seit 95 s kein Heartbeat (offline nach 90 s)' }).first().waitFor();
  await log.filter({ hasText: 'Grund nicht erfasst (gespeichert: switched off by hand)' }).first().waitFor();
  const texts = await log.allTextContents();
  assert.ok(!texts.some((x) => /connection refused|no heartbeat|\(internal/.test(x)), `English in the German log: ${texts.join(' | ')}`);
  assert.deepEqual(de.problems, []);
  await de.context.close();

  const en = await pageIn('en');
  await en.page.goto(`${ui.s.url}/logs`);
  await settled(en.page);
  await en.page.locator('td.log-msg').filter({ hasText: 'RDP route "Buchhaltung" is unreachable (internal: internal: connection refused)' }).first().waitFor();
  await en.page.locator('td.log-msg').filter({ hasText: 'no heartbeat for 95 s (offline after 90 s)' }).first().waitFor();
  await en.context.close();
});
