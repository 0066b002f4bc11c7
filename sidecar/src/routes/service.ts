// Routes: create, read, update, delete, toggle, batch; every write goes through ctx.proxy.transact()
// so it is saved and live in Caddy, or neither (see proxy/service.ts).
import { missingForKind } from './rules.js';
import { exposureProblems } from './exposure-rules.js';
import { itemError, msg } from '@gatehouse/common/messages/index.js';
import dns from 'node:dns';
import os from 'node:os';
import { Op, type Transaction } from 'sequelize';
import type { Config } from '../config.js';
import type { Database } from '../db/index.js';
import { featureDisabled, limitReached, type FeatureGate } from '../licence/features.js';
import type { LicenceLimits } from '../licence/document.js';
import type { EventBus } from '../events.js';
import type { Clock } from '../util/clock.js';
import { conflict, notFound, unprocessable, type FieldMessages } from '../util/errors.js';
import { bcryptHash } from '../util/passwords.js';
import { isOnline } from '../peers/view.js';
import { asBool, findRow, findRows } from '../db/define.js';
import { parseNames } from '../certificates/service.js';
import type { ProxyService } from '../proxy/service.js';
import { blankRoute, rowToRoute, routeToRow, toApi, type Route, type RouteRow } from './model.js';
import { normalizeIpRules } from '../util/ip-rules.js';
import type { CertificateView, ListRoutesQuery, RouteAuthSummary, RouteInput, RouteView, WizardPeer } from './schema.js';
import { EXPIRING_MS, NOT_APPLICABLE, type CertificateStore } from '../proxy/certificates.js';
import { covers } from '../certificates/pem.js';
import { hasFilter, routeOrder, routeWhere } from './list.js';
import { PublicHost } from '../system/public-host.js';
import { mergeTraffic, trafficRules } from './traffic.js';
import { accessStateOf } from '../access-windows/schedule.js';
import { geoFilterProblems } from './geo.js';

type Fields = FieldMessages;

/** Settings that only mean something for HTTP routes; refused on L4 routes. */
const HTTP_ONLY_FLAGS = [
  'https_enabled',
  'backend_https',
  'compress_enabled',
  'bot_blocker_enabled',
  'rate_limit_enabled',
  'retry_enabled',
  'circuit_breaker_enabled',
  'mirror_enabled',
] as const;
const L4_FIELDS = ['l4_protocol', 'l4_listen_port', 'l4_tls_mode'] as const;
const PEER_TARGET_FIELDS = ['peer_id', 'target_port'] as const;
const GATEWAY_TARGET_FIELDS = ['target_peer_id', 'target_lan_host', 'target_lan_port', 'wol_mac'] as const;

/** Defaults filled in when a feature is switched on without its parameters. */
export const ROUTE_DEFAULTS = {
  bot_blocker_mode: 'block',
  ip_filter_mode: 'whitelist',
  rate_limit_requests: 100,
  rate_limit_window: '1m',
  retry_count: 3,
  retry_status_codes: '502,503,504',
  circuit_breaker_threshold: 5,
  circuit_breaker_timeout: 30,
} as const;

export interface RoutesServiceOptions {
  db: Database;
  config: Config;
  clock: Clock;
  /** route_created / _updated / _deleted / _enabled / _disabled, routes_batch (the activity rows come from them) */
  events: EventBus;
  proxy: ProxyService;
  /** DNS resolver for check-dns (tests point one at a local DNS server). */
  resolver?: dns.promises.Resolver;
  /** Whether a route has a route-auth configuration (route-auth/models.ts hasRouteAuth), inside the write transaction. */
  hasRouteAuth?: (routeId: number, transaction: Transaction) => Promise<boolean>;
  /** The owners of linked routes among these route ids, by route id (rdp/linked.ts linkedOwners: an RDP route in gateway mode owns its L4 route). */
  linkedOwners: (routeIds: number[], transaction?: Transaction) => Promise<Map<number, { id: number; name: string }>>;
  /** The licence: feature circuit_breaker for breaker settings, limit max_routes for creates. */
  licence: { features: FeatureGate; limits: () => LicenceLimits };
  /** This server's public host, public IP and TLS mode (system/public-host.ts); without it the configuration's. */
  publicHost?: PublicHost;
  /** The route logins of these routes in brief, by route id (route-auth/models.ts routeAuthSummaries). */
  routeAuthSummaries?: (routeIds: number[]) => Promise<Map<number, NonNullable<RouteAuthSummary>>>;
  /** Caddy's certificates (proxy/certificates.ts) when Gatehouse runs Caddy; null: the states are unknown. */
  certificates?: CertificateStore | null;
  /** The custom certificates with these ids, in brief (certificates/service.ts summaries). */
  customCertificates?: (ids: number[]) => Promise<Map<number, { id: number; name: string; issuer: string; not_before: number; not_after: number }>>;
  /** The country database (geoip/service.ts): a geo_filter is refused while it is not there. */
  geoip?: { status(): { present: boolean } };
}

