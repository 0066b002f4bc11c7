// Every admin form in a real browser: submitted empty, or with bad and taken values, it shows every
// error at once, each at its own input (aria-invalid, the message below it, none left over in the
// banner's list), in the reader's language, and nothing is written. The route form has its own test
// (routes.test.ts). Screenshots of two forms with their errors (en/de, 1280/390, light/dark).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { adminPage, screenshot, settled, uiServer } from '../lib/browser.js';

const ui = uiServer({ GATEHOUSE_RATE_LIMIT_LOGIN: '1000', GATEHOUSE_RATE_LIMIT_ADMIN: '100000' });
const api = ui.api;

ui.setup(async () => {
  for (const [p, body] of [
    ['/peers', { name: 'taken-peer' }],
    ['/peer-groups', { name: 'Taken group' }],
    ['/users', { username: 'taken-user', password: 'password-long-1', role: 'user' }],
  ] as const) {
    const r = await api(p, 'POST', body);
    assert.equal(r.status, 201, `${p}: ${JSON.stringify(r.data)}`);
  }
  const peer = (await api('/peers?limit=1000')).data.peers[0];
  const route = await api('/routes', 'POST', { domain: 'forms.example.com', peer_id: peer.id, target_port: 8080 });
  assert.equal(route.status, 201, JSON.stringify(route.data));
  routeId = route.data.route.id;
});
let routeId = 0;

/** How much of each kind is stored: a refused form changes none of it. */
async function stored(): Promise<Record<string, unknown>> {
  const get = async <P extends string>(p: P) => (await api<never, P, 'GET'>(p)).data;
  const [peers, groups, users, tokens, webhooks, rdp, jobs, smtp, network, profile] = await Promise.all([
    get('/peers?limit=1000'),
    get('/peer-groups'),
    get('/users'),
    get('/tokens'),
    get('/webhooks'),
    get('/rdp'),
    get('/settings/autobackup'),
    get('/smtp'),
    get('/settings/network'),
    get('/settings/profile'),
  ]);
  return {
    peers: peers.total_all,
    groups: groups.groups.length,
    users: users.users.length,
    tokens: tokens.tokens.length,
    webhooks: webhooks.webhooks.length,
    rdp: rdp.routes.length,
    routeAuth: routeId ? (await api(`/routes/${routeId}/auth`)).status : null,
    jobs: jobs.jobs.length,
    smtp: smtp.smtp,
    network: network.network,
    profile: profile.profile,
  };
}

interface FormCase {
  name: string;
  path: string;
  /** opens the form (a dialog's button) */
  open?: (page: Page) => Promise<void>;
  /** where the form is: its submit button and its errors are looked for in there */
  scope: string;
  /** the values typed before submitting (empty form when none) */
  fill?: (page: Page) => Promise<void>;
  /** every field that must show its error, with the words (en) */
  expect: Record<string, RegExp>;
}

/** Opens a dialog with the page header's button (named in English or German). */
const dialogButton = (en: string, de: string) => async (page: Page) => {
  await page.locator(`.page-header button:has-text("${en}"), .page-header button:has-text("${de}")`).first().click();
  await page.locator('dialog[open] form').waitFor();
};

