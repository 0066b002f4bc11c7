// Redirect hosts and the default site through the API, against a real sidecar (SQLite or
// TEST_DATABASE_URL) in the no-proxy mode: every write renders the whole Caddy configuration inside
// its transaction. What Caddy answers is covered by test/e2e/redirects.test.ts.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, apiToken, bearer, type TestServer, apiCall } from './lib/server.js';
import type { ProxyService } from '../src/proxy/service.js';
import { proxyConfigHash } from '../src/proxy/apply.js';
import { at, objAt, type JsonObject } from '../../test/lib/json.js';

let s: TestServer;
let auth: Record<string, string>;
let peer: number;

const proxy = () => s.deps.proxy as ProxyService;
const call = apiCall(
  () => s,
  () => auth,
);
/** The host-routing handler of one of Caddy's servers (undefined when the server is not rendered). */
const hostRoute = async (server: string): Promise<JsonObject | undefined> => {
  const srv = at(await proxy().render(), 'apps', 'http', 'servers', server);
  return srv === undefined ? undefined : objAt(srv, 'routes', 0, 'handle', 0);
};
/** The host map of one of Caddy's servers. */
const hostsOf = async (server: string) => objAt(await hostRoute(server), 'hosts');

before(async () => {
  s = await startTestServer({ GATEHOUSE_RATE_LIMIT_ADMIN: '100000', GATEHOUSE_TLS: 'internal', GATEHOUSE_ADMIN_DOMAIN: 'admin.example.net' });
  auth = bearer(await apiToken(s));
  peer = (await call('/peers', 'POST', { name: 'web' })).data.peer.id;
});
after(async () => s.close());

test('create, list, get, update, disable and delete a redirect host; each rendered, with activity and events', async () => {
  const seen: { type: string }[] = [];
  const off = s.deps.events.onAny((e) => void seen.push(e));
  const r = await call('/redirect-hosts', 'POST', { domain: 'Old.Example.com.', target_url: 'https://new.example.com/base/', description: 'moved' });
  assert.equal(r.status, 201, JSON.stringify(r.data));
  const rh = r.data.redirect_host;
  assert.deepEqual(
    { ...rh, id: 0, created_at: '', updated_at: '' },
    {
      id: 0,
      domain: 'old.example.com',
      target_url: 'https://new.example.com/base/',
      preserve_path: true,
      status_code: 301,
      enabled: true,
      description: 'moved',
      created_at: '',
      updated_at: '',
    },
  );
  // rendered on both servers: the redirect with the request's path and query
  const redirect = {
    routes: [{ handle: [{ handler: 'static_response', status_code: 301, headers: { Location: ['https://new.example.com/base{http.request.uri}'] } }] }],
  };
  assert.deepEqual((await hostsOf('gatehouse_http'))['old.example.com'], redirect);
  assert.deepEqual((await hostsOf('gatehouse_https'))['old.example.com'], redirect);
  assert.equal(proxy().status().config_hash, proxyConfigHash(await proxy().render()), 'what is live is what the database renders');

  assert.deepEqual((await call('/redirect-hosts')).data.redirect_hosts, [rh]);
  assert.deepEqual((await call(`/redirect-hosts/${rh.id}`)).data.redirect_host, rh);

  const u = await call(`/redirect-hosts/${rh.id}`, 'PUT', {
    ...rh,
    preserve_path: false,
    status_code: 302,
    target_url: 'https://new.example.com/landing?from=old',
  });
  assert.equal(u.status, 200, JSON.stringify(u.data));
  assert.equal(u.data.redirect_host.status_code, 302);
  assert.deepEqual(objAt(await hostsOf('gatehouse_http'), 'old.example.com', 'routes', 0, 'handle', 0).headers, {
    Location: ['https://new.example.com/landing?from=old'],
  });

  const d = await call(`/redirect-hosts/${rh.id}`, 'PUT', { enabled: false });
  assert.equal(d.data.redirect_host.enabled, false);
  assert.equal((await hostsOf('gatehouse_http'))['old.example.com'], undefined, 'a disabled redirect host is not rendered');

  const del = await call(`/redirect-hosts/${rh.id}`, 'DELETE');
  assert.equal(del.status, 200);
  assert.deepEqual(del.data.deleted, { id: rh.id, domain: 'old.example.com' });
  assert.equal((await call(`/redirect-hosts/${rh.id}`)).status, 404);
  off();
  assert.deepEqual(
    seen.filter((e) => e.type.startsWith('redirect_host_')).map((e) => e.type),
    ['redirect_host_created', 'redirect_host_updated', 'redirect_host_updated', 'redirect_host_deleted'],
  );
  const rows = (await s.deps.activity.query({ event_type: 'redirect_host_created' })).entries;
  assert.equal(rows[0]?.code, 'redirect.created');
  assert.match(rows[0]?.message ?? '', /old\.example\.com/);
});

