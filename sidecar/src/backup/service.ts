// BackupService (ctx.backup): the backup document (download), restore (merge / replace / dry run,
// then one apply to Caddy and WireGuard), and the auto-backup jobs (node-schedule through the
// project's scheduler; local or S3 targets). Knows nothing about HTTP.
//
// Scheduled backups need a passphrase with no admin present: each job keeps the passphrase it was
// given, sealed with the master key like every other secret at rest, and never shows it again. Keep
// that passphrase somewhere else too: a restore onto a new server needs it, and the server that
// holds it is the one that was lost.
//
// In a cluster (docs/guides/cluster.md#what-runs-once) the schedules are singleton cron jobs: only
// the leader makes the runs. Every node keeps the schedules of every job (a job written on another
// node arrives through the change feed: onSchedulesChanged → reloadSchedules), and a scheduled run
// first claims its due time on the job's row (last_run_at set to the run's start where it is still
// older than the due time), so a due time is run once even if two nodes believed they led. A leader
// that takes over makes the run that fell due while no node led (catchUpMissed), if it is at most
// MISSED_RUN_GRACE_MS late.
import { msg, type MessageRef } from '@gatehouse/common/messages/index.js';
import path from 'node:path';
import { Op } from 'sequelize';
import type { Deps } from '../deps.js';
import type { ProxyService } from '../proxy/service.js';
import type { WireGuardService } from '../wireguard/service.js';
import type { RouteAuthService } from '../route-auth/service.js';
import type { GatewaysService } from '../gateways/service.js';
import type { PeersService } from '../peers/service.js';
import type { CronHandle } from '../util/scheduler.js';
import { AppError, notFound, unprocessable, validation, type FieldMessages } from '../util/errors.js';
import { FetchFailed, isNotAllowed, NotAllowed, resolveAllowed } from '../util/outbound.js';
import { makeDocument, readDocument, type DocMigration } from './document.js';
import { checkPassphrase } from './envelope.js';
import { runRestore, type RestoreMode } from './restore.js';
import { backupFileName, localTarget, s3Target, type Target } from './targets.js';
import type { BackupJobRow } from './model.js';
import type { BackupDocument, JobCreate, JobUpdate, JobView, RestoreResult } from './schema.js';
import fs from 'node:fs';
import { findRows } from '../db/define.js';
import { lastDue } from '../util/cron.js';

/** How late a scheduled run that fell due while no node led may still be made by the next leader. */
export const MISSED_RUN_GRACE_MS = 3_600_000;

export interface BackupCollaborators {
  proxy: ProxyService;
  wireguard: WireGuardService;
  routeAuth: RouteAuthService;
  gateways: GatewaysService;
  peers: PeersService;
  /** the internal DNS data (rewritten after a restore: the peers changed) */
  dns?: { refresh(): Promise<unknown> };
  /** the desktop clients' caches (machines, rendered configs), dropped after a restore */
  clientMachines?: { invalidate(): void };
  /** document migrations (default document.ts DOC_MIGRATIONS; tests inject a synthetic one) */
  migrations?: Readonly<Record<number, DocMigration>>;
  currentVersion?: number;
}

export const SCHEDULE_ALIASES: Readonly<Record<string, string>> = { daily: '0 3 * * *', weekly: '0 3 * * 0' };

export function cronOf(schedule: string): string {
  return SCHEDULE_ALIASES[schedule] ?? schedule;
}

/** The stored error of a job run that the target guard refused. */
const NOT_ALLOWED = 'not allowed';

/** A job run's stored error as a message: the guard's refusal, or the target's (S3's) own words as `detail`. */
export function backupErrorCode(error: string | null): MessageRef | null {
  if (error === null) return null;
  return error === NOT_ALLOWED ? { code: 'backup.target.not_allowed' } : { code: 'backup.target.error', params: { detail: error } };
}

export class BackupService {
  private crons = new Map<number, CronHandle>();
  private started = false;
  /** Told when a job's row was created, changed or deleted here (the cluster's change feed: the other nodes reschedule). */
  onSchedulesChanged: (() => void) | null = null;

