// Per-host HTTP metrics (pure), rendered with the licence feature prometheus_metrics
// (ProxySnapshot.metrics): each server's host map (gatehouse_hostroute) counts requests and times
// them per host key itself (`metrics: true`: gatehouse_hostroute_requests_total and
// gatehouse_hostroute_request_duration_seconds on Caddy's admin API's /metrics, labelled with the
// server and the host key, `_other` for every host not in the map), which GET /metrics maps to
// route ids (metrics/service.ts). The host map already knows the host, so nothing sits in front of
// it and the cost per request does not depend on the number of routes (Caddy's own per-host
// metrics needed a `host` matcher listing every name in front of the map, which did).
// caddy-modules/hostroute/README.md "Metrics" describes the series.
import type { CaddyHandler, HostEntry, Json } from '../caddy-json.js';
import { hostRoute } from './servers.js';

/** A server's route list: its host map, counting per host when metrics are on, with the default site as its fallback (fragments/redirects.ts). */
export function serverRoutes(hosts: Record<string, HostEntry>, metrics: boolean, fallback?: HostEntry): Json[] {
  const map: CaddyHandler = metrics ? { handler: 'gatehouse_hostroute', metrics: true, hosts } : hostRoute(hosts);
  if (fallback) map.fallback = fallback;
  return [{ handle: [map] }];
}
