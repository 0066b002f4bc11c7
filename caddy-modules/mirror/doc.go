// Package mirror provides Gatehouse's request-mirroring handler, registered
// as `http.handlers.gatehouse_mirror` (a distinct ID: third-party modules
// already use `http.handlers.mirror`).
//
// For each request it sends a copy (method, path and query, headers without
// hop-by-hop fields, and the body up to max_body_bytes) to every configured
// target, fire and forget, from a bounded number of goroutines with a
// timeout; the primary request and response are never delayed or changed.
// Counters (mirrored, failed, dropped, skipped) live in a caddy.UsagePool
// entry per route id, so they survive config reloads, and are exposed as
// Prometheus counters in Caddy's metrics registry. See README.md.
package mirror
