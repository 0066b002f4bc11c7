// Admin preview of the route-auth login page (GET /routes/:id/auth/preview) and the stored branding
// images for the admin (GET /routes/:id/branding/{logo,bg-image}): what the admin UI frames.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, apiToken, bearer, type TestServer } from './lib/server.js';
import { createRoute } from './route-auth-helpers.js';
import { SESSION_DURATIONS } from '../src/route-auth/schema.js';
import type { Refusal } from './lib/api-types.js';

let s: TestServer;
let h: Record<string, string>;
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');
const H24 = SESSION_DURATIONS['24h'];

before(async () => {
  s = await startTestServer({ GATEHOUSE_RATE_LIMIT_ADMIN: '100000' });
  h = bearer(await apiToken(s));
});
after(async () => {
  await s.close();
});

const preview = (id: number, q = '', headers: Record<string, string> = {}) =>
  s.req<Refusal>(`/api/v1/routes/${id}/auth/preview${q}`, { headers: { ...h, ...headers } });

test('preview before any configuration: the page with unsaved branding, framable by the admin app only, forms cannot submit', async () => {
  const r = await createRoute(s);
  const res = await preview(r.id, '?lang=de&title=Willkommen%20%3Cb%3E&primary_color=%23112233&bg_color=%23ABCDEF&description=Nur%20f%C3%BCr%20Mitarbeiter');
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type')!, /^text\/html/);
  const csp = res.headers.get('content-security-policy')!;
  assert.match(csp, /frame-ancestors 'self'/);
  assert.match(csp, /form-action 'none'/);
  assert.doesNotMatch(csp, /unsafe-inline/);
  assert.equal(res.headers.get('x-frame-options'), 'SAMEORIGIN');
  assert.equal(res.headers.get('cache-control'), 'no-store');
  const html = String(res.data);
  assert.match(html, /<html lang="de">/);
  assert.match(html, /<h1>Willkommen &lt;b&gt;<\/h1>/, 'title escaped');
  assert.match(html, /Nur für Mitarbeiter/);
  assert.match(html, /--primary:#112233;--bg:#abcdef/);
  assert.match(html, new RegExp(`<p class="domain">${r.domain.replace(/\./g, '\\.')}</p>`));
  assert.match(html, /name="password"/, 'email_password: the password step');
  assert.doesNotMatch(html, /<img class="logo"/);
  // the nonce of the style element is the one the CSP allows
  const nonce = /nonce="([^"]+)"/.exec(html)![1];
  assert.ok(csp.includes(`'nonce-${nonce}'`));
  // the method decides the first step
  assert.match(String((await preview(r.id, '?method=totp')).data), /name="step" value="totp"/);
  assert.match(String((await preview(r.id, '?method=email_code')).data), /name="step" value="send_code"/);
  assert.match(String((await preview(r.id, '?step=code_totp&lang=en')).data), /authenticator app/);
  // no autofocus in any step: inside the admin screen's frame it would scroll the admin page down to the frame
  for (const q of ['', '?method=totp', '?method=email_code', '?step=code_totp', '?step=code_email'])
    assert.doesNotMatch(String((await preview(r.id, q)).data), /autofocus/, `preview${q}`);
  // the language follows Accept-Language without lang
  assert.match(String((await preview(r.id, '', { 'accept-language': 'de-DE' })).data), /<html lang="de">/);
});

test('preview: stored values unless overridden (empty clears), stored images from the admin API; bad input 400 with fields; unknown route 404', async () => {
  const r = await createRoute(s);
  const saved = await s.req(`/api/v1/routes/${r.id}/auth`, {
    method: 'POST',
    headers: h,
    json: { method: 'totp', email: 'o@example.test', session_max_age: H24, title: 'Stored title', primary_color: '#223344' },
  });
  assert.equal(saved.status, 200, JSON.stringify(saved.data));
  let html = String((await preview(r.id, '?lang=en')).data);
  assert.match(html, /<h1>Stored title<\/h1>/);
  assert.match(html, /--primary:#223344/);
  assert.match(html, /name="step" value="totp"/, 'stored method');
  html = String((await preview(r.id, '?title=&primary_color=')).data);
  assert.doesNotMatch(html, /Stored title/, 'empty clears in the preview');
  assert.doesNotMatch(html, /--primary/);
  const stored = await s.req(`/api/v1/routes/${r.id}/auth`, { headers: h });
  assert.equal(stored.data.route_auth!.title, 'Stored title', 'the preview saves nothing');

  assert.equal((await s.req(`/api/v1/routes/${r.id}/branding/logo`, { headers: h })).status, 404);
  const fd = new FormData();
  fd.append('file', new Blob([new Uint8Array(PNG)], { type: 'image/png' }), 'l.png');
  assert.equal((await s.req(`/api/v1/routes/${r.id}/branding/logo`, { method: 'POST', headers: h, body: fd })).status, 200);
  const img = await fetch(`${s.url}/api/v1/routes/${r.id}/branding/logo`, { headers: h });
  assert.equal(img.status, 200);
  assert.equal(img.headers.get('content-type'), 'image/png');
  assert.deepEqual(Buffer.from(await img.arrayBuffer()), PNG);
  html = String((await preview(r.id)).data);
  assert.match(html, new RegExp(`<img class="logo" src="/api/v1/routes/${r.id}/branding/logo\\?v=\\d+"`));
  assert.equal((await s.req(`/api/v1/routes/${r.id}/branding/bg-image`, { headers: h })).status, 404);

  const bad = await preview(r.id, '?primary_color=red&lang=fr&step=nope&title=a%00b');
  assert.equal(bad.status, 400);
  assert.deepEqual(Object.keys(bad.data.fields!).sort(), ['lang', 'primary_color', 'step', 'title']);
  assert.equal((await preview(987654)).status, 404);
  assert.equal((await s.req(`/api/v1/routes/987654/branding/logo`, { headers: h })).status, 404);
});

test('preview and images need an admin credential with the routes scope', async () => {
  const r = await createRoute(s);
  assert.equal((await s.req(`/api/v1/routes/${r.id}/auth/preview`)).status, 401);
  const peersOnly = bearer(await apiToken(s, ['peers']));
  assert.equal((await s.req(`/api/v1/routes/${r.id}/auth/preview`, { headers: peersOnly })).status, 403);
  assert.equal((await s.req(`/api/v1/routes/${r.id}/branding/logo`, { headers: peersOnly })).status, 403);
  const ro = bearer(await apiToken(s, ['read-only']));
  assert.equal((await s.req(`/api/v1/routes/${r.id}/auth/preview`, { headers: ro })).status, 200);
});
