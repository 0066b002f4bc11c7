// Bad input: names that end up in headers and paths.
// - Header injection: every admin GET endpoint is called (with the ids of real records whose names
//   are awkward, download=1, each export format, format=download), and every Content-Disposition
//   any of them sets must be one clean `attachment; filename="<safe>"` (no CR/LF, quotes, slashes,
//   leading dot); the peer config download, both log exports and the backup download must be among
//   them; endpoints added later are covered by the same walk.
// - Path traversal: uploads (branding images, backup restore) with hostile file names and field
//   names land only under <data>/branding with names of our own, or nowhere; downloads (admin UI
//   files, API docs assets, branding images, path parameters) never serve a file from outside
//   their directory.
//   bash scripts/test-reliability.sh test/reliability/bad-input-names.test.ts
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { startTestServer, apiToken, bearer, type TestServer } from '../../sidecar/test/lib/server.js';
import { fullPath } from '../../sidecar/src/http/registry.js';
import { createRoute } from '../../sidecar/test/route-auth-helpers.js';
import { recordFigure } from './lib/figures.js';

const CASE = 'bad input: names';
let s: TestServer;
let h: Record<string, string>;
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');
// Names peers may have (the name rule allows letters, digits, spaces and . _ - @ ( ) + ') that are
// awkward in a header or a path, and names the rule must refuse (quotes, slashes, ; = , and controls).
const ALLOWED_AWKWARD = ["O'Brien's (laptop) + dev@home", 'Ünïcødé Næme 名前', 'a..b', 'name   with   spaces', 'x'.repeat(60), "1'2'3"];
const HOSTILE = [
  'a"; filename="evil.exe',
  "x'; filename*=UTF-8''evil.sh",
  '../../etc/passwd',
  '..\\..\\windows',
  '.hidden',
  '..',
  'semi;colon,comma=eq',
  'evil\r\nSet-Cookie: x=1',
  'evil\nX-Injected: 1',
];

before(async () => {
  s = await startTestServer({ GATEHOUSE_RATE_LIMIT_ADMIN: '1000000', GATEHOUSE_RATE_LIMIT_LOGIN: '1000000' });
  h = bearer(await apiToken(s));
});
after(async () => s.close());

