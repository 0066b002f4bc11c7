package circuitbreaker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	_ "github.com/caddyserver/caddy/v2/modules/standard"
)

type fakeClock struct{ ms atomic.Int64 }

func newClock() *fakeClock {
	c := &fakeClock{}
	c.ms.Store(t0.UnixMilli())
	return c
}
func (c *fakeClock) Now() time.Time          { return time.UnixMilli(c.ms.Load()) }
func (c *fakeClock) Advance(d time.Duration) { c.ms.Add(d.Milliseconds()) }

func newCtx(tb testing.TB) (caddy.Context, context.CancelFunc) {
	tb.Helper()
	return caddy.NewContext(caddy.Context{Context: context.Background()})
}

// provision provisions h (with the fake clock) in its own Caddy context;
// the returned func unloads it (Cleanup), as a config unload does.
func provision(tb testing.TB, h *Handler, clk *fakeClock) func() {
	tb.Helper()
	if clk != nil {
		h.now = clk.Now
	}
	ctx, cancel := newCtx(tb)
	if err := h.Provision(ctx); err != nil {
		cancel()
		tb.Fatalf("provision: %v", err)
	}
	var once sync.Once
	unload := func() {
		once.Do(func() {
			if err := h.Cleanup(); err != nil {
				tb.Errorf("cleanup: %v", err)
			}
			cancel()
		})
	}
	tb.Cleanup(unload)
	return unload
}

// backend is a next handler whose answer the test sets.
type backend struct {
	mu     sync.Mutex
	status int
	err    error
	calls  int
}

func (b *backend) set(status int, err error) {
	b.mu.Lock()
	b.status, b.err = status, err
	b.mu.Unlock()
}

func (b *backend) ServeHTTP(w http.ResponseWriter, _ *http.Request) error {
	b.mu.Lock()
	status, err := b.status, b.err
	b.calls++
	b.mu.Unlock()
	if err != nil {
		return err
	}
	w.WriteHeader(status)
	_, _ = io.WriteString(w, "backend")
	return nil
}

func (b *backend) Calls() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.calls
}

type resp struct {
	status     int
	body       string
	retryAfter string
	err        error
}

func serve(h *Handler, next caddyhttp.Handler) resp {
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "http://app.example.com/x", nil)
	req = caddyhttp.PrepareRequest(req, caddy.NewReplacer(), rec, nil)
	err := h.ServeHTTP(rec, req, next)
	return resp{rec.Code, rec.Body.String(), rec.Header().Get("Retry-After"), err}
}

func TestHandlerCycle(t *testing.T) {
	clk := newClock()
	h := &Handler{RouteID: t.Name(), Threshold: 2, Timeout: 30}
	provision(t, h, clk)
	be := &backend{status: 200}

	if r := serve(h, be); r.status != 200 || r.body != "backend" {
		t.Fatalf("closed: %+v", r)
	}
	// a 500 response and a transport-style error (reverse_proxy returns a
	// 502 HandlerError when the upstream cannot be reached) both count
	be.set(500, nil)
	if r := serve(h, be); r.status != 500 {
		t.Fatalf("got %+v", r)
	}
	be.set(0, caddyhttp.Error(http.StatusBadGateway, errors.New("dial tcp: connection refused")))
	if r := serve(h, be); r.err == nil {
		t.Fatalf("the backend error was not passed on: %+v", r)
	}
	if s := h.entry.b.Snapshot(); s.State != Open || s.FailureCount != 2 || s.OpenedAt != t0.UnixMilli() {
		t.Fatalf("state %+v", s)
	}

	// open: 503 with Retry-After, the backend is not touched
	calls := be.Calls()
	be.set(200, nil)
	clk.Advance(10500 * time.Millisecond)
	r := serve(h, be)
	if r.status != 503 || r.body != openBody || r.retryAfter != "20" || r.err != nil {
		t.Fatalf("open: %+v", r)
	}
	if be.Calls() != calls {
		t.Fatal("the backend was called while open")
	}

	// after the timeout the trial goes through and closes the breaker
	clk.Advance(20 * time.Second)
	if r := serve(h, be); r.status != 200 {
		t.Fatalf("trial: %+v", r)
	}
	if s := h.entry.b.Snapshot(); s != (snapshot{Closed, 0, 0}) {
		t.Fatalf("after trial: %+v", s)
	}
}

