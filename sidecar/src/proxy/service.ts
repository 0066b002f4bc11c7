// ProxyService (ctx.proxy): the one way anything changes what Caddy serves.
//
// - transact(fn): the all-or-nothing write path. fn writes rows with the transaction it is given;
//   the configuration is rendered from a snapshot read INSIDE that transaction and loaded into Caddy
//   (POST /load); the transaction commits only if Caddy accepted it. Otherwise it rolls back and the
//   caller gets 502 "proxy rejected the configuration: <Caddy's message>", with Caddy's message alone in
//   `proxy_error` for clients that word the lead-in themselves (503 when Caddy is not
//   reachable). Either the write is saved and live, or neither.
// - apply(): re-render from a fresh snapshot and load (after changes made elsewhere: peers, a Caddy
//   restart, POST /caddy/reload, the reconcile loop).
//
// Coalescing: every transact() and apply() goes into ONE queue, worked by one loop. While a load is
// in flight, new requests wait; when it finishes, everything queued meanwhile runs as one batch:
// one DB transaction, each write in its own savepoint (a write that throws - 400, 409 - is rolled
// back alone and fails alone), one snapshot, ONE load. If Caddy rejects a batch of several writes,
// the batch is rolled back and each write is retried on its own, so every request still gets its
// own all-or-nothing outcome. A load never uses a stale snapshot: the snapshot is read after every
// write it must cover, inside the same transaction.
//
// No-proxy mode (GATEHOUSE_MANAGE_CADDY=false): there is no Caddy to load into; every write still
// renders (which validates that the configuration can be built) and records the hash, then commits.
//
// config_hash = SHA-256 of the canonical JSON (@gatehouse/common/canonical.ts). On the write path the service only
// compares the serialized body with the last one it loaded (the renderer is deterministic); the
// canonical hash is computed lazily (status, reload, the reconcile loop) because at 10,000 routes it
// costs about as much as rendering.
//
// Drift and restarts: every load carries a marker ("@id" on admin.config, see wireBody); the
// reconcile loop asks Caddy for it (tiny request) and, every sixth pass, compares the whole running
// configuration.
//
// SQLite note: the pool has ONE connection, so a write function must pass its transaction to every
// query it makes (a query without it would wait for the connection the transaction holds).
import crypto from 'node:crypto';
import type { Transaction } from 'sequelize';
import type { Database } from '../db/index.js';
import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/logger.js';
import type { EventBus } from '../events.js';
import { AppError } from '../util/errors.js';
import { CaddyAdminError, type CaddyAdminClient } from './admin-client.js';
import { BreakerMemory } from './breaker.js';
import { configHash } from '@gatehouse/common/canonical.js';
import type { CaddyConfig } from './caddy-json.js';
import type { ProxySettings } from './render-context.js';
import { renderCaddyConfig } from './render.js';
import { LICENSED_FEATURES, type FeatureGate } from '../licence/features.js';
import { readSnapshot, type ProtectedRouteIdsFn } from './snapshot.js';

export type WriteFn<T> = (t: Transaction) => Promise<T>;

export interface ApplyOptions {
  /** Load even when the rendered hash equals the last loaded one (Caddy restarted, /caddy/reload). */
  force?: boolean;
  /**
   * Also check that Caddy still runs what we loaded (the reconcile loop): GET /id/<marker> every
   * time, the full GET /config/ comparison every 6th time; re-load on any difference.
   */
  verify?: boolean;
  reason?: string;
}

export interface ApplyResult {
  /** A POST /load was made (false: nothing changed, or no-proxy mode). */
  loaded: boolean;
  reason?: string;
}

interface WriteJob {
  kind: 'write';
  fn: WriteFn<unknown>;
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
  /** Retried alone after its batch was rejected. */
  solo?: boolean;
}
interface ApplyJob {
  kind: 'apply';
  opts: ApplyOptions;
  resolve: (v: ApplyResult) => void;
  reject: (e: unknown) => void;
}
type Job = WriteJob | ApplyJob;

export interface ProxyStatus {
  mode: 'caddy' | 'render-only';
  /** Hash of the configuration Caddy was last given (or, render-only, last rendered). */
  config_hash: string | null;
  last_load_at: string | null;
  last_error: string | null;
  loads: number;
  batches: number;
}

