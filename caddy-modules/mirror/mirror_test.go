package mirror

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	_ "github.com/caddyserver/caddy/v2/modules/standard"
	dto "github.com/prometheus/client_model/go"
)

// seen is one copy as a target received it.
type seen struct {
	method, uri, host string
	header            http.Header
	body              string
}

// sink is a mirror target that records what it receives.
type sink struct {
	srv   *httptest.Server
	got   chan seen
	delay time.Duration
	hold  chan struct{} // if set, each request waits for it (or its context)
	hits  atomic.Int32
}

func newSink(t *testing.T) *sink {
	s := &sink{got: make(chan seen, 1000)}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		body, _ := io.ReadAll(r.Body)
		if s.hold != nil {
			select {
			case <-s.hold:
			case <-r.Context().Done():
				return
			}
		}
		if s.delay > 0 {
			time.Sleep(s.delay)
		}
		w.WriteHeader(418) // any status counts as mirrored
		_, _ = io.WriteString(w, "mirror response is discarded")
		s.got <- seen{r.Method, r.RequestURI, r.Host, r.Header.Clone(), string(body)}
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *sink) next(t *testing.T) seen {
	t.Helper()
	select {
	case c := <-s.got:
		return c
	case <-time.After(5 * time.Second):
		t.Fatal("the target received no copy")
		return seen{}
	}
}

func (s *sink) none(t *testing.T, wait time.Duration) {
	t.Helper()
	select {
	case c := <-s.got:
		t.Fatalf("unexpected copy %+v", c)
	case <-time.After(wait):
	}
}

func load(tb testing.TB, cfg string) (*Handler, caddy.Context) {
	tb.Helper()
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	tb.Cleanup(cancel)
	mod, err := ctx.LoadModuleByID("http.handlers.gatehouse_mirror", json.RawMessage(cfg))
	if err != nil {
		tb.Fatalf("loading %s: %v", cfg, err)
	}
	h := mod.(*Handler)
	tb.Cleanup(func() { _ = h.Cleanup() })
	return h, ctx
}

// primary is the rest of the chain: it reads the whole body and echoes it.
type primary struct {
	mu     sync.Mutex
	bodies []string
}

func (p *primary) ServeHTTP(w http.ResponseWriter, r *http.Request) error {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return err
	}
	p.mu.Lock()
	p.bodies = append(p.bodies, string(body))
	p.mu.Unlock()
	w.Header().Set("X-Primary", "yes")
	w.WriteHeader(201)
	_, _ = fmt.Fprintf(w, "primary got %d bytes", len(body))
	return nil
}

func serve(t testing.TB, h *Handler, req *http.Request, next caddyhttp.Handler) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	req = caddyhttp.PrepareRequest(req, caddy.NewReplacer(), rec, nil)
	if err := h.ServeHTTP(rec, req, next); err != nil {
		t.Fatalf("ServeHTTP: %v", err)
	}
	return rec
}

func counters(h *Handler, i int) [4]uint64 {
	m, f, d, s := h.targets[i].stats.Snapshot()
	return [4]uint64{m, f, d, s}
}

func waitCounters(t *testing.T, h *Handler, i int, want [4]uint64) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if counters(h, i) == want {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("target %d counters (mirrored, failed, dropped, skipped) = %v, want %v", i, counters(h, i), want)
}