  constructor(
    private readonly deps: Deps,
    private readonly c: BackupCollaborators,
  ) {}

  // ------------------------------------------------------------------ document

  /** The complete document, its secrets sealed under the passphrase. */
  async document(passphrase: string): Promise<BackupDocument> {
    checkPassphrase(passphrase);
    return makeDocument({ db: this.deps.db, master: this.deps.crypto, branding: this.c.routeAuth.branding, passphrase, now: this.deps.clock() });
  }

  /** A download: the document and the time it was made; emits backup_completed (target download). */
  async download(passphrase: string): Promise<{ doc: BackupDocument; body: string; name: string }> {
    const t0 = this.deps.clock();
    try {
      const doc = await this.document(passphrase);
      const body = JSON.stringify(doc);
      const name = backupFileName(t0);
      await this.deps.events.emit({
        type: 'backup_completed',
        job_id: null,
        target: 'download',
        file: name,
        bytes: Buffer.byteLength(body),
        duration_ms: this.deps.clock() - t0,
      });
      return { doc, body, name };
    } catch (err) {
      if (!(err as { kind?: string }).kind)
        await this.deps.events.emit({ type: 'backup_failed', job_id: null, target: 'download', error: String((err as Error)?.message ?? err) });
      throw err;
    }
  }

  // ------------------------------------------------------------------ restore

  async restore(text: string | Buffer, o: { passphrase: string; mode: RestoreMode; dryRun: boolean; actor?: number }): Promise<RestoreResult> {
    const doc = await readDocument(text, { db: this.deps.db, passphrase: o.passphrase, migrations: this.c.migrations, currentVersion: this.c.currentVersion });
    const { plan, files } = await runRestore({
      db: this.deps.db,
      master: this.deps.crypto,
      branding: this.c.routeAuth.branding,
      doc,
      mode: o.mode,
      dryRun: o.dryRun,
      subnet: this.c.wireguard.subnet,
    });
    const summary = { created: 0, changed: 0, removed: 0, unchanged: 0 };
    for (const p of Object.values(plan)) {
      summary.created += p.created.length;
      summary.changed += p.changed.length;
      summary.removed += p.removed.length;
      summary.unchanged += p.unchanged;
    }
    const result: RestoreResult = {
      mode: o.mode,
      dry_run: o.dryRun,
      version: doc.version,
      migrated_from: doc.migrated_from,
      created_at: doc.created_at,
      plan,
      summary,
      applied: null,
    };
    if (o.dryRun) return result;

    // the images the restored rows name, then the caches, then ONE apply to Caddy and WireGuard
    const branding = this.c.routeAuth.branding;
    fs.mkdirSync(branding.dir, { recursive: true, mode: 0o755 });
    for (const f of files) fs.writeFileSync(path.join(branding.dir, f.name), f.data, { mode: 0o644 });
    await this.c.routeAuth.cleanupBranding().catch(() => 0);
    this.invalidateCaches();
    // the restored settings may hold other Network settings (public host, TLS mode): read them before rendering
    await this.deps.publicHost.load().catch((err) => this.deps.log.warn(`Network settings not reloaded after a restore: ${(err as Error).message}`));
    // the restored settings may hold another licence: read it before rendering
    await this.deps.licence.load().catch((err) => this.deps.log.warn(`licence not reloaded after a restore: ${(err as Error).message}`));
    await this.c.dns?.refresh().catch((err) => this.deps.log.warn(`DNS data not rewritten after a restore: ${(err as Error).message}`));
    const applied = { proxy: null as string | null, wireguard: null as string | null };
    await this.c.proxy.apply({ force: true, reason: 'backup restored' }).catch((err) => (applied.proxy = String((err as Error)?.message ?? err)));
    if (this.c.wireguard.managed) await this.c.wireguard.fullSync().catch((err) => (applied.wireguard = String((err as Error)?.message ?? err)));
    await this.reloadSchedules();
    result.applied = applied;
    await this.deps.activity.record({
      source: 'backup',
      event_type: 'backup_restored',
      severity: applied.proxy || applied.wireguard ? 'warning' : 'info',
      msg: msg('backup.restored', { mode: o.mode, created: summary.created, changed: summary.changed, removed: summary.removed }),
      details: { mode: o.mode, version: doc.version, migrated_from: doc.migrated_from, backup_created_at: doc.created_at, summary, applied },
      user_id: o.actor ?? null,
    });
    return result;
  }

