// One-time config links through the API and the public link: made once (token shown once, only its
// hash stored), opening the page does not use it up, the download does (then 410), expiry,
// revocation, races, activity and events, and bad input (400 with fields, nothing written).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, apiToken, bearer, type TestServer, apiInit } from './lib/server.js';
import { manualClock } from '../src/util/clock.js';
import type { DomainEvent } from '../src/events.js';
import { sha256 } from '../src/util/crypto.js';
import { findRows } from '../src/db/define.js';
import { at } from '../../test/lib/json.js';

let s: TestServer;
let h: Record<string, string>;
const clock = manualClock(Date.UTC(2026, 10, 1, 12));
const api = apiInit(
  () => s,
  () => h,
);
const html = { accept: 'text/html', 'accept-language': 'de-DE,de;q=0.9' };

before(async () => {
  s = await startTestServer({ GATEHOUSE_RATE_LIMIT_ADMIN: '100000', GATEHOUSE_RATE_LIMIT_LOGIN: '100000' }, { clock });
  h = bearer(await apiToken(s));
});
after(async () => s.close());

async function newPeer(name: string): Promise<number> {
  const r = await api('/peers', { method: 'POST', json: { name } });
  assert.equal(r.status, 201, JSON.stringify(r.data));
  return Number(r.data.peer.id);
}

