// GET /peers search, filters, sort and paging (the admin UI's peers table) through a real
// sidecar: SQLite by default, PostgreSQL with TEST_DATABASE_URL. Handshakes, traffic, creation times
// and odd addresses are written to the database directly, as the WireGuard poller and older rows do.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, apiToken, bearer, login, type TestServer } from './lib/server.js';
import { parseIPv4 } from '@gatehouse/common/wireguard/render.js';
import type { Peer } from './lib/protocol.js';
import type { Row } from './lib/rows.js';

let s: TestServer;
let h: Record<string, string>;
const api = <P extends string>(p: P, headers: Record<string, string> = h) => s.req<never, `/api/v1${P}`, 'GET'>(`/api/v1${p}`, { headers });
const write = <T = never, P extends string = string, M extends string = 'GET'>(p: P, method: [T] extends [never] ? M : string, json: unknown) =>
  s.req<T, `/api/v1${P}`, M>(`/api/v1${p}`, { method, json, headers: h });

const ids: Record<string, number> = {};
let office = 0;
let home = 0;
type P = Peer;
/** Every peer (ids ascending). */
let all: P[] = [];

const names = (peers: P[]) => peers.map((p) => p.name);
const sorted = (xs: string[]) => [...xs].sort();
/** The names a filtered list returns (every page), sorted, plus total. */
async function match(qs: string): Promise<{ names: string[]; total: number; total_all: number }> {
  const r = await api(`/peers?limit=1000&${qs}`);
  assert.equal(r.status, 200, `${qs}: ${JSON.stringify(r.data)}`);
  assert.equal(r.data.total, r.data.peers.length, `${qs}: total is the number of matches`);
  return { names: sorted(names(r.data.peers)), total: r.data.total, total_all: r.data.total_all };
}

before(async () => {
  s = await startTestServer({
    GATEHOUSE_WG_SUBNET: '10.78.0.0/16',
    GATEHOUSE_PUBLIC_HOST: 'vpn.example.test',
    GATEHOUSE_WG_PORT: '51998',
    GATEHOUSE_RATE_LIMIT_ADMIN: '100000',
  });
  h = bearer(await apiToken(s));
  office = (await write('/peer-groups', 'POST', { name: 'Office' })).data.group.id;
  home = (await write('/peer-groups', 'POST', { name: 'Home' })).data.group.id;
  const now = Date.now();
  const fixtures: [string, Record<string, unknown>, Partial<Row<'Peer'>>][] = [
    // name, create body, columns written afterwards
    [
      'Alpha Laptop',
      { description: 'Finance dept', tags: 'office,linux', group_id: office },
      { latest_handshake: now - 10_000, total_rx: 400, total_tx: 100, created_at: now - 5_000 },
    ],
    [
      'beta-server',
      { tags: 'server', group_id: home },
      { latest_handshake: now - 60_000, total_rx: 2000, total_tx: 1000, hostname: 'nas-box', hostname_source: 'admin', created_at: now - 9_000 },
    ],
    [
      'Gamma 100',
      { description: 'has 100% in its name', tags: 'webserver' },
      { latest_handshake: now - 600_000, total_rx: 10, total_tx: 0, created_at: now - 1_000 },
    ],
    ['Gamma 1000', {}, { latest_handshake: now - 900_000, total_rx: 5, total_tx: 5, created_at: now - 7_000 }],
    [
      'delta_x',
      { description: 'disabled one', tags: 'web', group_id: office },
      { enabled: false, latest_handshake: now - 5_000, total_rx: 50, total_tx: 50, created_at: now - 3_000 },
    ],
    ['deltaXx', { tags: 'Linux' }, { latest_handshake: now - 20_000, total_rx: 700, total_tx: 0, created_at: now - 8_000 }],
    [
      'Epsilon',
      { tags: 'Web,Linux', group_id: home },
      { latest_handshake: now - 5_000, expires_at: now - 1_000, total_rx: 0, total_tx: 0, created_at: now - 2_000 },
    ],
    ['zeta', {}, { created_at: now - 6_000 }],
  ];
  for (const [name, body] of fixtures) {
    const r = await write('/peers', 'POST', { name, ...body });
    assert.equal(r.status, 201, JSON.stringify(r.data));
    ids[name] = r.data.peer.id;
  }
  // an extra routed network (q over allowed_ips)
  assert.equal(
    (
      await write(`/peers/${ids['beta-server']}`, 'PUT', {
        allowed_ips: `${(await api(`/peers/${ids['beta-server']}`)).data.peer.address}/32, 192.168.50.0/24`,
      })
    ).status,
    200,
  );
  const { Peer } = s.deps.db.models;
  for (const [name, , cols] of fixtures) await Peer.update(cols, { where: { id: ids[name] } });
  // addresses that sort differently as text and as numbers
  const odd: Record<string, string> = { zeta: '10.78.0.100', 'Gamma 1000': '10.78.1.2', deltaXx: '10.78.0.10', 'Alpha Laptop': '10.78.0.9' };
  for (const [name, address] of Object.entries(odd)) await Peer.update({ address }, { where: { id: ids[name] } });
  all = (await api('/peers?limit=1000')).data.peers;
  assert.equal(all.length, fixtures.length);
});
after(async () => s.close());

