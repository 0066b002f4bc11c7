// Forwarding and NAT for full-tunnel peers (src/wireguard/nat.ts): the rules natRules() computes
// (golden file), the parsing of `iptables -S` and `ip route`, and the reconcile against the real
// iptables of a private network namespace (root only): rules added once, kept when unchanged,
// moved with the default route, removed when no longer wanted, other rules left alone.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { assertGolden, goldenDir } from './lib/golden.js';
import { defaultRouteInterface, natRules, NatManager, ownRules, ruleLine } from '../src/wireguard/nat.js';
import { WgDriver } from '@gatehouse/common/wireguard/driver.js';

const GOLDEN = path.join(goldenDir('wireguard'), 'nat-rules.txt');

describe('natRules (pure)', () => {
  test('the rules for two interfaces, subnets and outgoing interfaces match the golden file', () => {
    const cases = [
      { iface: 'wg0', subnet: '10.8.0.0/24', out: 'eth0' },
      { iface: 'gatehouse1', subnet: '172.20.0.0/16', out: 'enp3s0' },
    ];
    const text = cases
      .map((c) =>
        [`# iface=${c.iface} subnet=${c.subnet} out=${c.out}`, ...natRules(c).map((r) => `${r.table}${r.first ? ' (first)' : ''}: ${ruleLine(r)}`)].join('\n'),
      )
      .join('\n\n');
    assertGolden(GOLDEN, `${text}\n`);
  });

  test('ownRules finds only the rules carrying our comment for this interface', () => {
    const out = [
      '-P FORWARD DROP',
      '-A FORWARD -j DOCKER-USER',
      '-A FORWARD -s 10.8.0.0/24 -i wg0 -o eth0 -m comment --comment "gatehouse-nat:wg0" -j ACCEPT',
      '-A FORWARD -s 10.9.0.0/24 -i wg1 -o eth0 -m comment --comment "gatehouse-nat:wg1" -j ACCEPT',
      '-A FORWARD -s 10.8.0.0/24 -m comment --comment "gatehouse-nat:wg0 (copy)" -j ACCEPT',
    ].join('\n');
    const own = ownRules(out, 'wg0');
    assert.equal(own.length, 1);
    assert.deepEqual(own[0].args, ['-s', '10.8.0.0/24', '-i', 'wg0', '-o', 'eth0', '-m', 'comment', '--comment', 'gatehouse-nat:wg0', '-j', 'ACCEPT']);
  });

  test('defaultRouteInterface reads the first default route', () => {
    assert.equal(defaultRouteInterface('default via 192.0.2.1 dev enp3s0 proto dhcp src 192.0.2.7 metric 100\ndefault via 198.51.100.1 dev wlan0\n'), 'enp3s0');
    assert.equal(defaultRouteInterface('10.0.0.0/8 dev eth1 scope link\n'), null);
    assert.equal(defaultRouteInterface(''), null);
  });
});

describe('NatManager without iptables on the machine', () => {
  test('nothing wanted: no error (nothing of ours can be there); wanted: an error naming the command, in the state too', async () => {
    const nat = new NatManager(new WgDriver(), { iface: 'wgx', subnet: '10.0.0.0/24', mode: 'auto', iptables: 'iptables-not-installed' });
    const idle = await nat.reconcile(false);
    assert.deepEqual([idle.active, idle.error], [false, null]);
    await assert.rejects(nat.reconcile(true), /iptables-not-installed .*ENOENT/);
    assert.match(nat.current.error ?? '', /ENOENT/);
    assert.equal(nat.current.active, false);
  });
});