// While the trial is in flight every other request gets the 503.
func TestHandlerHalfOpenSingleTrial(t *testing.T) {
	clk := newClock()
	h := &Handler{RouteID: t.Name(), Threshold: 1, Timeout: 5, OpenedAt: t0.UnixMilli(), FailureCount: 1}
	provision(t, h, clk)
	clk.Advance(5 * time.Second)

	release := make(chan struct{})
	entered := make(chan struct{})
	slow := caddyhttp.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) error {
		close(entered)
		<-release
		w.WriteHeader(200)
		return nil
	})
	done := make(chan resp)
	go func() { done <- serve(h, slow) }()
	<-entered

	var others sync.WaitGroup
	var got503 atomic.Int32
	for range 20 {
		others.Add(1)
		go func() {
			defer others.Done()
			if r := serve(h, &backend{status: 200}); r.status == 503 && r.retryAfter == "1" {
				got503.Add(1)
			}
		}()
	}
	others.Wait()
	if got503.Load() != 20 {
		t.Fatalf("%d of 20 concurrent requests got 503 during the trial", got503.Load())
	}
	close(release)
	if r := <-done; r.status != 200 {
		t.Fatalf("trial: %+v", r)
	}
	if s := h.entry.b.Snapshot(); s.State != Closed {
		t.Fatalf("state %+v", s)
	}
}

// The outcome is recorded when the response header is written, so a
// long-running response (streaming, websocket) does not hold the trial.
func TestOutcomeAtHeaderTime(t *testing.T) {
	clk := newClock()
	h := &Handler{RouteID: t.Name(), Threshold: 1, Timeout: 5, OpenedAt: t0.UnixMilli(), FailureCount: 1}
	provision(t, h, clk)
	clk.Advance(6 * time.Second)

	headerSent := make(chan struct{})
	release := make(chan struct{})
	stream := caddyhttp.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) error {
		w.WriteHeader(200)
		close(headerSent)
		<-release
		_, err := io.WriteString(w, "late body")
		return err
	})
	done := make(chan resp)
	go func() { done <- serve(h, stream) }()
	<-headerSent
	if s := h.entry.b.Snapshot(); s.State != Closed {
		t.Fatalf("state after the trial's header: %+v", s)
	}
	if r := serve(h, &backend{status: 204}); r.status != 204 {
		t.Fatalf("a request during the streaming trial: %+v", r)
	}
	close(release)
	<-done
}

func TestClassify(t *testing.T) {
	canceledCtx, cancel := context.WithCancel(context.Background())
	cancel()
	live := httptest.NewRequest("GET", "/", nil)
	gone := live.WithContext(canceledCtx)
	cases := []struct {
		name string
		r    *http.Request
		err  error
		want outcome
	}{
		{"no error, nothing written", live, nil, success},
		{"plain error", live, errors.New("boom"), failure},
		{"502 handler error", live, caddyhttp.Error(502, errors.New("x")), failure},
		{"504 handler error", live, caddyhttp.Error(504, context.DeadlineExceeded), failure},
		{"404 handler error", live, caddyhttp.Error(404, errors.New("x")), success},
		{"499", live, caddyhttp.Error(499, errors.New("x")), neutral},
		{"client canceled", gone, context.Canceled, neutral},
		{"canceled error but client still there", live, context.Canceled, failure},
	}
	for _, c := range cases {
		if got := classifyEnd(c.r, c.err); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	for code, want := range map[int]outcome{101: success, 200: success, 302: success, 404: success, 429: success, 499: neutral, 500: failure, 502: failure, 503: failure, 504: failure} {
		if got := classifyStatus(code); got != want {
			t.Errorf("status %d: %v, want %v", code, got, want)
		}
	}
}

// A panic in the chain counts as a failure and is not swallowed.
func TestPanicCountsAsFailure(t *testing.T) {
	h := &Handler{RouteID: t.Name(), Threshold: 1, Timeout: 5}
	provision(t, h, newClock())
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("panic swallowed")
			}
		}()
		serve(h, caddyhttp.HandlerFunc(func(http.ResponseWriter, *http.Request) error { panic("boom") }))
	}()
	if s := h.entry.b.Snapshot(); s.State != Open {
		t.Fatalf("state %+v", s)
	}
}

