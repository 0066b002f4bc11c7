// GatewaysService (ctx.gateways, and ctx.gatewayAuth): everything the server knows about home
// gateways. No Koa here.
//
// - Tokens: issueTokens(peerId) makes a fresh API token (companion → server, `gthgw_…`, stored as
//   SHA-256 only) and push token (server → companion, `gthgp_…`, sealed with the master key because
//   the server must present it), replacing any earlier pair at once, and renders gateway.env.
// - verify(token): the gateway-auth hook of http/auth.ts. Cached by token hash; the cache entry of
//   a gateway is dropped when its tokens are rotated (old tokens fail at once) and the whole cache
//   when any peer row changes (disabled, expired, deleted gateways fail at once too).
// - Configuration: config(peerId) / check(peerId, hash). The rendered configuration and its hash
//   are cached per gateway; any write to the routes table (create, update, toggle, delete, batch,
//   from any service) drops the cache through Sequelize model hooks, again after the write's
//   transaction commits. A poll with an unchanged hash is a Map lookup: no database query.
// - Heartbeats: stored whole as `health`, judged (state.ts), the hostname reported to the peers
//   service (sticky-admin rule applies), the status re-evaluated.
// - Status: evaluate() on every heartbeat and on a timer; every transition is written with a
//   compare-and-set on the old status (so it is logged exactly once, even with several evaluators)
//   and announced through the ONE emit() function (activity log + transition listeners).
import { msg } from '@gatehouse/common/messages/index.js';
import { Op, QueryTypes } from 'sequelize';
import type { Deps, GatewayAuth } from '../deps.js';
import type { EventOf } from '../events.js';
import type { Job } from '../util/scheduler.js';
import type { PeerRow } from '../peers/model.js';
import type { M } from '../db/models.js';
import { notFound, AppError } from '../util/errors.js';
import { generateToken } from '../tokens/service.js';
import { sha256 } from '../util/crypto.js';
import { hostnameSource, isActive } from '../peers/view.js';
import { asBool, findRows, findRowByPk } from '../db/define.js';
import { rowToRoute, type RouteRow } from '../routes/model.js';
import type { WireGuardService } from '../wireguard/service.js';
import type { PeersService } from '../peers/service.js';
import { buildGatewayConfig, gatewayConfigHash } from './config.js';
import type { GatewayRow } from './model.js';
import { HeartbeatBuffer } from './heartbeat-buffer.js';
import { GatewayConfigCache, type OwnedRow } from './config-cache.js';
import {
  GATEWAY_DEFAULTS,
  GATEWAY_TOKEN_PREFIX,
  PUSH_TOKEN_PREFIX,
  renderGatewayEnv,
  type GatewayConfig,
  type GatewayTrafficStatus,
  type Heartbeat,
} from '@gatehouse/common/gateway-protocol.js';
import {
  deriveStatus,
  describeStatus,
  statusMessage,
  healthVerdict,
  tickInterval,
  type GatewayStatus,
  type HealthDetail,
  type StatusDetail,
  type Thresholds,
} from './state.js';
import type { GatewayInfo, GatewayView, HeartbeatResult, IssuedTokens } from './schema.js';

/** A gateway's status change: the payload of its gateway_online / gateway_offline / gateway_unknown event (reason_code: the reason as a message of the catalogue). */
export type Transition = Omit<EventOf<'gateway_online'>, 'type'>;
export type TransitionListener = (t: Transition) => void | Promise<void>;

interface TokenEntry {
  peerId: number;
  address: string;
  enabled: boolean;
  expiresAt: number | null;
}

interface ConfigEntry {
  config: GatewayConfig;
  hash: string;
}

/** The verdict of a stored heartbeat as data (null when it is missing or not a heartbeat of this version). */
function storedVerdict(hb: Record<string, unknown> | null): HealthDetail | null {
  if (!hb || !Array.isArray(hb.route_reachability) || !Array.isArray(hb.tcp_listeners)) return null;
  // reason: a stored heartbeat is JSON that passed the heartbeat schema when it was accepted
  return healthVerdict(hb as unknown as Heartbeat).detail;
}

/** the columns a heartbeat (or a traffic snapshot: traffic, updated_at) updates */
type HeartbeatValues = Partial<Pick<GatewayRow, 'last_seen_at' | 'health' | 'healthy' | 'health_reason' | 'reported_config_hash' | 'traffic' | 'updated_at'>>;
/** how long heartbeat row updates gather before one transaction stores them */
const HEARTBEAT_BATCH_MS = 250;

