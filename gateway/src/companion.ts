// The companion: tunnel, HTTP proxy, L4 listeners, companion API, and three loops talking to the
// server through the tunnel.
//
// - poll (every GATEWAY_POLL_INTERVAL, 10 s): GET /config/check?hash=<current>; 304 = nothing to
//   do, 200 = GET /config and apply it (proxy routes, listeners) and keep it in the state file.
// - heartbeat (every GATEWAY_HEARTBEAT_INTERVAL, 15 s): the full payload (self-checks, listeners,
//   handshake age, a fresh reachability probe of every LAN target, hostname, config hash, OS
//   telemetry); an answer saying the config changed triggers a poll at once.
// - status (every GATEWAY_STATUS_INTERVAL, 60 s): tunnel byte counters and open connections.
// Each loop backs off after errors (interval × 2^errors, at most GATEWAY_MAX_BACKOFF, ±10 % jitter)
// and returns to its interval after the next success. While the server is unreachable or refuses
// the token, the last configuration keeps being served (also across restarts: the state file).
// A 401 means the tokens were rotated (or the gateway deleted or disabled): the companion says so
// and keeps retrying; new tokens only come with a new gateway.env and a restart.
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { CONFIG_HASH_RE, type GatewayConfig, type Heartbeat } from '@gatehouse/common/gateway-protocol.js';
import type { Logger } from '@gatehouse/common/json-log.js';
import { Loop } from '@gatehouse/common/loop.js';
import { CompanionApi } from './api.js';
import type { CompanionEnv } from './env.js';
import { TcpListeners, UdpListeners } from './listeners.js';
import { pingProbe, resolveAll, tcpProbe, type ProbeResult } from './probe.js';
import { COMPANION_HEADER, HttpProxy, SELF_CHECK_HOST } from './proxy.js';
import { ServerClient, ServerError } from './server-client.js';
import { telemetry } from './telemetry.js';
import { Tunnel, type TunnelStats } from './tunnel.js';
import { sendWol } from './wol.js';

export interface ServerState {
  reachable: boolean;
  auth_rejected: boolean;
  last_ok_at: number | null;
  last_error: string | null;
  last_error_at: number | null;
  last_status: number | null;
}

export class Companion {
  readonly proxy: HttpProxy;
  readonly tcp: TcpListeners;
  readonly udp: UdpListeners;
  readonly api: CompanionApi;
  readonly tunnel: Tunnel | null;
  readonly client: ServerClient;
  config: GatewayConfig | null = null;
  configHash: string | null = null;
  configSource: 'server' | 'state-file' | null = null;
  readonly server: ServerState = { reachable: false, auth_rejected: false, last_ok_at: null, last_error: null, last_error_at: null, last_status: null };
  lastHeartbeat: { at: number; payload: Heartbeat; answer: unknown } | null = null;
  private readonly startedAt = Date.now();
  private loops: Loop[] = [];
  private poll: Loop;
  private lastEndpointRefresh = 0;
  private reUp: NodeJS.Timeout | null = null;

  constructor(
    readonly env: CompanionEnv,
    readonly log: Logger,
  ) {
    this.client = new ServerClient(env.serverUrl, env.apiToken);
    this.proxy = new HttpProxy({ connectTimeoutMs: env.lanConnectTimeoutMs, log });
    this.tcp = new TcpListeners(env.bind, log, { connectTimeoutMs: env.lanConnectTimeoutMs });
    this.udp = new UdpListeners(env.bind, log, { connectTimeoutMs: env.lanConnectTimeoutMs });
    this.tunnel = env.wg.manage ? new Tunnel(env, log, () => this.scheduleTunnelUp()) : null;
    this.api = new CompanionApi(
      env.pushToken,
      {
        status: () => this.status(),
        wol: (r) => sendWol(r.mac, { targetHost: r.target_host, override: env.wolBroadcast, port: env.wolPort, count: r.count }),
        refresh: () => this.poll.kick(),
        disconnect: (routeId) => this.tcp.disconnect(routeId) + this.udp.disconnect(routeId),
      },
      log,
    );
    const max = env.maxBackoffMs;
    this.poll = new Loop('config poll', () => this.pollOnce(), env.pollIntervalMs, max, log);
    this.loops = [
      this.poll,
      new Loop('heartbeat', () => this.heartbeatOnce(), env.heartbeatIntervalMs, Math.min(max, 60_000), log),
      new Loop('traffic status', () => this.statusOnce(), env.statusIntervalMs, max, log),
    ];
  }

