// Share links of route-auth and basic-auth routes, against the sidecar the way Caddy talks to it: made once (token
// shown once, only its hash stored), opening /route-auth/share?t= counts a use and gives a session
// of that route only, under its path prefix only, for min(link left, route session length); the
// token leaves the URL by a 303; revoked / expired / used-up / unknown links get a page that says
// which (en/de); events and activity; the expiry setting; bad input (400/422 with fields, nothing
// written); the path-prefix readings (share-links/paths.ts).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, apiToken, bearer, type TestServer, apiInit } from './lib/server.js';
import { Browser, createRoute, rawRequest } from './route-auth-helpers.js';
import { manualClock } from '../src/util/clock.js';
import { SESSION_DURATIONS } from '../src/route-auth/schema.js';
import type { DomainEvent } from '../src/events.js';
import { sha256 } from '../src/util/crypto.js';
import { findRows } from '../src/db/define.js';
import { normalizePrefix, redactShareToken, underPathPrefix } from '../src/share-links/paths.js';
import { toRow } from '../src/resilience/access-log.js';

let s: TestServer;
let h: Record<string, string>;
const clock = manualClock(Date.UTC(2026, 10, 1, 12));
const H1 = SESSION_DURATIONS['1h'];
const DAY = 86_400_000;
const api = apiInit(
  () => s,
  () => h,
);

before(async () => {
  s = await startTestServer({ GATEHOUSE_RATE_LIMIT_ADMIN: '100000', GATEHOUSE_RATE_LIMIT_LOGIN: '100000' }, { clock });
  h = bearer(await apiToken(s));
});
after(async () => s.close());

async function protectedRoute(sessionMaxAge = H1) {
  const r = await createRoute(s);
  const res = await api(`/routes/${r.id}/auth`, {
    method: 'POST',
    json: { method: 'email_password', password: 'correct horse battery', session_max_age: sessionMaxAge, email: 'owner@example.test' },
  });
  assert.equal(res.status, 200, JSON.stringify(res.data));
  return r;
}

const tokenOf = (url: string) => new URL(url).searchParams.get('t')!;
const sharePath = (url: string) => `/route-auth/share?t=${tokenOf(url)}`;

