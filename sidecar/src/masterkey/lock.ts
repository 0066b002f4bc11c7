// Who holds the data directory: <dataDir>/gatehouse.pid, JSON {pid, start, role, since}. The sidecar
// takes it at start (role `sidecar`) and gives it back at close; `npm run cli -- rotate-master-key`
// takes it (role `rotate-master-key`) for the rotation. A running sidecar keeps the master key in
// memory and seals new values with it, so the rotation refuses while a live sidecar holds the file,
// and a sidecar refuses to start while a rotation holds it.
// Live means: the process is there (same pid and, where /proc tells, the same start time: a reused
// pid is not mistaken for it), or the holder touched the file within STALE_MS (it does so every
// HEARTBEAT_MS: this covers a holder in another pid namespace sharing the directory, such as
// `docker compose run` next to the running container). Otherwise the file is stale (crash, kill -9)
// and taken over. Sidecars on other machines sharing one PostgreSQL database are not seen.
import fs from 'node:fs';
import path from 'node:path';

export const LOCK_FILE = 'gatehouse.pid';
export type LockRole = 'sidecar' | 'rotate-master-key';

export interface LockHolder {
  pid: number;
  /** the process's start time (/proc/<pid>/stat field 22), when known */
  start: string | null;
  role: LockRole;
  since: string;
}

export const HEARTBEAT_MS = 5_000;
export const STALE_MS = 20_000;

export class DataDirLocked extends Error {
  constructor(
    readonly holder: LockHolder,
    readonly file: string,
  ) {
    super(`${file} is held by ${holder.role === 'sidecar' ? 'the running sidecar' : 'a master-key rotation'} (pid ${holder.pid}, since ${holder.since})`);
  }
}

export const lockFile = (dataDir: string) => path.join(dataDir, LOCK_FILE);

/** The start time of a process from /proc (null: no such process, or no /proc). */
function startTime(pid: number): string | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

const OWN_START = startTime(process.pid);

function alive(h: LockHolder): boolean {
  if (fs.existsSync('/proc/self/stat')) {
    const st = startTime(h.pid);
    return st !== null && (h.start === null || st === h.start);
  }
  try {
    process.kill(h.pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'; // exists, another user's
  }
}

const isMine = (h: LockHolder) => h.pid === process.pid && (h.start === null || h.start === OWN_START);

function touchedRecently(file: string): boolean {
  try {
    return Date.now() - fs.statSync(file).mtimeMs < STALE_MS;
  } catch {
    return false;
  }
}

function read(file: string): LockHolder | null {
  try {
    const v = JSON.parse(fs.readFileSync(file, 'utf8')) as Partial<LockHolder>;
    return typeof v.pid === 'number' && (v.role === 'sidecar' || v.role === 'rotate-master-key')
      ? { pid: v.pid, start: typeof v.start === 'string' ? v.start : null, role: v.role, since: String(v.since ?? '') }
      : null;
  } catch {
    return null; // missing, or cut short by a crash while being written: nobody
  }
}

/** The live holder of the data directory other than this process, or null. */
export function lockHolder(dataDir: string): LockHolder | null {
  const file = lockFile(dataDir);
  const h = read(file);
  return h && !isMine(h) && (alive(h) || touchedRecently(file)) ? h : null;
}

/**
 * Takes the data directory for `role`; throws DataDirLocked when another live process holds it
 * (unless its role is `takeOverFrom`: a sidecar restarted right after a crash, whose predecessor's
 * file still looks fresh, takes it over).
 * Returns the release function (removes the file only while it is still this process's).
 */
export function acquireDataDirLock(dataDir: string, role: LockRole, opts: { takeOverFrom?: LockRole } = {}): () => void {
  const file = lockFile(dataDir);
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const mine: LockHolder = { pid: process.pid, start: OWN_START, role, since: new Date().toISOString() };
  for (let attempt = 0; ; attempt++) {
    try {
      fs.writeFileSync(file, JSON.stringify(mine) + '\n', { flag: 'wx', mode: 0o600 });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 2) throw err;
      const h = lockHolder(dataDir);
      if (h && h.role !== opts.takeOverFrom) throw new DataDirLocked(h, file);
      fs.rmSync(file, { force: true }); // stale (or this process's own: taken over)
    }
  }
  // the heartbeat: a holder in another pid namespace sees this process as live by the file's age
  const beat = setInterval(() => {
    const now = new Date();
    try {
      fs.utimesSync(file, now, now);
    } catch {
      /* removed meanwhile */
    }
  }, HEARTBEAT_MS);
  beat.unref();
  return () => {
    clearInterval(beat);
    const h = read(file);
    if (h && isMine(h) && h.role === role && h.since === mine.since) fs.rmSync(file, { force: true });
  };
}