  // ------------------------------------------------------------------ lifecycle

  async start(): Promise<void> {
    if (this.tunnel) await this.tunnel.up();
    await this.proxy.listen(this.env.proxyPort, this.env.bind);
    await this.api.listen(this.env.apiPort, this.env.bind);
    this.log.info(`HTTP proxy on ${this.env.bind}:${this.env.proxyPort}, companion API on ${this.env.bind}:${this.env.apiPort}, server ${this.env.serverUrl}`);
    const saved = this.loadState();
    if (saved) {
      await this.apply(saved.config, saved.config_hash, 'state-file');
      this.log.info('serving the last configuration from the state file until the server answers', {
        config_hash: saved.config_hash,
        routes: saved.config.routes.length,
      });
    }
    const [poll, hb, st] = this.loops;
    poll.start(0);
    hb.start(500);
    st.start(this.env.statusIntervalMs);
  }

  async stop(): Promise<void> {
    for (const l of this.loops) l.stop();
    if (this.reUp) clearTimeout(this.reUp);
    await Promise.allSettled([this.proxy.close(), this.api.close(), this.tcp.closeAll(), this.udp.closeAll()]);
    if (this.tunnel) await this.tunnel.down().catch((err) => this.log.warn('taking the tunnel down failed', { err: String(err) }));
  }

  private scheduleTunnelUp(delayMs = 2000): void {
    if (!this.tunnel || this.reUp) return;
    this.reUp = setTimeout(() => {
      this.reUp = null;
      this.tunnel!.up().catch((err) => {
        this.log.error('bringing the tunnel up again failed; retrying', { err: String(err) });
        this.scheduleTunnelUp(Math.min(60_000, delayMs * 2));
      });
    }, delayMs);
  }

  // ------------------------------------------------------------------ server calls

  private async call<T>(method: 'GET' | 'POST', p: string, body?: unknown, ok: number[] = [200]) {
    try {
      const r = await this.client.call<T>(method, p, body, ok);
      if (this.server.auth_rejected) this.log.info("the server accepts this gateway's token again");
      Object.assign(this.server, { reachable: true, auth_rejected: false, last_ok_at: Date.now(), last_status: r.status });
      return r;
    } catch (err) {
      const e = err as ServerError;
      const rejected = e.status === 401;
      if (rejected && !this.server.auth_rejected) {
        this.log.error(
          "the server rejected this gateway's token (401): the tokens were rotated, or the gateway was disabled or deleted. Install the new gateway.env and restart the companion; the last configuration stays in service meanwhile.",
        );
      } else if (!rejected && (this.server.reachable || this.server.last_error !== e.message)) {
        this.log.warn(`server call failed: ${e.message}; retrying with back-off, the last configuration stays in service`);
      }
      Object.assign(this.server, {
        reachable: e.status !== null,
        auth_rejected: rejected,
        last_error: e.message,
        last_error_at: Date.now(),
        last_status: e.status ?? null,
      });
      throw err;
    }
  }

