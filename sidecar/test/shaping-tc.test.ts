// Speed caps, the pure part (shaping/tc.ts): the plan from the peers' caps, the commands between two
// states (golden), and the state read back from tc's output as iproute2 6.1 prints it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { assertGolden, goldenDir } from './lib/golden.js';
import { parseSubnet } from '@gatehouse/common/wireguard/render.js';
import {
  classMinor,
  commandLine,
  emptyState,
  filterHandle,
  ifbName,
  parseFilters,
  parseRate,
  parseTcState,
  planCommands,
  shapingPlan,
  type PeerCap,
} from '../src/shaping/tc.js';
import { effectiveSpeedLimit, parseSpeedLimit, speedLimit } from '../src/shaping/schema.js';

const GOLDEN = goldenDir('shaping');
const golden = (name: string, actual: string) => assertGolden(path.join(GOLDEN, name), actual);
const subnet = parseSubnet('10.8.0.0/16');
const names = { iface: 'wg0', ifb: ifbName('wg0'), subnet: subnet.cidr, subnetBase: subnet.base };
const cap = (peer_id: number, address: string, down: number | null, up: number | null): PeerCap => ({ peer_id, address, down_kbit: down, up_kbit: up });
const lines = (cmds: ReturnType<typeof planCommands>) => cmds.map((c) => `${c.allowFail ? '(may fail) ' : ''}${commandLine(c)}`).join('\n') + '\n';

test('class minor and filter handle come from the address offset', () => {
  assert.equal(classMinor(subnet, '10.8.0.2'), 2);
  assert.equal(classMinor(subnet, '10.8.1.10'), 0x10a);
  assert.equal(classMinor(subnet, '10.8.0.0'), null, 'the network');
  assert.equal(classMinor(subnet, '10.8.255.255'), null, 'the broadcast');
  assert.equal(classMinor(subnet, '10.9.0.1'), null, 'outside');
  assert.equal(classMinor(parseSubnet('10.0.0.0/8'), '10.1.0.0'), null, 'past 0xfffe');
  assert.equal(filterHandle(subnet, 2), '2:2:1');
  assert.equal(filterHandle(subnet, 0x10a), '2:a:2');
  assert.equal(ifbName('a-very-long-name'), 'ifb-a-very-long');
});

test('plan: one class per capped direction; uncapped peers and peers past the limit are left out', () => {
  const { state, skipped } = shapingPlan(parseSubnet('10.0.0.0/8'), [
    cap(1, '10.0.0.2', 2000, 1000),
    cap(2, '10.0.0.3', null, 500),
    cap(3, '10.0.0.4', null, null),
    cap(4, '10.1.0.9', 100, 100),
  ]);
  assert.deepEqual([...state.down.keys()], [2]);
  assert.deepEqual([...state.up.keys()], [2, 3]);
  assert.deepEqual(skipped, [4]);
  assert.equal(state.base, true);
  assert.equal(shapingPlan(subnet, [cap(3, '10.8.0.4', null, null)]).state.base, false);
});

test('commands (golden): from nothing, one peer added, one changed, one removed, all removed', () => {
  const a = shapingPlan(subnet, [cap(1, '10.8.0.2', 2000, 1000), cap(2, '10.8.1.10', 20000, null)]).state;
  golden('from-empty.txt', lines(planCommands(names, emptyState(), a)));
  const b = shapingPlan(subnet, [cap(1, '10.8.0.2', 2000, 1000), cap(2, '10.8.1.10', 20000, null), cap(3, '10.8.0.7', 512, 256)]).state;
  const added = planCommands(names, a, b);
  golden('add-one.txt', lines(added));
  assert.ok(
    added.every((c) => !c.args.includes('1:2') && !c.args.includes('1:10a')),
    'the others untouched',
  );
  const c = shapingPlan(subnet, [cap(1, '10.8.0.2', 4000, 1000), cap(2, '10.8.1.10', 20000, null), cap(3, '10.8.0.7', 512, 256)]).state;
  const changed = planCommands(names, b, c);
  assert.deepEqual(changed.map(commandLine), [
    'tc class replace dev wg0 parent 1: classid 1:2 htb rate 4000kbit ceil 4000kbit burst 5000 cburst 5000 quantum 1600',
  ]);
  const d = shapingPlan(subnet, [cap(1, '10.8.0.2', 4000, 1000), cap(2, '10.8.1.10', 20000, null)]).state;
  golden('remove-one.txt', lines(planCommands(names, c, d)));
  golden('remove-all.txt', lines(planCommands(names, d, emptyState())));
  assert.deepEqual(planCommands(names, d, d), [], 'nothing to do');
  assert.deepEqual(planCommands(names, emptyState(), emptyState()), []);
});