describe('GET /peers filters', () => {
  test('without parameters: every peer ordered by id, total = total_all = number of peers', async () => {
    const r = await api('/peers');
    assert.equal(r.status, 200);
    assert.deepEqual(
      r.data.peers.map((p: P) => p.id),
      Object.values(ids).sort((a, b) => a - b),
    );
    assert.equal(r.data.total, 8);
    assert.equal(r.data.total_all, 8);
    assert.equal(r.data.limit, 100);
    assert.equal(r.data.offset, 0);
  });

  test('q matches name, description, address, allowed_ips, hostname and tags, ignoring case', async () => {
    assert.deepEqual((await match('q=ALPHA')).names, ['Alpha Laptop']);
    assert.deepEqual((await match('q=finance')).names, ['Alpha Laptop']);
    assert.deepEqual((await match('q=10.78.1.2')).names, ['Gamma 1000']);
    assert.deepEqual((await match('q=192.168.50')).names, ['beta-server']);
    assert.deepEqual((await match('q=NAS-b')).names, ['beta-server']);
    assert.deepEqual((await match('q=linux')).names, sorted(['Alpha Laptop', 'deltaXx', 'Epsilon']));
    assert.deepEqual((await match('q=%20web%20')).names, sorted(['delta_x', 'Epsilon', 'Gamma 100']), 'trimmed; webserver contains web');
    assert.deepEqual((await match('q=nothing-like-this')).names, []);
    const total = await match('q=gamma');
    assert.deepEqual(total.names, ['Gamma 100', 'Gamma 1000']);
    assert.equal(total.total, 2);
    assert.equal(total.total_all, 8);
  });

  test('q treats % and _ as plain characters', async () => {
    assert.deepEqual((await match('q=100')).names, ['Gamma 100', 'Gamma 1000', 'zeta'], 'zeta by its address 10.78.0.100');
    assert.deepEqual((await match(`q=${encodeURIComponent('100%')}`)).names, ['Gamma 100'], 'the description has 100%; as LIKE, Gamma 1000 would match too');
    assert.deepEqual((await match(`q=${encodeURIComponent('delta_')}`)).names, ['delta_x']);
    assert.deepEqual((await match(`q=${encodeURIComponent('%')}`)).names, ['Gamma 100']);
    assert.deepEqual((await match(`q=${encodeURIComponent('_')}`)).names, ['delta_x']);
    assert.deepEqual((await match(`q=${encodeURIComponent("'")}`)).names, []);
  });

  test('group_id: one group, or none', async () => {
    assert.deepEqual((await match(`group_id=${office}`)).names, sorted(['Alpha Laptop', 'delta_x']));
    assert.deepEqual((await match(`group_id=${home}`)).names, sorted(['beta-server', 'Epsilon']));
    assert.deepEqual((await match('group_id=none')).names, sorted(['Gamma 100', 'Gamma 1000', 'deltaXx', 'zeta']));
    assert.deepEqual((await match('group_id=99999')).names, []);
  });

  test('tag: whole entries, ignoring case', async () => {
    assert.deepEqual((await match('tag=web')).names, sorted(['delta_x', 'Epsilon']), 'not webserver');
    assert.deepEqual((await match('tag=LINUX')).names, sorted(['Alpha Laptop', 'deltaXx', 'Epsilon']));
    assert.deepEqual((await match('tag=webserver')).names, ['Gamma 100']);
    assert.deepEqual((await match('tag=serv')).names, []);
  });

  test('online: exactly the peers whose isOnline the peer view reports', async () => {
    const online = await match('online=true');
    assert.deepEqual(online.names, sorted(['Alpha Laptop', 'beta-server', 'deltaXx']), 'disabled, expired and stale handshakes are offline');
    assert.deepEqual(online.names, sorted(names(all.filter((p) => p.isOnline))));
    const offline = await match('online=false');
    assert.deepEqual(offline.names, sorted(names(all.filter((p) => !p.isOnline))));
    assert.equal(online.total + offline.total, 8);
    assert.deepEqual((await match('online=1')).names, online.names);
  });

  test('enabled', async () => {
    assert.deepEqual((await match('enabled=false')).names, ['delta_x']);
    assert.equal((await match('enabled=true')).total, 7);
    assert.deepEqual((await match('enabled=0')).names, ['delta_x']);
  });

  test('filters combine with AND', async () => {
    assert.deepEqual((await match(`group_id=${office}&enabled=true`)).names, ['Alpha Laptop']);
    assert.deepEqual((await match('tag=linux&online=true')).names, sorted(['Alpha Laptop', 'deltaXx']));
    assert.deepEqual((await match(`q=a&group_id=${home}&online=true`)).names, ['beta-server']);
    assert.deepEqual((await match('q=gamma&online=false&enabled=true&group_id=none')).names, ['Gamma 100', 'Gamma 1000']);
    const none = await match('q=alpha&enabled=false');
    assert.deepEqual(none.names, []);
    assert.equal(none.total, 0);
    assert.equal(none.total_all, 8);
  });
});

