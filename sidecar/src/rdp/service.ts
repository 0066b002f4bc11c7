// RDP routes (licence feature remote_desktop): create, read, update, delete, toggle, batch; the
// stored credential envelope; maintenance windows; credential rotation after a master-key rotation.
//
// Every write runs in ctx.proxy.transact(): in gateway mode the RDP route owns an L4 TCP route (the
// "linked route", rdp_routes.gateway_l4_route_id) that it creates, updates and deletes in the same
// transaction as its own row, so the RDP route and the proxy configuration carrying it are saved and
// live together, or neither. The routes API refuses to touch a linked route (409 naming its owner).
//
// Credentials: only the envelope made in the browser with GET /rdp/pubkey (@gatehouse/common/
// rdp-credentials) is stored, and only when it names the current server key (kid). This service never
// decrypts anything; a desktop client's connect re-encrypts them (rdp/reencrypt.ts).
import { itemError, msg } from '@gatehouse/common/messages/index.js';
import { Op, type Transaction } from 'sequelize';
import { missingForMode } from './rules.js';
import type { Database } from '../db/index.js';
import type { EventBus } from '../events.js';
import type { Clock } from '../util/clock.js';
import type { MasterKey } from '../util/crypto.js';
import { AppError, conflict, notFound, unprocessable, type FieldMessages } from '../util/errors.js';
import type { ProxyService } from '../proxy/service.js';
import type { RoutesService } from '../routes/service.js';
import type { RouteInput } from '../routes/schema.js';
import type { CredentialEnvelope } from '@gatehouse/common/rdp-credentials.js';
import { gatewayListenPort } from '@gatehouse/common/gateway-protocol.js';
import type { RdpKeys } from './keys.js';
import { rdpToRow, rowToRdp, type RdpRoute, type RdpRouteRow } from './model.js';
import type { MaintenanceWindow, RdpInput, RdpRouteView, StoredCredentials } from './schema.js';
import { findRows } from '../db/define.js';

type Fields = FieldMessages;

export const DEFAULT_RDP_PORT = 3389;
export const DEFAULT_RD_GATEWAY_PORT = 443;

/** Fields that belong to one access mode only; cleared when the mode changes and the input does not set them. */
const MODE_FIELDS: Record<string, readonly RdpRoute['access_mode'][]> = {
  target_peer_id: ['internal', 'both'],
  external_host: ['both'],
  listen_port: ['external', 'both', 'gateway'],
  gateway_peer_id: ['gateway'],
};

/** The name of the L4 route a gateway-mode RDP route owns (L4 routes still carry a domain; it is not served). */
export const linkedDomain = (rdpId: number) => `rdp-${rdpId}.rdp.gatehouse.internal`;

/** Linked-route field names → the RDP field the admin sets, for errors raised by the routes checks. */
const LINKED_FIELD: Record<string, string> = {
  target_peer_id: 'gateway_peer_id',
  target_lan_host: 'target_host',
  target_lan_port: 'target_port',
  l4_listen_port: 'listen_port',
  wol_mac: 'wol_mac',
  domain: 'name',
};

export interface RdpServiceOptions {
  db: Database;
  clock: Clock;
  /** rdp_route_created / _updated / _deleted / _toggled */
  events: EventBus;
  proxy: ProxyService;
  routes: RoutesService;
  keys: RdpKeys;
}

export interface RdpBatchResult {
  id: number;
  ok: boolean;
  error?: string;
  code?: string;
  params?: Record<string, unknown>;
}

/** The fields that say where a desktop client takes the stored credentials (the RD gateway pair included). */
const CREDENTIALS_DESTINATION = [
  'access_mode',
  'target_host',
  'target_port',
  'target_peer_id',
  'external_host',
  'listen_port',
  'gateway_peer_id',
  'gateway_host',
  'gateway_port',
] as const;

