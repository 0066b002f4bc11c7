// ProxyService (ctx.proxy): the one way anything changes what Caddy serves.
//
// - transact(fn): the all-or-nothing write path. fn writes rows with the transaction it is given
//   and names the routes it changed (`changes.routes(id)`); the hosts of those routes are rendered
//   from a snapshot read INSIDE that transaction and only the hosts that differ are sent to Caddy
//   (POST /gatehouse/hostroute/changes, proxy/apply.ts); a write that names nothing, or whose
//   change reaches beyond host entries (an L4 route, the first HTTPS host...), renders everything and
//   falls back to a full POST /load when the rest of the configuration changed. The transaction
//   commits only if Caddy accepted the change. Otherwise it rolls back and the
//   caller gets 502 "proxy rejected the configuration: <Caddy's message>", with Caddy's message alone in
//   `proxy_error` for clients that word the lead-in themselves (503 when Caddy is not
//   reachable). Either the write is saved and live, or neither.
// - apply(): re-render from a fresh snapshot and send what differs (after changes made elsewhere:
//   peers, the licence, the reconcile loop); apply({force}) makes a full load (start-up, a Caddy
//   restart, POST /caddy/reload, a restored backup). A full load keeps upgraded connections open
//   for STREAM_CLOSE_DELAY (fragments/servers.ts); host changes do not touch other hosts at all.
//
// Coalescing: every transact() and apply() goes into ONE queue, worked by one loop. While a load is
// in flight, new requests wait; when it finishes, everything queued meanwhile runs as one batch:
// one DB transaction, each write in its own savepoint (a write that throws - 400, 409 - is rolled
// back alone and fails alone), one snapshot, ONE change set (or load). Changes reach Caddy in the
// order of the queue, never interleaved. If Caddy rejects a batch of several writes,
// the batch is rolled back and each write is retried on its own, so every request still gets its
// own all-or-nothing outcome. A load never uses a stale snapshot: the snapshot is read after every
// write it must cover, inside the same transaction.
//
// No-proxy mode (GATEHOUSE_MANAGE_CADDY=false): there is no Caddy to load into; every write still
// renders (which validates that the configuration can be built) and records the hash, then commits.
//
// config_hash = proxyConfigHash (proxy/apply.ts) of the whole configuration Caddy runs (the last
// full load with every host change since): the canonical hash of the frame combined with the
// hashes of every host, kept up to date host by host, so a change costs what it changes.
//
// Drift and restarts: every full load carries a marker ("@id" on admin.config, see wireBody); the
// reconcile loop asks Caddy for it (tiny request) and, every sixth pass, compares the frame of the
// running configuration (GET /config/ without its host maps, which host changes leave stale) and the
// per-host hashes of every host map (GET /gatehouse/hostroute/maps/<map>/hosts); it repairs only
// the hosts that differ, and makes a full load only when the frame differs.
//
// SQLite note: the pool has ONE connection, so a write function must pass its transaction to every
// query it makes (a query without it would wait for the connection the transaction holds).
import { msg, refOf, type MessageRef } from '@gatehouse/common/messages/index.js';
import crypto from 'node:crypto';
import { Op, type Transaction } from 'sequelize';
import type { Database } from '../db/index.js';
import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/logger.js';
import type { EventBus } from '../events.js';
import { AppError } from '../util/errors.js';
import { CaddyAdminError, caddyErrorMessage, type CaddyAdminClient } from './admin-client.js';
import { BreakerMemory } from './breaker.js';
import { configHash } from '@gatehouse/common/canonical.js';
import type { CaddyConfig, HostEntry } from './caddy-json.js';
import type { CustomCertificatePem, ProxySettings, ProxySnapshot } from './render-context.js';
import { assembleConfig, renderCaddyConfig, renderFrame, renderHosts, summarizeHosts, type RenderedHosts } from './render.js';
import { LICENSED_FEATURES, type FeatureGate } from '../licence/features.js';
import { readRoutesSnapshot, readSnapshot, type ProtectedRouteIdsFn } from './snapshot.js';
import { AppliedState, frameOf, type HostChanges, type Plan } from './apply.js';
import type { ProxyStatus } from './schema.js';

/** What a write tells the apply path it changed (see transact). */
export interface ChangeScope {
  /** These routes' rows (or rows hanging on them: route auth, breaker state) changed. */
  routes(...ids: number[]): void;
  /** Something beyond single routes changed: render everything and compare. */
  all(): void;
}

export type WriteFn<T> = (t: Transaction, changes: ChangeScope) => Promise<T>;