/** The name a route's certificate is for, or null when Caddy terminates no TLS for it. */
export function tlsName(r: Pick<Route, 'route_type' | 'https_enabled' | 'l4_tls_mode' | 'domain'>): string | null {
  if (!r.domain) return null;
  if (r.route_type === 'http') return r.https_enabled ? r.domain : null;
  return r.l4_tls_mode === 'terminate' ? r.domain : null;
}

const BREAKER_FIELDS = ['circuit_breaker_enabled', 'circuit_breaker_threshold', 'circuit_breaker_timeout'] as const;

export interface BatchResult {
  id: number;
  ok: boolean;
  error?: string;
  code?: string;
  params?: Record<string, unknown>;
}

export class RoutesService {
  private readonly db: Database;
  private readonly config: Config;
  private readonly clock: Clock;
  private readonly events: EventBus;
  private readonly proxy: ProxyService;
  private readonly hasRouteAuth?: (routeId: number, transaction: Transaction) => Promise<boolean>;
  private readonly linkedOwners: RoutesServiceOptions['linkedOwners'];
  private readonly licence: RoutesServiceOptions['licence'];
  private readonly publicHost: PublicHost;
  private readonly routeAuthSummaries: RoutesServiceOptions['routeAuthSummaries'];
  private readonly certificates: CertificateStore | null;
  private readonly customCertificates: RoutesServiceOptions['customCertificates'];
  private readonly geoip: RoutesServiceOptions['geoip'];
  resolver: dns.promises.Resolver;
  /** 403 answers of a closed route since start (set by the access-windows service). */
  closedAnswers: (routeId: number) => number = () => 0;

  constructor(o: RoutesServiceOptions) {
    this.db = o.db;
    this.config = o.config;
    this.clock = o.clock;
    this.events = o.events;
    this.proxy = o.proxy;
    this.hasRouteAuth = o.hasRouteAuth;
    this.linkedOwners = o.linkedOwners;
    this.licence = o.licence;
    this.publicHost = o.publicHost ?? new PublicHost(o.config);
    this.routeAuthSummaries = o.routeAuthSummaries;
    this.certificates = o.certificates ?? null;
    this.customCertificates = o.customCertificates;
    this.geoip = o.geoip;
    this.resolver = o.resolver ?? new dns.promises.Resolver({ timeout: 3000, tries: 2 });
  }

  /** 409 when one of these routes belongs to an RDP route (nothing is changed then). */
  private async refuseLinkedRoutes(routeIds: number[], transaction?: Transaction): Promise<void> {
    const owners = await this.linkedOwners(routeIds, transaction);
    const [first] = owners;
    if (!first) return;
    const [routeId, owner] = first;
    throw conflict(msg('route.owned_by_rdp', { route_id: routeId, rdp_name: owner.name, rdp_id: owner.id }), { route_id: routeId, rdp_route_id: owner.id });
  }

  /** The certificate state of a route's TLS name (with `custom`, the custom certificate it names). */
  async certificateOf(
    r: Pick<Route, 'route_type' | 'https_enabled' | 'l4_tls_mode' | 'domain'> & { certificate_id?: number | null },
    custom?: { id: number; name: string; issuer: string; not_before: number; not_after: number },
  ): Promise<CertificateView> {
    const name = tlsName(r);
    if (name === null) return NOT_APPLICABLE;
    if (custom && r.route_type === 'http') {
      const now = this.clock();
      const soon = Math.min(EXPIRING_MS, (custom.not_after - custom.not_before) / 3);
      return {
        state: custom.not_after <= now ? 'expired' : custom.not_after - now < soon ? 'expiring' : 'valid',
        domain: name,
        issuer: custom.issuer,
        internal: false,
        not_after: new Date(custom.not_after).toISOString(),
        last_error: null,
        last_error_at: null,
        custom: { id: custom.id, name: custom.name },
      };
    }
    if (!this.certificates) return { ...NOT_APPLICABLE, state: 'unknown', domain: name, internal: this.publicHost.tls().value === 'internal' };
    return this.certificates.stateOf(name);
  }

