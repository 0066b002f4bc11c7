// LicenceService (ctx.licence, also ctx.features): the stored licence key, what it grants now, and
// its life cycle. No Koa here. docs/guides/licence.md documents the behaviour and the refresh protocol.
//
// - activate(key): verified offline (document.ts: signature by a trusted key, document, expiry);
//   a refused key throws a 400 with the reason and stores nothing.
// - refresh(): with GATEHOUSE_LICENCE_URL, POSTs {licence_id, key, server_version} there and takes the
//   key it answers (200 {key}) after the same verification; 403/404/410 = revoked (community from
//   then on). Anything else (down, timeout, 5xx, a bad answer) keeps the last good state: the licence
//   stays in force for the grace period (GATEHOUSE_LICENCE_GRACE_DAYS) counted from the last
//   successful check; after it, the community fallback applies until a refresh succeeds again.
//   Without a URL, refresh re-verifies the stored key offline.
// - remove(): back to the community fallback (features.ts COMMUNITY).
// A licence in force grants the community features plus its own (features.ts grantedFeatures), with
// its limits.
// - check(): the scheduled check (licence/feature.ts, every minute): notices expiry and the end of
//   the grace period.
// Every change of what the server is entitled to emits licence_changed (events.ts) with the reason;
// the proxy re-renders and the DNS hosts file is rewritten on it (app-context.ts).
//
// The state lives in one settings row ('licence'); status and entitlements are derived from it and
// the clock, and cached for isEnabled(), which gated code paths call synchronously.
import { msg, refOf, type Msg } from '@gatehouse/common/messages/index.js';
import { licenceRefreshError } from '@gatehouse/common/messages/read-back.js';
import type crypto from 'node:crypto';
import type { Config } from '../config.js';
import type { EventBus } from '../events.js';
import type { SettingsStore } from '../settings/store.js';
import type { Clock } from '../util/clock.js';
import type { Logger } from '../util/logger.js';
import { AppError, conflict } from '../util/errors.js';
import { Mutex } from '../util/mutex.js';
import { APP_VERSION } from '../version.js';
import { LicenceKeyError, publicKeyFrom, verifyLicence, keyId, type LicenceDocument, type LicenceLimits, type VerifiedLicence } from './document.js';
import { COMMUNITY, grantedFeatures, isFeatureEnabled, type Entitlements, type FeatureGate, type LicensedFeature } from './features.js';
import { VENDOR_PUBLIC_KEY_PEM } from './public-key.js';
import type { LicenceStatus, LicenceView, RefreshOutcome } from './schema.js';

export const SETTING_KEY = 'licence';
/** How long a refresh request may take. */
export const REFRESH_TIMEOUT_MS = 10_000;

/** The settings row. */
export interface StoredLicence {
  key: string;
  activated_at: number;
  activated_by: number | null;
  /** last refresh attempt (epoch ms) */
  last_refresh_at: number | null;
  /** last time the licence was confirmed: by the licence service, or the activation */
  last_ok_at: number;
  /** the last refresh attempt's error; null when it succeeded */
  last_refresh_error: string | null;
  /** the licence service answered that this licence is no longer valid */
  revoked: boolean;
}

export type ChangeReason = 'activated' | 'refreshed' | 'expired' | 'removed' | 'grace_ended' | 'revoked';

export interface LicenceServiceOptions {
  config: Config;
  settings: SettingsStore;
  clock: Clock;
  log: Logger;
  events: EventBus;
  /** fetch for the licence service (tests may pass another; default global fetch) */
  fetch?: typeof fetch;
  /**
   * Whether this node announces what the scheduled check finds (expiry, the grace period's end):
   * in a cluster every node checks its own view, and only the leader emits licence_changed, once
   * (default: always, one node). A node that does not announce calls onQuietChange instead.
   */
  announces?: () => boolean;
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
const DAY = 24 * 3600 * 1000;

function limitsOf(doc: LicenceDocument): LicenceLimits {
  return { max_peers: doc.limits.max_peers ?? null, max_routes: doc.limits.max_routes ?? null };
}

export class LicenceService implements FeatureGate {
  readonly trusted: crypto.KeyObject[];
  private stored: StoredLicence | null = null;
  private verified: VerifiedLicence | null = null;
  private current: { status: LicenceStatus; entitlements: Entitlements } = { status: 'community', entitlements: COMMUNITY };
  private mutex = new Mutex();
  private readonly fetchFn: typeof fetch;

