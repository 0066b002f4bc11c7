// API tokens: `gth_<43 base64url chars>`, stored only as SHA-256. Verification is cached in memory
// (keyed by hash) and the cache is dropped on every token write, so revocation is immediate.
import { msg } from '@gatehouse/common/messages/index.js';
import crypto from 'node:crypto';
import { Op } from 'sequelize';
import type { ApiTokenRow, Models } from '../db/models.js';
import type { Clock } from '../util/clock.js';
import { AppError, notFound } from '../util/errors.js';
import type { ActivityLog } from '../logs/activity.js';
import type { EventBus } from '../events.js';
import { isoOrNull as iso } from '../util/dates.js';
import { sha256 } from '../util/crypto.js';
import type { TokenInput, TokenPatch, TokenView } from './schema.js';
import type { VerifiedToken } from '../http/platform.js';
import { findRows, findRowByPk } from '../db/define.js';

export const TOKEN_PREFIX = 'gth';

export function generateToken(prefix = TOKEN_PREFIX): string {
  return `${prefix}_${crypto.randomBytes(32).toString('base64url')}`;
}

export class TokensService {
  private cache = new Map<string, ApiTokenRow | null>();
  constructor(
    private models: Models,
    private clock: Clock,
    private activity: ActivityLog,
    private events: EventBus,
  ) {}

  private view(r: ApiTokenRow): TokenView {
    return {
      id: r.id,
      name: r.name,
      token_hint: r.token_hint,
      scopes: JSON.parse(r.scopes),
      expires_at: iso(r.expires_at),
      expired: r.expires_at !== null && Number(r.expires_at) <= this.clock(),
      user_id: r.user_id,
      peer_id: r.peer_id,
      fingerprint_bound: r.fingerprint !== null,
      fingerprint_bound_at: iso(r.fingerprint_bound_at),
      last_used_at: iso(r.last_used_at),
      created_at: iso(r.created_at)!,
      split_tunnel: r.split_tunnel ? (JSON.parse(r.split_tunnel) as string[]) : null,
    };
  }

  async list(): Promise<TokenView[]> {
    const rows = await findRows(this.models.ApiToken, { order: [['id', 'ASC']] });
    return rows.map((r) => this.view(r));
  }

  async create(input: TokenInput, actor?: number): Promise<{ token: string; record: TokenView }> {
    const token = generateToken();
    const row = await this.models.ApiToken.create({
      name: input.name,
      token_hash: sha256(token),
      token_hint: token.slice(0, 8),
      scopes: JSON.stringify([...new Set(input.scopes)]),
      expires_at: input.expires_at ?? null,
      user_id: input.user_id ?? null,
      peer_id: input.peer_id ?? null,
      fingerprint: null,
      fingerprint_bound_at: null,
      last_used_at: null,
      created_by: actor ?? null,
      created_at: this.clock(),
    });
    this.cache.clear();
    const record = this.view(row.get({ plain: true }) as ApiTokenRow);
    await this.events.emit({ type: 'token_created', token_id: record.id, name: input.name, scopes: record.scopes, actor: actor ?? null });
    return { token, record };
  }

  /** Drop the verification cache (a backup restore rewrote the table). */
  invalidate(): void {
    this.cache.clear();
  }

  async remove(id: number, actor?: number): Promise<void> {
    const row = (await this.models.ApiToken.findByPk(id, { raw: true })) as ApiTokenRow | null;
    if (!row) throw notFound(msg('resource.not_found', { what: 'Token' }));
    await this.models.ApiToken.destroy({ where: { id } });
    this.cache.clear();
    await this.events.emit({ type: 'token_revoked', token_id: id, name: row.name, actor: actor ?? null });
  }

  /** PATCH /tokens/:id: the name and the desktop-client split-tunnel override (null = the server default). */
  async update(id: number, patch: TokenPatch, actor?: number): Promise<TokenView> {
    const row = (await this.models.ApiToken.findByPk(id, { raw: true })) as ApiTokenRow | null;
    if (!row) throw notFound(msg('resource.not_found', { what: 'Token' }));
    const values: Partial<ApiTokenRow> = {};
    if (patch.name !== undefined && patch.name !== row.name) values.name = patch.name;
    if (patch.split_tunnel !== undefined) {
      const v = patch.split_tunnel === null ? null : JSON.stringify([...new Set(patch.split_tunnel)]);
      if (v !== row.split_tunnel) values.split_tunnel = v;
    }
    const fields = Object.keys(values);
    if (!fields.length) return this.view(row);
    await this.models.ApiToken.update(values, { where: { id } });
    this.cache.clear();
    const after = await findRowByPk(this.models.ApiToken, id);
    if (!after) throw notFound(msg('resource.not_found', { what: 'Token' }));
    await this.events.emit({ type: 'token_updated', token_id: id, name: after.name, fields, actor: actor ?? null });
    return this.view(after);
  }

  async resetFingerprint(id: number, actor?: number): Promise<TokenView> {
    const [n] = await this.models.ApiToken.update({ fingerprint: null, fingerprint_bound_at: null }, { where: { id } });
    if (!n) throw notFound(msg('resource.not_found', { what: 'Token' }));
    this.cache.clear();
    const row = await findRowByPk(this.models.ApiToken, id);
    if (!row) throw notFound(msg('resource.not_found', { what: 'Token' }));
    await this.events.emit({ type: 'token_fingerprint_reset', token_id: id, name: row.name, actor: actor ?? null });
    return this.view(row);
  }

  /**
   * Checks a presented token. Returns null when unknown, revoked or expired. With a fingerprint,
   * binds an unbound token on first use; a bound token with another (or no) fingerprint is refused.
   */
  async verify(plain: string, fingerprint: string | undefined): Promise<VerifiedToken | null> {
    if (!plain.startsWith(`${TOKEN_PREFIX}_`)) return null;
    const hash = sha256(plain);
    let row = this.cache.get(hash);
    if (row === undefined) {
      row = (await this.models.ApiToken.findOne({ where: { token_hash: hash }, raw: true })) as ApiTokenRow | null;
      this.cache.set(hash, row);
    }
    if (!row) return null;
    const now = this.clock();
    if (row.expires_at !== null && Number(row.expires_at) <= now) return null;
    const fp = fingerprint ? sha256(fingerprint.trim()) : undefined;
    if (row.fingerprint) {
      if (!fp || !crypto.timingSafeEqual(Buffer.from(fp), Buffer.from(row.fingerprint))) {
        throw new AppError('forbidden', msg('auth.token_other_machine'));
      }
    } else if (fp) {
      // Bind on first use; the conditional update makes a race between two machines safe.
      const [n] = await this.models.ApiToken.update({ fingerprint: fp, fingerprint_bound_at: now }, { where: { id: row.id, fingerprint: { [Op.is]: null } } });
      this.cache.delete(hash);
      if (!n) return this.verify(plain, fingerprint);
      await this.activity.record({
        source: 'tokens',
        event_type: 'token_fingerprint_bound',
        msg: msg('token.bound', { name: row.name }),
        details: { id: row.id },
      });
    }
    // last_used_at is written at most once a minute per token to keep the hot path cheap.
    if (!row.last_used_at || now - Number(row.last_used_at) > 60_000) {
      row.last_used_at = now;
      void this.models.ApiToken.update({ last_used_at: now }, { where: { id: row.id } }).catch(() => undefined);
    }
    return { id: row.id, scopes: JSON.parse(row.scopes), user_id: row.user_id, peer_id: row.peer_id, created_by: row.created_by };
  }
}
