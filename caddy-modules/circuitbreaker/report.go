package circuitbreaker

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"go.uber.org/zap"
)

const (
	// reportQueueSize bounds the reports waiting to be sent for one route.
	// When it is full the oldest waiting report is dropped (the newest state
	// is what the sidecar must end up with).
	reportQueueSize = 16
	// reportTimeout bounds one POST to the sidecar.
	reportTimeout = 2 * time.Second
	// reportAttempts is how often the newest report is tried when the
	// sidecar does not answer 2xx (an older one is not retried once a newer
	// one is waiting: the newer supersedes it).
	reportAttempts = 3
	// SecretHeader carries report_secret on every report.
	SecretHeader = "X-Gatehouse-Secret"
)

// report is the JSON body POSTed to report_url on every state change.
type report struct {
	RouteID      string `json:"route_id"`
	State        State  `json:"state"`
	FailureCount int    `json:"failure_count"`
	OpenedAt     int64  `json:"opened_at"` // unix ms, 0 when not open
	At           int64  `json:"at"`        // unix ms of the change (for ordering)
}

// target is where reports go; the newest provisioned config sets it.
type target struct {
	url, secret string
}

// reporter sends one route's reports in order, from one goroutine, never
// blocking the caller of enqueue.
type reporter struct {
	routeID string
	client  *http.Client

	mu      sync.Mutex
	target  target
	logger  *zap.Logger
	queue   []report
	dropped uint64
	sent    uint64
	failed  uint64

	wake chan struct{} // capacity 1
	stop chan struct{}
	done chan struct{}
}

func newReporter(routeID string, logger *zap.Logger) *reporter {
	r := &reporter{
		routeID: routeID,
		client: &http.Client{
			Timeout: reportTimeout,
			Transport: &http.Transport{
				Proxy:               nil,
				MaxIdleConnsPerHost: 1,
				IdleConnTimeout:     30 * time.Second,
			},
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		logger: logger,
		wake:   make(chan struct{}, 1),
		stop:   make(chan struct{}),
		done:   make(chan struct{}),
	}
	go r.run()
	return r
}

// configure sets where reports go (called on every provision; the newest
// config wins).
func (r *reporter) configure(t target, logger *zap.Logger) {
	r.mu.Lock()
	r.target = t
	if logger != nil {
		r.logger = logger
	}
	r.mu.Unlock()
}

// enqueue queues a report without blocking. A waiting report of the same
// state is replaced (only the newest count matters); when the queue is full
// the oldest waiting report is dropped.
func (r *reporter) enqueue(rep report) {
	r.mu.Lock()
	if r.target.url == "" {
		r.mu.Unlock()
		return
	}
	if n := len(r.queue); n > 0 && r.queue[n-1].State == rep.State {
		r.queue[n-1] = rep
	} else {
		if len(r.queue) >= reportQueueSize {
			copy(r.queue, r.queue[1:])
			r.queue = r.queue[:len(r.queue)-1]
			r.dropped++
		}
		r.queue = append(r.queue, rep)
	}
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// close stops the goroutine after one last attempt at what is queued; it
// does not wait for it.
func (r *reporter) close() {
	close(r.stop)
}

func (r *reporter) run() {
	defer close(r.done)
	defer r.client.CloseIdleConnections()
	for {
		select {
		case <-r.wake:
			r.drain(false)
		case <-r.stop:
			r.drain(true)
			return
		}
	}
}

// drain sends every queued report in order.
func (r *reporter) drain(stopping bool) {
	for {
		r.mu.Lock()
		if len(r.queue) == 0 {
			r.mu.Unlock()
			return
		}
		rep := r.queue[0]
		r.queue = r.queue[1:]
		t, logger := r.target, r.logger
		r.mu.Unlock()

		for attempt := 1; ; attempt++ {
			err := r.send(t, rep)
			if err == nil {
				r.mu.Lock()
				r.sent++
				r.mu.Unlock()
				break
			}
			r.mu.Lock()
			newer := len(r.queue) > 0
			r.mu.Unlock()
			if newer || stopping || attempt >= reportAttempts {
				r.mu.Lock()
				r.failed++
				r.mu.Unlock()
				if logger != nil {
					logger.Warn("circuit breaker state report failed",
						zap.String("route_id", rep.RouteID), zap.String("state", string(rep.State)),
						zap.Int("attempts", attempt), zap.Bool("superseded", newer), zap.Error(err))
				}
				break
			}
			backoff := time.Duration(attempt*attempt) * 250 * time.Millisecond
			select {
			case <-time.After(backoff):
			case <-r.stop:
				stopping = true
			}
		}
	}
}

func (r *reporter) send(t target, rep report) error {
	body, err := json.Marshal(rep)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), reportTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "gatehouse-caddy-circuit-breaker")
	if t.secret != "" {
		req.Header.Set(SecretHeader, t.secret)
	}
	resp, err := r.client.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
	_ = resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("sidecar answered %s", resp.Status)
	}
	return nil
}

// stats returns the counters (for tests and logs).
func (r *reporter) stats() (sent, failed, dropped uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sent, r.failed, r.dropped
}
