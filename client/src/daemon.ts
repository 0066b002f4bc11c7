// `gatehouse-client up`: brings the tunnel up and stays in the foreground, talking to the server:
//
// - config poll (every --poll-interval, 15 s): GET /client/config/check?hash=<current>; 304 = the
//   config is current; 200 = GET /client/config, parse, apply to the running interface without
//   taking it down (wg syncconf + address + route differences), save it in tunnel.json.
// - heartbeat (every --heartbeat-interval, 60 s): handshake age and rx/tx from `wg show <if> dump`;
//   an answer naming another config_hash than ours triggers a poll at once.
// - hostname (at start, then checked every minute): POST /client/peer/hostname when it changed
//   (the server allows 3 a minute).
// - device status (at start, then every 10 minutes): POST /client/status with the OS, its version
//   and uptime, the client version and the tunnel (up, interface, endpoint, mode); the admin sees
//   it with the machine.
// With the defaults that is 75 calls per 15 minutes, within the server's client limit of 100 per IP
// (a 429 is an error like any other: the loop backs off).
// Each loop backs off after errors (interval × 2^errors, at most --max-backoff, ±10 % jitter). While
// the server is unreachable (or refuses the token) the tunnel keeps running on the last config; at
// start, the config saved in tunnel.json brings the tunnel up before the server answers.
// The daemon writes its view to status.json after every step (read by `status`), holds daemon.pid,
// and on SIGTERM/SIGINT (`down`) takes the tunnel down and removes the pid file.
import os from 'node:os';
import type { Logger } from '@gatehouse/common/json-log.js';
import { Loop } from '@gatehouse/common/loop.js';
import { ApiError, type ClientApi } from './api.js';
import type { DaemonStatus, StateDir } from './state.js';
import type { Tunnel, TunnelStats } from './tunnel.js';
import { parseWgQuick, type TunnelConfig } from './wgconf.js';

export interface DaemonOptions {
  state: StateDir;
  api: ClientApi;
  log: Logger;
  iface: string;
  /** null: no tunnel is managed (--no-tunnel: the config is fetched and saved only) */
  tunnel: Tunnel | null;
  pollIntervalMs: number;
  heartbeatIntervalMs: number;
  hostnameIntervalMs?: number;
  maxBackoffMs: number;
  /** the hostname to report (re-read every time: a renamed machine is reported again) */
  hostname: () => string;
  /** the client's version, reported in the device status */
  version?: string;
  statusIntervalMs?: number;
}

/** A hostname as the server's internal DNS accepts it: lower case, labels of [a-z0-9-], at most 63 characters each. */
export function dnsHostname(name: string): string {
  const labels = name
    .toLowerCase()
    .split('.')
    .map((l) =>
      l
        .replace(/[^a-z0-9-]+/g, '-')
        .replace(/^-+|-+$/g, '')
        .slice(0, 63)
        .replace(/-+$/, ''),
    )
    .filter(Boolean);
  return labels
    .join('.')
    .slice(0, 127)
    .replace(/[.-]+$/, '');
}

export class Daemon {
  configHash: string | null = null;
  config: TunnelConfig | null = null;
  configSource: 'server' | 'state' | null = null;
  tunnelUp = false;
  readonly server: DaemonStatus['server'] = { reachable: false, auth_rejected: false, last_ok_at: null, last_error: null, last_error_at: null };
  lastCheckAt: string | null = null;
  /** config checks answered 304 (unchanged) and 200 (changed) since start */
  readonly checks = { unchanged: 0, changed: 0 };
  heartbeats = 0;
  lastHeartbeat: { at: string; sent: Record<string, unknown>; answer: Record<string, unknown> } | null = null;
  lastHostname: { hostname: string; at: string } | null = null;
  readonly poll: Loop;
  private readonly loops: Loop[];
  private readonly startedAt = new Date().toISOString();
  private reUp: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(readonly o: DaemonOptions) {
    const max = o.maxBackoffMs;
    this.poll = new Loop('config poll', () => this.step(() => this.pollOnce()), o.pollIntervalMs, max, o.log);
    this.loops = [
      this.poll,
      new Loop('heartbeat', () => this.step(() => this.heartbeatOnce()), o.heartbeatIntervalMs, Math.min(max, 60_000), o.log),
      new Loop('hostname report', () => this.step(() => this.hostnameOnce()), o.hostnameIntervalMs ?? 60_000, max, o.log),
      new Loop('device status', () => this.step(() => this.deviceStatusOnce()), o.statusIntervalMs ?? 600_000, max, o.log),
    ];
  }

