// Package botblock will hold Gatehouse's bot blocker, registered as
// `http.handlers.gatehouse_botblock`.
//
// Planned: per-route rules from the JSON the sidecar renders (user-agent
// patterns, empty user agents, known scanner paths), answering blocked
// requests itself; strike counters per client IP kept in a caddy.UsagePool
// keyed by the route id so they survive config reloads.
//
// Nothing is registered yet.
package botblock