describe('GET /peers sort and paging', () => {
  const order = async (sort: string) => {
    const r = await api(`/peers?limit=1000&sort=${sort}`);
    assert.equal(r.status, 200, JSON.stringify(r.data));
    return names(r.data.peers);
  };
  const byKey = (key: (p: P) => number | string, desc = false) =>
    names(
      [...all].sort((a, b) => {
        const ka = key(a);
        const kb = key(b);
        if (ka !== kb) return (ka < kb ? -1 : 1) * (desc ? -1 : 1);
        return a.id - b.id;
      }),
    );

  test('name, case-insensitive, both directions', async () => {
    assert.deepEqual(await order('name'), ['Alpha Laptop', 'beta-server', 'delta_x', 'deltaXx', 'Epsilon', 'Gamma 100', 'Gamma 1000', 'zeta']);
    assert.deepEqual(await order('-name'), ['zeta', 'Gamma 1000', 'Gamma 100', 'Epsilon', 'deltaXx', 'delta_x', 'beta-server', 'Alpha Laptop']);
  });

  test('created_at, last_handshake (never = oldest), traffic (rx + tx), address (numeric), id', async () => {
    const created = (p: P) => Date.parse(p.created_at);
    assert.deepEqual(await order('created_at'), byKey(created));
    assert.deepEqual(await order('created_at'), ['beta-server', 'deltaXx', 'Gamma 1000', 'zeta', 'Alpha Laptop', 'delta_x', 'Epsilon', 'Gamma 100']);
    assert.deepEqual(await order('-created_at'), byKey(created, true));
    const hs = (p: P) => p.latestHandshake ?? -1;
    assert.deepEqual(await order('last_handshake'), byKey(hs));
    assert.equal((await order('last_handshake'))[0], 'zeta');
    assert.deepEqual(await order('-last_handshake'), byKey(hs, true));
    assert.equal((await order('-last_handshake')).at(-1), 'zeta');
    const traffic = (p: P) => p.total_rx + p.total_tx;
    assert.deepEqual(await order('-traffic'), ['beta-server', 'deltaXx', 'Alpha Laptop', 'delta_x', 'Gamma 100', 'Gamma 1000', 'Epsilon', 'zeta']);
    assert.deepEqual(await order('-traffic'), byKey(traffic, true));
    assert.deepEqual(await order('traffic'), byKey(traffic));
    const addr = (p: P) => parseIPv4(p.address)!;
    const numeric = byKey(addr);
    assert.deepEqual(await order('address'), numeric);
    assert.deepEqual(numeric.slice(-4), ['Alpha Laptop', 'deltaXx', 'zeta', 'Gamma 1000'], '.9 < .10 < .100 < 1.2');
    assert.deepEqual(await order('-address'), byKey(addr, true));
    assert.deepEqual(
      await order('-id'),
      byKey((p) => p.id, true),
    );
  });

  test('pages of a filtered, sorted list: same rows as the whole list, total = matches', async () => {
    const whole = await order('-traffic');
    const seen: string[] = [];
    for (let offset = 0; offset < 10; offset += 3) {
      const r = await api(`/peers?sort=-traffic&limit=3&offset=${offset}`);
      assert.equal(r.data.total, 8);
      assert.equal(r.data.limit, 3);
      assert.equal(r.data.offset, offset);
      seen.push(...names(r.data.peers));
    }
    assert.deepEqual(seen, whole);
    const p2 = await api('/peers?enabled=true&sort=name&limit=2&offset=2');
    assert.deepEqual(names(p2.data.peers), ['deltaXx', 'Epsilon']);
    assert.equal(p2.data.total, 7);
    assert.equal(p2.data.total_all, 8);
    const past = await api('/peers?q=gamma&offset=50');
    assert.deepEqual(past.data.peers, []);
    assert.equal(past.data.total, 2);
  });
});

