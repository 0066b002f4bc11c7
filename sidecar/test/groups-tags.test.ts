// Peer groups and tags through the API, plus the tag-list helpers' edge cases.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, apiToken, bearer, type ReqInit, type TestServer } from './lib/server.js';
import { joinTags, splitTags, stripTag, tagNameProblem } from '../src/tags/names.js';
import type { Group, Peer, Tag } from './lib/protocol.js';

let s: TestServer;
let h: Record<string, string>;
const api = <T = never, P extends string = string, M extends string = 'GET'>(p: P, init: ReqInit<[T] extends [never] ? M : string> = {}) =>
  s.req<T, `/api/v1${P}`, M>(`/api/v1${p}`, { ...init, headers: { ...h } });

before(async () => {
  s = await startTestServer({ GATEHOUSE_RATE_LIMIT_ADMIN: '100000' });
  h = bearer(await apiToken(s));
});
after(async () => s.close());

describe('peer groups', () => {
  test('CRUD with peer_count; duplicate names 409; deleting ungroups members', async () => {
    const g = await api('/peer-groups', { method: 'POST', json: { name: 'Office', color: '#3b82f6', description: 'desks' } });
    assert.equal(g.status, 201, JSON.stringify(g.data));
    assert.deepEqual(
      { ...g.data.group, created_at: undefined, updated_at: undefined },
      {
        id: g.data.group.id,
        name: 'Office',
        color: '#3b82f6',
        description: 'desks',
        peer_count: 0,
        speed_limit: null,
        quota: null,
        created_at: undefined,
        updated_at: undefined,
      },
    );
    const gid = g.data.group.id;
    const dup = await api('/peer-groups', { method: 'POST', json: { name: 'office' } });
    assert.equal(dup.status, 409);
    assert.match(dup.data.fields?.name ?? '', /already exists/, 'the field error lets a form show it next to the name');
    const other = (await api('/peer-groups', { method: 'POST', json: { name: 'Lab', color: '#abc' } })).data.group;
    for (const n of ['g-peer-1', 'g-peer-2']) assert.equal((await api('/peers', { method: 'POST', json: { name: n, group_id: gid } })).status, 201);
    const loose = (await api('/peers', { method: 'POST', json: { name: 'g-peer-3' } })).data.peer;
    const list = await api('/peer-groups');
    assert.equal(list.status, 200);
    const office = list.data.groups.find((x: Group) => x.id === gid);
    assert.equal(office!.peer_count, 2);
    assert.equal(list.data.groups.find((x: Group) => x.id === other.id)!.peer_count, 0);
    // move a peer, rename, recolour
    assert.equal((await api(`/peers/${loose.id}`, { method: 'PUT', json: { group_id: other.id } })).data.peer.group_id, other.id);
    const u = await api(`/peer-groups/${gid}`, { method: 'PUT', json: { name: 'Head Office', color: null } });
    assert.equal(u.status, 200);
    assert.equal(u.data.group.name, 'Head Office');
    assert.equal(u.data.group.color, null);
    const dupRename = await api(`/peer-groups/${other.id}`, { method: 'PUT', json: { name: 'HEAD OFFICE' } });
    assert.equal(dupRename.status, 409);
    assert.match(dupRename.data.fields?.name ?? '', /already exists/);
    const del = await api(`/peer-groups/${gid}`, { method: 'DELETE' });
    assert.equal(del.status, 200);
    assert.equal(del.data.deleted.peers_ungrouped, 2);
    const peers = (await api('/peers?limit=1000')).data.peers.filter((p: Peer) => p.name.startsWith('g-peer-'));
    assert.deepEqual(
      peers.map((p: Peer) => p.group_id),
      [null, null, other.id],
    );
    assert.equal((await api(`/peer-groups/${gid}`)).status, 404);
  });

  test('bad input: 400 with fields, nothing written', async () => {
    const before = (await api('/peer-groups')).data.groups;
    for (const [body, field] of [
      [{}, 'name'],
      [{ name: '' }, 'name'],
      [{ name: 'x'.repeat(65) }, 'name'],
      [{ name: 'a<b' }, 'name'],
      [{ name: 'ok', color: 'blue' }, 'color'],
      [{ name: 'ok', color: '#12345' }, 'color'],
      [{ name: 'ok', color: '#gggggg' }, 'color'],
      [{ name: 'ok', description: 'x'.repeat(501) }, 'description'],
    ] as [unknown, string][]) {
      const r = await api('/peer-groups', { method: 'POST', json: body });
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.ok(r.data.fields?.[field], `${JSON.stringify(body)}: ${JSON.stringify(r.data.fields)}`);
    }
    const g = (await api('/peer-groups', { method: 'POST', json: { name: 'Stable' } })).data.group;
    for (const [body, field] of [
      [{ color: 'red' }, 'color'],
      [{ name: '' }, 'name'],
    ] as [unknown, string][]) {
      const r = await api(`/peer-groups/${g.id}`, { method: 'PUT', json: body });
      assert.equal(r.status, 400);
      assert.ok(r.data.fields?.[field]);
    }
    assert.deepEqual((await api(`/peer-groups/${g.id}`)).data.group, g);
    assert.equal((await api('/peer-groups')).data.groups.length, before.length + 1);
  });
});