  private invalidateCaches(): void {
    this.deps.settings.invalidate();
    this.deps.tokens.invalidate();
    this.c.peers.forgetAddresses();
    this.c.wireguard.forgetKeys();
    this.c.routeAuth.view.invalidateRoutes();
    this.c.routeAuth.view.dropAllSessions();
    this.c.gateways.invalidateConfig();
    this.c.gateways.invalidateTokens();
    this.c.clientMachines?.invalidate();
  }

  // ------------------------------------------------------------------ auto-backup jobs

  private get models() {
    return this.deps.db.models;
  }

  async listJobs(): Promise<JobView[]> {
    const rows = await findRows(this.models.BackupJob, { order: [['id', 'ASC']] });
    return rows.map((r) => this.view(r));
  }

  async getJob(id: number): Promise<JobView> {
    return this.view(await this.row(id));
  }

  private async row(id: number): Promise<BackupJobRow> {
    const r = (await this.models.BackupJob.findByPk(id, { raw: true })) as BackupJobRow | null;
    if (!r) throw notFound(msg('resource.not_found', { what: 'Backup job' }));
    return r;
  }

  /** The body's fields the stored jobs refuse (a name taken in any case), for a body whose schema refused other fields too (storedChecks). */
  async storedProblems(input: { name?: unknown }, exceptId?: number): Promise<FieldMessages> {
    if (typeof input.name !== 'string' || input.name.trim() === '') return {};
    const name = input.name.trim().toLowerCase();
    const rows = await findRows(this.models.BackupJob, { attributes: ['id', 'name'], where: exceptId ? { id: { [Op.ne]: exceptId } } : {} });
    return rows.some((r) => r.name.toLowerCase() === name) ? { name: msg('field.already_taken') } : {};
  }

  private async nameTaken(name: string, exceptId?: number): Promise<void> {
    const rows = await findRows(this.models.BackupJob, { attributes: ['id', 'name'], where: exceptId ? { id: { [Op.ne]: exceptId } } : {} });
    if (rows.some((r) => r.name.toLowerCase() === name.toLowerCase()))
      throw new AppError('conflict', msg('backup.job_name_taken', { name }), { name: msg('field.already_taken') });
  }

  async createJob(input: JobCreate, actor?: number): Promise<JobView> {
    await this.nameTaken(input.name);
    if (input.target === 's3' && !input.s3) throw unprocessable(msg('backup.s3_needed'), { s3: msg('backup.field.s3_needed') });
    if (input.target === 's3' && !input.s3?.secret_access_key)
      throw unprocessable(msg('backup.s3_secret_needed'), { 's3.secret_access_key': msg('field.required') });
    if (input.target === 's3') await this.checkEndpoint(input.s3?.endpoint);
    const now = this.deps.clock();
    const seal = (v: string) => this.deps.crypto.seal(v);
    const row = await this.models.BackupJob.create({
      name: input.name,
      enabled: input.enabled ?? true,
      schedule: input.schedule,
      keep: input.keep,
      target: input.target,
      ...this.s3Columns(input.target, input.s3, null),
      passphrase_enc: seal(input.passphrase),
      last_run_at: null,
      last_status: null,
      last_error: null,
      last_file: null,
      last_bytes: null,
      last_duration_ms: null,
      created_at: now,
      updated_at: now,
    } as Partial<BackupJobRow>);
    const job = row.get({ plain: true }) as BackupJobRow;
    this.schedule(job);
    this.onSchedulesChanged?.();
    await this.deps.activity.record({
      source: 'backup',
      event_type: 'backup_job_created',
      msg: msg('backup.job_created', { name: job.name, schedule: job.schedule, target: job.target }),
      details: { id: job.id },
      user_id: actor ?? null,
    });
    return this.view(job);
  }

