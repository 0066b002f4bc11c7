// util/safe-redirect.ts: the one check of every redirect target (admin `next`, route-auth `rd`),
// against the known bypass forms (test/lib/redirect-bypasses.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { safeRedirect } from '../src/util/safe-redirect.js';
import { safeNext } from '../src/auth/next.js';
import { safeRedirect as routeAuthRedirect } from '../src/route-auth/http.js';
import { BYPASSES, EVIL, GOOD_PATHS, HOST, staysOn } from './lib/redirect-bypasses.js';

test('paths only: every bypass form becomes /, same-origin paths stay as given', () => {
  for (const bad of BYPASSES) assert.equal(safeRedirect(bad), '/', JSON.stringify(bad));
  for (const ok of GOOD_PATHS) assert.equal(safeRedirect(ok), ok, ok);
  for (const odd of [undefined, null, 3, ['/peers'], { a: 1 }]) assert.equal(safeRedirect(odd), '/');
  assert.equal(safeRedirect('/' + 'a'.repeat(5000)), '/');
  assert.equal(safeRedirect(`https://${HOST}/x`), '/', 'no absolute URL without sameHost');
  assert.equal(safeRedirect('//x', { fallback: '/home' }), '/home');
});

test('same host: absolute URLs of exactly this host and port pass, every bypass form becomes /', () => {
  const rules = { sameHost: HOST };
  for (const bad of BYPASSES) assert.equal(safeRedirect(bad, rules), '/', JSON.stringify(bad));
  for (const ok of GOOD_PATHS) assert.equal(safeRedirect(ok, rules), ok);
  assert.equal(safeRedirect(`https://${HOST}/a?b=1#c`, rules), `https://${HOST}/a?b=1#c`);
  assert.equal(safeRedirect(`HTTPS://${HOST.toUpperCase()}/a`, rules), `https://${HOST}/a`);
  assert.equal(safeRedirect(`http://${HOST}/x?email=a@b.example`, rules), `http://${HOST}/x?email=a@b.example`);
  assert.equal(safeRedirect(`https://${HOST}:8443/x`, { sameHost: `${HOST}:8443` }), `https://${HOST}:8443/x`);
  assert.equal(safeRedirect(`https://${HOST}/x`, { sameHost: `${HOST}:443` }), `https://${HOST}/x`);
  assert.equal(safeRedirect(`https://${HOST}//${EVIL}/`, rules), '/', 'a path that reads as another host once taken alone');
});

test('the admin next and the route-auth rd use it: the route-auth pages themselves are refused in any case', () => {
  for (const bad of BYPASSES) {
    assert.equal(safeNext(bad), '/', JSON.stringify(bad));
    assert.equal(routeAuthRedirect(bad, HOST), '/', JSON.stringify(bad));
  }
  assert.equal(safeNext('/peers?q=x'), '/peers?q=x');
  assert.equal(safeNext('/' + 'a'.repeat(3000)), '/', 'the admin next is at most 2048 characters');
  assert.equal(routeAuthRedirect(`https://${HOST}/app`, HOST), `https://${HOST}/app`);
  for (const loop of [
    '/route-auth/login?rd=x',
    '/ROUTE-AUTH/login',
    '/x/../route-auth/logout',
    '/%72oute-auth/login',
    `https://${HOST}/Route-Auth/login`,
    '/route-auth',
  ]) {
    assert.equal(routeAuthRedirect(loop, HOST), '/', loop);
  }
});

test('whatever comes out stays on the origin a browser resolves it against', () => {
  const origin = `https://${HOST}`;
  const inputs = [...BYPASSES, ...GOOD_PATHS, `${origin}/ok`];
  // every bypass form also after a leading path, a second slash or a scheme and host
  for (const b of BYPASSES) inputs.push(`/${b}`, `/x/${b}`, `${origin}${b.startsWith('/') ? '' : '/'}${b}`, `${origin}/${b}`);
  for (const i of inputs) {
    for (const out of [safeNext(i), routeAuthRedirect(i, HOST), safeRedirect(i, { sameHost: HOST })]) {
      assert.ok(staysOn(out, origin), `${JSON.stringify(i)} -> ${JSON.stringify(out)}`);
    }
  }
});
