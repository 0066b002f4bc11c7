// Peers: CRUD, address allocation, keys, client configs, hostnames and traffic history. No Koa here.
// Every change that affects the tunnel ends in WireGuardService.reconcilePeer() for that one peer;
// every hostname change (and deleting a peer that had one) ends in DnsService.refresh().
import { internalRouteIds } from '../proxy/exposure-snapshot.js';
import { msg, refOf } from '@gatehouse/common/messages/index.js';
import { Op, UniqueConstraintError, fn, col, where as sqlWhere, type WhereOptions } from 'sequelize';
import type { Deps } from '../deps.js';
import type { PeerRow } from './model.js';
import type { RouteRow } from '../routes/model.js';
import { AppError, conflict, invalidFields, notFound, validation, type FieldMessages } from '../util/errors.js';
import { issueMessage } from '../http/messages.js';
import { limitReached } from '../licence/features.js';

/** 409 for a taken name, with `fields.name` so a form shows it next to the name input. */
const nameConflict = (name: string) => new AppError('conflict', msg('peer.name_taken', { name }), { name: msg('peer.field.name_taken') });
import { generateKeyPair, generatePresharedKey } from '@gatehouse/common/wireguard/keys.js';
import { capacity, formatIPv4, parseIPv4, renderPeerConfig } from '@gatehouse/common/wireguard/render.js';
import type { WireGuardService } from '../wireguard/service.js';
import type { DnsService } from '../dns/service.js';
import { RESERVED_HOSTNAMES } from '../dns/service.js';
import { Mutex } from '../util/mutex.js';
import { series, type Period } from './traffic.js';
import { toPeerView, VIEW_ATTRS, type PeerViewRow } from './view.js';
import type { BatchResult, PeerView } from './schema.js';
import { asBool, findRow, findRows, findRowByPk } from '../db/define.js';
import { hostnameValue, type CreatePeerInput, type ListPeersQuery, type UpdatePeerInput } from './schema.js';
import { hasFilter, peerOrder, peerWhere } from './list.js';
import { parseClientAllowedIps } from './cidr.js';
import { storeSpeedLimit } from '../shaping/schema.js';
import { NO_QUOTA_STATE, storeQuota } from '../quotas/schema.js';
import { scheduleComment } from '../access-windows/text.js';

/** An ASCII file name for a peer's config download ("Jane's Laptop" → "Jane_s_Laptop.conf"). */
export function configFileName(name: string, id: number): string {
  const base = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^A-Za-z0-9._-]+/g, '_')
    .replace(/^[._-]+/, '')
    .replace(/_+$/, '')
    .slice(0, 64);
  return `${base || `peer-${id}`}.conf`;
}

interface Range {
  lo: number;
  hi: number;
}
function cidrRange(cidr: string): Range {
  const [ip, bits] = cidr.split('/');
  const n = parseIPv4(ip)!;
  const b = Number(bits);
  const size = 2 ** (32 - b);
  const lo = b === 0 ? 0 : Math.floor(n / size) * size;
  return { lo, hi: lo + size - 1 };
}
const overlaps = (a: Range, b: Range) => a.lo <= b.hi && b.lo <= a.hi;

export class PeersService {
  private alloc = new Mutex();
  /** peer addresses in use (as integers), loaded from the database on first use */
  private taken: Set<number> | null = null;
  /** no free address below this one */
  private hint = 0;

  constructor(
    private deps: Deps,
    private wg: WireGuardService,
    private dns: DnsService,
    /** re-applied when a peer change alters how its routes render (absent in unit tests of peers alone) */
    private proxy?: { apply(opts?: { routes?: number[]; reason?: string }): Promise<unknown> },
  ) {}

  /**
   * Told of every committed peer change that reaches the tunnel: the peer (its key before the
   * change) and the routes that render from it (the cluster's change feed: the other nodes apply it).
   */
  onTunnelChange: ((peer: { id: number; key: string | null }, routes: number[]) => void) | null = null;

  private get Peer() {
    return this.deps.db.models.Peer;
  }

  private view(r: PeerViewRow): PeerView {
    return toPeerView(r, this.deps.clock(), this.wg.endpoint);
  }

