// The WireGuard service: makes the interface hold what the database says, and reads it back.
//
// - start(): brings the interface up with the server key (generated on first use, stored sealed in
//   the settings table), the listen port and the subnet's first address, holding every active peer.
// - reconcilePeer(before): applies one peer's change with the driver's setPeer (add/update) or
//   removePeer (disabled, expired or deleted): one UAPI `set=1` transaction on a wireguard-go
//   interface, `wg set` on a kernel one. Never a full sync on the request path. A peer added back
//   (re-enabled) gets its last endpoint and the server starts its handshake, so it passes traffic
//   at once instead of after the peer's own rekey timeout. That endpoint is read from the interface
//   when the peer leaves it (keepLastContact), so it is known also when the peer connected and was
//   disabled between two polls.
// - fullSync(): the whole peer list from the database (`wg syncconf`), or a fresh `up` when the
//   interface is missing: at start, on POST /wg/restart and every resync interval (heals drift).
//   A fresh `up` restores recently seen peers' endpoints and starts their handshakes, so tunnels
//   recover at once after a restart, in both directions, without the peers doing anything.
// - poll(): `wg show <if> dump` every poll interval; stores latest handshakes, endpoints and running
//   byte totals (total_rx/total_tx grow by the difference to the last raw counter; a raw counter
//   lower than the last one means the interface or the peer was re-created, so the whole raw value
//   is new traffic), samples traffic into peer_traffic, emits peer_online / peer_offline, and
//   `peer_traffic` (bytes per second of each peer that moved data, and once more at zero when it
//   stops) when something changed.
// - `wireguard_state` is emitted when the interface goes up or away or a full sync starts or stops
//   failing (the live UI's WireGuard card).
// - checkExpiry() (PEER_EXPIRY_JOB, a singleton job: the leader's, with the hourly traffic rollup):
//   peers whose expires_at passed leave the tunnel (kept in the database) and the expiry is logged
//   and announced once (a watermark in the settings table, claimed by compare-and-set before the
//   announcement, remembers what was announced; the other nodes take the peer off their interfaces
//   through the change feed, and their resync would too).
// - reconcileNat(): forwarding and MASQUERADE for full-tunnel peers (wireguard/nat.ts), after every
//   full sync and peer change; the rules go when the interface goes down.
// Driver calls are serialized by one mutex, so a full sync never races a single-peer change.
// With config.wg.manage false the service keeps the database state and never touches a driver.
import { msg } from '@gatehouse/common/messages/index.js';
import { Op } from 'sequelize';
import type { Deps } from '../deps.js';
import type { Job } from '../util/scheduler.js';
import type { PeerRow } from '../peers/model.js';
import { conflict } from '../util/errors.js';
import { Mutex } from '../util/mutex.js';
import { addSamples, rollup, HOUR } from '../peers/traffic.js';
import type { z } from 'zod';
import type { wgStatusResponse } from './schema.js';
import { isActive, isOnline, ONLINE_WINDOW_MS } from '../peers/view.js';
import { asBool, findRows, findRowByPk } from '../db/define.js';
import { generateKeyPair, publicKeyFromPrivate } from '@gatehouse/common/wireguard/keys.js';
import { parseSubnet, serverAddress, serverInterfaceAddress, type Subnet } from '@gatehouse/common/wireguard/render.js';
import type { WgDump, WgInterfaceSpec, WgPeerSpec, WireGuardDriver } from '@gatehouse/common/wireguard/types.js';
import type { PeerTrafficEvent } from '../events.js';
import { NatManager, type NatState, type Runner } from './nat.js';
import { isFullTunnel, parseClientAllowedIps } from '../peers/cidr.js';
import { SPLIT_TUNNEL_SETTING } from '../client-api/split-tunnel-setting.js';
import { NodeRawCounters, type Raw } from './raw-counters.js';

export const SERVER_KEY_SETTING = 'wg.server_private_key';
export const EXPIRY_WATERMARK_SETTING = 'wg.expiry_watermark';
/** The singleton job that takes expired peers off the tunnels and rolls the traffic history up. */
export const PEER_EXPIRY_JOB = 'peer expiry';
/** A fresh interface gets back the endpoints of peers seen this recently (see desiredSpec). */
export const RESTORE_ENDPOINT_MS = 24 * 3600_000;
/** Keepalive interval (s) set for one transaction to make the server start a re-added peer's handshake. */
const NUDGE_KEEPALIVE_S = 25;
/** How long, and how often, the peers of a fresh interface are nudged until they have a handshake. */
const RENUDGE_MS = 3000;
const RENUDGE_STEP_MS = 200;
/** host:port as `wg show dump` prints it: IPv4 or [IPv6] */
const ENDPOINT_RE = /^(\d{1,3}(\.\d{1,3}){3}|\[[0-9a-fA-F:.%\w]+\]):\d{1,5}$/;
/** The peer's last known endpoint when it was seen within RESTORE_ENDPOINT_MS, else null. */
function restorableEndpoint(r: Pick<WgRow, 'latest_handshake' | 'endpoint'>, now: number): string | null {
  const recent = r.latest_handshake !== null && now - Number(r.latest_handshake) <= RESTORE_ENDPOINT_MS;
  return recent && r.endpoint && ENDPOINT_RE.test(r.endpoint) ? r.endpoint : null;
}

/** The columns the interface and the poller need. */
const WG_ATTRS = [
  'id',
  'name',
  'public_key',
  'preshared_key_enc',
  'allowed_ips',
  'enabled',
  'expires_at',
  'access_schedule',
  'latest_handshake',
  'endpoint',
  'last_raw_rx',
  'last_raw_tx',
  'total_rx',
  'total_tx',
] as const;
type WgRow = Pick<PeerRow, (typeof WG_ATTRS)[number]>;