  /** Routes as the API serves them: the stored fields, the route login in brief and the certificate state. */
  private async present(routes: Route[], owners: Map<number, { id: number }> = new Map()): Promise<RouteView[]> {
    const auth =
      this.routeAuthSummaries && routes.length ? await this.routeAuthSummaries(routes.map((r) => r.id)) : new Map<number, NonNullable<RouteAuthSummary>>();
    const certIds = [...new Set(routes.flatMap((r) => (r.certificate_id !== null ? [r.certificate_id] : [])))];
    const custom = certIds.length && this.customCertificates ? await this.customCertificates(certIds) : new Map();
    return Promise.all(
      routes.map(async (r) => ({
        ...toApi(r, owners.get(r.id)?.id ?? null),
        route_auth: auth.get(r.id) ?? null,
        certificate: await this.certificateOf(r, r.certificate_id !== null ? custom.get(r.certificate_id) : undefined),
        access_state: accessStateOf(r.access_schedule, this.clock(), this.closedAnswers(r.id)),
      })),
    );
  }

  private get Route() {
    return this.db.models.Route;
  }

  /** One page of routes matching the filters in the sort order (routes/list.ts); total counts the matches, totalAll every route. */
  async list(q: ListRoutesQuery): Promise<{ routes: RouteView[]; total: number; totalAll: number }> {
    const where = routeWhere(this.db, q);
    const [rows, total, totalAll] = await Promise.all([
      findRows(this.Route, { where, order: routeOrder(q.sort), limit: q.limit, offset: q.offset }),
      this.Route.count({ where }),
      hasFilter(q) ? this.Route.count() : null,
    ]);
    const owners = await this.linkedOwners(rows.filter((r) => r.route_type === 'l4').map((r) => Number(r.id)));
    return {
      routes: await this.present(
        rows.map((r) => rowToRoute(r)),
        owners,
      ),
      total,
      totalAll: totalAll ?? total,
    };
  }

  async getRoute(id: number, transaction?: Transaction): Promise<Route> {
    const row = (await this.Route.findByPk(id, { raw: true, transaction })) as RouteRow | null;
    if (!row) throw notFound(msg('resource.not_found', { what: 'Route' }));
    return rowToRoute(row);
  }

  async get(id: number): Promise<RouteView> {
    const route = await this.getRoute(id);
    const owners = route.route_type === 'l4' ? await this.linkedOwners([id]) : undefined;
    return (await this.present([route], owners))[0];
  }

  async create(input: RouteInput, actor?: number): Promise<RouteView> {
    const hash = input.basic_auth_password ? await bcryptHash(input.basic_auth_password) : undefined;
    const route = await this.proxy.transact(async (t, changes) => {
      const now = this.clock();
      const merged = this.merge({ ...blankRoute(now) }, input, hash);
      this.checkLicence(merged, null);
      const max = this.licence.limits().max_routes;
      if (max !== null && (await this.Route.count({ transaction: t })) >= max) throw limitReached('max_routes', max, 'routes');
      await this.check(merged, null, t);
      const row = await this.Route.create(routeToRow(merged), { transaction: t });
      changes.routes(Number(row.get('id')));
      return { ...merged, id: Number(row.get('id')) } as Route;
    });
    await this.events.emit({ type: 'route_created', route_id: route.id, domain: route.domain, route_type: route.route_type, actor: actor ?? null });
    return (await this.present([route]))[0];
  }

  async update(id: number, input: RouteInput, actor?: number): Promise<RouteView> {
    const hash = input.basic_auth_password ? await bcryptHash(input.basic_auth_password) : undefined;
    const route = await this.proxy.transact(async (t, changes) => {
      changes.routes(id);
      const existing = await this.getRoute(id, t);
      await this.refuseLinkedRoutes([id], t);
      const { id: _id, ...base } = existing;
      const merged = this.merge(base, input, hash);
      merged.updated_at = this.clock();
      this.checkLicence(merged, existing);
      await this.check(merged, id, t);
      await this.Route.update(routeToRow(merged), { where: { id }, transaction: t });
      return { ...merged, id } as Route;
    });
    await this.events.emit({
      type: 'route_updated',
      route_id: id,
      domain: route.domain,
      fields: Object.keys(input).filter((k) => k !== 'basic_auth_password'),
      actor: actor ?? null,
    });
    return (await this.present([route]))[0];
  }