  async getRow(id: number): Promise<PeerRow> {
    const r = await findRowByPk(this.Peer, id, {});
    if (!r) throw notFound(msg('peer.not_found'));
    return r;
  }

  async get(id: number): Promise<PeerView> {
    const r = await findRowByPk(this.Peer, id, { attributes: VIEW_ATTRS });
    if (!r) throw notFound(msg('peer.not_found'));
    return this.view(r);
  }

  /** One page of peers matching the filters in the sort order (peers/list.ts); total counts the matches, totalAll every peer. */
  async list(q: ListPeersQuery): Promise<{ peers: PeerView[]; total: number; totalAll: number }> {
    const now = this.deps.clock();
    const db = this.deps.db;
    const where = peerWhere(db, q, now);
    const [rows, total, totalAll] = await Promise.all([
      findRows(this.Peer, { attributes: VIEW_ATTRS, where, order: peerOrder(db, q.sort), limit: q.limit, offset: q.offset }),
      this.Peer.count({ where }),
      hasFilter(q) ? this.Peer.count() : null,
    ]);
    const endpoint = this.wg.endpoint;
    return { peers: rows.map((r) => toPeerView(r, now, endpoint)), total, totalAll: totalAll ?? total };
  }

  // ---------------------------------------------------------------- allocation

  private get firstHost(): number {
    return this.wg.subnet.base + 2;
  }
  private get lastHost(): number {
    return this.wg.subnet.base + this.wg.subnet.size - 2;
  }

  /** Forget the cached set of taken addresses (a backup restore rewrote the peers table). */
  forgetAddresses(): void {
    this.taken = null;
    this.hint = this.firstHost;
  }

  private async loadTaken(): Promise<Set<number>> {
    const rows = await findRows(this.Peer, { attributes: ['address'] });
    const set = new Set<number>();
    for (const r of rows) {
      const n = parseIPv4(r.address);
      if (n !== null) set.add(n);
    }
    this.taken = set;
    this.hint = this.firstHost;
    return set;
  }

  /** The lowest free peer address, or null when the subnet is full. */
  private nextFree(taken: Set<number>): number | null {
    for (let n = Math.max(this.hint, this.firstHost); n <= this.lastHost; n++) if (!taken.has(n)) return n;
    return null;
  }

  private release(address: string): void {
    const n = parseIPv4(address);
    if (n === null || !this.taken) return;
    this.taken.delete(n);
    if (n < this.hint) this.hint = n;
  }

  private async nameTaken(name: string, exceptId?: number): Promise<boolean> {
    const and: WhereOptions<PeerRow>[] = [sqlWhere(fn('LOWER', col('name')), fn('LOWER', name))];
    if (exceptId) and.push({ id: { [Op.ne]: exceptId } });
    return (await findRow(this.Peer, { attributes: ['id'], where: { [Op.and]: and } })) !== null;
  }

  /** Applies one peer's change to the tunnel; a driver failure is logged and healed by a full resync. */
  private async applyToTunnel(before: Pick<PeerRow, 'id' | 'public_key' | 'name'>): Promise<void> {
    // Routes to a disabled, expired or re-addressed peer render differently: re-apply the proxy
    // (queued and coalesced by ProxyService; a failure is healed by its reconcile loop).
    const proxy = this.proxy;
    // internal routes serve the active gateways' LANs (proxy/exposure-snapshot.ts): they follow every peer change
    const using = proxy ? [...(await this.routesUsing(before.id)), ...(await internalRouteIds(this.deps.db)).map((id) => ({ id }))] : [];
    this.onTunnelChange?.({ id: before.id, key: before.public_key ?? null }, [...new Set(using.map((r) => Number(r.id)))]);
    if (proxy && using.length) {
      // Only these routes' hosts are re-rendered (proxy/apply.ts); routes that list the peer in
      // their ACL follow with the reconcile loop's comparison, as before.
      void proxy
        .apply({ routes: [...new Set(using.map((r) => Number(r.id)))], reason: 'peer changed' })
        .catch((err) => this.deps.log.warn('proxy re-apply after a peer change failed', { peer_id: before.id, err: String(err) }));
    }
    try {
      await this.wg.reconcilePeer(before);
    } catch (err) {
      this.deps.log.error('applying a peer to the WireGuard interface failed', { peer_id: before.id, err: String(err) });
      await this.deps.activity.record({
        severity: 'error',
        source: 'wireguard',
        event_type: 'wg_apply_failed',
        msg: msg('peer.apply_failed', { name: before.name }),
        details: { peer_id: before.id, error: String(err) },
      });
      this.wg.scheduleHeal();
    }
    await this.reconcileNat();
  }