/** One peer in a peer_traffic event: bytes per second over the last poll interval and the running totals. */
export type PeerTraffic = PeerTrafficEvent['peers'][number];

export interface WireGuardServiceOptions {
  driver?: WireGuardDriver | null;
  pollIntervalMs?: number;
  resyncIntervalMs?: number;
}

/** GET /wg/status's answer without its `ok` (the shape is wgStatusResponse's, schema.ts). */
export type WgStatus = Omit<z.output<typeof wgStatusResponse>, 'ok'>;

export class WireGuardService {
  readonly driver: WireGuardDriver | null;
  readonly subnet: Subnet;
  readonly pollIntervalMs: number;
  readonly resyncIntervalMs: number;
  private readonly lock = new Mutex();
  private serverKey: Promise<{ privateKey: string; publicKey: string }> | null = null;
  /** public keys we believe the interface holds */
  private present = new Set<string>();
  private pskCache = new Map<string, string>();
  /** peer id → online at the last poll (for transition events) */
  private online = new Map<number, boolean>();
  private jobs: Job[] = [];
  private ticking = false;
  private lastPollAt: number | null = null;
  private lastSyncAt: number | null = null;
  private lastRollupAt = 0;
  private mode: 'kernel' | 'userspace' | null = null;
  private running = false;
  private rates = { rx: 0, tx: 0 };
  /** peer id → bytes/s last announced in peer_traffic (only peers that moved data) */
  private peerRates = new Map<number, { rx: number; tx: number }>();
  /** the interface state last announced in wireguard_state */
  private announced = { running: false, error: null as string | null };
  private stopped = false;
  /** forwarding + MASQUERADE for full-tunnel peers (null: not managed, or a driver without a command runner) */
  readonly nat: NatManager | null;
  private readonly natLock = new Mutex();
  /** cluster mode: this node's raw counters, in its data directory (raw-counters.ts); null: in the peer rows */
  private readonly nodeRaw: NodeRawCounters | null;

  constructor(
    private deps: Deps,
    opts: WireGuardServiceOptions = {},
  ) {
    this.driver = deps.config.wg.manage ? (opts.driver ?? null) : null;
    if (deps.config.wg.manage && !this.driver) throw new Error('WireGuardService: a driver is required when GATEHOUSE_WG_MANAGE is on');
    this.subnet = parseSubnet(deps.config.wg.subnet);
    this.pollIntervalMs = opts.pollIntervalMs ?? deps.config.wg.pollIntervalMs;
    this.resyncIntervalMs = opts.resyncIntervalMs ?? deps.config.wg.resyncIntervalMs;
    this.nodeRaw = deps.config.cluster.enabled ? NodeRawCounters.inDataDir(deps.config.dataDir) : null;
    const runner = this.driver as Partial<Runner> | null;
    this.nat =
      runner && typeof runner.run === 'function'
        ? new NatManager(runner as Runner, { iface: this.iface, subnet: this.subnet.cidr, mode: deps.config.wg.nat ?? 'auto' })
        : null;
  }

  get managed(): boolean {
    return this.driver !== null;
  }
  get iface(): string {
    return this.deps.config.wg.iface;
  }
  /** The server's tunnel address ("10.8.0.1"). */
  get serverAddress(): string {
    return serverAddress(this.subnet);
  }
  /** What peers dial: this server's public host (system/public-host.ts) and the WireGuard port. */
  get endpoint(): string {
    const host = this.deps.publicHost.current().host;
    return `${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}:${this.deps.config.wg.port}`;
  }
  /** Bytes per second received from / sent to all peers over the last poll interval. */
  get trafficRates(): { rx: number; tx: number } {
    return { ...this.rates };
  }
  /** Whether the interface was up at the last look (false when not managed). */
  get isRunning(): boolean {
    return this.managed && this.running;
  }

  /** The server key pair; the private key is generated once and stored sealed in the settings table. */
  serverKeys(): Promise<{ privateKey: string; publicKey: string }> {
    this.serverKey ??= (async () => {
      const sealed = await this.deps.settings.get<string | null>(SERVER_KEY_SETTING, null);
      if (sealed) {
        const privateKey = this.deps.crypto.open(sealed);
        return { privateKey, publicKey: publicKeyFromPrivate(privateKey) };
      }
      // the first node to store a key wins: every node of a cluster serves the tunnels with one key
      const kp = generateKeyPair();
      const stored = await this.deps.settings.setIfAbsent(SERVER_KEY_SETTING, this.deps.crypto.seal(kp.privateKey));
      if (this.deps.crypto.open(stored) !== kp.privateKey) {
        const privateKey = this.deps.crypto.open(stored);
        return { privateKey, publicKey: publicKeyFromPrivate(privateKey) };
      }
      await this.deps.activity.record({
        source: 'wireguard',
        event_type: 'wg_server_key_created',
        msg: msg('wireguard.server_key_created'),
        details: { public_key: kp.publicKey },
      });
      return kp;
    })().catch((err) => {
      this.serverKey = null;
      throw err;
    });
    return this.serverKey;
  }

  /** Forget the cached server key and the per-peer caches (a backup restore brought other keys). */
  forgetKeys(): void {
    this.serverKey = null;
    this.pskCache.clear();
  }

  // ------------------------------------------------------------------ lifecycle