  constructor(private o: LicenceServiceOptions) {
    this.trusted = [publicKeyFrom(VENDOR_PUBLIC_KEY_PEM)];
    if (o.config.licence.publicKey) this.trusted.push(publicKeyFrom(o.config.licence.publicKey));
    this.fetchFn = o.fetch ?? fetch;
  }

  // ------------------------------------------------------------------ gate

  isEnabled(feature: LicensedFeature): boolean {
    return isFeatureEnabled(this.current.entitlements, feature);
  }
  /** What applies now. */
  entitlements(): Entitlements {
    return this.current.entitlements;
  }
  limits(): LicenceLimits {
    return this.current.entitlements.limits;
  }
  status(): LicenceStatus {
    return this.current.status;
  }

  // ------------------------------------------------------------------ state

  /** Reads the stored licence (start); with none stored, activates GATEHOUSE_LICENCE_KEY when set. */
  async load(): Promise<void> {
    const s = await this.o.settings.get<StoredLicence | null>(SETTING_KEY, null);
    this.setStored(s && typeof s.key === 'string' ? s : null);
    this.recompute();
    const envKey = this.o.config.licence.key;
    if (!this.stored && envKey) {
      try {
        await this.activate(envKey, null);
      } catch (err) {
        this.o.log.error(`GATEHOUSE_LICENCE_KEY was not activated: ${(err as Error).message}`);
      }
    }
  }

  private setStored(s: StoredLicence | null): void {
    this.stored = s;
    this.verified = null;
    if (!s) return;
    try {
      this.verified = verifyLicence(s.key, this.trusted, this.o.clock(), { ignoreExpiry: true });
    } catch (err) {
      this.o.log.warn(`The stored licence does not verify: ${(err as Error).message}`);
    }
  }

  private graceMs(): number {
    return this.o.config.licence.graceDays * DAY;
  }

  private derive(now: number): { status: LicenceStatus; entitlements: Entitlements } {
    const s = this.stored;
    if (!s) return { status: 'community', entitlements: COMMUNITY };
    const v = this.verified;
    if (!v) return { status: 'invalid', entitlements: COMMUNITY };
    if (s.revoked) return { status: 'revoked', entitlements: COMMUNITY };
    if (v.expiresAt !== null && v.expiresAt <= now) return { status: 'expired', entitlements: COMMUNITY };
    const entitlements: Entitlements = { plan: v.doc.plan, features: grantedFeatures(v.doc.features), limits: limitsOf(v.doc) };
    if (this.o.config.licence.url && s.last_refresh_error !== null) {
      if (now > s.last_ok_at + this.graceMs()) return { status: 'grace_ended', entitlements: COMMUNITY };
      return { status: 'grace', entitlements };
    }
    return { status: 'active', entitlements };
  }

  /** Recomputes what applies; true when the entitlements changed. */
  private recompute(): boolean {
    const before = this.current.entitlements;
    this.current = this.derive(this.o.clock());
    const after = this.current.entitlements;
    return before.plan !== after.plan || before.features.join() !== after.features.join() || JSON.stringify(before.limits) !== JSON.stringify(after.limits);
  }

  private async save(s: StoredLicence | null): Promise<void> {
    if (s) await this.o.settings.set(SETTING_KEY, s);
    else await this.o.settings.delete(SETTING_KEY);
    this.setStored(s);
  }

  private async emit(reason: ChangeReason, actor: number | null): Promise<void> {
    const e = this.current.entitlements;
    await this.o.events.emit({
      type: 'licence_changed',
      reason,
      plan: e.plan,
      features: [...e.features],
      expires_at: this.current.status === 'community' ? null : (this.verified?.expiresAt ?? null),
      actor,
    });
  }

