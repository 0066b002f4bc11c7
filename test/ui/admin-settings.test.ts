// Browser tests of the settings and operations screens (security, SMTP, logs, system) through the
// UI alone; the API checks what the server stored and seeds (failed sign-ins, activity rows). The
// SMTP test mail goes to a real smtp-server started here.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { startSmtp, type SmtpSink } from '../../sidecar/test/route-auth-helpers.js';
import { accessLogFile } from '../../sidecar/src/proxy/fragments/access-log.js';
import fs from 'node:fs';
import { adminPage, axe, screenshot, serious, settled, uiServer } from '../lib/browser.js';
import type { Locked } from '../../sidecar/test/lib/protocol.js';

const ui = uiServer({ GATEHOUSE_RATE_LIMIT_LOGIN: '1000' });
let smtp: SmtpSink;
before(async () => {
  smtp = await startSmtp({ user: 'mailer', password: 'mail-secret-1' });
});
after(async () => {
  await smtp?.close();
});

const apiGet = async <P extends string>(p: P) => (await ui.api<never, P, 'GET'>(p)).data;
const apiSend = (method: string, p: string, json?: unknown) => ui.api(p, method, json);
const signInApi = (username: string, password: string) =>
  ui.s.req('/login', { method: 'POST', json: { username, password }, headers: { accept: 'application/json' } });

async function noSerious(page: Page, what: string): Promise<void> {
  assert.deepEqual(serious(await axe(page)), [], `axe: ${what}`);
}

test('security: lockout settings saved; an account locked by failed sign-ins is unlocked from the UI', async () => {
  const { page, problems, context } = await adminPage(ui.browser, ui.s.url);
  await page.goto(`${ui.s.url}/settings/security`);
  await page.waitForSelector('#f-lockout-max_attempts');
  await settled(page);
  await page.waitForSelector('text=No account is locked');
  await page.fill('#f-lockout-max_attempts', '3');
  await page.fill('#f-lockout-duration', '7');
  await page.click('main button[type=submit]');
  await page.waitForSelector('text=Lockout settings saved');
  assert.deepEqual((await apiGet('/settings/security')).lockout, { max_attempts: 3, duration: 7 });

  assert.equal((await apiSend('POST', '/users', { username: 'bob', password: 'bob-password-1', role: 'user' })).status, 201);
  for (let i = 0; i < 3; i++) await signInApi('bob', 'wrong-password');
  assert.ok(
    (await apiGet('/users/locked')).locked.some((l: Locked) => l.identifier === 'bob'),
    'bob is locked',
  );
  assert.notEqual((await signInApi('bob', 'bob-password-1')).status, 200, 'locked: even the right password is refused');

  // The locked account shows up live (its activity row arrives over the event stream).
  await page.waitForSelector('td >> text=bob', { timeout: 10_000 });
  await screenshot(page, 'en-1280-security-locked');
  await noSerious(page, 'security with a locked account');
  await page.click('button[aria-label="Unlock: bob"]');
  await page.waitForSelector('text=No account is locked');
  assert.equal((await apiGet('/users/locked')).locked.length, 0);
  assert.equal((await signInApi('bob', 'bob-password-1')).status, 200, 'unlocked: bob signs in');
  assert.deepEqual(problems, []);
  await context.close();
});

test('SMTP: settings saved (the password never shown back) and a test mail arrives at a real SMTP server', async () => {
  const { page, problems, context } = await adminPage(ui.browser, ui.s.url);
  await page.goto(`${ui.s.url}/settings/smtp`);
  await page.waitForSelector('#f-host');
  await settled(page);
  await page.waitForSelector('text=No mail server is set up yet');
  await page.fill('#f-host', '127.0.0.1');
  await page.fill('#f-port', String(smtp.port));
  await page.fill('#f-user', 'mailer');
  await page.fill('#f-password', 'mail-secret-1');
  await page.fill('#f-from', 'Gatehouse <gatehouse@example.com>');
  await page.click('form:has(#f-host) button[type=submit]');
  await page.waitForSelector('text=SMTP settings saved');
  const stored = (await apiGet('/smtp')).smtp;
  assert.deepEqual(stored, {
    configured: true,
    host: '127.0.0.1',
    port: smtp.port,
    secure: false,
    user: 'mailer',
    password_set: true,
    from: 'Gatehouse <gatehouse@example.com>',
  });
  await page.waitForSelector('text=A password is stored.');
  assert.equal(await page.inputValue('#f-password'), '', 'the password is never shown back');

  await page.fill('#f-to', 'ops@example.com');
  await page.click('text=Send test mail');
  const mail = await smtp.waitFor(1, 15_000);
  assert.deepEqual(mail.to, ['ops@example.com']);
  assert.equal(mail.user, 'mailer', 'signed in with the saved password');
  assert.match(mail.raw, /Subject: Gatehouse: SMTP test/);
  await page.waitForSelector('text=Test mail sent to ops@example.com');
  await screenshot(page, 'en-1280-smtp-configured');
  await noSerious(page, 'smtp');
  assert.deepEqual(problems, []);
  await context.close();
});