func TestMirrorGET(t *testing.T) {
	a, b := newSink(t), newSink(t)
	h, _ := load(t, fmt.Sprintf(`{"route_id":%q,"targets":[{"url":%q},{"url":%q}]}`, t.Name(), a.srv.URL, b.srv.URL))

	req := httptest.NewRequest("GET", "http://app.example.com/some/path%2Fx?q=1&r=%20", nil)
	req.RemoteAddr = "192.0.2.7:5555"
	req.Header.Set("Accept", "text/html")
	req.Header.Set("Cookie", "a=b")
	req.Header.Set("X-Forwarded-For", "6.6.6.6") // client-supplied: replaced
	req.Header.Set("Connection", "keep-alive, X-Drop-Me")
	req.Header.Set("X-Drop-Me", "hop-by-hop via Connection")
	req.Header.Set("Keep-Alive", "timeout=5")
	req.Header.Set("Proxy-Authorization", "Basic xyz")
	req.Header.Set("Te", "trailers")
	p := &primary{}
	rec := serve(t, h, req, p)
	if rec.Code != 201 || rec.Body.String() != "primary got 0 bytes" || rec.Header().Get("X-Primary") != "yes" {
		t.Fatalf("primary response changed: %d %q", rec.Code, rec.Body.String())
	}
	for _, s := range []*sink{a, b} {
		c := s.next(t)
		if c.method != "GET" || c.uri != "/some/path%2Fx?q=1&r=%20" || c.host != "app.example.com" || c.body != "" {
			t.Fatalf("copy %+v", c)
		}
		for k, want := range map[string]string{
			"Accept": "text/html", "Cookie": "a=b", MirrorHeader: "1",
			"X-Forwarded-For": "192.0.2.7", "X-Forwarded-Proto": "http", "X-Forwarded-Host": "app.example.com",
			"X-Drop-Me": "", "Keep-Alive": "", "Proxy-Authorization": "", "Te": "", "User-Agent": "",
		} {
			if got := c.header.Get(k); got != want {
				t.Errorf("copy header %s = %q, want %q", k, got, want)
			}
		}
	}
	waitCounters(t, h, 0, [4]uint64{1, 0, 0, 0})
	waitCounters(t, h, 1, [4]uint64{1, 0, 0, 0})
	// the primary request's headers are untouched
	if req.Header.Get("X-Drop-Me") == "" || req.Header.Get(MirrorHeader) != "" {
		t.Fatal("the primary request's headers were modified")
	}
}

func TestMirrorBody(t *testing.T) {
	a := newSink(t)
	h, _ := load(t, fmt.Sprintf(`{"route_id":%q,"targets":[{"url":%q}],"max_body_bytes":1000}`, t.Name(), a.srv.URL))
	p := &primary{}

	// Content-Length body within the limit (exactly at it)
	body := strings.Repeat("x", 1000)
	rec := serve(t, h, httptest.NewRequest("POST", "http://app.example.com/upload", strings.NewReader(body)), p)
	if rec.Body.String() != "primary got 1000 bytes" {
		t.Fatalf("primary: %q", rec.Body.String())
	}
	if c := a.next(t); c.method != "POST" || c.body != body || c.header.Get("Content-Length") != "" && c.header.Get("Content-Length") != "1000" {
		t.Fatalf("copy: %s %d bytes", c.method, len(c.body))
	}

	// chunked body (unknown length) within the limit
	req := httptest.NewRequest("PUT", "http://app.example.com/x", io.NopCloser(strings.NewReader("chunked body")))
	req.ContentLength = -1
	req.TransferEncoding = []string{"chunked"}
	serve(t, h, req, p)
	if c := a.next(t); c.method != "PUT" || c.body != "chunked body" {
		t.Fatalf("chunked copy: %+v", c)
	}

	// Content-Length over the limit: not mirrored, primary intact
	big := strings.Repeat("y", 1001)
	rec = serve(t, h, httptest.NewRequest("POST", "http://app.example.com/big", strings.NewReader(big)), p)
	if rec.Body.String() != "primary got 1001 bytes" {
		t.Fatalf("primary: %q", rec.Body.String())
	}

	// chunked over the limit: found out while the chain reads; primary intact
	req = httptest.NewRequest("POST", "http://app.example.com/bigchunked", io.NopCloser(strings.NewReader(strings.Repeat("z", 5000))))
	req.ContentLength = -1
	req.TransferEncoding = []string{"chunked"}
	rec = serve(t, h, req, p)
	if rec.Body.String() != "primary got 5000 bytes" {
		t.Fatalf("primary: %q", rec.Body.String())
	}

	// the chain answers without reading the body: not mirrored
	unread := caddyhttp.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) error {
		w.WriteHeader(204)
		return nil
	})
	serve(t, h, httptest.NewRequest("POST", "http://app.example.com/unread", strings.NewReader("abc")), unread)

	a.none(t, 200*time.Millisecond)
	waitCounters(t, h, 0, [4]uint64{2, 0, 0, 3})
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.bodies) != 4 || p.bodies[0] != body || p.bodies[2] != big {
		t.Fatalf("the primary did not get the original bodies")
	}
}

