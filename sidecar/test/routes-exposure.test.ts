// Exposure of HTTP routes through the routes API, in no-proxy mode (every write renders
// the Caddy configuration inside its transaction): the fields and their rules (refused writes change
// nothing), the rendered outsider answer of an internal route (first in its host entry, on the
// connection's source address: the tunnel subnet and the active gateways' routed LANs), a gateway
// change re-rendering internal routes, and the internal DNS data naming internal routes with the
// server's tunnel address.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startTestServer, apiToken, bearer, type TestServer, apiCall } from './lib/server.js';
import type { ProxyService } from '../src/proxy/service.js';
import { frameHostMap } from '../src/proxy/render.js';
import { HTTP_SERVER, HTTPS_SERVER } from '../src/proxy/fragments/servers.js';
import type { CaddyRoute, HostEntry } from '../src/proxy/caddy-json.js';
import { waitFor } from '../../test/lib/wait.js';

let s: TestServer;
let auth: Record<string, string>;
let peer: number;
let gateway: { id: number; address: string };

const proxy = () => s.deps.proxy as ProxyService;
const call = apiCall(
  () => s,
  () => auth,
);
const hostsFile = () => fs.readFileSync(path.join(s.dataDir, 'hosts.vpn.internal'), 'utf8');
const hostOf = async (domain: string, server = HTTP_SERVER): Promise<HostEntry> => frameHostMap(await proxy().render(), server)![domain];
type Match = { not?: { remote_ip?: { ranges: string[] } }[] };
const notInternal = (r: CaddyRoute) => (r.match as Match[] | undefined)?.[0]?.not?.[0]?.remote_ip?.ranges;
/** A static_response or subroute handler as the tests read it. */
type Handler = { handler: string; status_code?: number; headers: Record<string, string[]>; body?: string; routes: { handle: Handler[] }[] };
const answerOf = (e: HostEntry) => (e.routes[0].handle as Handler[])[0];

before(async () => {
  s = await startTestServer({ GATEHOUSE_WG_SUBNET: '10.79.0.0/24', GATEHOUSE_RATE_LIMIT_ADMIN: '100000', GATEHOUSE_TLS: 'internal' });
  auth = bearer(await apiToken(s));
  peer = (await call('/peers', 'POST', { name: 'exp-peer' })).data.peer.id;
  const g = (await call('/peers', 'POST', { name: 'exp-gw', is_gateway: true })).data.peer;
  const lan = await call(`/peers/${g.id}`, 'PUT', { allowed_ips: `${g.address}/32,192.168.60.0/24` });
  assert.equal(lan.status, 200, JSON.stringify(lan.data));
  gateway = { id: g.id, address: g.address };
});
after(async () => s.close());

test('a route is public by default; internal with each answer is stored and served back', async () => {
  const pub = await call('/routes', 'POST', { domain: 'pub.exposure.test', peer_id: peer, target_port: 80 });
  assert.equal(pub.status, 201, JSON.stringify(pub.data));
  assert.equal(pub.data.route.exposure, 'public');
  assert.equal(pub.data.route.exposure_answer, null);
  assert.equal((await hostOf('pub.exposure.test')).routes.filter((r) => notInternal(r)).length, 0, 'a public route renders no exposure check');

  const r = await call('/routes', 'POST', { domain: 'int.exposure.test', peer_id: peer, target_port: 80, exposure: 'internal' });
  assert.equal(r.status, 201, JSON.stringify(r.data));
  assert.equal(r.data.route.exposure, 'internal');
  assert.equal(r.data.route.exposure_answer, null, 'null: not_found');
  const page = await call(`/routes/${r.data.route.id}`, 'PUT', { exposure_answer: 'page', exposure_page: '<h1>VPN only {http.request.uri}</h1>' });
  assert.equal(page.status, 200, JSON.stringify(page.data));
  assert.equal(page.data.route.exposure_page, '<h1>VPN only {http.request.uri}</h1>');
  const got = await call(`/routes/${r.data.route.id}`);
  assert.equal(got.data.route.exposure_answer, 'page');
  // switching to L4 sets the route public (HTTP only), as other HTTP-only settings are switched off
  const l4 = await call('/routes', 'POST', { domain: 'l4x.exposure.test', route_type: 'http', peer_id: peer, target_port: 81, exposure: 'internal' });
  const moved = await call(`/routes/${l4.data.route.id}`, 'PUT', { route_type: 'l4', l4_protocol: 'tcp', l4_listen_port: 47001 });
  assert.equal(moved.status, 200, JSON.stringify(moved.data));
  assert.equal(moved.data.route.exposure, 'public');
});