// A reload (a second provision with the same route id, then the old one
// cleaned up) keeps the live state; the new config's seed values are
// ignored, its threshold and timeout apply; reset_at re-seeds.
func TestReloadKeepsLiveState(t *testing.T) {
	clk := newClock()
	id := t.Name()
	old := &Handler{RouteID: id, Threshold: 3, Timeout: 30}
	unloadOld := provision(t, old, clk)
	be := &backend{status: 502}
	serve(old, be)
	serve(old, be)

	// the new config says 0 failures (the sidecar may not have heard yet)
	cur := &Handler{RouteID: id, Threshold: 3, Timeout: 60, FailureCount: 0}
	provision(t, cur, clk)
	unloadOld()
	if s := cur.entry.b.Snapshot(); s != (snapshot{Closed, 2, 0}) {
		t.Fatalf("live state lost on reload: %+v", s)
	}
	serve(cur, be)
	r := serve(cur, be)
	if r.status != 503 || r.retryAfter != "60" {
		t.Fatalf("new timeout not applied: %+v", r)
	}

	// reset: the sidecar renders failure_count 0, opened_at 0, reset_at now
	reset := &Handler{RouteID: id, Threshold: 3, Timeout: 60, ResetAt: clk.Now().UnixMilli()}
	provision(t, reset, clk)
	if s := reset.entry.b.Snapshot(); s != (snapshot{Closed, 0, 0}) {
		t.Fatalf("reset not applied: %+v", s)
	}
	if r := serve(reset, &backend{status: 200}); r.status != 200 {
		t.Fatalf("after reset: %+v", r)
	}
	// rendering the same reset_at again (any later reload) does not reset again
	serve(reset, be)
	again := &Handler{RouteID: id, Threshold: 3, Timeout: 60, ResetAt: reset.ResetAt}
	provision(t, again, clk)
	if s := again.entry.b.Snapshot(); s.FailureCount != 1 {
		t.Fatalf("the same reset_at reset again: %+v", s)
	}
}

// When no loaded config uses a route id any more, its state is dropped, and
// the next config seeds it from failure_count and opened_at (what happens
// after a restart of Caddy).
func TestSeedAfterRelease(t *testing.T) {
	clk := newClock()
	id := t.Name()
	first := &Handler{RouteID: id, Threshold: 3, Timeout: 30}
	unload := provision(t, first, clk)
	serve(first, &backend{status: 500})
	unload()
	if _, ok := breakers.References(id); ok {
		t.Fatal("pool entry kept after the last config was unloaded")
	}
	opened := clk.Now().Add(-10 * time.Second).UnixMilli()
	second := &Handler{RouteID: id, Threshold: 3, Timeout: 30, FailureCount: 3, OpenedAt: opened}
	provision(t, second, clk)
	if r := serve(second, &backend{status: 200}); r.status != 503 || r.retryAfter != "20" {
		t.Fatalf("seeded open state: %+v", r)
	}
}

