// Who holds the data directory: <dataDir>/gatehouse.pid, JSON {pid, role, since}. The sidecar takes
// it at start (role `sidecar`) and gives it back at close; `npm run cli -- rotate-master-key` takes it
// (role `rotate-master-key`) for the rotation. A running sidecar keeps the master key in memory and
// seals new values with it, so the rotation refuses while a live sidecar holds the file, and a
// sidecar refuses to start while a rotation holds it. A holder whose process is gone (crash, kill -9)
// is stale and taken over. The file sees only processes sharing this data directory: several
// sidecars on one PostgreSQL database, each with its own data directory, must all be stopped by hand.
import fs from 'node:fs';
import path from 'node:path';

export const LOCK_FILE = 'gatehouse.pid';
export type LockRole = 'sidecar' | 'rotate-master-key';

export interface LockHolder {
  pid: number;
  role: LockRole;
  since: string;
}

export class DataDirLocked extends Error {
  constructor(
    readonly holder: LockHolder,
    readonly file: string,
  ) {
    super(`${file} is held by ${holder.role === 'sidecar' ? 'the running sidecar' : 'a master-key rotation'} (pid ${holder.pid}, since ${holder.since})`);
  }
}

export const lockFile = (dataDir: string) => path.join(dataDir, LOCK_FILE);

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'; // exists, another user's
  }
}

function read(file: string): LockHolder | null {
  try {
    const v = JSON.parse(fs.readFileSync(file, 'utf8')) as Partial<LockHolder>;
    return typeof v.pid === 'number' && (v.role === 'sidecar' || v.role === 'rotate-master-key') ? { pid: v.pid, role: v.role, since: String(v.since ?? '') } : null;
  } catch {
    return null; // missing, or cut short by a crash while being written: nobody
  }
}

/** The live holder of the data directory other than this process, or null. */
export function lockHolder(dataDir: string): LockHolder | null {
  const h = read(lockFile(dataDir));
  return h && h.pid !== process.pid && alive(h.pid) ? h : null;
}

/**
 * Takes the data directory for `role`; throws DataDirLocked when another live process holds it.
 * Returns the release function (removes the file only while it is still this process's).
 */
export function acquireDataDirLock(dataDir: string, role: LockRole): () => void {
  const file = lockFile(dataDir);
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const mine: LockHolder = { pid: process.pid, role, since: new Date().toISOString() };
  for (let attempt = 0; ; attempt++) {
    try {
      fs.writeFileSync(file, JSON.stringify(mine) + '\n', { flag: 'wx', mode: 0o600 });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 2) throw err;
      const h = lockHolder(dataDir);
      if (h) throw new DataDirLocked(h, file);
      fs.rmSync(file, { force: true }); // stale (or this process's own: taken over)
    }
  }
  return () => {
    const h = read(file);
    if (h && h.pid === process.pid && h.role === role && h.since === mine.since) fs.rmSync(file, { force: true });
  };
}