test('a domain belongs to a route or a redirect host: 409 with field domain both ways, nothing written', async () => {
  const route = await call('/routes', 'POST', { domain: 'app.example.com', peer_id: peer, target_port: 8080 });
  assert.equal(route.status, 201, JSON.stringify(route.data));
  const before = await s.deps.db.models.RedirectHost.count();
  const clash = await call('/redirect-hosts', 'POST', { domain: 'APP.example.com', target_url: 'https://elsewhere.example.org/' });
  assert.equal(clash.status, 409, JSON.stringify(clash.data));
  assert.equal(clash.data.field, 'domain');
  assert.equal(clash.data.route_id, route.data.route.id);
  assert.equal(await s.deps.db.models.RedirectHost.count(), before);

  const rh = (await call('/redirect-hosts', 'POST', { domain: 'go.example.com', target_url: 'https://elsewhere.example.org/' })).data.redirect_host;
  const routes = await s.deps.db.models.Route.count();
  const back = await call('/routes', 'POST', { domain: 'go.example.com', peer_id: peer, target_port: 8080 });
  assert.equal(back.status, 409, JSON.stringify(back.data));
  assert.equal(back.data.field, 'domain');
  assert.equal(back.data.redirect_host_id, rh.id);
  assert.match(back.data.error!, /redirect host/);
  const rename = await call(`/routes/${route.data.route.id}`, 'PUT', { domain: 'go.example.com' });
  assert.equal(rename.status, 409);
  assert.equal(rename.data.field, 'domain');
  assert.equal(await s.deps.db.models.Route.count(), routes);
  assert.equal((await call(`/routes/${route.data.route.id}`)).data.route.domain, 'app.example.com');

  const second = await call('/redirect-hosts', 'POST', { domain: 'go.example.com', target_url: 'https://other.example.org/' });
  assert.equal(second.status, 409);
  assert.equal(second.data.field, 'domain');
  assert.equal(second.data.redirect_host_id, rh.id);
  const admin = await call('/redirect-hosts', 'POST', { domain: 'admin.example.net', target_url: 'https://other.example.org/' });
  assert.equal(admin.status, 409);
  assert.equal(admin.data.field, 'domain');
  await call(`/redirect-hosts/${rh.id}`, 'DELETE');
});

test('bad input: 400 (or 422 for a redirect that cannot work) with fields, nothing written or rendered', async () => {
  const rh = (await call('/redirect-hosts', 'POST', { domain: 'keep.example.com', target_url: 'https://kept.example.org/' })).data.redirect_host;
  const hash = proxy().status().config_hash;
  const count = await s.deps.db.models.RedirectHost.count();
  const cases: [unknown, string, number][] = [
    [{ domain: 'x.example.com', target_url: 'ftp://files.example.org/' }, 'target_url', 400],
    [{ domain: 'x.example.com', target_url: 'new.example.org' }, 'target_url', 400],
    [{ domain: 'x.example.com', target_url: 'https://new.example.org/{http.request.host}' }, 'target_url', 400],
    [{ domain: 'x.example.com', target_url: 'https://user:pw@new.example.org/' }, 'target_url', 422],
    [{ domain: 'x.example.com', target_url: 'https://new.example.org/', status_code: 303 }, 'status_code', 400],
    [{ domain: 'x.example.com', target_url: 'https://new.example.org/', status_code: '301' }, 'status_code', 400],
    [{ domain: 'not a domain', target_url: 'https://new.example.org/' }, 'domain', 400],
    [{ domain: 'x.example.com' }, 'target_url', 400],
    [{ domain: 'x.example.com', target_url: 'https://new.example.org/', extra: 1 }, 'extra', 400],
    [{ domain: 'x.example.com', target_url: 'https://new.example.org/?a=1' }, 'target_url', 422],
    [{ domain: 'x.example.com', target_url: 'https://X.example.com/other' }, 'target_url', 422],
  ];
  for (const [body, field, status] of cases) {
    const r = await call('/redirect-hosts', 'POST', body);
    assert.equal(r.status, status, `${JSON.stringify(body)}: ${JSON.stringify(r.data)}`);
    assert.ok(r.data.fields?.[field], `${JSON.stringify(body)} names ${field}: ${JSON.stringify(r.data.fields)}`);
  }
  for (const [body, field] of [
    [{ target_url: 'mailto:a@example.org' }, 'target_url'],
    [{ status_code: 200 }, 'status_code'],
    [{ enabled: 'yes' }, 'enabled'],
  ] as const) {
    const r = await call(`/redirect-hosts/${rh.id}`, 'PUT', body);
    assert.equal(r.status, 400, JSON.stringify(r.data));
    assert.ok(r.data.fields?.[field], JSON.stringify(r.data));
  }
  assert.equal(await s.deps.db.models.RedirectHost.count(), count, 'nothing was written');
  assert.deepEqual((await call(`/redirect-hosts/${rh.id}`)).data.redirect_host, rh, 'the redirect host is unchanged');
  assert.equal(proxy().status().config_hash, hash, 'nothing was rendered');
  await call(`/redirect-hosts/${rh.id}`, 'DELETE');
});

