// Country filter in Caddy (pure): the gatehouse_geo matchers of caddy-modules/geoip, and the
// trusted proxies whose forwarded address the HTTP servers believe.
//
// Order on an HTTP route (render.ts protectedRoutes → protection.ts protectionRoutes): peer ACL →
// IP filter → COUNTRY FILTER → rate limit / basic auth / route login. Every one of them must let a
// request through; the cheaper address checks run first. On a route with route login the IP
// filter is checked by the sidecar (verify), so there the country filter runs first, in Caddy,
// ahead of the login pages. On an L4 route: ACL → IP filter → country filter, then the proxy.
//
// Client address: the HTTP matcher reads Caddy's client_ip (the connection's source, or, when the
// source is one of GATEHOUSE_TRUSTED_PROXIES, the address it forwarded in X-Forwarded-For, strict:
// the rightmost entry that is not itself a trusted proxy); the IP filter renders a client_ip
// matcher then too, so both judge the same address. The layer4 matcher judges the connection's
// source (no forwarding on raw TCP/UDP).
//
// allow: refuse unless the client's country is listed (an address the database does not know has
// no country: refused); deny: refuse when it is listed. No usable database (removed after the
// route was saved): the route refuses everyone (fails closed) rather than serve unfiltered.
import type { GeoFilter } from '../../routes/geo.js';
import type { CaddyRoute, Json } from '../caddy-json.js';
import type { GeoDatabase, ProxySettings } from '../render-context.js';

/** The gatehouse_geo matcher (HTTP and layer4 share the shape): matches the listed countries. */
export function geoMatcher(db: GeoDatabase, countries: readonly string[]): Json {
  return { gatehouse_geo: { countries: [...countries], db: db.path, version: db.version } };
}

/** The matcher sets of a route's refusal: who is refused (null: everyone, no database). */
function refusedMatch(filter: GeoFilter, db: GeoDatabase | undefined): Json[] | null {
  if (!db) return null;
  const m = geoMatcher(db, filter.countries);
  return [filter.mode === 'allow' ? { not: [m] } : m];
}

/** HTTP: 403 for the clients the filter refuses. */
export function geoFilterRoute(filter: GeoFilter, settings: Pick<ProxySettings, 'geoipDb'>): CaddyRoute {
  const handle = [{ body: 'Forbidden', handler: 'static_response', status_code: 403 }];
  const match = refusedMatch(filter, settings.geoipDb);
  return match ? { handle, match } : { handle };
}

/** layer4: close the connections (drop the UDP senders) the filter refuses. */
export function l4GeoFilterRoute(filter: GeoFilter, settings: Pick<ProxySettings, 'geoipDb'>): Json {
  const handle = [{ handler: 'close' }];
  const match = refusedMatch(filter, settings.geoipDb);
  return match ? { match, handle } : { handle };
}

/** The HTTP server settings for GATEHOUSE_TRUSTED_PROXIES (none: nothing, client_ip is the source). */
export function trustedProxiesFields(settings: Pick<ProxySettings, 'trustedProxies'>): Json {
  const ranges = settings.trustedProxies ?? [];
  if (!ranges.length) return {};
  return { client_ip_headers: ['X-Forwarded-For'], trusted_proxies: { ranges: [...ranges], source: 'static' }, trusted_proxies_strict: 1 };
}

/** The IP filter's address matcher: client_ip when proxies are trusted (the same address the country filter judges), else remote_ip. */
export function ipFilterMatcher(ranges: readonly string[], settings?: Pick<ProxySettings, 'trustedProxies'>): Json {
  return settings?.trustedProxies?.length ? { client_ip: { ranges: [...ranges] } } : { remote_ip: { ranges: [...ranges] } };
}