func TestValidation(t *testing.T) {
	for cfg, want := range map[string]string{
		`{}`:                                        "route_id is required",
		`{"route_id":"1","threshold":-1}`:           "threshold -1",
		`{"route_id":"1","timeout":-5}`:             "timeout -5",
		`{"route_id":"1","failure_count":-1}`:       "failure_count -1",
		`{"route_id":"1","opened_at":-1}`:           "opened_at -1",
		`{"route_id":"1","reset_at":-1}`:            "reset_at -1",
		`{"route_id":"1","report_url":"/relative"}`: "report_url",
		`{"route_id":"1","report_url":"ftp://x/"}`:  "report_url",
		`{"route_id":"1","treshold":3}`:             "unknown field",
	} {
		ctx, cancel := newCtx(t)
		_, err := ctx.LoadModuleByID("http.handlers.gatehouse_circuit_breaker", json.RawMessage(cfg))
		cancel()
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want it to mention %q", cfg, err, want)
		}
	}
	// defaults
	ctx, cancel := newCtx(t)
	defer cancel()
	mod, err := ctx.LoadModuleByID("http.handlers.gatehouse_circuit_breaker", json.RawMessage(`{"route_id":"defaults-`+t.Name()+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	h := mod.(*Handler)
	if h.Threshold != DefaultThreshold || h.Timeout != DefaultTimeout {
		t.Fatalf("defaults: threshold %d timeout %d", h.Threshold, h.Timeout)
	}
	_ = h.Cleanup()
}

// reportSink records what the sidecar endpoint receives.
type reportSink struct {
	mu      sync.Mutex
	reports []report
	secrets []string
	got     chan struct{}
	block   chan struct{} // if set, every request waits for it
}

func newSink() *reportSink { return &reportSink{got: make(chan struct{}, 100)} }

func (s *reportSink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if s.block != nil {
		select {
		case <-s.block:
		case <-r.Context().Done():
			return
		}
	}
	var rep report
	if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" {
		w.WriteHeader(400)
		return
	}
	if err := json.NewDecoder(r.Body).Decode(&rep); err != nil {
		w.WriteHeader(400)
		return
	}
	s.mu.Lock()
	s.reports = append(s.reports, rep)
	s.secrets = append(s.secrets, r.Header.Get(SecretHeader))
	s.mu.Unlock()
	w.WriteHeader(204)
	s.got <- struct{}{}
}

func (s *reportSink) wait(t *testing.T, n int) []report {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		s.mu.Lock()
		if len(s.reports) >= n {
			out := append([]report(nil), s.reports...)
			s.mu.Unlock()
			return out
		}
		s.mu.Unlock()
		select {
		case <-s.got:
		case <-deadline:
			t.Fatalf("timed out waiting for %d reports", n)
		}
	}
}

func TestReports(t *testing.T) {
	sink := newSink()
	srv := httptest.NewServer(sink)
	defer srv.Close()
	secretFile := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secretFile, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	clk := newClock()
	h := &Handler{RouteID: "42", Threshold: 2, Timeout: 5, ReportURL: srv.URL + "/internal/circuit-breaker", ReportSecret: "{file." + secretFile + "}"}
	provision(t, h, clk)
	be := &backend{status: 503}
	serve(h, be)
	sink.wait(t, 1) // closed, count 1
	serve(h, be)
	reps := sink.wait(t, 2)
	if got := reps[1]; got.RouteID != "42" || got.State != Open || got.FailureCount != 2 || got.OpenedAt != t0.UnixMilli() || got.At != t0.UnixMilli() {
		t.Fatalf("open report %+v", got)
	}
	clk.Advance(5 * time.Second)
	be.set(200, nil)
	serve(h, be)
	reps = sink.wait(t, 4)
	if reps[2].State != HalfOpen || reps[3].State != Closed || reps[3].FailureCount != 0 || reps[3].OpenedAt != 0 {
		t.Fatalf("reports %+v", reps)
	}
	if reps[0].State != Closed || reps[0].FailureCount != 1 {
		t.Fatalf("first report %+v", reps[0])
	}
	sink.mu.Lock()
	for _, s := range sink.secrets {
		if s != "s3cret" { // {file.*} trims one trailing newline
			t.Errorf("secret header %q", s)
		}
	}
	sink.mu.Unlock()
}

// A sidecar that does not answer never slows requests down, and the queue
// stays bounded.
func TestReportsNeverBlock(t *testing.T) {
	sink := newSink()
	sink.block = make(chan struct{})
	srv := httptest.NewServer(sink)
	defer srv.Close()
	defer close(sink.block)

	h := &Handler{RouteID: t.Name(), Threshold: 1_000_000, Timeout: 5, ReportURL: srv.URL}
	provision(t, h, newClock())
	fail, ok := &backend{status: 500}, &backend{status: 200}
	var slowest time.Duration
	for i := range 2000 {
		start := time.Now()
		if i%2 == 0 {
			serve(h, fail)
		} else {
			serve(h, ok)
		}
		slowest = max(slowest, time.Since(start))
	}
	// a request that waited for the sidecar would take the report timeout (2s)
	if slowest > 500*time.Millisecond {
		t.Fatalf("slowest of 2000 requests took %v with a hanging sidecar", slowest)
	}
	h.entry.rep.mu.Lock()
	n := len(h.entry.rep.queue)
	h.entry.rep.mu.Unlock()
	if n > reportQueueSize {
		t.Fatalf("queue length %d > %d", n, reportQueueSize)
	}
}

