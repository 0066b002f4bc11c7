// L4 gateway routes: one TCP listener (or UDP relay) per route on the companion's tunnel address at
// the route's listener port, forwarding to the LAN target. apply() reconciles the running set with
// a new configuration: unchanged listeners keep running (and their connections), removed ones stop
// accepting (open connections finish), changed ones are replaced. A listener that cannot bind
// (port in use) is reported as status "error" in the heartbeat and retried on every apply/retry().
// disconnect(routeId) closes the live connections of a route (the server's POST /disconnect: RDP
// disconnect-all in gateway mode); its listener keeps accepting.
import dgram from 'node:dgram';
import net from 'node:net';
import type { GatewayListenerConfig } from '@gatehouse/common/gateway-protocol.js';
import type { Logger } from '@gatehouse/common/json-log.js';

export interface ListenerStatus {
  route_id: number;
  port: number;
  protocol: 'tcp' | 'udp';
  status: 'listening' | 'error';
  error?: string;
}

interface Running {
  cfg: GatewayListenerConfig;
  status: 'listening' | 'error' | 'starting';
  error?: string;
  close(): Promise<void>;
  connections(): number;
  /** closes every live connection (the listener stays); how many there were */
  disconnect(): number;
}

const keyOf = (c: GatewayListenerConfig) => `${c.route_id}|${c.port}|${c.target_host}|${c.target_port}`;

abstract class ListenerSet {
  protected running = new Map<number, Running>();
  constructor(
    protected readonly bind: string,
    protected readonly log: Logger,
    protected readonly opts: { connectTimeoutMs: number },
  ) {}
  protected abstract start(cfg: GatewayListenerConfig): Running;
  abstract readonly protocol: 'tcp' | 'udp';

  async apply(list: GatewayListenerConfig[]): Promise<void> {
    const want = new Map(list.map((c) => [c.port, c]));
    for (const [port, r] of [...this.running]) {
      const w = want.get(port);
      if (!w || keyOf(w) !== keyOf(r.cfg) || r.status === 'error') {
        this.running.delete(port);
        await r.close();
      }
    }
    for (const [port, cfg] of want) if (!this.running.has(port)) this.running.set(port, this.start(cfg));
    await this.settle();
  }

  /** Re-tries listeners that failed to bind. */
  async retry(): Promise<void> {
    const all = [...this.running.values()];
    if (all.some((r) => r.status === 'error')) await this.apply(all.map((r) => r.cfg)); // apply() restarts the failed ones
  }

  private async settle(): Promise<void> {
    for (let i = 0; i < 100 && [...this.running.values()].some((r) => r.status === 'starting'); i++) await new Promise((r) => setTimeout(r, 10));
  }

  status(): ListenerStatus[] {
    return [...this.running.values()]
      .sort((a, b) => a.cfg.port - b.cfg.port)
      .map((r) => ({
        route_id: r.cfg.route_id,
        port: r.cfg.port,
        protocol: this.protocol,
        status: r.status === 'listening' ? 'listening' : 'error',
        ...(r.error ? { error: r.error } : {}),
      }));
  }

  connections(): number {
    let n = 0;
    for (const r of this.running.values()) n += r.connections();
    return n;
  }

  /** Closes the live connections of a route's listener(s); returns how many were closed. */
  disconnect(routeId: number): number {
    let n = 0;
    for (const r of this.running.values()) if (r.cfg.route_id === routeId) n += r.disconnect();
    return n;
  }

  async closeAll(): Promise<void> {
    const all = [...this.running.values()];
    this.running.clear();
    await Promise.all(all.map((r) => r.close()));
  }
}

export class TcpListeners extends ListenerSet {
  readonly protocol = 'tcp' as const;