test('rates as tc prints them', () => {
  assert.equal(parseRate('2Mbit'), 2000);
  assert.equal(parseRate('1234Kbit'), 1234);
  assert.equal(parseRate('8Kbit'), 8);
  assert.equal(parseRate('1Gbit'), 1_000_000);
  assert.equal(parseRate('2500Mbit'), 2_500_000);
  assert.equal(parseRate('nonsense'), null);
});

// tc output (iproute2 6.1) of the state `from-empty.txt` sets up
const QDISCS = 'qdisc htb 1: root refcnt 2 r2q 10 default 0 direct_packets_stat 0 direct_qlen 500\nqdisc ingress ffff: parent ffff:fff1 ----------------\n';
const CLASSES =
  'class htb 1:2 root prio 0 rate 2Mbit ceil 2Mbit burst 2500b cburst 2500b \nclass htb 1:10a root prio 0 rate 20Mbit ceil 20Mbit burst 25000b cburst 25000b \n';
const EGRESS = `filter parent 1: protocol ip pref 1 u32 chain 0 
filter parent 1: protocol ip pref 1 u32 chain 0 fh 2: ht divisor 256 
filter parent 1: protocol ip pref 1 u32 chain 0 fh 2:2:1 order 1 key ht 2 bkt 2 *flowid 1:2 not_in_hw 
  match 0a080002/ffffffff at 16
filter parent 1: protocol ip pref 1 u32 chain 0 fh 2:a:2 order 2 key ht 2 bkt a *flowid 1:10a not_in_hw 
  match 0a08010a/ffffffff at 16
filter parent 1: protocol ip pref 1 u32 chain 0 fh 800: ht divisor 1 
filter parent 1: protocol ip pref 1 u32 chain 0 fh 800::800 order 2048 key ht 800 bkt 0 link 2: not_in_hw 
  match 0a080000/ffff0000 at 16
    hash mask 000000ff at 16 
`;
const INGRESS = `filter parent ffff: protocol ip pref 1 u32 chain 0 
filter parent ffff: protocol ip pref 1 u32 chain 0 fh 2: ht divisor 256 
filter parent ffff: protocol ip pref 1 u32 chain 0 fh 2:2:1 order 1 key ht 2 bkt 2 terminal flowid not_in_hw 
  match 0a080002/ffffffff at 12
	action order 1: mirred (Egress Redirect to device ifb-wg0) stolen
	index 1 ref 1 bind 1

filter parent ffff: protocol ip pref 1 u32 chain 0 fh 800: ht divisor 1 
filter parent ffff: protocol ip pref 1 u32 chain 0 fh 800::800 order 2048 key ht 800 bkt 0 link 2: not_in_hw 
  match 0a080000/ffff0000 at 12
    hash mask 000000ff at 12 
`;
const IFB_CLASSES = 'class htb 1:2 root prio 0 rate 1Mbit ceil 1Mbit burst 1600b cburst 1600b \n';
const IFB_FILTERS = `filter parent 1: protocol ip pref 1 u32 chain 0 
filter parent 1: protocol ip pref 1 u32 chain 0 fh 2: ht divisor 256 
filter parent 1: protocol ip pref 1 u32 chain 0 fh 2:2:1 order 1 key ht 2 bkt 2 *flowid 1:2 not_in_hw 
  match 0a080002/ffffffff at 12
filter parent 1: protocol ip pref 1 u32 chain 0 fh 800: ht divisor 1 
filter parent 1: protocol ip pref 1 u32 chain 0 fh 800::800 order 2048 key ht 800 bkt 0 link 2: not_in_hw 
  match 0a080000/ffff0000 at 12
    hash mask 000000ff at 12 
`;
const readout = {
  ifaceQdiscs: QDISCS,
  ifaceClasses: CLASSES,
  ifaceEgressFilters: EGRESS,
  ifaceIngressFilters: INGRESS,
  ifbQdiscs: 'qdisc htb 1: root refcnt 2 r2q 10 default 0 direct_packets_stat 0 direct_qlen 32\n',
  ifbClasses: IFB_CLASSES,
  ifbFilters: IFB_FILTERS,
};

