// SMTP settings (GET/PUT /api/v1/smtp), test mail (POST /api/v1/smtp/test) and the Mailer, against
// a real SMTP server on loopback.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { startTestServer, apiToken, bearer, type TestServer } from './lib/server.js';
import { startSmtp, type SmtpSink } from './route-auth-helpers.js';
import type { Mailer } from '../src/smtp/service.js';

let s: TestServer;
let h: Record<string, string>;
let smtp: SmtpSink;

before(async () => {
  s = await startTestServer({ GATEHOUSE_RATE_LIMIT_ADMIN: '100000' });
  h = bearer(await apiToken(s));
  smtp = await startSmtp({ user: 'mailer@example.test', password: 'smtp pass wörd' });
});
after(async () => {
  await smtp.close();
  await s.close();
});

const put = (json: unknown) => s.req('/api/v1/smtp', { method: 'PUT', headers: h, json });
const get = () => s.req('/api/v1/smtp', { headers: h });
const stored = async () => (await s.deps.db.models.Setting.findByPk('smtp', { raw: true })) as { value: string } | null;

test('not configured at first; the test mail and mail-dependent features say so', async () => {
  const g = await get();
  assert.equal(g.status, 200);
  assert.deepEqual(g.data.smtp, { configured: false, host: null, port: null, secure: false, user: null, password_set: false, from: null });
  const t = await s.req('/api/v1/smtp/test', { method: 'POST', headers: h, json: { to: 'x@example.test' } });
  assert.equal(t.status, 409, 'SMTP is not configured: a state');
  assert.match(t.data.error!, /not configured/);
  assert.equal(await (s.deps.mailer as Mailer).configured(), false);
});

test('bad input: 400 with fields, nothing written', async () => {
  const good = { host: '127.0.0.1', port: smtp.port, secure: false, from: 'gatehouse@example.test' };
  const cases: [unknown, string][] = [
    [{ ...good, host: '' }, 'host'],
    [{ ...good, host: 'bad host name' }, 'host'],
    [{ ...good, port: 0 }, 'port'],
    [{ ...good, port: 70000 }, 'port'],
    [{ ...good, port: '25' }, 'port'],
    [{ ...good, secure: 'yes' }, 'secure'],
    [{ ...good, from: 'not an address' }, 'from'],
    [{ ...good, from: 'Name <broken>' }, 'from'],
    [{ ...good, user: 'a\r\nb' }, 'user'],
    [{ port: 25, from: 'a@b.test' }, 'host'],
  ];
  for (const [body, field] of cases) {
    const r = await put(body);
    assert.equal(r.status, 400, JSON.stringify(body));
    assert.ok(r.data.fields?.[field], `${JSON.stringify(body)} → ${JSON.stringify(r.data)}`);
  }
  assert.equal(await stored(), null);
  const t = await s.req('/api/v1/smtp/test', { method: 'POST', headers: h, json: { to: 'nope' } });
  assert.equal(t.status, 400);
  assert.ok(t.data.fields!.to);
});

test('PUT stores the password sealed and never returns it; omitted keeps it, null removes it', async () => {
  const r = await put({
    host: '127.0.0.1',
    port: smtp.port,
    secure: false,
    user: 'mailer@example.test',
    password: 'smtp pass wörd',
    from: 'Gatehouse <gatehouse@example.test>',
  });
  assert.equal(r.status, 200, JSON.stringify(r.data));
  assert.deepEqual(r.data.smtp, {
    configured: true,
    host: '127.0.0.1',
    port: smtp.port,
    secure: false,
    user: 'mailer@example.test',
    password_set: true,
    from: 'Gatehouse <gatehouse@example.test>',
  });
  const raw = (await stored())!.value;
  assert.ok(!raw.includes('smtp pass'), 'no plaintext password in the database');
  assert.match(JSON.parse(raw).password, /^v1:/);
  assert.ok(!JSON.stringify((await get()).data).includes('smtp pass'));
  // without password: kept
  const k = await put({ host: '127.0.0.1', port: smtp.port, secure: false, user: 'mailer@example.test', from: 'gatehouse@example.test' });
  assert.equal(k.data.smtp.password_set, true);
  assert.equal(JSON.parse((await stored())!.value).password, JSON.parse(raw).password);
  const e = await put({ host: '127.0.0.1', port: smtp.port, secure: false, user: 'mailer@example.test', password: '', from: 'gatehouse@example.test' });
  assert.equal(e.data.smtp.password_set, true, 'an empty password field keeps the stored one');
  // null: removed
  const n = await put({ host: '127.0.0.1', port: smtp.port, secure: false, user: 'mailer@example.test', password: null, from: 'gatehouse@example.test' });
  assert.equal(n.data.smtp.password_set, false);
  assert.equal(JSON.parse((await stored())!.value).password, null);
});

test('POST /smtp/test sends a real mail through the configured server, authenticated', async () => {
  await put({
    host: '127.0.0.1',
    port: smtp.port,
    secure: false,
    user: 'mailer@example.test',
    password: 'smtp pass wörd',
    from: 'Gatehouse <gatehouse@example.test>',
  });
  const n0 = smtp.mails.length;
  const t = await s.req('/api/v1/smtp/test', { method: 'POST', headers: h, json: { to: 'admin@example.test' } });
  assert.equal(t.status, 200, JSON.stringify(t.data));
  assert.equal(t.data.sent, true);
  assert.deepEqual(t.data.accepted, ['admin@example.test']);
  const mail = await smtp.waitFor(n0 + 1);
  assert.deepEqual(mail.to, ['admin@example.test']);
  assert.equal(mail.from, 'gatehouse@example.test');
  assert.equal(mail.user, 'mailer@example.test');
  assert.match(mail.raw, /^Subject: Gatehouse: SMTP test/m);
  assert.match(mail.raw, /Your SMTP settings work/);
  // the Mailer other features use
  await (s.deps.mailer as Mailer).send('other@example.test', 'Hello', 'plain text body', '<p>html body</p>');
  const m2 = await smtp.waitFor(n0 + 2);
  assert.deepEqual(m2.to, ['other@example.test']);
  assert.match(m2.raw, /plain text body/);
  assert.match(m2.raw, /<p>html body<\/p>/);
  const log = await s.req('/api/v1/logs/activity?event_type=smtp_test_sent', { headers: h });
  assert.equal(log.status, 200);
  assert.ok(log.data.entries.some((e: { event_type: string }) => e.event_type === 'smtp_test_sent'));
});

test('a wrong password or an unreachable server: 502 with the reason', async () => {
  await put({ host: '127.0.0.1', port: smtp.port, secure: false, user: 'mailer@example.test', password: 'wrong', from: 'gatehouse@example.test' });
  const bad = await s.req('/api/v1/smtp/test', { method: 'POST', headers: h, json: { to: 'admin@example.test' } });
  assert.equal(bad.status, 502);
  assert.match(bad.data.error!, /Sending mail failed/);
  // a port nothing listens on
  const free = await new Promise<number>((resolve) => {
    const srv = net.createServer().listen(0, '127.0.0.1', () => {
      const p = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(p));
    });
  });
  await put({ host: '127.0.0.1', port: free, secure: false, from: 'gatehouse@example.test' });
  const down = await s.req('/api/v1/smtp/test', { method: 'POST', headers: h, json: { to: 'admin@example.test' } });
  assert.equal(down.status, 502);
  assert.match(down.data.error!, /ECONNREFUSED|connect/i);
});