test('the default site: Gatehouse 404 page by default, a redirect, custom HTML with its braces escaped; bad input 400 with fields', async () => {
  const initial = await call('/settings/default-site');
  assert.deepEqual(initial.data.default_site, { mode: 'default', redirect_url: null, html: null });
  const fb = async () => objAt(await hostRoute('gatehouse_http')).fallback;
  const page = JSON.stringify(await fb());
  assert.match(page, /Page not found/);
  assert.match(page, /"status_code":404/);

  const red = await call('/settings/default-site', 'PUT', { mode: 'redirect', redirect_url: 'https://www.example.org/' });
  assert.equal(red.status, 200, JSON.stringify(red.data));
  assert.deepEqual(await fb(), {
    routes: [
      { handle: [{ handler: 'static_response', status_code: 302, headers: { Location: ['https://www.example.org/'], 'Cache-Control': ['no-store'] } }] },
    ],
  });

  const html = '<!doctype html><h1>Nothing here</h1><p>{http.request.host} \\{x}</p>';
  const custom = await call('/settings/default-site', 'PUT', { mode: 'custom_html', html });
  assert.equal(custom.status, 200, JSON.stringify(custom.data));
  assert.deepEqual(custom.data.default_site, { mode: 'custom_html', redirect_url: 'https://www.example.org/', html });
  const h = objAt(await fb(), 'routes', 0, 'handle', 0);
  assert.equal(h.status_code, 404);
  assert.deepEqual(objAt(h, 'headers')['Content-Type'], ['text/html; charset=utf-8']);
  assert.equal(h.body, '<!doctype html><h1>Nothing here</h1><p>\\{http.request.host\\} \\\\{x\\}</p>');
  assert.deepEqual((await hostRoute('gatehouse_https'))?.fallback ?? (await fb()), await fb());

  const hash = proxy().status().config_hash;
  for (const [body, field] of [
    [{ mode: 'teapot' }, 'mode'],
    [{ mode: 'redirect', redirect_url: 'javascript:alert(1)' }, 'redirect_url'],
    [{ mode: 'custom_html', html: 'x'.repeat(65537) }, 'html'],
    [{ mode: 'default', other: 1 }, 'other'],
  ] as const) {
    const r = await call('/settings/default-site', 'PUT', body);
    assert.equal(r.status, 400, `${JSON.stringify(body).slice(0, 80)}: ${JSON.stringify(r.data).slice(0, 300)}`);
    assert.ok(r.data.fields?.[field], JSON.stringify(r.data.fields));
  }
  // the mode's value neither sent nor stored: a rule of the stored state, 422
  const none = await call('/settings/default-site', 'PUT', { mode: 'custom_html', html: '' });
  assert.equal(none.status, 422, JSON.stringify(none.data));
  assert.ok(none.data.fields?.html);
  assert.deepEqual((await call('/settings/default-site')).data.default_site.mode, 'custom_html', 'unchanged');
  assert.equal(proxy().status().config_hash, hash, 'nothing was rendered');
  await call('/settings/default-site', 'PUT', { mode: 'redirect', redirect_url: null });
  const back = await call('/settings/default-site', 'PUT', { mode: 'default' });
  assert.equal(back.status, 200);
  assert.match(JSON.stringify(await fb()), /Page not found/);
});

test('a wildcard redirect host needs internal TLS: created under internal, and the Network settings then refuse ACME', async () => {
  const w = await call('/redirect-hosts', 'POST', { domain: '*.legacy.example.com', target_url: 'https://www.example.org/' });
  assert.equal(w.status, 201, JSON.stringify(w.data));
  const acme = await call('/settings/network', 'PUT', { tls_mode: 'acme' });
  assert.equal(acme.status, 422, JSON.stringify(acme.data));
  assert.ok(acme.data.fields?.tls_mode);
  assert.equal((await call('/settings/network')).data.network.tls_mode.value, 'internal', 'unchanged');
  await call(`/redirect-hosts/${w.data.redirect_host.id}`, 'DELETE');
});