const CASES: FormCase[] = [
  {
    name: 'peer',
    path: '/peers',
    open: dialogButton('Add peer', 'Peer hinzufügen'),
    scope: 'dialog[open]',
    fill: async (page) => {
      await page.fill('#f-name', 'TAKEN-PEER');
      await page.fill('#f-dns', 'not a dns list!!');
    },
    expect: { name: /a peer with this name already exists/, dns: /comma-separated IP addresses/ },
  },
  {
    name: 'peer group',
    path: '/groups',
    open: dialogButton('Add group', 'Add group'),
    scope: 'dialog[open]',
    fill: async (page) => {
      await page.fill('#f-name', 'taken GROUP');
      await page.fill('#f-color', 'blue');
    },
    expect: { name: /already exists/, color: /hex colour/ },
  },
  { name: 'tag', path: '/tags', open: dialogButton('Add tag', 'Add tag'), scope: 'dialog[open]', expect: { name: /must not be empty|required/ } },
  {
    name: 'user',
    path: '/users',
    open: dialogButton('Create user', 'Benutzer anlegen'),
    scope: 'dialog[open]',
    fill: async (page) => {
      await page.fill('#f-username', 'Taken-User');
      await page.fill('#f-email', 'nope');
      await page.fill('#f-password', 'short');
    },
    expect: { username: /already in use/, email: /must be an email address/, password: /at least 8 characters/ },
  },
  {
    name: 'token',
    path: '/tokens',
    open: dialogButton('Create token', 'Create token'),
    scope: 'dialog[open]',
    expect: { name: /required/, scopes: /at least one scope/ },
  },
  {
    name: 'webhook',
    path: '/webhooks',
    open: dialogButton('Add webhook', 'Add webhook'),
    scope: 'dialog[open]',
    expect: { name: /required/, url: /required/, secret: /at least 16 characters/, events: /at least one event/ },
  },
  {
    name: 'gateway',
    path: '/gateways',
    open: dialogButton('Add gateway', 'Add gateway'),
    scope: 'dialog[open]',
    fill: async (page) => {
      await page.fill('#f-name', 'taken-peer');
      await page.fill('#f-api_port', '70000');
    },
    expect: { name: /already exists/, api_port: /65535/ },
  },
  {
    name: 'RDP route',
    path: '/rdp/new',
    scope: 'form.rdp-form',
    fill: async (page) => page.fill('#f-target_port', ''),
    // the peer chosen from the list is the target the server calls target_host: its error is at the list
    expect: { name: /required/, target_peer_id: /target|required/, target_port: /port from 1 to 65535/ },
  },
  {
    name: 'backup job',
    path: '/settings/backup',
    open: async (page) => {
      await page.locator('button:has-text("Create job")').first().click();
      await page.locator('#f-schedule').waitFor();
    },
    scope: 'form:has(#f-schedule)',
    fill: async (page) => {
      await page.fill('#f-schedule', '');
      await page.fill('#f-keep', '');
    },
    expect: { name: /required/, schedule: /required/, keep: /required/, passphrase: /at least 12 characters/ },
  },
  {
    name: 'SMTP',
    path: '/settings/smtp',
    scope: 'form:has(#f-host)',
    fill: (page) => page.fill('#f-port', ''),
    expect: { host: /host name or IP address/, port: /required/, from: /email address/ },
  },
  {
    name: 'network',
    path: '/settings/network',
    scope: 'form:has(#f-public_host)',
    fill: async (page) => {
      await page.fill('#f-public_host', 'not a host!!');
      await page.fill('#f-public_ip', '300.1.1.1');
    },
    expect: { public_host: /DNS name or an IP address/, public_ip: /IPv4/ },
  },
  {
    name: 'profile',
    path: '/profile',
    scope: 'form:has(#f-username)',
    fill: async (page) => {
      await page.fill('#f-username', 'taken-user');
      await page.fill('#f-email', 'nope');
    },
    expect: { username: /already in use/, email: /must be an email address/ },
  },
  {
    name: 'own password',
    path: '/profile',
    scope: 'form:has(#f-next)',
    fill: async (page) => {
      await page.fill('#f-current', 'not-the-password');
      await page.fill('#f-next', 'short');
    },
    expect: { current: /does not match/, next: /at least 8 characters/ },
  },
  {
    name: 'sign-in lockout',
    path: '/settings/security',
    scope: 'form:has(#f-lockout-max_attempts)',
    fill: async (page) => {
      await page.fill('#f-lockout-max_attempts', '');
      await page.fill('#f-lockout-duration', '');
    },
    expect: { 'lockout-max_attempts': /required/, 'lockout-duration': /required/ },
  },
  {
    name: 'route login',
    path: '/routes/:id/auth',
    scope: 'form:has(#f-primary_color)',
    fill: async (page) => {
      await page.fill('#f-email', 'nope');
      await page.fill('#f-primary_color', 'red');
    },
    expect: { email: /must be an email address/, primary_color: /colour/ },
  },
  { name: 'licence', path: '/licence', scope: 'form:has(#f-key)', fill: (page) => page.fill('#f-key', 'garbage'), expect: { key: /licence key/ } },
];