// Upgrades (websocket) and CONNECT are not mirrored.
func TestMirrorSkipsUpgrade(t *testing.T) {
	a := newSink(t)
	h, _ := load(t, fmt.Sprintf(`{"route_id":%q,"targets":[{"url":%q}]}`, t.Name(), a.srv.URL))
	req := httptest.NewRequest("GET", "http://app.example.com/ws", nil)
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "websocket")
	serve(t, h, req, &primary{})
	a.none(t, 100*time.Millisecond)
	waitCounters(t, h, 0, [4]uint64{0, 0, 0, 1})
}

// A slow target neither delays nor changes the primary response.
func TestSlowTargetDoesNotDelay(t *testing.T) {
	a := newSink(t)
	a.delay = 2 * time.Second
	h, _ := load(t, fmt.Sprintf(`{"route_id":%q,"targets":[{"url":%q}],"timeout":"10s"}`, t.Name(), a.srv.URL))
	start := time.Now()
	for range 5 {
		rec := serve(t, h, httptest.NewRequest("POST", "http://app.example.com/", strings.NewReader("body")), &primary{})
		if rec.Code != 201 {
			t.Fatal(rec.Code)
		}
	}
	if el := time.Since(start); el > 1500*time.Millisecond {
		t.Fatalf("5 requests took %v with a 2s-slow mirror", el)
	}
}

// max_in_flight bounds the copies; the rest are dropped and counted; a
// target that does not answer within the timeout counts as failed.
func TestBoundedAndTimeout(t *testing.T) {
	a := newSink(t)
	a.hold = make(chan struct{})
	defer close(a.hold)
	h, _ := load(t, fmt.Sprintf(`{"route_id":%q,"targets":[{"url":%q}],"max_in_flight":2,"timeout":"1s"}`, t.Name(), a.srv.URL))
	for range 10 {
		serve(t, h, httptest.NewRequest("GET", "http://app.example.com/", nil), &primary{})
	}
	if got := counters(h, 0); got[2] != 8 {
		t.Fatalf("dropped %d, want 8 (counters %v)", got[2], got)
	}
	waitCounters(t, h, 0, [4]uint64{0, 2, 8, 0})
	// slots are free again after the timeout
	serve(t, h, httptest.NewRequest("GET", "http://app.example.com/", nil), &primary{})
	if got := counters(h, 0); got[2] != 8 {
		t.Fatalf("dropped after the slots were freed: %v", got)
	}
}

func TestUnreachableTargetFails(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	h, _ := load(t, fmt.Sprintf(`{"route_id":%q,"targets":[{"url":"http://%s"}]}`, t.Name(), addr))
	rec := serve(t, h, httptest.NewRequest("GET", "http://app.example.com/", nil), &primary{})
	if rec.Code != 201 {
		t.Fatal(rec.Code)
	}
	waitCounters(t, h, 0, [4]uint64{0, 1, 0, 0})
}

// Counters are kept per route id across a reload and exported as Prometheus
// counters in the config's metrics registry.
func TestCountersAcrossReloadAndMetrics(t *testing.T) {
	a := newSink(t)
	cfg := fmt.Sprintf(`{"route_id":"77","targets":[{"url":%q}]}`, a.srv.URL)
	old, _ := load(t, cfg)
	serve(t, old, httptest.NewRequest("GET", "http://app.example.com/", nil), &primary{})
	a.next(t)
	waitCounters(t, old, 0, [4]uint64{1, 0, 0, 0})

	cur, ctx := load(t, cfg) // the reload: new config provisioned first
	_ = old.Cleanup()        // then the old one is cleaned up
	serve(t, cur, httptest.NewRequest("GET", "http://app.example.com/", nil), &primary{})
	a.next(t)
	waitCounters(t, cur, 0, [4]uint64{2, 0, 0, 0})

	families, err := ctx.GetMetricsRegistry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range families {
		if f.GetName() != "gatehouse_mirror_requests_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			got[labels(m)] = m.GetCounter().GetValue()
		}
	}
	target := strings.ToLower(a.srv.URL)
	want := map[string]float64{
		"result=mirrored,route_id=77,target=" + target: 2,
		"result=failed,route_id=77,target=" + target:   0,
		"result=dropped,route_id=77,target=" + target:  0,
		"result=skipped,route_id=77,target=" + target:  0,
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("metrics %v, want %v", got, want)
	}
}

