// Simulated gateway companions for the load case "1,000 companions polling config/check and
// heartbeating at their real interval" (test/reliability/load-gateways.test.ts). Each one is an HTTP
// client in the test process doing what gateway/src/companion.ts does, with the values of its own
// gateway.env (the envContent POST /peers returned): it talks to GATEHOUSE_SERVER_URL (the
// sidecar's gateway API listener on the server's tunnel address) from its own tunnel address
// (GATEWAY_WG_ADDRESS, a loopback address here: the peer subnet lies in 127.0.0.0/8) over its own
// keep-alive connection, with its own gateway token, and runs the companion's three loops:
//   poll       every GATEWAY_POLL_INTERVAL: GET /config/check?hash=<current>; 304 → nothing,
//              200 → GET /config (the new routes and hash)
//   heartbeat  every GATEWAY_HEARTBEAT_INTERVAL: POST /heartbeat with the full payload (every route
//              of its config reported reachable); config_changed in the answer → poll at once
//   status     every GATEWAY_STATUS_INTERVAL (60 s, not in gateway.env): POST /status
// Like the companion's Loop, the next run is scheduled an interval after the previous one ended.
// The loops start at a random phase within their interval (a fleet started at different times).
import http from 'node:http';
import { GATEWAY_DEFAULTS, parseEnvText } from '@gatehouse/common/gateway-protocol.js';
import type { BodyOf } from '../../../sidecar/test/lib/api-types.js';
import type { GatewayConfigRoute } from '../../../sidecar/test/lib/protocol.js';

export interface CompanionEnv {
  serverUrl: string;
  peerId: number;
  token: string;
  /** the companion's tunnel address (no prefix): the source address of its connections */
  address: string;
  pollMs: number;
  heartbeatMs: number;
}

/** gateway.env text → what a companion needs from it. */
export function parseGatewayEnv(text: string): CompanionEnv {
  const v = parseEnvText(text);
  const need = (k: string) => {
    if (!v[k]) throw new Error(`gateway.env has no ${k}:\n${text}`);
    return v[k];
  };
  return {
    serverUrl: need('GATEHOUSE_SERVER_URL'),
    peerId: Number(need('GATEWAY_PEER_ID')),
    token: need('GATEWAY_API_TOKEN'),
    address: need('GATEWAY_WG_ADDRESS').split('/')[0],
    pollMs: Number(need('GATEWAY_POLL_INTERVAL')) * 1000,
    heartbeatMs: Number(need('GATEWAY_HEARTBEAT_INTERVAL')) * 1000,
  };
}

export type CallKind = 'check' | 'config' | 'heartbeat' | 'status';

export interface FleetStats {
  /** milliseconds per call kind, while `measuring` */
  latency: Record<CallKind, number[]>;
  /** check answers by status */
  checks: Record<string, number>;
  /** unexpected statuses and socket errors, with what happened */
  errors: string[];
  /** heartbeats answered with config_changed */
  kicked: number;
}

/** What a companion keeps of each route of its configuration. */
type RouteCfg = Pick<GatewayConfigRoute, 'id' | 'domain'>;

export class Companion {
  hash: string | null = null;
  routes: RouteCfg[] = [];
  private readonly agent: http.Agent;
  private readonly timers = new Set<NodeJS.Timeout>();
  private stopped = false;
  private polling: Promise<void> | null = null;
  private readonly started = Date.now();

  constructor(
    readonly env: CompanionEnv,
    private readonly stats: FleetStats,
    private readonly measuring: () => boolean,
  ) {
    // keep-alive like the companion's fetch (undici): an idle connection is closed after 4 s, so with
    // intervals of 10 s and more each call opens a new one (never a race with the server's idle close)
    this.agent = new http.Agent({ keepAlive: true, timeout: 4000, maxSockets: 2, localAddress: env.address });
  }