export interface ProxyServiceOptions {
  db: Database;
  settings: ProxySettings;
  clock: Clock;
  log: Logger;
  /** null = no-proxy (render-only) mode. */
  client: CaddyAdminClient | null;
  /** Route-auth protected route ids (route-auth feature), read inside the snapshot's transaction. */
  protectedRouteIds?: ProtectedRouteIdsFn;
  /** config_changed goes here whenever a different configuration becomes live (events.ts). */
  events?: EventBus;
  /** The licence's feature gate: which gated modules each render includes (render-context.ts features; with prometheus_metrics also Caddy's own metrics, snapshot.metrics). */
  features: FeatureGate;
  /** Told the duration of every load into Caddy and whether Caddy took it (GET /metrics). */
  onLoad?: (seconds: number, ok: boolean) => void;
}

export class ProxyService {
  readonly mode: 'caddy' | 'render-only';
  private queue: Job[] = [];
  private working = false;
  /** The JSON body Caddy was last given (no-proxy mode: last rendered). */
  private lastBody: string | null = null;
  private lastBodyHash: { body: string; hash: string } | null = null;
  /** The "@id" marker of the last load (see wireBody). */
  private lastMarker: string | null = null;
  private verifies = 0;
  private lastLoadAt: number | null = null;
  private lastError: string | null = null;
  /** Number of POST /load calls made (render-only: renders that would have been loads). */
  loads = 0;
  batches = 0;
  private readonly db: Database;
  readonly settings: ProxySettings;
  private readonly clock: Clock;
  private readonly log: Logger;
  readonly client: CaddyAdminClient | null;
  /** Circuit-breaker seeds pinned between renders (breaker.ts). */
  readonly breakers = new BreakerMemory();
  private readonly protectedRouteIds?: ProtectedRouteIdsFn;
  private readonly events?: EventBus;
  private readonly features: FeatureGate;
  private readonly onLoad?: (seconds: number, ok: boolean) => void;

  constructor(o: ProxyServiceOptions) {
    this.features = o.features;
    this.onLoad = o.onLoad;
    this.protectedRouteIds = o.protectedRouteIds;
    this.events = o.events;
    this.db = o.db;
    this.settings = o.settings;
    this.clock = o.clock;
    this.log = o.log;
    this.client = o.client;
    this.mode = o.client ? 'caddy' : 'render-only';
  }

  status(): ProxyStatus {
    return {
      mode: this.mode,
      config_hash: this.configHash(),
      last_load_at: this.lastLoadAt === null ? null : new Date(this.lastLoadAt).toISOString(),
      last_error: this.lastError,
      loads: this.loads,
      batches: this.batches,
    };
  }

  /** The configuration as it would be rendered now (no load). */
  async render(transaction?: Transaction): Promise<CaddyConfig> {
    const snap = await readSnapshot(this.db, this.settings, this.clock(), transaction, this.protectedRouteIds);
    snap.breakers = this.breakers.seeds(snap.routes, this.lastBody === null);
    snap.features = LICENSED_FEATURES.filter((f) => this.features.isEnabled(f));
    snap.metrics = snap.features.includes('prometheus_metrics');
    return renderCaddyConfig(snap);
  }

