// Package circuitbreaker will hold Gatehouse's circuit breaker for Caddy's
// reverse_proxy, registered as `http.reverse_proxy.circuit_breakers.gatehouse`
// (interface: OK() bool, RecordMetric(statusCode int, latency time.Duration)).
//
// Planned: per-route parameters (failure threshold, window, open duration,
// half-open probes) from the JSON the sidecar renders; breaker state kept in a
// caddy.UsagePool keyed by the route id so it survives config reloads; and
// counting of transport errors, which reverse_proxy does not pass to
// RecordMetric.
//
// Nothing is registered yet.
package circuitbreaker
