// The master key file and its two companions during a rotation:
//   <file>.old  a copy of the key in use, written before anything changes;
//   <file>.new  the new key, written and fsynced before the database transaction;
// after the commit <file>.new is renamed over <file> (atomic) and <file>.old removed. A crash at any
// point leaves <file> plus maybe .new/.old; settleMasterKey() (run at every start by createDeps, and
// by the rotation when it fails) keeps the one that opens the data, installs it as <file> and removes
// the others, so the data always opens after a restart.
import fs from 'node:fs';
import path from 'node:path';
import { MasterKey } from '../util/crypto.js';
import type { Logger } from '../util/logger.js';

export const keyFiles = (file: string) => ({ current: file, next: `${file}.new`, old: `${file}.old` });

function fsyncDir(dir: string): void {
  const fd = fs.openSync(dir, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** Writes a key file (mode 0600) and makes it durable (file and directory entry). */
export function writeKeyFile(file: string, key: MasterKey): void {
  const fd = fs.openSync(file, 'w', 0o600);
  try {
    fs.writeSync(fd, key.fileText());
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.chmodSync(file, 0o600);
  fsyncDir(path.dirname(file));
}

/** Replaces `to` by `from` in one rename, durably. */
export function renameDurably(from: string, to: string): void {
  fs.renameSync(from, to);
  fsyncDir(path.dirname(to));
}

export function removeDurably(...files: string[]): void {
  let removed = false;
  for (const f of files) {
    if (fs.existsSync(f)) {
      fs.rmSync(f, { force: true });
      removed = true;
    }
  }
  if (removed) fsyncDir(path.dirname(files[0]!));
}

function tryLoad(file: string): MasterKey | null {
  try {
    return fs.existsSync(file) ? MasterKey.load(file) : null;
  } catch {
    return null; // cut short by a crash while being written
  }
}

const opens = (key: MasterKey, sealed: string) => {
  try {
    key.open(sealed);
    return true;
  } catch {
    return false;
  }
};

export interface Settled {
  key: MasterKey;
  created: boolean;
  /** what was done to the files (null: nothing to do) */
  action: null | 'kept' | 'installed-new' | 'installed-old';
}

/**
 * Loads the master key; when a rotation left <file>.new or <file>.old behind, first decides which of
 * the three opens the data (`sample`: one sealed value of the database, null when it holds none), makes
 * it <file> and removes the others. A key (or a missing key file) that cannot open the data is refused
 * rather than a new key made: a node joining a shared database without the other nodes' key file
 * would seal its secrets under a key nobody else has (docs/guides/cluster.md).
 */
export async function settleMasterKey(file: string, sample: () => Promise<string | null>, log?: Logger): Promise<Settled> {
  const f = keyFiles(file);
  if (!fs.existsSync(f.next) && !fs.existsSync(f.old)) {
    const value = await sample();
    if (value !== null && !fs.existsSync(file))
      throw new Error(
        `master key: ${file} does not exist, but the database holds secrets sealed under a master key; copy the key file that opens them (every node on one database needs the same key); nothing was changed`,
      );
    const loaded = MasterKey.loadOrCreate(file);
    if (value !== null && !opens(loaded.key, value))
      throw new Error(
        `master key: ${file} does not open the data in the database (sealed under another key; every node on one database needs the same key file); nothing was changed`,
      );
    return { ...loaded, action: null };
  }
  const candidates = (['current', 'next', 'old'] as const).map((which) => ({ which, key: tryLoad(f[which]) })).filter((c) => c.key !== null) as {
    which: 'current' | 'next' | 'old';
    key: MasterKey;
  }[];
  const value = await sample();
  const winner = value === null ? candidates[0] : candidates.find((c) => opens(c.key, value));
  if (!winner)
    throw new Error(
      `master key: none of ${[f.current, f.next, f.old].filter((x) => fs.existsSync(x)).join(', ')} opens the data in the database; nothing was changed`,
    );
  let action: Settled['action'] = 'kept';
  if (winner.which !== 'current') {
    renameDurably(f[winner.which], f.current);
    action = winner.which === 'next' ? 'installed-new' : 'installed-old';
  }
  removeDurably(f.next, f.old);
  log?.warn(
    action === 'kept'
      ? `master key: an unfinished rotation left ${path.basename(f.next)}/${path.basename(f.old)} behind; the data opens with ${f.current}, which stays (the others were removed)`
      : `master key: an interrupted rotation had committed the database under ${winner.which === 'next' ? 'the new key' : 'the old key'}; ${f[winner.which]} is now ${f.current}`,
  );
  return { key: winner.key, created: false, action };
}