const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

function parseJson<T>(text: string | null): T | null {
  if (!text) return null;
  try {
    return JSON.parse(text) as T;
  } catch {
    return null;
  }
}

export class GatewaysService implements GatewayAuth {
  readonly Gateway: M<GatewayRow>;
  readonly thresholds: Thresholds;
  private tokenCache = new Map<string, TokenEntry>();
  readonly configs: GatewayConfigCache<RouteRow & OwnedRow, ConfigEntry>;
  /** bumped by every token invalidation: a cache fill that raced with a write is not stored */
  private tokenGen = 0;
  private job: Job | null = null;
  /** heartbeat row updates, written in batches behind the answer (heartbeat-buffer.ts) */
  private readonly heartbeats: HeartbeatBuffer<HeartbeatValues>;

  constructor(
    private readonly deps: Deps,
    private readonly peers: PeersService,
    private readonly wg: WireGuardService,
  ) {
    this.Gateway = deps.db.models.Gateway;
    this.thresholds = { offlineAfterMs: deps.config.gateways.offlineAfterMs };
    this.heartbeats = new HeartbeatBuffer<HeartbeatValues>(
      (entries) =>
        deps.db.sequelize.transaction(async (transaction) => {
          for (const [peerId, values] of entries) await this.Gateway.update(values, { where: { peer_id: peerId }, transaction });
        }),
      HEARTBEAT_BATCH_MS,
      (err, count) => deps.log.warn(`storing ${count} gateway heartbeat(s) failed; retrying with the next batch`, { err: String(err) }),
    );
    const Route = deps.db.models.Route;
    const gatewayRoutes = (where: Record<string, unknown>) =>
      findRows(Route, { where: { target_kind: 'gateway', ...where }, order: [['id', 'ASC']] }).then((rows) =>
        rows.map((r) => Object.assign(r, { id: Number(r.id), target_peer_id: num(r.target_peer_id), enabled: asBool(r.enabled) })),
      );
    this.configs = new GatewayConfigCache({
      readAll: () => gatewayRoutes({}),
      readOne: (peerId) => gatewayRoutes({ target_peer_id: peerId }),
      build: (peerId, rows) => {
        const config = buildGatewayConfig(peerId, rows.map(rowToRoute), deps.config.gateways.proxyPort);
        return { config, hash: gatewayConfigHash(config) };
      },
    });
    this.watchTables();
  }

  // ------------------------------------------------------------------ cache invalidation

  /**
   * Drops the cached configurations of the gateways a route write touched (and token entries when
   * peers change), from any writer: the bus's rows_changed, at the write and again after its
   * transaction commits (readers may have refilled the cache from pre-commit data on PostgreSQL).
   */
  private watchTables(): void {
    this.deps.events.on('rows_changed', (e) => (e.table === 'routes' ? this.configs.dropRoutes(e.keys ?? null, e.destroyed) : this.invalidateTokens()));
  }

  /** Drops every cached configuration (a restore), or one gateway's. */
  invalidateConfig(peerId?: number): void {
    if (peerId === undefined) this.configs.dropAll();
    else this.configs.drop(peerId);
  }

  invalidateTokens(peerId?: number): void {
    this.tokenGen++;
    if (peerId === undefined) {
      this.tokenCache.clear();
      return;
    }
    for (const [h, e] of this.tokenCache) if (e.peerId === peerId) this.tokenCache.delete(h);
  }

  // ------------------------------------------------------------------ lookups

  private async peerRow(peerId: number): Promise<PeerRow> {
    const r = await findRowByPk(this.deps.db.models.Peer, peerId, {});
    if (!r) throw notFound(msg('resource.not_found', { what: 'Peer' }));
    return r;
  }

  /** The peer, which must be a gateway peer (400 otherwise, 404 when missing). */
  async gatewayPeer(peerId: number): Promise<PeerRow> {
    const r = await this.peerRow(peerId);
    if (r.peer_type !== 'gateway') throw new AppError('not_found', msg('gateway.not_gateway_peer', { peer_id: peerId }));
    return r;
  }

  private async row(peerId: number): Promise<GatewayRow | null> {
    const [row] = await this.heartbeats.readThrough(
      async () => {
        const r = await findRowByPk(this.Gateway, peerId);
        return r ? [r] : [];
      },
      () => peerId,
    );
    return row ?? null;
  }