  async pollOnce(): Promise<void> {
    const q = this.configHash ? `?hash=${encodeURIComponent(this.configHash)}` : '';
    const check = await this.call<{ config_hash?: string }>('GET', `/config/check${q}`, undefined, [200, 304]);
    if (check.status === 304 && this.configSource === 'server') return;
    if (check.status === 304) {
      this.configSource = 'server'; // the saved configuration is current
      return;
    }
    const r = await this.call<GatewayConfig & { config_hash: string; ok: boolean }>('GET', '/config');
    const { ok: _ok, config_hash, ...cfg } = r.data;
    if (!CONFIG_HASH_RE.test(config_hash ?? '')) throw new Error('the server sent a configuration without a valid config_hash');
    await this.apply(cfg, config_hash, 'server');
    this.saveState();
  }

  async apply(cfg: GatewayConfig, hash: string, source: 'server' | 'state-file'): Promise<void> {
    const changed = hash !== this.configHash;
    this.proxy.setRoutes(cfg.routes);
    await this.tcp.apply(cfg.tcp_listeners ?? []);
    await this.udp.apply(cfg.udp_listeners ?? []);
    this.config = cfg;
    this.configHash = hash;
    this.configSource = source;
    if (changed)
      this.log.info('configuration applied', {
        config_hash: hash,
        source,
        http_routes: cfg.routes.filter((r) => r.route_type === 'http').length,
        tcp_listeners: cfg.tcp_listeners.length,
        udp_listeners: cfg.udp_listeners.length,
      });
  }

  async heartbeatOnce(): Promise<void> {
    await this.tcp.retry();
    await this.udp.retry();
    const payload = await this.buildHeartbeat();
    const r = await this.call<{ config_changed?: boolean; status?: string }>('POST', '/heartbeat', payload);
    this.lastHeartbeat = { at: Date.now(), payload, answer: r.data };
    if (r.data?.config_changed) this.poll.kick();
  }

  async statusOnce(): Promise<void> {
    const st = await this.tunnel?.stats();
    await this.call('POST', '/status', {
      rx_bytes: st?.rx ?? 0,
      tx_bytes: st?.tx ?? 0,
      active_connections: this.proxy.activeConnections + this.tcp.connections() + this.udp.connections(),
    });
  }

  // ------------------------------------------------------------------ heartbeat

  private selfGet(port: number, p: string, host: string): Promise<http.IncomingMessage | null> {
    return new Promise((resolve) => {
      const req = http.get({ host: this.env.bind, port, path: p, headers: { host }, timeout: 2000, agent: false }, (res) => {
        res.resume();
        resolve(res);
      });
      req.on('timeout', () => req.destroy());
      req.on('error', () => resolve(null));
    });
  }

  async probeRoutes(): Promise<{ route_id: number; reachable: boolean; latency_ms: number | null; error?: string }[]> {
    const routes = this.config?.routes ?? [];
    const results = await Promise.all(
      routes.map(async (r): Promise<ProbeResult & { route_id: number }> => {
        const p =
          r.route_type === 'l4' && r.l4_protocol === 'udp'
            ? await pingProbe(r.target_lan_host, this.env.probeTimeoutMs)
            : await tcpProbe(r.target_lan_host, r.target_lan_port, this.env.probeTimeoutMs);
        return { route_id: r.id, ...p };
      }),
    );
    return results.map((r) => ({ route_id: r.route_id, reachable: r.reachable, latency_ms: r.latency_ms, ...(r.error ? { error: r.error } : {}) }));
  }

