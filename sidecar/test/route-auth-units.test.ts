// Pure pieces of route auth: IP rules, the redirect check, cookie reading, host matching, image sniffing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ipAllowed, IpMatcher, normalizeIpRules, parseRule, parseStoredRules } from '../src/util/ip-rules.js';
import { hostMatches, readCookie, safeRedirect } from '../src/route-auth/http.js';
import { sniffImage } from '../src/route-auth/branding.js';

test('IP rules are normalized: canonical v6, host bits cleared, full prefixes as addresses, duplicates dropped', () => {
  const r = normalizeIpRules([
    ' 203.0.113.9/24 ',
    '198.51.100.7/32',
    { value: '2001:DB8:0:0:0:0:0:1/32', note: 'office' },
    '::ffff:192.0.2.1',
    '::ffff:192.0.2.0/120',
    '203.0.113.0/24',
    'fe80::1',
    '0.0.0.0/0',
    '::/0',
  ]);
  assert.deepEqual(r, { rules: ['203.0.113.0/24', '198.51.100.7', '2001:db8::/32', '192.0.2.1', '192.0.2.0/24', 'fe80::1', '0.0.0.0/0', '::/0'] });
});

test('invalid IP rules are reported per index', () => {
  const r = normalizeIpRules([
    '10.0.0.1',
    '10.0.0.256',
    '10.0.0.0/33',
    'fe80::1%eth0',
    '',
    'example.com',
    '2001:db8::/129',
    '1.2.3',
    // reason: a non-string entry, as a JSON body may carry one
    { value: 5 } as unknown as string,
  ]);
  assert.ok('errors' in r);
  assert.deepEqual(Object.keys(r.errors).sort(), ['1', '2', '3', '4', '5', '6', '7', '8']);
  assert.ok('error' in parseRule('1::2::3'));
  assert.ok('error' in parseRule('1:2:3:4:5:6:7:8:9'));
  assert.ok('error' in parseRule('12345::'));
});

test('ipAllowed: whitelist and blacklist, v4 and v6, mapped addresses, empty lists', () => {
  const rules = ['203.0.113.0/24', '2001:db8::/32', '198.51.100.7'];
  assert.equal(ipAllowed(rules, 'whitelist', '203.0.113.200'), true);
  assert.equal(ipAllowed(rules, 'whitelist', '::ffff:203.0.113.200'), true);
  assert.equal(ipAllowed(rules, 'whitelist', '203.0.114.1'), false);
  assert.equal(ipAllowed(rules, 'whitelist', '2001:db8:ffff::1'), true);
  assert.equal(ipAllowed(rules, 'whitelist', '2001:db9::1'), false);
  assert.equal(ipAllowed(rules, 'whitelist', '198.51.100.7'), true);
  assert.equal(ipAllowed(rules, 'whitelist', '198.51.100.8'), false);
  assert.equal(ipAllowed(rules, 'blacklist', '203.0.113.5'), false);
  assert.equal(ipAllowed(rules, 'blacklist', '192.0.2.5'), true);
  assert.equal(ipAllowed([], 'whitelist', '192.0.2.5'), false);
  assert.equal(ipAllowed([], 'blacklist', '192.0.2.5'), true);
  assert.equal(ipAllowed(rules, 'whitelist', 'garbage'), false);
  assert.equal(ipAllowed(['0.0.0.0/0'], 'whitelist', '8.8.8.8'), true);
  assert.equal(ipAllowed(['0.0.0.0/0'], 'whitelist', '2001:db8::1'), false);
  assert.equal(ipAllowed([{ value: '10.0.0.0/8', note: 'lan' }], 'whitelist', '10.1.2.3'), true);
  assert.equal(new IpMatcher(['not an ip', '10.0.0.1']).size, 1);
});

test('stored rules: JSON text of strings or objects; bad entries dropped', () => {
  assert.deepEqual(parseStoredRules('["10.0.0.0/8", {"value": "192.0.2.1", "note": "x"}, "bogus"]'), ['10.0.0.0/8', '192.0.2.1']);
  assert.deepEqual(parseStoredRules(null), []);
  assert.deepEqual(parseStoredRules('{'), []);
});

test('safeRedirect keeps only same-host targets', () => {
  const host = 'app.example.com';
  assert.equal(safeRedirect('https://app.example.com/a?b=1#c', host), 'https://app.example.com/a?b=1#c');
  assert.equal(safeRedirect('http://app.example.com/a', host), 'http://app.example.com/a');
  assert.equal(safeRedirect('/a/b?c', host), '/a/b?c');
  for (const bad of [
    'https://evil.test/',
    '//evil.test',
    '/\\evil.test',
    '\\\\evil.test',
    'javascript:alert(1)',
    'https://app.example.com.evil.test/',
    'https://app.example.com@evil.test/',
    'https://u:p@app.example.com/',
    'ftp://app.example.com/',
    '/a\nb',
    '',
    undefined,
    'relative/path',
  ]) {
    assert.equal(safeRedirect(bad as string, host), '/', String(bad));
  }
  assert.equal(safeRedirect('https://app.example.com:8443/x', 'app.example.com:8443'), 'https://app.example.com:8443/x');
  assert.equal(safeRedirect('https://app.example.com:8443/x', host), '/', 'another port is another origin');
  assert.equal(safeRedirect('/route-auth/login?rd=x', host), '/', 'no loop back to the login page');
});

test('readCookie reads one cookie out of a header', () => {
  const h = 'a=1; gh_ra_1=abc; gh_ra_12=def;gh_ra_1x=no; q="quoted"';
  assert.equal(readCookie(h, 'gh_ra_1'), 'abc');
  assert.equal(readCookie(h, 'gh_ra_12'), 'def');
  assert.equal(readCookie(h, 'q'), 'quoted');
  assert.equal(readCookie(h, 'gh_ra_2'), undefined);
  assert.equal(readCookie(undefined, 'a'), undefined);
  assert.equal(readCookie('xgh_ra_1=bad', 'gh_ra_1'), undefined);
});

test('hostMatches: exact domains and one-label wildcards, ports ignored', () => {
  assert.equal(hostMatches('app.test', 'app.test:8443'), true);
  assert.equal(hostMatches('app.test', 'APP.test'), true);
  assert.equal(hostMatches('app.test', 'evil-app.test'), false);
  assert.equal(hostMatches('*.wild.test', 'a.wild.test'), true);
  assert.equal(hostMatches('*.wild.test', 'a.b.wild.test'), false);
  assert.equal(hostMatches('*.wild.test', 'wild.test'), false);
  assert.equal(hostMatches('*.wild.test', 'xwild.test'), false);
});

test('sniffImage: by content, not by name', () => {
  assert.equal(sniffImage(Buffer.from('89504e470d0a1a0a0000', 'hex'))?.ext, 'png');
  assert.equal(sniffImage(Buffer.from('ffd8ffe000104a464946', 'hex'))?.ext, 'jpg');
  assert.equal(sniffImage(Buffer.from('GIF87a......'))?.ext, 'gif');
  assert.equal(sniffImage(Buffer.from('RIFF\x00\x00\x00\x00WEBPVP8 ', 'latin1'))?.ext, 'webp');
  assert.equal(sniffImage(Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>')), null);
  assert.equal(sniffImage(Buffer.from('<?xml version="1.0"?><svg/>')), null);
  assert.equal(sniffImage(Buffer.from('RIFF\x00\x00\x00\x00WAVEfmt ', 'latin1')), null);
  assert.equal(sniffImage(Buffer.alloc(0)), null);
});