  apiPortOf(peer: Pick<PeerRow, 'api_port'>): number {
    return num(peer.api_port) ?? this.deps.config.gateways.apiPort;
  }

  // ------------------------------------------------------------------ tokens and gateway.env

  /**
   * New API and push tokens for a gateway peer, replacing the old ones at once (used on creation and
   * by rotate). Returns the plaintext tokens (shown once) and the complete gateway.env.
   */
  async issueTokens(peerId: number): Promise<IssuedTokens> {
    const peer = await this.gatewayPeer(peerId);
    const apiToken = generateToken(GATEWAY_TOKEN_PREFIX);
    const pushToken = generateToken(PUSH_TOKEN_PREFIX);
    const envContent = await this.renderEnv(peer, apiToken, pushToken);
    const now = this.deps.clock();
    const values = {
      api_token_hash: sha256(apiToken),
      push_token_enc: this.deps.crypto.seal(pushToken),
      token_hint: apiToken.slice(0, 10),
      tokens_issued_at: now,
      updated_at: now,
    };
    const [n] = await this.Gateway.update(values, { where: { peer_id: peerId } });
    if (!n) await this.Gateway.create({ peer_id: peerId, ...values, status: 'unknown', created_at: now } as GatewayRow);
    this.invalidateTokens(peerId);
    return { apiToken, pushToken, envContent };
  }

  /** POST /peers/:id/gateway-env/rotate: fresh tokens and env; the running companion's tokens stop working now. */
  async rotate(peerId: number, actor?: number): Promise<IssuedTokens & { peer_id: number }> {
    const issued = await this.issueTokens(peerId);
    const peer = await this.peerRow(peerId);
    await this.deps.activity.record({
      severity: 'warning',
      source: 'gateways',
      event_type: 'gateway_tokens_rotated',
      msg: msg('gateway.tokens_rotated', { name: peer.name }),
      details: { peer_id: peerId, token_hint: issued.apiToken.slice(0, 10) },
      user_id: actor ?? null,
    });
    return { peer_id: peerId, ...issued };
  }

  /** The server URL written into gateway.env: GATEHOUSE_GATEWAY_SERVER_URL or http://<tunnel address>:<GATEHOUSE_PORT>. */
  serverUrl(): string {
    const c = this.deps.config;
    if (c.gateways.serverUrl) return c.gateways.serverUrl.replace(/\/+$/, '');
    const addr = this.wg.serverAddress;
    return `http://${addr}:${c.port}`;
  }

  private async renderEnv(peer: PeerRow, apiToken: string, pushToken: string): Promise<string> {
    const wg = this.wg;
    if (!peer.private_key_enc) throw new AppError('conflict', msg('gateway.no_private_key', { name: peer.name }));
    const { publicKey } = await wg.serverKeys();
    const g = this.deps.config.gateways;
    const endpoint = wg.endpoint;
    const text = renderGatewayEnv(
      {
        serverUrl: this.serverUrl(),
        peerId: peer.id,
        apiToken,
        pushToken,
        apiPort: this.apiPortOf(peer),
        proxyPort: g.proxyPort,
        pollIntervalS: g.pollIntervalS,
        heartbeatIntervalS: g.heartbeatIntervalS,
        wg: {
          privateKey: this.deps.crypto.open(peer.private_key_enc),
          address: `${peer.address}/32`,
          serverPublicKey: publicKey,
          presharedKey: peer.preshared_key_enc ? this.deps.crypto.open(peer.preshared_key_enc) : undefined,
          endpoint,
          allowedIps: [wg.subnet.cidr],
          persistentKeepalive: num(peer.persistent_keepalive) || GATEWAY_DEFAULTS.keepaliveS,
        },
      },
      [
        `Gatehouse gateway companion for peer "${peer.name}" (#${peer.id}), generated ${new Date(this.deps.clock()).toISOString()}.`,
        'Secret: this file holds the tunnel private key and both gateway tokens. Install it with mode 0600.',
        'Lost or leaked? Rotate the tokens in the admin UI: Gateways → this gateway → Rotate tokens',
        `(or through the API: POST /api/v1/peers/${peer.id}/gateway-env/rotate). Rotating invalidates this file at once.`,
        `GATEWAY_WG_ENDPOINT = ${endpoint} is this server's public host and WireGuard port now: if they change, rotate the tokens on the gateway's page in the admin UI for a fresh file.`,
      ],
    );
    await this.peers.markConfigHandedOut(peer, endpoint);
    return text;
  }