  /** The server's forwarding and NAT for full-tunnel peers (wireguard/nat.ts); a failure is logged, the resync retries. */
  private async reconcileNat(): Promise<void> {
    await this.wg.reconcileNat().catch((err) => this.deps.log.error('reconciling the WireGuard NAT failed', { err: String(err) }));
  }

  // ---------------------------------------------------------------- writes

  /**
   * The checks of a create or update body against the stored peers and groups (a name taken in any
   * case, a group that does not exist), all at once: the endpoints run them on a body whose schema
   * refused other fields too (storedChecks), so that one answer names every bad field.
   */
  async storedProblems(input: { name?: unknown; group_id?: unknown }, exceptId?: number): Promise<FieldMessages> {
    const f: FieldMessages = {};
    const [nameTaken, groupExists] = await Promise.all([
      typeof input.name === 'string' && input.name.trim() !== '' ? this.nameTaken(input.name.trim(), exceptId) : false,
      typeof input.group_id === 'number' && Number.isSafeInteger(input.group_id)
        ? this.deps.db.models.PeerGroup.findByPk(input.group_id, { attributes: ['id'], raw: true }).then((r) => r !== null)
        : true,
    ]);
    if (nameTaken) f.name = msg('peer.field.name_taken');
    if (!groupExists) f.group_id = msg('peer.field.no_such_group');
    return f;
  }

  async create(input: CreatePeerInput, actor?: number): Promise<PeerView> {
    const now = this.deps.clock();
    // every refusal of the body at once: the rules of the combination and the stored state
    const f = await this.storedProblems(input);
    if (input.expires_at != null && input.expires_at <= now) f.expires_at = msg('field.in_future');
    if (input.api_port != null && !input.is_gateway) f.api_port = msg('peer.field.gateway_only_create');
    if (input.client_allowed_ips != null && input.is_gateway) f.client_allowed_ips = msg('peer.field.client_allowed_ips_regular_only');
    if (f.name) throw new AppError('conflict', msg('peer.name_taken', { name: input.name }), f);
    if (Object.keys(f).length) throw invalidFields(f);
    const row = await this.alloc.run(async () => {
      // Licence limit max_peers (gateways included), counted inside the allocation lock.
      const max = this.deps.licence.limits().max_peers;
      if (max !== null && (await this.Peer.count()) >= max) throw limitReached('max_peers', max, 'peers');
      const taken = this.taken ?? (await this.loadTaken());
      // Name uniqueness is enforced by the unique index on LOWER(name): checked when an insert fails.
      for (let attempt = 0; ; attempt++) {
        const n = this.nextFree(this.taken ?? taken);
        if (n === null) {
          throw conflict(msg('peer.subnet_full', { subnet: this.wg.subnet.cidr, capacity: capacity(this.wg.subnet) }));
        }
        const address = formatIPv4(n);
        const kp = generateKeyPair();
        const values: Omit<PeerRow, 'id'> = {
          name: input.name,
          description: input.description ?? null,
          peer_type: input.is_gateway ? 'gateway' : 'regular',
          enabled: true,
          public_key: kp.publicKey,
          private_key_enc: this.deps.crypto.seal(kp.privateKey),
          preshared_key_enc: this.deps.crypto.seal(generatePresharedKey()),
          address,
          allowed_ips: `${address}/32`,
          dns: input.dns ?? null,
          persistent_keepalive: input.persistent_keepalive ?? null,
          tags: input.tags ?? '',
          group_id: input.group_id ?? null,
          hostname: null,
          hostname_source: null,
          hostname_updated_at: null,
          expires_at: input.expires_at ?? null,
          api_port: input.is_gateway ? (input.api_port ?? null) : null,
          total_rx: 0,
          total_tx: 0,
          last_raw_rx: 0,
          last_raw_tx: 0,
          latest_handshake: null,
          endpoint: null,
          config_endpoint: null,
          client_allowed_ips: input.client_allowed_ips?.join(',') ?? null,
          config_client_allowed_ips: null,
          speed_limit: storeSpeedLimit(input.speed_limit ?? null),
          access_schedule: input.access_schedule ? JSON.stringify(input.access_schedule) : null,
          quota: storeQuota(input.quota ?? null),
          ...NO_QUOTA_STATE,
          created_at: now,
          updated_at: now,
        };
        try {
          const created = await this.Peer.create(values);
          (this.taken ?? taken).add(n);
          this.hint = n + 1;
          return { ...values, id: created.get('id') as number } as PeerRow;
        } catch (err) {
          if (!(err instanceof UniqueConstraintError) || attempt >= 5) throw err;
          if (await this.nameTaken(input.name)) throw nameConflict(input.name);
          await this.loadTaken(); // another writer took the address (or, astronomically rarely, the key)
        }
      }
    });
    // the interface (an external command) and the activity row (the database) in parallel
    await Promise.all([
      this.applyToTunnel(row),
      this.deps.events.emit({ type: 'peer_created', peer_id: row.id, name: row.name, address: row.address, peer_type: row.peer_type, actor: actor ?? null }),
    ]);
    // read back: the quota service counts a new peer's quota when it hears peer_created
    return row.quota || row.group_id ? this.get(row.id) : this.view(row);
  }