  async start(): Promise<void> {
    this.stopped = false;
    await this.serverKeys();
    const now = this.deps.clock();
    const rows = await findRows(this.deps.db.models.Peer, { attributes: ['id', 'enabled', 'expires_at', 'latest_handshake'] });
    for (const r of rows) this.online.set(r.id, isOnline(r, now));
    if (this.managed) await this.fullSync();
    if (this.deps.scheduler.isLeader()) await this.checkExpiry().catch((err) => this.deps.log.error('expiry check failed', { err: String(err) }));
    this.jobs.push(this.deps.scheduler.every('WireGuard poll', this.pollIntervalMs, () => this.tick(), { scope: 'per-node' }));
    // expiry and the traffic rollup change shared rows and announce events: once in a cluster (the leader)
    this.jobs.push(this.deps.scheduler.every(PEER_EXPIRY_JOB, this.pollIntervalMs, () => this.housekeeping(), { scope: 'singleton' }));
    if (this.managed)
      this.jobs.push(this.deps.scheduler.every('WireGuard resync', this.resyncIntervalMs, () => this.fullSync(), { scope: 'per-node', errorLevel: 'error' }));
  }

  /** One poll of this node's interface (every node). Never overlaps itself. */
  async tick(): Promise<void> {
    if (this.ticking || this.stopped) return;
    this.ticking = true;
    try {
      if (this.managed) await this.poll().catch((err) => this.deps.log.error('WireGuard poll failed', { err: String(err) }));
    } finally {
      this.ticking = false;
    }
  }

  /** The leader's round (PEER_EXPIRY_JOB): expiry, and the hourly traffic rollup. */
  async housekeeping(): Promise<void> {
    if (this.stopped) return;
    await this.checkExpiry().catch((err) => this.deps.log.error('expiry check failed', { err: String(err) }));
    const now = this.deps.clock();
    if (now - this.lastRollupAt >= HOUR) {
      this.lastRollupAt = now;
      await rollup(this.deps.db.sequelize, now).catch((err) => this.deps.log.error('traffic rollup failed', { err: String(err) }));
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const j of this.jobs) j.stop();
    this.jobs = [];
    if (!this.managed) return;
    await this.lock.run(async () => {
      // Keep the counters of the last interval, then take the interface down (totals survive: the
      // next start sees fresh raw counters and adds them to the stored totals).
      await this.pollLocked().catch((err) => this.deps.log.warn('final WireGuard poll failed', { err: String(err) }));
      await this.driver!.down(this.iface);
      this.present.clear();
      this.running = false;
      await this.natLock.run(() => this.nat?.clear()).catch((err) => this.deps.log.warn('removing the WireGuard NAT rules failed', { err: String(err) }));
      await this.announceState('stopped');
    });
  }

  // ------------------------------------------------------------------ interface state

  private async psk(row: Pick<PeerRow, 'preshared_key_enc'>): Promise<string | undefined> {
    const sealed = row.preshared_key_enc;
    if (!sealed) return undefined;
    let v = this.pskCache.get(sealed);
    if (!v) {
      v = this.deps.crypto.open(sealed);
      if (this.pskCache.size > 100_000) this.pskCache.clear();
      this.pskCache.set(sealed, v);
    }
    return v;
  }

  async peerSpec(row: Pick<PeerRow, 'public_key' | 'preshared_key_enc' | 'allowed_ips'>): Promise<WgPeerSpec> {
    return {
      publicKey: row.public_key,
      presharedKey: await this.psk(row),
      allowedIps: row.allowed_ips
        .split(',')
        .map((c) => c.trim())
        .filter(Boolean),
    };
  }

  /**
   * The interface as the database wants it: every enabled, unexpired peer. `withEndpoints` (a fresh
   * interface only): peers with a handshake in the last RESTORE_ENDPOINT_MS get their last known
   * endpoint back, so the server can start the handshake itself when it has traffic for them
   * (Caddy proxying to a backend): without it a restart of the server breaks every tunnel until the
   * peer gives up on its old session and re-handshakes (about 15 s). On a running interface the
   * endpoints WireGuard learned are left alone (a roaming peer's stored one may be stale).
   */
  async desiredSpec(opts: { withEndpoints?: boolean } = {}): Promise<{ spec: WgInterfaceSpec; rows: WgRow[] }> {
    const { privateKey } = await this.serverKeys();
    const now = this.deps.clock();
    const rows = await findRows(this.deps.db.models.Peer, { attributes: [...WG_ATTRS], order: [['id', 'ASC']] });
    const peers: WgPeerSpec[] = [];
    for (const r of rows) {
      if (!isActive(r, now)) continue;
      const spec = await this.peerSpec(r);
      const endpoint = opts.withEndpoints ? restorableEndpoint(r, now) : null;
      if (endpoint) spec.endpoint = endpoint;
      peers.push(spec);
    }
    return { spec: { iface: this.iface, privateKey, listenPort: this.deps.config.wg.port, address: serverInterfaceAddress(this.subnet), peers }, rows };
  }

  /** Raw counters start again at zero for peers that (re)appear on or leave the interface. */
  private async resetRaw(ids: number[] | 'all'): Promise<void> {
    if (this.nodeRaw) {
      this.nodeRaw.reset(ids);
      this.nodeRaw.save();
      return;
    }
    const { Peer } = this.deps.db.models;
    if (ids === 'all') await Peer.update({ last_raw_rx: 0, last_raw_tx: 0 }, { where: {} });
    else if (ids.length) {
      for (let i = 0; i < ids.length; i += 500) await Peer.update({ last_raw_rx: 0, last_raw_tx: 0 }, { where: { id: { [Op.in]: ids.slice(i, i + 500) } } });
    }
  }

  /** Makes the interface hold exactly the database's active peers (brings it up when missing). */
  async fullSync(): Promise<{ peers: number; created: boolean; ms: number }> {
    if (!this.managed) return { peers: 0, created: false, ms: 0 };
    try {
      return await this.lock.run(() => this.fullSyncLocked());
    } catch (err) {
      await this.announceState('sync failed', String((err as Error)?.message ?? err));
      throw err;
    }
  }

