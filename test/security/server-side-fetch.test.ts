// Security suite: every server-side fetch of a running sidecar (branding
// logo_url / bg_image_url, webhook create, update and test delivery, the licence refresh, the S3
// endpoint of auto-backups, the discovery test and sign-in of OIDC providers, over the same
// everyTarget() and redirectTargets() lists) against
// loopback and private addresses in every spelling (decimal, hex, octal, short, IPv6 forms embedding
// IPv4), DNS names resolving to them, a name resolving to a public and a private address at once, a
// name that changes its answer after the check (rebinding), and redirects to them from an
// allowed-looking first hop. Each must be refused with "not allowed" and nothing more, and nothing
// may reach the listeners behind those addresses. The one exception is an admin's explicit choice
// for one webhook (allow_private): that webhook, and no other, reaches a receiver on loopback.
//
// So that the private addresses are real and nothing leaves this machine, the probes run inside two
// network namespaces this test creates (as root; skipped otherwise):
//   probe  the test process with the sidecar in it; 11.0.0.1/24 and fd01::1/64 on a veth to far,
//          default routes via far; a canary HTTP server on every address of the namespace (127.0.0.1,
//          ::1, 11.0.0.1); /etc/hosts (ip netns exec mounts /etc/netns/<ns>/hosts) names the targets.
//   far    11.0.0.2 (the "public" first hop: a global unicast address), and on its loopback the
//          private targets 10.0.0.1, 192.168.1.1, 172.16.0.1, 169.254.169.254, 100.64.0.1, fd00::2;
//          one HTTP server on all of them that records every hit, serves a PNG at /png and
//          redirects /to/<url>.
// This file runs itself a second time inside `probe` (GH_SSRF_PROBE=inside) and reports its result.
//   node --import tsx --test --test-concurrency=1 test/security/server-side-fetch.test.ts
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';

const INSIDE = process.env.GH_SSRF_PROBE === 'inside';
const FAR = '11.0.0.2';
const FAR_PORT = 8080;
const MARKER = '# gatehouse-ssrf-probe';
const HOSTS = `127.0.0.1 localhost
::1 localhost ip6-localhost
${MARKER}
${FAR} public.probe.test
${FAR} rebind.probe.test
${FAR} rebind-s3.probe.test
127.0.0.1 loop.probe.test
::1 loop6.probe.test
::ffff:127.0.0.1 mapped.probe.test
10.0.0.1 private.probe.test
169.254.169.254 meta.probe.test
${FAR} mixed.probe.test
127.0.0.1 mixed.probe.test
`;

/** The far server: records every hit (local address and URL), /png is an image, /to/<url> a 302 there, /hits the record. */
const FAR_SERVER = `
const http = require('node:http');
const hits = [];
const png = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000' + '1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082', 'hex');
http.createServer((req, res) => {
  if (req.url === '/hits') { res.setHeader('content-type', 'application/json'); return res.end(JSON.stringify(hits)); }
  if (req.url === '/reset') { hits.length = 0; return res.end('ok'); }
  hits.push({ to: req.socket.localAddress.replace(/^::ffff:/, ''), url: req.url });
  if (req.url.startsWith('/to/')) { res.writeHead(302, { location: decodeURIComponent(req.url.slice(4)) }); return res.end(); }
  if (req.url === '/png') { res.writeHead(200, { 'content-type': 'image/png' }); return res.end(png); }
  res.end('far canary');
}).listen(${FAR_PORT}, '::', () => console.log('ready'));
`;

