// End to end, as root: the RDP harness itself (test/lib/rdp.ts). A real xrdp (with xrdp-sesman and
// PAM) in one namespace, a second one in another, a throwaway local user, and a real xfreerdp under
// Xvfb in a client namespace routed to both. Checked: the right password is accepted (xrdp-sesman
// starts the session, the desktop runs as that user), a wrong one is refused, each in well under
// 10 s; the verdict names the client's address; the two instances do not see each other's logins;
// and `xfreerdp /auth-only` is shown NOT to tell (it exits 0 for a wrong password against xrdp),
// which is why the harness reads xrdp-sesman's verdict instead.
//   node --import tsx --test test/e2e/rdp-harness.test.ts
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { createNetwork, skipReason } from '../lib/netns.js';
import { createRdpUser, rdpAuthenticate, runXfreerdp, startXrdp, RDP_TOOLS } from '../lib/rdp.js';

const reason = skipReason(RDP_TOOLS);

test('RDP harness: real xrdp in two namespaces, real xfreerdp, right and wrong passwords', { skip: reason ?? false, timeout: 120_000 }, async (t) => {
  const n = (process.pid % 200) + 20;
  const net = await createNetwork({ prefix: 'rdph' });
  t.after(() => net.cleanup());
  const client = await net.addNamespace('cli');
  const a = await net.addNamespace('a');
  const b = await net.addNamespace('b');
  const la = await net.link(client, a, `10.243.${n}.1/24`, `10.243.${n}.2/24`);
  const lb = await net.link(client, b, `10.244.${n}.1/24`, `10.244.${n}.2/24`);

  const password = `right ${Math.random().toString(36).slice(2)} pw`;
  const user = await createRdpUser(password);
  t.after(() => user.remove());
  const [xa, xb] = await Promise.all([startXrdp(net, a, { host: la.addrB, port: 3389 }), startXrdp(net, b, { host: lb.addrB, port: 13389 })]);
  t.diagnostic(`xrdp listening after ${xa.startupMs} ms and ${xb.startupMs} ms`);
  assert.ok(xa.startupMs < 10_000 && xb.startupMs < 10_000);

  // the right password: accepted by xrdp-sesman (PAM), the session runs as the user
  const ok = await rdpAuthenticate(net, client, xa, { host: xa.host, port: xa.port, user: user.name, password });
  t.diagnostic(`right password: exit ${ok.code} after ${ok.ms} ms; ${ok.auth?.line}`);
  assert.equal(ok.auth?.ok, true, `${ok.output.slice(-2000)}\n${xa.xrdpLog().slice(-2000)}\n${xa.sesmanLog().slice(-2000)}`);
  assert.equal(ok.auth!.ip, la.addrA, 'xrdp saw the client namespace address');
  assert.ok(ok.ms < 10_000, `${ok.ms} ms`);
  assert.match(xa.xrdpLog(), new RegExp(`login successful for user ${user.name}`));
  const sessions = fs.readFileSync(path.join(xa.dir, 'log', 'sessions.log'), 'utf8');
  assert.match(sessions, new RegExp(`^session ${user.name} :\\d+`, 'm'), 'the desktop session ran as the user');

  // a wrong password: refused, the connection ends at once
  const bad = await rdpAuthenticate(net, client, xa, { host: xa.host, port: xa.port, user: user.name, password: 'wrong password' });
  t.diagnostic(`wrong password: exit ${bad.code} after ${bad.ms} ms; ${bad.auth?.line}`);
  assert.equal(bad.auth?.ok, false, bad.output.slice(-2000));
  assert.ok(bad.ms < 10_000, `${bad.ms} ms`);
  assert.match(xa.xrdpLog(), new RegExp(`login failed for user ${user.name}`));
  assert.notEqual(bad.code, 0);

  // the second instance: its own logs; a changed password takes effect at once
  await user.setPassword('second password');
  const oldPw = await rdpAuthenticate(net, client, xb, { host: xb.host, port: xb.port, user: user.name, password });
  assert.equal(oldPw.auth?.ok, false, 'the old password no longer works');
  const newPw = await rdpAuthenticate(net, client, xb, { host: xb.host, port: xb.port, user: user.name, password: 'second password' });
  assert.equal(newPw.auth?.ok, true, newPw.output.slice(-2000));
  assert.equal(newPw.auth!.ip, lb.addrA);
  assert.deepEqual(
    xa.authEvents().map((e) => e.ok),
    [true, false],
    'instance a saw only its own two attempts',
  );
  assert.deepEqual(
    xb.authEvents().map((e) => e.ok),
    [false, true],
  );

  // why the harness does not use /auth-only: against xrdp it exits 0 whatever the password
  const authOnly = await runXfreerdp(net, client, { host: xb.host, port: xb.port, user: user.name, password: 'not the password', args: ['/auth-only'] });
  assert.equal(authOnly.code, 0, `/auth-only cannot tell against xrdp: ${authOnly.output.slice(-1000)}`);
  assert.ok(!xb.authEvents().some((e) => e.ok && e.index > newPw.auth!.index), 'no session for it');

  // nothing of the password on anyone's command line: it went through stdin
  assert.ok(!ok.output.includes(password));
  await Promise.all([xa.stop(), xb.stop()]);
});