  /** wireguard_state when the interface's state (running, last sync error) differs from the last one announced. */
  private async announceState(reason: string, error: string | null = null): Promise<void> {
    const running = this.running;
    if (running === this.announced.running && error === this.announced.error) return;
    this.announced = { running, error };
    await this.deps.events.emit({ type: 'wireguard_state', interface: this.iface, running, mode: running ? this.mode : null, error, reason });
  }

  private async fullSyncLocked(): Promise<{ peers: number; created: boolean; ms: number }> {
    const t0 = performance.now();
    const before = await this.driver!.dump(this.iface);
    const { spec, rows } = await this.desiredSpec({ withEndpoints: !before && this.carrier() });
    const wanted = new Set(spec.peers.map((p) => p.publicKey));
    let created = false;
    if (!before) {
      const r = await this.driver!.up(spec);
      this.mode = r.mode;
      created = true;
      await this.resetRaw('all');
      // The peers still hold their session with the interface that went away (wireguard-go
      // killed, the sidecar restarted): data they send is dropped until they re-handshake by
      // themselves (~15 s). Every peer whose endpoint came back is nudged like a re-enabled one
      // (reconcilePeer), so the server starts the handshake now and their traffic passes at once.
      // wireguard-go takes the link's "up" in its own time after `ip link set up` returns, and a
      // nudge it gets before that is lost: renudge() repeats it until each peer has a handshake.
      await this.nudge(spec.peers.filter((p) => p.endpoint));
    } else {
      if (!this.mode) this.mode = (await (this.driver as { mode?: (i: string) => Promise<'kernel' | 'userspace' | null> }).mode?.(this.iface)) ?? null;
      await this.driver!.sync(spec);
      const had = new Set(before.peers.map((p) => p.publicKey));
      // counters restart for peers added now or removed now
      await this.resetRaw(rows.filter((r) => wanted.has(r.public_key) !== had.has(r.public_key)).map((r) => r.id));
    }
    this.present = wanted;
    this.running = true;
    this.lastSyncAt = this.deps.clock();
    await this.reconcileNat({ verify: true }).catch((err) => this.deps.log.error('reconciling the WireGuard NAT failed', { err: String(err) }));
    for (const f of this.synced) await f().catch((err) => this.deps.log.error('after a WireGuard full sync', { err: String(err) }));
    await this.announceState(created ? 'interface up' : 'synced');
    return { peers: spec.peers.length, created, ms: performance.now() - t0 };
  }

  /**
   * After a fresh interface: the restored peers that have no handshake yet are nudged again every
   * RENUDGE_STEP_MS for RENUDGE_MS (a nudge wireguard-go got before it took the link up did
   * nothing; one to a peer whose handshake is already under way is ignored by wireguard-go's own
   * rate limit). Each round re-reads the peers, so a peer changed meanwhile is set as it is now.
   */
  /**
   * Each peer (with its endpoint) gets one keepalive transaction, so the server starts its handshake
   * now, then its database state; renudge() repeats it until each has a handshake.
   */
  private async nudge(peers: WgPeerSpec[]): Promise<void> {
    for (const p of peers) {
      await this.driver!.setPeer(this.iface, { ...p, persistentKeepalive: NUDGE_KEEPALIVE_S });
      await this.driver!.setPeer(this.iface, p);
    }
    if (!peers.length) return;
    const run = this.renudge(peers.map((p) => p.publicKey))
      .catch((err: unknown) => void this.deps.log.warn('WireGuard handshake nudge failed', { err: String(err) }))
      .finally(() => this.nudging.delete(run));
    this.nudging.add(run);
  }

  /**
   * Whether this node carries the tunnels (see setCarrier): only a carrier gives peers their last
   * endpoints back and starts their handshakes. True on a single node.
   */
  private carrier: () => boolean = () => true;

  /**
   * A cluster's nodes share the server key and every peer; the one holding the floating address
   * carries the tunnels. A standby that started handshakes would take a peer's tunnel away from the
   * carrier (the peer answers the newest handshake, from the standby's own address), so a standby
   * never restores endpoints or nudges; when it becomes the carrier, takeOver() does.
   */
  setCarrier(fn: () => boolean): void {
    this.carrier = fn;
  }

  /**
   * This node now carries the tunnels (it took the floating address): every active peer seen in the
   * last RESTORE_ENDPOINT_MS gets its last endpoint (as the poller of the node that carried it
   * stored it) and the server starts its handshake, so a tunnel passes traffic within a round trip
   * instead of after the peer's own rekey timeout. Returns the number of peers nudged.
   */
  async takeOver(): Promise<number> {
    if (!this.managed) return 0;
    return this.lock.run(async () => {
      if (!(await this.driver!.dump(this.iface))) return 0; // no interface: the next full sync brings it up, with endpoints
      const { spec } = await this.desiredSpec({ withEndpoints: true });
      const peers = spec.peers.filter((p) => p.endpoint);
      await this.nudge(peers);
      return peers.length;
    });
  }

  /** Per peer (public key), the endpoint storeEndpoints() last found stored or stored itself. */
  private storedEndpoints = new Map<string, string>();