  protected start(cfg: GatewayListenerConfig): Running {
    const sockets = new Set<net.Socket>();
    const clients = new Set<net.Socket>();
    const server = net.createServer((client) => {
      sockets.add(client);
      clients.add(client);
      const upstream = net.connect({ host: cfg.target_host, port: cfg.target_port });
      sockets.add(upstream);
      const timer = setTimeout(() => upstream.destroy(new Error('connect timeout')), this.opts.connectTimeoutMs);
      upstream.once('connect', () => clearTimeout(timer));
      const end = () => {
        clearTimeout(timer);
        client.destroy();
        upstream.destroy();
      };
      client.on('error', end);
      upstream.on('error', (err: NodeJS.ErrnoException) => {
        this.log.debug('L4 target failed', { route_id: cfg.route_id, target: `${cfg.target_host}:${cfg.target_port}`, code: err.code ?? err.message });
        end();
      });
      client.once('close', () => {
        sockets.delete(client);
        clients.delete(client);
        upstream.end();
      });
      upstream.once('close', () => {
        sockets.delete(upstream);
        client.end();
      });
      client.pipe(upstream);
      upstream.pipe(client);
    });
    const r: Running = {
      cfg,
      status: 'starting',
      connections: () => Math.floor(sockets.size / 2),
      disconnect: () => {
        const n = clients.size;
        for (const s of [...sockets]) s.destroy();
        return n;
      },
      close: () =>
        new Promise<void>((resolve) => {
          if (!server.listening) return resolve();
          server.close(() => resolve()); // open connections finish on their own
        }),
    };
    server.once('error', (err: NodeJS.ErrnoException) => {
      r.status = 'error';
      r.error = err.code ?? err.message;
      this.log.warn(`TCP listener for route ${cfg.route_id} on ${this.bind}:${cfg.port} failed`, { error: r.error });
    });
    server.listen(cfg.port, this.bind, () => {
      r.status = 'listening';
      this.log.info(`TCP listener ${this.bind}:${cfg.port} → ${cfg.target_host}:${cfg.target_port} (route ${cfg.route_id})`);
    });
    return r;
  }
}

/** UDP: one upstream socket per client address, dropped after IDLE_MS without traffic. */
export class UdpListeners extends ListenerSet {
  readonly protocol = 'udp' as const;
  static IDLE_MS = 60_000;

  protected start(cfg: GatewayListenerConfig): Running {
    const family = net.isIPv6(this.bind) ? 'udp6' : 'udp4';
    const sock = dgram.createSocket(family);
    const sessions = new Map<string, { up: dgram.Socket; last: number }>();
    const sweep = setInterval(() => {
      const now = Date.now();
      for (const [k, s] of sessions) {
        if (now - s.last > UdpListeners.IDLE_MS) {
          s.up.close();
          sessions.delete(k);
        }
      }
    }, 10_000);
    sweep.unref();
    sock.on('message', (msg, rinfo) => {
      const k = `${rinfo.address}|${rinfo.port}`;
      let s = sessions.get(k);
      if (!s) {
        const up = dgram.createSocket(net.isIPv6(cfg.target_host) ? 'udp6' : 'udp4');
        up.on('message', (reply) => {
          const cur = sessions.get(k);
          if (cur) cur.last = Date.now();
          sock.send(reply, rinfo.port, rinfo.address);
        });
        up.on('error', () => {
          up.close();
          sessions.delete(k);
        });
        s = { up, last: Date.now() };
        sessions.set(k, s);
      }
      s.last = Date.now();
      s.up.send(msg, cfg.target_port, cfg.target_host);
    });
    const r: Running = {
      cfg,
      status: 'starting',
      connections: () => sessions.size,
      disconnect: () => {
        const n = sessions.size;
        for (const s of sessions.values()) s.up.close();
        sessions.clear();
        return n;
      },
      close: () =>
        new Promise<void>((resolve) => {
          clearInterval(sweep);
          for (const s of sessions.values()) s.up.close();
          sessions.clear();
          try {
            sock.close(() => resolve());
          } catch {
            resolve();
          }
        }),
    };
    sock.once('error', (err: NodeJS.ErrnoException) => {
      r.status = 'error';
      r.error = err.code ?? err.message;
      this.log.warn(`UDP listener for route ${cfg.route_id} on ${this.bind}:${cfg.port} failed`, { error: r.error });
    });
    sock.bind(cfg.port, this.bind, () => {
      r.status = 'listening';
      this.log.info(`UDP listener ${this.bind}:${cfg.port} → ${cfg.target_host}:${cfg.target_port} (route ${cfg.route_id})`);
    });
    return r;
  }
}