const isRoot = process.getuid?.() === 0;
const hasTools = (() => {
  try {
    execFileSync('iptables', ['--version'], { stdio: 'ignore' });
    execFileSync('ip', ['-V'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

describe('NatManager against real iptables in a network namespace', { skip: isRoot && hasTools ? false : 'needs root, ip and iptables' }, () => {
  const ns = `gtn-nat-${process.pid}`;
  const sh = (...args: string[]) => execFileSync('ip', ['netns', 'exec', ns, ...args], { encoding: 'utf8' });
  const own = () =>
    `${sh('iptables', '-w', '-t', 'nat', '-S', 'POSTROUTING')}${sh('iptables', '-w', '-S', 'FORWARD')}`.split('\n').filter((l) => l.includes('gatehouse-nat'));
  before(() => {
    execFileSync('ip', ['netns', 'add', ns]);
    // two uplinks (veth pairs inside the namespace: no dummy module needed)
    for (const l of ['up0', 'up1']) {
      sh('ip', 'link', 'add', l, 'type', 'veth', 'peer', 'name', `${l}p`);
      sh('ip', 'link', 'set', l, 'up');
      sh('ip', 'link', 'set', `${l}p`, 'up');
    }
    sh('ip', 'addr', 'add', '192.0.2.2/24', 'dev', 'up0');
    sh('ip', 'addr', 'add', '198.51.100.2/24', 'dev', 'up1');
    sh('ip', 'route', 'add', 'default', 'via', '192.0.2.1', 'dev', 'up0');
    sh('sysctl', '-q', '-w', 'net.ipv4.ip_forward=0');
    // somebody else's rule, which must stay
    sh('iptables', '-w', '-A', 'FORWARD', '-s', '10.99.0.0/24', '-j', 'ACCEPT');
  });
  after(() => {
    execFileSync('ip', ['netns', 'del', ns]);
  });

  test('auto: on with a full-tunnel peer (forwarding turned on), idempotent, follows the default route, off again', async () => {
    const nat = new NatManager(new WgDriver({ netns: ns }), { iface: 'wgnat0', subnet: '10.66.0.0/24', mode: 'auto' });
    let st = await nat.reconcile(false);
    assert.equal(st.active, false);
    assert.deepEqual(own(), []);

    st = await nat.reconcile(true);
    assert.equal(st.active, true, JSON.stringify(st));
    assert.equal(st.error, null);
    assert.equal(st.out_interface, 'up0');
    assert.equal(st.forwarding, true);
    assert.equal(sh('sysctl', '-n', 'net.ipv4.ip_forward').trim(), '1');
    const first = own();
    assert.equal(first.length, 3, first.join('\n'));
    assert.ok(first.includes('-A POSTROUTING -s 10.66.0.0/24 -o up0 -m comment --comment "gatehouse-nat:wgnat0" -j MASQUERADE'));
    assert.deepEqual(
      sh('iptables', '-w', '-S', 'FORWARD').split('\n')[1],
      '-A FORWARD -d 10.66.0.0/24 -i up0 -o wgnat0 -m conntrack --ctstate RELATED,ESTABLISHED -m comment --comment "gatehouse-nat:wgnat0" -j ACCEPT',
      'ours come first',
    );

    await nat.reconcile(true);
    assert.deepEqual(own(), first, 'a second reconcile adds nothing');

    // a rule deleted by hand comes back
    sh(
      'iptables',
      '-w',
      '-t',
      'nat',
      '-D',
      'POSTROUTING',
      '-s',
      '10.66.0.0/24',
      '-o',
      'up0',
      '-m',
      'comment',
      '--comment',
      'gatehouse-nat:wgnat0',
      '-j',
      'MASQUERADE',
    );
    await nat.reconcile(true);
    assert.deepEqual(own().sort(), [...first].sort());

    // the default route moves: the rules move with it
    sh('ip', 'route', 'replace', 'default', 'via', '198.51.100.1', 'dev', 'up1');
    st = await nat.reconcile(true);
    assert.equal(st.out_interface, 'up1');
    assert.equal(own().length, 3);
    assert.ok(
      own().every((l) => l.includes('up1') && !l.includes('up0')),
      own().join('\n'),
    );

    st = await nat.reconcile(false);
    assert.equal(st.active, false);
    assert.deepEqual(own(), []);
    assert.match(sh('iptables', '-w', '-S', 'FORWARD'), /-A FORWARD -s 10\.99\.0\.0\/24 -j ACCEPT/, 'the other rule stays');
  });

  test('on: rules without any full-tunnel peer; clear() removes them; off never touches iptables', async () => {
    const on = new NatManager(new WgDriver({ netns: ns }), { iface: 'wgnat1', subnet: '10.67.0.0/24', mode: 'on' });
    assert.equal((await on.reconcile(false)).active, true);
    assert.equal(own().length, 3);
    await on.clear();
    assert.deepEqual(own(), []);
    const off = new NatManager(new WgDriver({ netns: ns }), { iface: 'wgnat1', subnet: '10.67.0.0/24', mode: 'off' });
    const st = await off.reconcile(true);
    assert.equal(st.wanted, false);
    assert.deepEqual(own(), []);
  });

  test('no default route: an error saying so, no rules', async () => {
    sh('ip', 'route', 'del', 'default');
    const nat = new NatManager(new WgDriver({ netns: ns }), { iface: 'wgnat2', subnet: '10.68.0.0/24', mode: 'auto' });
    const st = await nat.reconcile(true);
    assert.equal(st.active, false);
    assert.match(st.error ?? '', /no IPv4 default route/);
    assert.deepEqual(own(), []);
  });
});
