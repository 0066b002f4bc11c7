import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseWgDump, WgDumpParseError } from '@gatehouse/common/wireguard/dump.js';

const K = (c: string) => c.repeat(43) + '=';
// As `wg show wg0 dump` prints it: tabs, "(none)" and "off" for empty values.
const FIXTURE =
  [
    [K('a'), K('b'), '51820', 'off'],
    [K('c'), K('d'), '198.51.100.9:41234', '10.8.0.2/32', '1700000000', '123456', '654321', '25'],
    [K('e'), '(none)', '(none)', '10.8.0.3/32,192.168.50.0/24', '0', '0', '0', 'off'],
    [K('f'), '(none)', '[2001:db8::5]:51820', '(none)', '1700000123', '9007199254740991', '1', 'off'],
  ]
    .map((r) => r.join('\t'))
    .join('\n') + '\n';

test('parses interface and peers', () => {
  const d = parseWgDump(FIXTURE);
  assert.deepEqual(d.iface, { publicKey: K('b'), listenPort: 51820, fwmark: null });
  assert.equal(d.peers.length, 3);
  assert.deepEqual(d.peers[0], {
    publicKey: K('c'),
    endpoint: '198.51.100.9:41234',
    allowedIps: ['10.8.0.2/32'],
    latestHandshake: 1700000000 * 1000,
    rx: 123456,
    tx: 654321,
    persistentKeepalive: 25,
  });
  assert.deepEqual(d.peers[1], {
    publicKey: K('e'),
    endpoint: null,
    allowedIps: ['10.8.0.3/32', '192.168.50.0/24'],
    latestHandshake: 0,
    rx: 0,
    tx: 0,
    persistentKeepalive: null,
  });
  assert.equal(d.peers[2].endpoint, '[2001:db8::5]:51820');
  assert.deepEqual(d.peers[2].allowedIps, []);
  assert.equal(d.peers[2].rx, Number.MAX_SAFE_INTEGER);
});

test('interface without peers, fwmark set, no keys yet', () => {
  const d = parseWgDump(`(none)\t(none)\t36274\t0x2a\n`);
  assert.deepEqual(d, { iface: { publicKey: '', listenPort: 36274, fwmark: 42 }, peers: [] });
});

test('`wg show all dump` output, given the interface', () => {
  const all = [
    ['wg0', K('a'), K('b'), '51820', 'off'],
    ['wg0', K('c'), K('d'), '(none)', '10.8.0.2/32', '0', '0', '0', 'off'],
    ['wg1', K('e'), K('f'), '51821', 'off'],
    ['wg1', K('g'), '(none)', '(none)', '10.9.0.2/32', '0', '5', '6', 'off'],
  ]
    .map((r) => r.join('\t'))
    .join('\n');
  const d = parseWgDump(all, 'wg1');
  assert.equal(d.iface.listenPort, 51821);
  assert.deepEqual(
    d.peers.map((p) => [p.publicKey, p.rx, p.tx]),
    [[K('g'), 5, 6]],
  );
  assert.throws(() => parseWgDump(all), WgDumpParseError);
  assert.throws(() => parseWgDump(all, 'wg9'), WgDumpParseError);
});

test('malformed dumps are errors, not garbage', () => {
  assert.throws(() => parseWgDump(''), WgDumpParseError);
  assert.throws(() => parseWgDump('a\tb\tc\n'), WgDumpParseError);
  assert.throws(() => parseWgDump(`${K('a')}\t${K('b')}\tx\toff\n`), /listen-port/);
  const badRx = FIXTURE.replace('123456', '12x');
  assert.throws(() => parseWgDump(badRx), /line 2: rx/);
  assert.throws(() => parseWgDump(FIXTURE + 'short\tline\n'), /line 5/);
});
