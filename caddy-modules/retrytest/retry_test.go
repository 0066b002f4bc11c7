package retrytest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	_ "github.com/caddyserver/caddy/v2/modules/standard"
	_ "github.com/gatehouse/caddy-modules/circuitbreaker"
)

// requestBuffers is what the renderer sets as reverse_proxy
// request_buffers on a route with retries: bodies shorter than this are
// buffered whole and replayed on a retry.
const requestBuffers = 65536

// replayable is the CEL condition for "this request's body (if any) can be
// sent again": no body at all, or a Content-Length below request_buffers.
// PUT without Content-Length (chunked, or HTTP/2 without the header) is not
// retried: its body may be larger than the buffer.
var replayable = fmt.Sprintf("({http.request.header.Content-Length} == '' ? ({http.request.method} != 'PUT' && {http.request.header.Transfer-Encoding} == '') : int({http.request.header.Content-Length}) < %d)", requestBuffers)

// retryJSON is the reverse_proxy fragment the sidecar renders for
// retry_enabled=true, retry_count, retry_status_codes (see ../RETRY.md).
func retryJSON(retryCount int, statusCodes []int) string {
	methods := `["GET","HEAD","OPTIONS","PUT","DELETE"]`
	sets := []string{}
	if len(statusCodes) > 0 {
		var codes []string
		for _, c := range statusCodes {
			codes = append(codes, fmt.Sprint(c))
		}
		expr := fmt.Sprintf("{http.reverse_proxy.status_code} in [%s] && %s", strings.Join(codes, ", "), replayable)
		sets = append(sets, fmt.Sprintf(`{"method":%s,"expression":%q}`, methods, expr))
	}
	sets = append(sets, fmt.Sprintf(`{"method":%s,"expression":%q}`, methods, "{http.reverse_proxy.is_transport_error} && "+replayable))
	return fmt.Sprintf(`"request_buffers":%d,"load_balancing":{"retries":%d,"retry_match":[%s]}`, requestBuffers, retryCount, strings.Join(sets, ","))
}

// backend answers by path: /once<code>... answers <code> to the first
// request for that path, then 200; /always<code> always answers <code>;
// /oncereset... closes the connection without an answer the first time.
type backend struct {
	mu     sync.Mutex
	hits   map[string]int
	bodies map[string][]string
}

func (b *backend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	b.mu.Lock()
	b.hits[r.URL.Path]++
	n := b.hits[r.URL.Path]
	b.bodies[r.URL.Path] = append(b.bodies[r.URL.Path], string(body))
	b.mu.Unlock()
	var code int
	switch {
	case strings.HasPrefix(r.URL.Path, "/oncereset") && n == 1:
		conn, _, _ := http.NewResponseController(w).Hijack()
		conn.Close()
		return
	case strings.HasPrefix(r.URL.Path, "/once") && n == 1:
		fmt.Sscanf(r.URL.Path, "/once%d", &code)
	case strings.HasPrefix(r.URL.Path, "/always"):
		fmt.Sscanf(r.URL.Path, "/always%d", &code)
	}
	if code != 0 {
		w.WriteHeader(code)
		return
	}
	fmt.Fprintf(w, "ok %d bytes", len(body))
}

func (b *backend) get(path string) (int, []string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.hits[path], b.bodies[path]
}

type env struct {
	t    *testing.T
	base string
	be   *backend
	logs string
}

