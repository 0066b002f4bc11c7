// Forwarding and NAT for full-tunnel peers: a peer whose config routes 0.0.0.0/0 into the tunnel
// reaches the internet through this server, which forwards its packets out of the default-route
// interface and masquerades them as its own address there.
//
// - natRules(): the pure part: the iptables rules (as `iptables -S` prints them) for one interface,
//   subnet and outgoing interface. Every rule carries the comment "gatehouse-nat:<iface>", by which
//   the reconcile finds its own rules again (and never touches anybody else's).
//     nat    POSTROUTING  -s <subnet> -o <out> -j MASQUERADE
//     filter FORWARD      -s <subnet> -i <iface> -o <out> -j ACCEPT                   (out, first in the chain)
//     filter FORWARD      -d <subnet> -i <out> -o <iface> conntrack RELATED,ESTABLISHED -j ACCEPT  (answers back)
//   The FORWARD rules are inserted at the top of the chain, so a DROP policy (Docker's, a host
//   firewall's) does not swallow the tunnel's traffic; everything else in the chains stays as it is.
// - NatManager.reconcile(): makes the kernel hold exactly natRules() (wanted) or none of our rules
//   (not wanted): lists the chains, deletes our rules that differ (the default route moved to
//   another interface, the subnet changed), adds the missing ones, and turns on IPv4 forwarding
//   (`sysctl net.ipv4.ip_forward=1`; never turned off again: other things may need it). Idempotent;
//   run at every full sync of the interface (start, resync interval, restart) and after a peer
//   change, and the rules are removed when the interface goes down.
// - When: GATEHOUSE_WG_NAT=auto (default) while at least one enabled, unexpired peer has a full
//   tunnel (client_allowed_ips holds 0.0.0.0/0 or ::/0); on: always; off: never (the admin does it).
// Commands run through the WireGuard driver's runner, so a driver in a network namespace (tests)
// applies them there. IPv6: the tunnel has IPv4 addresses only; ::/0 in a client config sends the
// client's IPv6 traffic into the tunnel where it ends (no leak past the VPN), nothing is NATed.

import type { z } from 'zod';
import type { wgStatusResponse } from './schema.js';

export type NatMode = NatState['mode'];

export interface NatRule {
  table: 'nat' | 'filter';
  chain: 'POSTROUTING' | 'FORWARD';
  /** insert at the top of the chain (FORWARD) rather than append */
  first: boolean;
  /** the rule's arguments after the chain name, in the order `iptables -S` prints them */
  args: string[];
}

export const natComment = (iface: string) => `gatehouse-nat:${iface}`;

/** The rules for `iface` (the WireGuard interface), its `subnet` and the outgoing interface `out`. */
export function natRules(o: { iface: string; subnet: string; out: string }): NatRule[] {
  const tag = ['-m', 'comment', '--comment', natComment(o.iface)];
  return [
    { table: 'nat', chain: 'POSTROUTING', first: false, args: ['-s', o.subnet, '-o', o.out, ...tag, '-j', 'MASQUERADE'] },
    { table: 'filter', chain: 'FORWARD', first: true, args: ['-s', o.subnet, '-i', o.iface, '-o', o.out, ...tag, '-j', 'ACCEPT'] },
    {
      table: 'filter',
      chain: 'FORWARD',
      first: true,
      args: ['-d', o.subnet, '-i', o.out, '-o', o.iface, '-m', 'conntrack', '--ctstate', 'RELATED,ESTABLISHED', ...tag, '-j', 'ACCEPT'],
    },
  ];
}

/** A rule as `iptables -t <table> -S <chain>` prints it (the comment in double quotes). */
export function ruleLine(r: Pick<NatRule, 'chain' | 'args'>): string {
  const args = r.args.map((a, i) => (r.args[i - 1] === '--comment' ? `"${a}"` : a));
  return ['-A', r.chain, ...args].join(' ');
}

/** Our rules among `iptables -S` output lines (those carrying our comment), as argument lists after the chain. */
export function ownRules(sOutput: string, iface: string): { line: string; args: string[] }[] {
  const mark = `--comment "${natComment(iface)}"`;
  return sOutput
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.startsWith('-A ') && (l.includes(`${mark} `) || l.endsWith(mark)))
    .map((line) => ({
      line,
      args: line
        .split(/\s+/)
        .slice(2)
        .map((a) => a.replace(/^"(.*)"$/, '$1')),
    }));
}

/** `ip -4 route show default` → the interface of the first default route, or null. */
export function defaultRouteInterface(output: string): string | null {
  for (const l of output.split('\n')) {
    const m = /^default\b.*?\bdev\s+(\S+)/.exec(l.trim());
    if (m) return m[1];
  }
  return null;
}

