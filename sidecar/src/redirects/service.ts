// Redirect hosts and the default site. A redirect host is a domain that answers every request with a
// redirect (proxy/fragments/redirects.ts renders it); the default site is what a request for a host
// name nothing serves gets (the host maps' fallback). Every write goes through ctx.proxy.transact(),
// so it is saved and live in Caddy, or neither. A domain belongs to a route or to a redirect host,
// never both: this service refuses a route's domain, routes/service.ts a redirect host's.
import { msg } from '@gatehouse/common/messages/index.js';
import { Op, UniqueConstraintError, type Transaction } from 'sequelize';
import type { Deps } from '../deps.js';
import type { ProxyService } from '../proxy/service.js';
import { asBool, findRow, findRowByPk, findRows } from '../db/define.js';
import { AppError, conflict, invalidFields, notFound } from '../util/errors.js';
import type { RedirectHostRow } from './model.js';
import { DEFAULT_SITE_SETTING, parseDefaultSite } from './default-site.js';
import {
  type DefaultSite,
  type DefaultSiteBody,
  type RedirectHostInput,
  type RedirectHostPatch,
  type RedirectHostView,
  type RedirectStatus,
} from './schema.js';

const iso = (v: unknown) => new Date(Number(v)).toISOString();

export function redirectView(r: RedirectHostRow): RedirectHostView {
  return {
    id: Number(r.id),
    domain: r.domain,
    target_url: r.target_url,
    preserve_path: asBool(r.preserve_path),
    status_code: Number(r.status_code),
    enabled: asBool(r.enabled),
    description: r.description ?? null,
    created_at: iso(r.created_at),
    updated_at: iso(r.updated_at),
  };
}

/** Whether a host name is this domain, or one name under it when the domain is a wildcard. */
export function coveredBy(host: string, domain: string): boolean {
  const h = host.toLowerCase().replace(/\.$/, '');
  if (domain.startsWith('*.')) {
    const rest = domain.slice(2);
    return h.endsWith(`.${rest}`) && !h.slice(0, -rest.length - 1).includes('.');
  }
  return h === domain;
}

export class RedirectsService {
  constructor(
    private deps: Deps,
    private proxy: ProxyService,
  ) {}

  private get RedirectHost() {
    return this.deps.db.models.RedirectHost;
  }

  async list(): Promise<RedirectHostView[]> {
    const rows = await findRows(this.RedirectHost, { order: [['domain', 'ASC']] });
    return rows.map(redirectView);
  }

  private async row(id: number, transaction?: Transaction): Promise<RedirectHostRow> {
    const r = await findRowByPk(this.RedirectHost, id, { transaction });
    if (!r) throw notFound(msg('redirect.not_found', { id }));
    return r;
  }

  async get(id: number): Promise<RedirectHostView> {
    return redirectView(await this.row(id));
  }

  /** 422 for a redirect that cannot work; 409 when the domain is the admin UI's, a route's or another redirect host's. */
  private async check(r: Omit<RedirectHostRow, 'id' | 'created_at' | 'updated_at'>, selfId: number | null, t: Transaction): Promise<void> {
    const f: Record<string, ReturnType<typeof msg>> = {};
    const target = new URL(r.target_url);
    if (r.preserve_path && (target.search || target.hash)) f.target_url = msg('redirect.field.query_with_preserve_path');
    if (coveredBy(target.hostname, r.domain)) f.target_url = msg('redirect.field.loops', { domain: r.domain });
    if (r.domain.startsWith('*.') && this.deps.publicHost.tls().value === 'acme') f.domain = msg('route.field.wildcard_needs_internal_tls');
    if (Object.keys(f).length) throw invalidFields(f);
    const admin = this.deps.config.adminDomain?.toLowerCase();
    if (admin && r.domain === admin) throw conflict(msg('route.domain_is_admin', { domain: r.domain }), { field: 'domain' });
    const route = await findRow(this.deps.db.models.Route, { where: { domain: r.domain, route_type: 'http' }, attributes: ['id'], transaction: t });
    if (route) throw conflict(msg('route.domain_taken', { domain: r.domain, route_id: Number(route.id) }), { field: 'domain', route_id: Number(route.id) });
    const dup = await findRow(this.RedirectHost, {
      where: { domain: r.domain, ...(selfId === null ? {} : { id: { [Op.ne]: selfId } }) },
      attributes: ['id'],
      transaction: t,
    });
    if (dup) throw this.taken(r.domain, Number(dup.id));
  }

  private taken(domain: string, id: number): AppError {
    return conflict(msg('redirect.domain_taken', { domain, redirect_host_id: id }), { field: 'domain', redirect_host_id: id });
  }