describe('share links', () => {
  test('a link opens its route under its prefix only, counts uses, and is used up after max_uses', async () => {
    const r = await protectedRoute();
    const seen: DomainEvent[] = [];
    const off = s.deps.events.onAny((e) => void (e.type.startsWith('share_link') ? seen.push(e) : undefined));
    try {
      const made = await api(`/routes/${r.id}/share-links`, {
        method: 'POST',
        json: { expires_at: clock() + 2 * 3_600_000, max_uses: 2, path_prefix: '/docs/', note: 'for Ana' },
      });
      assert.equal(made.status, 201, JSON.stringify(made.data));
      const { share_link: link, url } = made.data;
      assert.match(url, new RegExp(`^https://${r.domain.replace(/\./g, '\\.')}/route-auth/share\\?t=gthsl_[A-Za-z0-9_-]{43}$`));
      assert.equal(link.state, 'active');
      assert.equal(link.path_prefix, '/docs', 'stored without the trailing slash');
      assert.equal(link.max_uses, 2);
      assert.equal(link.uses, 0);
      assert.equal(link.note, 'for Ana');
      assert.equal(link.created_by.user_id === null || typeof link.created_by.user_id === 'number', true);
      assert.equal(made.headers.get('cache-control'), 'no-store');
      const token = tokenOf(url);
      const stored = await findRows(s.deps.db.models.ShareLink);
      assert.ok(
        stored.every((x) => !JSON.stringify(x).includes(token)),
        'the token itself is not stored',
      );
      assert.ok(stored.some((x) => x.token_hash === sha256(token)));

      const b = new Browser(s, r.domain, { ip: '203.0.113.7' });
      assert.equal((await b.verify('/docs/a')).status, 302, 'no session before the link is opened');
      const opened = await b.get(sharePath(url));
      assert.equal(opened.status, 303);
      assert.equal(opened.headers.location, '/docs', 'the token leaves the URL: a redirect to the prefix');
      assert.equal(opened.headers['referrer-policy'], 'no-referrer');
      assert.equal(opened.headers['cache-control'], 'no-store');
      assert.ok(b.cookies.has(`gh_ra_${r.id}`), 'the session cookie is set');
      const cookieLine = (opened.headers['set-cookie'] ?? []).find((l) => l.startsWith(`gh_ra_${r.id}=`))!;
      assert.match(cookieLine, /Max-Age=3600;/, 'the shorter of the route session (1 h) and the link (2 h)');
      assert.match(cookieLine, /HttpOnly; SameSite=Lax; Secure/);

      // under the prefix: through; outside it (and every trick to get outside): the login redirect
      for (const ok of ['/docs', '/docs/', '/docs/a/b?x=1', '/docs/./a']) assert.equal((await b.verify(ok)).status, 204, ok);
      for (const no of [
        '/',
        '/docsx',
        '/admin',
        '/docs/../admin',
        '/docs/%2e%2e/admin',
        '/docs/..%2fadmin',
        '/docs/..;/admin',
        '/docs%2f..%2fadmin',
        '/Docs/a',
      ])
        assert.equal((await b.verify(no)).status, 302, no);
      const ok = await b.verify('/docs/x');
      assert.equal(ok.headers['x-auth-method'], 'share_link');
      assert.equal(ok.headers['x-auth-user'], `share-link-${link.id}`);
      // the login page for a path outside the prefix shows the form (no redirect loop)
      const login = await b.get(`/route-auth/login?rd=${encodeURIComponent(`https://${r.domain}/admin`)}`);
      assert.equal(login.status, 200);
      assert.match(login.body, /name="password"/);
      const loginIn = await b.get(`/route-auth/login?rd=${encodeURIComponent(`https://${r.domain}/docs/y`)}`);
      assert.equal(loginIn.status, 302);

      // another session from the other use; then used up: the page says so (de), never the login form
      const b2 = new Browser(s, r.domain, { ip: '203.0.113.8' });
      assert.equal((await b2.get(sharePath(url))).status, 303);
      const listed = (await api(`/routes/${r.id}/share-links`)).data.share_links;
      assert.equal(listed[0].uses, 2);
      assert.equal(listed[0].state, 'used_up');
      assert.equal(listed[0].last_used_at, new Date(clock()).toISOString());
      const b3 = new Browser(s, r.domain, { lang: 'de' });
      const used = await b3.get(sharePath(url));
      assert.equal(used.status, 410);
      assert.match(used.body, /so oft geöffnet, wie er erlaubt/);
      assert.doesNotMatch(used.body, /name="password"/);
      assert.match(used.body, /href="\/route-auth\/login"/);
      assert.equal(b3.cookies.has(`gh_ra_${r.id}`), false);
      assert.equal((await b.verify('/docs/a')).status, 204, 'sessions already opened go on until they expire');

      // an unknown token: 404 page
      const unknown = await b3.get('/route-auth/share?t=gthsl_' + 'A'.repeat(43));
      assert.equal(unknown.status, 404);
      assert.match(unknown.body, /gilt nicht für diese Seite/);

      const used1 = seen.filter((e) => e.type === 'share_link_used');
      assert.equal(used1.length, 2);
      assert.deepEqual(
        used1.map((e) => (e as { ip: string }).ip),
        ['203.0.113.7', '203.0.113.8'],
      );
      assert.ok(seen.some((e) => e.type === 'share_link_created'));
      const act = await api('/logs/activity?limit=20');
      assert.equal(act.status, 200, JSON.stringify(act.data));
      const rows = act.data.entries;
      const useRows = rows.filter((x) => x.event_type === 'share_link_used');
      assert.equal(useRows.length, 2, JSON.stringify(Object.keys(act.data)));
      assert.equal(useRows[0].details!.route_id, r.id);
      assert.equal(useRows[0].details!.link_id, link.id);
      assert.ok(['203.0.113.7', '203.0.113.8'].includes(String(useRows[0].details!.ip)));
    } finally {
      off();
    }
  });

  test('revoking ends the sessions it opened and the link says it was revoked; expiry', async () => {
    const r = await protectedRoute(SESSION_DURATIONS['24h']);
    const made = await api(`/routes/${r.id}/share-links`, { method: 'POST', json: { expires_at: new Date(clock() + 3 * 3_600_000).toISOString() } });
    assert.equal(made.status, 201);
    const b = new Browser(s, r.domain);
    const opened = await b.get(sharePath(made.data.url));
    assert.equal(opened.status, 303);
    assert.equal(opened.headers.location, '/');
    const cookieLine = (opened.headers['set-cookie'] ?? []).find((l) => l.startsWith(`gh_ra_${r.id}=`))!;
    assert.match(cookieLine, /Max-Age=10800;/, 'the link has 3 h left, the route session is 24 h');
    assert.equal((await b.verify('/anything')).status, 204, 'no prefix: the whole route');

    const del = await api(`/routes/${r.id}/share-links/${made.data.share_link.id}`, { method: 'DELETE' });
    assert.equal(del.status, 200);
    assert.equal(del.data.share_link.state, 'revoked');
    assert.equal((await b.verify('/anything')).status, 302, 'the session the link opened ended');
    const page = await new Browser(s, r.domain).get(sharePath(made.data.url));
    assert.equal(page.status, 410);
    assert.match(page.body, /was revoked/);
    assert.equal((await api(`/routes/${r.id}/share-links/${made.data.share_link.id}`, { method: 'DELETE' })).status, 200, 'again: answered as it is');
    assert.equal((await api(`/routes/${r.id}/share-links/999999`, { method: 'DELETE' })).status, 404);

    const soon = await api(`/routes/${r.id}/share-links`, { method: 'POST', json: { expires_at: clock() + 60_000 } });
    clock.advance(61_000);
    const exp = await new Browser(s, r.domain).get(sharePath(soon.data.url));
    assert.equal(exp.status, 410);
    assert.match(exp.body, /has expired/);
    assert.equal((await api(`/routes/${r.id}/share-links`)).data.share_links[0].state, 'expired');
  });

  test('a signed-in visitor keeps the full session; a link of another route does not open this one', async () => {
    const r = await protectedRoute();
    const other = await protectedRoute();
    const made = await api(`/routes/${other.id}/share-links`, { method: 'POST', json: { expires_at: clock() + DAY } });
    const b = new Browser(s, r.domain);
    const wrong = await b.get(sharePath(made.data.url));
    assert.equal(wrong.status, 404, "another route's link is unknown here");
    assert.equal((await api(`/routes/${other.id}/share-links`)).data.share_links[0].uses, 0);

    const mine = await api(`/routes/${r.id}/share-links`, { method: 'POST', json: { expires_at: clock() + DAY, path_prefix: '/docs' } });
    await b.get('/route-auth/login');
    const signed = await b.submit('password', { email: 'owner@example.test', password: 'correct horse battery' });
    assert.equal(signed.status, 303, signed.body);
    const again = await b.get(sharePath(mine.data.url));
    assert.equal(again.status, 303);
    assert.equal((await b.verify('/admin')).status, 204, 'the full session was kept, not narrowed to the prefix');
    assert.equal((await api(`/routes/${r.id}/share-links`)).data.share_links[0].uses, 0, 'no use counted');
  });

  test('the longest expiry is a setting (default 30 days); bad input is refused with fields and writes nothing', async () => {
    const r = await protectedRoute();
    assert.deepEqual((await api('/settings/share-links')).data.share_links, { max_expiry_days: 30 });
    const far = await api(`/routes/${r.id}/share-links`, { method: 'POST', json: { expires_at: clock() + 31 * DAY } });
    assert.equal(far.status, 422);
    assert.match(far.data.fields!.expires_at, /at most 30 days/);
    assert.equal((await api(`/routes/${r.id}/share-links`, { method: 'POST', json: { expires_at: clock() + 30 * DAY } })).status, 201);
    const past = await api(`/routes/${r.id}/share-links`, { method: 'POST', json: { expires_at: clock() - 1 } });
    assert.equal(past.status, 422);
    assert.ok(past.data.fields!.expires_at);

    const put = await api('/settings/share-links', { method: 'PUT', json: { max_expiry_days: 60 } });
    assert.equal(put.status, 200);
    assert.equal((await api(`/routes/${r.id}/share-links`, { method: 'POST', json: { expires_at: clock() + 45 * DAY } })).status, 201);
    const badSetting = await api('/settings/share-links', { method: 'PUT', json: { max_expiry_days: 0 } });
    assert.equal(badSetting.status, 400);
    assert.ok(badSetting.data.fields!.max_expiry_days);
    assert.equal((await api('/settings/share-links')).data.share_links.max_expiry_days, 60);
    await api('/settings/share-links', { method: 'PUT', json: { max_expiry_days: 30 } });

    const before = (await findRows(s.deps.db.models.ShareLink)).length;
    for (const [body, field] of [
      [{}, 'expires_at'],
      [{ expires_at: 'tomorrow' }, 'expires_at'],
      [{ expires_at: clock() + DAY, max_uses: 0 }, 'max_uses'],
      [{ expires_at: clock() + DAY, max_uses: 1.5 }, 'max_uses'],
      [{ expires_at: clock() + DAY, path_prefix: '/docs/../admin' }, 'path_prefix'],
      [{ expires_at: clock() + DAY, path_prefix: 'docs' }, 'path_prefix'],
      [{ expires_at: clock() + DAY, path_prefix: '/a?b' }, 'path_prefix'],
      [{ expires_at: clock() + DAY, note: 'x'.repeat(201) }, 'note'],
      [{ expires_at: clock() + DAY, extra: 1 }, 'extra'],
    ] as const) {
      const res = await api(`/routes/${r.id}/share-links`, { method: 'POST', json: body });
      // a path prefix's segment rules are more than the document's schema can state: 422, the rest 400
      assert.equal(res.status, field === 'path_prefix' ? 422 : 400, `${JSON.stringify(body)}: ${JSON.stringify(res.data)}`);
      assert.ok(res.data.fields?.[field], `${JSON.stringify(body)} names ${field}: ${JSON.stringify(res.data.fields)}`);
    }
    assert.equal((await findRows(s.deps.db.models.ShareLink)).length, before, 'nothing written');

    // a route with neither route auth nor basic auth: 409; an unknown route: 404
    const plain = await createRoute(s);
    const no = await api(`/routes/${plain.id}/share-links`, { method: 'POST', json: { expires_at: clock() + DAY } });
    assert.equal(no.status, 409);
    assert.ok(no.data.fields!.route_id);
    assert.equal((await api('/routes/999999/share-links', { method: 'POST', json: { expires_at: clock() + DAY } })).status, 404);
    assert.equal((await api('/routes/999999/share-links')).status, 404);
  });

  test('a basic-auth route takes share links: verify lets the session in (204) or leaves it to the basic auth (200); no login pages', async () => {
    const r = await createRoute(s, { basic_auth_user: 'alice', basic_auth_password_hash: '$2b$10$' + 'x'.repeat(53) });
    const made = await api(`/routes/${r.id}/share-links`, { method: 'POST', json: { expires_at: clock() + 3 * DAY, path_prefix: '/pub' } });
    assert.equal(made.status, 201, JSON.stringify(made.data));
    const b = new Browser(s, r.domain, { ip: '203.0.113.9' });
    assert.equal((await b.verify('/pub/a')).status, 200, 'no cookie: the basic auth decides');
    const opened = await b.get(sharePath(made.data.url));
    assert.equal(opened.status, 303);
    assert.equal(opened.headers.location, '/pub');
    const line = (opened.headers['set-cookie'] ?? []).find((l) => l.startsWith(`gh_ra_${r.id}=`))!;
    assert.match(line, new RegExp(`Max-Age=${(3 * DAY) / 1000};`), 'no route session length: the link bounds the session');
    const ok = await b.verify('/pub/a');
    assert.equal(ok.status, 204);
    assert.equal(ok.headers['x-auth-method'], 'share_link');
    for (const no of ['/', '/pubx', '/pub/../admin']) assert.equal((await b.verify(no)).status, 200, `${no}: outside the prefix, the basic auth`);
    // no login pages on a basic-auth route, and the refused link's page offers none
    assert.equal((await b.get('/route-auth/login')).status, 404);
    await api(`/routes/${r.id}/share-links/${made.data.share_link.id}`, { method: 'DELETE' });
    assert.equal((await b.verify('/pub/a')).status, 200, 'revoked: the basic auth again');
    const gone = await new Browser(s, r.domain).get(sharePath(made.data.url));
    assert.equal(gone.status, 410);
    assert.doesNotMatch(gone.body, /route-auth\/login/);
    // a wildcard basic-auth route: 409
    const wild = await createRoute(s, { domain: `*.wild-${process.pid}.test`, basic_auth_user: 'alice', basic_auth_password_hash: '$2b$10$' + 'y'.repeat(53) });
    assert.equal((await api(`/routes/${wild.id}/share-links`, { method: 'POST', json: { expires_at: clock() + DAY } })).status, 409);
  });

  test('a link preview (chat apps) and HEAD get a neutral page: no use counted, no cookie', async () => {
    const r = await protectedRoute();
    const made = await api(`/routes/${r.id}/share-links`, { method: 'POST', json: { expires_at: clock() + DAY, max_uses: 1 } });
    const p = sharePath(made.data.url);
    for (const ua of [
      'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)',
      'facebookexternalhit/1.1 Facebot Twitterbot/1.0',
      'WhatsApp/2.23.20.0',
      'Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)',
      'TelegramBot (like TwitterBot)',
      'Mozilla/5.0 (Windows NT 6.1; WOW64) SkypeUriPreview Preview/0.5 skype-url-preview@microsoft.com',
    ]) {
      const b = new Browser(s, r.domain);
      const res = await b.get(p, { 'user-agent': ua });
      assert.equal(res.status, 200, ua);
      assert.match(res.body, /Open it in a browser/, ua);
      assert.equal(res.headers['set-cookie'], undefined, `${ua}: no session`);
    }
    const head = await rawRequest(s.port, 'HEAD', p, new Browser(s, r.domain).headers('/route-auth/share'));
    assert.equal(head.status, 200);
    assert.equal((await api(`/routes/${r.id}/share-links`)).data.share_links[0].uses, 0, 'no use counted');
    // the person it was sent to still opens it (a desktop chat app's own browser is a browser)
    const person = new Browser(s, r.domain);
    const opened = await person.get(p, { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 Mattermost/5.9.0 Chrome/120.0 Electron/28' });
    assert.equal(opened.status, 303);
    assert.equal((await api(`/routes/${r.id}/share-links`)).data.share_links[0].state, 'used_up');
  });

  test('path prefixes: stored form and every reading of a request path', () => {
    assert.equal(normalizePrefix('/'), null);
    assert.equal(normalizePrefix(''), null);
    assert.equal(normalizePrefix('/a/b/'), '/a/b');
    for (const bad of ['a', '/a//b', '/a/../b', '/./a', '/a%2fb', '/a\\b', '/a?x', '/a#x', '/a b']) assert.equal(normalizePrefix(bad), undefined, bad);
    assert.equal(underPathPrefix('/a/b', '/a'), true);
    assert.equal(underPathPrefix('/a', '/a'), true);
    assert.equal(underPathPrefix('/ab', '/a'), false);
    assert.equal(underPathPrefix('/a/%2e%2e/b', '/a'), false);
    assert.equal(underPathPrefix('/b/%2e%2e/a/x', '/a'), false, 'a backend that does not decode sees /b/...');
    assert.equal(underPathPrefix('/a\\..\\b', '/a'), false);
    assert.equal(underPathPrefix('/a/x?y=/../../b', '/a'), true, 'the query is not the path');
  });

  test('the access log never keeps a share token', () => {
    const tok = `gthsl_${'x'.repeat(43)}`;
    assert.equal(redactShareToken(`/route-auth/share?t=${tok}`), '/route-auth/share?t=…');
    assert.equal(redactShareToken(`/ROUTE-AUTH/share?a=1&t=${tok}&b=2`), '/ROUTE-AUTH/share?a=1&t=…&b=2');
    assert.equal(redactShareToken('/docs?t=1'), '/docs?t=1', 'other paths keep their query');
    const row = toRow(
      {
        j: { ts: 1, status: 303, request: { uri: `/route-auth/share?t=${tok}`, host: 'a.test', method: 'GET', headers: {} } },
        req: { uri: `/route-auth/share?t=${tok}`, host: 'a.test', method: 'GET', headers: {} },
        host: 'a.test',
      } as never,
      new Map(),
    );
    assert.ok(!JSON.stringify(row).includes(tok));
  });
});
