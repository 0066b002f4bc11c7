// The contract between the WireGuard driver (wireguard/driver.ts: wg, ip, wireguard-go) and what
// decides what the interface should hold (the sidecar's peers and reconcile from the database, the
// gateway companion's tunnel).

export interface WgPeerSpec {
  publicKey: string;
  presharedKey?: string;
  /** CIDRs routed to this peer, e.g. ["10.8.0.2/32"] (a gateway adds its LAN ranges later). */
  allowedIps: string[];
  endpoint?: string;
  persistentKeepalive?: number;
}

export interface WgInterfaceSpec {
  iface: string;
  privateKey: string;
  listenPort: number;
  /** The server's tunnel address with prefix, e.g. "10.8.0.1/24". */
  address: string;
  peers: WgPeerSpec[];
}

export interface WgPeerStatus {
  publicKey: string;
  endpoint: string | null;
  allowedIps: string[];
  /** epoch ms of the latest handshake, 0 = never */
  latestHandshake: number;
  /** raw interface counters since the interface came up */
  rx: number;
  tx: number;
  persistentKeepalive: number | null;
}

export interface WgDump {
  iface: { publicKey: string; listenPort: number; fwmark: number | null };
  peers: WgPeerStatus[];
}

export interface WireGuardDriver {
  /** Bring the interface up (kernel module if present, else wireguard-go) and make it hold exactly spec. */
  up(spec: WgInterfaceSpec): Promise<{ mode: 'kernel' | 'userspace' }>;
  /** Make the running interface hold exactly spec.peers (wg syncconf): no restart, other tunnels untouched. */
  sync(spec: WgInterfaceSpec): Promise<void>;
  /** Add or update one peer (UAPI `set=1` on a wireguard-go interface, else `wg set`). */
  setPeer(iface: string, peer: WgPeerSpec): Promise<void>;
  /** Remove one peer (UAPI `remove=true`, else `wg set ... remove`): its tunnel stops at once. */
  removePeer(iface: string, publicKey: string): Promise<void>;
  /** `wg show <iface> dump`, parsed; null when the interface does not exist. */
  dump(iface: string): Promise<WgDump | null>;
  /** Tear the interface down (and stop the wireguard-go process we started). */
  down(iface: string): Promise<void>;
}
