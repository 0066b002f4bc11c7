// Desktop clients: machines registered with a client token (client_machines), their peers, their
// tunnel configs with the split tunnel applied, heartbeats, status, hostname reports, and what a
// client may see (peer-info, services, traffic). No Koa here; docs/guides/desktop-client.md.
//
// - A machine is (token, SHA-256 of the X-Machine-Fingerprint header). Registering creates the
//   machine's peer (named after its hostname, made unique), or uses the peer an admin bound the
//   token to (api_tokens.peer_id); registering again from the same machine returns the same peer.
// - The idle poll (config/check) is answered from memory: the machine by (token, fingerprint) and
//   the rendered config's hash per machine are cached. Any write to the peers table (rows_changed),
//   a token change (token_updated/revoked/fingerprint reset), a client-settings change and a backup
//   restore drop the caches; a fill that raced with an invalidation is not stored (generation).
import { msg } from '@gatehouse/common/messages/index.js';
import crypto from 'node:crypto';
import dns from 'node:dns';
import { Op, QueryTypes, UniqueConstraintError } from 'sequelize';
import type { Deps } from '../deps.js';
import type { PeerRow } from '../peers/model.js';
import type { Principal } from '../http/auth.js';
import { AppError, conflict, notFound, validation } from '../util/errors.js';
import { isoOrNull as iso } from '../util/dates.js';
import type { PeersService } from '../peers/service.js';
import type { WireGuardService } from '../wireguard/service.js';
import type { DnsService } from '../dns/service.js';
import { Mutex } from '../util/mutex.js';
import { isOnline } from '../peers/view.js';
import { asBool, findRows, findRowByPk } from '../db/define.js';
import { rowToRoute } from '../routes/model.js';
import type { Period } from '../peers/traffic.js';
import { protectedRouteIds } from '../route-auth/models.js';
import { FINGERPRINT_HEADER } from '../http/auth.js';
import { sha256 } from '../util/crypto.js';
import { APP_VERSION } from '../version.js';
import type { ClientMachineRow } from './model.js';
import { parseClientAllowedIps } from '../peers/cidr.js';
import { STATUS_MAX_BYTES, type HeartbeatInput, type MachineView, type RegisterInput, type SplitTunnel, type UpdateInfo } from './schema.js';

import { SPLIT_TUNNEL_SETTING } from './split-tunnel-setting.js';
export { SPLIT_TUNNEL_SETTING };
export const UPDATE_SETTING = 'client.update';
/** last_seen_at is written at most this often per machine by the idle poll. */
const SEEN_WRITE_MS = 60_000;
const DNS_TIMEOUT_MS = 3000;
/** pending last_seen_at values are written this often */
const SEEN_FLUSH_MS = 5000;

interface Inputs {
  gen: number;
  /** peer id → row, for every peer a registered machine uses */
  peers: Map<number, PeerRow>;
  /** token id → its split_tunnel override (tokens without one are absent) */
  split: Map<number, string[] | null>;
}

/** The peer columns the client API reads. */
const PEER_ATTRS = ['id', 'name', 'address', 'enabled', 'expires_at', 'latest_handshake', 'hostname', 'hostname_source', 'group_id', 'peer_type'] as const;
type ClientPeer = Pick<PeerRow, (typeof PEER_ATTRS)[number]>;

type ClientPrincipal = Extract<Principal, { kind: 'client' }>;

export interface RenderedConfig {
  peerId: number;
  text: string;
  hash: string;
  filename: string;
  allowedIps: string[];
}

const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

function normalize(r: ClientMachineRow): ClientMachineRow {
  return {
    ...r,
    id: Number(r.id),
    token_id: Number(r.token_id),
    peer_id: num(r.peer_id),
    last_seen_at: num(r.last_seen_at),
    handshake_age_s: num(r.handshake_age_s),
    rx_bytes: num(r.rx_bytes),
    tx_bytes: num(r.tx_bytes),
    status_at: num(r.status_at),
    created_at: Number(r.created_at),
    updated_at: Number(r.updated_at),
  };
}

