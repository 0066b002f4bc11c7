// L4 routes (caddy-l4, pure): one layer4 server per enabled L4 route on its l4_listen_port, proxying
// TCP or UDP to the route's upstream; for TCP with l4_tls_mode, TLS passthrough (SNI match) or TLS
// termination (certificate from the tls app).
//
// Peer ACL and IP filter are enforced by the layer4 server itself, by the connection's source
// address (caddy-l4 remote_ip: the TCP peer or the UDP sender, the tunnel address for VPN peers),
// with the same rules as on HTTP routes (protection.ts): routes in front of the proxy that close
// every connection the ACL or the filter refuses, before any byte goes to the backend.
//   - ACL: close unless the source is the tunnel address of a listed, enabled peer (none: close all);
//   - IP filter whitelist: close unless the source matches a rule (no rule: close all);
//   - IP filter blacklist: close when the source matches a rule (no rule: nothing to close).
import { parseStoredRules } from '../../util/ip-rules.js';
import type { Route } from '../../routes/model.js';
import type { Json, L4Server } from '../caddy-json.js';
import type { RenderContext } from '../render-context.js';
import { aclPeerAddresses, remoteIpMatcher } from './protection.js';
import { listenAddr, routeUpstream } from './upstream.js';
import { l4GeoFilterRoute } from './geo.js';

const CLOSE: Json = { handler: 'close' };

/** The routes of a layer4 server that close the connections the route's ACL and IP filter refuse. */
export function l4AccessRoutes(route: Route, ctx: Pick<RenderContext, 'peers'> & { settings?: RenderContext['settings'] }): Json[] {
  const out: Json[] = [];
  if (route.acl_enabled) {
    const allowed = aclPeerAddresses(route, ctx.peers).map((a) => a.split('/')[0]);
    out.push(allowed.length ? { match: [{ not: [remoteIpMatcher(allowed)] }], handle: [CLOSE] } : { handle: [CLOSE] });
  }
  if (route.ip_filter_enabled) {
    const ranges = parseStoredRules(route.ip_filter_rules ?? []);
    if (route.ip_filter_mode === 'blacklist') {
      if (ranges.length) out.push({ match: [remoteIpMatcher(ranges)], handle: [CLOSE] });
    } else {
      out.push(ranges.length ? { match: [{ not: [remoteIpMatcher(ranges)] }], handle: [CLOSE] } : { handle: [CLOSE] });
    }
  }
  // the country filter (fragments/geo.ts), by the connection's source
  if (route.geo_filter) out.push(l4GeoFilterRoute(route.geo_filter, ctx.settings ?? {}));
  return out;
}

/** The name of a route's layer4 server. */
export const l4ServerName = (route: Pick<Route, 'id'>) => `route_${route.id}`;

/** The route's layer4 server, or null when its upstream is unavailable (nothing listens: connections are refused). */
export function l4Server(route: Route, ctx: RenderContext): L4Server | null {
  const up = routeUpstream(route, ctx);
  if ('unavailable' in up) return null;
  const udp = route.l4_protocol === 'udp';
  const proxy = { handler: 'proxy', upstreams: [{ dial: [`${udp ? 'udp/' : ''}${up.host}:${up.port}`] }] };
  const mode = udp ? 'none' : (route.l4_tls_mode ?? 'none');
  let l4route: Json;
  if (mode === 'passthrough') {
    l4route = { match: [{ tls: { sni: [route.domain] } }], handle: [proxy] };
  } else if (mode === 'terminate') {
    l4route = { match: [{ tls: { sni: [route.domain] } }], handle: [{ handler: 'tls' }, proxy] };
  } else {
    l4route = { handle: [proxy] };
  }
  return { listen: [listenAddr(ctx.settings.bind, route.l4_listen_port as number, udp)], routes: [...l4AccessRoutes(route, ctx), l4route] };
}

/** Whether the route needs a certificate from the tls app (TLS termination). */
export const l4NeedsCertificate = (route: Route) => route.l4_protocol !== 'udp' && route.l4_tls_mode === 'terminate';