/** Forwarding and NAT as GET /wg/status shows them (wireguard/schema.ts). */
export type NatState = NonNullable<z.output<typeof wgStatusResponse>['nat']>;

export interface Runner {
  run(cmd: string, args: string[], o?: { allowFail?: boolean }): Promise<{ stdout: string; stderr: string; code: number }>;
}

export class NatManager {
  private state: NatState;
  constructor(
    private readonly runner: Runner,
    private readonly o: { iface: string; subnet: string; mode: NatMode; iptables?: string },
  ) {
    this.state = { mode: o.mode, wanted: false, active: false, out_interface: null, forwarding: null, error: null, rules: [] };
  }

  get current(): NatState {
    return { ...this.state, rules: [...this.state.rules] };
  }

  private get ipt(): string {
    return this.o.iptables ?? 'iptables';
  }

  private async listOwn(table: NatRule['table'], chain: NatRule['chain']) {
    const r = await this.runner.run(this.ipt, ['-w', '-t', table, '-S', chain]);
    return ownRules(r.stdout, this.o.iface).filter((x) => x.line.startsWith(`-A ${chain} `));
  }

  /** Whether the rules belong there: mode on, or auto with `fullTunnelPeers`. */
  wants(fullTunnelPeers: boolean): boolean {
    return this.o.mode === 'on' || (this.o.mode === 'auto' && fullTunnelPeers);
  }

  /** Makes the kernel hold our rules when wants(fullTunnelPeers), none of them otherwise. */
  reconcile(fullTunnelPeers: boolean): Promise<NatState> {
    return this.apply(this.wants(fullTunnelPeers));
  }

  private async apply(wanted: boolean): Promise<NatState> {
    const { mode, iface, subnet } = this.o;
    const next: NatState = { mode, wanted, active: false, out_interface: null, forwarding: this.state.forwarding, error: null, rules: [] };
    if (mode === 'off') {
      this.state = next;
      return this.current;
    }
    try {
      let desired: NatRule[] = [];
      if (wanted) {
        const routes = await this.runner.run('ip', ['-4', 'route', 'show', 'default']);
        next.out_interface = defaultRouteInterface(routes.stdout);
        if (next.out_interface) desired = natRules({ iface, subnet, out: next.out_interface });
        else next.error = 'no IPv4 default route: full-tunnel traffic has no way out';
      }
      const chains: [NatRule['table'], NatRule['chain']][] = [
        ['nat', 'POSTROUTING'],
        ['filter', 'FORWARD'],
      ];
      for (const [table, chain] of chains) {
        const have = await this.listOwn(table, chain);
        const want = desired.filter((d) => d.table === table && d.chain === chain);
        const wantLines = new Set(want.map(ruleLine));
        for (const h of have) if (!wantLines.has(h.line)) await this.runner.run(this.ipt, ['-w', '-t', table, '-D', chain, ...h.args]);
        const haveLines = new Set(have.map((h) => h.line));
        for (const w of want) {
          if (haveLines.has(ruleLine(w))) continue;
          await this.runner.run(this.ipt, ['-w', '-t', table, ...(w.first ? ['-I', chain, '1'] : ['-A', chain]), ...w.args]);
        }
      }
      next.rules = desired.map(ruleLine);
      next.active = desired.length > 0;
      if (next.active) {
        const fwd = await this.runner.run('sysctl', ['-n', 'net.ipv4.ip_forward'], { allowFail: true });
        next.forwarding = fwd.stdout.trim() === '1';
        if (!next.forwarding) {
          const set = await this.runner.run('sysctl', ['-q', '-w', 'net.ipv4.ip_forward=1'], { allowFail: true });
          next.forwarding = set.code === 0;
          if (!next.forwarding)
            next.error = `IPv4 forwarding is off and could not be turned on (${(set.stderr || set.stdout).trim() || `exit ${set.code}`}): set the sysctl net.ipv4.ip_forward=1`;
        }
      }
    } catch (err) {
      next.active = false;
      // Nothing wanted and no iptables on this machine: there is nothing of ours to remove either.
      if (!wanted && /ENOENT/.test(String((err as Error)?.message ?? err))) {
        this.state = next;
        return this.current;
      }
      next.error = String((err as Error)?.message ?? err);
      this.state = next;
      throw err;
    }
    this.state = next;
    return this.current;
  }

  /** Removes our rules (the interface goes down). */
  async clear(): Promise<void> {
    if (this.o.mode === 'off') return;
    await this.apply(false);
  }
}