  async remove(id: number, actor?: number): Promise<void> {
    const domain = await this.proxy.transact(async (t, changes) => {
      changes.routes(id);
      const existing = await this.getRoute(id, t);
      await this.refuseLinkedRoutes([id], t);
      await this.Route.destroy({ where: { id }, transaction: t });
      return existing.domain;
    });
    await this.events.emit({ type: 'route_deleted', route_id: id, domain, actor: actor ?? null });
  }

  async toggle(id: number, actor?: number): Promise<RouteView> {
    const route = await this.proxy.transact(async (t, changes) => {
      changes.routes(id);
      const existing = await this.getRoute(id, t);
      await this.refuseLinkedRoutes([id], t);
      const enabled = !existing.enabled;
      const updated_at = this.clock();
      await this.Route.update({ enabled, updated_at }, { where: { id }, transaction: t });
      return { ...existing, enabled, updated_at };
    });
    await this.events.emit({ type: route.enabled ? 'route_enabled' : 'route_disabled', route_id: id, domain: route.domain, actor: actor ?? null });
    return (await this.present([route]))[0];
  }

  /** One transaction and one proxy load for the whole batch; ids that do not exist are reported per id. */
  async batch(action: 'enable' | 'disable' | 'delete', ids: number[], actor?: number): Promise<{ results: BatchResult[]; succeeded: number; failed: number }> {
    const unique = [...new Set(ids)];
    const results = await this.proxy.transact(async (t, changes) => {
      const rows = await findRows(this.Route, { where: { id: { [Op.in]: unique } }, attributes: ['id', 'domain'], transaction: t });
      const found = new Set(rows.map((r) => Number(r.id)));
      const hit = unique.filter((i) => found.has(i));
      changes.routes(...hit);
      await this.refuseLinkedRoutes(hit, t);
      if (hit.length) {
        if (action === 'delete') await this.Route.destroy({ where: { id: { [Op.in]: hit } }, transaction: t });
        else await this.Route.update({ enabled: action === 'enable', updated_at: this.clock() }, { where: { id: { [Op.in]: hit } }, transaction: t });
      }
      return unique.map((id): BatchResult =>
        found.has(id) ? { id, ok: true } : { id, ok: false, ...itemError(msg('resource.not_found', { what: 'Route' })) },
      );
    });
    const succeeded = results.filter((r) => r.ok).length;
    if (succeeded) {
      await this.events.emit({ type: 'routes_batch', action, route_ids: results.filter((r) => r.ok).map((r) => r.id), actor: actor ?? null });
    }
    return { results, succeeded, failed: results.length - succeeded };
  }

  /**
   * Linked routes (an RDP route's gateway-mode L4 route, rdp/service.ts): their owner creates,
   * updates and deletes them inside its own proxy.transact() transaction, with the same rules and
   * conflict checks as the API (the API itself refuses to touch them: refuseLinkedRoutes).
   */
  async createLinked(input: RouteInput, t: Transaction): Promise<Route> {
    const merged = this.merge({ ...blankRoute(this.clock()) }, input, undefined);
    const max = this.licence.limits().max_routes;
    if (max !== null && (await this.Route.count({ transaction: t })) >= max) throw limitReached('max_routes', max, 'routes');
    await this.check(merged, null, t);
    const row = await this.Route.create(routeToRow(merged), { transaction: t });
    return { ...merged, id: Number(row.get('id')) } as Route;
  }

  async updateLinked(id: number, input: RouteInput, t: Transaction): Promise<Route> {
    const { id: _id, ...base } = await this.getRoute(id, t);
    const merged = this.merge(base, input, undefined);
    merged.updated_at = this.clock();
    await this.check(merged, id, t);
    await this.Route.update(routeToRow(merged), { where: { id }, transaction: t });
    return { ...merged, id } as Route;
  }

  async removeLinked(id: number, t: Transaction): Promise<void> {
    await this.Route.destroy({ where: { id }, transaction: t });
  }