  /** Runs fn in a DB transaction and commits only when Caddy accepted the resulting configuration. */
  transact<T>(fn: WriteFn<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ kind: 'write', fn, resolve: resolve as (v: unknown) => void, reject });
      this.kick();
    });
  }

  /** Re-renders from a fresh snapshot and loads it (coalesced with everything queued meanwhile). */
  apply(opts: ApplyOptions = {}): Promise<ApplyResult> {
    return new Promise<ApplyResult>((resolve, reject) => {
      this.queue.push({ kind: 'apply', opts, resolve, reject });
      this.kick();
    });
  }

  /** Forget what Caddy holds (it restarted empty): the next apply loads unconditionally. */
  invalidate(): void {
    this.lastBody = null;
  }

  /** config_hash of what Caddy was last given (null before the first load). */
  configHash(): string | null {
    const body = this.lastBody;
    if (body === null) return null;
    if (this.lastBodyHash?.body !== body) this.lastBodyHash = { body, hash: configHash(JSON.parse(body)) };
    return this.lastBodyHash.hash;
  }

  private kick(): void {
    if (this.working) return;
    this.working = true;
    void (async () => {
      try {
        while (this.queue.length) {
          // A write retried alone runs alone; everything else queued so far forms one batch.
          const batch = this.queue[0].kind === 'write' && (this.queue[0] as WriteJob).solo ? this.queue.splice(0, 1) : this.takeBatch();
          this.batches++;
          try {
            await this.runBatch(batch);
          } catch (err) {
            // runBatch settles its jobs itself; this is a safety net.
            for (const j of batch) j.reject(err);
          }
        }
      } finally {
        this.working = false;
      }
    })();
  }

  private takeBatch(): Job[] {
    const firstSolo = this.queue.findIndex((j) => j.kind === 'write' && j.solo);
    return firstSolo === -1 ? this.queue.splice(0) : this.queue.splice(0, firstSolo);
  }

  private async runBatch(batch: Job[]): Promise<void> {
    const writes = batch.filter((j): j is WriteJob => j.kind === 'write');
    const applies = batch.filter((j): j is ApplyJob => j.kind === 'apply');
    if (!writes.length) return this.runApplies(applies);

    const t = await this.db.sequelize.transaction();
    const done: { job: WriteJob; value: unknown }[] = [];
    try {
      for (const job of writes) {
        if (writes.length === 1) {
          try {
            done.push({ job, value: await job.fn(t) });
          } catch (err) {
            job.reject(err);
          }
          continue;
        }
        const sp = await this.db.sequelize.transaction({ transaction: t });
        try {
          const value = await job.fn(sp);
          await sp.commit();
          done.push({ job, value });
        } catch (err) {
          await sp.rollback();
          job.reject(err);
        }
      }
      if (!done.length) {
        await t.rollback();
        if (applies.length) await this.runApplies(applies);
        return;
      }
      const t0 = performance.now();
      const { body, wire, marker } = wireBody(await this.render(t));
      const t1 = performance.now();
      try {
        await this.load(wire);
        this.log.debug('proxy write batch', { writes: done.length, bytes: body.length, snapshot_render_ms: +(t1 - t0).toFixed(1), load_ms: +(performance.now() - t1).toFixed(1) });
      } catch (err) {
        await t.rollback();
        if (done.length > 1 && err instanceof CaddyAdminError && err.rejected) {
          // We cannot tell which write Caddy objected to: retry each alone (in order, ahead of
          // anything queued since), then the applies of this batch.
          this.log.warn('proxy rejected a batch of writes; retrying each alone', { writes: done.length, error: err.message });
          const retry: Job[] = done.map((d) => ({ ...d.job, solo: true }));
          this.queue.unshift(...retry, ...applies);
          return;
        }
        const e = toAppError(err);
        for (const d of done) d.job.reject(e);
        for (const a of applies) a.reject(e);
        return;
      }
      try {
        await t.commit();
      } catch (err) {
        // Caddy runs a config the database did not keep: put Caddy back to what the DB holds.
        this.log.error('commit failed after Caddy accepted the configuration; re-applying from the database', { err: String(err) });
        this.lastBody = null;
        this.queue.unshift({ kind: 'apply', opts: { force: true, reason: 'commit failed' }, resolve: () => undefined, reject: () => undefined });
        for (const d of done) d.job.reject(err);
        for (const a of applies) a.reject(err);
        return;
      }
      this.recordLoaded(body, marker, applies.map((a) => a.opts.reason).filter(Boolean).join(', ') || null);
      for (const d of done) d.job.resolve(d.value);
      for (const a of applies) a.resolve({ loaded: this.mode === 'caddy', reason: a.opts.reason });
    } catch (err) {
      // A database error outside any write function (begin, savepoint, snapshot).
      try {
        await t.rollback();
      } catch {
        /* already finished */
      }
      throw err;
    }
  }

  private async runApplies(applies: ApplyJob[]): Promise<void> {
    if (!applies.length) return;
    const force = applies.some((a) => a.opts.force);
    const verify = applies.some((a) => a.opts.verify);
    const reason = applies.map((a) => a.opts.reason).filter(Boolean).join(', ') || undefined;
    let result: ApplyResult;
    try {
      const { body, wire, marker } = wireBody(await this.render());
      let need = force || body !== this.lastBody;
      if (!need && verify && this.client && this.lastMarker) {
        // Cheap check every time: does Caddy still hold the object carrying our marker? (A Caddy
        // restart or a foreign /load removes it.) Every 6th time, the full comparison, which also
        // catches path-level edits through the admin API.
        let same = await this.client.hasId(this.lastMarker);
        if (same && this.verifies++ % 6 === 0) {
          const running = await this.client.getConfig();
          same = running !== null && configHash(stripMarker(running)) === this.configHash();
        }
        if (!same) {
          this.log.warn('Caddy runs a different configuration than the one we loaded (restart or drift); re-applying');
          need = true;
        }
      }
      if (need) {
        await this.load(wire);
        this.recordLoaded(body, marker, reason ?? null);
        if (reason) this.log.info('proxy configuration applied', { reason });
      }
      result = { loaded: need && this.mode === 'caddy', reason };
    } catch (err) {
      const e = toAppError(err);
      for (const a of applies) a.reject(e);
      return;
    }
    for (const a of applies) a.resolve(result);
  }

  private async load(body: string): Promise<void> {
    if (!this.client) {
      // No-proxy mode: nothing to load into (the configuration was rendered and serialized).
      this.loads++;
      return;
    }
    const t0 = performance.now();
    try {
      this.loads++;
      await this.client.load(body);
      this.lastError = null;
      this.onLoad?.((performance.now() - t0) / 1000, true);
      this.log.debug('caddy /load done', { ms: Math.round(performance.now() - t0) });
    } catch (err) {
      this.onLoad?.((performance.now() - t0) / 1000, false);
      this.lastError = err instanceof Error ? err.message : String(err);
      throw err;
    }
  }

  private recordLoaded(body: string, marker: string, reason: string | null): void {
    const changed = body !== this.lastBody;
    this.lastBody = body;
    this.lastMarker = marker;
    this.lastLoadAt = this.clock();
    // announced, not awaited: a subscriber never delays the write that changed the configuration
    if (changed && this.events) void this.events.emit({ type: 'config_changed', target: 'proxy', config_hash: this.configHash()!, reason });
  }
}

