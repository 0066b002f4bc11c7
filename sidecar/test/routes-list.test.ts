// GET /routes search, filters, sort and paging (the admin UI's routes list) through a real
// sidecar (SQLite, or PostgreSQL with TEST_DATABASE_URL), Caddy not managed: routes are created
// through the API and rendered, creation times are spread out in the database afterwards.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, apiToken, bearer, login, type TestServer } from './lib/server.js';
import type { Route } from './lib/protocol.js';

let s: TestServer;
let h: Record<string, string>;
const api = <P extends string>(p: P, headers: Record<string, string> = h) => s.req<never, `/api/v1${P}`, 'GET'>(`/api/v1${p}`, { headers });
const write = <T = never, P extends string = string, M extends string = 'GET'>(p: P, method: [T] extends [never] ? M : string, json: unknown) =>
  s.req<T, `/api/v1${P}`, M>(`/api/v1${p}`, { method, json, headers: h });

const peer: Record<string, number> = {};
type R = Route;
let all: R[] = [];
const domains = (rs: R[]) => rs.map((r) => r.domain);
const sorted = (xs: string[]) => [...xs].sort();

async function match(qs: string): Promise<{ domains: string[]; total: number; total_all: number }> {
  const r = await api(`/routes?limit=1000&${qs}`);
  assert.equal(r.status, 200, `${qs}: ${JSON.stringify(r.data)}`);
  assert.equal(r.data.total, r.data.routes.length, `${qs}: total is the number of matches`);
  return { domains: sorted(domains(r.data.routes)), total: r.data.total, total_all: r.data.total_all };
}

before(async () => {
  s = await startTestServer({ GATEHOUSE_RATE_LIMIT_ADMIN: '100000', GATEHOUSE_WG_PORT: '51997', GATEHOUSE_PUBLIC_IP: '203.0.113.7' });
  h = bearer(await apiToken(s));
  for (const [name, extra] of [
    ['Laptop Jane', {}],
    ['nas-server', {}],
    ['home-gw', { is_gateway: true, api_port: 9876 }],
  ] as const) {
    const r = await write('/peers', 'POST', { name, ...extra });
    assert.equal(r.status, 201, JSON.stringify(r.data));
    peer[name] = r.data.peer.id;
  }
  const now = Date.now();
  const fixtures: [Record<string, unknown>, number][] = [
    [{ domain: 'app.example.com', peer_id: peer['Laptop Jane'], target_port: 8080, description: 'Main App' }, now - 4_000],
    [{ domain: 'files.example.org', peer_id: peer['nas-server'], target_port: 80, description: '100% uptime' }, now - 1_000],
    [
      {
        domain: 'intranet.example.net',
        target_kind: 'gateway',
        target_peer_id: peer['home-gw'],
        target_lan_host: '192.168.1.20',
        target_lan_port: 80,
        description: 'under_score',
      },
      now - 6_000,
    ],
    [{ domain: 'ssh.example.com', route_type: 'l4', peer_id: peer['Laptop Jane'], target_port: 22, l4_protocol: 'tcp', l4_listen_port: 2222 }, now - 2_000],
    [{ domain: 'old.example.com', peer_id: peer['nas-server'], target_port: 81, enabled: false, description: 'underXscore' }, now - 5_000],
    [{ domain: 'bücher.example.com', peer_id: peer['Laptop Jane'], target_port: 8081, description: '1000 pages' }, now - 3_000],
  ];
  for (const [body, created] of fixtures) {
    const r = await write('/routes', 'POST', body);
    assert.equal(r.status, 201, JSON.stringify(r.data));
    await s.deps.db.models.Route.update({ created_at: created }, { where: { id: r.data.route.id } });
  }
  all = (await api('/routes?limit=1000')).data.routes;
  assert.equal(all.length, fixtures.length);
});
after(async () => s.close());

describe('GET /routes filters', () => {
  test('without parameters: every route by id; the old fields stay, limit/offset/total_all are added', async () => {
    const r = await api('/routes');
    assert.equal(r.status, 200);
    const ids = r.data.routes.map((x: R) => x.id);
    assert.deepEqual(
      ids,
      [...ids].sort((a: number, b: number) => a - b),
    );
    assert.equal(r.data.total, 6);
    assert.equal(r.data.total_all, 6);
    assert.equal(r.data.limit, 100);
    assert.equal(r.data.offset, 0);
    assert.ok('domain' in r.data.routes[0] && 'route_type' in r.data.routes[0]);
  });

  test('q matches domain (also written in Unicode), description, LAN host and the target peer name, ignoring case', async () => {
    assert.deepEqual((await match('q=EXAMPLE.ORG')).domains, ['files.example.org']);
    assert.deepEqual((await match('q=main%20app')).domains, ['app.example.com']);
    assert.deepEqual((await match('q=192.168.1.2')).domains, ['intranet.example.net']);
    assert.deepEqual((await match('q=laptop%20JANE')).domains, sorted(['app.example.com', 'ssh.example.com', 'xn--bcher-kva.example.com']));
    assert.deepEqual((await match('q=home-gw')).domains, ['intranet.example.net'], 'a gateway route by its gateway peer');
    assert.deepEqual((await match(`q=${encodeURIComponent('bücher')}`)).domains, ['xn--bcher-kva.example.com']);
    assert.deepEqual((await match('q=xn--bcher')).domains, ['xn--bcher-kva.example.com']);
    const none = await match('q=no-such-route');
    assert.deepEqual(none.domains, []);
    assert.equal(none.total_all, 6);
  });

  test('q treats % and _ as plain characters', async () => {
    assert.deepEqual((await match('q=100')).domains, sorted(['files.example.org', 'xn--bcher-kva.example.com']));
    assert.deepEqual((await match(`q=${encodeURIComponent('100%')}`)).domains, ['files.example.org']);
    assert.deepEqual((await match(`q=${encodeURIComponent('under_')}`)).domains, ['intranet.example.net']);
    assert.deepEqual((await match(`q=${encodeURIComponent('%')}`)).domains, ['files.example.org']);
    assert.deepEqual((await match(`q=${encodeURIComponent("'; DROP TABLE routes; --")}`)).domains, []);
    assert.equal((await match('')).total, 6);
  });

  test('type, peer_id (peer or gateway target), enabled, and their combinations', async () => {
    assert.deepEqual((await match('type=l4')).domains, ['ssh.example.com']);
    assert.equal((await match('type=http')).total, 5);
    assert.deepEqual((await match(`peer_id=${peer['nas-server']}`)).domains, sorted(['files.example.org', 'old.example.com']));
    assert.deepEqual((await match(`peer_id=${peer['home-gw']}`)).domains, ['intranet.example.net']);
    assert.deepEqual((await match('peer_id=999999')).domains, []);
    assert.deepEqual((await match('enabled=false')).domains, ['old.example.com']);
    assert.equal((await match('enabled=true')).total, 5);
    assert.deepEqual((await match(`peer_id=${peer['nas-server']}&enabled=true`)).domains, ['files.example.org']);
    assert.deepEqual((await match(`peer_id=${peer['Laptop Jane']}&type=http&q=app`)).domains, ['app.example.com']);
    assert.deepEqual((await match('type=l4&enabled=false')).domains, []);
  });
});

