// Security suite: the redirects Caddy answers itself, through the REAL Caddy (bin/caddy, run and
// configured by the sidecar from its own renderer): redirect hosts (`target_url`, with the visitor's
// path appended under preserve_path) and the default site's `redirect_url`. The target is the admin's
// choice and may be any http(s) origin; what must hold is that
// - a target the API takes is stored as one absolute http(s) URL (no control characters, no Caddy
//   placeholder, no credentials), and Caddy sends exactly that; every known bypass and header-injection
//   form (sidecar/test/lib/redirect-bypasses.ts plus CR/LF and placeholder forms) is refused with the
//   field named, or stored that way;
// - the visitor's part (the request path and query, sent raw on the request line) never changes the
//   Location's origin, never leaves the target's path, never splits the header and never expands a
//   placeholder (no request data such as a cookie is echoed).
// Everything listens on loopback; WireGuard is not managed.
//   node --import tsx --test --test-concurrency=1 test/security/redirect-hosts.test.ts
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import { startTestServer, apiToken, bearer, type TestServer } from '../../sidecar/test/lib/server.js';
import { BYPASSES, EVIL } from '../../sidecar/test/lib/redirect-bypasses.js';
import { CADDY, managedCaddyEnv } from '../lib/caddy-env.js';
import { freePort } from '../lib/ports.js';
import { waitFor } from '../lib/wait.js';

const skip = fs.existsSync(CADDY) ? false : `no ${CADDY}: build it with bash scripts/build-caddy.sh`;
const KEEP_PATH = 'keep.redir.test';
const FIXED = 'fixed.redir.test';
const TARGET = 'https://target.example/base';
const FALLBACK = 'https://fallback.example/landing?from=gatehouse';
const SECRET = 'S3CRET-cookie-value';

/** Forms an admin (or a script with a token) could send as a target, beyond the open-redirect list: header injection and Caddy placeholders. */
const INJECTIONS: readonly string[] = [
  'https://t.example/\r\nSet-Cookie: injected=1',
  'https://t.example/\nX-Injected: 1',
  'https://t.example/%0d%0aSet-Cookie:%20injected=1',
  'https://t.example/\u2028x',
  'https://t.example/{http.request.header.Cookie}',
  'https://t.example/?q={http.request.uri}',
  'https://{http.request.host}/',
  'https://t.example/\\{env.HOME\\}',
  'https://user:pw@t.example/',
  'https://t.example:99999/',
  'https://t.example/\u0000',
  `https://${EVIL}/%7Bhttp.request.header.Cookie%7D`,
];

let s: TestServer;
let h: Record<string, string>;
let ports: { http: number; https: number; admin: number; api: number };

before(async () => {
  if (skip) return;
  ports = { http: await freePort(), https: await freePort(), admin: await freePort(), api: await freePort() };
  s = await startTestServer(
    {
      ...managedCaddyEnv(ports),
      GATEHOUSE_PORT: String(ports.api),
      GATEHOUSE_BIND: '127.0.0.1',
      GATEHOUSE_WG_SUBNET: `127.78.${10 + (process.pid % 200)}.0/24`,
      GATEHOUSE_RATE_LIMIT_ADMIN: '1000000',
    },
    { startFeatures: true, listen: true },
  );
  h = bearer(await apiToken(s));
  for (const [domain, preserve_path] of [
    [KEEP_PATH, true],
    [FIXED, false],
  ] as const) {
    const r = await s.req('/api/v1/redirect-hosts', { method: 'POST', headers: h, json: { domain, target_url: TARGET, preserve_path, status_code: 302 } });
    assert.equal(r.status, 201, JSON.stringify(r.data));
  }
  const d = await s.req('/api/v1/settings/default-site', { method: 'PUT', headers: h, json: { mode: 'redirect', redirect_url: FALLBACK } });
  assert.equal(d.status, 200, JSON.stringify(d.data));
  await waitFor(async () => (await raw(KEEP_PATH, '/x')).status === 302, 20_000, { what: 'Caddy serves the redirect host' });
});
after(async () => {
  if (skip) return;
  await s?.close();
});

interface Raw {
  status: number;
  /** every header line as received, names in lower case */
  headers: [string, string][];
}

