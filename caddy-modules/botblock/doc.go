// Package botblock provides Gatehouse's bot blocker, the Caddy HTTP handler
// `http.handlers.gatehouse_botblock`.
//
// It matches requests from known scanners, scrapers and AI crawlers by
// User-Agent (a list shipped with the module, embedded from lists/, plus the
// route's own patterns and allow-list) and requests for common exploit paths,
// and blocks them (403), logs them, or tarpits them (403 after a delay).
// Matching uses Aho-Corasick automata compiled at provision time (shared
// between routes with the same rules through a caddy.UsagePool); per-route
// counters live in a caddy.UsagePool entry keyed by the route id and are
// exported as Prometheus counters. See README.md.
package botblock