  /**
   * The carrier of a cluster (the floating address's holder) stores each peer's endpoint as soon as
   * it sees a new one, not only at the next poll (GATEHOUSE_WG_POLL_INTERVAL, 10 s by default): the
   * node that takes the tunnels over after a failure starts each peer's handshake from its stored
   * endpoint (takeOver), and a peer whose endpoint it lacks waits for its own rekey (~15 s). Reads
   * the interface once; writes only the endpoints that changed. Returns how many it wrote.
   */
  async storeEndpoints(): Promise<number> {
    if (!this.managed) return 0;
    if (!this.carrier()) {
      // a standby stores nothing; when it carries again it writes every endpoint it sees once
      this.storedEndpoints.clear();
      return 0;
    }
    return this.lock.run(async () => {
      const dump = await this.driver!.dump(this.iface);
      if (!dump) return 0;
      const changed = dump.peers.filter((p) => p.endpoint && this.storedEndpoints.get(p.publicKey) !== p.endpoint);
      let wrote = 0;
      for (const p of changed) {
        // a plain UPDATE, as the poll writes its columns: the endpoint is no change anyone subscribes to
        await this.deps.db.sequelize.query('UPDATE peers SET endpoint = ? WHERE public_key = ?', { replacements: [p.endpoint, p.publicKey] });
        this.storedEndpoints.set(p.publicKey, p.endpoint!);
        wrote++;
      }
      return wrote;
    });
  }

  /** The renudge() runs under way (after a fresh interface). */
  private readonly nudging = new Set<Promise<void>>();

  /** Resolves once the handshake nudges after a fresh interface are done (at most RENUDGE_MS). */
  async nudgesDone(): Promise<void> {
    while (this.nudging.size) await Promise.all([...this.nudging]);
  }

  private async renudge(keys: string[]): Promise<void> {
    // the rounds wait in real time (setTimeout), so they are counted, not measured on the clock
    let rounds = Math.ceil(RENUDGE_MS / RENUDGE_STEP_MS);
    let left = keys;
    while (left.length && !this.stopped && rounds-- > 0) {
      await new Promise((r) => setTimeout(r, RENUDGE_STEP_MS).unref());
      if (this.stopped) return;
      left = await this.lock.run(async () => {
        const dump = await this.driver!.dump(this.iface);
        if (!dump) return [];
        const byKey = new Map(dump.peers.map((p) => [p.publicKey, p]));
        const waiting = left.filter((k) => this.present.has(k) && byKey.get(k)?.latestHandshake === 0);
        if (!waiting.length) return [];
        const now = this.deps.clock();
        const rows = await findRows(this.deps.db.models.Peer, { attributes: [...WG_ATTRS], where: { public_key: { [Op.in]: waiting } } });
        for (const r of rows) {
          if (!isActive(r, now)) continue;
          const spec = await this.peerSpec(r);
          await this.driver!.setPeer(this.iface, { ...spec, persistentKeepalive: NUDGE_KEEPALIVE_S });
          await this.driver!.setPeer(this.iface, spec);
        }
        return waiting;
      });
    }
  }

  /**
   * Applies one peer's change to the interface. `before` is the peer as it was before the change
   * (its id and public key); the current row is read again under the driver lock, so concurrent
   * changes to the same peer end in the state the database holds last. A missing row = deleted.
   */
  async reconcilePeer(before: Pick<PeerRow, 'id' | 'public_key'>): Promise<void> {
    if (!this.managed) return;
    await this.lock.run(async () => {
      if (!this.running) {
        this.scheduleHeal(); // the interface is missing: a full sync (in the background) brings everything
        return;
      }
      const row = await findRowByPk(this.deps.db.models.Peer, before.id, { attributes: [...WG_ATTRS] });
      if (before.public_key && (!row || row.public_key !== before.public_key) && this.present.has(before.public_key)) {
        await this.driver!.removePeer(this.iface, before.public_key);
        this.present.delete(before.public_key);
      }
      if (!row) return;
      const now = this.deps.clock();
      if (isActive(row, now)) {
        const added = !this.present.has(row.public_key);
        const spec = await this.peerSpec(row);
        // A peer (re-)added while its tunnel may still be up on its side (enabled again, expiry
        // moved, key unchanged): the interface forgot the session and the peer keeps sending with
        // the old keys until it re-handshakes by itself (~15-17 s). With its last endpoint back
        // and a keepalive switched on for one transaction (wireguard-go and the kernel send one at
        // once, which needs a session, so the server initiates the handshake), the tunnel passes
        // traffic again within a round trip. The second call leaves the peer as the database says.
        const back = added && this.carrier() ? restorableEndpoint(row, now) : null;
        if (back) await this.driver!.setPeer(this.iface, { ...spec, endpoint: back, persistentKeepalive: NUDGE_KEEPALIVE_S });
        await this.driver!.setPeer(this.iface, spec);
        this.present.add(row.public_key);
        if (added && this.hasRaw(row)) await this.resetRaw([row.id]);
      } else if (this.present.has(row.public_key)) {
        await this.keepLastContact(row);
        await this.driver!.removePeer(this.iface, row.public_key);
        this.present.delete(row.public_key);
        if (this.hasRaw(row)) await this.resetRaw([row.id]);
      }
    });
  }