export interface ApplyOptions {
  /** Load even when the rendered hash equals the last loaded one (Caddy restarted, /caddy/reload). */
  force?: boolean;
  /**
   * Also check that Caddy still runs what we loaded (the reconcile loop): GET /id/<marker> every
   * time, the full GET /config/ comparison every 6th time; re-load on any difference.
   */
  verify?: boolean;
  reason?: string;
  /** Only these routes changed (peer changes know their routes): render only their hosts. */
  routes?: number[];
}

export interface ApplyResult {
  /** Caddy was changed: a POST /load or host changes were made (false: nothing changed, or no-proxy mode). */
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

/** The routes a batch changed, or 'all' (render everything and compare). */
type Scope = Set<number> | 'all';

/** What a batch sends to Caddy: a full load, or host changes (possibly none). */
type Step = { kind: 'full'; cfg: CaddyConfig; frame: CaddyConfig; rendered: RenderedHosts; l4Routes: number[] } | { kind: 'hosts'; plan: Plan };
interface ApplyJob {
  kind: 'apply';
  opts: ApplyOptions;
  resolve: (v: ApplyResult) => void;
  reject: (e: unknown) => void;
}
type Job = WriteJob | ApplyJob;

export interface ProxyServiceOptions {
  db: Database;
  settings: ProxySettings;
  clock: Clock;
  log: Logger;
  /** null = no-proxy (render-only) mode. */
  client: CaddyAdminClient | null;
  /** Route-auth protected route ids (route-auth feature), read inside the snapshot's transaction. */
  protectedRouteIds?: ProtectedRouteIdsFn;
  /** The custom certificates with these ids, keys opened (certificates/service.ts loadCustomCertificates), read in the snapshot's transaction. */
  customCertificates?: (ids: number[], transaction?: Transaction) => Promise<Map<number, CustomCertificatePem>>;
  /** config_changed goes here whenever a different configuration becomes live (events.ts). */
  events?: EventBus;
  /** The licence's feature gate: which gated modules each render includes (render-context.ts features; with prometheus_metrics also Caddy's own metrics, snapshot.metrics). */
  features: FeatureGate;
  /** Told the duration of every load into Caddy and whether Caddy took it (GET /metrics). */
  onLoad?: (seconds: number, ok: boolean) => void;
  /**
   * Told, inside a write batch's transaction after Caddy accepted the change and before the commit,
   * what the batch changed (route ids, or 'all'): the cluster's change feed NOTIFYs it there, so
   * the notice is delivered exactly when the write commits (cluster/feed.ts). A throw fails the batch.
   */
  publish?: (routes: number[] | 'all', transaction: Transaction) => Promise<void>;
}

export class ProxyService {
  readonly mode: 'caddy' | 'render-only';
  private queue: Job[] = [];
  private working = false;
  /** What Caddy runs, frame and hosts (no-proxy mode: what it would run). */
  readonly state = new AppliedState();
  /** The "@id" marker of the last load (see wireBody). */
  private lastMarker: string | null = null;
  private verifies = 0;
  private lastLoadAt: number | null = null;
  /** the last failed load's or change's text and its message (caddyErrorMessage) */
  private lastError: { text: string; code: MessageRef } | null = null;
  /**
   * Number of changes made to Caddy's configuration: full loads (POST /load) and host change sets
   * (POST /gatehouse/hostroute/changes); render-only: the ones that would have been made.
   */
  loads = 0;
  /** Of `loads`, the full loads. */
  fullLoads = 0;
  /** Of `loads`, the host change sets. */
  hostChanges = 0;
  batches = 0;
  private readonly db: Database;
  readonly settings: ProxySettings;
  private readonly clock: Clock;
  private readonly log: Logger;
  readonly client: CaddyAdminClient | null;
  /** Circuit-breaker seeds pinned between renders (breaker.ts). */
  readonly breakers = new BreakerMemory();
  private readonly protectedRouteIds?: ProtectedRouteIdsFn;
  private readonly customCertificates?: ProxyServiceOptions['customCertificates'];
  private readonly events?: EventBus;
  private readonly features: FeatureGate;
  private readonly onLoad?: (seconds: number, ok: boolean) => void;
  private readonly publish?: ProxyServiceOptions['publish'];

  constructor(o: ProxyServiceOptions) {
    this.publish = o.publish;
    this.features = o.features;
    this.onLoad = o.onLoad;
    this.protectedRouteIds = o.protectedRouteIds;
    this.customCertificates = o.customCertificates;
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
      last_error: this.lastError?.text ?? null,
      last_error_code: this.lastError?.code ?? null,
      loads: this.loads,
      batches: this.batches,
    };
  }

