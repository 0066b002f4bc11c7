// Heartbeat rows written behind the answer: a companion's heartbeat is answered from memory and its
// row update (last_seen_at, health, reported config hash) joins the next batch, one transaction per
// batch. Without it every heartbeat waited for the database writer, and so behind every route
// change holding a transaction while Caddy loads its new configuration: with 1,000 companions and
// an admin creating routes, heartbeat p99 was 1.3 s (test/reliability/load-gateways.test.ts).
//
// Readers stay consistent: readThrough() lays the values not yet written (or being written) over the
// rows read from the database, so GET /gateways and the status timer see a heartbeat at once.
// A failed batch is kept and retried with the next one (a newer value of the same gateway wins).
// flush() on shutdown writes what is pending; a crash loses at most one batch interval of
// heartbeats, which the next heartbeat (every few seconds) restores.

export type WriteBatch<V> = (entries: [number, V][]) => Promise<void>;

export class HeartbeatBuffer<V extends object> {
  private pending = new Map<number, V>();
  private inflight = new Map<number, V>();
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private closed = false;

  constructor(
    private readonly write: WriteBatch<V>,
    private readonly delayMs: number,
    private readonly onError: (err: unknown, count: number) => void,
  ) {}

  /** Queues the values of one row (merged over values still pending for it). */
  put(id: number, values: V): void {
    const before = this.pending.get(id);
    this.pending.set(id, before ? { ...before, ...values } : values);
    if (this.closed) return;
    // unref: a pending batch never keeps the process alive (shutdown flushes it with close())
    this.timer ??= setTimeout(() => {
      this.timer = null;
      void this.flush();
    }, this.delayMs).unref();
  }

  /** A row read from the database with the values not yet stored laid over it. */
  overlay<R extends object | null | undefined>(id: number, row: R): R {
    if (!row) return row;
    const a = this.inflight.get(id);
    const b = this.pending.get(id);
    return a || b ? ({ ...row, ...a, ...b } as R) : row;
  }

  /**
   * Reads rows with load() and lays over each the values not yet stored: those pending or being
   * written when the read began (a batch stored while the read ran may be missing from what it saw,
   * and is no longer in flight when it ends) and those queued since. Readers use this, not
   * overlay() after their own await.
   */
  async readThrough<R extends object>(load: () => Promise<R[]>, idOf: (r: R) => number): Promise<R[]> {
    // The maps themselves, not copies: a flush replaces them (the in-flight map is never changed
    // afterwards, and values put into the pending map meanwhile are only newer), so keeping the
    // two references costs nothing on the heartbeat path.
    const inflight = this.inflight;
    const pending = this.pending;
    const rows = await load();
    return rows.map((r) => {
      const id = idOf(r);
      const a = inflight.get(id);
      const b = pending.get(id);
      return this.overlay(id, a || b ? ({ ...r, ...a, ...b } as R) : r);
    });
  }

  get size(): number {
    return this.pending.size + this.inflight.size;
  }

  /** Writes everything pending now (one batch at a time); resolves when it is stored or failed. */
  async flush(): Promise<void> {
    while (this.running) await this.running;
    if (!this.pending.size) return;
    this.inflight = this.pending;
    this.pending = new Map();
    const batch = [...this.inflight.entries()];
    this.running = (async () => {
      try {
        await this.write(batch);
      } catch (err) {
        // keep them: newer values that arrived meanwhile win over the failed ones
        for (const [id, v] of batch) this.pending.set(id, { ...v, ...this.pending.get(id) });
        this.onError(err, batch.length);
        if (!this.closed) this.timer ??= setTimeout(() => ((this.timer = null), void this.flush()), this.delayMs * 4).unref();
      } finally {
        this.inflight = new Map();
        this.running = null;
      }
    })();
    await this.running;
  }

  /** Stops the timer and writes what is pending (shutdown). */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.flush();
  }
}
