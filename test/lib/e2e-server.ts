// The sidecar environment the end-to-end tests share: WireGuard managed (wireguard-go) with its own
// interface name, /24 and UDP port, and the real custom Caddy (bin/caddy) supervised on its own
// ports. Each test spreads its own keys over `env` (rate limits, TLS, gateway timings, …).
//   const { env, ports, serverIp } = await e2eServerEnv({ iface: 'ghx123', subnet: '10.250.7', publicHost, proxyBind });
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { startTestServer, apiToken, bearer, apiCall, type ApiCall, type TestServer } from '../../sidecar/test/lib/server.js';
import type { BodyOf } from '../../sidecar/test/lib/api-types.js';
import type { StartOptions } from '../../sidecar/src/server.js';
import { CADDY, managedCaddyEnv } from './caddy-env.js';
import { createNetwork, type Network } from './netns.js';
import { waitFor } from './wait.js';
import { freePort } from './ports.js';
import type { Peer } from '../../sidecar/test/lib/protocol.js';

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
export async function e2eServerEnv(o: {
  iface: string;
  subnet: string;
  publicHost: string;
  proxyBind: string | 'serverIp';
}): Promise<{ env: Record<string, string>; ports: E2ePorts; serverIp: string }> {
  const ports: E2ePorts = {
    api: await freePort('tcp'),
    http: await freePort('tcp'),
    https: await freePort('tcp'),
    admin: await freePort('tcp'),
    wg: await freePort('udp'),
  };
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
    // the product default: companions use their real tunnels, and a gateway token only works from its tunnel address
    GATEHOUSE_GATEWAY_TOKEN_ANY_SOURCE: 'false',
  };
  return { env, ports, serverIp };
}

/** What startE2e brings up: the namespaces (one per peer name), the sidecar with its tunnel and Caddy. */
export interface E2eRun {
  network: Network;
  s: TestServer;
  /** the admin API with a full-access token: api('/peers', 'POST', {...}) */
  api: ApiCall;
  serverIp: string;
  ports: E2ePorts;
  /** the environment the sidecar started with (e2eServerEnv plus the test's own keys): start another sidecar on the same interface, ports and subnet */
  env: Record<string, string>;
  /** the peer namespaces and their links to the host (host end .1, peer end .2), in the order of `peers` */
  ns: string[];
  links: { addrA: string; addrB: string }[];
  /** GET /health as it answered once everything started */
  health: Response & { data: BodyOf<'GET', '/health'> };
}

/**
 * The set-up the tunnel-and-Caddy e2e tests share: a network of namespaces (one per name in `peers`,
 * each linked to the host on 10.<peerOctets[i]>.<n>.0/24), the sidecar on e2eServerEnv with the VPN
 * on 10.<vpnOctet>.<n>.0/24 (n run-unique), its health (proxy up) checked, and everything stopped
 * after the test (the sidecar stops Caddy by PID and takes the WireGuard interface down).
 */
export async function startE2e(
  t: TestContext,
  o: {
    prefix: string;
    iface: string;
    vpnOctet: number;
    peers: { name: string; octet: number }[];
    proxyBind: string | 'serverIp';
    env?: Record<string, string>;
    start?: StartOptions;
  },
): Promise<E2eRun> {
  const n = (process.pid % 200) + 20;
  const network = await createNetwork({ prefix: o.prefix });
  const running: { s?: TestServer } = {};
  t.after(async () => {
    await running.s?.close();
    await network.cleanup();
  });
  const ns: string[] = [];
  const links: { addrA: string; addrB: string }[] = [];
  for (const p of o.peers) {
    ns.push(await network.addNamespace(p.name));
    links.push(await network.link(null, ns[ns.length - 1], `10.${p.octet}.${n}.1/24`, `10.${p.octet}.${n}.2/24`));
  }
  const { env, ports, serverIp } = await e2eServerEnv({ iface: o.iface, subnet: `10.${o.vpnOctet}.${n}`, publicHost: links[0].addrA, proxyBind: o.proxyBind });
  const serverEnv = { ...env, ...o.env };
  const s = await startTestServer(serverEnv, { startFeatures: true, ...o.start });
  running.s = s;
  const h = bearer(await apiToken(s));
  const api = apiCall(
    () => s,
    () => h,
  );
  const health = await s.req('/health');
  assert.equal(health.status, 200, JSON.stringify(health.data));
  assert.equal(health.data.checks?.proxy.ok, true);
  return { network, s, api, serverIp, ports, env: serverEnv, ns, links, health };
}

/**
 * Creates one peer per namespace of `run` through the API and brings its own config up there (each
 * dialling the server through its own link), then waits until every one pings the server's tunnel
 * address. Returns the peers as the API created them.
 */
export async function tunnelPeers(run: E2eRun, names: string[]): Promise<Peer[]> {
  const { network, api, serverIp, ns, links } = run;
  const peers: Peer[] = [];
  for (const name of names) peers.push((await api('/peers', 'POST', { name })).data.peer);
  for (const [i, peer] of peers.entries()) {
    // the config names its endpoint twice (the comment at the top and the Endpoint line): both dial this peer's own link
    const conf = ((await api(`/peers/${peer.id}/config`)).data as string).replaceAll(`${links[0].addrA}:`, `${links[i].addrA}:`);
    await network.bringUpPeer(ns[i], network.ifName(String.fromCharCode(97 + i)), conf);
  }
  for (const one of ns) await waitFor(async () => (await network.ping(one, serverIp, { count: 1, timeoutS: 1 })).ok, 20_000, { what: 'the tunnel' });
  return peers;
}