describe('GET /routes sort and paging', () => {
  const order = async (sort: string) => {
    const r = await api(`/routes?limit=1000&sort=${sort}`);
    assert.equal(r.status, 200, JSON.stringify(r.data));
    return domains(r.data.routes);
  };

  test('domain, created_at, type, id in both directions', async () => {
    const byDomain = sorted(domains(all));
    assert.deepEqual(await order('domain'), byDomain);
    assert.deepEqual(await order('-domain'), [...byDomain].reverse());
    assert.deepEqual(await order('created_at'), [
      'intranet.example.net',
      'old.example.com',
      'app.example.com',
      'xn--bcher-kva.example.com',
      'ssh.example.com',
      'files.example.org',
    ]);
    assert.deepEqual(await order('-created_at'), [
      'files.example.org',
      'ssh.example.com',
      'xn--bcher-kva.example.com',
      'app.example.com',
      'old.example.com',
      'intranet.example.net',
    ]);
    assert.deepEqual(await order('type'), [...byDomain.filter((d) => d !== 'ssh.example.com'), 'ssh.example.com']);
    assert.deepEqual(await order('-type'), ['ssh.example.com', ...byDomain.filter((d) => d !== 'ssh.example.com')]);
    assert.deepEqual(await order('-id'), domains([...all].reverse()));
  });

  test('pages of a filtered, sorted list', async () => {
    const whole = await order('domain');
    const seen: string[] = [];
    for (let offset = 0; offset < 8; offset += 4) {
      const r = await api(`/routes?sort=domain&limit=4&offset=${offset}`);
      assert.equal(r.data.total, 6);
      assert.equal(r.data.limit, 4);
      assert.equal(r.data.offset, offset);
      seen.push(...domains(r.data.routes));
    }
    assert.deepEqual(seen, whole);
    const p = await api('/routes?type=http&sort=-domain&limit=2&offset=1');
    assert.deepEqual(domains(p.data.routes), ['old.example.com', 'intranet.example.net']);
    assert.equal(p.data.total, 5);
    assert.equal(p.data.total_all, 6);
  });
});

describe('GET /routes bad input and access', () => {
  test('unknown sort or type, non-boolean enabled, bad peer_id: 400 naming the parameter', async () => {
    const cases: [string, string][] = [
      ['sort=name', 'sort'],
      ['sort=-', 'sort'],
      ['type=tcp', 'type'],
      ['enabled=yes', 'enabled'],
      ['peer_id=abc', 'peer_id'],
      ['peer_id=1.5', 'peer_id'],
      ['peer_id=0', 'peer_id'],
      [`q=${'x'.repeat(201)}`, 'q'],
      ['limit=0', 'limit'],
    ];
    for (const [qs, field] of cases) {
      const r = await api(`/routes?${qs}`);
      assert.equal(r.status, 400, `${qs}: ${r.status}`);
      assert.equal(r.data.ok, false);
      assert.ok(r.data.fields?.[field], `${qs}: fields names ${field}: ${JSON.stringify(r.data.fields)}`);
    }
  });

  test('401 without credentials, 403 without the routes scope, allowed for read-only, routes scope and a session', async () => {
    const qs = `/routes?q=example&peer_id=${peer['nas-server']}&enabled=true&sort=-domain` as const;
    const anon = await api(qs, {});
    assert.equal(anon.status, 401);
    assert.equal(anon.data.ok, false);
    assert.equal((await api(qs, bearer(await apiToken(s, ['peers'])))).status, 403);
    for (const scope of ['read-only', 'routes']) {
      const r = await api(qs, bearer(await apiToken(s, [scope])));
      assert.equal(r.status, 200, scope);
      assert.deepEqual(domains(r.data.routes), ['files.example.org']);
    }
    const { cookie } = await login(s);
    assert.equal((await api(qs, { cookie })).status, 200);
  });
});