func labels(m *dto.Metric) string {
	var parts []string
	for _, l := range m.GetLabel() {
		parts = append(parts, l.GetName()+"="+l.GetValue())
	}
	return strings.Join(parts, ",")
}

func TestValidation(t *testing.T) {
	for cfg, want := range map[string]string{
		`{}`:                                                                 "at least one target",
		`{"targets":[]}`:                                                     "at least one target",
		`{"targets":[{"url":"10.8.0.5:8080"}]}`:                              "scheme",
		`{"targets":[{"url":"ftp://10.8.0.5"}]}`:                             "scheme",
		`{"targets":[{"url":"http://"}]}`:                                    "host is missing",
		`{"targets":[{"url":"http://10.8.0.5/path"}]}`:                       "origin only",
		`{"targets":[{"url":"http://10.8.0.5?x=1"}]}`:                        "origin only",
		`{"targets":[{"url":"http://u:p@10.8.0.5"}]}`:                        "user info",
		`{"targets":[{"url":"http://10.8.0.5:99999"}]}`:                      "port",
		`{"targets":[{"url":"http://10.8.0.5"},{"url":"http://10.8.0.5/"}]}`: "duplicate",
		`{"targets":[{"url":"http://10.8.0.5"}],"max_body_bytes":-1}`:        "max_body_bytes",
		`{"targets":[{"url":"http://10.8.0.5"}],"max_body_bytes":999999999}`: "max_body_bytes",
		`{"targets":[{"url":"http://10.8.0.5"}],"timeout":"2m"}`:             "timeout",
		`{"targets":[{"url":"http://10.8.0.5"}],"max_in_flight":-3}`:         "max_in_flight",
		`{"targets":[{"url":"http://10.8.0.5"}],"max_in_flight":100000}`:     "max_in_flight",
		`{"targets":[{"url":"http://10.8.0.5"}],"sample":0.5}`:               "unknown field",
	} {
		ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
		_, err := ctx.LoadModuleByID("http.handlers.gatehouse_mirror", json.RawMessage(cfg))
		cancel()
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want it to mention %q", cfg, err, want)
		}
	}
	h, _ := load(t, `{"targets":[{"url":"HTTP://Mirror.Example:8080/"}]}`)
	if h.MaxBodyBytes != DefaultMaxBodyBytes || time.Duration(h.Timeout) != DefaultTimeout || h.MaxInFlight != DefaultMaxInFlight {
		t.Fatalf("defaults: %d %v %d", h.MaxBodyBytes, time.Duration(h.Timeout), h.MaxInFlight)
	}
	if h.targets[0].label != "http://mirror.example:8080" {
		t.Fatalf("label %q", h.targets[0].label)
	}
}