  /** The configuration as it would be rendered now (no load). */
  async render(transaction?: Transaction): Promise<CaddyConfig> {
    return renderCaddyConfig(await this.snapshot(transaction));
  }

  /** A snapshot of everything, or of only the routes `ids` (their hosts alone get rendered). */
  private async snapshot(transaction?: Transaction, ids?: number[]): Promise<ProxySnapshot> {
    let snap: ProxySnapshot;
    if (ids) {
      snap = await readRoutesSnapshot(this.db, this.settings, this.clock(), ids, transaction, this.protectedRouteIds);
      snap.breakers = this.breakers.seedsFor(snap.routes, ids);
    } else {
      snap = await readSnapshot(this.db, this.settings, this.clock(), transaction, this.protectedRouteIds);
      snap.breakers = this.breakers.seeds(snap.routes, this.state.empty);
    }
    const certIds = [...new Set(snap.routes.flatMap((r) => (r.certificate_id !== null && r.https_enabled ? [r.certificate_id] : [])))];
    if (certIds.length && this.customCertificates) snap.certificates = await this.customCertificates(certIds, transaction);
    snap.features = LICENSED_FEATURES.filter((f) => this.features.isEnabled(f));
    snap.metrics = snap.features.includes('prometheus_metrics');
    return snap;
  }

  /**
   * What to send for a batch: the hosts of the routes in `scope` (proxy/apply.ts planRoutes), or a
   * full rendering compared host by host (planAll), or a full load when the frame changes, Caddy
   * holds nothing we know of, or `force`.
   */
  private async step(scope: Scope, force: boolean, transaction?: Transaction): Promise<Step> {
    if (scope !== 'all' && !force && !this.state.empty) {
      const ids = [...scope];
      const snap = await this.snapshot(transaction, ids);
      const l4Now = new Set(snap.routes.filter((r) => r.route_type === 'l4').map((r) => r.id));
      const plan = this.state.planRoutes(this.settings, renderHosts(snap), ids, l4Now, !!snap.metrics);
      if (plan !== 'full') return { kind: 'hosts', plan };
    }
    this.lastFullRenderAt = this.clock();
    const snap = await this.snapshot(transaction);
    const rendered = renderHosts(snap);
    if (!force) {
      const plan = this.state.planAll(this.settings, rendered, !!snap.metrics);
      if (plan !== 'full') return { kind: 'hosts', plan };
    }
    const frame = renderFrame(this.settings, summarizeHosts(rendered.maps), rendered, !!snap.metrics);
    const cfg = assembleConfig(JSON.parse(JSON.stringify(frame)) as CaddyConfig, rendered.maps);
    const l4Routes = snap.routes.filter((r) => r.route_type === 'l4' && r.enabled).map((r) => r.id);
    return { kind: 'full', cfg, frame, rendered, l4Routes };
  }

  /** Sends a step to Caddy (nothing in no-proxy mode); throws what Caddy answered. */
  private async send(step: Step): Promise<{ marker?: string }> {
    if (step.kind === 'full') {
      const { wire, marker } = wireBody(step.cfg);
      await this.load(wire);
      return { marker };
    }
    if (step.plan.count) await this.sendChanges(step.plan.changes);
    return {};
  }

  /** Holds what Caddy now runs (after the database committed). */
  private record(step: Step, sent: { marker?: string }, reason: string | null): boolean {
    let changed: boolean;
    if (step.kind === 'full') {
      const before = this.state.empty ? null : this.state.configHash();
      this.state.setFull(step.frame, step.rendered, step.l4Routes);
      this.lastMarker = sent.marker ?? this.lastMarker;
      changed = before === null || before !== this.state.configHash();
    } else {
      this.state.commit(step.plan);
      changed = step.plan.count > 0;
    }
    this.lastLoadAt = this.clock();
    if (changed) this.announce(reason);
    return changed;
  }

  /** config_changed: a different configuration is live (announced, not awaited: a subscriber never delays the write). */
  private announce(reason: string | null): void {
    const hash = this.state.configHash();
    if (hash && this.events) void this.events.emit({ type: 'config_changed', target: 'proxy', config_hash: hash, reason });
  }

