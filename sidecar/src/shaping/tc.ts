// Per-peer speed caps with Linux traffic control on the WireGuard interface: the pure part.
//
// Both directions are shaped with HTB, one class per capped peer, found by the peer's tunnel address:
// - down (server → peer) is the WireGuard interface's egress: root qdisc `htb 1:` on <iface>, a
//   class 1:<n> per peer, and a u32 filter matching `ip dst <address>` sending the packets to it.
// - up (peer → server) arrives as the interface's ingress, where nothing can queue. An ingress qdisc
//   redirects the capped peers' packets (u32 filter on `ip src <address>`, action mirred) to an IFB
//   device (ifb-<iface>), whose egress holds the same HTB layout, matched on `ip src`.
//   Why IFB and not policing: a policer drops everything above the rate at once (TCP sees bursts of
//   loss and reaches well under the cap), while the IFB's HTB queues and paces like the egress side;
//   and act_police is a kernel module that many hosts (this project's CI among them) do not have,
//   while ifb and act_mirred are.
// - Packets of peers without a cap match no filter: HTB's `default 0` sends them on unshaped, and the
//   ingress redirect never sees them. Works the same on a kernel WireGuard interface and on the TUN
//   device of wireguard-go (it is plain traffic control on a network device).
// - n (the class minor and the filter key) is the peer's offset in the VPN subnet: stable for the
//   peer's lifetime, unique, never 0 (the network) and at most 0xfffe (a /16 subnet's last host).
//   Peers further into a larger subnet cannot get a class (shapingPlan lists them as `skipped`).
// - Filters sit in a 256-bucket u32 hash table keyed on the address's last byte (one lookup, not one
//   rule per peer in turn), each with its own handle 2:<bucket>:<node>, node = (n >> 8) + 1, so one
//   peer's filter is added or deleted without touching another's.
//
// shapingPlan(): the desired state from the peers' effective caps. planCommands(): the tc and ip
// commands that turn one state into another, touching only the objects that differ (a peer's cap
// added, changed or removed changes that peer's class and filters only). parseTcState(): the state
// read back from `tc` output, so a reconcile (start, every resync) works from what the kernel holds.
import { formatIPv4, parseIPv4 } from '@gatehouse/common/wireguard/ipv4.js';
import type { Subnet } from '@gatehouse/common/wireguard/render.js';

/** One peer's effective cap in kbit/s per direction; null in a direction = not capped. */
export interface PeerCap {
  peer_id: number;
  address: string;
  down_kbit: number | null;
  up_kbit: number | null;
}

/** One shaped direction of one peer: HTB class 1:<n> matching the peer's address. */
export interface ShapedClass {
  n: number;
  address: string;
  kbit: number;
}

export interface TcState {
  /** the qdiscs, hash tables and IFB device are in place */
  base: boolean;
  /** n → class on the interface's egress (down) */
  down: Map<number, ShapedClass>;
  /** n → class on the IFB's egress (up) */
  up: Map<number, ShapedClass>;
}

export interface ShapingNames {
  iface: string;
  ifb: string;
  subnet: string;
}

/** ifb-<iface>, cut to the 15 characters a Linux interface name may have. */
export const ifbName = (iface: string) => `ifb-${iface}`.slice(0, 15);

export const emptyState = (): TcState => ({ base: false, down: new Map(), up: new Map() });

/** The class minor of a peer address: its offset in the subnet (null when outside it or past 0xfffe). */
export function classMinor(subnet: Pick<Subnet, 'base' | 'size'>, address: string): number | null {
  const a = parseIPv4(address);
  if (a === null) return null;
  const off = a - subnet.base;
  if (off <= 0 || off >= subnet.size - 1 || off > 0xfffe) return null;
  return off;
}

/** The u32 filter handle of class n: table 2, bucket = the address's last byte, node = (n >> 8) + 1. */
export function filterHandle(subnet: Pick<Subnet, 'base'>, n: number): string {
  const addr = (subnet.base + n) >>> 0;
  return `2:${(addr & 0xff).toString(16)}:${((n >> 8) + 1).toString(16)}`;
}