  /**
   * Before a peer leaves the interface (disabled, expired): what the interface knows of it now, its
   * endpoint, latest handshake and the bytes since the last poll, goes to its row, as a poll would
   * store it. The re-enable path (restorableEndpoint above) then has the endpoint also when the
   * peer connected and was disabled between two polls (otherwise the re-enabled tunnel
   * waited ~17 s for the peer's own rekey). Called under the driver lock; a failed read only logs.
   */
  private async keepLastContact(row: WgRow): Promise<void> {
    let st: WgDump['peers'][number] | undefined;
    try {
      st = (await this.driver!.dump(this.iface))?.peers.find((p) => p.publicKey === row.public_key);
    } catch (err) {
      this.deps.log.warn('reading the interface before removing a peer failed', { peer_id: row.id, err: String(err) });
      return;
    }
    if (!st) return;
    const { rx: lastRx, tx: lastTx } = this.lastRaw(row);
    const dRx = st.rx >= lastRx ? st.rx - lastRx : st.rx;
    const dTx = st.tx >= lastTx ? st.tx - lastTx : st.tx;
    const oldHs = row.latest_handshake === null ? null : Number(row.latest_handshake);
    const hs = st.latestHandshake > 0 ? st.latestHandshake : oldHs;
    const endpoint = st.endpoint ?? row.endpoint ?? null;
    if (!dRx && !dTx && hs === oldHs && endpoint === row.endpoint) return;
    const s = this.deps.db.sequelize;
    await s.transaction(async (transaction) => {
      await s.query(
        `UPDATE peers SET total_rx = total_rx + ?, total_tx = total_tx + ?,${this.nodeRaw ? '' : ' last_raw_rx = 0, last_raw_tx = 0,'} latest_handshake = ?, endpoint = ? WHERE id = ?`,
        {
          replacements: [dRx, dTx, hs, endpoint, row.id],
          transaction,
        },
      );
      if (dRx || dTx) await addSamples(s, [{ peerId: row.id, rx: dRx, tx: dTx }], this.deps.clock(), transaction);
    });
    if (this.nodeRaw) {
      this.nodeRaw.reset([row.id]);
      this.nodeRaw.save();
      Object.assign(row, { latest_handshake: hs, endpoint });
    } else Object.assign(row, { last_raw_rx: 0, last_raw_tx: 0, latest_handshake: hs, endpoint });
  }

  /** The raw counters the last poll read for a peer (this node's own in a cluster, raw-counters.ts). */
  private lastRaw(row: Pick<WgRow, 'id' | 'last_raw_rx' | 'last_raw_tx'>): Raw {
    return this.nodeRaw ? this.nodeRaw.get(row.id) : { rx: Number(row.last_raw_rx ?? 0), tx: Number(row.last_raw_tx ?? 0) };
  }

  private hasRaw(row: Pick<WgRow, 'id' | 'last_raw_rx' | 'last_raw_tx'>): boolean {
    const r = this.lastRaw(row);
    return r.rx !== 0 || r.tx !== 0;
  }

  private healing = false;
  /** Runs a full sync soon, in the background (after a failed or skipped single-peer change). */
  scheduleHeal(): void {
    if (this.healing || this.stopped) return;
    this.healing = true;
    setTimeout(() => {
      void this.fullSync()
        .catch((err) => this.deps.log.error('WireGuard resync failed', { err: String(err) }))
        .finally(() => {
          this.healing = false;
        });
    }, 1000).unref();
  }

  /**
   * Whether some peer uses a full tunnel now: an enabled, unexpired peer whose client_allowed_ips
   * holds a default route, or desktop clients' split tunnel (server default or a token's) holding 0.0.0.0/0.
   */
  async fullTunnelWanted(): Promise<boolean> {
    const now = this.deps.clock();
    const rows = await findRows(this.deps.db.models.Peer, {
      attributes: ['id', 'enabled', 'expires_at', 'client_allowed_ips'],
      where: { client_allowed_ips: { [Op.ne]: null } },
    });
    if (rows.some((r) => isActive(r, now) && isFullTunnel(parseClientAllowedIps(r.client_allowed_ips)))) return true;
    const server = await this.deps.settings.get<string[] | null>(SPLIT_TUNNEL_SETTING, null);
    if (server?.includes('0.0.0.0/0')) return true;
    const [tokens] = (await this.deps.db.sequelize.query('SELECT COUNT(*) AS n FROM api_tokens WHERE split_tunnel LIKE \'%"0.0.0.0/0"%\'')) as [
      { n: number | string }[],
      unknown,
    ];
    return Number(tokens[0]?.n ?? 0) > 0;
  }

  /**
   * Forwarding and NAT for full-tunnel peers (wireguard/nat.ts). Cheap when nothing changed (no
   * command runs); `verify` (full syncs) lists the chains and repairs them in any case.
   */
  async reconcileNat(opts: { verify?: boolean } = {}): Promise<NatState | null> {
    const nat = this.nat;
    if (!nat || this.stopped) return null;
    return this.natLock.run(async () => {
      if (!this.running) return nat.current;
      const full = await this.fullTunnelWanted();
      const cur = nat.current;
      if (!opts.verify && nat.wants(full) === cur.wanted && !cur.error && cur.active === cur.wanted) return cur;
      const before = cur.active;
      const next = await nat.reconcile(full);
      if (next.active !== before || next.error !== cur.error)
        this.deps.log.info(next.active ? `WireGuard NAT on: ${this.subnet.cidr} out of ${next.out_interface}` : 'WireGuard NAT off', {
          error: next.error,
          forwarding: next.forwarding,
        });
      if (next.error) this.deps.log.warn(`WireGuard NAT: ${next.error}`);
      return next;
    });
  }

  /** What runs after every full sync, under the driver lock (the speed caps: shaping/service.ts). */
  private readonly synced: (() => Promise<unknown>)[] = [];
  onSynced(f: () => Promise<unknown>): void {
    this.synced.push(f);
  }

  /** POST /wg/restart: interface down and up again with every active peer. */
  async restart(actor?: number): Promise<{ peers: number; ms: number }> {
    if (!this.managed) throw conflict(msg('wireguard.not_managed'));
    const r = await this.lock.run(async () => {
      const t0 = performance.now();
      await this.pollLocked().catch((err) => this.deps.log.warn('WireGuard poll before restart failed', { err: String(err) }));
      await this.driver!.down(this.iface);
      this.present.clear();
      this.running = false;
      const s = await this.fullSyncLocked();
      return { peers: s.peers, ms: Math.round(performance.now() - t0) };
    });
    await this.deps.activity.record({
      source: 'wireguard',
      event_type: 'wg_restarted',
      msg: msg('wireguard.restarted', { iface: this.iface, peers: r.peers }),
      details: r,
      user_id: actor ?? null,
    });
    return r;
  }