  /** The push token (server → companion), for calls to the companion API. */
  async pushToken(peerId: number): Promise<string> {
    const r = await this.row(peerId);
    if (!r) throw new AppError('conflict', msg('gateway.no_tokens_yet', { peer_id: peerId }));
    return this.deps.crypto.open(r.push_token_enc);
  }

  // ------------------------------------------------------------------ GatewayAuth

  async verify(token: string): Promise<{ peerId: number; address: string } | null> {
    const e = await this.entryForToken(token);
    if (!e) return null;
    if (!e.enabled || (e.expiresAt !== null && e.expiresAt <= this.deps.clock())) return null;
    return { peerId: e.peerId, address: e.address };
  }

  /** The cached token entry (peer id, tunnel address, enabled, expiry), or null for an unknown token. */
  async entryForToken(token: string): Promise<TokenEntry | null> {
    if (typeof token !== 'string' || !token.startsWith(`${GATEWAY_TOKEN_PREFIX}_`) || token.length > 128) return null;
    const hash = sha256(token);
    const hit = this.tokenCache.get(hash);
    if (hit) return hit;
    const gen = this.tokenGen;
    const rows = (await this.deps.db.sequelize.query(
      'SELECT g.peer_id AS peer_id, p.address AS address, p.enabled AS enabled, p.expires_at AS expires_at, p.peer_type AS peer_type FROM gateways g JOIN peers p ON p.id = g.peer_id WHERE g.api_token_hash = ?',
      { replacements: [hash], type: QueryTypes.SELECT },
    )) as { peer_id: number; address: string; enabled: unknown; expires_at: unknown; peer_type: string }[];
    const r = rows[0];
    if (!r || r.peer_type !== 'gateway') return null;
    const e: TokenEntry = { peerId: Number(r.peer_id), address: r.address, enabled: asBool(r.enabled), expiresAt: num(r.expires_at) };
    if (gen === this.tokenGen) {
      if (this.tokenCache.size > 100_000) this.tokenCache.clear();
      this.tokenCache.set(hash, e);
    }
    return e;
  }

  // ------------------------------------------------------------------ configuration

  /** The configuration of one gateway, from the cache (config-cache.ts). */
  config(peerId: number): Promise<ConfigEntry> {
    return this.configs.get(peerId);
  }

  /** GET /gateway/config/check: unchanged (→ 304) or the new hash. */
  async check(peerId: number, hash: string | undefined): Promise<{ changed: boolean; config_hash: string }> {
    const { hash: current } = await this.config(peerId);
    return { changed: hash !== current, config_hash: current };
  }

  // ------------------------------------------------------------------ companion reports

  async heartbeat(peerId: number, hb: Heartbeat): Promise<HeartbeatResult> {
    const peer = await this.peerRow(peerId);
    const hostname = await this.reportHostname(peer, hb.hostname);
    const prev = await this.row(peerId);
    if (!prev) throw new AppError('unauthorized', msg('auth.gateway_no_tokens'));
    const now = this.deps.clock();
    const verdict = healthVerdict(hb);
    const healthReason = verdict.reason.slice(0, 255);
    this.heartbeats.put(peerId, {
      last_seen_at: now,
      health: JSON.stringify(hb),
      healthy: verdict.healthy,
      health_reason: healthReason,
      reported_config_hash: hb.config_hash,
      updated_at: now,
    });
    const st = await this.transition(
      { peer_id: peerId, status: prev.status, last_seen_at: now, healthy: verdict.healthy, health_reason: healthReason },
      peer.name,
      now,
    );
    const { hash } = await this.config(peerId);
    for (const r of hb.route_reachability) if (r.reachable) this.reachableListeners.forEach((l) => l(r.route_id));
    return { status: st.status, status_reason: st.reason, config_hash: hash, config_changed: hb.config_hash !== hash, hostname };
  }

  private reachableListeners: ((routeId: number) => void)[] = [];
  /** Called with a route id whenever a heartbeat reports that route's LAN target reachable. */
  onRouteReachable(l: (routeId: number) => void): void {
    this.reachableListeners.push(l);
  }