test('logs: filter the activity log by event type, export what the filter shows, new rows appear live; access log tab', async () => {
  // Seed rows of two kinds.
  await apiSend('PUT', '/settings/security', { lockout: { max_attempts: 5 } });
  await apiSend('PUT', '/settings/default-theme', { theme: 'default' });
  const { page, problems, context } = await adminPage(ui.browser, ui.s.url);
  await page.goto(`${ui.s.url}/logs`);
  await page.waitForSelector('#f-event_type');
  await settled(page);
  await page.fill('#f-event_type', 'settings_changed');
  await page.click('text=Apply');
  await page.waitForURL(/event_type=settings_changed/);
  await settled(page);
  const types = await page.$$eval('tbody td[data-label="Event type"]', (tds) => tds.map((td) => td.textContent));
  assert.ok(types.length >= 2, `rows: ${types.length}`);
  assert.ok(
    types.every((x) => x === 'settings_changed'),
    JSON.stringify(types),
  );
  const total = (await apiGet('/logs/activity?event_type=settings_changed')).total;
  assert.equal(types.length, Math.min(total, 50));

  const csvHref = await page.getAttribute('a[aria-label="Export activity log as CSV"]', 'href');
  assert.match(csvHref!, /event_type=settings_changed/);
  const csv = await page.evaluate(async (h) => (await fetch(h!)).text(), csvHref);
  const lines = csv.trim().split('\n');
  assert.match(lines[0], /^id,created_at,severity,source,event_type,message/);
  assert.equal(lines.length - 1, total, 'the export holds what the filter shows');
  assert.ok(lines.slice(1).every((l) => l.includes(',settings_changed,')));
  const json = JSON.parse(
    await page.evaluate(async (h) => (await fetch(h!)).text(), (await page.getAttribute('a[aria-label="Export activity log as JSON"]', 'href'))!),
  );
  assert.equal(json.length, total);

  // A new matching row arrives over the event stream while the page is open.
  await apiSend('PUT', '/settings/security', { lockout: { duration: 9 } });
  await page.waitForFunction((n) => document.querySelectorAll('tbody td[data-label="Event type"]').length === n, Math.min(total + 1, 50), { timeout: 10_000 });
  assert.ok(await page.isVisible('tbody tr:first-child >> text=new'), 'the live row is marked new');
  // A non-matching row does not show up under the filter.
  await apiSend('POST', '/settings/clear-logs');
  await page.waitForTimeout(800); // not a condition: proves the row does not show up
  assert.ok(!(await page.isVisible('td >> text=logs_cleared')));
  await screenshot(page, 'en-1280-logs-filtered');
  await noSerious(page, 'logs filtered');

  await page.click('#tab-access');
  await page.waitForURL(/tab=access/);
  await settled(page);
  await page.waitForSelector('text=No requests logged yet');
  // Requests as Caddy logs them (the access log the sidecar ingests), then the status filter.
  const accessLine = (uri: string, status: number, i: number) =>
    JSON.stringify({
      level: 'info',
      ts: 1764000000 + i,
      logger: 'http.log.access.gatehouse',
      msg: 'handled request',
      request: { remote_ip: '127.0.0.1', client_ip: '192.0.2.9', proto: 'HTTP/1.1', method: 'GET', host: 'app.example.com', uri, headers: {} },
      bytes_read: 0,
      duration: 0.01,
      size: 10,
      status,
    }) + '\n';
  fs.appendFileSync(accessLogFile(ui.s.dataDir), accessLine('/fine', 200, 1) + accessLine('/gone', 404, 2) + accessLine('/also-fine', 200, 3));
  await page.fill('#f-status', '404');
  await page.click('main form.filters button[type=submit]');
  await page.waitForURL(/status=404/);
  await page.waitForSelector('td >> text=/gone');
  assert.deepEqual(await page.$$eval('tbody td[data-label="Path"]', (tds) => tds.map((td) => td.textContent)), ['/gone']);
  const accCsv = await page.evaluate(async (h) => (await fetch(h!)).text(), (await page.getAttribute('a[aria-label="Export access log as CSV"]', 'href'))!);
  assert.equal(accCsv.trim().split('\n').length, 2, 'header and the one filtered request');
  assert.match(accCsv, /\/gone/);
  await screenshot(page, 'en-1280-logs-access-filtered');
  await noSerious(page, 'access log');
  assert.deepEqual(problems, []);
  await context.close();
});

test('system: WireGuard and Caddy shown as not managed on this server, restart disabled, reload reports its result; the cluster panel shows this node alone as leader', async () => {
  const { page, problems, context } = await adminPage(ui.browser, ui.s.url);
  await page.goto(`${ui.s.url}/system`);
  await page.waitForSelector('text=Reload configuration');
  await settled(page);
  const text = (await page.textContent('main'))!;
  assert.match(text, /GATEHOUSE_WG_MANAGE=false/);
  assert.match(text, /GATEHOUSE_MANAGE_CADDY=false/);
  assert.equal((await page.$$('text=not managed here')).length, 2);
  assert.equal(await page.isDisabled('text=Restart WireGuard'), true);
  const version = (await apiGet('/settings/app')).app.version;
  assert.ok(text.includes(version));
  // the cluster panel: cluster mode off, this node alone and its own leader
  assert.match(text, /Cluster mode is off/);
  const nodes = await page.$$eval('[data-testid=cluster-node]', (rows) => rows.map((r) => [r.getAttribute('data-role') ?? '', r.textContent ?? '']));
  assert.equal(nodes.length, 1);
  assert.equal(nodes[0][0], 'leader');
  assert.match(nodes[0][1], /this node/);
  const before = (await apiGet('/logs/activity?event_type=proxy_reloaded')).total;
  await page.click('text=Reload configuration');
  await page.waitForSelector('[role=status] >> text=Configuration rendered');
  assert.equal((await apiGet('/logs/activity?event_type=proxy_reloaded')).total, before + 1, 'the reload happened on the server');
  await screenshot(page, 'en-1280-system-reloaded');
  await noSerious(page, 'system');
  assert.deepEqual(problems, []);
  await context.close();
});
