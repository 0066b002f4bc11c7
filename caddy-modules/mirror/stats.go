package mirror

import (
	"sync"
	"sync/atomic"

	"github.com/caddyserver/caddy/v2"
	"github.com/prometheus/client_golang/prometheus"
)

// routes holds the counters of each route id. An entry lives as long as a
// loaded config uses its route id, so counters survive config reloads.
var routes = caddy.NewUsagePool()

// routeStats are one route's counters, per target URL.
type routeStats struct {
	mu      sync.Mutex
	targets map[string]*targetStats
}

// Destruct implements caddy.Destructor (nothing to release).
func (*routeStats) Destruct() error { return nil }

func (s *routeStats) target(label string) *targetStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.targets[label]
	if !ok {
		t = &targetStats{}
		s.targets[label] = t
	}
	return t
}

// targetStats counts what happened to the copies meant for one target.
type targetStats struct {
	// mirrored: the target answered (any status).
	mirrored atomic.Uint64
	// failed: no answer (connection error, timeout).
	failed atomic.Uint64
	// dropped: not sent because max_in_flight copies were running.
	dropped atomic.Uint64
	// skipped: not sent because the body was larger than max_body_bytes or
	// not read to the end by the route, or the request was an upgrade
	// (websocket) or CONNECT.
	skipped atomic.Uint64
}

// Snapshot returns the four counters.
func (t *targetStats) Snapshot() (mirrored, failed, dropped, skipped uint64) {
	return t.mirrored.Load(), t.failed.Load(), t.dropped.Load(), t.skipped.Load()
}

// collector exports one handler's counters as
// gatehouse_mirror_requests_total{route_id, target, result}.
type collector struct {
	desc    *prometheus.Desc
	targets []*target
}

func newCollector(routeID string, targets []*target) *collector {
	return &collector{
		desc: prometheus.NewDesc("gatehouse_mirror_requests_total",
			"Copies of requests for mirror targets, by result: mirrored (the target answered), failed (no answer or timeout), dropped (max_in_flight reached), skipped (body too large or not read, upgrade).",
			[]string{"target", "result"}, prometheus.Labels{"route_id": routeID}),
		targets: targets,
	}
}

func (c *collector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	for _, t := range c.targets {
		m, f, d, s := t.stats.Snapshot()
		for _, v := range []struct {
			result string
			n      uint64
		}{{"mirrored", m}, {"failed", f}, {"dropped", d}, {"skipped", s}} {
			ch <- prometheus.MustNewConstMetric(c.desc, prometheus.CounterValue, float64(v.n), t.label, v.result)
		}
	}
}