test('reading back: the kernel state parses to the plan it came from (nothing to do)', () => {
  const f = parseFilters(EGRESS);
  assert.deepEqual(
    f.map((x) => [x.handle, x.address, x.flow, x.link]),
    [
      ['2:2:1', '10.8.0.2', 2, null],
      ['2:a:2', '10.8.1.10', 0x10a, null],
      ['800::800', null, null, '10.8.0.0/16'],
    ],
  );
  const have = parseTcState(names, readout);
  const want = shapingPlan(subnet, [cap(1, '10.8.0.2', 2000, 1000), cap(2, '10.8.1.10', 20000, null)]).state;
  assert.equal(have.base, true);
  assert.deepEqual(planCommands(names, have, want), []);
  // a changed cap: only that class
  const want2 = shapingPlan(subnet, [cap(1, '10.8.0.2', 2000, 3000), cap(2, '10.8.1.10', 20000, null)]).state;
  assert.deepEqual(planCommands(names, have, want2).map(commandLine), [
    'tc class replace dev ifb-wg0 parent 1: classid 1:2 htb rate 3000kbit ceil 3000kbit burst 3750 cburst 3750 quantum 1600',
  ]);
});

test('reading back: anything missing or inconsistent reads as no base (rebuilt from a clean slate)', () => {
  const want = shapingPlan(subnet, [cap(1, '10.8.0.2', 2000, 1000)]).state;
  for (const [what, r] of [
    ['no IFB device', { ...readout, ifbQdiscs: null }],
    ['no ingress qdisc', { ...readout, ifaceQdiscs: QDISCS.split('\n')[0] }],
    [
      'nothing at all (a fresh interface)',
      { ...readout, ifaceQdiscs: 'qdisc fq_codel 0: root refcnt 2\n', ifaceClasses: '', ifaceEgressFilters: '', ifaceIngressFilters: '' },
    ],
    ['a class without its filter', { ...readout, ifaceEgressFilters: EGRESS.replace(/filter [^\n]*fh 2:a:2[^\n]*\n[^\n]*\n/, '') }],
    ['a filter without its class', { ...readout, ifaceClasses: CLASSES.split('\n')[0] }],
    ['another subnet', { ...readout, ifaceEgressFilters: EGRESS.replace('0a080000/ffff0000', '0a090000/ffff0000') }],
  ] as const) {
    const have = parseTcState(names, r);
    assert.equal(have.base, false, what);
    const cmds = planCommands(names, have, want).map(commandLine);
    assert.equal(cmds[0], 'tc qdisc del dev wg0 root', what);
  }
});

test('speed_limit values: schema, stored form, and the peer over its group', () => {
  assert.equal(speedLimit.safeParse({ down_kbit: 7, up_kbit: null }).success, false);
  assert.equal(speedLimit.safeParse({ down_kbit: 2000 }).success, false, 'both directions are named');
  assert.equal(speedLimit.safeParse({ down_kbit: 2000, up_kbit: 1.5 }).success, false);
  assert.equal(speedLimit.safeParse({ down_kbit: 2000, up_kbit: null, x: 1 }).success, false);
  assert.deepEqual(parseSpeedLimit('{"down_kbit":2000,"up_kbit":null}'), { down_kbit: 2000, up_kbit: null });
  assert.equal(parseSpeedLimit('garbage'), null);
  assert.equal(parseSpeedLimit(null), null);
  const g = { down_kbit: 1000, up_kbit: 1000 };
  assert.deepEqual(effectiveSpeedLimit(null, g), { ...g, source: 'group' });
  assert.deepEqual(effectiveSpeedLimit({ down_kbit: null, up_kbit: null }, g), { down_kbit: null, up_kbit: null, source: 'peer' }, 'an explicit no-cap wins');
  assert.equal(effectiveSpeedLimit(null, null), null);
});