  view(): LicenceView {
    const e = this.current.entitlements;
    const s = this.stored;
    const v = this.verified;
    const cfg = this.o.config.licence;
    const failing = !!(s && v && cfg.url && s.last_refresh_error !== null);
    return {
      status: this.current.status,
      plan: e.plan,
      features: [...e.features],
      limits: { ...e.limits },
      licence:
        s && v
          ? {
              id: v.doc.id,
              customer: v.doc.customer,
              plan: v.doc.plan,
              features: [...v.doc.features],
              limits: limitsOf(v.doc),
              issued_at: new Date(v.issuedAt).toISOString(),
              expires_at: iso(v.expiresAt),
              key_id: v.kid,
              activated_at: new Date(s.activated_at).toISOString(),
              last_refresh_at: iso(s.last_refresh_at),
              last_ok_at: new Date(s.last_ok_at).toISOString(),
              last_refresh_error: s.last_refresh_error,
              last_refresh_error_code: licenceRefreshError(s.last_refresh_error),
            }
          : null,
      grace: failing
        ? { since: new Date(s!.last_ok_at).toISOString(), ends_at: new Date(s!.last_ok_at + this.graceMs()).toISOString(), days: cfg.graceDays }
        : null,
      refresh: { url_configured: !!cfg.url, every_hours: cfg.refreshHours, grace_days: cfg.graceDays },
      community: { plan: COMMUNITY.plan, features: [...COMMUNITY.features], limits: { ...COMMUNITY.limits } },
    };
  }

  /** The trusted key ids (the vendor's first). */
  trustedKeyIds(): string[] {
    return this.trusted.map(keyId);
  }

  // ------------------------------------------------------------------ operations

  /** Verifies and stores a key; a refused key: 400 {fields: {key}, reason}, nothing stored. */
  activate(key: string, actor: number | null): Promise<LicenceView> {
    return this.mutex.run(async () => {
      const now = this.o.clock();
      let v: VerifiedLicence;
      try {
        v = verifyLicence(key, this.trusted, now);
      } catch (err) {
        if (err instanceof LicenceKeyError)
          throw new AppError(
            err.reason === 'malformed' ? 'validation' : 'unprocessable',
            msg('licence.key_refused', { reason: refOf(err.msg) }),
            { key: err.msg },
            { reason: err.reason },
          );
        throw err;
      }
      await this.save({
        key: key.replace(/\s+/g, ''),
        activated_at: now,
        activated_by: actor,
        last_refresh_at: null,
        last_ok_at: now,
        last_refresh_error: null,
        revoked: false,
      });
      this.recompute();
      this.o.log.info(`Licence ${v.doc.id} activated (plan ${v.doc.plan}, customer ${v.doc.customer})`);
      await this.emit('activated', actor);
      return this.view();
    });
  }

  /** Back to the community fallback; removing nothing is not an error. */
  remove(actor: number | null): Promise<{ removed: boolean; license: LicenceView }> {
    return this.mutex.run(async () => {
      if (!this.stored) return { removed: false, license: this.view() };
      await this.save(null);
      this.recompute();
      await this.emit('removed', actor);
      return { removed: true, license: this.view() };
    });
  }

  /** Revalidation: against the licence service when configured, otherwise offline. */
  refresh(actor: number | null): Promise<{ refresh: RefreshOutcome; license: LicenceView }> {
    return this.mutex.run(async () => {
      const s = this.stored;
      if (!s) throw conflict(msg('licence.none_stored'));
      const url = this.o.config.licence.url;
      if (!url) {
        this.setStored(s);
        const changed = this.recompute();
        if (changed) await this.emit(this.reasonOfLoss('refreshed'), actor);
        const ok = this.verified !== null;
        const error = ok ? null : msg('licence.service.offline_invalid');
        return {
          refresh: { checked: 'offline' as const, ok, error: error?.text ?? null, error_code: error ? refOf(error) : null },
          license: this.view(),
        };
      }
      const now = this.o.clock();
      const answer = await this.ask(url, s);
      if (answer.kind === 'key') {
        try {
          verifyLicence(answer.key, this.trusted, now, { ignoreExpiry: true });
        } catch (err) {
          return this.refreshFailed(s, now, msg('licence.service.bad_key', { detail: (err as Error).message }), actor);
        }
        await this.save({ ...s, key: answer.key.replace(/\s+/g, ''), last_refresh_at: now, last_ok_at: now, last_refresh_error: null, revoked: false });
        const statusBefore = this.current.status;
        const changed = this.recompute();
        if (changed || statusBefore !== this.current.status || answer.key !== s.key) await this.emit(this.reasonOfLoss('refreshed'), actor);
        return { refresh: { checked: 'service' as const, ok: true, error: null, error_code: null }, license: this.view() };
      }
      if (answer.kind === 'revoked') {
        await this.save({ ...s, last_refresh_at: now, last_refresh_error: msg('licence.service.revoked', { detail: answer.error }).text, revoked: true });
        if (this.recompute()) await this.emit('revoked', actor);
        const refused = msg('licence.service.refused', { detail: answer.error });
        return { refresh: { checked: 'service' as const, ok: false, error: refused.text, error_code: refOf(refused) }, license: this.view() };
      }
      return this.refreshFailed(s, now, answer.error, actor);
    });
  }

