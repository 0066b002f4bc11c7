// The Caddy JSON of gateway routes (pure; composed by proxy/render.ts).
//
// - HTTP gateway route: reverse_proxy to the gateway's tunnel address at the companion's HTTP proxy
//   port (GATEHOUSE_GATEWAY_PROXY_PORT); the companion maps the Host header to the LAN target. The
//   Caddy → companion hop is plain HTTP inside the tunnel; backend_https applies to the companion's
//   hop to the LAN target.
// - L4 gateway route: caddy-l4 proxies to the gateway's tunnel address at the route's listener
//   port on the companion (gatewayListenPort: the route's own l4_listen_port), tcp or udp.
// - Wake-on-LAN (HTTP routes with wol_enabled): the reverse_proxy gets a handle_response that
//   matches the companion's "LAN target unreachable" answer (502 + X-Gatehouse-Gateway-Error:
//   lan-unreachable; a 502 from the application itself does not match) and hands the request to
//   the sidecar's waking-up page, GET /gateway-wol/wait with X-Gatehouse-Wol-Route: <route id>.
import type { Route } from '../../routes/model.js';
import { GATEWAY_DEFAULTS, gatewayListenPort, LAN_ERROR_HEADER, LAN_ERROR_VALUE, WOL_ROUTE_HEADER, WOL_WAIT_PATH } from '@gatehouse/common/gateway-protocol.js';
import type { CaddyHandler } from '../caddy-json.js';
import type { PeerTarget } from '../render-context.js';

/** The upstream of a gateway route: the gateway's tunnel address and the companion port. */
export function gatewayUpstream(
  route: Route,
  peers: Map<number, PeerTarget>,
  proxyPort: number | undefined,
): { host: string; port: number } | { unavailable: string } {
  if (route.target_peer_id === null || route.target_lan_host === null || route.target_lan_port === null) return { unavailable: 'route has no gateway target' };
  const gw = peers.get(route.target_peer_id);
  if (!gw) return { unavailable: 'gateway peer not found' };
  if (!gw.enabled) return { unavailable: 'gateway peer disabled' };
  const host = gw.address.split('/')[0];
  if (route.route_type === 'l4') {
    const port = gatewayListenPort(route);
    return port === null ? { unavailable: 'route has no listen port' } : { host, port };
  }
  return { host, port: proxyPort ?? GATEWAY_DEFAULTS.proxyPort };
}

/** Adds the Wake-on-LAN hand-off to a gateway route's reverse_proxy handler (other handlers unchanged). */
export function withGatewayWol(handler: CaddyHandler, route: Route, sidecarUpstream: string): CaddyHandler {
  if (route.target_kind !== 'gateway' || route.route_type !== 'http' || !route.wol_enabled || !route.wol_mac || handler.handler !== 'reverse_proxy')
    return handler;
  return {
    ...handler,
    handle_response: [
      {
        match: { status_code: [502], headers: { [LAN_ERROR_HEADER]: [LAN_ERROR_VALUE] } },
        routes: [
          {
            handle: [
              {
                handler: 'reverse_proxy',
                upstreams: [{ dial: sidecarUpstream }],
                rewrite: { method: 'GET', uri: WOL_WAIT_PATH },
                headers: { request: { set: { [WOL_ROUTE_HEADER]: [String(route.id)] } } },
              },
            ],
          },
        ],
      },
    ],
  };
}
