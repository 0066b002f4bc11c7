// speed_limit on peers and peer groups through the API (GATEHOUSE_WG_MANAGE=false: the traffic
// control itself is in test/shaping-tc.test.ts and test/e2e/speed-caps.test.ts): stored and
// answered, null = the group's default, bad input refused with fields and nothing written, and the
// effective caps (peer over group, disabled peers left out) as the shaping service computes them.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, apiToken, bearer, type TestServer, apiCall } from './lib/server.js';
import type { Refusal } from './lib/api-types.js';

let s: TestServer;
let h: Record<string, string>;
const api = apiCall(
  () => s,
  () => h,
);

before(async () => {
  s = await startTestServer({ GATEHOUSE_WG_SUBNET: '10.79.0.0/24', GATEHOUSE_RATE_LIMIT_ADMIN: '100000' });
  h = bearer(await apiToken(s));
});
after(async () => s.close());

describe('speed_limit', () => {
  test('peer and group: stored, answered, changed and cleared; the effective caps follow', async () => {
    const g = await api('/peer-groups', 'POST', { name: 'capped group', speed_limit: { down_kbit: 1000, up_kbit: null } });
    assert.equal(g.status, 201, JSON.stringify(g.data));
    assert.deepEqual(g.data.group.speed_limit, { down_kbit: 1000, up_kbit: null });
    const own = await api('/peers', 'POST', { name: 'own cap', speed_limit: { down_kbit: 2000, up_kbit: 500 }, group_id: g.data.group.id });
    assert.equal(own.status, 201, JSON.stringify(own.data));
    assert.deepEqual(own.data.peer.speed_limit, { down_kbit: 2000, up_kbit: 500 });
    const member = (await api('/peers', 'POST', { name: 'member', group_id: g.data.group.id })).data.peer;
    assert.equal(member.speed_limit, null, 'no own value: the group default applies');
    const free = (await api('/peers', 'POST', { name: 'free' })).data.peer;
    const caps = async () => (await s.deps.shaping.caps()).map((c) => [c.peer_id, c.down_kbit, c.up_kbit]);
    assert.deepEqual(await caps(), [
      [own.data.peer.id, 2000, 500],
      [member.id, 1000, null],
    ]);
    assert.equal((await api(`/peers/${member.id}`, 'PUT', { speed_limit: { down_kbit: null, up_kbit: null } })).data.peer.speed_limit!.down_kbit, null);
    assert.deepEqual(await caps(), [[own.data.peer.id, 2000, 500]], "the member's own no-cap wins over the group");
    assert.equal((await api(`/peers/${member.id}`, 'PUT', { speed_limit: null })).data.peer.speed_limit, null);
    assert.equal((await api(`/peer-groups/${g.data.group.id}`, 'PUT', { speed_limit: { down_kbit: 800, up_kbit: 800 } })).status, 200);
    assert.deepEqual((await api(`/peer-groups/${g.data.group.id}`)).data.group.speed_limit, { down_kbit: 800, up_kbit: 800 });
    assert.deepEqual(await caps(), [
      [own.data.peer.id, 2000, 500],
      [member.id, 800, 800],
    ]);
    await api(`/peers/${own.data.peer.id}/toggle`, 'PUT');
    assert.deepEqual(await caps(), [[member.id, 800, 800]], 'a disabled peer is not on the interface');
    assert.equal((await api(`/peers/${free.id}`)).data.peer.speed_limit, null);
    const listed = (await api('/peers?limit=100')).data.peers;
    assert.deepEqual(listed.find((p) => p.id === own.data.peer.id)?.speed_limit, { down_kbit: 2000, up_kbit: 500 });
    assert.equal((await api(`/peer-groups/${g.data.group.id}`, 'PUT', { speed_limit: null })).data.group.speed_limit, null);
  });

  test('bad input: 400 with fields.speed_limit, nothing written', async () => {
    const p = (await api('/peers', 'POST', { name: 'bad input target' })).data.peer;
    const g = (await api('/peer-groups', 'POST', { name: 'bad input group' })).data.group;
    for (const bad of [
      { down_kbit: 7, up_kbit: null },
      { down_kbit: 10_000_001, up_kbit: null },
      { down_kbit: 1.5, up_kbit: 100 },
      { down_kbit: '1000', up_kbit: 100 },
      { down_kbit: 1000 },
      { down_kbit: 1000, up_kbit: 1000, burst: 5 },
      'fast',
      [],
    ]) {
      for (const [path, method, extra] of [
        ['/peers', 'POST', { name: 'never' }],
        [`/peers/${p.id}`, 'PUT', {}],
        ['/peer-groups', 'POST', { name: 'never group' }],
        [`/peer-groups/${g.id}`, 'PUT', {}],
      ] as const) {
        const r = await api<Refusal>(path, method, { ...extra, speed_limit: bad });
        assert.equal(r.status, 400, `${method} ${path} ${JSON.stringify(bad)}: ${r.status}`);
        assert.ok(
          Object.keys(r.data.fields ?? {}).some((k) => k.startsWith('speed_limit')),
          JSON.stringify(r.data.fields),
        );
      }
    }
    assert.equal((await api(`/peers/${p.id}`)).data.peer.speed_limit, null);
    assert.equal((await api(`/peer-groups/${g.id}`)).data.group.speed_limit, null);
    const names = ((await api('/peers?limit=100')).data.peers as { name: string }[]).map((x) => x.name);
    assert.ok(!names.includes('never'));
    assert.ok(!((await api('/peer-groups')).data.groups as { name: string }[]).some((x) => x.name === 'never group'));
  });
});