/** The desired state: one class per peer and direction with a cap. */
export function shapingPlan(subnet: Subnet, caps: PeerCap[]): { state: TcState; skipped: number[] } {
  const state = emptyState();
  const skipped: number[] = [];
  for (const c of caps) {
    if (c.down_kbit === null && c.up_kbit === null) continue;
    const n = classMinor(subnet, c.address);
    if (n === null) {
      skipped.push(c.peer_id);
      continue;
    }
    const address = formatIPv4((subnet.base + n) >>> 0);
    if (c.down_kbit !== null) state.down.set(n, { n, address, kbit: c.down_kbit });
    if (c.up_kbit !== null) state.up.set(n, { n, address, kbit: c.up_kbit });
  }
  state.base = state.down.size > 0 || state.up.size > 0;
  return { state, skipped };
}

/** One command: the program and its arguments; `allowFail` for removals of what may already be gone. */
export interface TcCommand {
  cmd: 'tc' | 'ip';
  args: string[];
  allowFail?: boolean;
}

/** HTB burst: 10 ms at the rate (at least 1600 bytes), so timer jitter on a busy host costs no throughput. */
export const burstBytes = (kbit: number) => Math.max(1600, Math.ceil((kbit * 1000) / 8 / 100));

const hex = (n: number) => n.toString(16);

function classArgs(dev: string, c: ShapedClass): string[] {
  const b = String(burstBytes(c.kbit));
  return [
    'class',
    'replace',
    'dev',
    dev,
    'parent',
    '1:',
    'classid',
    `1:${hex(c.n)}`,
    'htb',
    'rate',
    `${c.kbit}kbit`,
    'ceil',
    `${c.kbit}kbit`,
    'burst',
    b,
    'cburst',
    b,
    'quantum',
    '1600',
  ];
}

/** The commands that set up the qdiscs, hash tables and the IFB device (after removing any leftovers). */
export function baseCommands(o: ShapingNames): TcCommand[] {
  const { iface, ifb, subnet } = o;
  const table = (dev: string, parent: string, dir: 'src' | 'dst'): TcCommand[] => [
    { cmd: 'tc', args: ['filter', 'add', 'dev', dev, 'parent', parent, 'prio', '1', 'handle', '2:', 'protocol', 'ip', 'u32', 'divisor', '256'] },
    {
      cmd: 'tc',
      args: [
        'filter',
        'add',
        'dev',
        dev,
        'parent',
        parent,
        'prio',
        '1',
        'handle',
        '800::800',
        'protocol',
        'ip',
        'u32',
        'ht',
        '800::',
        'match',
        'ip',
        dir,
        subnet,
        'hashkey',
        'mask',
        '0x000000ff',
        'at',
        dir === 'src' ? '12' : '16',
        'link',
        '2:',
      ],
    },
  ];
  return [
    ...clearCommands(o),
    { cmd: 'tc', args: ['qdisc', 'add', 'dev', iface, 'root', 'handle', '1:', 'htb', 'default', '0'] },
    ...table(iface, '1:', 'dst'),
    { cmd: 'ip', args: ['link', 'add', 'dev', ifb, 'type', 'ifb'] },
    { cmd: 'ip', args: ['link', 'set', 'dev', ifb, 'up'] },
    { cmd: 'tc', args: ['qdisc', 'add', 'dev', ifb, 'root', 'handle', '1:', 'htb', 'default', '0'] },
    ...table(ifb, '1:', 'src'),
    { cmd: 'tc', args: ['qdisc', 'add', 'dev', iface, 'handle', 'ffff:', 'ingress'] },
    ...table(iface, 'ffff:', 'src'),
  ];
}

/** Removes everything of ours: the interface's root and ingress qdiscs (with their classes and filters) and the IFB device. */
export function clearCommands(o: Pick<ShapingNames, 'iface' | 'ifb'>): TcCommand[] {
  return [
    { cmd: 'tc', args: ['qdisc', 'del', 'dev', o.iface, 'root'], allowFail: true },
    { cmd: 'tc', args: ['qdisc', 'del', 'dev', o.iface, 'ingress'], allowFail: true },
    { cmd: 'ip', args: ['link', 'del', 'dev', o.ifb], allowFail: true },
  ];
}

function filterAdd(dev: string, parent: string, handle: string, dir: 'src' | 'dst', address: string, target: string[]): TcCommand {
  const bucket = handle.split(':').slice(0, 2).join(':') + ':';
  return {
    cmd: 'tc',
    args: [
      'filter',
      'add',
      'dev',
      dev,
      'parent',
      parent,
      'prio',
      '1',
      'handle',
      handle,
      'protocol',
      'ip',
      'u32',
      'ht',
      bucket,
      'match',
      'ip',
      dir,
      `${address}/32`,
      ...target,
    ],
  };
}
function filterDel(dev: string, parent: string, handle: string): TcCommand {
  return { cmd: 'tc', args: ['filter', 'del', 'dev', dev, 'parent', parent, 'prio', '1', 'handle', handle, 'protocol', 'ip', 'u32'], allowFail: true };
}