  // ------------------------------------------------------------------ poller

  /** Reads the interface once and stores handshakes, endpoints, totals and traffic samples. */
  async poll(): Promise<{ peers: number; changed: number } | null> {
    if (!this.managed) return null;
    return this.lock.run(() => this.pollLocked());
  }

  private async pollLocked(): Promise<{ peers: number; changed: number } | null> {
    const dump: WgDump | null = await this.driver!.dump(this.iface);
    const now = this.deps.clock();
    const elapsed = this.lastPollAt ? (now - this.lastPollAt) / 1000 : 0;
    this.lastPollAt = now;
    if (!dump) {
      if (this.running) this.deps.log.warn(`WireGuard interface ${this.iface} is missing; the next resync brings it back`);
      this.running = false;
      this.rates = { rx: 0, tx: 0 };
      await this.announceState('interface missing', this.announced.error);
      await this.announceTraffic(elapsed, []);
      return null;
    }
    this.running = true;
    const byKey = new Map(dump.peers.map((p) => [p.publicKey, p]));
    const { Peer } = this.deps.db.models;
    const rows = await findRows(Peer, { attributes: [...WG_ATTRS] });
    const updates: { id: number; dRx: number; dTx: number; rawRx: number; rawTx: number; hs: number | null; endpoint: string | null }[] = [];
    const moved: PeerTraffic[] = [];
    let sumRx = 0;
    let sumTx = 0;
    for (const r of rows) {
      const st = byKey.get(r.public_key);
      if (!st) continue;
      const { rx: lastRx, tx: lastTx } = this.lastRaw(r);
      const dRx = st.rx >= lastRx ? st.rx - lastRx : st.rx;
      const dTx = st.tx >= lastTx ? st.tx - lastTx : st.tx;
      const oldHs = r.latest_handshake === null ? null : Number(r.latest_handshake);
      const hs = st.latestHandshake > 0 ? st.latestHandshake : oldHs;
      const endpoint = st.endpoint ?? r.endpoint ?? null;
      if (dRx || dTx || st.rx !== lastRx || st.tx !== lastTx || hs !== oldHs || endpoint !== r.endpoint) {
        updates.push({ id: r.id, dRx, dTx, rawRx: st.rx, rawTx: st.tx, hs, endpoint });
        r.latest_handshake = hs;
        r.endpoint = endpoint;
      }
      sumRx += dRx;
      sumTx += dTx;
      if ((dRx || dTx || this.peerRates.has(r.id)) && elapsed > 0) {
        moved.push({
          peer_id: r.id,
          rx_rate: Math.round(dRx / elapsed),
          tx_rate: Math.round(dTx / elapsed),
          total_rx: Number(r.total_rx ?? 0) + dRx,
          total_tx: Number(r.total_tx ?? 0) + dTx,
        });
      }
    }
    if (updates.length) {
      const s = this.deps.db.sequelize;
      await s.transaction(async (transaction) => {
        for (const u of updates) {
          await s.query(
            this.nodeRaw
              ? 'UPDATE peers SET total_rx = total_rx + ?, total_tx = total_tx + ?, latest_handshake = ?, endpoint = ? WHERE id = ?'
              : 'UPDATE peers SET total_rx = total_rx + ?, total_tx = total_tx + ?, last_raw_rx = ?, last_raw_tx = ?, latest_handshake = ?, endpoint = ? WHERE id = ?',
            {
              replacements: this.nodeRaw ? [u.dRx, u.dTx, u.hs, u.endpoint, u.id] : [u.dRx, u.dTx, u.rawRx, u.rawTx, u.hs, u.endpoint, u.id],
              transaction,
            },
          );
        }
        await addSamples(
          s,
          updates.map((u) => ({ peerId: u.id, rx: u.dRx, tx: u.dTx })),
          now,
          transaction,
        );
      });
      if (this.nodeRaw) {
        // after the commit: a failed transaction leaves the old baseline, and the next poll counts the bytes again
        for (const u of updates) this.nodeRaw.set(u.id, { rx: u.rawRx, tx: u.rawTx });
        this.nodeRaw.save();
      }
    }
    this.rates = elapsed > 0 ? { rx: Math.round(sumRx / elapsed), tx: Math.round(sumTx / elapsed) } : { rx: 0, tx: 0 };
    // online / offline transitions
    const events: { row: WgRow; online: boolean }[] = [];
    const seen = new Set<number>();
    for (const r of rows) {
      seen.add(r.id);
      const on = isOnline(r, now);
      const was = this.online.get(r.id) ?? false;
      if (on !== was) events.push({ row: r, online: on });
      this.online.set(r.id, on);
    }
    for (const id of [...this.online.keys()]) if (!seen.has(id)) this.online.delete(id);
    // every node of a cluster sees the same transitions (they come from the shared rows): the leader
    // announces them, once; the others only follow the state, so a new leader announces no old one
    if (!this.deps.scheduler.isLeader()) events.length = 0;
    for (const e of events) {
      await this.deps.events.emit({
        type: e.online ? 'peer_online' : 'peer_offline',
        peer_id: e.row.id,
        name: e.row.name,
        endpoint: e.row.endpoint ?? null,
        latest_handshake: e.row.latest_handshake ?? null,
      });
    }
    if (elapsed > 0) await this.announceTraffic(elapsed, moved);
    return { peers: dump.peers.length, changed: updates.length };
  }

