// util/outbound.ts, the request-forgery guard of every server-side fetch: address classification (the
// numeric IPv4 forms, IPv4 embedded in IPv6), refusal before any connection, the pinned connection,
// redirects, and the S3 client's agents. A canary HTTP server on loopback counts what reaches it.
// The full probe of every fetch of a running sidecar (DNS names, redirects from an allowed first hop)
// is test/security/server-side-fetch.test.ts.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  addressProblem,
  FetchFailed,
  guardedFetch,
  guardedRequest,
  isNotAllowed,
  NotAllowed,
  resolveAllowed,
  type OutboundPolicy,
} from '../src/util/outbound.js';
import { s3Target } from '../src/backup/targets.js';

let canary: http.Server;
let port = 0;
const hits: string[] = [];
before(async () => {
  canary = http.createServer((req, res) => {
    hits.push(req.url ?? '');
    if (req.url === '/short') {
      // announces 100 bytes, sends 10 and hangs up
      res.writeHead(200, { 'content-length': '100' });
      res.write('0123456789');
      setTimeout(() => res.destroy(), 20);
      return;
    }
    if (req.url?.startsWith('/to/')) {
      res.writeHead(302, { location: decodeURIComponent(req.url.slice(4)) });
      return res.end();
    }
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end('canary');
  });
  await new Promise<void>((r) => canary.listen(0, '127.0.0.1', r));
  port = (canary.address() as AddressInfo).port;
});
after(() => canary.close());

const closed: OutboundPolicy = { allowPrivate: false };
const open: OutboundPolicy = { allowPrivate: true };
const get = (url: string, policy: OutboundPolicy, maxRedirects = 0) => guardedRequest(url, { policy, timeoutMs: 5000, maxBytes: 1 << 16, maxRedirects });

test('addresses: only global unicast; IPv4 in any numeric form; IPv6 forms that embed IPv4 judged by it or refused whole', () => {
  for (const ip of [
    '127.0.0.1',
    '127.1',
    '0x7f.1',
    '0x7f000001',
    '2130706433',
    '0177.0.0.1',
    '017700000001',
    '10.1',
    '0xa.0.0.1',
    '167772161',
    '0.0.0.0',
    '0',
    '169.254.169.254',
    '100.64.0.1',
    '192.0.0.8',
    '198.18.0.1',
    '224.0.0.1',
    '255.255.255.255',
    '::1',
    '::',
    '::7f00:1',
    '::127.0.0.1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:0:7f00:1',
    '::ffff:0:a00:1',
    '64:ff9b::7f00:1',
    '64:ff9b::a9fe:a9fe',
    '64:ff9b:1::808:808',
    '2002:7f00:1::',
    '2002:808:808::1',
    '2001::1',
    '2001:0:4136:e378:8000:63bf:3fff:fdd2',
    '2001:db8::1',
    'fe80::1',
    'fe80::1%eth0',
    'fc00::1',
    'fd00::1',
    'ff02::1',
    '100::1',
    '[::1]',
  ]) {
    assert.ok(addressProblem(ip), `${ip} refused`);
  }
  for (const ip of ['8.8.8.8', '11.0.0.2', '93.184.216.34', '2606:4700:4700::1111', '::ffff:8.8.8.8', '64:ff9b::808:808', '[2606:4700:4700::1111]'])
    assert.equal(addressProblem(ip), null, `${ip} allowed`);
  assert.match(addressProblem('8.8.8.8', ['8.8.8.8'])!, /this server/);
  assert.match(addressProblem('::ffff:8.8.8.8', ['8.8.8.8'])!, /this server/);
});

test('a refused target: NotAllowed with the message "not allowed" only, and no connection is made', async () => {
  const before = hits.length;
  for (const host of ['127.0.0.1', '127.1', '0x7f.1', '2130706433', '0177.0.0.1', '[::ffff:127.0.0.1]', '[::ffff:7f00:1]', '[::1]', 'localhost']) {
    const err = await get(`http://${host}:${port}/x`, closed).then(
      () => null,
      (e: Error) => e,
    );
    assert.ok(err instanceof NotAllowed, `${host}: ${err}`);
    assert.equal(err.message, 'not allowed');
  }
  assert.equal(hits.length, before, 'the canary saw nothing');
  // the same forms reach it when the use may go to private addresses (the canary is real)
  assert.equal((await get(`http://127.1:${port}/ok`, open)).body.toString(), 'canary');
  assert.equal((await get(`http://0x7f.1:${port}/ok`, open)).status, 200);
});