  private async checkAllowedIps(row: PeerRow, list: string[]): Promise<string> {
    const own = `${row.address}/32`;
    if (!list.includes(own)) throw invalidFields({ allowed_ips: msg('peer.field.own_address_missing', { address: own }) });
    const vpn: Range = { lo: this.wg.subnet.base, hi: this.wg.subnet.base + this.wg.subnet.size - 1 };
    const extra = [...new Set(list.filter((c) => c !== own))];
    for (const c of extra) {
      if (overlaps(cidrRange(c), vpn)) throw invalidFields({ allowed_ips: msg('peer.field.overlaps_subnet', { cidr: c, subnet: this.wg.subnet.cidr }) });
    }
    if (extra.length) {
      const others = await findRows(this.Peer, { attributes: ['id', 'name', 'allowed_ips'], where: { id: { [Op.ne]: row.id } } });
      for (const o of others) {
        for (const oc of o.allowed_ips
          .split(',')
          .map((x) => x.trim())
          .filter(Boolean)) {
          for (const c of extra) {
            if (overlaps(cidrRange(c), cidrRange(oc))) throw conflict(msg('peer.allowed_ips_overlap', { cidr: c, other: oc, peer: o.name }));
          }
        }
      }
    }
    return [own, ...extra].join(',');
  }

