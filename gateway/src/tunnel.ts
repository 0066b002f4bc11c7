// The companion's WireGuard tunnel, driven by the sidecar's own driver (sidecar/src/wireguard/
// driver.ts: kernel module when present, else a supervised wireguard-go): one interface holding
// one peer, the server, with the gateway's address and a route for each allowed CIDR (what
// wg-quick would do with the same values).
import dgram from 'node:dgram';
import { WgDriver } from '@gatehouse/common/wireguard/driver.js';
import type { WgPeerSpec } from '@gatehouse/common/wireguard/types.js';
import type { CompanionEnv } from './env.js';
import type { Logger } from '@gatehouse/common/json-log.js';

export interface TunnelStats {
  /** seconds since the last handshake with the server, null before the first */
  handshakeAgeS: number | null;
  rx: number;
  tx: number;
}

async function freeUdpPort(): Promise<number> {
  const s = dgram.createSocket('udp4');
  await new Promise<void>((r) => s.bind(0, () => r()));
  const { port } = s.address();
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

export class Tunnel {
  readonly driver: WgDriver;
  mode: 'kernel' | 'userspace' | null = null;
  private peer: WgPeerSpec;
  private stopping = false;

  constructor(
    private readonly env: CompanionEnv,
    private readonly log: Logger,
    onExit: () => void,
  ) {
    this.driver = new WgDriver({
      onUserspaceExit: (iface, code, signal, output) => {
        if (this.stopping) return;
        this.log.error(`wireguard-go for ${iface} exited (${signal ?? `code ${code}`})`, { output: output.slice(-1000) });
        onExit();
      },
    });
    this.peer = {
      publicKey: env.wg.serverPublicKey!,
      presharedKey: env.wg.presharedKey,
      allowedIps: env.wg.allowedIps,
      endpoint: env.wg.endpoint,
      persistentKeepalive: env.wg.persistentKeepalive || undefined,
    };
  }

  get iface(): string {
    return this.env.wg.iface;
  }

  async up(): Promise<void> {
    this.stopping = false;
    const listenPort = this.env.wg.listenPort ?? (await freeUdpPort());
    const r = await this.driver.up({ iface: this.iface, privateKey: this.env.wg.privateKey!, listenPort, address: this.env.wg.address, peers: [this.peer] });
    this.mode = r.mode;
    for (const cidr of this.env.wg.allowedIps) await this.driver.run('ip', ['-4', 'route', 'replace', cidr, 'dev', this.iface]);
    this.log.info(`tunnel ${this.iface} up (${r.mode}) ${this.env.wg.address} → ${this.env.wg.endpoint}`, { listen_port: listenPort });
  }

  async stats(): Promise<TunnelStats | null> {
    const dump = await this.driver.dump(this.iface).catch(() => null);
    const p = dump?.peers.find((x) => x.publicKey === this.peer.publicKey);
    if (!p) return null;
    return { handshakeAgeS: p.latestHandshake > 0 ? Math.max(0, Math.round((Date.now() - p.latestHandshake) / 1000)) : null, rx: p.rx, tx: p.tx };
  }

  /** Sets the server peer again: wg resolves a host-name endpoint anew (dynamic DNS after an address change). */
  async refreshEndpoint(): Promise<void> {
    await this.driver.setPeer(this.iface, this.peer);
  }

  async down(): Promise<void> {
    this.stopping = true;
    await this.driver.down(this.iface);
  }
}