  /**
   * Applies a create/update input onto a base record. When route_type or target_kind changes, the
   * old kind's fields that the input does not set are cleared.
   */
  private merge(base: Omit<Route, 'id'>, input: RouteInput, passwordHash: string | undefined): Omit<Route, 'id'> {
    const m: Record<string, unknown> = { ...base };
    const has = (k: string) => Object.prototype.hasOwnProperty.call(input, k) && (input as Record<string, unknown>)[k] !== undefined;
    if (has('route_type') && input.route_type !== base.route_type) {
      if (input.route_type === 'http') for (const f of L4_FIELDS) if (!has(f)) m[f] = null;
      if (input.route_type === 'l4') {
        for (const f of HTTP_ONLY_FLAGS) if (!has(f)) m[f] = false;
        for (const f of ['backends', 'compression'] as const) if (!has(f)) m[f] = [];
        for (const f of ['lb_policy', 'lb_cookie_name', 'health_check', 'request_headers', 'response_headers'] as const) if (!has(f)) m[f] = null;
        if (!has('certificate_id')) m.certificate_id = null;
        if (!has('exposure')) m.exposure = 'public';
      }
    }
    if (has('target_kind') && input.target_kind !== base.target_kind) {
      if (input.target_kind === 'gateway') for (const f of PEER_TARGET_FIELDS) if (!has(f)) m[f] = null;
      if (input.target_kind === 'peer') {
        for (const f of GATEWAY_TARGET_FIELDS) if (!has(f)) m[f] = null;
        if (!has('wol_enabled')) m.wol_enabled = false;
      }
    }
    for (const [k, v] of Object.entries(input)) {
      if (v === undefined || k === 'basic_auth_password') continue;
      if (k === 'target_port') m[k] = v === null ? null : String(v);
      else if (k === 'backends' || k === 'compression')
        continue; // mergeTraffic
      else if (k === 'ip_filter_rules' || k === 'acl_peer_ids' || k === 'mirror_targets' || k === 'user_ids') m[k] = v ?? [];
      else m[k] = v;
    }
    // reason: m is the route being merged (a Route without id, held as a record to assign by key)
    const traffic = mergeTraffic(m as unknown as Parameters<typeof mergeTraffic>[0], input);
    if (Object.keys(traffic).length) throw unprocessable(msg('route.not_consistent'), traffic);
    if (input.basic_auth_user === null) m.basic_auth_password_hash = null;
    if (passwordHash) m.basic_auth_password_hash = passwordHash;
    else if (input.basic_auth_password === null) m.basic_auth_password_hash = null;
    return m as Omit<Route, 'id'>;
  }

  /**
   * Licence feature circuit_breaker: without it a write may not switch the breaker on or change its
   * settings (403 {feature}); a route that has them keeps them (they come back with the feature),
   * other changes to it work, and switching the breaker off is allowed.
   */
  private checkLicence(r: Omit<Route, 'id'>, before: Route | null): void {
    if (!r.circuit_breaker_enabled || this.licence.features.isEnabled('circuit_breaker')) return;
    if (before && before.circuit_breaker_enabled && BREAKER_FIELDS.every((k) => r[k] === before[k])) return;
    throw featureDisabled('circuit_breaker');
  }

