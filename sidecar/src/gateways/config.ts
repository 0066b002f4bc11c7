// The configuration a gateway companion receives (pure): its enabled routes, the TCP and UDP
// listeners of its L4 routes, and its HTTP proxy port. config_hash = "sha256:" + SHA-256 of the
// canonical JSON (keys sorted at every level, no whitespace) of exactly that object, so the same
// routes always give the same hash, on every server and after every restart.
import { configHash } from '@gatehouse/common/canonical.js';
import type { Route } from '../routes/model.js';
import { gatewayListenPort, type GatewayConfig, type GatewayListenerConfig, type GatewayRouteConfig } from '@gatehouse/common/gateway-protocol.js';

export function buildGatewayConfig(peerId: number, routes: Route[], proxyPort: number): GatewayConfig {
  const mine = routes
    .filter((r) => r.enabled && r.target_kind === 'gateway' && r.target_peer_id === peerId && r.target_lan_host !== null && r.target_lan_port !== null)
    .sort((a, b) => a.id - b.id);
  const out: GatewayRouteConfig[] = [];
  const tcp: GatewayListenerConfig[] = [];
  const udp: GatewayListenerConfig[] = [];
  for (const r of mine) {
    const listen = gatewayListenPort(r);
    if (r.route_type === 'l4' && listen === null) continue;
    const route: GatewayRouteConfig = {
      id: r.id,
      domain: r.domain,
      route_type: r.route_type,
      l4_protocol: r.route_type === 'l4' ? (r.l4_protocol ?? 'tcp') : null,
      target_lan_host: r.target_lan_host as string,
      target_lan_port: r.target_lan_port as number,
      listen_port: listen,
      backend_https: r.route_type === 'http' && r.backend_https,
      wol_enabled: r.wol_enabled && r.wol_mac !== null,
      wol_mac: r.wol_mac,
    };
    out.push(route);
    if (listen !== null) {
      (route.l4_protocol === 'udp' ? udp : tcp).push({ route_id: r.id, port: listen, target_host: route.target_lan_host, target_port: route.target_lan_port });
    }
  }
  return { peer_id: peerId, proxy_port: proxyPort, routes: out, tcp_listeners: tcp, udp_listeners: udp };
}

export function gatewayConfigHash(cfg: GatewayConfig): string {
  return `sha256:${configHash(cfg)}`;
}
