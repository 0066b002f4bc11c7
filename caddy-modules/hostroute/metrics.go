package hostroute

import (
	"errors"
	"math"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/prometheus/client_golang/prometheus"
)

// Per-host metrics, counted by the host map itself (it already knows the
// host), instead of Caddy's per-host HTTP metrics, which need a `host`
// matcher listing every name in front of the host map. A request costs a
// response recorder (as Caddy's own instrumentation does), two clock reads
// and a few atomic additions on the host's counters; nothing depends on the
// number of hosts. Series are built at scrape time from those counters.

// otherHost labels the requests for hosts that are not in the map (the
// fallback's and the built-in 404s): one label value, whatever Host headers
// clients send.
const otherHost = "_other"

// durationBuckets are Caddy's (and Prometheus') default buckets, the ones
// caddy_http_request_duration_seconds used.
var durationBuckets = [...]float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}

var (
	requestsDesc = prometheus.NewDesc("gatehouse_hostroute_requests_total",
		"Requests a host map (gatehouse_hostroute) served, by server and host key (a wildcard key as configured; _other: hosts not in the map).",
		[]string{"server", "host"}, nil)
	durationDesc = prometheus.NewDesc("gatehouse_hostroute_request_duration_seconds",
		"Round-trip time of the requests a host map served, by server, host key and status code.",
		[]string{"server", "host", "code"}, nil)
)

// hostStats are the counters of one host key.
type hostStats struct {
	requests atomic.Uint64
	mu       sync.Mutex                  // serializes adding a status code
	codes    atomic.Pointer[[]*codeHist] // copy on write; a host sees few codes
}

// codeHist is the duration histogram of one status code.
type codeHist struct {
	code    int
	label   string
	counts  [len(durationBuckets) + 1]atomic.Uint64 // per bucket (not cumulative), the last one +Inf
	sumBits atomic.Uint64                           // float64 bits of the sum of durations
}

func (s *hostStats) hist(code int) *codeHist {
	if p := s.codes.Load(); p != nil {
		for _, c := range *p {
			if c.code == code {
				return c
			}
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var cur []*codeHist
	if p := s.codes.Load(); p != nil {
		cur = *p
		for _, c := range cur {
			if c.code == code {
				return c
			}
		}
	}
	label := strconv.Itoa(code)
	if code == 0 {
		label = "200" // nothing written: Caddy's server answers 200 (Caddy's metrics label it so too)
	}
	c := &codeHist{code: code, label: label}
	next := append(append(make([]*codeHist, 0, len(cur)+1), cur...), c)
	s.codes.Store(&next)
	return c
}

func (c *codeHist) observe(seconds float64) {
	i := 0
	for i < len(durationBuckets) && seconds > durationBuckets[i] {
		i++
	}
	c.counts[i].Add(1)
	for {
		old := c.sumBits.Load()
		if c.sumBits.CompareAndSwap(old, math.Float64bits(math.Float64frombits(old)+seconds)) {
			return
		}
	}
}

// observe runs serve, counting the request and its duration in s by status
// code: the status written, or for an error passed back to the server the
// error's status (500 when it has none).
func observe(s *hostStats, w http.ResponseWriter, r *http.Request, serve func(http.ResponseWriter, *http.Request) error) error {
	start := time.Now()
	rec := caddyhttp.NewResponseRecorder(w, nil, nil)
	err := serve(rec, r)
	d := time.Since(start).Seconds()
	s.requests.Add(1)
	code := rec.Status()
	if err != nil {
		var he caddyhttp.HandlerError
		switch {
		case errors.As(err, &he) && he.StatusCode != 0:
			code = he.StatusCode
		default:
			code = http.StatusInternalServerError
		}
	}
	s.hist(code).observe(d)
	return err
}

// collector exports the counters of host maps at scrape time.
type collector struct {
	maps func() []*HostRoute
}

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- requestsDesc
	ch <- durationDesc
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	for _, h := range c.maps() {
		server := h.server
		if server == "" {
			server = h.name
		}
		// a host key that is literally "_other" shares the label with the
		// unknown hosts: their counts are summed into one series
		var otherKey *hostStats
		h.table.mu.RLock()
		type keyed struct {
			key string
			st  *hostStats
		}
		list := make([]keyed, 0, h.table.len())
		for _, m := range []map[string]*entry{h.table.exact, h.table.wild} {
			for _, e := range m {
				if e.stats != nil && e.stats.requests.Load() > 0 {
					list = append(list, keyed{e.key, e.stats})
				}
			}
		}
		h.table.mu.RUnlock()
		for _, k := range list {
			if k.key == otherHost {
				otherKey = k.st
				continue
			}
			emit(ch, server, k.key, k.st)
		}
		if h.other != nil {
			emit(ch, server, otherHost, h.other, otherKey)
		}
	}
}

// emit sends the series of one label value, summing several stats.
func emit(ch chan<- prometheus.Metric, server, host string, stats ...*hostStats) {
	var n uint64
	type agg struct {
		counts [len(durationBuckets) + 1]uint64
		sum    float64
	}
	var order []string
	byCode := map[string]*agg{}
	for _, s := range stats {
		if s == nil {
			continue
		}
		n += s.requests.Load()
		if p := s.codes.Load(); p != nil {
			for _, c := range *p {
				a := byCode[c.label]
				if a == nil {
					a = new(agg)
					byCode[c.label] = a
					order = append(order, c.label)
				}
				for i := range c.counts {
					a.counts[i] += c.counts[i].Load()
				}
				a.sum += math.Float64frombits(c.sumBits.Load())
			}
		}
	}
	if n == 0 {
		return
	}
	ch <- prometheus.MustNewConstMetric(requestsDesc, prometheus.CounterValue, float64(n), server, host)
	for _, code := range order {
		a := byCode[code]
		buckets := make(map[float64]uint64, len(durationBuckets))
		var cum uint64
		for i, ub := range durationBuckets {
			cum += a.counts[i]
			buckets[ub] = cum
		}
		cum += a.counts[len(durationBuckets)]
		ch <- prometheus.MustNewConstHistogram(durationDesc, cum, a.sum, buckets, server, host, code)
	}
}
