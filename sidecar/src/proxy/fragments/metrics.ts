// Caddy's own HTTP metrics (pure), rendered with the licence feature prometheus_metrics
// (ProxySnapshot.metrics): `apps.http.metrics.per_host` makes Caddy count requests and time them per
// host (caddy_http_requests_total, caddy_http_request_duration_seconds, ... on its admin API's
// /metrics), which GET /metrics maps to route ids (metrics/service.ts).
//
// Caddy labels a host only when a `host` matcher of a server's routes names it; any other Host
// header is counted as "_other" on plain HTTP (so arbitrary Host headers cannot grow Caddy's series
// without bound; HTTPS servers label every name that reaches them, Caddy's own rule). The host map
// (gatehouse_hostroute) matches no host itself, so with metrics each server gets two routes: the
// host map behind a `host` matcher that lists exactly its host names, then an empty host map that
// answers every other host with the same 404 as before. Without metrics: one route, as before.
import type { CaddyHandler, HostEntry, Json } from '../caddy-json.js';
import { hostRoute } from './servers.js';

/** The `metrics` object of the http app. */
export const HTTP_METRICS: Json = { per_host: true };

/** A server's route list: the host map, behind a host matcher of its names when metrics are on. */
export function serverRoutes(hosts: Record<string, HostEntry>, metrics: boolean): Json[] {
  const names = Object.keys(hosts).sort();
  if (!metrics || !names.length) return [{ handle: [hostRoute(hosts)] }];
  const unknownHosts: CaddyHandler = hostRoute({});
  return [{ match: [{ host: names }], handle: [hostRoute(hosts)] }, { handle: [unknownHosts] }];
}