test('a name is checked on every address it resolves to, and the connection goes to the address checked', async () => {
  const mixed: OutboundPolicy = {
    allowPrivate: false,
    lookup: async () => [
      { address: '8.8.8.8', family: 4 },
      { address: '127.0.0.1', family: 4 },
    ],
  };
  await assert.rejects(resolveAllowed('mixed.test', mixed), NotAllowed);
  // the resolver answers a public address to the check and loopback afterwards: there is no afterwards
  let calls = 0;
  const rebinding: OutboundPolicy = {
    allowPrivate: false,
    lookup: async () => (calls++ === 0 ? [{ address: '127.0.0.1', family: 4 }] : [{ address: '8.8.8.8', family: 4 }]),
  };
  const before = hits.length;
  await assert.rejects(get(`http://rebind.test:${port}/x`, rebinding), NotAllowed);
  assert.equal(calls, 1, 'resolved once per connection');
  assert.equal(hits.length, before);
  // a name that does not resolve: FetchFailed, not NotAllowed
  await assert.rejects(resolveAllowed('nothing.invalid', { allowPrivate: false, lookup: async () => [] }), FetchFailed);
});

test('redirects: not followed unless asked, each hop checked, a cap on their number, only http(s)', async () => {
  const to = (u: string) => `http://127.0.0.1:${port}/to/${encodeURIComponent(u)}`;
  assert.equal((await get(to('/ok'), open)).status, 302, 'maxRedirects 0: the 3xx is the answer');
  assert.equal((await get(to('/ok'), open, 1)).body.toString(), 'canary');
  await assert.rejects(get(to(to('/ok')), open, 1), (e: FetchFailed) => e.kind === 'redirects');
  await assert.rejects(get(to('file:///etc/passwd'), open, 2), NotAllowed);
  await assert.rejects(get(to('gopher://127.0.0.1:1/'), open, 2), NotAllowed);
});

test('an answer cut short is a failure, not a shorter body; a body over maxBytes fails or is truncated as asked', async () => {
  await assert.rejects(get(`http://127.0.0.1:${port}/short`, open), (e: FetchFailed) => e instanceof FetchFailed && e.kind === 'connect');
  await assert.rejects(
    guardedRequest(`http://127.0.0.1:${port}/ok`, { policy: open, timeoutMs: 5000, maxBytes: 3, maxRedirects: 0 }),
    (e: FetchFailed) => e.kind === 'too_large',
  );
  const cut = await guardedRequest(`http://127.0.0.1:${port}/ok`, { policy: open, timeoutMs: 5000, maxBytes: 3, overflow: 'truncate', maxRedirects: 0 });
  assert.equal(cut.body.toString(), 'can');
});

test('guardedFetch (the licence service) fails as fetch fails, with the cause "not allowed"; the S3 client is refused on its connection', async () => {
  const f = guardedFetch(closed);
  const err = await f(`http://127.1:${port}/x`, { method: 'POST', body: '{}' }).then(
    () => null,
    (e: TypeError) => e,
  );
  assert.ok(err instanceof TypeError);
  assert.deepEqual(err.cause, { message: 'not allowed' });
  const ok = await guardedFetch(open)(`http://127.0.0.1:${port}/x`, { method: 'POST', body: '{}' });
  assert.equal(await ok.text(), 'canary');

  const before = hits.length;
  const s3 = s3Target({ bucket: 'b', prefix: '', region: 'us-east-1', endpoint: `http://127.0.0.1:${port}`, accessKeyId: 'a', secretAccessKey: 'b' }, closed);
  const e = await s3.put('gatehouse-backup-x.json', Buffer.from('{}')).then(
    () => null,
    (x: unknown) => x,
  );
  assert.ok(isNotAllowed(e), String(e));
  assert.equal(hits.length, before, 'the S3 client made no request');
});