  async buildHeartbeat(): Promise<Heartbeat> {
    let stats: TunnelStats | null = null;
    if (this.tunnel) {
      stats = await this.tunnel.stats();
      // no handshake for 3 minutes: set the peer again so wg re-resolves a host-name endpoint
      if ((!stats || stats.handshakeAgeS === null || stats.handshakeAgeS > 180) && Date.now() - this.lastEndpointRefresh > 60_000) {
        this.lastEndpointRefresh = Date.now();
        await this.tunnel.refreshEndpoint().catch(() => undefined);
      }
    }
    const names = [this.env.wg.endpoint?.replace(/:\d+$/, '').replace(/^\[|\]$/g, '') ?? '', ...(this.config?.routes ?? []).map((r) => r.target_lan_host)];
    const [proxyRes, apiRes, dnsOk, reach, tel] = await Promise.all([
      this.selfGet(this.env.proxyPort, '/', SELF_CHECK_HOST),
      this.selfGet(this.env.apiPort, '/health', 'companion'),
      resolveAll(names, 3000),
      this.probeRoutes(),
      telemetry(this.env.diskPath),
    ]);
    const proxyOk = !!proxyRes && proxyRes.statusCode === 404 && proxyRes.headers[COMPANION_HEADER.toLowerCase()] === '1';
    const apiOk = !!apiRes && apiRes.statusCode === 200;
    const listeners = [...this.tcp.status(), ...this.udp.status()];
    const tunnelOk = !this.tunnel || (stats !== null && stats.handshakeAgeS !== null && stats.handshakeAgeS <= 180);
    return {
      uptime_s: Math.floor((Date.now() - this.startedAt) / 1000),
      http_proxy_healthy: proxyOk,
      api_healthy: apiOk,
      dns_resolve_ok: dnsOk,
      overall_healthy: tunnelOk && proxyOk && apiOk && dnsOk && listeners.every((l) => l.status === 'listening'),
      tcp_listeners: this.tcp.status().map((l) => ({ port: l.port, status: l.status, route_id: l.route_id, ...(l.error ? { error: l.error } : {}) })),
      ...(this.udp.status().length ? { udp_listeners: this.udp.status().map((l) => ({ port: l.port, status: l.status, route_id: l.route_id })) } : {}),
      wg_handshake_age_s: stats?.handshakeAgeS ?? null,
      route_reachability: reach,
      hostname: this.env.hostname.slice(0, 253),
      config_hash: this.configHash,
      telemetry: tel,
    };
  }

  // ------------------------------------------------------------------ state

  status(): Record<string, unknown> {
    return {
      peer_id: this.env.peerId,
      uptime_s: Math.floor((Date.now() - this.startedAt) / 1000),
      config_hash: this.configHash,
      config_source: this.configSource,
      routes: this.config?.routes.length ?? 0,
      listeners: [...this.tcp.status(), ...this.udp.status()],
      server: this.server,
      tunnel: this.tunnel ? { iface: this.tunnel.iface, mode: this.tunnel.mode } : null,
      proxy: { requests: this.proxy.requests, lan_errors: this.proxy.lanErrors, connections: this.proxy.activeConnections },
      last_heartbeat_at: this.lastHeartbeat?.at ?? null,
    };
  }

  private loadState(): { config: GatewayConfig; config_hash: string } | null {
    const f = this.env.stateFile;
    if (!f || !fs.existsSync(f)) return null;
    try {
      const s = JSON.parse(fs.readFileSync(f, 'utf8')) as { peer_id: number; config_hash: string; config: GatewayConfig };
      if (s.peer_id !== this.env.peerId || !CONFIG_HASH_RE.test(s.config_hash) || !Array.isArray(s.config?.routes)) return null;
      return { config: s.config, config_hash: s.config_hash };
    } catch (err) {
      this.log.warn(`ignoring unreadable state file ${f}`, { err: String(err) });
      return null;
    }
  }

  private saveState(): void {
    const f = this.env.stateFile;
    if (!f || !this.config || !this.configHash) return;
    try {
      fs.mkdirSync(path.dirname(f), { recursive: true, mode: 0o700 });
      const tmp = `${f}.${process.pid}.tmp`;
      fs.writeFileSync(
        tmp,
        JSON.stringify({ peer_id: this.env.peerId, config_hash: this.configHash, config: this.config, saved_at: new Date().toISOString() }, null, 2),
        { mode: 0o600 },
      );
      fs.renameSync(tmp, f);
    } catch (err) {
      this.log.warn(`cannot write the state file ${f}; the configuration is kept in memory only`, { err: String(err) });
    }
  }
}
