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
	_ "github.com/gatehouse/caddy-modules/bodiless"
	_ "github.com/gatehouse/caddy-modules/circuitbreaker"
)

// requestBuffers is what the renderer sets as request_buffers on the
// buffering copy of a retrying reverse_proxy: bodies shorter than this are
// buffered whole and replayed on a retry.
const requestBuffers = 65536

// replayable is the CEL condition of the buffering copy for "this request's
// body can be sent again": a Content-Length below request_buffers, or no
// Content-Length over HTTP/3 (except PUT). Without Content-Length over
// HTTP/1 or HTTP/2 a request reaching that copy has a body of unknown length.
var replayable = fmt.Sprintf("({http.request.header.Content-Length} == '' ? ({http.request.method} != 'PUT' && {http.request.proto} == 'HTTP/3.0') : int({http.request.header.Content-Length}) < %d)", requestBuffers)

const transportError = "{http.reverse_proxy.is_transport_error} == true"

// retryRoutes is what the sidecar renders for a route's reverse_proxy
// (rpFields: its JSON fields without braces) with retry_enabled=true,
// retry_count and retry_status_codes (see ../RETRY.md): two routes that
// follow the route's handler chain, the lean copy for bodiless
// GET/HEAD/OPTIONS/DELETE and the buffering copy for the rest.
func retryRoutes(rpFields string, retryCount int, statusCodes []int) string {
	methods := `["GET","HEAD","OPTIONS","PUT","DELETE"]`
	var lean, buffering []string
	if len(statusCodes) > 0 {
		var codes []string
		for _, c := range statusCodes {
			codes = append(codes, fmt.Sprint(c))
		}
		status := fmt.Sprintf("{http.reverse_proxy.status_code} in [%s]", strings.Join(codes, ", "))
		lean = append(lean, fmt.Sprintf(`{"expression":%q}`, status))
		buffering = append(buffering, fmt.Sprintf(`{"method":%s,"expression":%q}`, methods, status+" && "+replayable))
	}
	lean = append(lean, fmt.Sprintf(`{"expression":%q}`, transportError))
	buffering = append(buffering, fmt.Sprintf(`{"method":%s,"expression":%q}`, methods, transportError+" && "+replayable))
	return fmt.Sprintf(`{"match":[{"method":["GET","HEAD","OPTIONS","DELETE"],"gatehouse_bodiless":{}}],
		 "handle":[{%s,"load_balancing":{"retries":%d,"retry_match":[%s]}}]},
		{"handle":[{%s,"request_buffers":%d,"load_balancing":{"retries":%d,"retry_match":[%s]}}]}`,
		rpFields, retryCount, strings.Join(lean, ","), rpFields, requestBuffers, retryCount, strings.Join(buffering, ","))
}

// proxyFields are a reverse_proxy's fields to dial; extra, if not empty,
// starts with a comma.
func proxyFields(dial, extra string) string {
	return fmt.Sprintf(`"handler": "reverse_proxy", "upstreams": [{"dial": %q}]%s`, dial, extra)
}

// retrying and plain give start() the server's route list for the handlers
// before the proxy (empty, or JSON objects each followed by a comma) and the
// backend address.
func retrying(retryCount int, statusCodes []int, extra string) func(string, string) string {
	return func(before, dial string) string {
		return fmt.Sprintf(`[{"handle": [%s]}, %s]`, strings.TrimSuffix(strings.TrimSpace(before), ","), retryRoutes(proxyFields(dial, extra), retryCount, statusCodes))
	}
}
func plain(extra string) func(string, string) string {
	return func(before, dial string) string {
		return fmt.Sprintf(`[{"handle": [%s{%s}]}]`, before, proxyFields(dial, extra))
	}
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
	t      *testing.T
	base   string
	be     *backend
	logs   string
	client *http.Client
}

