// Package geoip is Gatehouse's country filter for Caddy: an HTTP request
// matcher (http.matchers.gatehouse_geo) and a caddy-l4 connection matcher
// (layer4.matchers.gatehouse_geo) that match when the client's country, looked
// up in a MaxMind-format country database (GeoLite2-Country, DB-IP Lite
// Country, or any MMDB whose records have country.iso_code), is one of the
// listed ISO 3166-1 alpha-2 codes.
//
// Both matchers share one reader per database file: the file is opened
// (memory-mapped) once, however many routes and matchers name it, and closed
// when the last configuration that uses it is unloaded (caddy.UsagePool keyed
// by path, size and modification time, so a replaced file is picked up at the
// next configuration load while the old one stays open for the old config).
//
// The HTTP matcher judges the client IP as Caddy's client_ip matcher does:
// the client_ip request variable, which is the connection's source address,
// or, when the server's trusted_proxies covers that address, the address the
// trusted proxy forwarded (client_ip_headers, X-Forwarded-For by default).
// The layer4 matcher judges the connection's source address.
//
// An address the database does not know has no country: it matches no list
// (so an allow list, rendered as "not in list", refuses it, and a deny list
// lets it through). The sidecar renders allow lists as `not` matchers.
//
// JSON:
//
//	{"gatehouse_geo": {"db": "/var/lib/geoip/GeoLite2-Country.mmdb", "countries": ["DE", "AT"]}}
package geoip