  /**
   * peer_traffic: the rates of the peers that moved data in the last interval, plus a zero for each
   * peer that moved data last time and stopped (deleted peers and a missing interface included); nothing when all stay idle.
   */
  private async announceTraffic(elapsed: number, moved: PeerTraffic[]): Promise<void> {
    const listed = new Set(moved.map((m) => m.peer_id));
    const stopped = [...this.peerRates.keys()].filter((id) => !listed.has(id));
    const peers = [...moved];
    if (stopped.length) {
      const rows = await findRows(this.deps.db.models.Peer, { attributes: ['id', 'total_rx', 'total_tx'], where: { id: { [Op.in]: stopped } } });
      const totals = new Map(rows.map((r) => [r.id, r]));
      for (const id of stopped)
        peers.push({ peer_id: id, rx_rate: 0, tx_rate: 0, total_rx: Number(totals.get(id)?.total_rx ?? 0), total_tx: Number(totals.get(id)?.total_tx ?? 0) });
    }
    this.peerRates = new Map(moved.filter((m) => m.rx_rate || m.tx_rate).map((m) => [m.peer_id, { rx: m.rx_rate, tx: m.tx_rate }]));
    // a peer whose bytes round to 0 B/s this time is announced at zero and then left alone
    if (!peers.length) return;
    peers.sort((a, b) => a.peer_id - b.peer_id);
    // transient: not kept for replay (with many busy peers each sample is large, and the next poll brings fresh rates)
    await this.deps.events.emit(
      { type: 'peer_traffic', interval_s: Math.round(elapsed * 10) / 10, rx_rate: this.rates.rx, tx_rate: this.rates.tx, peers },
      { transient: true },
    );
  }

  // ------------------------------------------------------------------ expiry

  /** Told of each peer the expiry check took off the tunnel (the cluster's change feed: the other nodes take it off theirs). */
  onExpired: ((peer: { id: number; key: string }) => void) | null = null;

  /** Takes peers whose expires_at has passed off the tunnel and logs each expiry once. */
  async checkExpiry(): Promise<number> {
    const now = this.deps.clock();
    const mark = await this.deps.settings.current<number>(EXPIRY_WATERMARK_SETTING, 0);
    const watermark = Number(mark.value);
    const rows = await findRows(this.deps.db.models.Peer, {
      attributes: ['id', 'name', 'public_key', 'expires_at', 'enabled'],
      where: { expires_at: { [Op.ne]: null, [Op.lte]: now, [Op.gt]: watermark } },
    });
    // the window (watermark, now] is claimed before anything is announced: of two checks that read the
    // same watermark (two nodes that both believed they led), one announces; the other finds it moved
    // (nothing new: the watermark stays, and no write goes to the database or the other nodes)
    if (!rows.length) return 0;
    if (!(await this.deps.settings.compareAndSet(EXPIRY_WATERMARK_SETTING, mark.text, now))) return 0;
    for (const r of rows) {
      await this.reconcilePeer(r);
      this.onExpired?.({ id: r.id, key: r.public_key });
      await this.deps.events.emit({
        type: 'peer_expired',
        peer_id: r.id,
        name: r.name,
        expires_at: new Date(Number(r.expires_at)).toISOString(),
        enabled: asBool(r.enabled),
      });
    }
    return rows.length;
  }

  // ------------------------------------------------------------------ status

  /** GET /wg/status: the interface as it is now (a fresh dump) joined with the peers' names. */
  async status(): Promise<WgStatus> {
    const { publicKey } = await this.serverKeys();
    const dump = this.managed ? await this.driver!.dump(this.iface) : null;
    if (this.managed) this.running = dump !== null;
    const now = this.deps.clock();
    const keys = dump?.peers.map((p) => p.publicKey) ?? [];
    const rows = keys.length
      ? await findRows(this.deps.db.models.Peer, {
          attributes: ['id', 'name', 'public_key'],
          where: keys.length <= 5000 ? { public_key: { [Op.in]: keys } } : {},
        })
      : [];
    const byKey = new Map(rows.map((r) => [r.public_key, r]));
    const peers = (dump?.peers ?? []).map((p) => {
      const hs = p.latestHandshake > 0 ? p.latestHandshake : null;
      const row = byKey.get(p.publicKey);
      return {
        id: row?.id ?? null,
        name: row?.name ?? null,
        public_key: p.publicKey,
        endpoint: p.endpoint,
        allowed_ips: p.allowedIps,
        latestHandshake: hs,
        isOnline: hs !== null && now - hs <= ONLINE_WINDOW_MS,
        transfer_rx: p.rx,
        transfer_tx: p.tx,
      };
    });
    return {
      managed: this.managed,
      running: this.managed && dump !== null,
      interface: this.iface,
      mode: dump ? this.mode : null,
      listen_port: dump?.iface.listenPort ?? this.deps.config.wg.port,
      public_key: publicKey,
      address: serverInterfaceAddress(this.subnet),
      subnet: this.subnet.cidr,
      endpoint: this.endpoint,
      peer_count: peers.length,
      online: peers.filter((p) => p.isOnline).length,
      last_poll_at: this.lastPollAt ? new Date(this.lastPollAt).toISOString() : null,
      last_sync_at: this.lastSyncAt ? new Date(this.lastSyncAt).toISOString() : null,
      nat: this.nat?.current ?? null,
      peers,
    };
  }

  /** For GET /health: fails when the service manages the interface and it is missing. */
  async healthCheck(): Promise<{ ok: boolean; detail?: Record<string, unknown> }> {
    if (!this.managed) return { ok: true, detail: { managed: false } };
    const dump = await this.driver!.dump(this.iface);
    return dump
      ? { ok: true, detail: { interface: this.iface, peers: dump.peers.length, listen_port: dump.iface.listenPort } }
      : { ok: false, detail: { interface: this.iface, error: 'interface missing' } };
  }
}
