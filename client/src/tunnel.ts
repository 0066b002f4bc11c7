// The client's WireGuard interface, driven by the shared driver (@gatehouse/common/wireguard/
// driver.ts: the kernel module when present, else a supervised wireguard-go; --userspace forces
// wireguard-go). One interface, one peer (the server), the client's address, and a route per
// AllowedIPs entry: what wg-quick would do with the same file, minus DNS (the system resolver is
// left alone).
//
// apply(config) is used for the first bring-up and for every later change: on an existing
// interface the driver runs `wg syncconf` (only the differences are applied: the tunnel, its
// handshake and open connections survive) and fixes the address; routes are added and removed by
// difference. A full-tunnel config (0.0.0.0/0) gets the two /1 halves plus a route pinning the
// server endpoint to the path it had before, so the tunnel's own packets do not loop into it.
import dgram from 'node:dgram';
import dns from 'node:dns/promises';
import net from 'node:net';
import { WgDriver } from '@gatehouse/common/wireguard/driver.js';
import type { Logger } from '@gatehouse/common/json-log.js';
import { routesFor, type TunnelConfig } from './wgconf.js';

export interface TunnelStats {
  /** seconds since the last handshake with the server, null before the first */
  handshakeAgeS: number | null;
  rx: number;
  tx: number;
  endpoint: string | null;
}

export interface TunnelOptions {
  iface: string;
  /** wireguard-go even when the kernel has WireGuard */
  userspaceOnly?: boolean;
  /** the tunnel's UDP port; default: a free one (the client dials out) */
  listenPort?: number;
  /** run every command in this network namespace (tests) */
  netns?: string;
  /** told when our wireguard-go exits on its own */
  onExit?: () => void;
}

export async function freeUdpPort(): Promise<number> {
  const s = dgram.createSocket('udp4');
  await new Promise<void>((r) => s.bind(0, () => r()));
  const { port } = s.address();
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

export class Tunnel {
  readonly driver: WgDriver;
  mode: 'kernel' | 'userspace' | null = null;
  config: TunnelConfig | null = null;
  private listenPort: number | null;
  private routes: string[] = [];
  private pinned: string | null = null;
  private stopping = false;

  constructor(
    readonly opts: TunnelOptions,
    private readonly log: Logger,
  ) {
    this.listenPort = opts.listenPort ?? null;
    this.driver = new WgDriver({
      netns: opts.netns,
      userspaceOnly: opts.userspaceOnly,
      onUserspaceExit: (iface, code, signal, output) => {
        if (this.stopping) return;
        this.mode = null;
        this.log.error(`wireguard-go for ${iface} exited (${signal ?? `code ${code}`})`, { output: output.slice(-1000) });
        opts.onExit?.();
      },
    });
  }

  get iface(): string {
    return this.opts.iface;
  }

  /** Brings the interface up with `cfg`, or changes a running one to `cfg` without taking it down. */
  async apply(cfg: TunnelConfig): Promise<{ created: boolean }> {
    this.stopping = false;
    const existed = await this.driver.exists(this.iface);
    if (this.listenPort === null) this.listenPort = (await this.driver.dump(this.iface).catch(() => null))?.iface.listenPort || (await freeUdpPort());
    const [address, ...more] = cfg.addresses;
    const r = await this.driver.up({ iface: this.iface, privateKey: cfg.privateKey, listenPort: this.listenPort, address, peers: [cfg.peer] });
    this.mode = r.mode;
    for (const a of more) await this.ip(['address', 'replace', a, 'dev', this.iface]);
    if (cfg.mtu) await this.ip(['link', 'set', 'dev', this.iface, 'mtu', String(cfg.mtu)]);
    const { routes, fullTunnel } = routesFor(cfg.peer.allowedIps);
    if (fullTunnel) await this.pinEndpoint(cfg.peer.endpoint);
    else await this.unpinEndpoint();
    for (const c of routes) await this.ip(['-4', 'route', 'replace', c, 'dev', this.iface]);
    for (const c of this.routes.filter((x) => !routes.includes(x))) await this.ip(['-4', 'route', 'del', c, 'dev', this.iface], true);
    this.routes = routes;
    this.config = cfg;
    return { created: !existed };
  }

  private async ip(args: string[], allowFail = false): Promise<string> {
    return (await this.driver.run('ip', args, { allowFail })).stdout;
  }

  /** A /32 route for the endpoint's address over the path it takes now (before the /1 halves exist). */
  private async pinEndpoint(endpoint: string): Promise<void> {
    const host = endpoint.replace(/:\d+$/, '').replace(/^\[(.*)\]$/, '$1');
    const addr = net.isIP(host) ? host : (await dns.lookup(host, { family: 4 })).address;
    if (this.pinned === addr) return;
    await this.unpinEndpoint();
    const out = await this.ip(['-4', 'route', 'get', addr]);
    const via = /\bvia (\S+)/.exec(out)?.[1];
    const dev = /\bdev (\S+)/.exec(out)?.[1];
    if (!dev || dev === this.iface) {
      this.log.warn(`no route to the endpoint ${addr} outside the tunnel; full-tunnel traffic may loop`);
      return;
    }
    await this.ip(['-4', 'route', 'replace', `${addr}/32`, ...(via ? ['via', via] : []), 'dev', dev]);
    this.pinned = addr;
  }

  private async unpinEndpoint(): Promise<void> {
    if (!this.pinned) return;
    await this.ip(['-4', 'route', 'del', `${this.pinned}/32`], true);
    this.pinned = null;
  }

  async exists(): Promise<boolean> {
    return this.driver.exists(this.iface);
  }

  async stats(): Promise<TunnelStats | null> {
    const dump = await this.driver.dump(this.iface).catch(() => null);
    const key = this.config?.peer.publicKey;
    const p = dump?.peers.find((x) => !key || x.publicKey === key);
    if (!p) return null;
    return {
      handshakeAgeS: p.latestHandshake > 0 ? Math.max(0, Math.round((Date.now() - p.latestHandshake) / 1000)) : null,
      rx: p.rx,
      tx: p.tx,
      endpoint: p.endpoint,
    };
  }

  async down(): Promise<void> {
    this.stopping = true;
    await this.unpinEndpoint().catch(() => undefined);
    await this.driver.down(this.iface);
    this.mode = null;
    this.routes = [];
  }
}