describe('one-time config links', () => {
  test('made once, the page does not use it up, the download does; then 410 with a page that says why', async () => {
    const peerId = await newPeer('link laptop');
    const seen: DomainEvent[] = [];
    const off = s.deps.events.onAny((e) => void (e.type.startsWith('peer_config_link') ? seen.push(e) : undefined));
    try {
      const made = await api(`/peers/${peerId}/config-links`, { method: 'POST', json: { expires_in_hours: 2, note: 'for Ana' } });
      assert.equal(made.status, 201, JSON.stringify(made.data));
      const { link, url, path } = made.data;
      assert.match(path, /^\/c\/gthcl_[A-Za-z0-9_-]{43}$/);
      assert.ok(url.endsWith(path));
      assert.equal(link.state, 'active');
      assert.equal(link.note, 'for Ana');
      assert.equal(link.expires_at, new Date(clock() + 2 * 3_600_000).toISOString());
      const token = path.slice(3);
      const stored = await findRows(s.deps.db.models.PeerConfigLink);
      assert.ok(
        stored.every((r) => !JSON.stringify(r).includes(token)),
        'the token itself is not stored',
      );
      assert.ok(stored.some((r) => r.token_hash === sha256(token)));

      // the page: twice, and it is still active (a link preview does not spend it)
      for (let i = 0; i < 2; i++) {
        const page = await s.req(path, { headers: html });
        assert.equal(page.status, 200);
        assert.match(String(page.data), /link laptop/);
        assert.equal(page.headers.get('cache-control'), 'no-store');
        assert.equal(page.headers.get('referrer-policy'), 'same-origin');
      }
      assert.equal((await api(`/peers/${peerId}/config-links`)).data.links[0].state, 'active');

      // the download: the peer's config, once
      const config = (await api(`/peers/${peerId}/config`)).data as string;
      const got = await s.req(path, { method: 'POST', headers: { 'x-forwarded-for': '203.0.113.9' } });
      assert.equal(got.status, 200);
      assert.match(got.headers.get('content-disposition') ?? '', /attachment; filename=/);
      assert.equal(String(got.data), config);
      const again = await s.req(path, { method: 'POST', headers: html });
      assert.equal(again.status, 410);
      assert.match(String(again.data), /bereits verwendet/, 'the page says why, in the reader’s language');
      assert.equal((await s.req(path, { headers: { accept: 'application/json' } })).status, 410);
      const json = await s.req(path, { method: 'POST', headers: { accept: 'application/json' } });
      assert.equal(json.status, 410);
      assert.equal(at(json.data, 'state'), 'used');

      const listed = (await api(`/peers/${peerId}/config-links`)).data.links;
      assert.equal(listed.length, 1);
      assert.equal(listed[0].state, 'used');
      assert.ok(listed[0].used_at);
      assert.ok(!JSON.stringify(listed).includes(token), 'the list never shows the link');
      assert.deepEqual(
        seen.map((e) => e.type),
        ['peer_config_link_created', 'peer_config_link_used'],
      );
      const { entries } = await s.deps.activity.query({ limit: 5 });
      assert.ok(entries.some((e) => e.event_type === 'peer_config_link_used' && String(e.message).includes('link laptop')));
    } finally {
      off();
    }
  });

  test('an unknown token is 404, an expired or revoked link 410; revoking a used link changes nothing', async () => {
    const peerId = await newPeer('link phone');
    assert.equal((await s.req(`/c/gthcl_${'A'.repeat(43)}`, { headers: html })).status, 404);
    assert.equal((await s.req('/c/not-a-token', { headers: { accept: 'application/json' } })).status, 400);

    const short = (await api(`/peers/${peerId}/config-links`, { method: 'POST', json: { expires_in_hours: 1 } })).data;
    clock.advance(3_600_001);
    const expired = await s.req(short.path, { method: 'POST', headers: html });
    assert.equal(expired.status, 410);
    assert.match(String(expired.data), /abgelaufen/);
    assert.equal((await api(`/peers/${peerId}/config-links`)).data.links[0].state, 'expired');

    const revokable = (await api(`/peers/${peerId}/config-links`, { method: 'POST', json: {} })).data;
    assert.equal(revokable.link.expires_at, new Date(clock() + 24 * 3_600_000).toISOString(), 'default: 24 hours');
    const revoked = await api(`/peers/${peerId}/config-links/${revokable.link.id}`, { method: 'DELETE' });
    assert.equal(revoked.status, 200);
    assert.equal(revoked.data.link.state, 'revoked');
    assert.equal((await s.req(revokable.path, { method: 'POST' })).status, 410);
    assert.equal((await api(`/peers/${peerId}/config-links/999999`, { method: 'DELETE' })).status, 404);
    assert.equal((await api(`/peers/999999/config-links`, { method: 'POST', json: {} })).status, 404);

    // two downloads at once: exactly one gets the config
    const raced = (await api(`/peers/${peerId}/config-links`, { method: 'POST', json: {} })).data;
    const both = await Promise.all([s.req(raced.path, { method: 'POST' }), s.req(raced.path, { method: 'POST' })]);
    assert.deepEqual(both.map((r) => r.status).sort(), [200, 410]);
  });

  test('deleting the peer deletes its links', async () => {
    const peerId = await newPeer('link gone');
    const made = (await api(`/peers/${peerId}/config-links`, { method: 'POST', json: {} })).data;
    assert.equal((await api(`/peers/${peerId}`, { method: 'DELETE' })).status, 200);
    assert.equal((await s.req(made.path, { headers: html })).status, 404);
    assert.equal(await s.deps.db.models.PeerConfigLink.count({ where: { peer_id: peerId } }), 0);
  });

  test('bad input: 400 with fields, nothing written', async () => {
    const peerId = await newPeer('link bad');
    const count = () => s.deps.db.models.PeerConfigLink.count();
    const before = await count();
    for (const [body, field] of [
      [{ expires_in_hours: 0 }, 'expires_in_hours'],
      [{ expires_in_hours: 169 }, 'expires_in_hours'],
      [{ expires_in_hours: 1.5 }, 'expires_in_hours'],
      [{ expires_in_hours: '2' }, 'expires_in_hours'],
      [{ note: 'x'.repeat(201) }, 'note'],
      [{ note: 'a\u0000b' }, 'note'],
      [{ other: 1 }, 'other'],
    ] as [unknown, string][]) {
      const r = await api(`/peers/${peerId}/config-links`, { method: 'POST', json: body });
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.ok(r.data.fields?.[field], `${JSON.stringify(body)} → fields.${field}: ${JSON.stringify(r.data)}`);
    }
    assert.equal(await count(), before);
  });

  test('a read-only token may list links but not make one (it gives the private key away)', async () => {
    const peerId = await newPeer('link scopes');
    const ro = bearer(await apiToken(s, ['read-only']));
    const peersScope = bearer(await apiToken(s, ['peers']));
    assert.equal((await s.req(`/api/v1/peers/${peerId}/config-links`, { headers: ro })).status, 200);
    assert.equal((await s.req(`/api/v1/peers/${peerId}/config-links`, { method: 'POST', json: {}, headers: ro })).status, 403);
    assert.equal((await s.req(`/api/v1/peers/${peerId}/config-links`, { method: 'POST', json: {}, headers: peersScope })).status, 403);
  });
});
