// The sidecar environment the end-to-end tests share: WireGuard managed (wireguard-go) with its own
// interface name, /24 and UDP port, and the real custom Caddy (bin/caddy) supervised on its own
// ports. Each test spreads its own keys over `env` (rate limits, TLS, gateway timings, …).
//   const { env, ports, serverIp } = await e2eServerEnv({ iface: 'ghx123', subnet: '10.250.7', publicHost, proxyBind });
import { CADDY, managedCaddyEnv } from './caddy-env.js';
import { freePort } from './ports.js';

export { CADDY };

export interface E2ePorts {
  api: number;
  http: number;
  https: number;
  admin: number;
  wg: number;
}

/**
 * subnet: the first three octets of the VPN /24 (the server is .1); publicHost: the address the
 * peers' configs dial; proxyBind: where Caddy listens ('serverIp' = the server's tunnel address).
 */
export async function e2eServerEnv(o: { iface: string; subnet: string; publicHost: string; proxyBind: string | 'serverIp' }): Promise<{ env: Record<string, string>; ports: E2ePorts; serverIp: string }> {
  const ports: E2ePorts = { api: await freePort('tcp'), http: await freePort('tcp'), https: await freePort('tcp'), admin: await freePort('tcp'), wg: await freePort('udp') };
  const serverIp = `${o.subnet}.1`;
  const env = {
    GATEHOUSE_PORT: String(ports.api),
    GATEHOUSE_BIND: '127.0.0.1',
    GATEHOUSE_WG_MANAGE: 'true',
    GATEHOUSE_WG_INTERFACE: o.iface,
    GATEHOUSE_WG_SUBNET: `${o.subnet}.0/24`,
    GATEHOUSE_WG_PORT: String(ports.wg),
    GATEHOUSE_WG_POLL_INTERVAL: '3600',
    GATEHOUSE_PUBLIC_HOST: o.publicHost,
    ...managedCaddyEnv(ports, o.proxyBind === 'serverIp' ? serverIp : o.proxyBind),
    GATEHOUSE_RATE_LIMIT_ADMIN: '100000',
  };
  return { env, ports, serverIp };
}
