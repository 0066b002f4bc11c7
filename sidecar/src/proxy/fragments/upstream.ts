// The backend of an HTTP or L4 route: where it is (routeUpstream, also used by the route monitor)
// and the reverse_proxy to it. Pure. (The answer when it cannot be reached: error-pages.ts.)
import type { Route } from '../../routes/model.js';
import type { CaddyHandler, Json } from '../caddy-json.js';
import type { RenderContext } from '../render-context.js';
import { gatewayUpstream } from './gateway.js';
import { reverseProxyTo } from './servers.js';

/** `host:port` of a route's upstream, or null when it cannot be served now (reason given). */
export function routeUpstream(route: Route, ctx: Pick<RenderContext, 'peers' | 'settings'>): { host: string; port: number } | { unavailable: string } {
  // Gateway targets: the companion on the gateway's tunnel address (fragments/gateway.ts).
  if (route.target_kind === 'gateway') return gatewayUpstream(route, ctx.peers, ctx.settings.gatewayProxyPort);
  if (route.peer_id === null || route.target_port === null) return { unavailable: 'route has no target' };
  const peer = ctx.peers.get(route.peer_id);
  if (!peer) return { unavailable: 'peer not found' };
  if (!peer.enabled) return { unavailable: 'peer disabled' };
  return { host: peer.address.split('/')[0], port: Number(route.target_port) };
}

/** A listener address of the http or layer4 app: `[udp/]<bind>:<port>`, IPv6 bracketed. */
export const listenAddr = (bind: string, port: number, udp = false) => `${udp ? 'udp/' : ''}${bind.includes(':') ? `[${bind}]` : bind}:${port}`;

export function encodeHandler(encodings: readonly ('zstd' | 'gzip')[] = ['zstd', 'gzip']): CaddyHandler {
  // The JSON of the Caddyfile directive `encode zstd gzip` (the list in order of preference).
  return { handler: 'encode', encodings: Object.fromEntries([...encodings].sort().map((e) => [e, {}])), prefer: [...encodings] };
}

export function reverseProxy(route: Route, up: { host: string; port: number }): CaddyHandler {
  const h: CaddyHandler = reverseProxyTo(`${up.host}:${up.port}`);
  if (route.backend_https && route.target_kind !== 'gateway') {
    // (gateway routes: the companion makes the TLS hop to the LAN target.)
    // The hop runs inside the WireGuard tunnel (encrypted and authenticated already) to a tunnel IP
    // address, which a backend's certificate practically never names: the certificate is not
    // verified. The route's domain is sent as SNI so name-based backends pick the right site.
    const tls: Json = { insecure_skip_verify: true };
    if (!route.domain.startsWith('*.')) tls.server_name = route.domain;
    h.transport = { protocol: 'http', tls };
  }
  return h;
}