/** Opens the form, fills it, submits once and returns the error shown at each field (by input id without "f-"). */
async function submitOnce(page: Page, c: FormCase): Promise<Record<string, string>> {
  await page.goto(`${ui.s.url}${c.path.replace(':id', String(routeId))}`);
  await settled(page);
  await c.open?.(page);
  await c.fill?.(page);
  const form = page.locator(c.scope).first();
  await form.locator('button[type=submit]').first().click();
  await form.locator('.field-error').first().waitFor({ timeout: 10_000 });
  await settled(page);
  const shown: Record<string, string> = {};
  for (const el of await form.locator('.field-error[id$="-err"]').all()) {
    const id = (await el.getAttribute('id'))!.replace(/^f-/, '').replace(/-err$/, '');
    shown[id] = (await el.textContent())!.trim();
    // the input is marked invalid (a group of checkboxes: described by the error)
    const input = page.locator(`#f-${id}`);
    const marked = (await input.getAttribute('aria-invalid')) === 'true' || ((await input.getAttribute('aria-describedby')) ?? '').includes(`f-${id}-err`);
    assert.ok(marked, `${c.name}: ${id} is marked invalid`);
  }
  // no field's error is left to the banner's list of fields without an input
  assert.equal(await form.locator('.banner.error li').count(), 0, `${c.name}: ${await form.locator('.banner.error').textContent()}`);
  return shown;
}

test('every form shows all its errors at once, each at its field, and writes nothing', async () => {
  const w = await adminPage(ui.browser, ui.s.url, { lang: 'en' });
  for (const s of [400, 409, 422]) w.allowHttpError('/api/v1/', s);
  const before = await stored();
  for (const c of CASES) {
    const shown = await submitOnce(w.page, c);
    assert.deepEqual(Object.keys(shown).sort(), Object.keys(c.expect).sort(), `${c.name}: ${JSON.stringify(shown)}`);
    for (const [field, words] of Object.entries(c.expect)) assert.match(shown[field], words, `${c.name}: ${field}`);
  }
  assert.deepEqual(await stored(), before, 'nothing written by any refused form');
  // choosing the peer the error stood at drops it (it was the server's target_host)
  const rdp = CASES.find((c) => c.name === 'RDP route')!;
  await submitOnce(w.page, rdp);
  const peer = (await api('/peers?limit=1000')).data.peers.find((p: { name: string }) => p.name === 'taken-peer');
  await w.page.selectOption('#f-target_peer_id', String(peer!.id));
  await w.page.locator('#f-target_peer_id-err').waitFor({ state: 'detached' });
  assert.equal(await w.page.getAttribute('#f-target_peer_id', 'aria-invalid'), null);
  assert.ok(await w.page.isVisible('#f-name-err'), 'the other errors stay until the next submit');
  assert.deepEqual(w.problems, []);
  await w.context.close();
});

test('in German: the same errors in German words; screenshots at 1280 and 390 px, light and dark', async () => {
  const { cookie, csrf } = await ui.login();
  const setLanguage = (language: 'en' | 'de') =>
    ui.s.req('/api/v1/settings/language', { method: 'POST', json: { language }, headers: { cookie, 'x-csrf-token': csrf } });
  try {
    for (const [lang, width, colorScheme] of [
      ['de', 1280, 'light'],
      ['de', 390, 'dark'],
      ['en', 390, 'light'],
      ['en', 1280, 'dark'],
    ] as const) {
      await setLanguage(lang);
      const w = await adminPage(ui.browser, ui.s.url, { lang, width, colorScheme });
      for (const s of [400, 409, 422]) w.allowHttpError('/api/v1/', s);
      for (const name of ['peer', 'user']) {
        const c = CASES.find((x) => x.name === name)!;
        const shown = await submitOnce(w.page, c);
        assert.deepEqual(Object.keys(shown).sort(), Object.keys(c.expect).sort(), `${lang} ${c.name}: ${JSON.stringify(shown)}`);
        if (lang === 'de') {
          for (const [field, words] of Object.entries(c.expect)) assert.doesNotMatch(shown[field], words, `${c.name}: ${field} is not in English`);
          if (name === 'peer') assert.match(shown.name, /ein Peer mit diesem Namen existiert bereits/);
          else assert.deepEqual([shown.username, shown.password], ['bereits vergeben', 'mindestens 8 Zeichen']);
        }
        await screenshot(w.page, `${lang}-${width}-${colorScheme}-forms-${name}-errors`);
      }
      assert.deepEqual(w.problems, [], `${lang} ${width}`);
      await w.context.close();
    }
  } finally {
    await setLanguage('en');
  }
});
