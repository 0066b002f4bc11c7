// The cluster as one node sees it (docs/guides/cluster.md):
// - join(): at start, in cluster mode. Refuses (ClusterRefused) when another node is live in the
//   registry (a row not marked lost whose heartbeat is younger than LOST_AFTER_MS) and the licence
//   lacks the feature `cluster`: that other node makes this one the second. Otherwise writes this
//   node's row and announces cluster_node_joined.
// - heartbeat(): refreshes this node's row (per-node job); a node that had been announced lost
//   announces itself joined again.
// - lead(): the leader's lock (cluster/leader.ts): a follower tries it, the leader checks its
//   connection (per-node job). Taking it records this node as leader and announces
//   cluster_leader_changed; losing it (connection failed) stops the singleton jobs at once, since the
//   scheduler asks isLeader() before each run.
// - sweepLost(): the leader marks nodes without a heartbeat for LOST_AFTER_MS as lost and announces
//   each once (cluster_node_lost; a singleton job).
// - view(): GET /api/v1/cluster.
// - removeNode(): DELETE /api/v1/cluster/nodes/:name, a lost node's row (a node gone for good).
// Without cluster mode (or on SQLite) this node is alone and always the leader; nothing is stored.
import os from 'node:os';
import { Op, type Transaction } from 'sequelize';
import { msg } from '@gatehouse/common/messages/index.js';
import type { Config } from '../config.js';
import type { Database } from '../db/index.js';
import { findRow, findRowByPk, findRows } from '../db/define.js';
import { conflict, notFound } from '../util/errors.js';
import type { EventBus } from '../events.js';
import type { FeatureGate } from '../licence/features.js';
import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/logger.js';
import { APP_VERSION } from '../version.js';
import { JOIN_LOCK_KEY, LOST_AFTER_MS } from './config.js';
import { LeaderLock } from './leader.js';
import type { ClusterNodeRow } from './nodes.js';
import type { ClusterResponse, ClusterNodeView } from './schema.js';

/** A node that may not start: the message says why and what to do. */
export class ClusterRefused extends Error {}

export interface ClusterDeps {
  config: Config;
  db: Database;
  clock: Clock;
  log: Logger;
  events: EventBus;
  features: FeatureGate;
  /** the hash of the Caddy configuration this node loaded last */
  configHash: () => string | null;
}