// start runs Caddy with one route: handlers before reverse_proxy (may be
// empty), then reverse_proxy to the backend with the given extra fields.
func start(t *testing.T, before, rpExtra string) *env {
	t.Helper()
	be := &backend{hits: map[string]int{}, bodies: map[string][]string{}}
	srv := httptest.NewServer(be)
	t.Cleanup(srv.Close)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	logs := filepath.Join(t.TempDir(), "caddy.log")
	cfg := fmt.Sprintf(`{
	"admin": {"disabled": true, "config": {"persist": false}},
	"storage": {"module": "file_system", "root": %q},
	"logging": {"logs": {"default": {"level": "DEBUG", "writer": {"output": "file", "filename": %q}}}},
	"apps": {"http": {"servers": {"t": {
		"listen": ["127.0.0.1:%d"], "automatic_https": {"disable": true},
		"routes": [{"handle": [%s{"handler": "reverse_proxy", "upstreams": [{"dial": %q}], %s}]}]}}},
		"pki": {"certificate_authorities": {"local": {"install_trust": false}}}}}`,
		t.TempDir(), logs, port, before, srv.Listener.Addr().String(), rpExtra)
	if err := caddy.Load([]byte(cfg), true); err != nil {
		t.Fatalf("load: %v\n%s", err, cfg)
	}
	t.Cleanup(func() { _ = caddy.Stop() })
	return &env{t: t, base: fmt.Sprintf("http://127.0.0.1:%d", port), be: be, logs: logs}
}

// do sends a request; chunked forces a body without Content-Length.
func (e *env) do(method, path string, body []byte, chunked bool) int {
	e.t.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
		if chunked {
			rd = io.MultiReader(rd) // hides the length from net/http
		}
	}
	req, err := http.NewRequest(method, e.base+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode
}

type tc struct {
	method, path string
	body         []byte
	chunked      bool
	wantStatus   int
	wantHits     int
}

func (e *env) check(cases []tc) {
	e.t.Helper()
	for _, c := range cases {
		status := e.do(c.method, c.path, c.body, c.chunked)
		hits, bodies := e.be.get(c.path)
		if status != c.wantStatus || hits != c.wantHits {
			e.t.Errorf("%s %s (%d-byte body, chunked %v): status %d after %d backend requests, want %d after %d",
				c.method, c.path, len(c.body), c.chunked, status, hits, c.wantStatus, c.wantHits)
			continue
		}
		for i, b := range bodies {
			if b != string(c.body) {
				e.t.Errorf("%s %s: attempt %d carried a %d-byte body, want the original %d bytes", c.method, c.path, i+1, len(b), len(c.body))
			}
		}
	}
	if data, _ := os.ReadFile(e.logs); bytes.Contains(data, []byte("error matching request for retry")) {
		e.t.Errorf("Caddy could not evaluate a retry matcher:\n%s", data)
	}
}

// Response-status retries: idempotent methods only, bodies replayed whole.
func TestRetryOnStatus(t *testing.T) {
	e := start(t, "", retryJSON(2, []int{502, 503}))
	small := bytes.Repeat([]byte("s"), 1000)
	big := bytes.Repeat([]byte("b"), requestBuffers) // not below request_buffers
	e.check([]tc{
		// a listed status once, then 200: the client sees the 200
		{"GET", "/once502/a", nil, false, 200, 2},
		{"HEAD", "/once503/b", nil, false, 200, 2},
		{"OPTIONS", "/once502/c", nil, false, 200, 2},
		{"DELETE", "/once502/d", nil, false, 200, 2},
		{"PUT", "/once502/e", small, false, 200, 2}, // both attempts carry the whole body
		// not retried: non-idempotent methods
		{"POST", "/once502/f", small, false, 502, 1},
		{"PATCH", "/once503/g", small, false, 503, 1},
		// not retried: bodies that may not be replayable
		{"PUT", "/once502/h", big, false, 502, 1},
		{"PUT", "/once502/i", small, true, 502, 1},
		// not retried: a status that is not listed
		{"GET", "/once500/j", nil, false, 500, 1},
		{"GET", "/once504/k", nil, false, 504, 1},
		// retry_count bounds the attempts; the last status is passed on
		{"GET", "/always503/l", nil, false, 503, 3},
	})
}

// The retry count is honoured exactly.
func TestRetryCount(t *testing.T) {
	for _, n := range []int{1, 3} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			e := start(t, "", retryJSON(n, []int{502}))
			e.check([]tc{{"GET", "/always502/x", nil, false, 502, n + 1}})
		})
	}
}