  /** Cross-field rules, defaults, and the checks against the database (inside the write transaction). */
  private async check(r: Omit<Route, 'id'>, selfId: number | null, t: Transaction): Promise<void> {
    const f: Fields = {};
    // --- type and target combinations ---
    // An L4 route without TLS matches on its port alone: its domain may be empty (createRouteBody).
    if (!r.domain && !(r.route_type === 'l4' && (r.l4_tls_mode ?? 'none') === 'none')) f.domain = msg('field.required');
    if (r.certificate_id !== null && (r.route_type !== 'http' || !r.https_enabled)) f.certificate_id = msg('route.field.certificate_https_only');
    if (r.route_type === 'http') {
      for (const k of L4_FIELDS) if (r[k] !== null) f[k] = msg('route.field.only_l4');
    } else {
      if (r.l4_tls_mode === null) r.l4_tls_mode = 'none';
      if (r.l4_protocol === 'udp' && r.l4_tls_mode !== 'none') f.l4_tls_mode = msg('route.field.udp_no_tls');
      for (const k of HTTP_ONLY_FLAGS) if (r[k]) f[k] = msg('route.field.only_http');
      if (r.basic_auth_user !== null) f.basic_auth_user = msg('route.field.only_http');
      if (r.user_ids.length) f.user_ids = msg('route.field.only_http');
      // The trace is the HTTP access log; a UDP service cannot be told up without its own protocol.
      if (r.debug_enabled) f.debug_enabled = msg('route.field.debug_only_http');
      if (r.monitoring_enabled && r.l4_protocol === 'udp') f.monitoring_enabled = msg('route.field.monitoring_not_udp');
    }
    Object.assign(f, missingForKind(r), trafficRules(r), geoFilterProblems(r, this.geoip?.status() ?? { present: false }));
    if (r.target_kind === 'peer') {
      for (const k of GATEWAY_TARGET_FIELDS) if (r[k] !== null) f[k] = msg('route.field.only_gateway_target');
      if (r.wol_enabled) f.wol_enabled = msg('route.field.only_gateway_target');
    } else {
      for (const k of PEER_TARGET_FIELDS) if (r[k] !== null) f[k] = msg('route.field.only_peer_target');
      if (r.wol_enabled && r.wol_mac === null) f.wol_mac = msg('route.field.wol_mac_required');
    }
    if (r.https_enabled && r.domain.startsWith('*.') && this.publicHost.tls().value === 'acme') {
      f.https_enabled = msg('route.field.wildcard_needs_internal_tls');
    }
    // --- per-route settings: defaults when switched on, and their own consistency ---
    if (r.bot_blocker_enabled) r.bot_blocker_mode ??= ROUTE_DEFAULTS.bot_blocker_mode;
    if (r.ip_filter_enabled) {
      r.ip_filter_mode ??= ROUTE_DEFAULTS.ip_filter_mode;
      if (!r.ip_filter_rules.length) f.ip_filter_rules = msg('route.field.ip_rule_needed');
    }
    if (r.acl_enabled && !r.acl_peer_ids.length) f.acl_peer_ids = msg('route.field.acl_peer_needed');
    if (r.rate_limit_enabled) {
      r.rate_limit_requests ??= ROUTE_DEFAULTS.rate_limit_requests;
      r.rate_limit_window ??= ROUTE_DEFAULTS.rate_limit_window;
    }
    if (r.retry_enabled) {
      r.retry_count ??= ROUTE_DEFAULTS.retry_count;
      r.retry_status_codes ??= ROUTE_DEFAULTS.retry_status_codes;
    }
    if (r.circuit_breaker_enabled) {
      r.circuit_breaker_threshold ??= ROUTE_DEFAULTS.circuit_breaker_threshold;
      r.circuit_breaker_timeout ??= ROUTE_DEFAULTS.circuit_breaker_timeout;
    }
    if (r.mirror_enabled && !r.mirror_targets.length) f.mirror_targets = msg('route.field.mirror_target_needed');
    Object.assign(f, exposureProblems(r));
    if (r.basic_auth_user !== null && r.basic_auth_password_hash === null) f.basic_auth_password = msg('route.field.basic_password_required');
    if (r.basic_auth_user === null && r.basic_auth_password_hash !== null) f.basic_auth_user = msg('route.field.basic_user_required');
    // --- protection combinations ---
    const rules = normalizeIpRules(r.ip_filter_rules as Parameters<typeof normalizeIpRules>[0]);
    if ('errors' in rules) {
      for (const [i, msg] of Object.entries(rules.errors)) f[`ip_filter_rules.${i}`] = msg;
    } else {
      r.ip_filter_rules = rules.rules;
    }
    if (r.route_type === 'http' && r.basic_auth_user !== null) {
      if (!r.https_enabled) f.https_enabled = msg('route.field.basic_needs_https');
      if (r.ip_filter_enabled) f.ip_filter_enabled = msg('route.field.basic_and_ip_filter');
    }
    const routeAuth = selfId !== null && this.hasRouteAuth ? await this.hasRouteAuth(selfId, t) : false;
    if (routeAuth) {
      if (r.basic_auth_user !== null) f.basic_auth_user = msg('route.field.has_route_auth_basic');
      if (r.route_type === 'l4') f.route_type = msg('route.field.has_route_auth_l4');
    }
    if (Object.keys(f).length) throw unprocessable(msg('route.not_consistent'), f);

    // --- references that must exist ---
    const mirrorPeers = r.mirror_targets.flatMap((m) => (typeof m === 'object' && m !== null && 'peer_id' in m ? [m.peer_id] : []));
    const backendPeers = r.backends.slice(1).map((b) => b.peer_id);
    const peerIds = [...new Set([r.peer_id, r.target_peer_id, ...r.acl_peer_ids, ...mirrorPeers, ...backendPeers].filter((x): x is number => x !== null))];
    const peers = peerIds.length
      ? await findRows(this.db.models.Peer, { where: { id: { [Op.in]: peerIds } }, attributes: ['id', 'peer_type'], transaction: t })
      : [];
    const peerType = new Map(peers.map((p) => [Number(p.id), p.peer_type]));
    if (r.peer_id !== null && !peerType.has(r.peer_id)) f.peer_id = msg('field.no_such_peer', { id: r.peer_id });
    if (r.target_peer_id !== null) {
      if (!peerType.has(r.target_peer_id)) f.target_peer_id = msg('field.no_such_peer', { id: r.target_peer_id });
      else if (peerType.get(r.target_peer_id) !== 'gateway') f.target_peer_id = msg('field.not_gateway_peer', { id: r.target_peer_id });
    }
    r.backends.forEach((b, i) => {
      if (i > 0 && !peerType.has(b.peer_id)) f[`backends.${i}.peer_id`] = msg('field.no_such_peer', { id: b.peer_id });
    });
    const missingMirror = mirrorPeers.filter((i) => !peerType.has(i));
    if (missingMirror.length) f.mirror_targets = msg('field.no_such_peers', { ids: missingMirror });
    const missingAcl = r.acl_peer_ids.filter((i) => !peerType.has(i));
    if (missingAcl.length) f.acl_peer_ids = msg('field.no_such_peers', { ids: missingAcl });
    if (r.user_ids.length) {
      const users = await findRows(this.db.models.User, { where: { id: { [Op.in]: r.user_ids } }, attributes: ['id'], transaction: t });
      const have = new Set(users.map((u) => Number(u.id)));
      const missing = r.user_ids.filter((i) => !have.has(i));
      if (missing.length) f.user_ids = msg('field.no_such_users', { ids: missing });
    }
    if (r.certificate_id !== null) {
      const cert = await findRow(this.db.models.Certificate, { where: { id: r.certificate_id }, attributes: ['id', 'name', 'names'], transaction: t });
      if (!cert) f.certificate_id = msg('route.field.no_such_certificate', { id: r.certificate_id });
      else if (!covers(parseNames(cert.names), r.domain)) f.certificate_id = msg('route.field.certificate_not_covering', { domain: r.domain, name: cert.name });
    }
    if (Object.keys(f).length) throw unprocessable(msg('route.not_consistent'), f);

    // --- conflicts ---
    const notSelf = selfId === null ? {} : { id: { [Op.ne]: selfId } };
    if (r.route_type === 'http') {
      if (this.config.adminDomain && r.domain === this.config.adminDomain.toLowerCase()) {
        throw conflict(msg('route.domain_is_admin', { domain: r.domain }), { field: 'domain' });
      }
      const dup = (await this.Route.findOne({
        where: { domain: r.domain, route_type: 'http', ...notSelf },
        attributes: ['id'],
        raw: true,
        transaction: t,
      })) as { id: number } | null;
      if (dup) throw conflict(msg('route.domain_taken', { domain: r.domain, route_id: Number(dup.id) }), { field: 'domain', route_id: Number(dup.id) });
      // a redirect host's domain (redirects/service.ts refuses a route's the other way round)
      const redirect = (await this.db.models.RedirectHost.findOne({ where: { domain: r.domain }, attributes: ['id'], raw: true, transaction: t })) as {
        id: number;
      } | null;
      if (redirect)
        throw conflict(msg('redirect.domain_taken', { domain: r.domain, redirect_host_id: Number(redirect.id) }), {
          field: 'domain',
          redirect_host_id: Number(redirect.id),
        });
    } else {
      const port = r.l4_listen_port as number;
      const own = this.ownPorts(r.l4_protocol as 'tcp' | 'udp');
      if (own.has(port))
        throw conflict(msg('route.port_own', { port, protocol: String(r.l4_protocol), use: String(own.get(port)) }), { field: 'l4_listen_port' });
      const dup = (await this.Route.findOne({
        where: { route_type: 'l4', l4_listen_port: port, l4_protocol: r.l4_protocol, ...notSelf },
        attributes: ['id', 'domain'],
        raw: true,
        transaction: t,
      })) as { id: number; domain: string } | null;
      if (dup)
        throw conflict(msg('route.port_taken', { port, protocol: String(r.l4_protocol), route_id: Number(dup.id), domain: dup.domain }), {
          field: 'l4_listen_port',
          route_id: Number(dup.id),
        });
    }
  }

