// The body parser (koa-body, http/body.ts) as every endpoint sees it: JSON and form bodies, the
// standard error body for malformed and oversized ones, and the multipart upload rules of the
// branding endpoints (one file, in the declared field, judged by size and content).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startTestServer, apiToken, bearer, type TestServer } from './lib/server.js';
import { createRoute } from './route-auth-helpers.js';
import { BRANDING_MAX_BYTES } from '../src/route-auth/schema.js';
import { depthOver, FORM_LIMIT_BYTES, JSON_LIMIT_BYTES, MAX_JSON_DEPTH, MULTIPART_OVERHEAD_BYTES } from '../src/http/body.js';
import type { Refusal } from './lib/api-types.js';

let s: TestServer;
let h: Record<string, string>;
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');

before(async () => {
  s = await startTestServer({ GATEHOUSE_RATE_LIMIT_ADMIN: '100000', GATEHOUSE_RATE_LIMIT_LOGIN: '100000' });
  h = bearer(await apiToken(s));
});
after(async () => {
  await s.close();
});

const tagCount = async () => (await s.req('/api/v1/tags', { headers: h })).data.tags.length;

test('JSON: parsed for POST, PUT, PATCH and DELETE; malformed or non-object JSON is a 400 with the standard body', async () => {
  const ok = await s.req('/api/v1/tags', { method: 'POST', headers: h, json: { name: 'parsed-json' } });
  assert.equal(ok.status, 201, JSON.stringify(ok.data));
  assert.equal(ok.data.tag.name, 'parsed-json');
  const before = await tagCount();
  for (const body of ['{"name": "x"', '{name: 1}', '"a string"', '42', '{"__proto__": {"polluted": true}, "name": "p"}']) {
    const r = await s.req('/api/v1/tags', { method: 'POST', headers: { ...h, 'content-type': 'application/json' }, body });
    assert.equal(r.status, 400, body);
    assert.equal(r.data.ok, false, body);
    assert.equal(typeof r.data.error, 'string', body);
    assert.deepEqual(
      Object.keys(r.data)
        .filter((k) => k !== 'code' && k !== 'params')
        .sort(),
      ['error', 'ok'],
      body,
    );
    assert.equal(typeof r.data.code, 'string', body);
  }
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
  assert.equal(await tagCount(), before, 'nothing written on a 400');
  // an empty JSON body is {} (then judged by the schema)
  const empty = await s.req('/api/v1/tags', { method: 'POST', headers: { ...h, 'content-type': 'application/json' } });
  assert.equal(empty.status, 400);
  assert.ok(empty.data.fields!.name);
});

test('JSON nested deeper than MAX_JSON_DEPTH and bodies that are not UTF-8 are 400s; U+FFFD as an escape is fine', async () => {
  const before = await tagCount();
  const deep = `{"name":"deep","x":${'['.repeat(MAX_JSON_DEPTH)}${']'.repeat(MAX_JSON_DEPTH)}}`;
  const r = await s.req('/api/v1/tags', { method: 'POST', headers: { ...h, 'content-type': 'application/json' }, body: deep });
  assert.equal(r.status, 400);
  assert.match(r.data.error!, /nested deeper than 64/);
  // one level less is parsed: the answer is then about the content (x is not a field of a tag), not the depth
  const okDepth = `{"name":"depth-ok","x":${'['.repeat(MAX_JSON_DEPTH - 1)}${']'.repeat(MAX_JSON_DEPTH - 1)}}`;
  const parsed = await s.req('/api/v1/tags', { method: 'POST', headers: { ...h, 'content-type': 'application/json' }, body: okDepth });
  assert.equal(parsed.status, 400);
  assert.deepEqual(parsed.data.fields, { x: 'unknown field' });
  assert.equal(
    (await s.req('/api/v1/tags', { method: 'POST', headers: { ...h, 'content-type': 'application/json' }, body: '{"name":"depth-ok"}' })).status,
    201,
  );
  const bad = Buffer.concat([Buffer.from('{"name":"bad-'), Buffer.from([0xc3, 0x28]), Buffer.from('"}')]);
  const u = await s.req('/api/v1/tags', { method: 'POST', headers: { ...h, 'content-type': 'application/json' }, body: bad });
  assert.equal(u.status, 400);
  assert.match(u.data.error!, /UTF-8/);
  const f = await s.req('/api/v1/tags', {
    method: 'POST',
    headers: { ...h, 'content-type': 'application/x-www-form-urlencoded' },
    body: Buffer.concat([Buffer.from('name=bad-'), Buffer.from([0xff])]),
  });
  assert.equal(f.status, 400);
  const esc = await s.req('/api/v1/tags', { method: 'POST', headers: { ...h, 'content-type': 'application/json' }, body: '{"name":"esc-\\ufffd"}' });
  assert.equal(esc.status, 201, JSON.stringify(esc.data));
  assert.equal(esc.data.tag.name, 'esc-\uFFFD');
  assert.equal(await tagCount(), before + 2);
});

test('depthOver counts objects and arrays, iteratively', () => {
  assert.equal(depthOver({ a: [1, { b: 'x' }] }, 3), false);
  assert.equal(depthOver({ a: [1, { b: [] }] }, 3), true);
  assert.equal(depthOver('text', 0), false);
  let v: unknown[] = [];
  for (let i = 0; i < 500_000; i++) v = [v];
  assert.equal(depthOver(v, MAX_JSON_DEPTH), true);
});