// Concurrent requests with bodies through one handler (run with -race).
func TestConcurrent(t *testing.T) {
	a := newSink(t)
	h, _ := load(t, fmt.Sprintf(`{"route_id":%q,"targets":[{"url":%q}],"max_in_flight":1000}`, t.Name(), a.srv.URL))
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 25 {
				body := fmt.Sprintf("g%d-i%d", g, i)
				rec := serve(t, h, httptest.NewRequest("POST", "http://app.example.com/", strings.NewReader(body)), &primary{})
				if rec.Body.String() != fmt.Sprintf("primary got %d bytes", len(body)) {
					t.Errorf("primary %q", rec.Body.String())
				}
			}
		}()
	}
	wg.Wait()
	got := map[string]bool{}
	for range 200 {
		got[a.next(t).body] = true
	}
	if len(got) != 200 {
		t.Fatalf("%d distinct bodies mirrored, want 200", len(got))
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

// The handler inside a real Caddy server in front of reverse_proxy: the
// backend gets the request and body unchanged, the target gets the copy.
func TestInCaddyChain(t *testing.T) {
	a := newSink(t)
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("X-Backend", "1")
		_, _ = fmt.Fprintf(w, "backend %s %s %s mirror-header=%q", r.Method, r.RequestURI, body, r.Header.Get(MirrorHeader))
	}))
	defer backend.Close()
	port := freePort(t)
	cfg := fmt.Sprintf(`{
	"admin": {"disabled": true, "config": {"persist": false}},
	"logging": {"logs": {"default": {"level": "WARN"}}},
	"storage": {"module": "file_system", "root": %q},
	"apps": {"http": {"servers": {"t": {
		"listen": ["127.0.0.1:%d"], "automatic_https": {"disable": true},
		"routes": [{"handle": [
			{"handler": "gatehouse_mirror", "route_id": "chain", "targets": [{"url": %q}]},
			{"handler": "reverse_proxy", "upstreams": [{"dial": %q}]}
		]}]}}},
		"pki": {"certificate_authorities": {"local": {"install_trust": false}}}}}`,
		t.TempDir(), port, a.srv.URL, backend.Listener.Addr().String())
	if err := caddy.Load([]byte(cfg), true); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = caddy.Stop() }()

	res, err := http.Post(fmt.Sprintf("http://127.0.0.1:%d/api/items?id=3", port), "application/json", strings.NewReader(`{"a":1}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if want := `backend POST /api/items?id=3 {"a":1} mirror-header=""`; string(body) != want || res.StatusCode != 200 || res.Header.Get("X-Backend") != "1" {
		t.Fatalf("primary: %d %q", res.StatusCode, body)
	}
	c := a.next(t)
	if c.method != "POST" || c.uri != "/api/items?id=3" || c.body != `{"a":1}` || c.header.Get(MirrorHeader) != "1" || c.header.Get("Content-Type") != "application/json" {
		t.Fatalf("copy %+v", c)
	}
}

// BenchmarkServeHTTP: per-request cost. "baseline" is the same loop
// without the mirror handler (request construction, recorder, next);
// "path_*" holds the target so every copy is dropped: the cost the primary
// request pays (header copy, body tee, dispatch attempt); "send_GET" really
// sends each copy to a loopback target (the total CPU a copy costs, client
// side included, on the same cores).
func BenchmarkServeHTTP(b *testing.B) {
	held := make(chan struct{})
	defer close(held)
	hold := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-held:
		case <-r.Context().Done():
		}
	}))
	defer hold.Close()
	fast := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer fast.Close()
	held1, _ := load(b, fmt.Sprintf(`{"route_id":"bench-held","targets":[{"url":%q}],"max_in_flight":1,"timeout":"60s"}`, hold.URL))
	sending, _ := load(b, fmt.Sprintf(`{"route_id":"bench-send","targets":[{"url":%q}],"max_in_flight":8}`, fast.URL))

	next := caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(200)
		return nil
	})
	newReq := func(body string) *http.Request {
		var req *http.Request
		if body == "" {
			req = httptest.NewRequest("GET", "http://app.example.com/path?q=1", nil)
		} else {
			req = httptest.NewRequest("POST", "http://app.example.com/path?q=1", strings.NewReader(body))
		}
		req.Header.Set("User-Agent", "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0")
		req.Header.Set("Accept", "text/html,application/xhtml+xml")
		req.Header.Set("Accept-Language", "en-US,en;q=0.5")
		req.Header.Set("Cookie", "session=abcdef0123456789")
		return req
	}
	kib := strings.Repeat("x", 1024)
	for _, c := range []struct {
		name string
		h    *Handler
		body string
	}{
		{"baseline_GET", nil, ""}, {"path_GET", held1, ""},
		{"baseline_POST_1KiB", nil, kib}, {"path_POST_1KiB", held1, kib},
		{"send_GET", sending, ""},
	} {
		b.Run(c.name, func(b *testing.B) {
			w := &discardWriter{h: http.Header{}}
			b.ReportAllocs()
			for range b.N {
				req := newReq(c.body)
				if c.h == nil {
					_ = next.ServeHTTP(w, req)
				} else {
					_ = c.h.ServeHTTP(w, req, next)
				}
			}
		})
	}
}

type discardWriter struct{ h http.Header }

func (d *discardWriter) Header() http.Header         { return d.h }
func (d *discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (d *discardWriter) WriteHeader(int)             {}