test('refused exposure settings: 400/422 with fields, nothing written', async () => {
  const base = { domain: 'bad.exposure.test', peer_id: peer, target_port: 80 };
  const bad: [Record<string, unknown>, string, number, RegExp?][] = [
    [{ ...base, exposure: 'secret' }, 'exposure', 400],
    [{ ...base, exposure: 'internal', exposure_answer: '404' }, 'exposure_answer', 400],
    [{ ...base, exposure: 'internal', exposure_answer: 'page' }, 'exposure_page', 422],
    [{ ...base, exposure: 'internal', exposure_answer: 'page', exposure_page: '   ' }, 'exposure_page', 422],
    [{ ...base, exposure: 'internal', exposure_answer: 'page', exposure_page: 'x'.repeat(65537) }, 'exposure_page', 400],
    [{ ...base, exposure: 'internal', exposure_answer: 'redirect' }, 'exposure_redirect_url', 422],
    [{ ...base, exposure: 'internal', exposure_answer: 'redirect', exposure_redirect_url: 'javascript:alert(1)' }, 'exposure_redirect_url', 400],
    [{ ...base, exposure: 'internal', exposure_answer: 'redirect', exposure_redirect_url: 'https://x.test/{http.request.uri}' }, 'exposure_redirect_url', 400],
    [{ ...base, exposure: 'internal', exposure_answer: 'redirect', exposure_redirect_url: 'https://u:p@x.test/' }, 'exposure_redirect_url', 422],
    [
      { ...base, exposure: 'internal', exposure_answer: 'redirect', exposure_redirect_url: 'https://BAD.exposure.test./x' },
      'exposure_redirect_url',
      422,
      /itself/,
    ],
    [{ ...base, route_type: 'l4', l4_protocol: 'tcp', l4_listen_port: 47002, exposure: 'internal' }, 'exposure', 422, /HTTP/],
  ];
  const count = await s.deps.db.models.Route.count();
  const loads = proxy().loads;
  for (const [body, field, status, reason] of bad) {
    const r = await call('/routes', 'POST', body);
    assert.equal(r.status, status, `${JSON.stringify(body).slice(0, 200)} → ${r.status} ${JSON.stringify(r.data).slice(0, 300)}`);
    assert.ok(r.data.fields?.[field], `${JSON.stringify(body).slice(0, 200)}: expected fields.${field}, got ${JSON.stringify(r.data.fields)}`);
    if (reason) assert.match(r.data.fields[field], reason);
  }
  assert.equal(await s.deps.db.models.Route.count(), count, 'nothing was written');
  assert.equal(proxy().loads, loads, 'nothing was loaded');
});