test('too large: JSON over JSON_LIMIT_BYTES and forms over FORM_LIMIT_BYTES are 413 with the standard body', async () => {
  const before = await tagCount();
  const big = JSON.stringify({ name: 'big', color: 'x'.repeat(JSON_LIMIT_BYTES) });
  const r = await s.req('/api/v1/tags', { method: 'POST', headers: { ...h, 'content-type': 'application/json' }, body: big });
  assert.equal(r.status, 413);
  assert.equal(r.data.ok, false);
  assert.equal(typeof r.data.error, 'string');
  const form = await s.req('/api/v1/tags', { method: 'POST', headers: h, body: new URLSearchParams({ name: 'f', color: 'x'.repeat(FORM_LIMIT_BYTES) }) });
  assert.equal(form.status, 413);
  assert.equal(form.data.ok, false);
  assert.equal(await tagCount(), before);
});

test('forms: urlencoded bodies are parsed (and the _csrf field of a session form is honoured)', async () => {
  const r = await s.req('/api/v1/tags', { method: 'POST', headers: h, body: new URLSearchParams({ name: 'from-a-form' }) });
  assert.equal(r.status, 201, JSON.stringify(r.data));
  assert.equal(r.data.tag.name, 'from-a-form');
  // session + form with _csrf: accepted, and _csrf is not taken as a field
  const login = await s.req('/login', { method: 'POST', json: { username: 'admin', password: 'admin-password-1' }, headers: { accept: 'application/json' } });
  const cookie = login.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
  const viaForm = await s.req('/api/v1/tags', {
    method: 'POST',
    headers: { cookie },
    body: new URLSearchParams({ name: 'session-form', _csrf: login.data.csrfToken! }),
  });
  assert.equal(viaForm.status, 201, JSON.stringify(viaForm.data));
  const noCsrf = await s.req('/api/v1/tags', { method: 'POST', headers: { cookie }, body: new URLSearchParams({ name: 'no-csrf' }) });
  assert.equal(noCsrf.status, 403);
});

test('multipart uploads: one file in the declared field, kept in memory, size and content checked', async () => {
  const r = await createRoute(s);
  const cfg = await s.req(`/api/v1/routes/${r.id}/auth`, {
    method: 'POST',
    headers: h,
    json: { method: 'email_password', email: 'o@example.test', password: 'correct horse', session_max_age: 86_400_000 },
  });
  assert.equal(cfg.status, 200, JSON.stringify(cfg.data));
  const url = `/api/v1/routes/${r.id}/branding/logo`;
  const post = (fd: FormData) => s.req<Refusal>(url, { method: 'POST', headers: h, body: fd });
  const blob = (b: Buffer, type?: string) => new Blob([new Uint8Array(b)], type ? { type } : {});

  // a file part without a Content-Type is still a file
  const raw = ['--XBOUNDARY', 'Content-Disposition: form-data; name="file"; filename="logo.png"', '', PNG.toString('latin1'), '--XBOUNDARY--', ''].join('\r\n');
  const noType = await s.req(url, {
    method: 'POST',
    headers: { ...h, 'content-type': 'multipart/form-data; boundary=XBOUNDARY' },
    body: Buffer.from(raw, 'latin1'),
  });
  assert.equal(noType.status, 200, JSON.stringify(noType.data));

  // a file in another field, or two files: 400 with fields.file
  const other = new FormData();
  other.append('logo', blob(PNG, 'image/png'), 'x.png');
  const o = await post(other);
  assert.equal(o.status, 400);
  assert.ok(o.data.fields!.file);
  const two = new FormData();
  two.append('file', blob(PNG, 'image/png'), 'a.png');
  two.append('file', blob(PNG, 'image/png'), 'b.png');
  const t = await post(two);
  assert.equal(t.status, 400);
  assert.ok(t.data.fields!.file);

  // an empty file is judged by content (not an image)
  const empty = new FormData();
  empty.append('file', blob(Buffer.alloc(0), 'image/png'), 'e.png');
  const e = await post(empty);
  assert.equal(e.status, 422, 'an empty file: its content is judged (documented 422)');
  assert.ok(e.data.fields!.file);

  // a text field named "file" is not a file
  const field = new FormData();
  field.append('file', 'not a file');
  const f = await post(field);
  assert.equal(f.status, 400);
  assert.ok(f.data.fields!.file);

  // just over the file limit: 400 on the field; far over (declared length): 413 before reading
  const over = new FormData();
  over.append('file', blob(Buffer.concat([PNG, Buffer.alloc(BRANDING_MAX_BYTES)]), 'image/png'), 'big.png');
  const ov = await post(over);
  assert.equal(ov.status, 400);
  assert.match(ov.data.fields!.file, new RegExp(String(BRANDING_MAX_BYTES)));
  const huge = new FormData();
  huge.append('file', blob(Buffer.concat([PNG, Buffer.alloc(BRANDING_MAX_BYTES + MULTIPART_OVERHEAD_BYTES)]), 'image/png'), 'huge.png');
  const hg = await post(huge);
  assert.equal(hg.status, 413);
  assert.equal(hg.data.ok, false);

  // nothing of the refused uploads was kept: one branding file (the accepted logo)
  const files = fs.readdirSync(path.join(s.dataDir, 'branding')).filter((x) => x.startsWith(`route-${r.id}-`));
  assert.equal(files.length, 1);

  // a JSON body on an upload endpoint carries no file
  const json = await s.req<Refusal>(url, { method: 'POST', headers: h, json: { file: 'x' } });
  assert.equal(json.status, 400);
  assert.ok(json.data.fields!.file);
});