  async start(): Promise<void> {
    this.o.state.claimPid();
    const saved = this.o.state.readTunnel();
    if (saved) {
      try {
        const cfg = parseWgQuick(String(saved.config.config ?? ''));
        await this.apply(cfg, saved.config_hash, 'state');
        this.o.log.info('tunnel up on the saved configuration until the server answers', { config_hash: saved.config_hash });
      } catch (err) {
        this.o.log.warn(`the saved configuration cannot be used: ${(err as Error).message}; waiting for the server`);
      }
    }
    this.writeStatus();
    const [poll, hb, host, dev] = this.loops;
    poll.start(0);
    hb.start(300);
    host.start(600);
    dev.start(900);
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    for (const l of this.loops) l.stop();
    if (this.reUp) clearTimeout(this.reUp);
    if (this.o.tunnel) {
      await this.o.tunnel.down().catch((err) => this.o.log.warn(`taking ${this.o.iface} down failed`, { err: String(err) }));
    }
    this.tunnelUp = false;
    this.writeStatus();
    this.o.state.releasePid();
  }

  /** Runs one loop step, then records the daemon's view (also after a failure). */
  private async step(fn: () => Promise<void>): Promise<void> {
    try {
      await fn();
    } finally {
      if (!this.stopped) this.writeStatus();
    }
  }

  private async call<T>(fn: () => Promise<T>): Promise<T> {
    const now = () => new Date().toISOString();
    try {
      const r = await fn();
      if (!this.server.reachable || this.server.auth_rejected) this.o.log.info('the server answers', { server: this.o.api.baseUrl });
      Object.assign(this.server, { reachable: true, auth_rejected: false, last_ok_at: now() });
      return r;
    } catch (err) {
      const e = err instanceof ApiError ? err : new ApiError((err as Error).message, null);
      const rejected = e.status === 401 || e.status === 403;
      if (rejected && !this.server.auth_rejected) {
        this.o.log.error(
          `the server refused this client (${e.status}: ${e.message}): the token was revoked or expired, or it is bound to another machine fingerprint. The tunnel keeps its last configuration.`,
        );
      } else if (!rejected && (this.server.reachable || this.server.last_error !== e.message)) {
        this.o.log.warn(`server call failed: ${e.message}; retrying with back-off, the tunnel keeps its last configuration`);
      }
      Object.assign(this.server, { reachable: e.status !== null, auth_rejected: rejected, last_error: e.message, last_error_at: now() });
      throw e;
    }
  }

  async pollOnce(): Promise<void> {
    const newHash = await this.call(() => this.o.api.check(this.configHash));
    this.lastCheckAt = new Date().toISOString();
    this.checks[newHash === null ? 'unchanged' : 'changed']++;
    if (newHash === null) {
      if (this.configSource === 'state') {
        this.configSource = 'server';
        this.o.log.info('the saved configuration is current');
      }
      if (!this.tunnelUp && this.config && this.o.tunnel) await this.apply(this.config, this.configHash!, this.configSource ?? 'server');
      return;
    }
    const r = await this.call(() => this.o.api.config());
    const cfg = parseWgQuick(r.config);
    await this.apply(cfg, r.config_hash, 'server');
    const { ok: _ok, ...rest } = r;
    this.o.state.writeTunnel(r.config_hash, rest);
  }

  private async apply(cfg: TunnelConfig, hash: string, source: 'server' | 'state'): Promise<void> {
    const changed = hash !== this.configHash;
    // the config counts as held (and is saved) even when bringing the tunnel up fails: the next poll sees a 304 and retries the tunnel
    this.config = cfg;
    this.configHash = hash;
    this.configSource = source;
    if (this.o.tunnel) {
      try {
        const r = await this.o.tunnel.apply(cfg);
        this.tunnelUp = true;
        if (r.created)
          this.o.log.info(`tunnel ${this.o.iface} up (${this.o.tunnel.mode}) ${cfg.addresses.join(', ')} → ${cfg.peer.endpoint}`, {
            config_hash: hash,
            source,
          });
        else if (changed) this.o.log.info(`configuration applied to the running tunnel ${this.o.iface}`, { config_hash: hash, source });
      } catch (err) {
        this.tunnelUp = false;
        this.o.log.error(`bringing up ${this.o.iface} failed: ${(err as Error).message}`);
        this.scheduleTunnelRetry();
        return;
      }
    } else if (changed) {
      this.o.log.info('configuration received (tunnel not managed: --no-tunnel)', { config_hash: hash, source });
    }
  }