describe('tag helpers', () => {
  test('strip is case-insensitive and whole-word only', () => {
    assert.equal(stripTag('web,webserver,Web2,WEB', 'web'), 'webserver,Web2');
    assert.equal(stripTag('webserver', 'web'), 'webserver');
    assert.equal(stripTag('web', 'WEB'), '');
    assert.equal(stripTag(' web , db ,web', 'web'), 'db');
    assert.equal(stripTag('a,web,b', 'web'), 'a,b');
    assert.equal(stripTag('my web,web', 'web'), 'my web');
    assert.equal(stripTag('', 'web'), '');
    assert.equal(stripTag('ünïcode,Ünïcode,x', 'ÜNÏCODE'), 'x');
    assert.equal(stripTag('a.b,a*b', 'a.b'), 'a*b', 'no regex semantics');
    assert.equal(stripTag('100%,1000', '100%'), '1000', 'no LIKE semantics');
  });

  test('split/join normalize', () => {
    assert.deepEqual(splitTags(' a , ,b,'), ['a', 'b']);
    assert.equal(joinTags(['Web', 'web', 'DB']), 'Web,DB');
    assert.equal(tagNameProblem('x'.repeat(64)), null);
    assert.ok(tagNameProblem('x'.repeat(65)));
    for (const bad of ['a,b', 'a<b', 'a>b', 'a"b', 'a\nb', 'a\rb', 'a\tb', '']) assert.ok(tagNameProblem(bad), JSON.stringify(bad));
  });
});