  /**
   * An S3 endpoint must pass the request-forgery guard (util/outbound.ts): 400 fields["s3.endpoint"]
   * "not allowed" for loopback, private ranges and this server, unless the operator named backup_s3 in
   * GATEHOUSE_OUTBOUND_ALLOW_PRIVATE (a MinIO on the LAN). Checked again at every connection of a run.
   */
  private async checkEndpoint(endpoint: string | null | undefined): Promise<void> {
    if (!endpoint) return;
    try {
      await resolveAllowed(new URL(endpoint).hostname, this.deps.outbound('backup_s3'));
    } catch (err) {
      if (err instanceof NotAllowed) throw unprocessable(msg('backup.s3_not_allowed'), { 's3.endpoint': msg('field.not_allowed') });
      if (err instanceof FetchFailed) throw validation(msg('backup.s3_does_not_resolve'), { 's3.endpoint': msg('field.does_not_resolve') });
      throw err;
    }
  }

  private s3Columns(target: 'local' | 's3', s3: JobCreate['s3'] | undefined, old: BackupJobRow | null): Partial<BackupJobRow> {
    if (target !== 's3') return { s3_bucket: null, s3_prefix: null, s3_region: null, s3_endpoint: null, s3_access_key_id: null, s3_secret_enc: null };
    const secret = s3?.secret_access_key ? this.deps.crypto.seal(s3.secret_access_key) : (old?.s3_secret_enc ?? null);
    if (!secret) throw unprocessable(msg('backup.s3_secret_needed'), { 's3.secret_access_key': msg('field.required') });
    return {
      s3_bucket: s3?.bucket ?? old?.s3_bucket ?? null,
      s3_prefix: s3?.prefix ?? old?.s3_prefix ?? '',
      s3_region: s3?.region ?? old?.s3_region ?? null,
      s3_endpoint: s3?.endpoint ?? old?.s3_endpoint ?? null,
      s3_access_key_id: s3?.access_key_id ?? old?.s3_access_key_id ?? null,
      s3_secret_enc: secret,
    };
  }

  async updateJob(id: number, input: JobUpdate, actor?: number): Promise<JobView> {
    const old = await this.row(id);
    if (input.name !== undefined) await this.nameTaken(input.name, id);
    const target = input.target ?? old.target;
    if (target === 's3' && old.target !== 's3' && !input.s3) throw unprocessable(msg('backup.s3_needed'), { s3: msg('backup.field.s3_needed') });
    const s3 = target === 's3' && old.target === 's3' && input.s3 ? { ...this.viewS3(old), ...input.s3 } : input.s3;
    if (target === 's3' && input.s3?.endpoint) await this.checkEndpoint(input.s3.endpoint);
    const patch: Partial<BackupJobRow> = {
      ...(input.name !== undefined ? { name: input.name } : {}),
      ...(input.enabled !== undefined ? { enabled: input.enabled } : {}),
      ...(input.schedule !== undefined ? { schedule: input.schedule } : {}),
      ...(input.keep !== undefined ? { keep: input.keep } : {}),
      target,
      ...(input.s3 !== undefined || input.target !== undefined ? this.s3Columns(target, s3 as JobCreate['s3'], old) : {}),
      ...(input.passphrase ? { passphrase_enc: this.deps.crypto.seal(input.passphrase) } : {}),
      updated_at: this.deps.clock(),
    };
    await this.models.BackupJob.update(patch, { where: { id } });
    const job = await this.row(id);
    this.schedule(job);
    this.onSchedulesChanged?.();
    await this.deps.activity.record({
      source: 'backup',
      event_type: 'backup_job_updated',
      msg: msg('backup.job_updated', { name: job.name }),
      details: { id, fields: Object.keys(input) },
      user_id: actor ?? null,
    });
    return this.view(job);
  }