  /** The heartbeat's hostname → the peer's agent hostname (never over an admin hostname). */
  private async reportHostname(peer: PeerRow, reported: string): Promise<{ applied: boolean; reason?: string }> {
    const peerId = peer.id;
    const name = reported.trim().toLowerCase();
    if (peer.hostname && peer.hostname_source === 'admin')
      return { applied: false, reason: 'the hostname was set by an admin and agent reports do not replace it' };
    if ((peer.hostname ?? '') === name) return { applied: true };
    try {
      const r = await this.peers.setAgentHostname(peerId, name || null);
      return r.applied ? { applied: true } : { applied: false, reason: r.reason };
    } catch (err) {
      if (err instanceof AppError) return { applied: false, reason: err.fields?.hostname ?? err.message };
      throw err;
    }
  }

  /** POST /gateway/status: a traffic snapshot, kept as the gateway's last traffic (not a heartbeat; stored with the heartbeat batch). */
  async trafficStatus(peerId: number, s: GatewayTrafficStatus): Promise<{ received_at: number }> {
    const now = this.deps.clock();
    this.heartbeats.put(peerId, { traffic: JSON.stringify({ ...s, at: now }), updated_at: now });
    return { received_at: now };
  }

  // ------------------------------------------------------------------ status

  /** Hears every transition (a subscription to the bus's gateway_online / _offline / _unknown). */
  onTransition(l: TransitionListener): void {
    this.deps.events.on(['gateway_online', 'gateway_offline', 'gateway_unknown'], ({ type: _type, ...t }) => l(t));
  }

  /**
   * THE one place a gateway status transition is announced: the domain event gateway_online /
   * gateway_offline / gateway_unknown (the activity row, source gateways, comes from it).
   */
  async emit(t: Transition): Promise<void> {
    await this.deps.events.emit({ type: `gateway_${t.to}`, ...t } as EventOf<`gateway_${Transition['to']}`>);
  }

  private async transition(
    row: Pick<GatewayRow, 'peer_id' | 'status' | 'last_seen_at' | 'healthy' | 'health_reason'>,
    name: string,
    now: number,
  ): Promise<{ status: GatewayStatus; reason: string }> {
    const d = deriveStatus(
      { lastSeenAt: num(row.last_seen_at), healthy: row.healthy === null ? null : asBool(row.healthy), healthReason: row.health_reason },
      now,
      this.thresholds,
    );
    const from = (row.status ?? 'unknown') as GatewayStatus;
    if (d.status !== from) {
      // compare-and-set: only the evaluator that moves the row logs the transition
      const [n] = await this.Gateway.update(
        { status: d.status, status_reason: d.reason.slice(0, 255), status_changed_at: now },
        { where: { peer_id: row.peer_id, status: from } },
      );
      if (n)
        await this.emit({
          peer_id: row.peer_id,
          name,
          from,
          to: d.status,
          reason: d.reason,
          reason_code: statusMessage(d.detail, row.health_reason),
          last_seen_at: num(row.last_seen_at),
          at: now,
        });
    }
    return d;
  }

  /** Re-evaluates every gateway (the timer calls this). Returns the number of transitions. */
  async evaluateAll(): Promise<number> {
    const now = this.deps.clock();
    const rows = await this.heartbeats.readThrough(
      () => findRows(this.Gateway, { attributes: ['peer_id', 'status', 'last_seen_at', 'healthy', 'health_reason'] }),
      (r) => Number(r.peer_id),
    );
    let moved = 0;
    const names = new Map<number, string>();
    const due = rows.filter((r) => {
      const d = deriveStatus(
        { lastSeenAt: num(r.last_seen_at), healthy: r.healthy === null ? null : asBool(r.healthy), healthReason: r.health_reason },
        now,
        this.thresholds,
      );
      return d.status !== r.status;
    });
    if (!due.length) return 0;
    const peers = await findRows(this.deps.db.models.Peer, { attributes: ['id', 'name'], where: { id: { [Op.in]: due.map((r) => r.peer_id) } } });
    for (const p of peers) names.set(Number(p.id), p.name);
    for (const r of due) {
      const before = r.status;
      const d = await this.transition(r, names.get(Number(r.peer_id)) ?? `#${r.peer_id}`, now);
      if (d.status !== before) moved++;
    }
    return moved;
  }

  start(): void {
    this.job ??= this.deps.scheduler.every('gateway status evaluation', tickInterval(this.thresholds), () => this.evaluateAll(), { scope: 'singleton' });
  }

  /** Stops the status timer and stores the heartbeats not yet written (shutdown). */
  async stop(): Promise<void> {
    this.job?.stop();
    this.job = null;
    await this.heartbeats.close();
  }