/** One request written byte for byte (the path as given, whatever it holds) to Caddy's HTTP port. */
function raw(host: string, path: string, extra = ''): Promise<Raw> {
  return new Promise((resolve) => {
    const sock = net.connect(ports.http, '127.0.0.1');
    const chunks: Buffer[] = [];
    sock.setTimeout(10_000, () => sock.destroy());
    sock.on('data', (c: Buffer) => chunks.push(c));
    // Go's server may reset a connection whose request line it refused: what arrived (or nothing, status 0) is the answer
    sock.on('error', () => {});
    sock.on('close', () => {
      const text = Buffer.concat(chunks).toString('latin1');
      sock.setTimeout(0);
      const head = text.split('\r\n\r\n')[0].split('\r\n');
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head[0] ?? '')?.[1] ?? 0);
      const headers = head.slice(1).map((l): [string, string] => {
        const i = l.indexOf(':');
        return [l.slice(0, i).toLowerCase(), l.slice(i + 1).trim()];
      });
      resolve({ status, headers });
    });
    sock.write(Buffer.from(`GET ${path} HTTP/1.1\r\nHost: ${host}\r\nCookie: session=${SECRET}\r\n${extra}Connection: close\r\n\r\n`, 'latin1'));
  });
}
const locations = (r: Raw) => r.headers.filter(([n]) => n === 'location').map(([, v]) => v);

/** Whether a stored target is one absolute http(s) URL in the form Caddy sends as it is. */
function storedSafely(v: string): boolean {
  try {
    const u = new URL(v);
    return (
      /^https?:$/.test(u.protocol) &&
      u.hostname !== '' &&
      !u.username &&
      !u.password &&
      u.href === v &&
      !/[{}]/.test(v) &&
      // printable ASCII only: nothing that ends or folds a header line
      /^[\x21-\x7e]+$/.test(v)
    );
  } catch {
    return false;
  }
}

test(
  'redirect host target_url: every bypass and injection form is refused with the field named, or stored as one plain http(s) URL that Caddy sends as it is',
  { skip, timeout: 300_000 },
  async () => {
    const wrong: string[] = [];
    let refused = 0;
    let stored = 0;
    const forms = [...BYPASSES, ...INJECTIONS];
    for (const [i, bad] of forms.entries()) {
      const domain = `probe-${i}.redir.test`;
      const r = await s.req('/api/v1/redirect-hosts', {
        method: 'POST',
        headers: h,
        json: { domain, target_url: bad, preserve_path: false, status_code: 302 },
      });
      if (r.status === 400 || r.status === 422) {
        refused++;
        if (!r.data?.fields?.target_url) wrong.push(`${JSON.stringify(bad)}: ${r.status} without fields.target_url ${JSON.stringify(r.data).slice(0, 160)}`);
        continue;
      }
      if (r.status !== 201) {
        wrong.push(`${JSON.stringify(bad)}: ${r.status}`);
        continue;
      }
      stored++;
      const kept = r.data.redirect_host.target_url as string;
      if (!storedSafely(kept)) wrong.push(`${JSON.stringify(bad)} stored as ${JSON.stringify(kept)}`);
      // Caddy sends exactly the stored URL
      await waitFor(async () => (await raw(domain, '/')).status === 302, 20_000, { what: `Caddy serves ${domain}` });
      const got = await raw(domain, '/x?y=1');
      const loc = locations(got);
      if (loc.length !== 1 || loc[0] !== kept) wrong.push(`${JSON.stringify(bad)}: Location ${JSON.stringify(loc)}, stored ${JSON.stringify(kept)}`);
      if (got.headers.some(([n]) => n === 'set-cookie' || n === 'x-injected')) wrong.push(`${JSON.stringify(bad)}: an injected header`);
      const del = await s.req(`/api/v1/redirect-hosts/${r.data.redirect_host.id}`, { method: 'DELETE', headers: h });
      assert.equal(del.status, 200);
    }
    assert.deepEqual(wrong, []);
    assert.ok(refused > 0 && stored > 0, `both outcomes occur (refused ${refused}, stored ${stored}), so the probe is not vacuous`);
    const list = await s.req('/api/v1/redirect-hosts', { headers: h });
    assert.deepEqual(
      (list.data.redirect_hosts as { domain: string }[]).map((x) => x.domain).sort(),
      [FIXED, KEEP_PATH].sort(),
      'nothing refused was written, nothing probed was left',
    );
  },
);

test('default site redirect_url: every bypass and injection form is refused with the field named, or stored as one plain http(s) URL', { skip }, async () => {
  const wrong: string[] = [];
  for (const bad of [...BYPASSES, ...INJECTIONS]) {
    const r = await s.req('/api/v1/settings/default-site', { method: 'PUT', headers: h, json: { mode: 'redirect', redirect_url: bad } });
    if (r.status === 400 || r.status === 422) {
      if (!r.data?.fields?.redirect_url) wrong.push(`${JSON.stringify(bad)}: ${r.status} without fields.redirect_url`);
    } else if (r.status !== 200 || !storedSafely(r.data.default_site.redirect_url!)) {
      wrong.push(`${JSON.stringify(bad)}: ${r.status} ${JSON.stringify(r.data?.default_site?.redirect_url)}`);
    }
  }
  const back = await s.req('/api/v1/settings/default-site', { method: 'PUT', headers: h, json: { mode: 'redirect', redirect_url: FALLBACK } });
  assert.equal(back.status, 200);
  assert.deepEqual(wrong, []);
});