function parseJson<T>(v: string | null | undefined): T | null {
  if (!v) return null;
  try {
    return JSON.parse(v) as T;
  } catch {
    return null;
  }
}

/** A peer name from a machine hostname: the characters peer names allow, at most `max`. */
export function peerNameFromHostname(hostname: string, max = 58): string {
  const cleaned = hostname
    .normalize('NFKC')
    .replace(/[^\p{L}\p{N}\p{M} ._@()+'-]+/gu, '-')
    .replace(/^[^\p{L}\p{N}]+/u, '')
    .replace(/-+/g, '-')
    .trim();
  const cut = [...cleaned]
    .slice(0, max)
    .join('')
    .replace(/[\s._-]+$/, '');
  return cut || 'client';
}

export class ClientService {
  private readonly register$ = new Mutex();
  /** `${tokenId}:${fingerprintHash}` → the machine row (null: not registered) */
  private machines = new Map<string, ClientMachineRow | null>();
  /** machine id → its rendered config */
  private configs = new Map<number, RenderedConfig>();
  /**
   * What configs are rendered from, read with two queries per generation (not one per client): the
   * peer rows of every registered machine and the tokens' split-tunnel overrides.
   */
  private inputs: Inputs | null = null;
  private loading: { gen: number; p: Promise<Inputs> } | null = null;
  /** bumped by every invalidation of peers, tokens or settings: a fill that raced with one is not stored */
  private gen = 0;
  /** bumped when one machine row changes (register): a machine-cache fill that raced with it is not stored */
  private machineGen = 0;
  /** machine id → last_seen_at not yet written (flushed in one UPDATE every SEEN_FLUSH_MS) */
  private dirtySeen = new Map<number, number>();
  private seenTimer: NodeJS.Timeout | null = null;
  /** the server's resolver (its /etc/resolv.conf servers) for dns-check; tests point one at a loopback DNS server */
  resolver = new dns.promises.Resolver({ timeout: DNS_TIMEOUT_MS, tries: 1 });

  constructor(
    private readonly deps: Deps,
    private readonly peers: PeersService,
    private readonly wg: WireGuardService,
    private readonly dnsService: DnsService,
  ) {
    // a peer deleted: machines that used it lost it (FK SET NULL); any other peer write changes configs only
    deps.events.on('rows_changed', (e) => {
      if (e.table === 'peers') this.invalidate(e.destroyed ? 'all' : 'configs');
    });
    deps.events.on(['token_revoked', 'token_fingerprint_reset', 'token_updated'], () => {
      this.invalidate('configs');
      this.natFollows();
    });
  }

  /** A split tunnel of 0.0.0.0/0 (server default or a token's) needs the server's NAT (wireguard/nat.ts). */
  private natFollows(): void {
    void this.wg.reconcileNat().catch((err) => this.deps.log.warn('reconciling the WireGuard NAT failed', { err: String(err) }));
  }

  private get Machine() {
    return this.deps.db.models.ClientMachine;
  }

  /**
   * Drops the rendered configs and their inputs (peers, tokens or settings changed), and with 'all'
   * the machine rows too (a peer was deleted, a backup was restored).
   */
  invalidate(what: 'all' | 'configs' = 'all'): void {
    this.gen++;
    this.configs.clear();
    this.inputs = null;
    if (what === 'all') {
      this.machineGen++;
      this.machines.clear();
    }
  }

  // ---------------------------------------------------------------- machines

  static fingerprintHash(raw: string): string {
    return sha256(raw.trim());
  }

  /** The fingerprint header's hash; 400 with fields when the header is missing. */
  requireFingerprint(raw: string | undefined): string {
    if (!raw || !raw.trim())
      throw validation(msg('token.fingerprint_required', { header: FINGERPRINT_HEADER }), { [FINGERPRINT_HEADER]: msg('token.field.fingerprint_required') });
    if (raw.length > 512)
      throw validation(msg('token.fingerprint_too_long', { header: FINGERPRINT_HEADER }), { [FINGERPRINT_HEADER]: msg('field.max_chars', { max: 512 }) });
    return ClientService.fingerprintHash(raw);
  }

  private async machineByHash(tokenId: number, fp: string): Promise<ClientMachineRow | null> {
    const key = `${tokenId}:${fp}`;
    const hit = this.machines.get(key);
    if (hit !== undefined) return hit;
    const gen = this.machineGen;
    const row = (await this.Machine.findOne({ where: { token_id: tokenId, fingerprint: fp }, raw: true })) as ClientMachineRow | null;
    const m = row ? normalize(row) : null;
    if (gen === this.machineGen) {
      if (this.machines.size > 200_000) this.machines.clear();
      this.machines.set(key, m);
    }
    return m;
  }

  /** The registered machine of a client principal and fingerprint header value, or null (interface for the RDP client endpoints). */
  async forPrincipal(principal: Principal | undefined, fingerprint: string | undefined): Promise<ClientMachineRow | null> {
    if (principal?.kind !== 'client' || !fingerprint || !fingerprint.trim()) return null;
    return this.machineByHash(principal.tokenId, ClientService.fingerprintHash(fingerprint));
  }

  /** The calling machine; 400 without the fingerprint header, 404 when it has not registered. */
  async requireMachine(p: ClientPrincipal, fingerprint: string | undefined): Promise<ClientMachineRow> {
    const m = await this.machineByHash(p.tokenId, this.requireFingerprint(fingerprint));
    if (!m) throw new AppError('not_found', msg('client.not_registered'));
    return m;
  }

  private requirePeer(m: ClientMachineRow): number {
    if (m.peer_id === null) throw conflict(msg('client.peer_deleted'));
    return m.peer_id;
  }

  private cacheMachine(m: ClientMachineRow): void {
    this.machines.set(`${m.token_id}:${m.fingerprint}`, m);
  }

  private async peerRows(ids: number[]): Promise<Map<number, ClientPeer>> {
    if (!ids.length) return new Map();
    const rows = await findRows(this.deps.db.models.Peer, { attributes: PEER_ATTRS, where: { id: { [Op.in]: ids } } });
    return new Map(rows.map((r) => [Number(r.id), r]));
  }

  view(m: ClientMachineRow, peer?: ClientPeer | null): MachineView {
    return {
      id: m.id,
      token_id: m.token_id,
      peer_id: m.peer_id,
      peer_name: peer?.name ?? null,
      peer_address: peer?.address ?? null,
      hostname: m.hostname,
      hostname_source: m.hostname_source === 'admin' ? 'admin' : 'agent',
      platform: m.platform,
      client_version: m.client_version,
      last_seen_at: iso(m.last_seen_at),
      handshake_age_s: m.handshake_age_s,
      rx_bytes: m.rx_bytes,
      tx_bytes: m.tx_bytes,
      status: parseJson<Record<string, unknown>>(m.status_json),
      status_at: iso(m.status_at),
      created_at: iso(m.created_at)!,
    };
  }

  /** A free peer name for a machine: its hostname, then hostname-2, -3, ... */
  private async createPeer(hostname: string, actor: number | undefined): Promise<PeerRow> {
    const base = peerNameFromHostname(hostname);
    for (let i = 1; i <= 50; i++) {
      const name = i === 1 ? base : `${base}-${i}`;
      try {
        const v = await this.peers.create({ name, description: `Desktop client ${hostname}`.slice(0, 500) }, actor);
        return this.peers.getRow(v.id);
      } catch (err) {
        if (err instanceof AppError && err.kind === 'conflict' && err.fields?.name) continue;
        throw err;
      }
    }
    throw conflict(msg('client.no_free_name', { hostname }));
  }

  /**
   * POST /client/register: the machine (token + fingerprint) with its peer. created: false when the
   * machine was registered already and still has its peer (the row's hostname/platform/version are
   * refreshed).
   */
  async register(
    p: ClientPrincipal,
    fingerprint: string | undefined,
    input: RegisterInput,
  ): Promise<{ created: boolean; machine: MachineView; peer: { id: number; name: string; address: string; enabled: boolean }; config_hash: string }> {
    const fp = this.requireFingerprint(fingerprint);
    return this.register$.run(async () => {
      const now = this.deps.clock();
      const existing = (await this.Machine.findOne({ where: { token_id: p.tokenId, fingerprint: fp }, raw: true })) as ClientMachineRow | null;
      let peer: ClientPeer | null = null;
      const existingPeer = existing?.peer_id != null ? Number(existing.peer_id) : null;
      if (existingPeer !== null) peer = (await this.peerRows([existingPeer])).get(existingPeer) ?? null;
      let created = false;
      if (!peer) {
        if (p.peerId !== null) {
          peer = (await this.peerRows([p.peerId])).get(p.peerId) ?? null;
          if (!peer) throw conflict(msg('client.bound_peer_gone'));
        } else {
          peer = await this.createPeer(input.hostname, p.userId ?? undefined);
        }
        created = true;
      }
      const fields = {
        hostname: input.hostname,
        platform: input.platform,
        client_version: input.client_version,
        last_seen_at: now,
        updated_at: now,
        peer_id: Number(peer.id),
      };
      let id: number;
      if (existing) {
        await this.Machine.update(fields, { where: { id: existing.id } });
        id = Number(existing.id);
      } else {
        try {
          const row = await this.Machine.create({ token_id: p.tokenId, fingerprint: fp, hostname_source: 'agent', created_at: now, ...fields });
          id = row.get('id') as number;
        } catch (err) {
          // the token was deleted meanwhile (foreign key) or another process registered the same machine
          if (err instanceof UniqueConstraintError) throw conflict(msg('client.registered_concurrently'));
          throw err;
        }
      }
      this.invalidateMachine(p.tokenId, fp, id);
      const found = await findRowByPk(this.Machine, id);
      if (!found) throw notFound(msg('resource.not_found', { what: 'Machine' }));
      const row = normalize(found);
      if (created) {
        await this.deps.events.emit({
          type: 'client_registered',
          machine_id: id,
          token_id: p.tokenId,
          peer_id: Number(peer.id),
          peer_name: peer.name,
          hostname: input.hostname,
          platform: input.platform,
          client_version: input.client_version,
          new_machine: !existing,
          actor: p.userId ?? null,
        });
      }
      const rendered = await this.rendered(row);
      return {
        created,
        machine: this.view(row, peer),
        peer: { id: Number(peer.id), name: peer.name, address: peer.address, enabled: asBool(peer.enabled) },
        config_hash: rendered.hash,
      };
    });
  }

  private invalidateMachine(tokenId: number, fp: string, id: number): void {
    this.machineGen++;
    this.machines.delete(`${tokenId}:${fp}`);
    this.configs.delete(id);
  }

  /** The render inputs of the current generation (coalesced: concurrent misses share one load). */
  private async renderInputs(): Promise<Inputs> {
    const gen = this.gen;
    if (this.inputs?.gen === gen) return this.inputs;
    if (this.loading?.gen !== gen) {
      const p = (async (): Promise<Inputs> => {
        const db = this.deps.db;
        const [peerRows, tokenRows] = await Promise.all([
          db.sequelize.query('SELECT p.* FROM peers p WHERE p.id IN (SELECT m.peer_id FROM client_machines m WHERE m.peer_id IS NOT NULL)', {
            type: QueryTypes.SELECT,
          }) as Promise<PeerRow[]>,
          db.sequelize.query('SELECT id, split_tunnel FROM api_tokens WHERE split_tunnel IS NOT NULL', { type: QueryTypes.SELECT }) as Promise<
            { id: number; split_tunnel: string }[]
          >,
        ]);
        const inputs: Inputs = {
          gen,
          peers: new Map(peerRows.map((r) => [Number(r.id), r])),
          split: new Map(tokenRows.map((r) => [Number(r.id), parseJson<string[]>(r.split_tunnel)])),
        };
        if (gen === this.gen) this.inputs = inputs;
        return inputs;
      })();
      this.loading = { gen, p };
      p.catch(() => undefined).finally(() => {
        if (this.loading?.p === p) this.loading = null;
      });
    }
    return this.loading!.p;
  }

  // ---------------------------------------------------------------- config

  /** The effective split tunnel of a token: its override, else the server default, else the VPN subnet only. */
  async splitTunnel(tokenId: number): Promise<SplitTunnel> {
    const own = (await this.renderInputs()).split.get(tokenId) ?? null;
    const server = await this.deps.settings.get<string[] | null>(SPLIT_TUNNEL_SETTING, null);
    const source: SplitTunnel['source'] = own ? 'token' : server ? 'server' : 'default';
    const ranges = own ?? server ?? [];
    const vpn = this.wg.subnet.cidr;
    const full = ranges.includes('0.0.0.0/0');
    const allowed = full ? ['0.0.0.0/0'] : [...new Set([vpn, ...ranges])];
    return { allowed_ips: allowed, ranges, source, full_tunnel: full, vpn_subnet: vpn };
  }

  /** The machine's config text and hash (cached per machine until peers, tokens or settings change). */
  async rendered(m: ClientMachineRow): Promise<RenderedConfig> {
    const hit = this.configs.get(m.id);
    if (hit && hit.peerId === m.peer_id) return hit;
    const gen = this.gen;
    const peerId = this.requirePeer(m);
    const inputs = await this.renderInputs();
    const split = await this.splitTunnel(m.token_id);
    let row = inputs.peers.get(peerId);
    if (!row) {
      // registered after the inputs were read (a token-bound peer, or a new machine): read it alone
      row = await this.peers.getRow(peerId);
      if (inputs.gen === this.gen) inputs.peers.set(peerId, row);
    }
    // the peer's own client_allowed_ips (set by an admin) win over the token's and the server's split tunnel
    const allowedIps = parseClientAllowedIps(row.client_allowed_ips) ?? split.allowed_ips;
    const c = await this.peers.configOf(row, { allowedIps });
    const r: RenderedConfig = {
      peerId,
      text: c.text,
      filename: c.filename,
      hash: `sha256:${crypto.createHash('sha256').update(c.text).digest('hex')}`,
      allowedIps,
    };
    if (gen === this.gen && inputs.gen === gen) this.configs.set(m.id, r);
    return r;
  }

  /** GET /client/config/check: unchanged (304) or the current hash. Marks the machine seen (written at most once a minute). */
  async check(m: ClientMachineRow, hash: string | undefined): Promise<{ changed: boolean; config_hash: string }> {
    const r = await this.rendered(m);
    this.seen(m);
    return { changed: hash !== r.hash, config_hash: r.hash };
  }

  private seen(m: ClientMachineRow): void {
    const now = this.deps.clock();
    if (m.last_seen_at !== null && now - m.last_seen_at < SEEN_WRITE_MS) return;
    m.last_seen_at = now;
    this.dirtySeen.set(m.id, now);
    this.seenTimer ??= setTimeout(() => void this.flushSeen(), SEEN_FLUSH_MS);
    this.seenTimer.unref?.();
  }

  /** Writes the pending last_seen_at values: one UPDATE per distinct second, not one per machine. */
  async flushSeen(): Promise<void> {
    if (this.seenTimer) clearTimeout(this.seenTimer);
    this.seenTimer = null;
    const pending = this.dirtySeen;
    this.dirtySeen = new Map();
    const bySecond = new Map<number, number[]>();
    for (const [id, at] of pending) {
      const k = Math.floor(at / 1000) * 1000;
      (bySecond.get(k) ?? bySecond.set(k, []).get(k)!).push(id);
    }
    for (const [at, ids] of bySecond) {
      for (let i = 0; i < ids.length; i += 500) {
        await this.Machine.update({ last_seen_at: at }, { where: { id: { [Op.in]: ids.slice(i, i + 500) } } }).catch((err) =>
          this.deps.log.warn('client last_seen_at not written', { machines: ids.length, err: String(err) }),
        );
      }
    }
  }

  // ---------------------------------------------------------------- reports

  async heartbeat(m: ClientMachineRow, b: HeartbeatInput): Promise<{ config_hash: string; server_time: number }> {
    const now = this.deps.clock();
    const patch: Partial<ClientMachineRow> = {
      handshake_age_s: b.handshake_age_s,
      rx_bytes: b.rx_bytes,
      tx_bytes: b.tx_bytes,
      last_seen_at: now,
      updated_at: now,
    };
    if (b.hostname !== undefined) patch.hostname = b.hostname;
    this.dirtySeen.delete(m.id);
    await this.Machine.update(patch, { where: { id: m.id } });
    Object.assign(m, patch);
    this.cacheMachine(m);
    const r = await this.rendered(m);
    return { config_hash: r.hash, server_time: now };
  }

  async status(m: ClientMachineRow, body: Record<string, unknown>): Promise<{ stored_bytes: number; status_at: string }> {
    const json = JSON.stringify(body);
    const bytes = Buffer.byteLength(json);
    if (bytes > STATUS_MAX_BYTES) throw new AppError('payload_too_large', msg('client.status_too_large', { max_bytes: STATUS_MAX_BYTES }));
    const now = this.deps.clock();
    await this.Machine.update({ status_json: json, status_at: now, last_seen_at: now, updated_at: now }, { where: { id: m.id } });
    Object.assign(m, { status_json: json, status_at: now, last_seen_at: now, updated_at: now });
    this.cacheMachine(m);
    return { stored_bytes: bytes, status_at: iso(now)! };
  }

  /** POST /client/peer/hostname: the agent's DNS name for its peer (sticky admin: never replaces an admin name). */
  async reportHostname(
    m: ClientMachineRow,
    hostname: string | null,
  ): Promise<{ applied: boolean; reason?: string; hostname: string | null; hostname_source: 'admin' | 'agent' | null; fqdn: string | null }> {
    const peerId = this.requirePeer(m);
    const r = await this.peers.setAgentHostname(peerId, hostname);
    const source = r.peer.hostname ? r.peer.hostname_source : null;
    const machineSource = source === 'admin' ? 'admin' : 'agent';
    if (m.hostname_source !== machineSource) {
      await this.Machine.update({ hostname_source: machineSource, updated_at: this.deps.clock() }, { where: { id: m.id } });
      m.hostname_source = machineSource;
    }
    return {
      applied: r.applied,
      ...(r.reason ? { reason: r.reason } : {}),
      hostname: r.peer.hostname,
      hostname_source: source,
      fqdn: r.peer.hostname ? `${r.peer.hostname}.${this.deps.config.dnsDomain}` : null,
    };
  }

  // ---------------------------------------------------------------- what the client sees

  /** The peers a client may look up: its own peer(s), and the peers of the same peer group as its own peer. */
  async peerInfo(p: ClientPrincipal, m: ClientMachineRow | null, peerId: number) {
    const own = [m?.peer_id ?? null, p.peerId].filter((x): x is number => x !== null);
    const rows = await this.peerRows([...new Set([...own, peerId])]);
    const target = rows.get(peerId);
    const groups = new Set(
      own
        .map((id) => rows.get(id)?.group_id)
        .filter((g): g is number => g !== null && g !== undefined)
        .map(Number),
    );
    const visible = target && (own.includes(peerId) || (target.group_id !== null && groups.has(Number(target.group_id))));
    // 404 for both "no such peer" and "not yours": a client cannot probe which ids exist
    if (!visible) throw notFound(msg('resource.not_found', { what: 'Peer' }));
    return {
      id: Number(target.id),
      name: target.name,
      address: target.address,
      hostname: target.hostname ?? null,
      fqdn: target.hostname ? `${target.hostname}.${this.deps.config.dnsDomain}` : null,
      online: isOnline(target, this.deps.clock()),
      is_gateway: target.peer_type === 'gateway',
    };
  }

  async traffic(m: ClientMachineRow, period: Period) {
    const peerId = this.requirePeer(m);
    return { peer_id: peerId, ...(await this.peers.traffic(peerId, period)) };
  }

  /**
   * The enabled routes this client may use: a route whose ACL lists its peer (access `acl`); else,
   * for a route behind a sign-in (route auth or basic auth), only when the route lists the token's
   * user (`user`); else a route with neither ACL nor sign-in (`open`). A route whose ACL is on and
   * does not list the peer is left out.
   */
  async services(p: ClientPrincipal, m: ClientMachineRow | null) {
    const peerIds = new Set([m?.peer_id ?? null, p.peerId].filter((x): x is number => x !== null));
    const rows = await findRows(this.deps.db.models.Route, { where: { enabled: true }, order: [['id', 'ASC']] });
    const guarded = await protectedRouteIds(this.deps.db.models);
    const host = this.deps.publicHost.configured() ?? this.deps.publicHost.publicIp().value;
    const out = [];
    for (const row of rows) {
      const r = rowToRoute(row);
      const login = guarded.has(r.id) || !!r.basic_auth_user;
      let access: 'acl' | 'user' | 'open';
      if (r.acl_enabled) {
        if (!r.acl_peer_ids.some((id) => peerIds.has(id))) continue;
        access = 'acl';
      } else if (login) {
        if (p.userId === null || !r.user_ids.includes(p.userId)) continue;
        access = 'user';
      } else {
        access = 'open';
      }
      const http = r.route_type === 'http';
      const protocol = http ? (r.https_enabled ? 'https' : 'http') : (r.l4_protocol ?? 'tcp');
      out.push({
        route_id: r.id,
        name: r.domain,
        description: r.description,
        route_type: r.route_type,
        protocol: protocol as 'http' | 'https' | 'tcp' | 'udp',
        url: http ? `${protocol}://${r.domain}` : null,
        host: http ? r.domain : (host ?? r.domain),
        port: http ? null : r.l4_listen_port,
        access,
        requires_login: login,
      });
    }
    return { peer_id: m?.peer_id ?? p.peerId ?? null, services: out };
  }

  /** GET /client/dns-check: names of the internal zone from the peers' hostnames, every other name through the server's resolver (A and AAAA). */
  async dnsCheck(domain: string) {
    const started = Date.now();
    const zone = this.deps.config.dnsDomain;
    const done = (o: { found: boolean; source: 'internal' | 'system'; addresses: { address: string; family: 4 | 6 }[]; error: string | null }) => ({
      domain,
      ...o,
      duration_ms: Date.now() - started,
    });
    if (domain === zone || domain.endsWith(`.${zone}`)) {
      const recs = await this.dnsService.records();
      const hit = [...recs.static, ...recs.peers].filter((r) => r.fqdn === domain && (!('enabled' in r) || r.enabled === 1));
      return done({
        found: hit.length > 0,
        source: 'internal',
        addresses: hit.map((r) => ({ address: r.address, family: 4 as const })),
        error: hit.length ? null : 'NXDOMAIN',
      });
    }
    const [v4, v6] = await Promise.allSettled([this.resolver.resolve4(domain), this.resolver.resolve6(domain)]);
    const addresses = [
      ...(v4.status === 'fulfilled' ? v4.value.map((address) => ({ address, family: 4 as const })) : []),
      ...(v6.status === 'fulfilled' ? v6.value.map((address) => ({ address, family: 6 as const })) : []),
    ];
    const code = (r: PromiseSettledResult<string[]>) =>
      r.status === 'rejected' ? String((r.reason as { code?: string }).code ?? (r.reason as Error).message) : null;
    return done({ found: addresses.length > 0, source: 'system', addresses, error: addresses.length ? null : (code(v4) ?? code(v6) ?? 'ENODATA') });
  }

  /** GET /client/update: the announcement from the settings, else the environment, else the server's own version. */
  async update(): Promise<UpdateInfo> {
    const s = await this.deps.settings.get<{ version: string; download_url: string; notes?: string | null } | null>(UPDATE_SETTING, null);
    if (s) return { version: s.version, download_url: s.download_url, notes: s.notes ?? null, source: 'settings' };
    const env = this.deps.config.client;
    if (env.version || env.downloadUrl) return { version: env.version ?? APP_VERSION, download_url: env.downloadUrl ?? null, notes: null, source: 'env' };
    return { version: APP_VERSION, download_url: null, notes: null, source: 'server' };
  }

  async settings() {
    return {
      split_tunnel: await this.deps.settings.get<string[] | null>(SPLIT_TUNNEL_SETTING, null),
      update: await this.deps.settings.get<{ version: string; download_url: string; notes: string | null } | null>(UPDATE_SETTING, null),
      env_update: { version: this.deps.config.client.version ?? null, download_url: this.deps.config.client.downloadUrl ?? null },
    };
  }

  async setSettings(input: { split_tunnel?: string[] | null; update?: { version: string; download_url: string; notes?: string | null } | null }) {
    if (input.split_tunnel !== undefined) {
      if (input.split_tunnel === null) await this.deps.settings.delete(SPLIT_TUNNEL_SETTING);
      else await this.deps.settings.set(SPLIT_TUNNEL_SETTING, [...new Set(input.split_tunnel)]);
      this.natFollows();
    }
    if (input.update !== undefined) {
      if (input.update === null) await this.deps.settings.delete(UPDATE_SETTING);
      else await this.deps.settings.set(UPDATE_SETTING, { ...input.update, notes: input.update.notes ?? null });
    }
    this.invalidate('configs');
    return this.settings();
  }

  // ---------------------------------------------------------------- admin

  private async requireToken(tokenId: number): Promise<{ id: number; name: string; peer_id: number | null }> {
    const t = (await this.deps.db.models.ApiToken.findByPk(tokenId, { attributes: ['id', 'name', 'peer_id'], raw: true })) as {
      id: number;
      name: string;
      peer_id: number | null;
    } | null;
    if (!t) throw notFound(msg('resource.not_found', { what: 'Token' }));
    return t;
  }

  /** GET /tokens/:id/machines */
  async machinesOf(tokenId: number): Promise<MachineView[]> {
    await this.requireToken(tokenId);
    const rows = (await findRows(this.Machine, { where: { token_id: tokenId }, order: [['id', 'ASC']] })).map(normalize);
    const peers = await this.peerRows([...new Set(rows.map((r) => r.peer_id).filter((x): x is number => x !== null))]);
    return rows.map((r) => this.view(r, r.peer_id !== null ? peers.get(r.peer_id) : null));
  }

  /**
   * DELETE /tokens/:id/machines/:machineId: forgets the machine (its next call must register
   * again). Its peer is kept unless deletePeer; a peer the token is bound to, or that another machine
   * uses, is always kept. Deleting the peer can fail with 409 (routes point at it): then nothing changes.
   */
  async forget(
    tokenId: number,
    machineId: number,
    deletePeer: boolean,
    actor?: number,
  ): Promise<{ id: number; peer_deleted: boolean; peer_id: number | null }> {
    const token = await this.requireToken(tokenId);
    const raw = (await this.Machine.findOne({ where: { id: machineId, token_id: tokenId }, raw: true })) as ClientMachineRow | null;
    if (!raw) throw notFound(msg('resource.not_found', { what: 'Machine' }));
    const m = normalize(raw);
    let peerDeleted = false;
    if (deletePeer && m.peer_id !== null && m.peer_id !== (token.peer_id === null ? null : Number(token.peer_id))) {
      const others = await this.Machine.count({ where: { peer_id: m.peer_id, id: { [Op.ne]: m.id } } });
      if (!others) {
        const exists = (await this.peerRows([m.peer_id])).has(m.peer_id);
        if (exists) {
          await this.peers.remove(m.peer_id, actor);
          peerDeleted = true;
        }
      }
    }
    await this.Machine.destroy({ where: { id: m.id } });
    this.invalidate();
    await this.deps.activity.record({
      source: 'tokens',
      event_type: 'client_machine_removed',
      msg: msg('client.machine_forgotten', { hostname: m.hostname, token: token.name, peer_deleted: peerDeleted }),
      details: { token_id: tokenId, machine_id: m.id, peer_id: m.peer_id, peer_deleted: peerDeleted },
      user_id: actor ?? null,
    });
    return { id: m.id, peer_deleted: peerDeleted, peer_id: m.peer_id };
  }
}