  private scheduleTunnelRetry(delayMs = 2000): void {
    if (!this.o.tunnel || this.reUp || this.stopped) return;
    this.reUp = setTimeout(() => {
      this.reUp = null;
      if (!this.config || this.stopped) return;
      this.o.tunnel!.apply(this.config).then(
        () => {
          this.tunnelUp = true;
          this.o.log.info(`tunnel ${this.o.iface} up again`);
          this.writeStatus();
        },
        (err) => {
          this.o.log.error(`bringing up ${this.o.iface} failed again: ${(err as Error).message}`);
          this.scheduleTunnelRetry(Math.min(60_000, delayMs * 2));
        },
      );
    }, delayMs);
  }

  /** The tunnel's wireguard-go exited on its own: bring it up again (with back-off). */
  onTunnelExit(): void {
    this.tunnelUp = false;
    this.writeStatus();
    this.scheduleTunnelRetry();
  }

  async heartbeatOnce(): Promise<void> {
    let stats: TunnelStats | null = null;
    if (this.o.tunnel && this.tunnelUp) stats = await this.o.tunnel.stats();
    const body = { handshake_age_s: stats?.handshakeAgeS ?? null, rx_bytes: stats?.rx ?? 0, tx_bytes: stats?.tx ?? 0 };
    const r = await this.call(() => this.o.api.heartbeat(body));
    this.lastHeartbeat = { at: new Date().toISOString(), sent: body, answer: r };
    this.heartbeats++;
    if (r.config_hash && r.config_hash !== this.configHash) this.poll.kick();
  }

  async hostnameOnce(): Promise<void> {
    const name = dnsHostname(this.o.hostname());
    if (!name || this.lastHostname?.hostname === name) return;
    const r = await this.call(() => this.o.api.reportHostname(name));
    this.lastHostname = { hostname: name, at: new Date().toISOString() };
    this.o.log.info(`hostname ${name} reported`, { applied: r.applied, ...(r.reason ? { reason: r.reason } : {}), fqdn: r.fqdn });
  }

  async deviceStatusOnce(): Promise<void> {
    const stats = this.o.tunnel && this.tunnelUp ? await this.o.tunnel.stats() : null;
    await this.call(() =>
      this.o.api.deviceStatus({
        os: `${os.type()} ${os.arch()}`,
        os_version: os.release(),
        uptime_s: Math.floor(os.uptime()),
        client_version: this.o.version ?? null,
        tunnel: {
          up: this.tunnelUp,
          interface: this.o.iface,
          endpoint: stats?.endpoint ?? this.config?.peer.endpoint ?? '',
          mode: this.o.tunnel?.mode ?? 'none',
        },
        config_hash: this.configHash,
      }),
    );
  }

  view(): DaemonStatus {
    return {
      pid: process.pid,
      started_at: this.startedAt,
      updated_at: new Date().toISOString(),
      iface: this.o.iface,
      tunnel_mode: this.o.tunnel ? this.o.tunnel.mode : 'none',
      tunnel_up: this.tunnelUp,
      config_hash: this.configHash,
      config_source: this.configSource,
      hostname: dnsHostname(this.o.hostname()),
      server: { ...this.server },
      last_check_at: this.lastCheckAt,
      checks: { ...this.checks },
      heartbeats: this.heartbeats,
      last_heartbeat_at: this.lastHeartbeat?.at ?? null,
      last_heartbeat: this.lastHeartbeat,
      last_hostname_report: this.lastHostname,
    };
  }

  private writeStatus(): void {
    try {
      this.o.state.writeStatus(this.view());
    } catch (err) {
      this.o.log.warn('cannot write status.json', { err: String(err) });
    }
  }
}

export const defaultHostname = (): string => os.hostname();