// start runs Caddy with the route list routes(before, backend address):
// handlers before the proxy (may be empty, or end with a comma), then the
// proxy. The server speaks HTTP/1.1 and unencrypted HTTP/2; e.client speaks
// HTTP/1.1 (h2c() switches).
func start(t *testing.T, before string, routes func(string, string) string) *env {
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
		"listen": ["127.0.0.1:%d"], "automatic_https": {"disable": true}, "protocols": ["h1", "h2c"],
		"routes": %s}}},
		"pki": {"certificate_authorities": {"local": {"install_trust": false}}}}}`,
		t.TempDir(), logs, port, routes(before, srv.Listener.Addr().String()))
	if err := caddy.Load([]byte(cfg), true); err != nil {
		t.Fatalf("load: %v\n%s", err, cfg)
	}
	t.Cleanup(func() { _ = caddy.Stop() })
	return &env{t: t, base: fmt.Sprintf("http://127.0.0.1:%d", port), be: be, logs: logs, client: http.DefaultClient}
}

// h2c makes e's client speak unencrypted HTTP/2 (prior knowledge) only.
func (e *env) h2c() *env {
	tr := &http.Transport{Protocols: new(http.Protocols)}
	tr.Protocols.SetUnencryptedHTTP2(true)
	e.client = &http.Client{Transport: tr}
	e.t.Cleanup(tr.CloseIdleConnections)
	return e
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
	res, err := e.client.Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	if want := e.client != http.DefaultClient; (res.ProtoMajor == 2) != want {
		e.t.Fatalf("%s %s: answered over %s", method, path, res.Proto)
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
	e := start(t, "", retrying(2, []int{502, 503}, ""))
	small := bytes.Repeat([]byte("s"), 1000)
	big := bytes.Repeat([]byte("b"), requestBuffers) // not below request_buffers
	e.check([]tc{
		// a listed status once, then 200: the client sees the 200
		{"GET", "/once502/a", nil, false, 200, 2},
		{"HEAD", "/once503/b", nil, false, 200, 2},
		{"OPTIONS", "/once502/c", nil, false, 200, 2},
		{"DELETE", "/once502/d", nil, false, 200, 2},
		{"PUT", "/once502/e", small, false, 200, 2}, // both attempts carry the whole body
		{"DELETE", "/once502/e2", small, false, 200, 2},
		// not retried: non-idempotent methods
		{"POST", "/once502/f", small, false, 502, 1},
		{"PATCH", "/once503/g", small, false, 503, 1},
		// not retried: bodies that may not be replayable
		{"PUT", "/once502/h", big, false, 502, 1},
		{"PUT", "/once502/i", small, true, 502, 1},
		{"DELETE", "/once502/i2", small, true, 502, 1},
		// not retried: a status that is not listed
		{"GET", "/once500/j", nil, false, 500, 1},
		{"GET", "/once504/k", nil, false, 504, 1},
		// retry_count bounds the attempts; the last status is passed on
		{"GET", "/always503/l", nil, false, 503, 3},
	})
}

// Over HTTP/2 a body of unknown length comes without Content-Length or
// Transfer-Encoding, like no body at all: gatehouse_bodiless tells them
// apart, so a bodiless GET takes the lean copy and is retried, and a GET
// streaming a body takes the buffering copy, where a body of unknown length
// is not retried (a header-based split would send it to the lean copy and
// retry it with an empty body).
func TestRetryHTTP2(t *testing.T) {
	e := start(t, "", retrying(2, []int{502}, "")).h2c()
	small := bytes.Repeat([]byte("s"), 1000)
	e.check([]tc{
		{"GET", "/once502/a", nil, false, 200, 2},
		{"HEAD", "/once502/b", nil, false, 200, 2},
		{"DELETE", "/once502/c", small, false, 200, 2}, // Content-Length: replayed
		{"PUT", "/once502/d", small, false, 200, 2},
		{"GET", "/once502/e", small, true, 502, 1}, // streamed, no Content-Length
		{"POST", "/once502/f", small, false, 502, 1},
	})
}

// The retry count is honoured exactly.
func TestRetryCount(t *testing.T) {
	for _, n := range []int{1, 3} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			e := start(t, "", retrying(n, []int{502}, ""))
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
	noKeepAlive := `, "transport": {"protocol": "http", "keep_alive": {"enabled": false}}`
	e := start(t, "", retrying(2, []int{502}, noKeepAlive))
	e.check([]tc{
		{"GET", "/oncereset/a", nil, false, 200, 2},
		{"PUT", "/oncereset/b", []byte("put body"), false, 200, 2},
		{"POST", "/oncereset/c", []byte("post body"), false, 502, 1},
	})
	// without retry settings: not retried at all
	e2 := start(t, "", plain(noKeepAlive))
	e2.check([]tc{{"GET", "/oncereset/d", nil, false, 502, 1}})
}

// retry_enabled with no status codes: transport errors only.
func TestRetryNoStatusCodes(t *testing.T) {
	e := start(t, "", retrying(2, nil, `, "transport": {"protocol": "http", "keep_alive": {"enabled": false}}`))
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
	e := start(t, breaker, retrying(2, []int{502}, ""))
	e.check([]tc{
		{"GET", "/once502/a", nil, false, 200, 2},
		{"GET", "/once502/b", nil, false, 200, 2}, // still closed (threshold 1)
		{"POST", "/once502/c", []byte("x"), false, 502, 1},
		{"GET", "/never/d", nil, false, 503, 0}, // now open: the backend is not touched
	})
}

// retryMatchSets provisions the retry_match of the lean copy (lean=true)
// or of the buffering copy of retryRoutes, the way reverse_proxy does.
func retryMatchSets(b *testing.B, statusCodes []int, lean bool) caddyhttp.MatcherSets {
	b.Helper()
	type lb struct {
		LoadBalancing struct {
			RetryMatchRaw caddyhttp.RawMatcherSets `json:"retry_match" caddy:"namespace=http.matchers"`
		} `json:"load_balancing"`
	}
	var routes []struct {
		Handle []lb `json:"handle"`
	}
	if err := json.Unmarshal([]byte("["+retryRoutes(proxyFields("127.0.0.1:9", ""), 2, statusCodes)+"]"), &routes); err != nil {
		b.Fatal(err)
	}
	h := routes[1].Handle[0]
	if lean {
		h = routes[0].Handle[0]
	}
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	b.Cleanup(cancel)
	mods, err := ctx.LoadModule(&h.LoadBalancing, "RetryMatchRaw")
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
// successful response: reverse_proxy evaluates the status matcher set on
// each response before passing it on (the transport-error set only after an
// error). lean: the bodiless GET/HEAD/OPTIONS/DELETE requests' copy (one
// short expression); buffering: the other requests' copy (method list and
// the body condition).
func BenchmarkRetryMatchOnSuccess(b *testing.B) {
	for _, lean := range []bool{true, false} {
		name := map[bool]string{true: "lean", false: "buffering"}[lean]
		b.Run(name, func(b *testing.B) {
			sets := retryMatchSets(b, []int{502, 503, 504}, lean)
			repl := caddy.NewReplacer()
			r := httptest.NewRequest(http.MethodGet, "http://app.example/", nil)
			if !lean { // a request the buffering copy retries: a small PUT
				r = httptest.NewRequest(http.MethodPut, "http://app.example/", strings.NewReader("0123456789"))
				r.Header.Set("Content-Length", "10")
			}
			req := caddyhttp.PrepareRequest(r, repl, nil, nil)
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
		})
	}
}