if (!INSIDE) {
  const { createNetwork, skipReason } = await import('../lib/netns.js');
  const reason = skipReason([]);
  test(
    'every server-side fetch refuses loopback, private and rebinding targets (probed inside network namespaces)',
    { skip: reason ?? false, timeout: 900_000 },
    async (t) => {
      const net = await createNetwork({ prefix: 'ssrf' });
      t.after(() => net.cleanup());
      const probe = await net.addNamespace('probe');
      const far = await net.addNamespace('far');
      const link = await net.link(probe, far, '11.0.0.1/24', `${FAR}/24`);
      const ip = (ns: string, ...args: string[]) => net.exec(ns, 'ip', args, { check: true });
      for (const a of ['10.0.0.1/32', '192.168.1.1/32', '172.16.0.1/32', '169.254.169.254/32', '100.64.0.1/32']) await ip(far, 'addr', 'add', a, 'dev', 'lo');
      await ip(far, '-6', 'addr', 'add', 'fd00::2/128', 'dev', 'lo');
      await ip(probe, '-6', 'addr', 'add', 'fd01::1/64', 'dev', link.ifA, 'nodad');
      await ip(far, '-6', 'addr', 'add', 'fd01::2/64', 'dev', link.ifB, 'nodad');
      await ip(probe, 'route', 'add', 'default', 'via', FAR);
      await ip(probe, '-6', 'route', 'add', 'default', 'via', 'fd01::2');
      const etc = `/etc/netns/${probe}`;
      fs.mkdirSync(etc, { recursive: true });
      t.after(() => fs.rmSync(etc, { recursive: true, force: true }));
      fs.writeFileSync(`${etc}/hosts`, HOSTS);
      const farServer = net.spawn(far, process.execPath, ['-e', FAR_SERVER], { stdio: ['ignore', 'pipe', 'pipe'] });
      await new Promise<void>((resolve, reject) => {
        farServer.stdout!.on('data', (c: Buffer) => c.toString().includes('ready') && resolve());
        farServer.once('exit', (code) => reject(new Error(`the far server exited (${code})`)));
      });
      const self = fileURLToPath(import.meta.url);
      // a test run of its own (not a child of this runner: NODE_TEST_CONTEXT unset)
      const r = await net.exec(
        probe,
        'env',
        ['-u', 'NODE_TEST_CONTEXT', process.execPath, '--import', 'tsx', '--test', '--test-concurrency=1', '--test-reporter=tap', self],
        { env: { GH_SSRF_PROBE: 'inside', TEST_DATABASE_URL: '' }, timeoutMs: 840_000 },
      );
      const out = `${r.stdout}\n${r.stderr}`;
      const count = (k: string) => Number(new RegExp(`^# ${k} (\\d+)$`, 'm').exec(out)?.[1] ?? -1);
      t.diagnostic(`inside the namespace: ${count('pass')} passed, ${count('fail')} failed`);
      const failed = out.split('\n').filter((l) => /^\s*not ok /.test(l));
      assert.equal(r.code, 0, `the probes inside the namespace failed:\n${failed.join('\n')}\n\n${out.slice(-6000)}`);
      assert.ok(count('pass') >= 5 && count('fail') === 0, out.slice(-3000));
    },
  );
} else {
  const { startTestServer, apiToken, bearer } = await import('../../sidecar/test/lib/server.js');
  type TestServer = Awaited<ReturnType<typeof startTestServer>>;

  let s: TestServer;
  let h: Record<string, string>;
  let canary: http.Server;
  let CANARY = 0;
  const canaryHits: string[] = [];
  let routeId = 0;

  const farHits = async (): Promise<{ to: string; url: string }[]> =>
    (await fetch(`http://${FAR}:${FAR_PORT}/hits`)).json() as Promise<{ to: string; url: string }[]>;
  const resetFar = () => fetch(`http://${FAR}:${FAR_PORT}/reset`).then((r) => r.text());
  /** What got past the guard: any canary hit on this namespace, any hit on a far address but the public first hop. */
  async function leaks(): Promise<string[]> {
    const far = (await farHits()).filter((x) => x.to !== FAR).map((x) => `${x.to} ${x.url}`);
    return [...canaryHits.map((u) => `canary ${u}`), ...far];
  }

  /** Loopback of this namespace (the canary's port) in every spelling, and names resolving there. */
  const loopbackTargets = (port: number) =>
    [
      '127.0.0.1',
      '127.1',
      '127.0.1',
      '0x7f.1',
      '0x7f.0.0.1',
      '0x7f000001',
      '2130706433',
      '0177.0.0.1',
      '017700000001',
      '0177.1',
      '[::1]',
      '[0:0:0:0:0:0:0:1]',
      '[::ffff:127.0.0.1]',
      '[::ffff:7f00:1]',
      '[0:0:0:0:0:ffff:7f00:1]',
      '[::ffff:0:7f00:1]',
      '[::7f00:1]',
      '[::127.0.0.1]',
      '[64:ff9b::7f00:1]',
      '[2002:7f00:1::1]',
      'localhost',
      'loop.probe.test',
      'loop6.probe.test',
      'mapped.probe.test',
      'mixed.probe.test',
      '11.0.0.1',
      '[fd01::1]',
    ].map((host) => `http://${host}:${port}/canary`);
  /** The private addresses behind far, in every spelling, and names resolving there. */
  const privateTargets = () =>
    [
      '10.0.0.1',
      '10.1',
      '0xa.0.0.1',
      '0x0a000001',
      '167772161',
      '012.0.0.1',
      '192.168.1.1',
      '0xc0a80101',
      '3232235777',
      '172.16.0.1',
      '169.254.169.254',
      '0xa9fea9fe',
      '2852039166',
      '100.64.0.1',
      '[::ffff:10.0.0.1]',
      '[::ffff:a00:1]',
      '[::ffff:0:a00:1]',
      '[::a00:1]',
      '[64:ff9b::a9fe:a9fe]',
      '[64:ff9b:1::a00:1]',
      '[2002:a00:1::1]',
      '[2001::a00:1]',
      '[fd00::2]',
      'private.probe.test',
      'meta.probe.test',
    ].map((host) => `http://${host}:${FAR_PORT}/private`);
  /** Redirects to loopback and private targets from the allowed-looking first hop (by name and by address), also two hops deep. */
  const redirectTargets = (port: number) => {
    const to = (first: string, u: string) => `http://${first}:${FAR_PORT}/to/${encodeURIComponent(u)}`;
    const inner = [
      `http://127.0.0.1:${port}/canary`,
      `http://0x7f.1:${port}/canary`,
      `http://[::ffff:7f00:1]:${port}/canary`,
      `http://loop.probe.test:${port}/canary`,
      `http://10.0.0.1:${FAR_PORT}/private`,
      `http://169.254.169.254:${FAR_PORT}/latest/meta-data`,
      `http://[fd00::2]:${FAR_PORT}/private`,
    ];
    return [...inner.map((u) => to('public.probe.test', u)), ...inner.slice(0, 2).map((u) => to(FAR, u)), to('public.probe.test', to(FAR, inner[0]))];
  };
  const everyTarget = () => [...loopbackTargets(CANARY), ...privateTargets()];

  /** A refusal that says nothing more: no port, status code, address or error text. */
  function saysOnlyNotAllowed(field: unknown, body: unknown): string | null {
    if (field !== 'not allowed') return `field: ${JSON.stringify(field)}`;
    const text = JSON.stringify(body);
    if (text.includes(String(CANARY)) || text.includes(String(FAR_PORT)) || /HTTP \d{3}|ECONN|EHOST|ENET|timed out|resolves to|loopback|private/i.test(text))
      return `the answer tells more: ${text}`;
    return null;
  }

  before(async () => {
    assert.ok(fs.readFileSync('/etc/hosts', 'utf8').includes(MARKER), "this namespace's own /etc/hosts is mounted");
    canary = http.createServer((req, res) => {
      canaryHits.push(`${req.socket.localAddress} ${req.url}`);
      res.end('canary');
    });
    await new Promise<void>((r) => canary.listen(0, '::', () => r()));
    CANARY = (canary.address() as AddressInfo).port;
    // nothing opted in: every use under the default policy
    s = await startTestServer({
      GATEHOUSE_RATE_LIMIT_ADMIN: '100000',
      GATEHOUSE_RATE_LIMIT_LOGIN: '100000',
      GATEHOUSE_WEBHOOK_TIMEOUT: '3',
      GATEHOUSE_PUBLIC_IP: '11.0.0.1',
    });
    h = bearer(await apiToken(s));
    const r = await s.deps.db.models.Route.create({
      domain: 'branded.test',
      route_type: 'http',
      target_kind: 'peer',
      enabled: true,
      https_enabled: true,
      created_at: Date.now(),
      updated_at: Date.now(),
    });
    routeId = Number(r.get('id'));
  });
  after(async () => {
    await s?.close();
    canary?.close();
  });

  const api = <T = never, P extends string = string, M extends string = 'GET'>(p: P, method?: [T] extends [never] ? M : string, json?: unknown) =>
    s.req<T, `/api/v1${P}`, M>(`/api/v1${p}`, { method, headers: h, ...(json !== undefined ? { json } : {}) });
  // the password is set once (the positive control below); later saves keep it and skip the hashing
  const branding = (field: 'logo_url' | 'bg_image_url', url: string, password?: string) =>
    api(`/routes/${routeId}/auth`, 'POST', {
      method: 'email_password',
      email: 'o@example.test',
      ...(password ? { password } : {}),
      session_max_age: 3_600_000,
      [field]: url,
    });

  test('the probe is real: the canary, the far server and its private addresses answer from here, and an allowed URL is fetched', async () => {
    assert.equal(await (await fetch(`http://127.0.0.1:${CANARY}/self`)).text(), 'canary');
    assert.equal(await (await fetch(`http://10.0.0.1:${FAR_PORT}/self`)).text(), 'far canary');
    assert.equal(await (await fetch(`http://[fd00::2]:${FAR_PORT}/self`)).text(), 'far canary');
    const ok = await branding('logo_url', `http://public.probe.test:${FAR_PORT}/png`, 'correct horse battery');
    assert.equal(ok.status, 200, JSON.stringify(ok.data));
    assert.ok(ok.data.route_auth.logo, 'the image from the allowed first hop was stored');
    canaryHits.length = 0;
    await resetFar();
  });

  test('branding logo_url and bg_image_url: loopback, private, and redirects to them are "not allowed", nothing reached', async () => {
    const wrong: string[] = [];
    for (const field of ['logo_url', 'bg_image_url'] as const) {
      for (const url of [...everyTarget(), ...redirectTargets(CANARY)]) {
        const r = await branding(field, url);
        const bad = r.status !== 422 ? `status ${r.status}` : saysOnlyNotAllowed(r.data.fields?.[field], r.data);
        if (bad) wrong.push(`${field} ${url}: ${bad}`);
      }
    }
    assert.deepEqual(wrong, []);
    assert.deepEqual(await leaks(), [], 'requests that got past the guard');
    await resetFar();
  });

  test('webhooks: create and update refuse every target ("not allowed"), a test delivery follows no redirect, and a name that rebinds to loopback after the check is refused', async () => {
    const wrong: string[] = [];
    for (const url of everyTarget()) {
      const r = await api('/webhooks', 'POST', { name: 'probe', url, events: ['peer_online'], enabled: true, secret: 'probe-secret-0123456789' });
      const bad = r.status !== 422 ? `status ${r.status}` : saysOnlyNotAllowed(r.data.fields?.url, r.data);
      if (bad) wrong.push(`create ${url}: ${bad}`);
    }
    const ok = await api('/webhooks', 'POST', {
      name: 'public',
      url: `http://public.probe.test:${FAR_PORT}/hook`,
      events: ['peer_online'],
      enabled: true,
      secret: 'probe-secret-0123456789',
    });
    assert.equal(ok.status, 201, JSON.stringify(ok.data));
    const id = ok.data.webhook.id;
    for (const url of everyTarget().slice(0, 12)) {
      const r = await api(`/webhooks/${id}`, 'PUT', { url });
      const bad = r.status !== 422 ? `status ${r.status}` : saysOnlyNotAllowed(r.data.fields?.url, r.data);
      if (bad) wrong.push(`update ${url}: ${bad}`);
    }
    assert.deepEqual(wrong, []);
    // an allowed first hop that redirects to loopback: the delivery is not delivered, the redirect not followed
    for (const url of redirectTargets(CANARY).slice(0, 3)) {
      const u = await api(`/webhooks/${id}`, 'PUT', { url });
      assert.equal(u.status, 200, JSON.stringify(u.data));
      const t = await api(`/webhooks/${id}/test`, 'POST');
      assert.equal(t.data.delivery.status, 'failed', JSON.stringify(t.data));
      assert.equal(t.data.delivery.last_error, 'HTTP 302');
    }
    // rebinding: saved while the name is public, resolved to loopback at delivery
    assert.equal((await api(`/webhooks/${id}`, 'PUT', { url: `http://rebind.probe.test:${CANARY}/hook` })).status, 200);
    fs.writeFileSync('/etc/hosts', HOSTS.replace(`${FAR} rebind.probe.test`, '127.0.0.1 rebind.probe.test'));
    try {
      const t = await api(`/webhooks/${id}/test`, 'POST');
      assert.equal(t.data.delivery.status, 'failed');
      assert.equal(t.data.delivery.last_error, 'not allowed');
    } finally {
      fs.writeFileSync('/etc/hosts', HOSTS);
    }
    assert.deepEqual(await leaks(), [], 'requests that got past the guard');
    await resetFar();
  });

  test("webhooks with allow_private (an admin's choice per webhook): that webhook reaches a receiver on loopback, also when its name rebinds there; a webhook without it is still refused at save and at delivery; a webhooks token cannot make the choice", async () => {
    const lanHits: string[] = [];
    const lan = http.createServer((req, res) => {
      lanHits.push(`${req.socket.localAddress} ${req.url}`);
      req.resume();
      res.end('ok');
    });
    await new Promise<void>((r) => lan.listen(0, '127.0.0.1', () => r()));
    const LAN = (lan.address() as AddressInfo).port;
    const hook = (name: string, url: string, allow_private?: boolean) => ({
      name,
      url,
      events: ['peer_online'],
      enabled: true,
      secret: 'probe-secret-0123456789',
      ...(allow_private === undefined ? {} : { allow_private }),
    });
    try {
      // without the choice: refused at save, nothing reached
      const plainSave = await api('/webhooks', 'POST', hook('plain', `http://127.0.0.1:${LAN}/plain`));
      assert.equal(plainSave.status, 422);
      assert.equal(saysOnlyNotAllowed(plainSave.data.fields?.url, plainSave.data), null);
      // a token with the webhooks scope may not make the choice
      const scoped = bearer(await apiToken(s, ['webhooks']));
      const denied = await s.req('/api/v1/webhooks', { method: 'POST', headers: scoped, json: hook('scoped', `http://127.0.0.1:${LAN}/scoped`, true) });
      assert.equal(denied.status, 403, JSON.stringify(denied.data));
      // with it (full-access token): saved and delivered to the receiver on loopback
      const lanHook = await api('/webhooks', 'POST', hook('lan', `http://127.0.0.1:${LAN}/lan`, true));
      assert.equal(lanHook.status, 201, JSON.stringify(lanHook.data));
      const t = await api(`/webhooks/${lanHook.data.webhook.id}/test`, 'POST');
      assert.equal(t.data.delivery.status, 'delivered', JSON.stringify(t.data.delivery));
      assert.deepEqual(lanHits, ['127.0.0.1 /lan']);
      // both saved under a name that is public at save time, which then rebinds to loopback: the check at
      // connect time refuses the webhook without the choice and lets the one with it through
      const rebound = `http://rebind.probe.test:${LAN}`;
      const plain = await api('/webhooks', 'POST', hook('plain rebound', `${rebound}/plain`));
      const allowed = await api('/webhooks', 'POST', hook('lan rebound', `${rebound}/allowed`, true));
      assert.deepEqual([plain.status, allowed.status], [201, 201], JSON.stringify([plain.data, allowed.data]));
      fs.writeFileSync('/etc/hosts', HOSTS.replace(`${FAR} rebind.probe.test`, '127.0.0.1 rebind.probe.test'));
      try {
        const refused = await api(`/webhooks/${plain.data.webhook.id}/test`, 'POST');
        assert.equal(refused.data.delivery.status, 'failed');
        assert.equal(refused.data.delivery.last_error, 'not allowed');
        const through = await api(`/webhooks/${allowed.data.webhook.id}/test`, 'POST');
        assert.equal(through.data.delivery.status, 'delivered', JSON.stringify(through.data.delivery));
      } finally {
        fs.writeFileSync('/etc/hosts', HOSTS);
      }
      assert.deepEqual(lanHits, ['127.0.0.1 /lan', '127.0.0.1 /allowed'], 'only the webhooks with the choice reached the receiver');
      assert.deepEqual(await leaks(), [], 'requests that got past the guard');
      for (const w of [lanHook, plain, allowed]) await api(`/webhooks/${w.data.webhook.id}`, 'DELETE');
    } finally {
      lan.close();
      await resetFar();
    }
  });

  test('OIDC providers: the discovery test and the sign-in refuse every target without allow_private ("not allowed", the same words for each), follow no redirect, and a name that rebinds to loopback is refused', async () => {
    const wrong: string[] = [];
    const provider = async (name: string, issuer: string, allow_private = false) => {
      const r = await api('/auth/oidc/providers', 'POST', { name, issuer, client_id: 'probe', allow_private });
      assert.equal(r.status, 201, JSON.stringify(r.data));
      return r.data.provider.id as number;
    };
    const NOT_ALLOWED = 'oidc.test.not_allowed';
    // the targets as https issuers (an http issuer needs allow_private: 422 at save)
    for (const url of everyTarget()) {
      const issuer = url.replace(/^http:/, 'https:').replace(/\/(canary|private)$/, '');
      const id = await provider('probe', issuer);
      const t = await api(`/auth/oidc/providers/${id}/test`, 'POST');
      const r = t.data.result;
      if (t.status !== 200 || r.reachable || r.message_code.code !== NOT_ALLOWED) wrong.push(`test ${issuer}: ${JSON.stringify(t.data)}`);
      else if (r.message.includes(String(CANARY)) || r.message.includes(String(FAR_PORT))) wrong.push(`test ${issuer} tells more: ${r.message}`);
      await api(`/auth/oidc/providers/${id}`, 'DELETE');
    }
    const plain = await api('/auth/oidc/providers', 'POST', { name: 'http', issuer: `http://127.0.0.1:${CANARY}`, client_id: 'probe' });
    if (plain.status !== 422 || !plain.data.fields?.issuer) wrong.push(`http issuer without allow_private saved: ${plain.status}`);
    assert.deepEqual(wrong, []);
    // the sign-in: its discovery goes through the same guard, the page says the provider cannot be reached
    const loop = await provider('loop', `https://127.0.0.1:${CANARY}`);
    const start = await s.req(`/auth/oidc/${loop}/start`, { headers: { accept: 'text/html' } });
    assert.equal(start.status, 502);
    assert.match(String(start.data), /provider_unreachable/);
    await api(`/auth/oidc/providers/${loop}`, 'DELETE');
    // an allowed first hop that redirects to loopback: not followed, even for a provider with allow_private
    for (const url of redirectTargets(CANARY).slice(0, 3)) {
      const id = await provider('redirect', url, true);
      const t = await api(`/auth/oidc/providers/${id}/test`, 'POST');
      assert.equal(t.data.result.reachable, false, JSON.stringify(t.data));
      assert.notEqual(t.data.result.message_code.code, 'oidc.test.ok');
      await api(`/auth/oidc/providers/${id}`, 'DELETE');
    }
    // rebinding: a name that answers public when saved and loopback when fetched
    const rebound = await provider('rebind', `https://rebind.probe.test:${CANARY}`);
    fs.writeFileSync('/etc/hosts', HOSTS.replace(`${FAR} rebind.probe.test`, '127.0.0.1 rebind.probe.test'));
    try {
      const t = await api(`/auth/oidc/providers/${rebound}/test`, 'POST');
      assert.equal(t.data.result.message_code.code, NOT_ALLOWED);
    } finally {
      fs.writeFileSync('/etc/hosts', HOSTS);
    }
    await api(`/auth/oidc/providers/${rebound}`, 'DELETE');
    assert.deepEqual(await leaks(), [], 'requests that got past the guard');
    await resetFar();
  });

  test('auto-backup S3 endpoint: create and update refuse every target, and a run whose endpoint rebinds to loopback is refused with "not allowed" only', async () => {
    const job = (endpoint: string) => ({
      name: `s3-${Math.random().toString(36).slice(2, 8)}`,
      schedule: 'daily',
      keep: 2,
      target: 's3',
      passphrase: 'a long backup passphrase',
      s3: { bucket: 'backups', prefix: '', region: 'us-east-1', endpoint, access_key_id: 'AK', secret_access_key: 'SK' },
    });
    const wrong: string[] = [];
    for (const url of everyTarget()) {
      const r = await api('/settings/autobackup', 'POST', job(url.replace(/\/[^/]*$/, '')));
      const bad = r.status !== 422 ? `status ${r.status}` : saysOnlyNotAllowed(r.data.fields?.['s3.endpoint'], r.data);
      if (bad) wrong.push(`${url}: ${bad}`);
    }
    assert.deepEqual(wrong, []);
    const created = await api('/settings/autobackup', 'POST', job(`http://rebind-s3.probe.test:${CANARY}`));
    assert.equal(created.status, 201, JSON.stringify(created.data));
    const id = created.data.job.id;
    const upd = await api(`/settings/autobackup/${id}`, 'PUT', { s3: { endpoint: `http://0x7f.1:${CANARY}` } });
    assert.equal(upd.status, 422);
    assert.equal(saysOnlyNotAllowed(upd.data.fields?.['s3.endpoint'], upd.data), null);
    fs.writeFileSync('/etc/hosts', HOSTS.replace(`${FAR} rebind-s3.probe.test`, '127.0.0.1 rebind-s3.probe.test'));
    try {
      const run = await api(`/settings/autobackup/${id}/run`, 'POST');
      assert.equal(run.data.job.last_run!.status, 'failed', JSON.stringify(run.data));
      assert.equal(run.data.job.last_run!.error, 'not allowed');
    } finally {
      fs.writeFileSync('/etc/hosts', HOSTS);
    }
    assert.deepEqual(await leaks(), [], 'requests that got past the guard');
  });

  test('licence refresh: a licence service URL on loopback in any spelling, or redirecting there, reaches nothing', { timeout: 300_000 }, async () => {
    const urls = [
      `http://127.1:${CANARY}/refresh`,
      `http://[::ffff:7f00:1]:${CANARY}/refresh`,
      `http://loop.probe.test:${CANARY}/refresh`,
      `http://mixed.probe.test:${CANARY}/refresh`,
      `http://10.0.0.1:${FAR_PORT}/refresh`,
    ];
    for (const url of urls) {
      const l = await startTestServer({ GATEHOUSE_LICENCE_URL: url, GATEHOUSE_RATE_LIMIT_ADMIN: '100000' });
      try {
        const r = await l.req('/api/v1/license/refresh', { method: 'POST', headers: bearer(await apiToken(l)) });
        assert.equal(r.status, 200, JSON.stringify(r.data));
        assert.equal(r.data.refresh.ok, false, url);
        assert.match(r.data.refresh.error!, /not allowed$/, url);
      } finally {
        await l.close();
      }
    }
    // an allowed-looking licence service that redirects to loopback: the redirect is not followed
    const l = await startTestServer({
      GATEHOUSE_LICENCE_URL: `http://public.probe.test:${FAR_PORT}/to/${encodeURIComponent(`http://127.0.0.1:${CANARY}/refresh`)}`,
    });
    try {
      const r = await l.req('/api/v1/license/refresh', { method: 'POST', headers: bearer(await apiToken(l)) });
      assert.equal(r.data.refresh.ok, false);
      assert.match(r.data.refresh.error!, /HTTP 302/);
    } finally {
      await l.close();
    }
    assert.deepEqual(await leaks(), [], 'requests that got past the guard');
  });
}