  /**
   * Runs fn in a DB transaction and commits only when Caddy accepted the resulting change. fn names
   * the routes it changed with `changes.routes(id)`: only their hosts are rendered and sent. A fn
   * that names nothing (or calls `changes.all()`) gets everything rendered and compared host by host.
   */
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
    this.state.reset();
  }

  /** config_hash of what Caddy runs (null before the first load). */
  configHash(): string | null {
    return this.state.configHash();
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
    const done: { job: WriteJob; value: unknown; scope: Scope }[] = [];
    try {
      for (const job of writes) {
        const ids = new Set<number>();
        let all = false;
        const changes: ChangeScope = {
          routes: (...r) => r.forEach((id) => ids.add(Number(id))),
          all: () => void (all = true),
        };
        const scopeOf = (): Scope => (all || !ids.size ? 'all' : ids);
        if (writes.length === 1) {
          try {
            const value = await job.fn(t, changes);
            done.push({ job, value, scope: scopeOf() });
          } catch (err) {
            job.reject(err);
          }
          continue;
        }
        const sp = await this.db.sequelize.transaction({ transaction: t });
        try {
          const value = await job.fn(sp, changes);
          await sp.commit();
          done.push({ job, value, scope: scopeOf() });
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
      // One scope for the batch; an apply queued with it, or a write that named nothing, renders everything.
      let scope: Scope = new Set<number>();
      for (const d of done) scope = scope === 'all' || d.scope === 'all' ? 'all' : new Set([...scope, ...d.scope]);
      const applyScope = this.applyScope(applies);
      if (applies.length) scope = applyScope === 'all' || scope === 'all' ? 'all' : new Set([...scope, ...applyScope]);
      const force = applies.some((a) => a.opts.force);
      const t0 = performance.now();
      const step = await this.step(scope, force, t);
      const t1 = performance.now();
      let sent: { marker?: string };
      try {
        sent = await this.send(step);
        this.log.debug('proxy write batch', {
          writes: done.length,
          step: step.kind,
          hosts: step.kind === 'hosts' ? step.plan.count : undefined,
          snapshot_render_ms: +(t1 - t0).toFixed(1),
          send_ms: +(performance.now() - t1).toFixed(1),
        });
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
        // the other nodes hear of the write when (and only if) it commits
        await this.publish?.(scope === 'all' ? 'all' : [...scope], t);
        await t.commit();
      } catch (err) {
        // Caddy runs a config the database did not keep: put Caddy back to what the DB holds.
        this.log.error('commit failed after Caddy accepted the configuration; re-applying from the database', { err: String(err) });
        await t.rollback().catch(() => undefined); // (a failed publish left it open; a failed commit has finished it)
        this.state.reset();
        this.queue.unshift({ kind: 'apply', opts: { force: true, reason: 'commit failed' }, resolve: () => undefined, reject: () => undefined });
        for (const d of done) d.job.reject(err);
        for (const a of applies) a.reject(err);
        return;
      }
      this.record(
        step,
        sent,
        applies
          .map((a) => a.opts.reason)
          .filter(Boolean)
          .join(', ') || null,
      );
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

  /** The routes the applies name, or 'all' when one of them names none. */
  private applyScope(applies: ApplyJob[]): Scope {
    const ids = new Set<number>();
    for (const a of applies) {
      if (!a.opts.routes || a.opts.force || a.opts.verify) return 'all';
      for (const id of a.opts.routes) ids.add(id);
    }
    return ids;
  }

  private async runApplies(applies: ApplyJob[]): Promise<void> {
    if (!applies.length) return;
    const force = applies.some((a) => a.opts.force);
    const verify = applies.some((a) => a.opts.verify);
    const reason =
      applies
        .map((a) => a.opts.reason)
        .filter(Boolean)
        .join(', ') || undefined;
    let result: ApplyResult;
    try {
      // The reconcile loop (verify alone) renders and compares everything only when a peer expired
      // since the last full rendering (the one input that changes with time alone) and every
      // FULL_RENDER_PASSES passes (30 min; not the first pass: start-up has just rendered everything):
      // at 100,000 routes a full rendering takes seconds of the event loop. Every pass asks Caddy for the marker (a restart or a foreign load) and every
      // 6th compares the running frame and every host's hash.
      const onlyVerify = verify && !force && applies.every((a) => a.opts.verify);
      const fullPass = !onlyVerify || ++this.reconcilePasses % FULL_RENDER_PASSES === 0 || (await this.peerExpiredSinceRender());
      let step: Step = fullPass
        ? await this.step(this.applyScope(applies), force || this.state.empty)
        : { kind: 'hosts', plan: { changes: { maps: {} }, count: 0, owners: new Map(), allOwners: false } };
      let changed = false;
      if (step.kind === 'hosts' && !step.plan.count && verify && this.client && this.lastMarker) {
        // Cheap check every time: does Caddy still hold the object carrying our marker? (A Caddy
        // restart or a foreign /load removes it.) Every 6th time, the full comparison: the frame of
        // the running configuration (catches path-level edits through the admin API) and the
        // per-host hashes of every host map (repairs only the hosts that differ).
        let same = await this.client.hasId(this.lastMarker);
        if (same && this.verifies++ % 6 === 0) {
          const running = await this.client.getConfig();
          same = running !== null && configHash(frameOf(stripMarker(running) as CaddyConfig, true)) === this.state.frameHash();
          if (same) {
            const repair = await this.hostDrift();
            if (repair.count) {
              this.log.warn('Caddy runs different hosts than the ones we applied; repairing them', { hosts: repair.count });
              step = { kind: 'hosts', plan: repair };
            }
          }
        }
        if (!same) {
          this.log.warn('Caddy runs a different configuration than the one we loaded (restart or drift); re-applying');
          step = await this.step('all', true);
        }
      }
      if (step.kind === 'full' || step.plan.count) {
        const sent = await this.send(step);
        changed = this.record(step, sent, reason ?? null) || step.kind === 'full';
        if (reason) this.log.info('proxy configuration applied', { reason, step: step.kind });
      }
      result = { loaded: changed && this.mode === 'caddy', reason };
    } catch (err) {
      const e = toAppError(err);
      for (const a of applies) a.reject(e);
      return;
    }
    for (const a of applies) a.resolve(result);
  }

  private lastFullRenderAt = 0;
  private reconcilePasses = 0;

  /** Whether a peer's expiry time passed since the last full rendering (its routes now render as unavailable). */
  private async peerExpiredSinceRender(): Promise<boolean> {
    const now = this.clock();
    const n = await this.db.models.Peer.count({ where: { expires_at: { [Op.gt]: this.lastFullRenderAt, [Op.lte]: now } } });
    return n > 0;
  }

  /** The hosts whose hash in Caddy differs from what we applied: put ours back, delete theirs. */
  private async hostDrift(): Promise<Plan> {
    const changes: HostChanges = { maps: {} };
    let count = 0;
    for (const map of this.state.hostMaps()) {
      const theirs = (await this.client!.hostHashes(map)) ?? {};
      const ours = this.state.hostHashes(map);
      const put: Record<string, HostEntry> = {};
      const del: string[] = [];
      for (const [host, hash] of ours) if (theirs[host] !== hash) put[host] = this.state.hostEntry(map, host)!;
      for (const host of Object.keys(theirs)) if (!ours.has(host)) del.push(host);
      if (Object.keys(put).length || del.length) {
        changes.maps[map] = { put, delete: del };
        count += Object.keys(put).length + del.length;
      }
    }
    return { changes, count, owners: new Map(), allOwners: false };
  }

  private async sendChanges(changes: HostChanges): Promise<void> {
    this.loads++;
    this.hostChanges++;
    if (!this.client) return;
    const t0 = performance.now();
    try {
      await this.client.changes(changes);
      this.lastError = null;
      this.onLoad?.((performance.now() - t0) / 1000, true);
    } catch (err) {
      this.onLoad?.((performance.now() - t0) / 1000, false);
      this.lastError = { text: err instanceof Error ? err.message : String(err), code: refOf(caddyErrorMessage(err)) };
      throw err;
    }
  }

  private async load(body: string): Promise<void> {
    this.loads++;
    this.fullLoads++;
    if (!this.client) return; // no-proxy mode: nothing to load into (the configuration was rendered and serialized)
    const t0 = performance.now();
    try {
      await this.client.load(body);
      this.lastError = null;
      this.onLoad?.((performance.now() - t0) / 1000, true);
      this.log.debug('caddy /load done', { ms: Math.round(performance.now() - t0) });
    } catch (err) {
      this.onLoad?.((performance.now() - t0) / 1000, false);
      this.lastError = { text: err instanceof Error ? err.message : String(err), code: refOf(caddyErrorMessage(err)) };
      throw err;
    }
  }
}

export const MARKER_PREFIX = 'gatehouse-';
/** Reconcile passes between two full renderings (10 s each: 30 min), besides peer expiries. */
export const FULL_RENDER_PASSES = 180;

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
    if (err.rejected) return new AppError('upstream', msg('proxy.rejected', { error: err.message }), undefined, { proxy_error: err.message });
    return new AppError('unavailable', msg('proxy.unreachable', { error: err.message }));
  }
  return err;
}