export const MARKER_PREFIX = 'gatehouse-';

/**
 * The body sent to Caddy: the rendered configuration with `admin.config["@id"]` set to a marker
 * derived from the rendered JSON. Caddy strips "@id" fields before decoding and indexes them, so
 * GET /id/<marker> answers (with a two-field object) exactly while Caddy runs this configuration.
 * `body` (without the marker) is what config_hash and the change detection use.
 */
export function wireBody(cfg: CaddyConfig): { body: string; wire: string; marker: string } {
  const { admin, ...rest } = cfg as { admin: { config?: Record<string, unknown> } & Record<string, unknown> } & Record<string, unknown>;
  const restJson = JSON.stringify(rest);
  const tail = restJson === '{}' ? '}' : `,${restJson.slice(1)}`;
  const body = `{"admin":${JSON.stringify(admin)}${tail}`;
  const marker = MARKER_PREFIX + crypto.createHash('sha256').update(body).digest('hex').slice(0, 40);
  const wire = `{"admin":${JSON.stringify({ ...admin, config: { ...(admin?.config ?? {}), '@id': marker } })}${tail}`;
  return { body, wire, marker };
}

/** A configuration as Caddy reports it, without our marker (to compare with a rendering). */
export function stripMarker(cfg: unknown): unknown {
  const c = cfg as { admin?: { config?: Record<string, unknown> } };
  if (!c?.admin?.config || !('@id' in c.admin.config)) return cfg;
  const { '@id': _id, ...config } = c.admin.config;
  return { ...c, admin: { ...c.admin, config } };
}

/** Caddy's refusal → 502 with its message; Caddy unreachable → 503. */
export function toAppError(err: unknown): unknown {
  if (err instanceof CaddyAdminError) {
    if (err.rejected) return new AppError('upstream', `proxy rejected the configuration: ${err.message}`, undefined, { proxy_error: err.message });
    return new AppError('unavailable', `proxy is not reachable: ${err.message}`);
  }
  return err;
}