func TestReporterQueueBound(t *testing.T) {
	r := &reporter{routeID: "x", wake: make(chan struct{}, 1), target: target{url: "http://127.0.0.1:1/"}}
	// no goroutine runs: nothing is taken from the queue
	states := []State{Closed, Open, HalfOpen}
	for i := range 100 {
		r.enqueue(report{State: states[i%3], FailureCount: i})
	}
	if len(r.queue) != reportQueueSize {
		t.Fatalf("queue length %d", len(r.queue))
	}
	if r.dropped != 100-reportQueueSize {
		t.Fatalf("dropped %d", r.dropped)
	}
	if last := r.queue[len(r.queue)-1]; last.FailureCount != 99 {
		t.Fatalf("the newest report was not kept: %+v", last)
	}
	// consecutive reports of the same state are coalesced
	r2 := &reporter{wake: make(chan struct{}, 1), target: target{url: "http://127.0.0.1:1/"}}
	for i := range 10 {
		r2.enqueue(report{State: Closed, FailureCount: i})
	}
	if len(r2.queue) != 1 || r2.queue[0].FailureCount != 9 {
		t.Fatalf("not coalesced: %+v", r2.queue)
	}
	// no report_url: nothing is queued
	r3 := &reporter{wake: make(chan struct{}, 1)}
	r3.enqueue(report{State: Open})
	if len(r3.queue) != 0 {
		t.Fatal("queued without a report_url")
	}
}

// A failing sidecar: the newest report is retried; the error is counted.
func TestReportRetry(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hits.Add(1) < 2 {
			w.WriteHeader(500)
			return
		}
		w.WriteHeader(200)
	}))
	defer srv.Close()
	h := &Handler{RouteID: t.Name(), Threshold: 1, Timeout: 5, ReportURL: srv.URL}
	provision(t, h, newClock())
	serve(h, &backend{status: 500})
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if sent, _, _ := h.entry.rep.stats(); sent == 1 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if sent, failed, _ := h.entry.rep.stats(); sent != 1 || failed != 0 || hits.Load() != 2 {
		t.Fatalf("sent %d failed %d hits %d", sent, failed, hits.Load())
	}
}

