import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { publicKeyFromPrivate } from '@gatehouse/common/wireguard/keys.js';
import {
  allocateAddress,
  capacity,
  inSubnet,
  parseIPv4,
  parseSubnet,
  renderPeerConfig,
  renderServerConfig,
  serverAddress,
  serverInterfaceAddress,
} from '@gatehouse/common/wireguard/render.js';
import type { WgInterfaceSpec } from '@gatehouse/common/wireguard/types.js';
import { AppError } from '@gatehouse/common/errors.js';
import { assertGolden, goldenDir } from './lib/golden.js';

const GOLDEN = goldenDir('wireguard');
const golden = (name: string, actual: string) => assertGolden(path.join(GOLDEN, name), actual);

// Fixed keys so the output is stable.
const key = (byte: number) => Buffer.alloc(32, byte).toString('base64');
const serverPriv = key(0x11);
const peer1Pub = publicKeyFromPrivate(key(0x21));
const peer2Pub = publicKeyFromPrivate(key(0x22));
const peer3Pub = publicKeyFromPrivate(key(0x23));
const psk = key(0x31);

const spec: WgInterfaceSpec = {
  iface: 'wg0',
  privateKey: serverPriv,
  listenPort: 51820,
  address: '10.8.0.1/24',
  peers: [
    { publicKey: peer1Pub, presharedKey: psk, allowedIps: ['10.8.0.2/32'] },
    { publicKey: peer2Pub, allowedIps: ['10.8.0.3/32', '192.168.50.0/24'], endpoint: '203.0.113.7:51820', persistentKeepalive: 25 },
    { publicKey: peer3Pub, allowedIps: ['10.8.0.4/32', 'fd00:8::4/128'] },
  ],
};

test('server config (golden)', () => {
  const text = renderServerConfig(spec);
  golden('server.conf', text);
  assert.ok(!/Address/.test(text), 'no wg-quick Address line');
  assert.equal(renderServerConfig(spec), text, 'deterministic');
});

test('server config without peers (golden)', () => {
  golden('server-empty.conf', renderServerConfig({ ...spec, peers: [] }));
});

test('peer config (golden)', () => {
  golden(
    'peer.conf',
    renderPeerConfig({
      privateKey: key(0x21),
      address: '10.8.0.2/32',
      dns: '10.8.0.1, vpn.internal',
      serverPublicKey: publicKeyFromPrivate(serverPriv),
      presharedKey: psk,
      endpoint: 'vpn.example.com:51820',
      subnet: '10.8.0.0/24',
      persistentKeepalive: 25,
    }),
  );
});

test('minimal peer config: default keepalive, explicit allowed IPs, bare address (golden)', () => {
  golden(
    'peer-minimal.conf',
    renderPeerConfig({
      privateKey: key(0x22),
      address: '10.8.0.3',
      serverPublicKey: publicKeyFromPrivate(serverPriv),
      endpoint: '198.51.100.1:51820',
      allowedIps: ['10.8.0.0/24', '192.168.50.0/24'],
    }),
  );
  const noKeepalive = renderPeerConfig({
    privateKey: key(0x22),
    address: '10.8.0.3/32',
    serverPublicKey: publicKeyFromPrivate(serverPriv),
    endpoint: '[2001:db8::1]:51820',
    subnet: '10.8.0.0/24',
    persistentKeepalive: 0,
  });
  assert.ok(!noKeepalive.includes('PersistentKeepalive'));
  assert.ok(noKeepalive.includes('Endpoint = [2001:db8::1]:51820'));
});

function assertValidation(fn: () => unknown, field: RegExp): void {
  assert.throws(fn, (e: unknown) => e instanceof AppError && e.kind === 'validation' && Object.keys(e.fields ?? {}).some((k) => field.test(k)));
}

test('values that could inject lines or are malformed are rejected', () => {
  assertValidation(() => renderServerConfig({ ...spec, privateKey: 'x' }), /^privateKey$/);
  assertValidation(() => renderServerConfig({ ...spec, iface: 'wg0\n[Peer]' }), /^iface$/);
  assertValidation(() => renderServerConfig({ ...spec, listenPort: 70000 }), /^listenPort$/);
  assertValidation(() => renderServerConfig({ ...spec, peers: [{ publicKey: peer1Pub, allowedIps: ['10.8.0.2/32\nPublicKey = x'] }] }), /allowedIps/);
  assertValidation(() => renderServerConfig({ ...spec, peers: [{ publicKey: peer1Pub, allowedIps: ['10.8.0.300/32'] }] }), /allowedIps/);
  assertValidation(() => renderServerConfig({ ...spec, peers: [{ publicKey: peer1Pub, allowedIps: [], endpoint: 'host:0' }] }), /endpoint/);
  assertValidation(() => renderServerConfig({ ...spec, peers: [spec.peers[0], spec.peers[0]] }), /^peers$/);
  const base = { privateKey: key(0x21), address: '10.8.0.2/32', serverPublicKey: peer1Pub, endpoint: 'h:1', subnet: '10.8.0.0/24' };
  assertValidation(() => renderPeerConfig({ ...base, dns: '1.1.1.1\nPostUp = rm -rf /' }), /^dns$/);
  assertValidation(() => renderPeerConfig({ ...base, endpoint: 'a b:1' }), /^endpoint$/);
  assertValidation(() => renderPeerConfig({ ...base, address: '10.8.0.2/33' }), /^address$/);
  assertValidation(() => renderPeerConfig({ ...base, subnet: undefined }), /^allowedIps$/);
  assertValidation(() => renderPeerConfig({ ...base, presharedKey: 'short' }), /^presharedKey$/);
});

