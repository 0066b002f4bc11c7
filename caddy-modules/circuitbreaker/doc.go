// Package circuitbreaker provides Gatehouse's circuit breaker as the Caddy
// HTTP handler `http.handlers.gatehouse_circuit_breaker`. It wraps the rest of
// a route's handler chain (normally `reverse_proxy`), counts consecutive
// failures (5xx responses and errors such as transport failures), answers 503
// with Retry-After while open, lets exactly one trial request through after
// the timeout (half-open), and reports every state change to the sidecar.
//
// It is deliberately not a `http.reverse_proxy.circuit_breakers.*` module:
// reverse_proxy never passes transport errors to RecordMetric (a breaker that
// must count "backend unreachable" would never see them, and a half-open trial
// that fails that way would never be resolved), OK() is consulted once per
// upstream during selection rather than once per client request (so "exactly
// one trial" cannot be enforced), and an open breaker there yields
// reverse_proxy's own 503 without Retry-After. See README.md.
//
// Breaker state lives in a caddy.UsagePool keyed by route id, so it survives
// config reloads; the configured failure_count and opened_at only seed a new
// entry (after a restart of Caddy).
package circuitbreaker