// freePort returns a loopback port that was free a moment ago.
func freePort(tb testing.TB) int {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// runCaddy loads a whole Caddy config (as POST /load does) with one HTTP
// server on the loopback port whose routes are the given JSON array, and
// returns its base URL. No admin endpoint, nothing persisted. Loading again
// is a config reload.
func runCaddy(tb testing.TB, port int, routes string) string {
	tb.Helper()
	cfg := fmt.Sprintf(`{
	"admin": {"disabled": true, "config": {"persist": false}},
	"storage": {"module": "file_system", "root": %q},
	"logging": {"logs": {"default": {"level": "WARN"}}},
	"apps": {
		"http": {"servers": {"test": {
			"listen": ["127.0.0.1:%d"],
			"automatic_https": {"disable": true},
			"routes": %s
		}}},
		"pki": {"certificate_authorities": {"local": {"install_trust": false}}}
	}}`, tb.TempDir(), port, routes)
	if err := caddy.Load([]byte(cfg), true); err != nil {
		tb.Fatalf("loading config: %v", err)
	}
	tb.Cleanup(func() { _ = caddy.Stop() })
	return fmt.Sprintf("http://127.0.0.1:%d", port)
}

func get(tb testing.TB, url string) (int, string, string) {
	tb.Helper()
	res, err := http.Get(url)
	if err != nil {
		tb.Fatalf("GET %s: %v", url, err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(body), res.Header.Get("Retry-After")
}

// The handler inside a real Caddy server in front of a real reverse_proxy:
// transport errors (backend down) and 5xx open the breaker, the backend is
// not touched while open, it closes after the timeout, and a config reload
// keeps the live state.
func TestInReverseProxyChain(t *testing.T) {
	var hits atomic.Int32
	var failing atomic.Bool
	backendSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if failing.Load() {
			w.WriteHeader(500)
			return
		}
		_, _ = io.WriteString(w, "ok")
	}))
	defer backendSrv.Close()
	backendAddr := backendSrv.Listener.Addr().String()
	deadAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t)) // nothing listens: transport error

	routes := func(timeout int) string {
		return fmt.Sprintf(`[
		{"match":[{"path":["/dead"]}],"handle":[
			{"handler":"gatehouse_circuit_breaker","route_id":"chain","threshold":3,"timeout":%d},
			{"handler":"reverse_proxy","upstreams":[{"dial":%q}]}]},
		{"handle":[
			{"handler":"gatehouse_circuit_breaker","route_id":"chain","threshold":3,"timeout":%d},
			{"handler":"reverse_proxy","upstreams":[{"dial":%q}]}]}
	]`, timeout, deadAddr, timeout, backendAddr)
	}
	port := freePort(t)
	base := runCaddy(t, port, routes(1))

	if code, body, _ := get(t, base+"/"); code != 200 || body != "ok" {
		t.Fatalf("healthy: %d %q", code, body)
	}
	// both handlers use one route id: 2 transport errors + 1 500 = threshold
	if code, _, _ := get(t, base+"/dead"); code != 502 {
		t.Fatalf("dead backend: %d", code)
	}
	if code, _, _ := get(t, base+"/dead"); code != 502 {
		t.Fatalf("dead backend: %d", code)
	}
	// a reload in the middle keeps the count (2 so far)
	runCaddy(t, port, routes(1))
	failing.Store(true)
	if code, _, _ := get(t, base+"/"); code != 500 {
		t.Fatalf("failing backend: %d", code)
	}
	before := hits.Load()
	code, body, ra := get(t, base+"/")
	if code != 503 || body != openBody || ra != "1" {
		t.Fatalf("open: %d %q Retry-After %q", code, body, ra)
	}
	if hits.Load() != before {
		t.Fatal("backend touched while open")
	}
	failing.Store(false)
	time.Sleep(1100 * time.Millisecond)
	if code, body, _ := get(t, base+"/"); code != 200 || body != "ok" {
		t.Fatalf("trial: %d %q", code, body)
	}
	if code, _, _ := get(t, base+"/"); code != 200 {
		t.Fatalf("closed again: %d", code)
	}
}

func BenchmarkHandlerClosed(b *testing.B) {
	h := &Handler{RouteID: "bench", Threshold: 5, Timeout: 30}
	provision(b, h, nil)
	next := caddyhttp.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) error {
		w.WriteHeader(200)
		return nil
	})
	req := httptest.NewRequest("GET", "/", nil)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		w := &discardWriter{h: http.Header{}}
		for pb.Next() {
			_ = h.ServeHTTP(w, req, next)
		}
	})
}

type discardWriter struct{ h http.Header }

func (d *discardWriter) Header() http.Header         { return d.h }
func (d *discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (d *discardWriter) WriteHeader(int)             {}

// With OpenAsError the open answer is a 503 HandlerError (for the error
// routes), with Retry-After already set and nothing written.
func TestHandlerOpenAsError(t *testing.T) {
	clk := newClock()
	h := &Handler{RouteID: t.Name(), Threshold: 1, Timeout: 20, OpenAsError: true}
	provision(t, h, clk)
	be := &backend{status: 500}
	if r := serve(h, be); r.status != 500 {
		t.Fatalf("got %+v", r)
	}
	calls := be.Calls()
	clk.Advance(5 * time.Second)
	r := serve(h, be)
	var he caddyhttp.HandlerError
	if !errors.As(r.err, &he) || he.StatusCode != http.StatusServiceUnavailable || !errors.Is(he.Err, ErrOpen) || he.Err.Error() != "circuit breaker open" {
		t.Fatalf("open: want a 503 HandlerError with ErrOpen, got %+v", r)
	}
	if r.retryAfter != "15" || r.body != "" {
		t.Fatalf("open: Retry-After %q, body %q", r.retryAfter, r.body)
	}
	if be.Calls() != calls {
		t.Fatal("the backend was called while open")
	}
}