  /** A call of the gateway API (`/api/v1/gateway` + path), its body typed by method and path as with s.req(). */
  private call<M extends 'GET' | 'POST', P extends string>(
    method: M,
    p: P,
    body?: unknown,
  ): Promise<{ status: number; data: BodyOf<M, `/api/v1/gateway${P}`>; ms: number }> {
    const u = new URL(`${this.env.serverUrl}/api/v1/gateway${p}`);
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const t0 = performance.now();
    return new Promise((resolve, reject) => {
      const req = http.request(
        {
          host: u.hostname,
          port: u.port,
          path: `${u.pathname}${u.search}`,
          method,
          agent: this.agent,
          timeout: 10_000,
          headers: {
            authorization: `Bearer ${this.env.token}`,
            accept: 'application/json',
            ...(payload ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {}),
          },
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (c) => (text += c));
          res.on('end', () => {
            let data: unknown = null;
            try {
              data = text ? JSON.parse(text) : null;
            } catch {
              data = text;
            }
            // reason: the parsed answer is the body the server declares for this method and path (BodyOf)
            resolve({ status: res.statusCode ?? 0, data: data as BodyOf<M, `/api/v1/gateway${P}`>, ms: performance.now() - t0 });
          });
        },
      );
      req.on('timeout', () => req.destroy(new Error('timed out after 10 s')));
      req.on('error', reject);
      req.end(payload);
    });
  }

  private async timed<M extends 'GET' | 'POST', P extends string>(
    kind: CallKind,
    method: M,
    p: P,
    ok: number[],
    body?: unknown,
  ): Promise<{ status: number; data: BodyOf<M, `/api/v1/gateway${P}`> } | null> {
    try {
      const r = await this.call(method, p, body);
      if (this.stopped) return null;
      if (this.measuring()) this.stats.latency[kind].push(r.ms);
      if (!ok.includes(r.status)) {
        this.stats.errors.push(`gateway ${this.env.peerId} ${kind}: ${r.status} ${JSON.stringify(r.data).slice(0, 200)}`);
        return null;
      }
      return r;
    } catch (err) {
      if (this.stopped) return null;
      this.stats.errors.push(`gateway ${this.env.peerId} ${kind}: ${(err as Error).message}`);
      return null;
    }
  }

  /** One poll: check, and on 200 fetch the configuration. */
  poll(): Promise<void> {
    // a kick while a poll runs joins it (the companion's Loop does not run twice at once)
    this.polling ??= (async () => {
      const q = this.hash ? `?hash=${encodeURIComponent(this.hash)}` : '';
      const check = await this.timed('check', 'GET', `/config/check${q}`, [200, 304]);
      if (!check) return;
      if (this.measuring()) this.stats.checks[check.status] = (this.stats.checks[check.status] ?? 0) + 1;
      if (check.status === 304) return;
      const cfg = await this.timed('config', 'GET', '/config', [200]);
      if (!cfg) return;
      if (cfg.data.peer_id !== this.env.peerId) this.stats.errors.push(`gateway ${this.env.peerId}: got the configuration of peer ${cfg.data.peer_id}`);
      this.hash = cfg.data.config_hash;
      this.routes = cfg.data.routes.map((r) => ({ id: r.id, domain: r.domain }));
    })().finally(() => (this.polling = null));
    return this.polling;
  }

  heartbeatPayload(): Record<string, unknown> {
    return {
      uptime_s: Math.round((Date.now() - this.started) / 1000),
      http_proxy_healthy: true,
      api_healthy: true,
      dns_resolve_ok: true,
      overall_healthy: true,
      tcp_listeners: [],
      wg_handshake_age_s: 12,
      route_reachability: this.routes.map((r) => ({ route_id: r.id, reachable: true, latency_ms: 1.5 })),
      hostname: `gw-${this.env.peerId}`,
      config_hash: this.hash,
      telemetry: {
        gateway_version: '1.0.0',
        node_version: process.version,
        wg_tools_version: 'wireguard-tools v1.0.20210914',
        cpu_cores: 4,
        cpu_load_avg: [0.1, 0.2, 0.3],
        mem_total: 4e9,
        mem_free: 2e9,
        mem_used: 2e9,
        disk: { total: 32e9, free: 20e9, used: 12e9 },
        os_platform: 'linux',
        os_release: '6.1.0',
        arch: 'x64',
        dns_resolvers: ['192.168.1.1'],
        default_gateway_ip: '192.168.1.1',
      },
    };
  }

  async heartbeat(): Promise<void> {
    const r = await this.timed('heartbeat', 'POST', '/heartbeat', [200], this.heartbeatPayload());
    if (r?.data?.config_changed) {
      if (this.measuring()) this.stats.kicked++;
      await this.poll();
    }
  }

  async status(): Promise<void> {
    await this.timed('status', 'POST', '/status', [200], { rx_bytes: 123_456, tx_bytes: 654_321, active_connections: 3 });
  }

  private loop(fn: () => Promise<void>, intervalMs: number, firstMs: number): void {
    const run = () => {
      if (this.stopped) return;
      void fn().finally(() => {
        if (this.stopped) return;
        const t = setTimeout(run, intervalMs);
        this.timers.add(t);
      });
    };
    const t = setTimeout(run, firstMs);
    this.timers.add(t);
  }

  /** The three loops, each at a random phase within its interval. */
  start(): void {
    this.loop(() => this.poll(), this.env.pollMs, Math.random() * this.env.pollMs);
    this.loop(() => this.heartbeat(), this.env.heartbeatMs, Math.random() * this.env.heartbeatMs);
    const statusMs = GATEWAY_DEFAULTS.statusIntervalS * 1000;
    this.loop(() => this.status(), statusMs, Math.random() * statusMs);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers) clearTimeout(t);
    await this.polling;
    this.agent.destroy();
  }
}

export function newFleetStats(): FleetStats {
  return { latency: { check: [], config: [], heartbeat: [], status: [] }, checks: {}, errors: [], kicked: 0 };
}
