// Package retrytest holds no code: its tests pin down how stock Caddy's
// reverse_proxy retries (load_balancing.retries + retry_match), split by the
// gatehouse_bodiless matcher into a lean and a buffering copy, behave for the
// JSON the sidecar renders for a route's retry_enabled / retry_count /
// retry_status_codes. See ../RETRY.md.
package retrytest