  async update(id: number, input: UpdatePeerInput, actor?: number): Promise<PeerView> {
    const before = await this.getRow(id);
    const patch: Partial<PeerRow> = {};
    // a taken name and a missing group in one answer (409 when the name is taken)
    const f = await this.storedProblems({ name: input.name !== before.name ? input.name : undefined, group_id: input.group_id }, id);
    if (f.name) throw new AppError('conflict', msg('peer.name_taken', { name: String(input.name) }), f);
    if (Object.keys(f).length) throw invalidFields(f);
    if (input.name !== undefined && input.name !== before.name) patch.name = input.name;
    if (input.description !== undefined) patch.description = input.description;
    if (input.tags !== undefined) patch.tags = input.tags;
    if (input.group_id !== undefined) patch.group_id = input.group_id;
    if (input.expires_at !== undefined) patch.expires_at = input.expires_at;
    if (input.dns !== undefined) patch.dns = input.dns;
    if (input.enabled !== undefined) patch.enabled = input.enabled;
    if (input.persistent_keepalive !== undefined) patch.persistent_keepalive = input.persistent_keepalive;
    if (input.api_port !== undefined) {
      if (before.peer_type !== 'gateway' && input.api_port !== null) throw invalidFields({ api_port: msg('peer.field.gateway_only') });
      patch.api_port = input.api_port;
    }
    if (input.allowed_ips !== undefined) patch.allowed_ips = await this.checkAllowedIps(before, input.allowed_ips);
    if (input.client_allowed_ips !== undefined) {
      if (before.peer_type === 'gateway' && input.client_allowed_ips !== null)
        throw invalidFields({ client_allowed_ips: msg('peer.field.client_allowed_ips_regular_only') });
      const v = input.client_allowed_ips?.join(',') ?? null;
      if (v !== (before.client_allowed_ips || null)) patch.client_allowed_ips = v;
    }
    if (input.speed_limit !== undefined) {
      const v = storeSpeedLimit(input.speed_limit);
      if (v !== (before.speed_limit ?? null)) patch.speed_limit = v;
    }
    if (input.access_schedule !== undefined) {
      const v = input.access_schedule ? JSON.stringify(input.access_schedule) : null;
      if (v !== (before.access_schedule || null)) patch.access_schedule = v;
    }
    if (input.quota !== undefined) {
      const v = storeQuota(input.quota);
      if (v !== (before.quota || null)) patch.quota = v;
    }
    if (input.regenerate_keys) {
      const kp = generateKeyPair();
      patch.public_key = kp.publicKey;
      patch.private_key_enc = this.deps.crypto.seal(kp.privateKey);
      patch.preshared_key_enc = this.deps.crypto.seal(generatePresharedKey());
    }
    const changed = Object.keys(patch).filter((k) => k !== 'private_key_enc' && k !== 'preshared_key_enc');
    if (!changed.length) return this.view(before);
    patch.updated_at = this.deps.clock();
    try {
      await this.Peer.update(patch, { where: { id } });
    } catch (err) {
      if (err instanceof UniqueConstraintError) throw nameConflict(patch.name ?? before.name);
      throw err;
    }
    const tunnel =
      (patch.enabled !== undefined && patch.enabled !== asBool(before.enabled)) ||
      (patch.expires_at !== undefined && patch.expires_at !== before.expires_at) ||
      (patch.allowed_ips !== undefined && patch.allowed_ips !== before.allowed_ips) ||
      patch.access_schedule !== undefined ||
      patch.public_key !== undefined;
    if (tunnel) await this.applyToTunnel(before);
    else if (patch.client_allowed_ips !== undefined) await this.reconcileNat(); // the server's NAT follows the peers with a full tunnel
    await this.deps.events.emit({ type: 'peer_updated', peer_id: id, name: patch.name ?? before.name, fields: changed, actor: actor ?? null });
    return this.get(id);
  }

  async setEnabled(id: number, enabled: boolean, actor?: number): Promise<PeerView> {
    const before = await this.getRow(id);
    if (asBool(before.enabled) === enabled) return this.view(before);
    await this.Peer.update({ enabled, updated_at: this.deps.clock() }, { where: { id } });
    await this.applyToTunnel(before);
    await this.deps.events.emit({ type: enabled ? 'peer_enabled' : 'peer_disabled', peer_id: id, name: before.name, actor: actor ?? null });
    return this.get(id);
  }

  async toggle(id: number, actor?: number): Promise<PeerView> {
    const before = await this.getRow(id);
    return this.setEnabled(id, !asBool(before.enabled), actor);
  }

  /** Routes that point at a peer (they must be deleted or re-targeted before the peer). */
  async routesUsing(id: number): Promise<Pick<RouteRow, 'id' | 'domain' | 'route_type' | 'l4_listen_port'>[]> {
    return await findRows(this.deps.db.models.Route, {
      attributes: ['id', 'domain', 'route_type', 'l4_listen_port'],
      where: { [Op.or]: [{ peer_id: id }, { target_peer_id: id }, { backend_peer_ids: { [Op.like]: `%,${Number(id)},%` } }] },
      order: [['id', 'ASC']],
    });
  }

  async remove(id: number, actor?: number): Promise<{ id: number; name: string }> {
    const before = await this.getRow(id);
    const routes = await this.routesUsing(id);
    if (routes.length) {
      const names = routes.map((r) => `${r.route_type === 'l4' && r.l4_listen_port ? `port ${r.l4_listen_port}` : r.domain} (#${r.id})`);
      throw conflict(msg('peer.in_use', { name: before.name, routes: names }), {
        routes: routes.map((r) => ({ id: r.id, domain: r.domain, route_type: r.route_type })),
      });
    }
    await this.Peer.destroy({ where: { id } });
    await this.applyToTunnel(before);
    this.release(before.address);
    if (before.hostname) await this.dns.refresh();
    await this.deps.events.emit({ type: 'peer_deleted', peer_id: id, name: before.name, address: before.address, actor: actor ?? null });
    return { id, name: before.name };
  }

