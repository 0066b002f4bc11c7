// GET /api-docs: the browsable API reference, Swagger UI served from node_modules under
// its own Content-Security-Policy, for signed-in users only; its assets under content-hashed names
// with long cache headers; and, in Debian's Chromium, the viewer renders the sidecar's document with
// no CSP violation and "Try it out" writes carry the session's CSRF token.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { startTestServer, login, type TestServer } from './lib/server.js';
import { assertGolden, goldenDir } from './lib/golden.js';
import { API_DOCS_CSP, renderApiDocsPage, swaggerUiDir } from '../src/web/api-docs.js';
import { CHROMIUM, openBrowser, watchedPage } from '../../test/lib/browser.js';
import { openApiDocument } from './lib/openapi.js';

let s: TestServer;
before(async () => {
  s = await startTestServer();
});
after(async () => s.close());

const html = { accept: 'text/html' };
const assetUrls = (page: string) => [...page.matchAll(/(?:src|href)="(\/api-docs\/assets\/[^"]+)"/g)].map((m) => m[1]);

test('GET /api-docs signed out goes to the login page, which comes back to it', async () => {
  const res = await s.req('/api-docs', { headers: html });
  assert.equal(res.status, 302);
  assert.equal(res.headers.get('location'), '/login?next=%2Fapi-docs');
});

