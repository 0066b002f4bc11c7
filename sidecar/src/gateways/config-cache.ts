// The gateways' configuration cache: every companion polls config/check (and heartbeats, which
// answer the hash too), so the configurations are kept in memory, one entry per gateway peer.
//
// A route write drops only the entries of the gateways it touches, not the whole cache: with 1,000
// companions polling and 10,000 routes, refilling everything after each write cost a read of every
// gateway route per write. What a write touches comes with the bus's rows_changed (keys: each
// written row's id and, when the write set it, its target peer). The gateway a route belonged to
// before the write is known from `owners`: every gateway route read (enabled or not) and every
// written row whose target is known is recorded there, so a toggle or a delete of a route finds
// its gateway. A write whose rows are not known (a bulk write not by id) drops everything, as
// before.
//
// Fills race with writes: a whole refill that a whole drop overtook is thrown away, and an entry
// whose gateway was dropped after its read began is not stored (the next call reads it again).

export interface RouteKeys {
  /** the route's id, or null when the write did not say */
  id: number | null;
  /** the peer the route targets, when the write set it */
  peer_id: number | null;
}

/** A gateway route as the cache needs it: its id, target and whether it is served. */
export interface OwnedRow {
  id: number;
  target_peer_id: number | null;
  enabled: boolean;
}

export interface ConfigSource<R extends OwnedRow, E> {
  /** every gateway route (target_kind gateway), enabled or not */
  readAll(): Promise<R[]>;
  /** the gateway routes of one gateway peer, enabled or not */
  readOne(peerId: number): Promise<R[]>;
  /** the entry of a gateway from its enabled routes (ordered by id) */
  build(peerId: number, enabled: R[]): E;
}

export class GatewayConfigCache<R extends OwnedRow, E> {
  private readonly entries = new Map<number, E>();
  /** route id → the gateway peer it targets, as last read or written */
  private readonly owners = new Map<number, number>();
  /** bumped by every drop */
  private gen = 0;
  /** the gen of the last whole drop */
  private wholeDropGen = 0;
  /** gateway → the gen at which it was last dropped */
  private readonly droppedAt = new Map<number, number>();
  /** the gen whose whole refill completed (-1: none since the last whole drop) */
  private completeGen = -1;
  /** gateways dropped since the last complete refill: a miss for one of them must read it */
  private readonly stale = new Set<number>();
  private refilling: Promise<void> | null = null;
  /** reads of the database, for the benchmark and tests: whole refills and single reads */
  readonly reads = { all: 0, one: 0 };

  constructor(private readonly source: ConfigSource<R, E>) {}

  /** Drops every entry (a restore, a write whose rows are not known). */
  dropAll(): void {
    this.gen++;
    this.wholeDropGen = this.gen;
    this.completeGen = -1;
    this.entries.clear();
    this.owners.clear();
    this.stale.clear();
    this.droppedAt.clear();
  }

  /** Drops the entries of the gateways a route write touched: the rows' old owners and new targets. */
  dropRoutes(keys: readonly RouteKeys[] | null, destroyed = false): void {
    if (keys === null) return this.dropAll();
    const peers = new Set<number>();
    for (const k of keys) {
      if (k.id !== null) {
        const owner = this.owners.get(k.id);
        if (owner !== undefined) peers.add(owner);
      }
      if (k.peer_id !== null) {
        peers.add(k.peer_id);
        if (k.id !== null) this.owners.set(k.id, k.peer_id);
      }
    }
    for (const p of peers) this.drop(p);
    if (destroyed) for (const k of keys) if (k.id !== null) this.owners.delete(k.id);
  }

  /** Drops one gateway's entry. */
  drop(peerId: number): void {
    this.gen++;
    this.droppedAt.set(peerId, this.gen);
    this.entries.delete(peerId);
    this.stale.add(peerId);
  }

  /** The entry of one gateway: cached, or after one whole refill (first use, whole drop), or its own read. */
  async get(peerId: number): Promise<E> {
    const hit = this.entries.get(peerId);
    if (hit !== undefined) return hit;
    if (this.completeGen < this.wholeDropGen) await this.refill();
    const again = this.entries.get(peerId);
    if (again !== undefined) return again;
    if (this.completeGen >= this.wholeDropGen && !this.stale.has(peerId)) {
      // the refill read every gateway route and this gateway had none, nor has had a write since
      const entry = this.source.build(peerId, []);
      this.entries.set(peerId, entry);
      return entry;
    }
    return this.readOne(peerId);
  }

  private async readOne(peerId: number): Promise<E> {
    const gen = this.gen;
    this.reads.one++;
    const rows = await this.source.readOne(peerId);
    const entry = this.source.build(
      peerId,
      rows.filter((r) => r.enabled),
    );
    if (this.wholeDropGen <= gen && (this.droppedAt.get(peerId) ?? 0) <= gen) {
      for (const r of rows) this.owners.set(r.id, peerId);
      this.entries.set(peerId, entry);
      this.stale.delete(peerId);
    }
    return entry;
  }

  private refill(): Promise<void> {
    this.refilling ??= (async () => {
      const gen = this.gen;
      this.reads.all++;
      const rows = await this.source.readAll();
      if (this.wholeDropGen > gen) return; // a whole drop raced the read: callers read their own
      const byPeer = new Map<number, R[]>();
      for (const r of rows) {
        if (r.target_peer_id === null) continue;
        this.owners.set(r.id, r.target_peer_id);
        const list = byPeer.get(r.target_peer_id) ?? [];
        list.push(r);
        byPeer.set(r.target_peer_id, list);
      }
      // gateways dropped during the read keep no entry and stay stale; the others are fresh now
      const droppedSince = new Set([...this.droppedAt].filter(([, g]) => g > gen).map(([p]) => p));
      this.stale.clear();
      for (const p of droppedSince) this.stale.add(p);
      for (const [id, list] of byPeer) {
        if (droppedSince.has(id)) continue;
        this.entries.set(
          id,
          this.source.build(
            id,
            list.filter((r) => r.enabled),
          ),
        );
      }
      this.completeGen = this.wholeDropGen;
    })().finally(() => {
      this.refilling = null;
    });
    return this.refilling;
  }
}