  async batch(action: 'enable' | 'disable' | 'delete', ids: number[], actor?: number): Promise<{ results: BatchResult[]; succeeded: number; failed: number }> {
    const results: BatchResult[] = [];
    for (const id of [...new Set(ids)]) {
      try {
        if (action === 'delete') {
          await this.remove(id, actor);
          results.push({ id, ok: true, status: 200, deleted: true });
        } else {
          const p = await this.setEnabled(id, action === 'enable', actor);
          results.push({ id, ok: true, status: 200, enabled: p.enabled });
        }
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        results.push({ id, ok: false, status: err.kind === 'not_found' ? 404 : err.kind === 'conflict' ? 409 : 400, error: err.msg.text, ...refOf(err.msg) });
      }
    }
    const succeeded = results.filter((r) => r.ok).length;
    return { results, succeeded, failed: results.length - succeeded };
  }

  // ---------------------------------------------------------------- client config

  /**
   * The peer's wg-quick config. AllowedIPs: the peer's client_allowed_ips when set, else `allowedIps`
   * (the desktop client's split tunnel), else the VPN subnet.
   */
  async config(id: number, opts: { allowedIps?: string[] } = {}): Promise<{ name: string; filename: string; text: string }> {
    return this.configOf(await this.getRow(id), opts);
  }

  /** config() of a row the caller already read (the desktop clients render many from one query). */
  async configOf(r: PeerRow, opts: { allowedIps?: string[] } = {}): Promise<{ name: string; filename: string; text: string }> {
    if (!r.private_key_enc) throw conflict(msg('peer.no_private_key', { name: r.name }));
    const { publicKey } = await this.wg.serverKeys();
    const dns = r.dns ?? this.deps.config.wg.dns;
    const endpoint = this.wg.endpoint;
    const text = renderPeerConfig({
      comment: [...configComment(r, endpoint, this.deps.config.adminDomain), ...scheduleComment(r.access_schedule, this.deps.clock())],
      privateKey: this.deps.crypto.open(r.private_key_enc),
      address: `${r.address}/32`,
      dns: dns || undefined,
      serverPublicKey: publicKey,
      presharedKey: r.preshared_key_enc ? this.deps.crypto.open(r.preshared_key_enc) : undefined,
      endpoint,
      allowedIps: parseClientAllowedIps(r.client_allowed_ips) ?? opts.allowedIps ?? [this.wg.subnet.cidr],
      persistentKeepalive: r.persistent_keepalive ?? 25,
    });
    await this.markConfigHandedOut(r, endpoint);
    return { name: r.name, filename: configFileName(r.name, Number(r.id)), text };
  }

  /**
   * Remembers the Endpoint of the config just handed out (peers.config_endpoint): when this server's
   * endpoint changes later, the peer view says config_outdated until a new config is handed out. So
   * it does when client_allowed_ips changes later (peers.config_client_allowed_ips keeps it as it was).
   */
  async markConfigHandedOut(r: Pick<PeerRow, 'id' | 'config_endpoint' | 'client_allowed_ips' | 'config_client_allowed_ips'>, endpoint: string): Promise<void> {
    const client = r.client_allowed_ips || null;
    if (r.config_endpoint === endpoint && (r.config_client_allowed_ips || null) === client) return;
    await this.Peer.update({ config_endpoint: endpoint, config_client_allowed_ips: client }, { where: { id: r.id } });
    r.config_endpoint = endpoint;
    r.config_client_allowed_ips = client;
  }

  async qr(id: number): Promise<{ name: string; qr: string; config: string }> {
    const c = await this.config(id);
    const { default: QRCode } = await import('qrcode'); // loaded when first asked, not at every start
    const qr = await QRCode.toDataURL(c.text, { type: 'image/png', errorCorrectionLevel: 'M', margin: 2, width: 400 });
    return { name: c.name, qr, config: c.text };
  }

  // ---------------------------------------------------------------- hostnames