  /** Ports this service listens on itself, per protocol, with what uses them. */
  ownPorts(proto: 'tcp' | 'udp'): Map<number, string> {
    const c = this.config;
    const m = new Map<number, string>();
    // The HTTPS server also listens on UDP for HTTP/3.
    m.set(c.httpPort, 'the HTTP listener (GATEHOUSE_HTTP_PORT)');
    m.set(c.httpsPort, 'the HTTPS listener (GATEHOUSE_HTTPS_PORT)');
    if (proto === 'tcp') {
      m.set(c.port, 'the admin UI and API (GATEHOUSE_PORT)');
      const admin = Number(c.caddyAdmin.split(':').pop());
      if (admin) m.set(admin, "Caddy's admin API (GATEHOUSE_CADDY_ADMIN)");
    } else {
      m.set(c.wg.port, 'WireGuard (GATEHOUSE_WG_PORT)');
    }
    return m;
  }

  /**
   * Compares a domain's A records with this server's public IPv4 (system/public-host.ts publicIp():
   * the Network settings' public IP, else GATEHOUSE_PUBLIC_IP, else the public host when it is an
   * IPv4 address), otherwise the first non-internal IPv4 address of this host's network interfaces
   * (behind NAT that is the private address: set the public IP there). The answer names "this
   * server" as peers dial it (publicHost). A wildcard domain is checked through one name under it. A
   * failed lookup gives matches false and resolvedIps [].
   */
  async checkDns(domain: string): Promise<{
    domain: string;
    matches: boolean;
    resolvedIps: string[];
    expectedIp: string | null;
    expectedIpSource: 'settings' | 'env' | 'public_host' | 'interface' | null;
    publicHost: string;
  }> {
    const name = domain.startsWith('*.') ? `gatehouse-dns-check.${domain.slice(2)}` : domain;
    let resolvedIps: string[] = [];
    try {
      resolvedIps = [...new Set(await this.resolver.resolve4(name))].sort();
    } catch {
      resolvedIps = [];
    }
    const { value: expectedIp, source: expectedIpSource } = this.expectedIp();
    return {
      domain,
      matches: expectedIp !== null && resolvedIps.includes(expectedIp),
      resolvedIps,
      expectedIp,
      expectedIpSource,
      publicHost: this.publicHost.current().host,
    };
  }