  async create(input: RedirectHostInput, actor?: number): Promise<RedirectHostView> {
    const now = this.deps.clock();
    const row = {
      domain: input.domain,
      target_url: input.target_url,
      preserve_path: input.preserve_path ?? true,
      status_code: (input.status_code ?? 301) as RedirectStatus,
      enabled: input.enabled ?? true,
      description: input.description ?? null,
      created_at: now,
      updated_at: now,
    };
    const id = await this.write(async (t) => {
      await this.check(row, null, t);
      const created = await this.RedirectHost.create(row, { transaction: t });
      return Number(created.get('id'));
    }, row.domain);
    await this.deps.events.emit({ type: 'redirect_host_created', redirect_host_id: id, domain: row.domain, target_url: row.target_url, actor: actor ?? null });
    return this.get(id);
  }

  async update(id: number, input: RedirectHostPatch, actor?: number): Promise<RedirectHostView> {
    const fields: string[] = [];
    let domain = '';
    await this.write(async (t) => {
      const before = await this.row(id, t);
      const next = { ...before, preserve_path: asBool(before.preserve_path), enabled: asBool(before.enabled) };
      for (const k of ['domain', 'target_url', 'preserve_path', 'status_code', 'enabled', 'description'] as const) {
        const v = input[k];
        if (v === undefined || v === next[k]) continue;
        (next as Record<string, unknown>)[k] = v;
        fields.push(k);
      }
      domain = next.domain;
      if (!fields.length) return;
      await this.check(next, id, t);
      const patch = Object.fromEntries(fields.map((k) => [k, next[k as keyof typeof next]])) as Partial<RedirectHostRow>;
      await this.RedirectHost.update({ ...patch, updated_at: this.deps.clock() }, { where: { id }, transaction: t });
    }, input.domain ?? '');
    if (fields.length) await this.deps.events.emit({ type: 'redirect_host_updated', redirect_host_id: id, domain, fields, actor: actor ?? null });
    return this.get(id);
  }

  async remove(id: number, actor?: number): Promise<{ id: number; domain: string }> {
    const domain = await this.write(async (t) => {
      const before = await this.row(id, t);
      await this.RedirectHost.destroy({ where: { id }, transaction: t });
      return before.domain;
    }, '');
    await this.deps.events.emit({ type: 'redirect_host_deleted', redirect_host_id: id, domain, actor: actor ?? null });
    return { id, domain };
  }

  /** A write in the proxy's transaction: saved and live in Caddy, or neither (the whole rendering is compared). */
  private async write<T>(fn: (t: Transaction) => Promise<T>, domain: string): Promise<T> {
    try {
      return await this.proxy.transact(async (t, changes) => {
        changes.all();
        return fn(t);
      });
    } catch (err) {
      if (err instanceof UniqueConstraintError) {
        const other = await findRow(this.RedirectHost, { where: { domain }, attributes: ['id'] });
        throw this.taken(domain, Number(other?.id ?? 0));
      }
      throw err;
    }
  }

  // --- the default site ---

  async defaultSite(transaction?: Transaction): Promise<DefaultSite> {
    const row = await findRow(this.deps.db.models.Setting, { where: { key: DEFAULT_SITE_SETTING }, transaction });
    return parseDefaultSite(row?.value);
  }

  /** Saves the default site (absent redirect_url/html are kept) and makes it live. 422 with fields when the mode lacks its value (sent or stored). */
  async setDefaultSite(body: DefaultSiteBody, actor?: number): Promise<DefaultSite> {
    const { Setting } = this.deps.db.models;
    const next = await this.proxy.transact(async (t, changes) => {
      changes.all();
      const before = await this.defaultSite(t);
      const site: DefaultSite = {
        mode: body.mode,
        redirect_url: body.redirect_url !== undefined ? body.redirect_url : before.redirect_url,
        html: body.html !== undefined ? body.html : before.html,
      };
      if (site.mode === 'redirect' && !site.redirect_url) throw invalidFields({ redirect_url: msg('field.required') });
      if (site.mode === 'custom_html' && !site.html?.trim()) throw invalidFields({ html: msg('field.required') });
      await Setting.upsert({ key: DEFAULT_SITE_SETTING, value: JSON.stringify(site), updated_at: this.deps.clock() }, { transaction: t });
      return site;
    });
    // the settings store caches every row: forget it, so nothing reads an old value through it
    this.deps.settings.invalidate();
    await this.deps.events.emit({ type: 'settings_changed', section: 'default_site', mode: next.mode, actor: actor ?? null });
    return next;
  }
}