  async removeJob(id: number, actor?: number): Promise<void> {
    const job = await this.row(id);
    await this.models.BackupJob.destroy({ where: { id } });
    this.crons.get(id)?.cancel();
    this.crons.delete(id);
    this.onSchedulesChanged?.();
    await this.deps.activity.record({
      source: 'backup',
      event_type: 'backup_job_deleted',
      msg: msg('backup.job_deleted', { name: job.name }),
      details: { id },
      user_id: actor ?? null,
    });
  }

  /** Runs a job at once; resolves with its view (last_run shows the outcome, ok or failed). */
  async runJob(id: number): Promise<JobView> {
    await this.execute(await this.row(id));
    return this.getJob(id);
  }

  private running = new Map<number, Promise<void>>();

  /** One run: document -> target -> prune; the outcome on the row and as an event. Never throws. */
  private execute(job: BackupJobRow): Promise<void> {
    const busy = this.running.get(job.id);
    if (busy) return busy;
    const p = (async () => {
      const t0 = this.deps.clock();
      try {
        const doc = await makeDocument({
          db: this.deps.db,
          master: this.deps.crypto,
          branding: this.c.routeAuth.branding,
          passphrase: this.deps.crypto.open(job.passphrase_enc),
          now: t0,
        });
        const body = Buffer.from(JSON.stringify(doc));
        const target = this.targetOf(job);
        const where = await target.put(backupFileName(t0), body);
        const pruned = await target.prune(job.keep);
        const duration = this.deps.clock() - t0;
        await this.models.BackupJob.update(
          { last_run_at: t0, last_status: 'ok', last_error: null, last_file: where, last_bytes: body.length, last_duration_ms: duration },
          { where: { id: job.id } },
        );
        if (pruned.length) this.deps.log.info(`backup job ${job.name}: removed ${pruned.length} old backup(s)`, { pruned });
        await this.deps.events.emit({ type: 'backup_completed', job_id: job.id, target: job.target, file: where, bytes: body.length, duration_ms: duration });
      } catch (err) {
        // a target the guard refused is "not allowed" and nothing more (whatever the S3 client made of it)
        const error = isNotAllowed(err) ? NOT_ALLOWED : String((err as Error)?.message ?? err).slice(0, 2000);
        await this.models.BackupJob.update(
          { last_run_at: t0, last_status: 'failed', last_error: error, last_file: null, last_bytes: null, last_duration_ms: this.deps.clock() - t0 },
          { where: { id: job.id } },
        ).catch(() => undefined);
        await this.deps.events.emit({ type: 'backup_failed', job_id: job.id, target: job.target, error });
      }
    })().finally(() => this.running.delete(job.id));
    this.running.set(job.id, p);
    return p;
  }

  private targetOf(job: BackupJobRow): Target {
    if (job.target === 'local') return localTarget(path.join(this.deps.config.dataDir, 'backups', `job-${job.id}`));
    return s3Target(
      {
        bucket: job.s3_bucket ?? '',
        prefix: job.s3_prefix ?? '',
        region: job.s3_region ?? '',
        endpoint: job.s3_endpoint,
        accessKeyId: job.s3_access_key_id ?? '',
        secretAccessKey: job.s3_secret_enc ? this.deps.crypto.open(job.s3_secret_enc) : '',
      },
      this.deps.outbound('backup_s3'),
    );
  }

  // ------------------------------------------------------------------ scheduling

  private schedule(job: BackupJobRow): void {
    this.crons.get(job.id)?.cancel();
    this.crons.delete(job.id);
    if (!this.started || !job.enabled) return;
    const handle = this.deps.scheduler.cron(
      `backup job ${job.id}`,
      cronOf(job.schedule),
      async () => {
        const due = lastDue(cronOf(job.schedule), this.deps.clock());
        if (due !== null) await this.runDue(job.id, due);
      },
      { scope: 'singleton' },
    );
    this.crons.set(job.id, handle);
  }

