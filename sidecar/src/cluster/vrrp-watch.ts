// Follows this node's VRRP role (src/cluster/vrrp.ts) for the rest of the node: each tick reads the
// role; a change is reported (the node's cluster_nodes row) and, when the node became master, the
// WireGuard service takes the tunnels over (WireGuardService.takeOver: the peers' handshakes start
// from here at once instead of after their rekey timeout). `carrier` is what
// WireGuardService.setCarrier asks: with a floating address configured, only the master carries the
// tunnels (an unknown state does not: a standby starting handshakes would take a peer's tunnel away
// from the holder); without one, the node always carries them (one node).
import { readVrrpStatus, type VrrpRole, type VrrpStatus, type VrrpStatusSource } from './vrrp.js';

export interface VrrpWatchHooks {
  /** the role changed (the first tick always reports) */
  report(role: VrrpRole, status: VrrpStatus): Promise<void>;
  /** the node became master: take the tunnels over */
  takeOver(): Promise<unknown>;
}

export class VrrpWatcher {
  private role: VrrpRole | null = null;

  constructor(
    private readonly source: VrrpStatusSource,
    private readonly hooks: VrrpWatchHooks,
    private readonly read: (src: VrrpStatusSource) => VrrpStatus = (src) => readVrrpStatus(src),
  ) {}

  /** Whether this node carries the tunnels now. */
  get carrier(): boolean {
    return !this.source.address || this.role === 'master';
  }

  /** The role last seen (null before the first tick). */
  get current(): VrrpRole | null {
    return this.role;
  }

  /** Reads the role once; reports a change and takes over on becoming master. */
  async tick(): Promise<VrrpStatus> {
    const status = this.read(this.source);
    const before = this.role;
    if (status.vrrp === before) return status;
    this.role = status.vrrp;
    await this.hooks.report(status.vrrp, status);
    if (status.vrrp === 'master') await this.hooks.takeOver();
    return status;
  }
}
