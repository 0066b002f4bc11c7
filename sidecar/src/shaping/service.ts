// Per-peer speed caps: makes the WireGuard interface's traffic control hold what the peers and their
// groups say (shaping/tc.ts renders it), through the WireGuard driver's command runner (a driver in
// a network namespace applies it there).
//
// - apply(): reads the effective caps of the enabled, unexpired peers (own speed_limit, else the
//   group's; lowered by a quota throttle), plans the difference to what was applied last and runs
//   only those commands: one peer's change never touches another peer's class or filters.
// - With `verify` (every full sync of the interface: start, resync interval, restart, a re-created
//   interface) the state is read back from the kernel first, so caps come back after a restart and
//   drift (a qdisc removed by hand) is repaired like the interface itself.
// - Runs after every peer and group change that can alter a cap (the events below) and after every
//   full sync; clear() at shutdown removes the qdiscs and the IFB device.
import { Op, type WhereOptions } from 'sequelize';
import type { PeerRow } from '../peers/model.js';
import type { Deps } from '../deps.js';
import type { WireGuardService } from '../wireguard/service.js';
import type { Runner } from '../wireguard/nat.js';
import { Mutex } from '../util/mutex.js';
import { findRows } from '../db/define.js';
import { isActive } from '../peers/view.js';
import { clearCommands, commandLine, emptyState, ifbName, parseTcState, planCommands, shapingPlan, type PeerCap, type TcCommand, type TcState } from './tc.js';
import { effectiveSpeedLimit, parseSpeedLimit } from './schema.js';

/** The events after which the caps may differ. */
export const SHAPING_EVENTS = [
  'peer_created',
  'peer_updated',
  'peer_enabled',
  'peer_disabled',
  'peer_deleted',
  'peer_expired',
  'peer_group_updated',
  'peer_group_deleted',
] as const;

export interface ShapingStatus {
  active: boolean;
  down: number;
  up: number;
  error: string | null;
  skipped: number[];
}

export class ShapingService {
  private readonly lock = new Mutex();
  /** what the kernel holds after our last apply (null: unknown, read it back first) */
  private applied: TcState | null = null;
  private lastError: string | null = null;
  private skipped: number[] = [];
  /** peer id → kbit/s both ways while a quota throttles it (quota/service.ts) */
  private throttles = new Map<number, number>();
  private stopped = false;

  constructor(
    private deps: Deps,
    private wg: WireGuardService,
  ) {
    if (wg.managed) {
      wg.onSynced(() => this.apply({ verify: true }));
      deps.events.on(SHAPING_EVENTS, async () => {
        await this.apply().catch((err) => this.deps.log.error('applying the speed caps failed', { err: String(err) }));
      });
    }
  }

  private get runner(): Runner | null {
    const r = this.wg.driver as Partial<Runner> | null;
    return r && typeof r.run === 'function' ? (r as Runner) : null;
  }

  private names() {
    const iface = this.wg.iface;
    return { iface, ifb: ifbName(iface), subnet: this.wg.subnet.cidr, subnetBase: this.wg.subnet.base };
  }

  /** Sets the quota throttles (peer id → kbit/s) and applies them. */
  async setThrottles(t: Map<number, number>): Promise<void> {
    const same = t.size === this.throttles.size && [...t].every(([k, v]) => this.throttles.get(k) === v);
    this.throttles = new Map(t);
    if (!same) await this.apply();
  }