  private async assertHostnameFree(hostname: string, id: number): Promise<void> {
    if (RESERVED_HOSTNAMES.has(hostname)) throw invalidFields({ hostname: msg('peer.field.hostname_reserved', { hostname }) });
    const other = await findRow(this.Peer, {
      attributes: ['id', 'name'],
      where: { [Op.and]: [sqlWhere(fn('LOWER', col('hostname')), hostname), { id: { [Op.ne]: id } }] },
    });
    if (other)
      throw new AppError('conflict', msg('peer.hostname_taken', { hostname, peer: other.name }), {
        hostname: msg('peer.field.hostname_taken', { peer: other.name }),
      });
  }

  /**
   * PATCH /peers/:id/hostname (admin). A value makes the hostname admin-owned ("sticky": agent
   * reports no longer replace it); empty string or null removes it.
   */
  async setAdminHostname(id: number, hostname: string | null, actor?: number): Promise<PeerView> {
    const before = await this.getRow(id);
    const now = this.deps.clock();
    if (!hostname) {
      await this.Peer.update({ hostname: null, hostname_source: null, hostname_updated_at: now, updated_at: now }, { where: { id } });
    } else {
      await this.assertHostnameFree(hostname, id);
      await this.Peer.update({ hostname, hostname_source: 'admin', hostname_updated_at: now, updated_at: now }, { where: { id } });
    }
    await this.dns.refresh();
    await this.deps.activity.record({
      source: 'dns',
      event_type: hostname ? 'peer_hostname_set' : 'peer_hostname_removed',
      msg: hostname
        ? msg('peer.hostname_set', { name: before.name, fqdn: `${hostname}.${this.deps.config.dnsDomain}` })
        : msg('peer.hostname_removed', { name: before.name }),
      details: { peer_id: id, hostname: hostname || null, previous: before.hostname, previous_source: before.hostname_source },
      user_id: actor ?? null,
    });
    return this.get(id);
  }

  /**
   * A hostname reported by the peer's agent (desktop client / gateway companion). Never replaces an
   * admin hostname (applied: false). An empty name clears an agent hostname.
   */
  async setAgentHostname(peerId: number, name: string | null): Promise<{ applied: boolean; reason?: string; peer: PeerView }> {
    const parsed = hostnameValue.nullable().safeParse(name);
    if (!parsed.success)
      throw validation(msg('request.validation_failed'), { hostname: parsed.error.issues[0] ? issueMessage(parsed.error.issues[0]) : msg('field.invalid') });
    const hostname = parsed.data || null;
    const before = await this.getRow(peerId);
    if (before.hostname && before.hostname_source === 'admin') {
      return { applied: false, reason: msg('peer.hostname_admin_set').text, peer: this.view(before) };
    }
    const now = this.deps.clock();
    if (hostname) await this.assertHostnameFree(hostname, peerId);
    await this.Peer.update(
      hostname ? { hostname, hostname_source: 'agent', hostname_updated_at: now } : { hostname: null, hostname_source: null, hostname_updated_at: now },
      { where: { id: peerId } },
    );
    if (hostname !== before.hostname) {
      await this.dns.refresh();
      await this.deps.activity.record({
        source: 'dns',
        event_type: 'peer_hostname_reported',
        msg: msg('peer.hostname_reported', { name: before.name, hostname: hostname ?? null }),
        details: { peer_id: peerId, hostname, previous: before.hostname },
      });
    }
    return { applied: true, peer: await this.get(peerId) };
  }

  // ---------------------------------------------------------------- traffic

  async traffic(id: number, period: Period) {
    await this.getRow(id);
    return series(this.deps.db.sequelize, period, this.deps.clock(), id);
  }
}

/**
 * The comment at the top of a peer config: the endpoint it carries and where a fresh one comes from
 * once this server's public host or port changes (the peer's page in the admin UI).
 */
export function configComment(r: Pick<PeerRow, 'id' | 'name'>, endpoint: string, adminDomain?: string): string[] {
  const page = adminDomain ? `https://${adminDomain}/peers/${r.id}` : `the admin UI, Peers → ${r.name} (/peers/${r.id})`;
  return [
    `Gatehouse WireGuard config for peer "${r.name}" (#${r.id}), made for the endpoint ${endpoint} (this server's public host and WireGuard port when this file was made).`,
    `If the server's public host or port changes, this file stops connecting: download a fresh config from ${page}.`,
  ];
}