  /**
   * The scheduled run of a job for one due time, once: the run claims the due time on the job's row
   * (last_run_at moved to now where it is still before `due`); a claim that finds it taken (another
   * node, a run made already) makes no run. Resolves whether this call ran the job.
   */
  private async runDue(id: number, due: number): Promise<boolean> {
    const now = this.deps.clock();
    const [claimed] = await this.models.BackupJob.update(
      { last_run_at: now },
      { where: { id, enabled: true, [Op.or]: [{ last_run_at: null }, { last_run_at: { [Op.lt]: due } }] } },
    );
    if (!claimed) return false;
    const fresh = (await this.models.BackupJob.findByPk(id, { raw: true })) as BackupJobRow | null;
    if (!fresh) return false;
    await this.execute(fresh);
    return true;
  }

  /**
   * A node that has just taken the lead: each enabled job whose last due time passed without a run
   * (while no node led), at most MISSED_RUN_GRACE_MS ago and after the job was created, runs now,
   * once. Resolves with the ids of the jobs run.
   */
  async catchUpMissed(): Promise<number[]> {
    if (!this.started) return [];
    const now = this.deps.clock();
    const ran: number[] = [];
    for (const r of await findRows(this.models.BackupJob, { where: { enabled: true } })) {
      const due = lastDue(cronOf(r.schedule), now);
      if (due === null || now - due > MISSED_RUN_GRACE_MS || due < Number(r.created_at)) continue;
      if (r.last_run_at !== null && Number(r.last_run_at) >= due) continue;
      this.deps.log.info(`backup job ${r.name}: the run due at ${new Date(due).toISOString()} was missed while no node led; running it now`);
      if (await this.runDue(r.id, due)) ran.push(r.id);
    }
    return ran;
  }

  /** Every job's schedule read again from the rows (at start, and when a job was written on another node). */
  async reloadSchedules(): Promise<void> {
    for (const h of this.crons.values()) h.cancel();
    this.crons.clear();
    if (!this.started) return;
    for (const r of await findRows(this.models.BackupJob)) this.schedule(r);
  }

  async start(): Promise<void> {
    this.started = true;
    await this.reloadSchedules();
  }

  async stop(): Promise<void> {
    this.started = false;
    for (const h of this.crons.values()) h.cancel();
    this.crons.clear();
    await Promise.all([...this.running.values()]);
  }

  // ------------------------------------------------------------------ views

  private viewS3(r: BackupJobRow) {
    return { bucket: r.s3_bucket ?? '', prefix: r.s3_prefix ?? '', region: r.s3_region, endpoint: r.s3_endpoint, access_key_id: r.s3_access_key_id ?? '' };
  }

  private view(r: BackupJobRow): JobView {
    const next = this.crons.get(Number(r.id))?.next() ?? null;
    const iso = (v: unknown) => new Date(Number(v)).toISOString();
    return {
      id: Number(r.id),
      name: r.name,
      enabled: r.enabled === true || (r.enabled as unknown) === 1,
      schedule: r.schedule,
      keep: Number(r.keep),
      target: r.target,
      s3: r.target === 's3' ? { ...this.viewS3(r), secret_set: Boolean(r.s3_secret_enc) } : null,
      next_run_at: next === null ? null : new Date(next).toISOString(),
      last_run:
        r.last_run_at === null || r.last_run_at === undefined
          ? null
          : {
              at: iso(r.last_run_at),
              status: r.last_status === 'ok' ? 'ok' : 'failed',
              error: r.last_error ?? null,
              error_code: backupErrorCode(r.last_error ?? null),
              file: r.last_file ?? null,
              bytes: r.last_bytes === null ? null : Number(r.last_bytes),
              duration_ms: r.last_duration_ms === null ? null : Number(r.last_duration_ms),
            },
      created_at: iso(r.created_at),
      updated_at: iso(r.updated_at),
    };
  }
}