  /** The effective caps of the peers on the interface. */
  async caps(): Promise<PeerCap[]> {
    const { Peer, PeerGroup } = this.deps.db.models;
    const groups = await findRows(PeerGroup, { attributes: ['id', 'speed_limit'], where: { speed_limit: { [Op.ne]: null } } });
    const groupCap = new Map(groups.map((g) => [g.id, parseSpeedLimit(g.speed_limit)]));
    const or: WhereOptions<PeerRow>[] = [{ speed_limit: { [Op.ne]: null } }];
    if (groupCap.size) or.push({ group_id: { [Op.in]: [...groupCap.keys()] } });
    if (this.throttles.size) or.push({ id: { [Op.in]: [...this.throttles.keys()] } });
    const rows = await findRows(Peer, {
      attributes: ['id', 'address', 'enabled', 'expires_at', 'group_id', 'speed_limit'],
      where: { [Op.or]: or },
      order: [['id', 'ASC']],
    });
    const now = this.deps.clock();
    const out: PeerCap[] = [];
    for (const r of rows) {
      if (!isActive(r, now)) continue;
      const eff = effectiveSpeedLimit(parseSpeedLimit(r.speed_limit), r.group_id ? (groupCap.get(r.group_id) ?? null) : null);
      let down = eff?.down_kbit ?? null;
      let up = eff?.up_kbit ?? null;
      const t = this.throttles.get(r.id);
      if (t !== undefined) {
        down = down === null ? t : Math.min(down, t);
        up = up === null ? t : Math.min(up, t);
      }
      if (down !== null || up !== null) out.push({ peer_id: r.id, address: r.address, down_kbit: down, up_kbit: up });
    }
    return out;
  }

  private async run(c: TcCommand): Promise<{ stdout: string; code: number }> {
    return this.runner!.run(c.cmd, c.args, { allowFail: c.allowFail });
  }

  /** What the kernel holds now, as far as it is ours and consistent (shaping/tc.ts parseTcState). */
  async read(): Promise<TcState> {
    const o = this.names();
    const tc = async (args: string[]) => {
      const r = await this.runner!.run('tc', args, { allowFail: true });
      return r.code === 0 ? r.stdout : null;
    };
    const ifbQdiscs = await tc(['qdisc', 'show', 'dev', o.ifb]);
    return parseTcState(o, {
      ifaceQdiscs: (await tc(['qdisc', 'show', 'dev', o.iface])) ?? '',
      ifaceClasses: (await tc(['class', 'show', 'dev', o.iface])) ?? '',
      ifaceEgressFilters: (await tc(['filter', 'show', 'dev', o.iface, 'parent', '1:'])) ?? '',
      ifaceIngressFilters: (await tc(['filter', 'show', 'dev', o.iface, 'parent', 'ffff:'])) ?? '',
      ifbQdiscs,
      ifbClasses: ifbQdiscs === null ? '' : ((await tc(['class', 'show', 'dev', o.ifb])) ?? ''),
      ifbFilters: ifbQdiscs === null ? '' : ((await tc(['filter', 'show', 'dev', o.ifb, 'parent', '1:'])) ?? ''),
    });
  }

  /** Makes the interface's traffic control hold the current caps; `verify` reads the kernel's state first. */
  async apply(opts: { verify?: boolean } = {}): Promise<ShapingStatus> {
    if (!this.runner || this.stopped) return this.status();
    return this.lock.run(async () => {
      if (!this.wg.isRunning) {
        this.applied = null;
        return this.status();
      }
      const { state: want, skipped } = shapingPlan(this.wg.subnet, await this.caps());
      if (skipped.length && skipped.join() !== this.skipped.join())
        this.deps.log.warn(`speed caps of peers past the subnet's first 65,534 addresses cannot be applied (peers ${skipped.join(', ')})`);
      this.skipped = skipped;
      const have = opts.verify || !this.applied ? await this.read() : this.applied;
      const cmds = planCommands(this.names(), have, want);
      try {
        for (const c of cmds) await this.run(c);
        this.applied = want;
        this.lastError = null;
      } catch (err) {
        this.applied = null; // read back at the next apply
        this.lastError = String((err as Error)?.message ?? err);
        this.deps.log.error('speed caps: a traffic control command failed', { err: this.lastError });
        throw err;
      }
      if (cmds.length) this.deps.log.debug('speed caps applied', { commands: cmds.map(commandLine) });
      return this.status();
    });
  }

  status(): ShapingStatus {
    const a = this.applied ?? emptyState();
    return { active: a.base, down: a.down.size, up: a.up.size, error: this.lastError, skipped: [...this.skipped] };
  }

  /** Removes the qdiscs and the IFB device (shutdown). */
  async clear(): Promise<void> {
    this.stopped = true;
    if (!this.runner) return;
    await this.lock.run(async () => {
      for (const c of clearCommands(this.names())) await this.run(c).catch(() => undefined);
      this.applied = emptyState();
    });
  }
}
