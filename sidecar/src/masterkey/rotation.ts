// Master-key rotation: a new key, every sealed value of every table re-sealed under it in ONE database
// transaction (SQLite and PostgreSQL alike), and the key file replaced atomically (files.ts). The
// order, and what a crash at each point leaves (settleMasterKey() resolves it at the next start):
//   1. <file>.old = the key in use (fsync)          crash: <file> opens the data; .old removed
//   2. <file>.new = the new key (fsync)              crash: same
//   3. BEGIN; re-seal every value (sealed.ts)        crash: rolled back; <file> opens the data
//   4. the hooks, in the same transaction            (a hook that throws rolls everything back)
//   5. check: no value opens with the old key any more
//   6. COMMIT                                        crash after it: <file>.new opens the data and
//                                                    is renamed over <file> at the next start
//   7. rename <file>.new -> <file> (fsync dir)       crash: <file> opens; .old removed at the next start
//   8. remove <file>.old; event master_key_rotated (activity log, webhooks)
// The process that rotates keeps the old key in its services afterwards: it is meant to exit (the
// CLI). Derived keys change with the master key: admin session cookies and pending e-mail codes of
// protected routes stop working (everyone signs in again).
import type { Transaction } from 'sequelize';
import type { Deps } from '../deps.js';
import { MasterKey } from '../util/crypto.js';
import { keyFiles, removeDurably, renameDurably, settleMasterKey, writeKeyFile } from './files.js';
import { openableWith, resealAll, sampleSealed } from './sealed.js';

/**
 * Runs inside the rotation's transaction, after every sealed value was re-sealed: every query of the
 * hook must pass `{ transaction }` (on SQLite a write outside it would wait for the transaction to end,
 * which waits for the hook). Throwing rolls the whole rotation back.
 */
export type MasterKeyHook = (newKey: MasterKey, ctx: { transaction: Transaction; oldKey: MasterKey }) => Promise<void>;

export type RotationStep = 'old-kept' | 'new-written' | 'resealed' | 'hooks-done' | 'committed' | 'renamed';
export const ROTATION_STEPS: readonly RotationStep[] = ['old-kept', 'new-written', 'resealed', 'hooks-done', 'committed', 'renamed'];

export interface RotateOptions {
  source: 'cli' | 'api';
  actor?: number | null;
  /** Called after each step (tests stop the rotation there by throwing, to prove what a crash leaves). */
  onStep?: (step: RotationStep) => void | Promise<void>;
}

export interface RotationResult {
  tables: Record<string, number>;
  sealed_values: number;
  hooks: string[];
  duration_ms: number;
}

export class MasterKeyRotation {
  private hooks: { name: string; fn: MasterKeyHook }[] = [];
  private running = false;

  constructor(private readonly deps: Deps) {}

  /** Registers a hook (at construction of the service that owns it, in createAppContext). */
  onRotated(name: string, fn: MasterKeyHook): void {
    this.hooks.push({ name, fn });
  }

  hookNames(): string[] {
    return this.hooks.map((h) => h.name);
  }

  async rotate(opts: RotateOptions): Promise<RotationResult> {
    if (this.running) throw new Error('a master-key rotation is already running');
    this.running = true;
    try {
      return await this.run(opts);
    } finally {
      this.running = false;
    }
  }

  private async run(opts: RotateOptions): Promise<RotationResult> {
    const { db, config, log, clock } = this.deps;
    const t0 = clock();
    const oldKey = this.deps.crypto;
    const f = keyFiles(config.masterKeyFile);
    const onDisk = MasterKey.load(f.current);
    if (!onDisk.equals(oldKey)) throw new Error(`${f.current} is not the key this process runs with: start again`);
    const step = async (s: RotationStep) => opts.onStep?.(s);
    const newKey = MasterKey.generate();
    let committed: boolean | 'unknown' = false;
    try {
      writeKeyFile(f.old, oldKey);
      await step('old-kept');
      writeKeyFile(f.next, newKey);
      await step('new-written');
      let result: Awaited<ReturnType<typeof resealAll>> | undefined;
      const tx = await db.sequelize.transaction();
      try {
        result = await resealAll(db, oldKey, newKey, tx);
        await step('resealed');
        for (const h of this.hooks) {
          try {
            await h.fn(newKey, { transaction: tx, oldKey });
          } catch (err) {
            throw new Error(`master-key hook ${h.name} failed: ${(err as Error).message}`);
          }
        }
        await step('hooks-done');
        const left = await openableWith(db, oldKey, tx);
        if (left.length)
          throw new Error(`still sealed with the old key after re-sealing (declare the column in backup/sections.ts): ${left.slice(0, 5).join(', ')}`);
      } catch (err) {
        await tx.rollback();
        throw err;
      }
      committed = 'unknown';
      await tx.commit();
      committed = true;
      await step('committed');
      renameDurably(f.next, f.current);
      await step('renamed');
      removeDurably(f.old);
      const out: RotationResult = { tables: result.tables, sealed_values: result.total, hooks: this.hookNames(), duration_ms: clock() - t0 };
      await this.deps.events.emit({
        type: 'master_key_rotated',
        source: opts.source,
        sealed_values: out.sealed_values,
        tables: out.tables,
        hooks: out.hooks,
        actor: opts.actor ?? null,
      });
      return out;
    } catch (err) {
      if (committed === false) {
        // nothing committed: the key in use stays <file>; the new key is thrown away
        try {
          removeDurably(f.next, f.old);
        } catch (e) {
          log.warn(`master key rotation: ${f.next}/${f.old} not removed: ${(e as Error).message}`);
        }
      } else {
        // committed (or not known): whichever key file opens the data becomes <file>
        await settleMasterKey(f.current, () => sampleSealed(db), log).catch((e) => log.error(`master key rotation: ${(e as Error).message}`));
      }
      throw err;
    }
  }
}