describe('tags API', () => {
  test('list merges the registry with names on peers; create is idempotent; delete strips from peers', async () => {
    const p1 = (await api('/peers', { method: 'POST', json: { name: 't-peer-1', tags: 'web,webserver,db' } })).data.peer;
    const p2 = (await api('/peers', { method: 'POST', json: { name: 't-peer-2', tags: 'WEB,cache' } })).data.peer;
    const c1 = await api('/tags', { method: 'POST', json: { name: 'Web' } });
    assert.equal(c1.status, 201);
    assert.equal(c1.data.created, true);
    assert.equal(c1.data.tag.registered, true);
    assert.equal(c1.data.tag.peer_count, 2);
    const c2 = await api('/tags', { method: 'POST', json: { name: 'WEB' } });
    assert.equal(c2.status, 200);
    assert.equal(c2.data.created, false);
    assert.equal(c2.data.tag.id, c1.data.tag.id);
    assert.equal(c2.data.tag.name, 'Web');
    const lonely = await api('/tags', { method: 'POST', json: { name: 'unused tag' } });
    assert.equal(lonely.status, 201);
    const list = (await api('/tags')).data.tags as Tag[];
    const by = (n: string) => list.find((t) => t.name.toLowerCase() === n.toLowerCase());
    assert.deepEqual(by('web'), { id: c1.data.tag.id, name: 'Web', peer_count: 2, registered: true });
    assert.deepEqual(by('webserver'), { id: null, name: 'webserver', peer_count: 1, registered: false });
    assert.deepEqual(by('cache'), { id: null, name: 'cache', peer_count: 1, registered: false });
    assert.deepEqual(by('unused tag'), { id: lonely.data.tag.id, name: 'unused tag', peer_count: 0, registered: true });
    const del = await api('/tags/web', { method: 'DELETE' });
    assert.equal(del.status, 200);
    assert.deepEqual(del.data.deleted, { name: 'web', registered: true, peers_updated: 2 });
    assert.equal((await api(`/peers/${p1.id}`)).data.peer.tags, 'webserver,db');
    assert.equal((await api(`/peers/${p2.id}`)).data.peer.tags, 'cache');
    const after = (await api('/tags')).data.tags as Tag[];
    assert.ok(!after.some((t) => t.name.toLowerCase() === 'web'));
    assert.ok(after.some((t) => t.name === 'webserver'));
    // a name only on peers can be deleted too; url-encoded names work
    const d2 = await api(`/tags/${encodeURIComponent('webserver')}`, { method: 'DELETE' });
    assert.deepEqual(d2.data.deleted, { name: 'webserver', registered: false, peers_updated: 1 });
    assert.equal((await api(`/tags/${encodeURIComponent('unused tag')}`, { method: 'DELETE' })).status, 200);
    assert.equal((await api('/tags/web', { method: 'DELETE' })).status, 404);
  });

  test('rename: registry and every peer, in place, whole names only; case change allowed; taken name 409; unknown 404; bad input 400', async () => {
    const p1 = (await api('/peers', { method: 'POST', json: { name: 'r-peer-1', tags: 'alpha,alphabet,zeta' } })).data.peer;
    const p2 = (await api('/peers', { method: 'POST', json: { name: 'r-peer-2', tags: 'ALPHA' } })).data.peer;
    const reg = await api('/tags', { method: 'POST', json: { name: 'alpha' } });
    const r = await api('/tags/Alpha', { method: 'PUT', json: { name: 'omega' } });
    assert.equal(r.status, 200);
    assert.deepEqual(r.data.renamed, { from: 'Alpha', to: 'omega', registered: true, peers_updated: 2 });
    assert.equal((await api(`/peers/${p1.id}`)).data.peer.tags, 'omega,alphabet,zeta');
    assert.equal((await api(`/peers/${p2.id}`)).data.peer.tags, 'omega');
    const list = (await api('/tags')).data.tags as Tag[];
    assert.deepEqual(
      list.find((t) => t.name === 'omega'),
      { id: reg.data.tag.id, name: 'omega', peer_count: 2, registered: true },
    );
    assert.ok(!list.some((t) => t.name.toLowerCase() === 'alpha'));
    // a change of case only
    assert.equal((await api('/tags/omega', { method: 'PUT', json: { name: 'Omega' } })).status, 200);
    assert.equal((await api(`/peers/${p2.id}`)).data.peer.tags, 'Omega');
    // taken by a name on peers only: 409 with fields.name, nothing changed
    const taken = await api('/tags/omega', { method: 'PUT', json: { name: 'ZETA' } });
    assert.equal(taken.status, 409);
    assert.ok(taken.data.fields!.name);
    assert.equal((await api(`/peers/${p1.id}`)).data.peer.tags, 'Omega,alphabet,zeta');
    assert.equal((await api('/tags/nowhere', { method: 'PUT', json: { name: 'x' } })).status, 404);
    const bad = await api('/tags/omega', { method: 'PUT', json: { name: 'a,b' } });
    assert.equal(bad.status, 400);
    assert.ok(bad.data.fields!.name);
    assert.equal((await api(`/peers/${p2.id}`)).data.peer.tags, 'Omega');
    const activity = (await api('/logs/activity?event_type=tag_renamed')).data;
    assert.ok(JSON.stringify(activity).includes('renamed to'), 'activity row written');
    for (const id of [p1.id, p2.id]) await api(`/peers/${id}`, { method: 'DELETE' });
    await api('/tags/omega', { method: 'DELETE' });
  });

  test('bad tag names: 400 with fields, nothing written', async () => {
    const before = (await api('/tags')).data.tags;
    for (const name of ['a,b', 'x<y', 'x>y', 'say "hi"', 'line\nfeed', 'car\rret', 'tab\tbed', 'x'.repeat(65), '', '   ']) {
      const r = await api('/tags', { method: 'POST', json: { name } });
      assert.equal(r.status, 400, JSON.stringify(name));
      assert.ok(r.data.fields?.name, JSON.stringify(r.data));
    }
    const r = await api('/tags', { method: 'POST', json: {} });
    assert.equal(r.status, 400);
    assert.ok(r.data.fields!.name);
    assert.equal((await api(`/tags/${encodeURIComponent('a<b')}`, { method: 'DELETE' })).status, 400);
    assert.deepEqual((await api('/tags')).data.tags, before);
  });

  test('a tag name with a trailing line feed or tab is refused, not trimmed; length counts code points', async () => {
    const before = (await api('/tags')).data.tags;
    for (const name of ['web\n', '\tweb', 'web\r\n', 'web\u0000']) {
      const r = await api('/tags', { method: 'POST', json: { name } });
      assert.equal(r.status, 400, JSON.stringify(name));
      assert.ok(r.data.fields?.name);
      const p = await api('/peers', { method: 'POST', json: { name: 'tagged-peer', tags: [name] } });
      assert.equal(p.status, 400, `peer tags ${JSON.stringify(name)}`);
      assert.ok(
        Object.keys(p.data.fields ?? {}).some((k) => k === 'tags' || k.startsWith('tags.')),
        JSON.stringify(p.data),
      );
      const list = await api('/peers', { method: 'POST', json: { name: 'tagged-peer', tags: `ok, ${name}` } });
      assert.equal(list.status, 400, `peer tag list ${JSON.stringify(name)}`);
    }
    assert.deepEqual((await api('/tags')).data.tags, before);
    const emoji = '🏷'.repeat(64);
    const ok = await api('/tags', { method: 'POST', json: { name: emoji } });
    assert.equal(ok.status, 201, '64 emoji are 64 characters (128 UTF-16 units)');
    assert.equal(ok.data.tag.name, emoji);
    assert.equal((await api('/tags', { method: 'POST', json: { name: '🏷'.repeat(65) } })).status, 400);
    const spaced = await api('/tags', { method: 'POST', json: { name: '  spaced  ' } });
    assert.equal(spaced.data.tag.name, 'spaced', 'surrounding spaces still go');
  });
});