test('GET /api-docs signed in: the page with its CSP, no inline script, the create-token shortcut and the way back', async () => {
  const { cookie } = await login(s);
  const res = await s.req('/api-docs', { headers: { ...html, cookie } });
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type')!, /^text\/html/);
  assert.equal(res.headers.get('content-security-policy'), API_DOCS_CSP);
  assert.equal(
    API_DOCS_CSP,
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  );
  const page = res.data as string;
  const scripts = [...page.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)];
  assert.equal(scripts.length, 2);
  for (const [, attrs, body] of scripts) {
    assert.match(attrs, /src="\/api-docs\/assets\//, 'every script is a file of this origin');
    assert.equal(body, '', 'no inline script');
  }
  assert.doesNotMatch(page, /<style|style="|https?:\/\//, 'no inline style, no remote origin');
  assert.match(page, /<a class="gh-btn" href="\/tokens\?new=1">Create token<\/a>/);
  assert.match(page, /<a href="\/">← Gatehouse<\/a>/);
  // in the user's language
  const { csrf } = await login(s);
  const h = { cookie, 'x-csrf-token': (await s.req('/api/v1/csrf', { headers: { cookie } })).data.csrfToken as string };
  assert.ok(csrf);
  assert.equal((await s.req('/api/v1/settings/language', { method: 'POST', json: { language: 'de' }, headers: h })).status, 200);
  const de = await s.req<string>('/api-docs', { headers: { ...html, cookie } });
  assert.match(de.data, /<html lang="de">[\s\S]*Token erstellen/);
  assert.equal((await s.req('/api/v1/settings/language', { method: 'POST', json: { language: 'en' }, headers: h })).status, 200);
});

test('the viewer assets: served from node_modules, hashed names, immutable for a year, gzip, ETag, 404 for others', async () => {
  const { cookie } = await login(s);
  const page = (await s.req('/api-docs', { headers: { ...html, cookie } })).data as string;
  const urls = assetUrls(page);
  assert.equal(urls.length, 5, urls.join(' '));
  const bundleUrl = urls.find((u) => /swagger-ui-bundle\.[0-9a-f]{12}\.js$/.test(u))!;
  assert.ok(bundleUrl);
  const dir = swaggerUiDir();
  // plain: byte for byte the package's file (fetch does not decompress with accept-encoding: identity)
  const plain = await fetch(s.url + bundleUrl, { headers: { 'accept-encoding': 'identity' } });
  assert.equal(plain.status, 200);
  assert.match(plain.headers.get('content-type')!, /^text\/javascript/);
  assert.equal(plain.headers.get('cache-control'), 'public, max-age=31536000, immutable');
  assert.equal(plain.headers.get('x-content-type-options'), 'nosniff');
  assert.equal(plain.headers.get('content-encoding'), null);
  assert.ok(Buffer.from(await plain.arrayBuffer()).equals(fs.readFileSync(path.join(dir, 'swagger-ui-bundle.js'))));
  // gzip when accepted (node's http keeps the body as sent)
  const gz = await new Promise<{ headers: Record<string, string | string[] | undefined>; body: Buffer }>((resolve, reject) => {
    import('node:http').then(
      ({ get }) =>
        get(s.url + bundleUrl, { headers: { 'accept-encoding': 'gzip' } }, (r) => {
          const chunks: Buffer[] = [];
          r.on('data', (c: Buffer) => chunks.push(c));
          r.on('end', () => resolve({ headers: r.headers, body: Buffer.concat(chunks) }));
        }).on('error', reject),
      reject,
    );
  });
  assert.equal(gz.headers['content-encoding'], 'gzip');
  assert.ok(gz.body.length < fs.statSync(path.join(dir, 'swagger-ui-bundle.js')).size / 2);
  assert.ok(zlib.gunzipSync(gz.body).equals(fs.readFileSync(path.join(dir, 'swagger-ui-bundle.js'))));
  const etag = plain.headers.get('etag')!;
  assert.equal((await fetch(s.url + bundleUrl, { headers: { 'if-none-match': etag } })).status, 304);
  // every linked asset is there, no session needed (static library files)
  for (const u of urls) {
    const r = await fetch(s.url + u);
    assert.equal(r.status, 200, u);
    assert.equal(r.headers.get('cache-control'), 'public, max-age=31536000, immutable');
  }
  const css = await fetch(s.url + urls.find((u) => /\/swagger-ui\.[0-9a-f]{12}\.css$/.test(u))!);
  assert.match(css.headers.get('content-type')!, /^text\/css/);
  for (const bad of ['/api-docs/assets/swagger-ui-bundle.js', '/api-docs/assets/swagger-ui-bundle.000000000000.js', '/api-docs/assets/']) {
    const r = await s.req(bad);
    assert.equal(r.status, 404, bad);
    assert.match(r.headers.get('content-type')!, /^text\/plain/, bad);
  }
});

test('a user who must change a generated password is sent to /password first', async () => {
  const { cookie, csrf } = await login(s);
  const created = await s.req('/api/v1/users', {
    method: 'POST',
    json: { username: 'docsreader', password: 'docs-password-1', role: 'user' },
    headers: { cookie, 'x-csrf-token': csrf },
  });
  assert.equal(created.status, 201);
  const pw = await s.deps.users.resetPassword(created.data.user.id, undefined);
  const u = await login(s, { username: 'docsreader', password: pw });
  const res = await s.req('/api-docs', { headers: { ...html, cookie: u.cookie } });
  assert.equal(res.status, 302);
  assert.equal(res.headers.get('location'), '/password?next=%2Fapi-docs');
});

test('the API reference page renders the same (golden, en and de)', () => {
  const assets = {
    css: '/api-docs/assets/swagger-ui.aaaaaaaaaaaa.css',
    pageCss: '/api-docs/assets/page.bbbbbbbbbbbb.css',
    bundle: '/api-docs/assets/swagger-ui-bundle.cccccccccccc.js',
    init: '/api-docs/assets/init.dddddddddddd.js',
    icon: '/api-docs/assets/favicon.eeeeeeeeeeee.png',
  };
  assertGolden(path.join(goldenDir('pages'), 'api-docs-en.html'), renderApiDocsPage('en', assets));
  assertGolden(path.join(goldenDir('pages'), 'api-docs-de.html'), renderApiDocsPage('de', assets));
});

test(
  'in Chromium: the viewer renders the document under the CSP with no console error, and "Try it out" sends the CSRF token',
  { skip: fs.existsSync(CHROMIUM) ? false : `${CHROMIUM} is not installed (scripts/setup.sh with SETUP_TEST=1 installs it)` },
  async () => {
    const { cookie } = await login(s);
    const browser = await openBrowser();
    try {
      const { page, problems } = await watchedPage(browser, { warnings: true, session: { url: s.url, cookie } });
      await page.goto(`${s.url}/api-docs`);
      // every section of the document is listed (collapsed), and each, opened, lists all its operations
      const doc = openApiDocument((await s.req('/api/v1/openapi.json', { headers: { cookie } })).data);
      const perTag = new Map<string, number>();
      for (const ops of Object.values(doc.paths))
        for (const op of Object.values(ops)) for (const t of op.tags ?? ['default']) perTag.set(t, (perTag.get(t) ?? 0) + 1);
      await page.locator('.opblock-tag').first().waitFor({ timeout: 30_000 });
      await page.waitForFunction((n) => document.querySelectorAll('.opblock-tag').length === n, perTag.size, { timeout: 30_000 });
      // one section open at a time, as a reader browses (Swagger UI stops rendering operations once a
      // few hundred blocks are open together, which is why the sections start collapsed)
      for (const [tag, n] of perTag) {
        const header = page.locator(`.opblock-tag[data-tag="${tag}"]`);
        await header.click();
        await page
          .waitForFunction(([t, want]) => document.querySelectorAll(`[id^="operations-${t}-"]`).length >= (want as number), [tag, n] as const, {
            timeout: 15_000,
          })
          .catch(() => undefined);
        assert.equal(await page.locator(`[id^="operations-${tag}-"]`).count(), n, `section ${tag} lists its ${n} operations`);
        if (tag !== 'peers') await header.click();
      }
      assert.equal(await page.locator('a.gh-btn').getAttribute('href'), '/tokens?new=1');
      // a write through "Try it out": POST /api/v1/tags with the session cookie and the CSRF token
      const op = page.locator('#operations-peers-postApiV1Tags');
      await op.locator('.opblock-summary').click();
      await op.getByRole('button', { name: 'Try it out' }).click();
      await op.locator('textarea.body-param__text').fill(JSON.stringify({ name: 'from-api-docs' }));
      const answer = page.waitForResponse((r) => r.url().endsWith('/api/v1/tags') && r.request().method() === 'POST');
      await op.getByRole('button', { name: 'Execute' }).click();
      const r = await answer;
      assert.equal(r.status(), 201, await r.text());
      assert.ok(r.request().headers()['x-csrf-token'], 'the CSRF header was sent');
      assert.deepEqual(problems, [], 'no console error, CSP violation or failed request');
    } finally {
      await browser.close();
    }
  },
);