test('an internal route renders its outsider answer first, on the tunnel subnet and the gateways’ LANs', async () => {
  const mk = async (domain: string, extra: Record<string, unknown>) => {
    const r = await call('/routes', 'POST', {
      domain,
      peer_id: peer,
      target_port: 80,
      exposure: 'internal',
      acl_enabled: true,
      acl_peer_ids: [peer],
      ...extra,
    });
    assert.equal(r.status, 201, JSON.stringify(r.data));
    return r.data.route.id as number;
  };
  await mk('nf.exposure.test', {});
  await mk('page.exposure.test', { exposure_answer: 'page', exposure_page: 'VPN only, sorry {path}' });
  await mk('html.exposure.test', { exposure_answer: 'page', exposure_page: '  <p>VPN only</p>' });
  await mk('go.exposure.test', { exposure_answer: 'redirect', exposure_redirect_url: 'https://www.example.com/vpn?a=1' });
  const tls = await mk('tls.exposure.test', { https_enabled: true });

  const nf = await hostOf('nf.exposure.test');
  assert.deepEqual(notInternal(nf.routes[0]), ['10.79.0.0/24', '192.168.60.0/24'], 'first: the exposure check, before the ACL');
  assert.ok(nf.routes[1].match, 'then the peer ACL');
  const nfAnswer = answerOf(nf);
  assert.equal(nfAnswer.handler, 'subroute');
  assert.equal(nfAnswer.routes.at(-1)!.handle[0].status_code, 404);
  assert.match(nfAnswer.routes.at(-1)!.handle[0].body ?? '', /Page not found/);

  const text = answerOf(await hostOf('page.exposure.test'));
  assert.equal(text.status_code, 403);
  assert.deepEqual(text.headers['Content-Type'], ['text/plain; charset=utf-8']);
  assert.equal(text.body, 'VPN only, sorry \\{path\\}', 'braces escaped: sent as written');
  const html = answerOf(await hostOf('html.exposure.test'));
  assert.deepEqual(html.headers['Content-Type'], ['text/html; charset=utf-8']);
  const go = answerOf(await hostOf('go.exposure.test'));
  assert.equal(go.status_code, 302);
  assert.deepEqual(go.headers.Location, ['https://www.example.com/vpn?a=1']);
  assert.deepEqual(go.headers['Cache-Control'], ['no-store']);
  // an HTTPS route: the check is on the HTTPS host; the HTTP host redirects to HTTPS as for any route
  assert.deepEqual(notInternal((await hostOf('tls.exposure.test', HTTPS_SERVER)).routes[0]), ['10.79.0.0/24', '192.168.60.0/24']);
  assert.ok(tls > 0);
});

test('a gateway change re-renders internal routes: a disabled gateway’s LAN is an outsider', async () => {
  const id = (await call('/routes', 'POST', { domain: 'gw.exposure.test', peer_id: peer, target_port: 80, exposure: 'internal' })).data.route.id as number;
  assert.ok(id);
  const ranges = () => notInternal(proxy().state.hostEntry(HTTP_SERVER, 'gw.exposure.test')!.routes[0]);
  assert.deepEqual(ranges(), ['10.79.0.0/24', '192.168.60.0/24']);
  assert.equal((await call(`/peers/${gateway.id}`, 'PUT', { enabled: false })).status, 200);
  await waitFor(() => ranges()?.length === 1, 10_000, 'the disabled gateway’s LAN leaves the internal route');
  assert.deepEqual(ranges(), ['10.79.0.0/24']);
  assert.equal((await call(`/peers/${gateway.id}`, 'PUT', { enabled: true })).status, 200);
  await waitFor(() => ranges()?.length === 2, 10_000, 'it comes back with the gateway');
});

test('internal DNS data: internal routes’ names get the server’s tunnel address', async () => {
  const r = await call('/routes', 'POST', { domain: 'dns.exposure.test', peer_id: peer, target_port: 80, exposure: 'internal' });
  await call('/routes', 'POST', { domain: '*.wild.exposure.test', peer_id: peer, target_port: 80, exposure: 'internal' });
  await waitFor(() => hostsFile().includes('10.79.0.1\tdns.exposure.test'), 10_000, 'the hosts file names the internal route');
  const text = hostsFile();
  assert.ok(!text.includes('pub.exposure.test'), 'public routes are not in the internal zone');
  assert.ok(!text.includes('wild.exposure.test'), 'a wildcard cannot be a hosts-file name');
  const rec = await call('/system/dns/records');
  assert.equal(rec.status, 200);
  const mine = rec.data.routes.find((x: { fqdn: string }) => x.fqdn === 'dns.exposure.test');
  assert.deepEqual(mine, { type: 'A', name: 'dns.exposure.test', fqdn: 'dns.exposure.test', address: '10.79.0.1', route_id: r.data.route.id });
  assert.equal((await call(`/routes/${r.data.route.id}/toggle`, 'PUT')).status, 200);
  await waitFor(() => !hostsFile().includes('dns.exposure.test'), 10_000, 'a disabled route leaves the hosts file');
  assert.equal((await call(`/routes/${r.data.route.id}`, 'PUT', { exposure: 'public', enabled: true })).status, 200);
  await waitFor(() => !hostsFile().includes('dns.exposure.test') && hostsFile().includes('nf.exposure.test'), 10_000, 'a public route is not in it');
});