export function credentialsDestinationChanged(before: Omit<RdpRoute, 'id'>, after: Omit<RdpRoute, 'id'>): boolean {
  return CREDENTIALS_DESTINATION.some((k) => (before[k] ?? null) !== (after[k] ?? null));
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** An RDP route as every API returns it (never the envelope). */
export function toView(r: RdpRoute): RdpRouteView {
  const { credentials_envelope, credentials_updated_at, rotation_pending_since, created_at, updated_at, ...rest } = r;
  return {
    ...rest,
    has_credentials: credentials_envelope !== null,
    credentials_updated_at: iso(credentials_updated_at),
    rotation_pending_since: iso(rotation_pending_since),
    created_at: iso(created_at)!,
    updated_at: iso(updated_at)!,
  };
}

/** The window in force at `now` (from <= now < to), or null. */
export function activeMaintenance(route: Pick<RdpRoute, 'maintenance_windows'>, now: number): MaintenanceWindow | null {
  return route.maintenance_windows.find((w) => Date.parse(w.from) <= now && now < Date.parse(w.to)) ?? null;
}

function blankRdp(now: number): Omit<RdpRoute, 'id'> {
  return {
    name: '',
    description: null,
    enabled: true,
    access_mode: 'internal',
    target_host: '',
    target_port: DEFAULT_RDP_PORT,
    target_peer_id: null,
    external_host: null,
    listen_port: null,
    gateway_peer_id: null,
    gateway_listen_port: null,
    gateway_host: null,
    gateway_port: null,
    credentials_envelope: null,
    credentials_kid: null,
    credentials_updated_at: null,
    rotation_state: 'none',
    rotation_pending_since: null,
    wol_enabled: false,
    wol_mac: null,
    network_level_auth: true,
    audio_mode: 'local',
    clipboard_enabled: true,
    resolution: null,
    color_depth: 32,
    maintenance_windows: [],
    allowed_user_ids: null,
    gateway_l4_route_id: null,
    created_at: now,
    updated_at: now,
  };
}

export class RdpService {
  private readonly db: Database;
  private readonly clock: Clock;
  private readonly events: EventBus;
  private readonly proxy: ProxyService;
  private readonly routes: RoutesService;
  readonly keys: RdpKeys;

  constructor(o: RdpServiceOptions) {
    this.db = o.db;
    this.clock = o.clock;
    this.events = o.events;
    this.proxy = o.proxy;
    this.routes = o.routes;
    this.keys = o.keys;
  }

  private get model() {
    return this.db.models.RdpRoute;
  }

  // --- reads ---

  async list(): Promise<RdpRouteView[]> {
    return (await this.listRoutes()).map(toView);
  }

  /** Every RDP route in its service form (with the envelope), by id. */
  async listRoutes(transaction?: Transaction): Promise<RdpRoute[]> {
    const rows = await findRows(this.model, { order: [['id', 'ASC']], transaction });
    return rows.map(rowToRdp);
  }

  /** One RDP route in its service form (with the envelope); 404 when it does not exist. */
  async getRoute(id: number, transaction?: Transaction): Promise<RdpRoute> {
    const row = (await this.model.findByPk(id, { raw: true, transaction })) as RdpRouteRow | null;
    if (!row) throw notFound(msg('resource.not_found', { what: 'RDP route' }));
    return rowToRdp(row);
  }

  async get(id: number): Promise<RdpRouteView> {
    return toView(await this.getRoute(id));
  }

  // --- writes ---

  async create(input: RdpInput, actor?: number | null): Promise<RdpRouteView> {
    const route = await this.proxy.transact(async (t) => {
      const now = this.clock();
      const merged = this.merge(blankRdp(now), input, now);
      await this.check(merged, null, t);
      await this.checkEnvelope(input, t);
      const row = await this.model.create(rdpToRow(merged), { transaction: t });
      const id = Number(row.get('id'));
      const linked = await this.syncLinked({ ...merged, id }, null, t);
      if (linked.gateway_l4_route_id !== null) await this.model.update(linked, { where: { id }, transaction: t });
      return { ...merged, ...linked, id };
    });
    await this.events.emit({ type: 'rdp_route_created', rdp_route_id: route.id, name: route.name, access_mode: route.access_mode, actor: actor ?? null });
    return toView(route);
  }

  async update(id: number, patch: RdpInput, actor?: number | null): Promise<RdpRouteView> {
    let dropped = false;
    const route = await this.proxy.transact(async (t) => {
      dropped = false;
      const existing = await this.getRoute(id, t);
      const now = this.clock();
      const { id: _id, ...base } = existing;
      const merged = this.merge(base, patch, now);
      merged.updated_at = now;
      // Stored credentials were entered for the route's destination: a write that sends the route
      // elsewhere drops them, unless it carries new ones (a token that may edit routes must not be
      // able to redirect the credentials a desktop client decrypts to a host of its choosing).
      if (merged.credentials_envelope !== null && patch.credentials === undefined && credentialsDestinationChanged(base, merged)) {
        merged.credentials_envelope = null;
        merged.credentials_kid = null;
        merged.credentials_updated_at = now;
        dropped = true;
      }
      await this.check(merged, id, t);
      await this.checkEnvelope(patch, t);
      const linked = await this.syncLinked({ ...merged, id }, existing, t);
      const next = { ...merged, ...linked };
      await this.model.update(rdpToRow(next), { where: { id }, transaction: t });
      return { ...next, id };
    });
    const fields = Object.keys(patch);
    if (dropped && !fields.includes('credentials')) fields.push('credentials');
    await this.events.emit({ type: 'rdp_route_updated', rdp_route_id: id, name: route.name, fields, actor: actor ?? null });
    return toView(route);
  }

  async remove(id: number, actor?: number | null): Promise<void> {
    const name = await this.proxy.transact(async (t) => {
      const existing = await this.getRoute(id, t);
      await this.model.destroy({ where: { id }, transaction: t });
      if (existing.gateway_l4_route_id !== null) await this.routes.removeLinked(existing.gateway_l4_route_id, t);
      return existing.name;
    });
    await this.events.emit({ type: 'rdp_route_deleted', rdp_route_id: id, name, actor: actor ?? null });
  }

  async toggle(id: number, actor?: number | null): Promise<RdpRouteView> {
    const route = await this.proxy.transact(async (t) => {
      const existing = await this.getRoute(id, t);
      return this.setEnabled(existing, !existing.enabled, t);
    });
    await this.events.emit({ type: 'rdp_route_toggled', rdp_route_id: id, name: route.name, enabled: route.enabled, actor: actor ?? null });
    return toView(route);
  }

  private async setEnabled(existing: RdpRoute, enabled: boolean, t: Transaction): Promise<RdpRoute> {
    const updated_at = this.clock();
    await this.model.update({ enabled, updated_at }, { where: { id: existing.id }, transaction: t });
    if (existing.gateway_l4_route_id !== null) await this.routes.updateLinked(existing.gateway_l4_route_id, { enabled }, t);
    return { ...existing, enabled, updated_at };
  }

  /** One transaction and one proxy load for the whole batch; ids that do not exist are reported per id. */
  async batch(
    action: 'enable' | 'disable' | 'delete',
    ids: number[],
    actor?: number | null,
  ): Promise<{ results: RdpBatchResult[]; succeeded: number; failed: number }> {
    const unique = [...new Set(ids)];
    const done: { route: RdpRoute; enabled?: boolean }[] = [];
    const results = await this.proxy.transact(async (t) => {
      done.length = 0;
      const rows = await findRows(this.model, { where: { id: { [Op.in]: unique } }, transaction: t });
      const byId = new Map(rows.map((r) => [Number(r.id), rowToRdp(r)]));
      for (const id of unique) {
        const r = byId.get(id);
        if (!r) continue;
        if (action === 'delete') {
          await this.model.destroy({ where: { id }, transaction: t });
          if (r.gateway_l4_route_id !== null) await this.routes.removeLinked(r.gateway_l4_route_id, t);
          done.push({ route: r });
        } else if (r.enabled !== (action === 'enable')) {
          done.push({ route: await this.setEnabled(r, action === 'enable', t), enabled: action === 'enable' });
        }
      }
      return unique.map((id): RdpBatchResult =>
        byId.has(id) ? { id, ok: true } : { id, ok: false, ...itemError(msg('resource.not_found', { what: 'RDP route' })) },
      );
    });
    for (const d of done) {
      if (action === 'delete') await this.events.emit({ type: 'rdp_route_deleted', rdp_route_id: d.route.id, name: d.route.name, actor: actor ?? null });
      else await this.events.emit({ type: 'rdp_route_toggled', rdp_route_id: d.route.id, name: d.route.name, enabled: d.enabled!, actor: actor ?? null });
    }
    const succeeded = results.filter((r) => r.ok).length;
    return { results, succeeded, failed: results.length - succeeded };
  }

  // --- credentials (the envelope only) ---

  async getCredentials(id: number): Promise<StoredCredentials> {
    const r = await this.getRoute(id);
    return {
      route_id: id,
      credentials: r.credentials_envelope === null ? null : (JSON.parse(r.credentials_envelope) as CredentialEnvelope),
      credentials_kid: r.credentials_kid,
      credentials_updated_at: iso(r.credentials_updated_at),
      rotation_state: r.rotation_state,
    };
  }

  async setCredentials(id: number, envelope: CredentialEnvelope, actor?: number | null): Promise<StoredCredentials> {
    const name = await this.db.sequelize.transaction(async (t) => {
      const r = await this.getRoute(id, t);
      await this.checkEnvelope({ credentials: envelope }, t);
      const now = this.clock();
      await this.model.update(
        { credentials_envelope: JSON.stringify(envelope), credentials_kid: envelope.kid, credentials_updated_at: now, updated_at: now },
        { where: { id }, transaction: t },
      );
      return r.name;
    });
    await this.events.emit({ type: 'rdp_route_updated', rdp_route_id: id, name, fields: ['credentials'], actor: actor ?? null });
    return this.getCredentials(id);
  }

  async clearCredentials(id: number, actor?: number | null): Promise<StoredCredentials> {
    const name = await this.db.sequelize.transaction(async (t) => {
      const r = await this.getRoute(id, t);
      const now = this.clock();
      await this.model.update(
        { credentials_envelope: null, credentials_kid: null, credentials_updated_at: now, updated_at: now },
        { where: { id }, transaction: t },
      );
      return r.name;
    });
    await this.events.emit({ type: 'rdp_route_updated', rdp_route_id: id, name, fields: ['credentials'], actor: actor ?? null });
    return this.getCredentials(id);
  }

  /** 400 {fields.credentials.kid} unless the envelope in the input names the current server key. */
  private async checkEnvelope(input: Pick<RdpInput, 'credentials'>, t: Transaction): Promise<void> {
    const env = input.credentials;
    if (env === undefined || env === null) return;
    const kid = await this.keys.currentKid(t);
    if (kid === null) throw unprocessable(msg('request.validation_failed'), { 'credentials.kid': msg('rdp.field.no_server_key') });
    if (env.kid !== kid)
      throw unprocessable(msg('request.validation_failed'), {
        'credentials.kid': msg('rdp.field.kid_not_current', { kid: String(env.kid), current: String(kid) }),
      });
  }

  // --- maintenance windows ---

  async setMaintenance(id: number, windows: MaintenanceWindow[], actor?: number | null): Promise<MaintenanceWindow[]> {
    const sorted = [...windows].sort((a, b) => Date.parse(a.from) - Date.parse(b.from) || Date.parse(a.to) - Date.parse(b.to));
    const name = await this.db.sequelize.transaction(async (t) => {
      const r = await this.getRoute(id, t);
      await this.model.update({ maintenance_windows: JSON.stringify(sorted), updated_at: this.clock() }, { where: { id }, transaction: t });
      return r.name;
    });
    await this.events.emit({ type: 'rdp_route_updated', rdp_route_id: id, name, fields: ['maintenance_windows'], actor: actor ?? null });
    return sorted;
  }

  activeMaintenance(route: Pick<RdpRoute, 'maintenance_windows'>, now: number = this.clock()): MaintenanceWindow | null {
    return activeMaintenance(route, now);
  }

  // --- rotation after a master-key rotation ---

  async pendingRotations(): Promise<RdpRouteView[]> {
    const rows = await findRows(this.model, { where: { rotation_state: 'pending' }, order: [['id', 'ASC']] });
    return rows.map((r) => toView(rowToRdp(r)));
  }

  /**
   * The admin's acknowledgement that the credentials were entered again: refused (409) while the
   * route is not pending, and while its stored envelope is still for a retired key.
   */
  async ackRotation(id: number, actor?: number | null): Promise<RdpRouteView> {
    const route = await this.db.sequelize.transaction(async (t) => {
      const r = await this.getRoute(id, t);
      if (r.rotation_state !== 'pending') throw conflict(msg('rdp.no_pending_rotation', { name: r.name }), { rdp_route_id: id });
      const kid = await this.keys.currentKid(t);
      if (r.credentials_envelope !== null && r.credentials_kid !== kid) {
        throw conflict(msg('rdp.credentials_retired_key', { name: r.name, kid: r.credentials_kid, id }), { rdp_route_id: id });
      }
      const updated_at = this.clock();
      await this.model.update({ rotation_state: 'none', rotation_pending_since: null, updated_at }, { where: { id }, transaction: t });
      return { ...r, rotation_state: 'none' as const, rotation_pending_since: null, updated_at };
    });
    await this.events.emit({ type: 'rdp_route_updated', rdp_route_id: id, name: route.name, fields: ['rotation_state'], actor: actor ?? null });
    return toView(route);
  }

  /**
   * The master key was rotated (its sealed columns re-sealed under `newKey`; registered as a
   * master-key hook in app-context.ts, run inside the rotation's transaction): a new server key pair
   * replaces the current one, and every route with stored credentials waits for them again
   * (rotation_state pending) - their envelopes were made for the retired key. A server that never
   * made a key has nothing to rotate (its first key will be sealed under the new master key).
   */
  async onMasterKeyRotated(newKey?: MasterKey, transaction?: Transaction): Promise<{ kid: string | null; pending: number }> {
    if (!transaction) {
      if (newKey) this.keys.useMasterKey(newKey);
      return this.db.sequelize.transaction((t) => this.rotateIn(t, undefined));
    }
    return this.rotateIn(transaction, newKey);
  }

  private async rotateIn(t: Transaction, newKey: MasterKey | undefined): Promise<{ kid: string | null; pending: number }> {
    if ((await this.keys.currentKid(t)) === null) return { kid: null, pending: 0 };
    const key = await this.keys.rotate({ transaction: t, masterKey: newKey });
    const now = this.clock();
    const [pending] = await this.model.update(
      { rotation_state: 'pending', rotation_pending_since: now, updated_at: now },
      { where: { credentials_envelope: { [Op.ne]: null } }, transaction: t },
    );
    return { kid: key.kid, pending };
  }

  // --- rules ---

  /** Applies an input onto a base record; a mode change clears the old mode's fields the input does not set. */
  private merge(base: Omit<RdpRoute, 'id'>, input: RdpInput, now: number): Omit<RdpRoute, 'id'> {
    const m: Record<string, unknown> = { ...base };
    const has = (k: string) => Object.prototype.hasOwnProperty.call(input, k) && (input as Record<string, unknown>)[k] !== undefined;
    const mode = input.access_mode ?? base.access_mode;
    if (mode !== base.access_mode) {
      for (const [k, modes] of Object.entries(MODE_FIELDS)) if (!modes.includes(mode) && !has(k)) m[k] = null;
      if (base.access_mode === 'external' && mode !== 'external' && !has('target_host')) m.target_host = ''; // a public address is no internal/LAN host
      if (mode === 'external' && !has('wol_enabled')) m.wol_enabled = false;
      if (mode !== 'gateway') m.gateway_listen_port = null;
    }
    // target_host follows a (new) target peer unless given
    if (has('target_peer_id') && input.target_peer_id !== null && !has('target_host')) m.target_host = '';
    for (const [k, v] of Object.entries(input)) {
      if (v === undefined) continue;
      if (k === 'credentials') {
        const env = v as CredentialEnvelope | null;
        m.credentials_envelope = env === null ? null : JSON.stringify(env);
        m.credentials_kid = env === null ? null : env.kid;
        m.credentials_updated_at = now;
      } else m[k] = v;
    }
    return m as Omit<RdpRoute, 'id'>;
  }

  /** The body's fields the stored RDP routes refuse (a name in use), for a body whose schema refused other fields too (storedChecks). */
  async storedProblems(input: { name?: unknown }, exceptId?: number): Promise<FieldMessages> {
    if (typeof input.name !== 'string' || input.name.trim() === '') return {};
    const notSelf = exceptId === undefined ? {} : { id: { [Op.ne]: exceptId } };
    return (await this.model.findOne({ where: { name: input.name.trim(), ...notSelf }, attributes: ['id'], raw: true }))
      ? { name: msg('field.already_taken') }
      : {};
  }

  /** Cross-field rules, defaults, and the checks against the database (inside the write transaction). */
  private async check(r: Omit<RdpRoute, 'id'>, selfId: number | null, t: Transaction): Promise<void> {
    const f: Fields = {};
    // a refusal of the combination also names a name in use, so that one answer names every field
    const refuse = async () => {
      const notSelf = selfId === null ? {} : { id: { [Op.ne]: selfId } };
      if (!f.name && (await this.model.findOne({ where: { name: r.name, ...notSelf }, attributes: ['id'], raw: true, transaction: t })))
        f.name = msg('field.already_taken');
      return unprocessable(msg('route.not_consistent'), f);
    };
    const only = (
      k: keyof Omit<RdpRoute, 'id'>,
      what:
        | 'rdp.field.only_both'
        | 'rdp.field.only_external_both_gateway'
        | 'rdp.field.only_gateway'
        | 'rdp.field.only_internal_both'
        | 'rdp.field.only_both_external_uses_target',
    ) => {
      if (r[k] !== null) f[k] = msg(what);
    };
    // the fields the mode requires (one rule with the create body's schema), then those it does not take
    Object.assign(f, missingForMode(r));
    switch (r.access_mode) {
      case 'internal':
        only('external_host', 'rdp.field.only_both');
        only('listen_port', 'rdp.field.only_external_both_gateway');
        only('gateway_peer_id', 'rdp.field.only_gateway');
        break;
      case 'external':
        only('target_peer_id', 'rdp.field.only_internal_both');
        only('external_host', 'rdp.field.only_both_external_uses_target');
        only('gateway_peer_id', 'rdp.field.only_gateway');
        if (r.wol_enabled) f.wol_enabled = msg('rdp.field.wol_not_external');
        r.listen_port ??= r.target_port;
        break;
      case 'both':
        only('gateway_peer_id', 'rdp.field.only_gateway');
        r.listen_port ??= r.target_port;
        break;
      case 'gateway':
        only('target_peer_id', 'rdp.field.only_internal_both');
        only('external_host', 'rdp.field.only_both');
        break;
    }
    if (r.gateway_port !== null && r.gateway_host === null) f.gateway_host = msg('rdp.field.gateway_host_required');
    if (r.gateway_host !== null) r.gateway_port ??= DEFAULT_RD_GATEWAY_PORT;
    if (Object.keys(f).length) throw await refuse();

    // --- references that must exist ---
    const peerIds = [r.target_peer_id, r.gateway_peer_id].filter((x): x is number => x !== null);
    const peers = peerIds.length
      ? await findRows(this.db.models.Peer, { where: { id: { [Op.in]: peerIds } }, attributes: ['id', 'peer_type', 'address'], transaction: t })
      : [];
    const byId = new Map(peers.map((p) => [Number(p.id), p]));
    if (r.target_peer_id !== null) {
      const p = byId.get(r.target_peer_id);
      if (!p) f.target_peer_id = msg('field.no_such_peer', { id: r.target_peer_id });
      else if (!r.target_host) r.target_host = p.address.split('/')[0];
    }
    if (r.gateway_peer_id !== null) {
      const p = byId.get(r.gateway_peer_id);
      if (!p) f.gateway_peer_id = msg('field.no_such_peer', { id: r.gateway_peer_id });
      else if (p.peer_type !== 'gateway') f.gateway_peer_id = msg('field.not_gateway_peer', { id: r.gateway_peer_id });
    }
    if (r.allowed_user_ids !== null && r.allowed_user_ids.length) {
      r.allowed_user_ids = [...new Set(r.allowed_user_ids)];
      const users = await findRows(this.db.models.User, { where: { id: { [Op.in]: r.allowed_user_ids } }, attributes: ['id'], transaction: t });
      const have = new Set(users.map((u) => Number(u.id)));
      const missing = r.allowed_user_ids.filter((i) => !have.has(i));
      if (missing.length) f.allowed_user_ids = msg('field.no_such_users', { ids: missing });
    }
    if (Object.keys(f).length) throw await refuse();

    // --- conflicts ---
    const notSelf = selfId === null ? {} : { id: { [Op.ne]: selfId } };
    const dup = (await this.model.findOne({ where: { name: r.name, ...notSelf }, attributes: ['id'], raw: true, transaction: t })) as { id: number } | null;
    if (dup) throw conflict(msg('rdp.name_taken', { name: r.name, id: Number(dup.id) }), { field: 'name', rdp_route_id: Number(dup.id) });
  }

  /**
   * Gateway mode: creates or updates the linked L4 TCP route from the RDP route's fields; another mode
   * deletes it. Returns the RDP columns it sets (gateway_l4_route_id, gateway_listen_port).
   */
  private async syncLinked(r: RdpRoute, before: RdpRoute | null, t: Transaction): Promise<Pick<RdpRoute, 'gateway_l4_route_id' | 'gateway_listen_port'>> {
    const existingId = before?.gateway_l4_route_id ?? null;
    if (r.access_mode !== 'gateway') {
      if (existingId !== null) await this.routes.removeLinked(existingId, t);
      return { gateway_l4_route_id: null, gateway_listen_port: null };
    }
    const input: RouteInput = {
      domain: linkedDomain(r.id),
      description: `RDP route '${r.name}' (id ${r.id}): managed by the RDP route; edit it there`,
      route_type: 'l4',
      target_kind: 'gateway',
      enabled: r.enabled,
      target_peer_id: r.gateway_peer_id,
      target_lan_host: r.target_host,
      target_lan_port: r.target_port,
      l4_protocol: 'tcp',
      l4_listen_port: r.listen_port,
      l4_tls_mode: 'none',
      wol_enabled: r.wol_enabled,
      wol_mac: r.wol_mac,
    };
    try {
      const route = existingId !== null ? await this.routes.updateLinked(existingId, input, t) : await this.routes.createLinked(input, t);
      return { gateway_l4_route_id: route.id, gateway_listen_port: gatewayListenPort(route) };
    } catch (err) {
      throw renameLinkedError(err);
    }
  }
}

/** An error from the linked route's checks, worded with the RDP route's field names. */
function renameLinkedError(err: unknown): unknown {
  if (!(err instanceof AppError)) return err;
  if (err.fields) {
    const fields: Fields = {};
    for (const [k, v] of Object.entries(err.fieldMessages!)) fields[LINKED_FIELD[k] ?? k] = v;
    return new AppError(err.kind, err.msg, fields, err.extra);
  }
  const field = err.extra?.field;
  if (typeof field === 'string' && LINKED_FIELD[field]) return new AppError(err.kind, err.msg, undefined, { ...err.extra, field: LINKED_FIELD[field] });
  return err;
}