/** This node's address as the registry shows it: GATEHOUSE_PUBLIC_IP, else the first non-internal IPv4 of the machine. */
export function nodeAddress(config: Config): string | null {
  if (config.publicIp) return config.publicIp;
  for (const list of Object.values(os.networkInterfaces())) {
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  return null;
}

/** A node counts as live (the licence gate, the node removal): not marked lost, and a heartbeat within LOST_AFTER_MS. */
const liveWhere = (now: number) => ({ lost_at: null, last_seen_at: { [Op.gte]: now - LOST_AFTER_MS } });

export class ClusterService {
  readonly enabled: boolean;
  readonly name: string;
  private readonly lock: LeaderLock | null;
  private leading: boolean;
  private readonly address: string | null;
  private readonly startedAt: number;
  private vrrp: 'master' | 'backup' | null = null;

  constructor(private readonly deps: ClusterDeps) {
    const { config } = deps;
    this.enabled = config.cluster.enabled && !!config.databaseUrl;
    this.name = config.cluster.nodeName;
    this.address = nodeAddress(config);
    this.startedAt = deps.clock();
    this.leading = !this.enabled;
    this.lock = this.enabled
      ? new LeaderLock({ databaseUrl: config.databaseUrl!, nodeName: this.name, log: deps.log, onLost: () => (this.leading = false) })
      : null;
  }

  /** Whether this node runs the singleton jobs now (the scheduler's gate). */
  isLeader(): boolean {
    return this.leading;
  }

  /** The PostgreSQL backend pid of the leader-lock connection (null: none; tests end it to play a dead leader). */
  lockBackendPid(): number | null {
    return this.lock?.backendPid() ?? null;
  }

  private get model() {
    return this.deps.db.models.ClusterNode;
  }

  /** The other nodes that count as live now. */
  private async liveOthers(now: number, transaction?: Transaction): Promise<ClusterNodeRow[]> {
    return findRows(this.model, {
      where: { name: { [Op.ne]: this.name }, ...liveWhere(now) },
      order: [['name', 'ASC']],
      transaction,
    });
  }

  /**
   * Enters the registry (cluster mode only); throws ClusterRefused for a second node without the
   * licence feature `cluster`. The check (who else is live) and this node's row are one transaction
   * under a transaction advisory lock (JOIN_LOCK_KEY): joins are serialised, so of two unlicensed
   * nodes starting at the same instant the second one sees the first and refuses.
   */
  async join(): Promise<void> {
    if (!this.enabled) return;
    const { sequelize } = this.deps.db;
    const now = this.deps.clock();
    const others = await sequelize.transaction(async (transaction) => {
      await sequelize.query('SELECT pg_advisory_xact_lock(CAST(:key AS bigint))', { replacements: { key: JOIN_LOCK_KEY }, transaction });
      const live = await this.liveOthers(now, transaction);
      if (live.length && !this.deps.features.isEnabled('cluster')) {
        throw new ClusterRefused(msg('cluster.licence_required', { name: this.name, others: live.map((o) => o.name) }).text);
      }
      const row: ClusterNodeRow = {
        name: this.name,
        address: this.address,
        version: APP_VERSION,
        started_at: this.startedAt,
        last_seen_at: now,
        config_hash: this.deps.configHash(),
        vrrp_state: (await findRowByPk(this.model, this.name, { attributes: ['vrrp_state'], transaction }))?.vrrp_state ?? null,
        leader_since: null,
        lost_at: null,
      };
      await this.model.upsert(row, { transaction });
      return live;
    });
    this.deps.log.info(`cluster: node ${this.name} joined`, { live: others.map((o) => o.name) });
    await this.deps.events.emit({ type: 'cluster_node_joined', name: this.name, address: this.address, version: APP_VERSION, at: now });
  }

  /** Refreshes this node's row; a node that was announced lost is announced joined again. */
  async heartbeat(): Promise<void> {
    if (!this.enabled) return;
    const now = this.deps.clock();
    const before = await findRowByPk(this.model, this.name, { attributes: ['lost_at'] });
    if (!before) {
      // the row is gone (a restore, a hand edit): enter again
      await this.join();
      return;
    }
    await this.model.update({ last_seen_at: now, config_hash: this.deps.configHash(), address: this.address, lost_at: null }, { where: { name: this.name } });
    if (before.lost_at !== null) {
      await this.deps.events.emit({ type: 'cluster_node_joined', name: this.name, address: this.address, version: APP_VERSION, at: now });
    }
  }

  /** The follower tries the leader's lock; the leader checks that it still holds it. */
  async lead(): Promise<void> {
    if (!this.lock) return;
    if (this.leading) {
      await this.lock.check();
      return;
    }
    if (!(await this.lock.tryAcquire())) return;
    const now = this.deps.clock();
    const previous = await findRow(this.model, { where: { leader_since: { [Op.ne]: null } }, attributes: ['name'] });
    await this.deps.db.sequelize.transaction(async (transaction) => {
      await this.model.update({ leader_since: null }, { where: { name: { [Op.ne]: this.name } }, transaction });
      await this.model.update({ leader_since: now }, { where: { name: this.name }, transaction });
    });
    this.leading = this.lock.holding;
    this.deps.log.warn(`cluster: node ${this.name} leads now${previous && previous.name !== this.name ? ` (was ${previous.name})` : ''}`);
    if (previous?.name !== this.name) {
      await this.deps.events.emit({ type: 'cluster_leader_changed', leader: this.name, previous: previous?.name ?? null, at: now });
    }
  }

  /** The leader marks the nodes without a heartbeat for LOST_AFTER_MS as lost, announcing each once. */
  async sweepLost(): Promise<void> {
    if (!this.enabled || !this.leading) return;
    const now = this.deps.clock();
    const stale = await findRows(this.model, { where: { name: { [Op.ne]: this.name }, lost_at: null, last_seen_at: { [Op.lt]: now - LOST_AFTER_MS } } });
    for (const n of stale) {
      const [changed] = await this.model.update({ lost_at: now }, { where: { name: n.name, lost_at: null } });
      if (!changed) continue;
      this.deps.log.warn(`cluster: node ${n.name} lost (no heartbeat since ${new Date(n.last_seen_at).toISOString()})`);
      await this.deps.events.emit({ type: 'cluster_node_lost', name: n.name, last_seen_at: n.last_seen_at, at: now });
    }
  }

  /**
   * DELETE /cluster/nodes/:name: removes a lost node's row (a node gone for good). Refused (409) for
   * this node and for a node that is live: not marked lost and with a heartbeat within LOST_AFTER_MS
   * (the same rule as the licence gate's); 404 for a name the registry does not hold. The delete is
   * conditional on the row still being lost, so a node that sends a heartbeat meanwhile stays.
   */
  async removeNode(name: string, actor: number | null): Promise<{ name: string }> {
    if (name === this.name) throw conflict(msg('cluster.node_is_self', { name }));
    const row = this.enabled ? await findRowByPk(this.model, name) : null;
    if (!row) throw notFound(msg('cluster.node_not_found', { name }));
    const now = this.deps.clock();
    const removed = await this.model.destroy({ where: { name, [Op.not]: liveWhere(now) } });
    if (!removed) {
      if (!(await findRowByPk(this.model, name, { attributes: ['name'] }))) throw notFound(msg('cluster.node_not_found', { name }));
      throw conflict(msg('cluster.node_is_live', { name, lost_after_s: LOST_AFTER_MS / 1000 }));
    }
    this.deps.log.warn(`cluster: lost node ${name} removed from the registry`);
    await this.deps.events.emit({ type: 'cluster_node_removed', name, last_seen_at: Number(row.last_seen_at), actor, at: now });
    return { name };
  }

  /** This node's keepalived state (for the VRRP watcher, src/cluster/vrrp*.ts): stored on its row in cluster mode, kept in memory alone. */
  async reportVrrp(role: 'master' | 'backup' | 'unknown' | null): Promise<void> {
    const state = role === 'master' || role === 'backup' ? role : null;
    this.vrrp = state;
    if (this.enabled) await this.model.update({ vrrp_state: state }, { where: { name: this.name } });
  }

  /** GET /api/v1/cluster: the registry (cluster mode), or this node alone as its own leader. */
  async view(): Promise<Omit<ClusterResponse, 'ok'>> {
    const now = this.deps.clock();
    if (!this.enabled) {
      const self: ClusterNodeView = {
        name: this.name,
        address: this.address,
        role: 'leader',
        vrrp: this.vrrp ?? 'unknown',
        last_seen_at: now,
        config_hash: this.deps.configHash(),
        version: APP_VERSION,
        lost: false,
      };
      return { enabled: false, node: this.name, nodes: [self], leader: this.name };
    }
    const rows = await findRows(this.model, { order: [['name', 'ASC']] });
    const leader = rows.find((r) => r.leader_since !== null)?.name ?? null;
    const nodes = rows.map((r): ClusterNodeView => ({
      name: r.name,
      address: r.address,
      role: r.name === leader ? 'leader' : 'follower',
      vrrp: r.vrrp_state === 'master' || r.vrrp_state === 'backup' ? r.vrrp_state : 'unknown',
      last_seen_at: Number(r.last_seen_at),
      config_hash: r.config_hash,
      version: r.version,
      // liveWhere's rule, read on the row
      lost: r.lost_at !== null || Number(r.last_seen_at) < now - LOST_AFTER_MS,
    }));
    return { enabled: true, node: this.name, nodes, leader };
  }

  /** Gives the lead up (the lock released: another node takes it at its next try); no-op when not leading. */
  async stepDown(reason: string): Promise<void> {
    if (!this.lock || !this.leading) return;
    this.leading = false;
    await this.lock.release();
    this.deps.log.warn(`cluster: node ${this.name} gives the lead up (${reason})`);
  }

  /** Graceful stop: the lock is released (a follower leads at its next try); the row stays until it is found lost. */
  async stop(): Promise<void> {
    this.leading = !this.enabled;
    await this.lock?.release();
  }
}