  expectedIp(): { value: string | null; source: 'settings' | 'env' | 'public_host' | 'interface' | null } {
    const configured = this.publicHost.publicIp();
    if (configured.value) return configured;
    for (const addrs of Object.values(os.networkInterfaces())) {
      for (const a of addrs ?? []) if (a.family === 'IPv4' && !a.internal) return { value: a.address, source: 'interface' };
    }
    return { value: null, source: null };
  }

  /** Peers for the route wizard: online status, gateway flag, group. */
  async wizardPeers(peerType?: 'regular' | 'gateway'): Promise<WizardPeer[]> {
    const where = peerType ? { peer_type: peerType } : {};
    const rows = await findRows(this.db.models.Peer, {
      where,
      attributes: ['id', 'name', 'description', 'peer_type', 'enabled', 'address', 'hostname', 'group_id', 'api_port', 'latest_handshake', 'expires_at'],
      order: [['name', 'ASC']],
    });
    const groups = await findRows(this.db.models.PeerGroup, { attributes: ['id', 'name', 'color'] });
    const byId = new Map(groups.map((g) => [Number(g.id), g]));
    const now = this.clock();
    return rows.map((p) => {
      const g = p.group_id === null ? undefined : byId.get(Number(p.group_id));
      return {
        id: Number(p.id),
        name: p.name,
        description: p.description ?? null,
        peer_type: p.peer_type === 'gateway' ? 'gateway' : 'regular',
        is_gateway: p.peer_type === 'gateway',
        enabled: asBool(p.enabled) ? 1 : 0,
        ip: p.address.split('/')[0],
        hostname: p.hostname ?? null,
        api_port: p.api_port === null ? null : Number(p.api_port),
        isOnline: isOnline(p, now),
        group_id: g ? Number(g.id) : null,
        group: g ? { id: Number(g.id), name: g.name, color: g.color ?? null } : null,
      };
    });
  }
}