/**
 * The commands from `have` to `want`. Only the classes and filters of peers whose cap or address
 * differs are touched; a rate change is one `tc class replace` (the queue and the filter stay).
 * The base is set up when wanted and missing, and everything goes when nothing is capped any more.
 */
export function planCommands(o: ShapingNames & { subnetBase: number }, have: TcState, want: TcState): TcCommand[] {
  const { iface, ifb, subnetBase } = o;
  if (!want.base) return have.base ? clearCommands(o) : [];
  const out: TcCommand[] = [];
  const from = have.base ? have : emptyState();
  if (!have.base) out.push(...baseCommands(o));
  const h = (n: number) => filterHandle({ base: subnetBase }, n);
  // down: class 1:n on the interface, filter on dst
  for (const [n, c] of from.down) {
    const w = want.down.get(n);
    if (w && w.address === c.address) continue;
    out.push(filterDel(iface, '1:', h(n)), { cmd: 'tc', args: ['class', 'del', 'dev', iface, 'classid', `1:${hex(n)}`], allowFail: true });
  }
  for (const [n, w] of want.down) {
    const c = from.down.get(n);
    if (c && c.address === w.address && c.kbit === w.kbit) continue;
    out.push({ cmd: 'tc', args: classArgs(iface, w) });
    if (!c || c.address !== w.address) out.push(filterAdd(iface, '1:', h(n), 'dst', w.address, ['flowid', `1:${hex(n)}`]));
  }
  // up: redirect on the interface's ingress, class 1:n on the IFB, filter on src there
  for (const [n, c] of from.up) {
    const w = want.up.get(n);
    if (w && w.address === c.address) continue;
    out.push(filterDel(iface, 'ffff:', h(n)), filterDel(ifb, '1:', h(n)), {
      cmd: 'tc',
      args: ['class', 'del', 'dev', ifb, 'classid', `1:${hex(n)}`],
      allowFail: true,
    });
  }
  for (const [n, w] of want.up) {
    const c = from.up.get(n);
    if (c && c.address === w.address && c.kbit === w.kbit) continue;
    out.push({ cmd: 'tc', args: classArgs(ifb, w) });
    if (!c || c.address !== w.address) {
      out.push(filterAdd(ifb, '1:', h(n), 'src', w.address, ['flowid', `1:${hex(n)}`]));
      out.push(filterAdd(iface, 'ffff:', h(n), 'src', w.address, ['action', 'mirred', 'egress', 'redirect', 'dev', ifb]));
    }
  }
  return out;
}

/** A command as a shell line (golden tests, logs). */
export const commandLine = (c: TcCommand) => [c.cmd, ...c.args].join(' ');

// ------------------------------------------------------------------ reading back

/** "2Mbit", "1234Kbit", "800bit", "2500Mbit", "1Gbit" → kbit. */
export function parseRate(v: string): number | null {
  const m = /^(\d+(?:\.\d+)?)([KMGT]?)bit$/i.exec(v);
  if (!m) return null;
  const mult = { '': 0.001, K: 1, M: 1000, G: 1_000_000, T: 1_000_000_000 }[m[2].toUpperCase() as '' | 'K' | 'M' | 'G' | 'T'];
  return Math.round(Number(m[1]) * mult);
}

/** `tc class show dev X` → minor → kbit (HTB classes under 1:). */
export function parseClasses(out: string): Map<number, number> {
  const res = new Map<number, number>();
  for (const l of out.split('\n')) {
    const m = /^class htb 1:([0-9a-f]+) .*?\brate (\S+)/.exec(l.trim());
    if (!m) continue;
    const kbit = parseRate(m[2]);
    if (kbit !== null) res.set(parseInt(m[1], 16), kbit);
  }
  return res;
}

export interface ParsedFilter {
  handle: string;
  /** the matched address (the /32 match) */
  address: string | null;
  /** flowid 1:n (class filters) */
  flow: number | null;
  /** the device an ingress filter redirects to */
  redirect: string | null;
  /** the hash-table link filter: the subnet it matches (network/prefix) */
  link: string | null;
}

