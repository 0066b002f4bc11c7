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
// Caddy compares and labels the Host header as sent, port included, and clients send the port when
// it is not the scheme's default: on a server with a non-default port the list therefore also
// names each host with `:<port>` (such an entry never matches a request: the matcher itself
// compares without the port; it only lets Caddy label the host). GET /metrics strips the port.
import type { CaddyHandler, HostEntry, Json } from '../caddy-json.js';
import { hostRoute } from './servers.js';

/** The `metrics` object of the http app. */
export const HTTP_METRICS: Json = { per_host: true };

/**
 * A server's route list: the host map, behind a host matcher of its names when metrics are on
 * (`port`: the server's port; `defaultPort`: 80 for HTTP, 443 for HTTPS).
 */
export function serverRoutes(hosts: Record<string, HostEntry>, metrics: boolean, port: number, defaultPort: number): Json[] {
  const keys = Object.keys(hosts).sort();
  if (!metrics || !keys.length) return [{ handle: [hostRoute(hosts)] }];
  const names = port === defaultPort ? keys : [...keys, ...keys.filter((k) => !k.startsWith('*.')).map((k) => `${k.includes(':') ? `[${k}]` : k}:${port}`)];
  const unknownHosts: CaddyHandler = hostRoute({});
  return [{ match: [{ host: names }], handle: [hostRoute(hosts)] }, { handle: [unknownHosts] }];
}