  /** A refresh that could not reach (or use) the licence service: keep the last good state within the grace period. */
  private async refreshFailed(s: StoredLicence, now: number, error: Msg, actor: number | null): Promise<{ refresh: RefreshOutcome; license: LicenceView }> {
    this.o.log.warn(`Licence refresh failed: ${error.text}`);
    await this.save({ ...s, last_refresh_at: now, last_refresh_error: error.text });
    if (this.recompute()) await this.emit(this.reasonOfLoss('refreshed'), actor);
    return { refresh: { checked: 'service', ok: false, error: error.text, error_code: refOf(error) }, license: this.view() };
  }

  /** The reason to name when entitlements changed: why they were lost, or `gained` when they came back. */
  private reasonOfLoss(gained: ChangeReason): ChangeReason {
    switch (this.current.status) {
      case 'expired':
        return 'expired';
      case 'grace_ended':
        return 'grace_ended';
      case 'revoked':
        return 'revoked';
      case 'invalid':
        return 'removed';
      default:
        return gained;
    }
  }

  private async ask(
    url: string,
    s: StoredLicence,
  ): Promise<{ kind: 'key'; key: string } | { kind: 'revoked'; error: string } | { kind: 'unreachable'; error: Msg }> {
    let res: Response;
    try {
      res = await this.fetchFn(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json', 'user-agent': `gatehouse/${APP_VERSION}` },
        body: JSON.stringify({ licence_id: this.verified?.doc.id ?? null, key: s.key, server_version: APP_VERSION }),
        signal: AbortSignal.timeout(REFRESH_TIMEOUT_MS),
        redirect: 'error',
      });
    } catch (err) {
      const e = err as Error & { cause?: { code?: string; message?: string } };
      return { kind: 'unreachable', error: msg('licence.service.unreachable', { detail: e.cause?.code ?? e.cause?.message ?? e.message }) };
    }
    const text = await res.text().catch(() => '');
    let body: { key?: unknown; error?: unknown } | null = null;
    try {
      body = JSON.parse(text);
    } catch {
      /* not JSON */
    }
    if (res.status === 200 && body && typeof body.key === 'string') return { kind: 'key', key: body.key };
    if (res.status === 403 || res.status === 404 || res.status === 410)
      return { kind: 'revoked', error: typeof body?.error === 'string' ? body.error.slice(0, 300) : `HTTP ${res.status}` };
    return {
      kind: 'unreachable',
      error:
        typeof body?.error === 'string'
          ? msg('licence.service.status_detail', { status: res.status, detail: body.error.slice(0, 300) })
          : res.status === 200
            ? msg('licence.service.no_key')
            : msg('licence.service.status', { status: res.status }),
    };
  }

  /** The scheduled check: expiry and the end of the grace period (emits licence_changed once when what applies changes). */
  check(): Promise<void> {
    return this.mutex.run(async () => {
      if (!this.recompute()) return;
      if (this.o.announces?.() ?? true) await this.emit(this.reasonOfLoss('refreshed'), null);
      else await this.onQuietChange?.();
    });
  }

  /** What a node that does not announce does when the scheduled check changes what applies here (re-render what the licence gates). */
  onQuietChange: (() => Promise<void>) | null = null;

  /** The scheduled refresh (only with a licence service and a stored licence). */
  async scheduledRefresh(): Promise<void> {
    if (!this.o.config.licence.url || !this.stored) return;
    await this.refresh(null);
  }
}