/** `tc filter show dev X parent P`: the u32 filters with their handle, match, flowid and redirect. */
export function parseFilters(out: string): ParsedFilter[] {
  const res: ParsedFilter[] = [];
  let cur: ParsedFilter | null = null;
  for (const raw of out.split('\n')) {
    const l = raw.trim();
    const head = /^filter .*\bfh ([0-9a-f]+:[0-9a-f]*:[0-9a-f]+)\b(.*)$/.exec(l);
    if (head) {
      const flow = /\*?flowid 1:([0-9a-f]+)/.exec(head[2]);
      cur = { handle: head[1], address: null, flow: flow ? parseInt(flow[1], 16) : null, redirect: null, link: /\blink 2:/.test(head[2]) ? '' : null };
      res.push(cur);
      continue;
    }
    if (l.startsWith('filter ')) {
      cur = null;
      continue;
    }
    if (!cur) continue;
    const match = /^match ([0-9a-f]{8})\/([0-9a-f]{8}) at (\d+)/.exec(l);
    if (match) {
      const addr = formatIPv4(parseInt(match[1], 16) >>> 0);
      const mask = parseInt(match[2], 16) >>> 0;
      if (cur.link !== null) cur.link = `${addr}/${32 - bitsFree(mask)}`;
      else if (mask === 0xffffffff) cur.address = addr;
      continue;
    }
    const red = /mirred \(Egress Redirect to device (\S+)\)/.exec(l);
    if (red) cur.redirect = red[1];
  }
  return res;
}

function bitsFree(mask: number): number {
  let n = 0;
  while (n < 32 && ((mask >>> n) & 1) === 0) n++;
  return n;
}

/** What `tc` printed for the interface and the IFB device, as one read. */
export interface TcReadout {
  ifaceQdiscs: string;
  ifaceClasses: string;
  ifaceEgressFilters: string;
  ifaceIngressFilters: string;
  /** null: the IFB device does not exist */
  ifbQdiscs: string | null;
  ifbClasses: string;
  ifbFilters: string;
}

/**
 * The state the kernel holds, when it is ours and consistent: the qdiscs, both hash-table links (for
 * this subnet) and the IFB device all there, and every class with exactly its filter(s) agreeing
 * (and no filter without its class). Anything else (a half-applied change, a foreign qdisc, another
 * subnet) reads as base false: the plan then rebuilds everything once from a clean slate.
 */
export function parseTcState(o: ShapingNames & { subnetBase: number }, r: TcReadout): TcState {
  const state = emptyState();
  const rootHtb = /qdisc htb 1: root\b/.test(r.ifaceQdiscs);
  const ingress = /qdisc ingress ffff:/.test(r.ifaceQdiscs);
  const ifbHtb = r.ifbQdiscs !== null && /qdisc htb 1: root\b/.test(r.ifbQdiscs);
  const egress = parseFilters(r.ifaceEgressFilters);
  const ing = parseFilters(r.ifaceIngressFilters);
  const ifbF = parseFilters(r.ifbFilters);
  const linked = (fs: ParsedFilter[]) => fs.some((f) => f.link === o.subnet);
  if (!(rootHtb && ingress && ifbHtb && linked(egress) && linked(ing) && linked(ifbF))) return state;
  const classes = parseClasses(r.ifaceClasses);
  const ifbClasses = parseClasses(r.ifbClasses);
  const byHandle = (fs: ParsedFilter[]) => new Map(fs.filter((f) => f.link === null && f.address).map((f) => [f.handle, f]));
  const eg = byHandle(egress);
  const ig = byHandle(ing);
  const ib = byHandle(ifbF);
  const h = (n: number) => filterHandle({ base: o.subnetBase }, n);
  const bad = () => emptyState();
  for (const [n, kbit] of classes) {
    const f = eg.get(h(n));
    if (!f || f.flow !== n || !f.address) return bad();
    state.down.set(n, { n, address: f.address, kbit });
  }
  for (const [n, kbit] of ifbClasses) {
    const f = ib.get(h(n));
    const g = ig.get(h(n));
    if (!f || !g || f.flow !== n || !f.address || g.address !== f.address || g.redirect !== o.ifb) return bad();
    state.up.set(n, { n, address: f.address, kbit });
  }
  if (eg.size !== state.down.size || ib.size !== state.up.size || ig.size !== state.up.size) return bad();
  state.base = true;
  return state;
}