/** A raw GET (the path is sent exactly as written, no URL normalisation by the client). */
function rawGet(p: string, host = '127.0.0.1'): Promise<{ status: number; head: string; body: string }> {
  const u = new URL(s.url);
  return new Promise((resolve, reject) => {
    const sock = net.connect(Number(u.port), u.hostname);
    let data = '';
    sock.setEncoding('latin1');
    sock.on('data', (d) => (data += d));
    sock.on('error', reject);
    sock.on('end', () => {
      const i = data.indexOf('\r\n\r\n');
      resolve({ status: Number(data.slice(9, 12)), head: data.slice(0, i), body: data.slice(i + 4) });
    });
    sock.write(`GET ${p} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
  });
}

const SAFE_DISPOSITION = /^attachment; filename="([A-Za-z0-9][A-Za-z0-9._-]*)"$/;

test('Content-Disposition: every download names a safe file, whatever the record is called', async () => {
  const peers: number[] = [];
  for (const name of ALLOWED_AWKWARD) {
    const r = await s.req('/api/v1/peers', { method: 'POST', headers: h, json: { name } });
    if (r.status === 201) peers.push(r.data.peer.id);
    else assert.equal(r.status, 400, `${JSON.stringify(name)}: ${r.status} ${JSON.stringify(r.data)}`);
  }
  assert.ok(peers.length >= 4, `awkward but valid peer names were created (${peers.length})`);
  for (const name of HOSTILE) {
    const r = await s.req('/api/v1/peers', { method: 'POST', headers: h, json: { name } });
    assert.equal(r.status, 400, `a name with quotes, slashes or controls is refused: ${JSON.stringify(name)} ${r.status}`);
  }
  // every admin GET endpoint, with each hostile peer's id wherever an id goes
  const seen = new Map<string, string>();
  const gets = s.endpoints.filter((e) => e.method === 'GET' && e.auth === 'admin' && !e.rawResponse?.contentType.startsWith('text/event-stream'));
  let calls = 0;
  for (const e of gets) {
    const ids = /:[A-Za-z_]*id\b/i.test(fullPath(e)) ? peers : [0];
    for (const id of ids) {
      for (const q of ['?download=1', '?download=1&format=csv', '?format=json', '?format=download']) {
        const p = fullPath(e).replace(/:([A-Za-z_]+)/g, (_m, n: string) => (n === 'id' || /id$/i.test(n) ? String(id) : 'no-such-thing')) + q;
        const r = await fetch(s.url + p, { headers: { ...h, 'x-backup-passphrase': 'a passphrase for the backup' }, redirect: 'manual' });
        calls++;
        const cd = r.headers.get('content-disposition');
        await r.arrayBuffer();
        if (cd === null) continue;
        const label = `${e.method} ${fullPath(e)}${q} (id ${id})`;
        assert.match(cd, SAFE_DISPOSITION, `${label}: ${JSON.stringify(cd)}`);
        const file = SAFE_DISPOSITION.exec(cd)![1];
        assert.ok(file.length <= 128, `${label}: ${file}`);
        seen.set(fullPath(e), file);
      }
    }
  }
  for (const required of ['/api/v1/peers/:id/config', '/api/v1/logs/activity/export', '/api/v1/logs/access/export', '/api/v1/settings/backup']) {
    assert.ok(
      [...seen.keys()].some((k) => k === required),
      `${required} sent no Content-Disposition (seen: ${[...seen.keys()].join(', ')})`,
    );
  }
  recordFigure({ test: CASE, figure: 'GET calls walked for Content-Disposition / endpoints that set it', value: `${calls} / ${seen.size}` });
});

test('path traversal: uploads land under <data>/branding with our names; downloads never leave their directory', async () => {
  // a marker file next to the data directory: nothing may read or overwrite it
  const outside = path.join(path.dirname(s.dataDir), `gatehouse-traversal-marker-${process.pid}.png`);
  fs.writeFileSync(outside, 'MARKER');
  try {
    const { id } = await createRoute(s, { domain: `traversal-${process.pid}.example.test` });
    const cfg = await s.req(`/api/v1/routes/${id}/auth`, {
      method: 'POST',
      headers: h,
      json: { method: 'email_password', email: 'o@example.test', password: 'correct horse', session_max_age: 86_400_000 },
    });
    assert.equal(cfg.status, 200, JSON.stringify(cfg.data));
    const names = [`../../${path.basename(outside)}`, `..%2F..%2F${path.basename(outside)}`, outside, '..\\..\\x.png', '.png', 'x.png\u0000.sh', '/etc/passwd'];
    for (const name of names) {
      for (const seg of ['logo', 'bg-image']) {
        const fd = new FormData();
        fd.append('file', new Blob([new Uint8Array(PNG)], { type: 'image/png' }), name);
        const r = await s.req(`/api/v1/routes/${id}/branding/${seg}`, { method: 'POST', headers: h, body: fd });
        assert.equal(r.status, 200, `${seg} named ${JSON.stringify(name)}: ${r.status} ${JSON.stringify(r.data)}`);
      }
    }
    // the backup restore upload: the document's file name is never used either
    for (const name of names) {
      const fd = new FormData();
      fd.append('passphrase', 'a passphrase for the backup');
      fd.append('file', new Blob([new Uint8Array(Buffer.from('{"not":"a backup"}'))], { type: 'application/json' }), name);
      const r = await s.req('/api/v1/settings/backup/restore?mode=merge&dry_run=1', { method: 'POST', headers: h, body: fd });
      assert.equal(r.status, 422, `restore upload named ${JSON.stringify(name)}: ${r.status} ${JSON.stringify(r.data)}`);
    }
    // a multipart body whose field name and file name try to climb out
    const raw = [
      '--B',
      `Content-Disposition: form-data; name="../file"; filename="../../${path.basename(outside)}"`,
      'Content-Type: image/png',
      '',
      PNG.toString('latin1'),
      '--B--',
      '',
    ].join('\r\n');
    const odd = await s.req(`/api/v1/routes/${id}/branding/logo`, {
      method: 'POST',
      headers: { ...h, 'content-type': 'multipart/form-data; boundary=B' },
      body: Buffer.from(raw, 'latin1'),
    });
    assert.equal(odd.status, 400, JSON.stringify(odd.data));
    assert.equal(fs.readFileSync(outside, 'utf8'), 'MARKER', 'the file outside was not overwritten');
    const stored = fs.readdirSync(path.join(s.dataDir, 'branding'));
    assert.ok(stored.length >= 1 && stored.every((f) => /^route-\d+-[A-Za-z0-9_-]+\.(png|jpg|gif|webp)$/.test(f)), stored.join(', '));
    // a stored name cannot be set through the API: the configuration takes URLs only
    const setName = await s.req(`/api/v1/routes/${id}/auth`, {
      method: 'POST',
      headers: h,
      json: {
        method: 'email_password',
        email: 'o@example.test',
        password: 'correct horse',
        session_max_age: 86_400_000,
        logo: `../../${path.basename(outside)}`,
        logo_url: `file://${outside}`,
      },
    });
    assert.equal(setName.status, 400, JSON.stringify(setName.data));

    // downloads: the admin UI's files, the API docs assets, the login page's images, path parameters
    const climbs = [
      '/assets/..%2f..%2f..%2fpackage.json',
      '/assets/%2e%2e/%2e%2e/package.json',
      '/..%2f..%2fpackage.json',
      '/%2e%2e%2fpackage.json',
      '/assets/../../../package.json',
      '/../../../../etc/passwd',
      '/assets/..%5c..%5cpackage.json',
      '/api-docs/assets/..%2f..%2fpackage.json',
      '/api-docs/assets/../../package.json',
      `/route-auth/branding/..%2f..%2f${path.basename(outside)}`,
      '/route-auth/branding/logo/..%2f..%2f..%2fpackage.json',
      '/favicon.ico/..%2f..%2fpackage.json',
      '/%00/etc/passwd',
      '/assets/%252e%252e%252fpackage.json',
    ];
    let served = 0;
    for (const p of climbs) {
      for (const host of ['127.0.0.1', `traversal-${process.pid}.example.test`]) {
        const r = await rawGet(p, host);
        served++;
        assert.ok(r.status >= 200 && r.status < 500, `${p} (Host ${host}): ${r.status}`);
        assert.ok(
          !/"name":\s*"(gatehouse|@gatehouse\/sidecar)"|root:x:0:0|MARKER/.test(r.body),
          `${p} (Host ${host}) served a file from outside its directory: ${r.body.slice(0, 200)}`,
        );
      }
    }
    for (const p of [
      '/api/v1/tags/..%2F..%2Fetc%2Fpasswd',
      '/api/v1/peers/..%2F1',
      '/api/v1/routes/1%2F..%2F..%2F',
      '/api/v1/peers/1/config/..%2f..%2f..%2fpackage.json',
    ]) {
      const r = await fetch(s.url + p, { headers: h });
      const body = await r.text();
      assert.ok([400, 404, 405].includes(r.status), `${p}: ${r.status}`);
      assert.ok(!/root:x:0:0|"workspaces"/.test(body), p);
    }
    recordFigure({ test: CASE, figure: 'traversal attempts: uploads / downloads (none escaped)', value: `${names.length * 3 + 1} / ${served + 4}` });
  } finally {
    fs.rmSync(outside, { force: true });
  }
});