/**
 * Request targets a visitor can send: the bypass forms as paths, placeholders (raw and encoded),
 * CR/LF, and absolute-form targets. Dot segments are kept as sent (as Caddy forwards paths), so a
 * Location may read `https://target.example/base/a/../..//x`: it starts with the target and stays on
 * its origin; a browser never sends such a path (it resolves dot segments, `%2e` included, before
 * sending). An absolute-form target (`GET http://other/x`) names its own host, which Go's server takes
 * over the Host header: it gets that host's answer (here the default site), never a Location built
 * from it.
 */
const VISITOR_PATHS: readonly string[] = [
  ...BYPASSES.map((b) => (b.startsWith('/') ? b : `/${b}`)),
  '/{http.request.header.Cookie}',
  '/%7Bhttp.request.header.Cookie%7D',
  '/x?c={http.request.header.Cookie}',
  '/{env.HOME}',
  '/a%0d%0aSet-Cookie:%20injected=1',
  '/a%0aX-Injected:%201',
  '@evil.example/x',
  `http://${EVIL}/x`,
  `https://${EVIL}@target.example/`,
  '*',
];

test(
  'through real Caddy: the visitor path appended under preserve_path never leaves the target origin, always starts with the target, never splits the header, never expands a placeholder',
  { skip, timeout: 120_000 },
  async () => {
    const target = new URL(TARGET);
    // the legitimate case first, so that the probe cannot pass by never redirecting
    const good = await raw(KEEP_PATH, '/docs/a?b=1');
    assert.deepEqual(locations(good), [`${TARGET}/docs/a?b=1`]);
    const wrong: string[] = [];
    let redirected = 0;
    for (const p of VISITOR_PATHS) {
      const r = await raw(KEEP_PATH, p);
      if (r.status === 0 || r.status === 400 || r.status === 404) continue; // Caddy refused the request line or target
      const loc = locations(r);
      if (loc.length !== 1) {
        wrong.push(`${JSON.stringify(p)}: ${r.status} with ${loc.length} Location headers`);
        continue;
      }
      redirected++;
      let u: URL | undefined;
      try {
        u = new URL(loc[0]);
      } catch {
        /* an unparsable Location sends a browser nowhere, but it must not happen either */
      }
      const absoluteForm = /^https?:/i.test(p);
      if (absoluteForm ? loc[0] !== FALLBACK && !loc[0].startsWith(`${TARGET}/`) : !u || u.origin !== target.origin || !loc[0].startsWith(TARGET))
        wrong.push(`${JSON.stringify(p)} -> ${JSON.stringify(loc[0])}`);
      if (loc[0].includes(SECRET)) wrong.push(`${JSON.stringify(p)}: the cookie echoed in ${JSON.stringify(loc[0])}`);
      if (r.headers.some(([n]) => n === 'set-cookie' || n === 'x-injected')) wrong.push(`${JSON.stringify(p)}: an injected header`);
    }
    assert.deepEqual(wrong, [], 'visitor paths that moved the Location');
    assert.ok(redirected > VISITOR_PATHS.length / 2, `most probes were redirected (${redirected} of ${VISITOR_PATHS.length})`);
  },
);

test(
  'through real Caddy: without preserve_path and on the default site, the Location is the stored target whatever the visitor sends',
  { skip, timeout: 120_000 },
  async () => {
    const wrong: string[] = [];
    for (const p of VISITOR_PATHS) {
      for (const [host, expected] of [
        [FIXED, TARGET],
        ['nothing-serves-this.redir.test', FALLBACK],
      ] as const) {
        const r = await raw(host, p);
        if (r.status === 0 || r.status === 400 || r.status === 404) continue;
        const loc = locations(r);
        // an absolute-form target names its own host (see VISITOR_PATHS): the default site's answer
        const want = /^https?:/i.test(p) ? [expected, FALLBACK] : [expected];
        if (loc.length !== 1 || !want.includes(loc[0])) wrong.push(`${host} ${JSON.stringify(p)} -> ${r.status} ${JSON.stringify(loc)}`);
      }
    }
    assert.deepEqual(wrong, []);
    assert.deepEqual(locations(await raw(FIXED, '/anything')), [TARGET]);
    assert.deepEqual(locations(await raw('nothing-serves-this.redir.test', '/anything')), [FALLBACK]);
  },
);
