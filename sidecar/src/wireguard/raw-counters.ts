// The last raw byte counters the poller read from this node's interface, per peer: what the next
// poll subtracts to find the bytes moved since (service.ts pollLocked).
//
// One node: they live in the peer's row (peers.last_raw_rx / last_raw_tx), written with the totals.
// A cluster: every node has its own interface with its own counters, and the peer rows are shared,
// so a node's raw counters must not be another's baseline (node b's zero would make node a count
// its whole counter again at its next poll). There they live in the node's own data directory
// (wireguard-raw-counters.json, written after each poll that changed one), and the rows' columns
// are left alone; the totals still add up in the rows, each node adding what its interface moved.
import fs from 'node:fs';
import path from 'node:path';

export interface Raw {
  rx: number;
  tx: number;
}

/** The raw counters of peers, kept per node in a file (cluster mode). */
export class NodeRawCounters {
  private readonly map = new Map<number, Raw>();
  private dirty = false;

  constructor(private readonly file: string) {
    try {
      const saved = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, Raw>;
      for (const [id, v] of Object.entries(saved)) if (Number.isFinite(v?.rx) && Number.isFinite(v?.tx)) this.map.set(Number(id), { rx: v.rx, tx: v.tx });
    } catch {
      /* none yet, or unreadable: every peer starts from zero, as on a fresh interface */
    }
  }

  static inDataDir(dataDir: string): NodeRawCounters {
    return new NodeRawCounters(path.join(dataDir, 'wireguard-raw-counters.json'));
  }

  get(id: number): Raw {
    return this.map.get(id) ?? { rx: 0, tx: 0 };
  }

  set(id: number, raw: Raw): void {
    const old = this.map.get(id);
    if (old && old.rx === raw.rx && old.tx === raw.tx) return;
    if (!old && raw.rx === 0 && raw.tx === 0) return;
    if (raw.rx === 0 && raw.tx === 0) this.map.delete(id);
    else this.map.set(id, { ...raw });
    this.dirty = true;
  }

  reset(ids: number[] | 'all'): void {
    if (ids === 'all') {
      if (this.map.size) this.dirty = true;
      this.map.clear();
    } else for (const id of ids) if (this.map.delete(id)) this.dirty = true;
  }

  /** Writes the file when something changed (write to a temporary file, then rename: never half a file). */
  save(): void {
    if (!this.dirty) return;
    const tmp = `${this.file}.tmp`;
    fs.mkdirSync(path.dirname(this.file), { recursive: true });
    fs.writeFileSync(tmp, JSON.stringify(Object.fromEntries(this.map)));
    fs.renameSync(tmp, this.file);
    this.dirty = false;
  }
}