describe('GET /peers bad input and access', () => {
  test('unknown sort, non-boolean online/enabled, bad group_id or tag: 400 naming the parameter', async () => {
    const cases: [string, string][] = [
      ['sort=size', 'sort'],
      ['sort=', 'sort'],
      ['sort=--name', 'sort'],
      ['online=yes', 'online'],
      ['online=', 'online'],
      ['enabled=maybe', 'enabled'],
      ['group_id=abc', 'group_id'],
      ['group_id=1.5', 'group_id'],
      ['group_id=0', 'group_id'],
      ['group_id=-1', 'group_id'],
      ['group_id=NONE', 'group_id'],
      ['tag=a%2Cb', 'tag'],
      [`q=${'x'.repeat(201)}`, 'q'],
      ['q=a&q=b', 'q'],
    ];
    for (const [qs, field] of cases) {
      const r = await api(`/peers?${qs}`);
      assert.equal(r.status, 400, `${qs}: ${r.status}`);
      assert.equal(r.data.ok, false);
      assert.ok(r.data.fields?.[field], `${qs}: fields names ${field}: ${JSON.stringify(r.data.fields)}`);
    }
    const two = await api('/peers?sort=up&online=maybe');
    assert.deepEqual(Object.keys(two.data.fields!).sort(), ['online', 'sort']);
  });

  test('401 without credentials, 403 without the peers scope, allowed for read-only, peers scope and a session', async () => {
    const qs = `/peers?q=a&group_id=${office}&online=true&sort=-traffic` as const;
    const anon = await api(qs, {});
    assert.equal(anon.status, 401);
    assert.equal(anon.data.ok, false);
    const routesOnly = await api(qs, bearer(await apiToken(s, ['routes'])));
    assert.equal(routesOnly.status, 403);
    for (const scope of ['read-only', 'peers']) {
      const r = await api(qs, bearer(await apiToken(s, [scope])));
      assert.equal(r.status, 200, scope);
      assert.deepEqual(names(r.data.peers), ['Alpha Laptop']);
    }
    const { cookie } = await login(s);
    assert.equal((await api(qs, { cookie })).status, 200);
  });
});