test('subnet parsing', () => {
  assert.deepEqual(parseSubnet('10.8.0.0/24'), { cidr: '10.8.0.0/24', network: '10.8.0.0', prefix: 24, base: parseIPv4('10.8.0.0'), size: 256 });
  assert.equal(parseSubnet('10.8.0.77/24').cidr, '10.8.0.0/24');
  assert.equal(parseSubnet('172.20.0.0/16').size, 65536);
  for (const bad of ['10.8.0.0', '10.8.0/24', '10.8.0.0/33', '256.1.1.1/8', '10.08.0.0/24', 'x/24', '10.8.0.0/24/1']) {
    assert.throws(() => parseSubnet(bad), AppError, bad);
  }
});

test('server address, capacity, membership', () => {
  assert.equal(serverAddress('10.8.0.0/24'), '10.8.0.1');
  assert.equal(serverInterfaceAddress('10.8.0.0/24'), '10.8.0.1/24');
  assert.equal(serverAddress('10.99.128.0/17'), '10.99.128.1');
  assert.equal(capacity('10.8.0.0/24'), 253);
  assert.equal(capacity('10.8.0.0/16'), 65533);
  assert.equal(capacity('10.8.0.0/30'), 1);
  assert.equal(capacity('10.8.0.0/31'), 0);
  assert.ok(inSubnet('10.8.0.255', '10.8.0.0/24'));
  assert.ok(inSubnet('10.8.0.9/32', '10.8.0.0/24'));
  assert.ok(!inSubnet('10.8.1.0', '10.8.0.0/24'));
});

test('address allocation skips network, server, broadcast and taken addresses', () => {
  assert.equal(allocateAddress('10.8.0.0/24', []), '10.8.0.2');
  assert.equal(allocateAddress('10.8.0.0/24', ['10.8.0.2/32', '10.8.0.3']), '10.8.0.4');
  assert.equal(allocateAddress('10.8.0.0/24', ['10.8.0.2/32', '10.8.0.4/32']), '10.8.0.3', 'reuses a gap');
  assert.equal(allocateAddress('10.8.0.0/30', []), '10.8.0.2');
  assert.equal(allocateAddress('10.8.0.0/30', ['10.8.0.2']), null);
  assert.equal(allocateAddress('10.8.0.0/31', []), null);
});

test('a full subnet returns null, and every handed-out address is a distinct host address', () => {
  const subnet = '10.8.0.0/24';
  const taken: string[] = [];
  for (;;) {
    const a = allocateAddress(subnet, taken);
    if (a === null) break;
    taken.push(`${a}/32`);
  }
  assert.equal(taken.length, capacity(subnet));
  assert.equal(new Set(taken).size, taken.length);
  for (const t of ['10.8.0.0/32', '10.8.0.1/32', '10.8.0.255/32']) assert.ok(!taken.includes(t), t);
  assert.equal(taken.at(-1), '10.8.0.254/32');
  assert.equal(allocateAddress(subnet, taken), null);
  // Freed addresses come back.
  assert.equal(
    allocateAddress(
      subnet,
      taken.filter((t) => t !== '10.8.0.77/32'),
    ),
    '10.8.0.77',
  );
});

// Its speed is a benchmark figure, not a timed test (a loaded machine failed the old 5 s bound):
// scripts/bench/peers.ts prints the create p50 at 10,000 peers, which includes this allocation.
test('allocation in a large subnet: 2,000 addresses in a row, each new and inside the subnet', () => {
  const taken = new Set<string>();
  for (let i = 0; i < 2000; i++) taken.add(allocateAddress('10.8.0.0/16', taken)!);
  assert.equal(taken.size, 2000);
  for (const a of taken) assert.match(a, /^10\.8\.\d{1,3}\.\d{1,3}$/);
  assert.ok(!taken.has('10.8.0.0') && !taken.has('10.8.0.1'), 'neither the network address nor the server address');
});