// Transport errors after the request was sent (the backend closes the
// connection): retried for the same idempotent, replayable requests. The
// test turns keep-alive off so that Go's own transport (which retries an
// idempotent request on a reused connection by itself) cannot hide
// Caddy's decision.
func TestRetryOnTransportError(t *testing.T) {
	noKeepAlive := `"transport": {"protocol": "http", "keep_alive": {"enabled": false}}, `
	e := start(t, "", noKeepAlive+retryJSON(2, []int{502}))
	e.check([]tc{
		{"GET", "/oncereset/a", nil, false, 200, 2},
		{"PUT", "/oncereset/b", []byte("put body"), false, 200, 2},
		{"POST", "/oncereset/c", []byte("post body"), false, 502, 1},
	})
	// without retry settings: not retried at all
	e2 := start(t, "", noKeepAlive+`"flush_interval": -1`)
	e2.check([]tc{{"GET", "/oncereset/d", nil, false, 502, 1}})
}

// retry_enabled with no status codes: transport errors only.
func TestRetryNoStatusCodes(t *testing.T) {
	e := start(t, "", `"transport": {"protocol": "http", "keep_alive": {"enabled": false}}, `+retryJSON(2, nil))
	e.check([]tc{
		{"GET", "/once502/a", nil, false, 502, 1},
		{"GET", "/oncereset/b", nil, false, 200, 2},
	})
}

// The circuit breaker in front of reverse_proxy sees one outcome per client
// request, after the retries: a 502 that a retry turned into a 200 is not a
// failure.
func TestRetryBehindBreaker(t *testing.T) {
	breaker := `{"handler": "gatehouse_circuit_breaker", "route_id": "retrytest", "threshold": 1, "timeout": 60}, `
	e := start(t, breaker, retryJSON(2, []int{502}))
	e.check([]tc{
		{"GET", "/once502/a", nil, false, 200, 2},
		{"GET", "/once502/b", nil, false, 200, 2}, // still closed (threshold 1)
		{"POST", "/once502/c", []byte("x"), false, 502, 1},
		{"GET", "/never/d", nil, false, 503, 0}, // now open: the backend is not touched
	})
}

// retryMatchSets provisions the renderer's retry_match (see retryJSON) the
// way reverse_proxy does.
func retryMatchSets(b *testing.B, statusCodes []int) caddyhttp.MatcherSets {
	b.Helper()
	var lb struct {
		LoadBalancing struct {
			RetryMatchRaw caddyhttp.RawMatcherSets `json:"retry_match" caddy:"namespace=http.matchers"`
		} `json:"load_balancing"`
	}
	if err := json.Unmarshal([]byte("{"+retryJSON(2, statusCodes)+"}"), &lb); err != nil {
		b.Fatal(err)
	}
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	b.Cleanup(cancel)
	mods, err := ctx.LoadModule(&lb.LoadBalancing, "RetryMatchRaw")
	if err != nil {
		b.Fatal(err)
	}
	var sets caddyhttp.MatcherSets
	if err := sets.FromInterface(mods); err != nil {
		b.Fatal(err)
	}
	return sets
}

// BenchmarkRetryMatchOnSuccess is what a route with retries adds to every
// successful response: reverse_proxy evaluates the status matcher set
// (method list + CEL expression) on each response before passing it on.
// The transport-error set is only evaluated after an error.
func BenchmarkRetryMatchOnSuccess(b *testing.B) {
	sets := retryMatchSets(b, []int{502, 503, 504})
	repl := caddy.NewReplacer()
	req := caddyhttp.PrepareRequest(httptest.NewRequest(http.MethodGet, "http://app.example/", nil), repl, nil, nil)
	// the matcher does evaluate the expression: a listed status matches
	repl.Set("http.reverse_proxy.status_code", 502)
	if match, err := sets[0].MatchWithError(req); err != nil || !match {
		b.Fatalf("502: match=%v err=%v", match, err)
	}
	repl.Set("http.reverse_proxy.status_code", 200)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		match, err := sets[0].MatchWithError(req)
		if err != nil || match {
			b.Fatalf("match=%v err=%v", match, err)
		}
	}
}