  /** Stores the heartbeats not yet written now (tests, backup). */
  flushHeartbeats(): Promise<void> {
    return this.heartbeats.flush();
  }

  // ------------------------------------------------------------------ admin views

  private async views(peers: PeerRow[]): Promise<GatewayView[]> {
    if (!peers.length) return [];
    const ids = peers.map((p) => Number(p.id));
    const [rows, routes] = await Promise.all([
      this.heartbeats.readThrough(
        () => findRows(this.Gateway, { where: { peer_id: { [Op.in]: ids } } }),
        (r) => Number(r.peer_id),
      ),
      findRows(this.deps.db.models.Route, {
        attributes: ['id', 'domain', 'route_type', 'target_peer_id', 'target_lan_host', 'target_lan_port', 'enabled', 'wol_enabled'],
        where: { target_kind: 'gateway', target_peer_id: { [Op.in]: ids } },
        order: [['id', 'ASC']],
      }),
    ]);
    const byId = new Map(rows.map((r) => [Number(r.peer_id), r]));
    const routesOf = new Map<number, GatewayView['routes']>();
    for (const r of routes) {
      const list = routesOf.get(Number(r.target_peer_id)) ?? [];
      list.push({
        id: Number(r.id),
        domain: r.domain,
        route_type: r.route_type,
        target_lan_host: r.target_lan_host,
        target_lan_port: num(r.target_lan_port),
        enabled: asBool(r.enabled),
        wol_enabled: asBool(r.wol_enabled),
      });
      routesOf.set(Number(r.target_peer_id), list);
    }
    const now = this.deps.clock();
    const out: GatewayView[] = [];
    for (const p of peers) {
      const g = byId.get(Number(p.id));
      const lastSeen = num(g?.last_seen_at);
      const health = parseJson<Record<string, unknown>>(g?.health ?? null);
      const noTokens: StatusDetail = { code: 'no_tokens' };
      const d = g
        ? deriveStatus(
            { lastSeenAt: lastSeen, healthy: g.healthy === null ? null : asBool(g.healthy), healthReason: g.health_reason, health: storedVerdict(health) },
            now,
            this.thresholds,
          )
        : { status: 'unknown' as const, reason: describeStatus(noTokens), detail: noTokens };
      const reasonCode = statusMessage(d.detail, g?.health_reason ?? null);
      const { hash } = await this.config(Number(p.id));
      const reported = g?.reported_config_hash ?? null;
      out.push({
        peer_id: Number(p.id),
        name: p.name,
        hostname: p.hostname ?? null,
        hostname_source: hostnameSource(p),
        ip: p.address,
        enabled: isActive(p, now) ? 1 : 0,
        api_port: this.apiPortOf(p),
        status: d.status,
        status_reason: d.reason,
        status_detail: d.detail,
        status_reason_code: reasonCode,
        status_changed_at: num(g?.status_changed_at),
        last_seen_at: lastSeen,
        health,
        config_hash: hash,
        reported_config_hash: reported,
        config_in_sync: reported === null ? null : reported === hash,
        traffic: parseJson(g?.traffic ?? null),
        tokens_issued_at: num(g?.tokens_issued_at),
        token_hint: g?.token_hint ?? null,
        routes: routesOf.get(Number(p.id)) ?? [],
      });
    }
    return out;
  }

  /** GET /gateways: every gateway peer with its status, last heartbeat and routes. */
  async list(): Promise<GatewayView[]> {
    const peers = await findRows(this.deps.db.models.Peer, { where: { peer_type: 'gateway' }, order: [['id', 'ASC']] });
    return this.views(peers);
  }

  async view(peerId: number): Promise<GatewayView> {
    const peer = await this.gatewayPeer(peerId);
    return (await this.views([peer]))[0];
  }

  /** GET /peers/:id/gateway-info. */
  async info(peerId: number): Promise<GatewayInfo> {
    const v = await this.view(peerId);
    const h = v.health as (Heartbeat & Record<string, unknown>) | null;
    return {
      peer_id: v.peer_id,
      status: v.status,
      status_reason: v.status_reason,
      status_detail: v.status_detail,
      status_reason_code: v.status_reason_code,
      api_port: v.api_port,
      last_seen_at: v.last_seen_at,
      health: h
        ? { uptime_s: h.uptime_s, wg_handshake_age_s: h.wg_handshake_age_s, route_reachability: h.route_reachability ?? [], telemetry: h.telemetry ?? null }
        : null,
    };
  }
}
