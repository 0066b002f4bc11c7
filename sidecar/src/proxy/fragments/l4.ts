// L4 routes (caddy-l4, pure): one layer4 server per enabled L4 route on its l4_listen_port, proxying
// TCP or UDP to the route's upstream; for TCP with l4_tls_mode, TLS passthrough (SNI match) or TLS
// termination (certificate from the tls app).
import type { Route } from '../../routes/model.js';
import type { Json, L4Server } from '../caddy-json.js';
import type { RenderContext } from '../render-context.js';
import { listenAddr, routeUpstream } from './upstream.js';

/** The name of a route's layer4 server. */
export const l4ServerName = (route: Pick<Route, 'id'>) => `route_${route.id}`;

/** The route's layer4 server, or null when its upstream is unavailable (nothing listens: connections are refused). */
export function l4Server(route: Route, ctx: RenderContext): L4Server | null {
  const up = routeUpstream(route, ctx);
  if ('unavailable' in up) return null;
  const udp = route.l4_protocol === 'udp';
  const proxy = { handler: 'proxy', upstreams: [{ dial: [`${udp ? 'udp/' : ''}${up.host}:${up.port}`] }] };
  const mode = udp ? 'none' : route.l4_tls_mode ?? 'none';
  let l4route: Json;
  if (mode === 'passthrough') {
    l4route = { match: [{ tls: { sni: [route.domain] } }], handle: [proxy] };
  } else if (mode === 'terminate') {
    l4route = { match: [{ tls: { sni: [route.domain] } }], handle: [{ handler: 'tls' }, proxy] };
  } else {
    l4route = { handle: [proxy] };
  }
  return { listen: [listenAddr(ctx.settings.bind, route.l4_listen_port as number, udp)], routes: [l4route] };
}

/** Whether the route needs a certificate from the tls app (TLS termination). */
export const l4NeedsCertificate = (route: Route) => route.l4_protocol !== 'udp' && route.l4_tls_mode === 'terminate';
