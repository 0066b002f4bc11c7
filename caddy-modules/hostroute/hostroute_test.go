package hostroute

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	_ "github.com/caddyserver/caddy/v2/modules/caddyhttp/headers"
	_ "github.com/caddyserver/caddy/v2/modules/caddyhttp/reverseproxy"
)

// load provisions and validates a gatehouse_hostroute from JSON the way Caddy
// does when it loads a config (strict decoding, Provision, Validate).
func load(tb testing.TB, cfg string) (*HostRoute, error) {
	tb.Helper()
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	tb.Cleanup(cancel)
	mod, err := ctx.LoadModuleByID("http.handlers.gatehouse_hostroute", json.RawMessage(cfg))
	if err != nil {
		return nil, err
	}
	return mod.(*HostRoute), nil
}

func mustLoad(tb testing.TB, cfg string) *HostRoute {
	tb.Helper()
	h, err := load(tb, cfg)
	if err != nil {
		tb.Fatalf("loading config: %v", err)
	}
	return h
}

// prepare gives a request the context Caddy's server gives it (replacer,
// vars, route groups).
func prepare(req *http.Request, w http.ResponseWriter) *http.Request {
	return caddyhttp.PrepareRequest(req, caddy.NewReplacer(), w, nil)
}

// nextMustNotRun is passed as the enclosing route's next handler: the host
// router must never call it.
var errNextCalled = errors.New("next handler called")

var nextMustNotRun = caddyhttp.HandlerFunc(func(http.ResponseWriter, *http.Request) error {
	return errNextCalled
})

type result struct {
	status int
	body   string
	header http.Header
	err    error
}

func do(tb testing.TB, h *HostRoute, host, path string) result {
	tb.Helper()
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "http://placeholder"+path, nil)
	req.Host = host
	req = prepare(req, rec)
	err := h.ServeHTTP(rec, req, nextMustNotRun)
	if errors.Is(err, errNextCalled) {
		tb.Fatalf("host %q: next handler was called", host)
	}
	return result{rec.Code, rec.Body.String(), rec.Result().Header, err}
}

// static returns a one-route route list answering body with 200.
func static(body string) string {
	return fmt.Sprintf(`{"routes":[{"handle":[{"handler":"static_response","status_code":200,"body":%q}]}]}`, body)
}

const basicConfig = `{
	"hosts": {
		"app.example.com": ` + `{"routes":[{"handle":[{"handler":"static_response","status_code":200,"body":"app"}]}]}` + `,
		"*.wild.example.com": {"routes":[{"handle":[{"handler":"static_response","status_code":200,"body":"wild {http.request.host}"}]}]},
		"wild.example.com": {"routes":[{"handle":[{"handler":"static_response","status_code":200,"body":"apex"}]}]},
		"exact.wild.example.com": {"routes":[{"handle":[{"handler":"static_response","status_code":200,"body":"exact beats wildcard"}]}]},
		"192.0.2.10": {"routes":[{"handle":[{"handler":"static_response","status_code":200,"body":"ipv4"}]}]},
		"[2001:DB8::1]": {"routes":[{"handle":[{"handler":"static_response","status_code":200,"body":"ipv6"}]}]},
		"Trailing.Example.com.": {"routes":[{"handle":[{"handler":"static_response","status_code":200,"body":"trailing"}]}]}
	}
}`

func TestLookup(t *testing.T) {
	h := mustLoad(t, basicConfig)
	cases := []struct {
		host   string
		status int
		body   string
	}{
		// exact
		{"app.example.com", 200, "app"},
		// port stripping
		{"app.example.com:443", 200, "app"},
		{"app.example.com:8443", 200, "app"},
		// case-insensitivity
		{"APP.Example.COM", 200, "app"},
		{"App.Example.Com:80", 200, "app"},
		// trailing dot in request and in key
		{"app.example.com.", 200, "app"},
		{"app.example.com.:443", 200, "app"},
		{"trailing.example.com", 200, "trailing"},
		{"TRAILING.example.com.", 200, "trailing"},
		// wildcard: exactly one label
		{"a.wild.example.com", 200, "wild a.wild.example.com"},
		{"B-2.Wild.Example.com:8443", 200, "wild B-2.Wild.Example.com"},
		{"a.b.wild.example.com", 404, "404 not found: no site is configured for this host name\n"},
		{"wild.example.com", 200, "apex"},
		{".wild.example.com", 404, "404 not found: no site is configured for this host name\n"},
		// exact beats wildcard
		{"exact.wild.example.com", 200, "exact beats wildcard"},
		// IP literals
		{"192.0.2.10", 200, "ipv4"},
		{"192.0.2.10:8080", 200, "ipv4"},
		{"[2001:db8::1]", 200, "ipv6"},
		{"[2001:db8:0::1]:443", 200, "ipv6"},
		// unknown
		{"other.example.com", 404, "404 not found: no site is configured for this host name\n"},
		{"example.com", 404, "404 not found: no site is configured for this host name\n"},
		{"", 404, "404 not found: no site is configured for this host name\n"},
		{":443", 404, "404 not found: no site is configured for this host name\n"},
		{"[::1]", 404, "404 not found: no site is configured for this host name\n"},
		{strings.Repeat("a", 300) + ".example.com", 404, "404 not found: no site is configured for this host name\n"},
	}
	for _, c := range cases {
		r := do(t, h, c.host, "/")
		if r.err != nil {
			t.Errorf("host %q: error %v", c.host, r.err)
			continue
		}
		if r.status != c.status || r.body != c.body {
			t.Errorf("host %q: got %d %q, want %d %q", c.host, r.status, r.body, c.status, c.body)
		}
	}
}

func TestUnknownHost404(t *testing.T) {
	h := mustLoad(t, `{"hosts":{"app.example.com":`+static("app")+`}}`)
	r := do(t, h, "nope.example.com", "/x")
	if r.status != http.StatusNotFound {
		t.Fatalf("status %d, want 404", r.status)
	}
	if ct := r.header.Get("Content-Type"); ct != "text/plain; charset=utf-8" {
		t.Errorf("Content-Type %q", ct)
	}
	if r.header.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("missing nosniff")
	}
	if strings.Contains(r.body, "app") {
		t.Errorf("unknown host got another host's response: %q", r.body)
	}
}

func TestEmptyConfig(t *testing.T) {
	for _, cfg := range []string{`{}`, `{"hosts":{}}`} {
		h := mustLoad(t, cfg)
		if r := do(t, h, "app.example.com", "/"); r.status != 404 {
			t.Errorf("%s: status %d, want 404", cfg, r.status)
		}
	}
}

func TestFallback(t *testing.T) {
	h := mustLoad(t, `{
		"hosts": {"app.example.com": `+static("app")+`},
		"fallback": {"routes":[{"handle":[{"handler":"static_response","status_code":421,"body":"fallback {http.request.host}"}]}]}
	}`)
	if r := do(t, h, "app.example.com", "/"); r.status != 200 || r.body != "app" {
		t.Errorf("known host: %d %q", r.status, r.body)
	}
	for _, host := range []string{"other.example.com", "", "[::1]:443", "x.app.example.com"} {
		r := do(t, h, host, "/")
		if r.status != 421 || !strings.HasPrefix(r.body, "fallback") {
			t.Errorf("host %q: got %d %q, want the fallback", host, r.status, r.body)
		}
	}
}

// A fallback whose routes do not answer ends in the plain 404.
func TestFallbackUnhandled(t *testing.T) {
	h := mustLoad(t, `{"fallback":{"routes":[{"match":[{"path":["/only"]}],"handle":[{"handler":"static_response","body":"only"}]}]}}`)
	if r := do(t, h, "x.example.com", "/only"); r.status != 200 || r.body != "only" {
		t.Errorf("got %d %q", r.status, r.body)
	}
	if r := do(t, h, "x.example.com", "/other"); r.status != 404 || r.body != "404 not found\n" {
		t.Errorf("got %d %q", r.status, r.body)
	}
}

// The host's chain runs in order: a non-terminal headers route, then a
// path-matched route, then a catch-all; matchers are provisioned.
func TestHostChainRuns(t *testing.T) {
	h := mustLoad(t, `{"hosts":{"app.example.com":{"routes":[
		{"handle":[{"handler":"headers","response":{"set":{"X-Chain":["first"]}}}]},
		{"match":[{"path":["/api/*"]}],"handle":[{"handler":"static_response","status_code":201,"body":"api {http.request.uri.path}"}]},
		{"handle":[{"handler":"static_response","status_code":200,"body":"site"}]}
	]}}}`)
	r := do(t, h, "app.example.com", "/api/users")
	if r.status != 201 || r.body != "api /api/users" || r.header.Get("X-Chain") != "first" {
		t.Errorf("api: got %d %q X-Chain=%q", r.status, r.body, r.header.Get("X-Chain"))
	}
	r = do(t, h, "app.example.com", "/index.html")
	if r.status != 200 || r.body != "site" || r.header.Get("X-Chain") != "first" {
		t.Errorf("site: got %d %q X-Chain=%q", r.status, r.body, r.header.Get("X-Chain"))
	}
}

// A known host whose routes write nothing gets the 404 (never Caddy's empty
// 200, never next, never another host's routes).
func TestHostUnhandled(t *testing.T) {
	h := mustLoad(t, `{"hosts":{
		"empty.example.com": {},
		"emptyroutes.example.com": {"routes":[]},
		"pathonly.example.com": {"routes":[{"match":[{"path":["/api/*"]}],"handle":[{"handler":"static_response","body":"api"}]}]},
		"headersonly.example.com": {"routes":[{"handle":[{"handler":"headers","response":{"set":{"X-A":["1"]}}}]}]},
		"other.example.com": `+static("other")+`
	}}`)
	for _, host := range []string{"empty.example.com", "emptyroutes.example.com", "pathonly.example.com", "headersonly.example.com"} {
		r := do(t, h, host, "/")
		if r.status != 404 || r.body != "404 not found\n" || r.err != nil {
			t.Errorf("host %q: got %d %q %v, want the plain 404", host, r.status, r.body, r.err)
		}
	}
	if r := do(t, h, "headersonly.example.com", "/"); r.header.Get("X-A") != "1" {
		t.Errorf("the host's non-terminal handler did not run")
	}
}

// A route marked terminal keeps Caddy's meaning: later routes do not run.
func TestTerminalRoute(t *testing.T) {
	h := mustLoad(t, `{"hosts":{"app.example.com":{"routes":[
		{"handle":[{"handler":"headers","response":{"set":{"X-A":["1"]}}}],"terminal":true},
		{"handle":[{"handler":"static_response","body":"not reached"}]}
	]}}}`)
	r := do(t, h, "app.example.com", "/")
	if strings.Contains(r.body, "not reached") || r.header.Get("X-A") != "1" {
		t.Errorf("got %d %q", r.status, r.body)
	}
}

func TestHostErrors(t *testing.T) {
	h := mustLoad(t, `{"hosts":{
		"app.example.com": {
			"routes":[{"handle":[{"handler":"error","status_code":502,"error":"backend down"}]}],
			"errors":{"routes":[{"handle":[{"handler":"static_response","status_code":"{http.error.status_code}","body":"custom {http.error.status_code}: {http.error.message}"}]}]}
		},
		"partial.example.com": {
			"routes":[{"handle":[{"handler":"error","status_code":503}]}],
			"errors":{"routes":[{"match":[{"expression":"{http.error.status_code} == 404"}],"handle":[{"handler":"static_response","body":"only 404s"}]}]}
		},
		"plain.example.com": {"routes":[{"handle":[{"handler":"error","status_code":500}]}]}
	}}`)
	r := do(t, h, "app.example.com", "/")
	if r.err != nil || r.status != 502 || r.body != "custom 502: backend down" {
		t.Errorf("errors routes: got %d %q %v", r.status, r.body, r.err)
	}
	// unhandled by the host's error routes: the original error goes back to the server
	r = do(t, h, "partial.example.com", "/")
	var he caddyhttp.HandlerError
	if !errors.As(r.err, &he) || he.StatusCode != 503 {
		t.Errorf("partial: got err %v, want the 503 HandlerError", r.err)
	}
	r = do(t, h, "plain.example.com", "/")
	if !errors.As(r.err, &he) || he.StatusCode != 500 {
		t.Errorf("plain: got err %v, want the 500 HandlerError", r.err)
	}
}

// Used inside a server's error routes, a host without an error page (or an
// unknown host) keeps the error's status instead of turning it into a 404.
func TestInServerErrorRoutes(t *testing.T) {
	h := mustLoad(t, `{"hosts":{
		"app.example.com": {"routes":[{"handle":[{"handler":"static_response","status_code":"{http.error.status_code}","body":"app error page"}]}]},
		"nopage.example.com": {"routes":[{"match":[{"path":["/x"]}],"handle":[{"handler":"static_response","body":"x"}]}]}
	}}`)
	for host, want := range map[string]result{
		"app.example.com":     {status: 502, body: "app error page"},
		"nopage.example.com":  {status: 502, body: ""},
		"unknown.example.com": {status: 502, body: ""},
	} {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodGet, "http://placeholder/", nil)
		req.Host = host
		req = prepare(req, rec)
		req = (*caddyhttp.HTTPErrorConfig)(nil).WithError(req, caddyhttp.Error(502, errors.New("upstream")))
		if err := h.ServeHTTP(rec, req, nextMustNotRun); err != nil {
			t.Errorf("%s: error %v", host, err)
		}
		if rec.Code != want.status || rec.Body.String() != want.body {
			t.Errorf("%s: got %d %q, want %d %q", host, rec.Code, rec.Body.String(), want.status, want.body)
		}
	}
}

func TestInvalidConfigs(t *testing.T) {
	cases := []struct {
		name, cfg, want string
	}{
		{"duplicate after case folding", `{"hosts":{"App.example.com":{},"app.example.com":{}}}`, `are the same host "app.example.com"`},
		{"duplicate after trailing dot", `{"hosts":{"app.example.com.":{},"app.example.com":{}}}`, `are the same host`},
		{"duplicate wildcard", `{"hosts":{"*.Example.com":{},"*.example.com.":{}}}`, `are the same host "*.example.com"`},
		{"duplicate ipv6", `{"hosts":{"[2001:db8::1]":{},"2001:DB8:0::1":{}}}`, `are the same host "2001:db8::1"`},
		{"port", `{"hosts":{"app.example.com:443":{}}}`, "must not include a port"},
		{"url", `{"hosts":{"https://app.example.com":{}}}`, "not a URL"},
		{"path", `{"hosts":{"app.example.com/x":{}}}`, "without path"},
		{"empty", `{"hosts":{"":{}}}`, "empty host name"},
		{"star", `{"hosts":{"*":{}}}`, `use "fallback"`},
		{"inner wildcard", `{"hosts":{"a.*.example.com":{}}}`, "wildcard is only allowed"},
		{"double wildcard", `{"hosts":{"*.*.example.com":{}}}`, "wildcard is only allowed"},
		{"partial wildcard", `{"hosts":{"*app.example.com":{}}}`, "wildcard is only allowed"},
		{"space", `{"hosts":{"app example.com":{}}}`, "invalid character"},
		{"unicode", `{"hosts":{"bücher.example":{}}}`, "punycode"},
		{"empty label", `{"hosts":{"app..example.com":{}}}`, "empty label"},
		{"long label", `{"hosts":{"` + strings.Repeat("a", 64) + `.example.com":{}}}`, "longer than 63"},
		{"too long", `{"hosts":{"` + strings.Repeat("abcdefghi.", 26) + `com":{}}}`, "longer than 253"},
		{"null host", `{"hosts":{"app.example.com":null}}`, "configuration is null"},
		{"unknown field", `{"hosts":{},"hostz":{}}`, "unknown field"},
		{"unknown host field", `{"hosts":{"a.example.com":{"route":[]}}}`, "unknown field"},
		{"bad handler", `{"hosts":{"a.example.com":{"routes":[{"handle":[{"handler":"no_such_handler"}]}]}}}`, `host "a.example.com": setting up routes`},
		{"bad fallback", `{"fallback":{"routes":[{"handle":[{"handler":"no_such_handler"}]}]}}`, "fallback: setting up routes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := load(t, c.cfg)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got error %v, want one containing %q", err, c.want)
			}
		})
	}
}

func TestManyInvalidKeysReported(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"hosts":{`)
	for i := 0; i < 25; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"bad%02d.example.com:1":{}`, i)
	}
	b.WriteString(`}}`)
	_, err := load(t, b.String())
	if err == nil {
		t.Fatal("no error")
	}
	msg := err.Error()
	if !strings.Contains(msg, `"bad00.example.com:1"`) || !strings.Contains(msg, `"bad09.example.com:1"`) ||
		strings.Contains(msg, `"bad10.example.com:1"`) || !strings.Contains(msg, "and 15 more invalid host keys") {
		t.Errorf("unexpected error: %s", msg)
	}
}

func TestValidate(t *testing.T) {
	ok := &HostRoute{Hosts: map[string]*Host{"a.example.com": {}, "*.example.com": {}, "example.com": {}}}
	if err := ok.Validate(); err != nil {
		t.Errorf("valid hosts: %v", err)
	}
	bad := &HostRoute{Hosts: map[string]*Host{"A.example.com": {}, "a.example.com": {}}}
	if err := bad.Validate(); err == nil {
		t.Errorf("duplicates not reported")
	}
}

// Many concurrent requests to different hosts (run with -race).
func TestConcurrent(t *testing.T) {
	h := mustLoad(t, manyHostsConfig(200))
	done := make(chan error)
	for g := 0; g < 8; g++ {
		go func(g int) {
			for i := 0; i < 200; i++ {
				n := (i * (g + 1)) % 200
				rec := httptest.NewRecorder()
				req := httptest.NewRequest(http.MethodGet, "http://placeholder/", nil)
				req.Host = fmt.Sprintf("host%d.example.com", n)
				req = prepare(req, rec)
				if err := h.ServeHTTP(rec, req, nextMustNotRun); err != nil {
					done <- err
					return
				}
				if want := fmt.Sprintf("host %d", n); rec.Body.String() != want {
					done <- fmt.Errorf("host%d: got %q", n, rec.Body.String())
					return
				}
			}
			done <- nil
		}(g)
	}
	for g := 0; g < 8; g++ {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}

func TestProvision10kHosts(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	cfg := manyHostsConfig(10000)
	start := time.Now()
	h := mustLoad(t, cfg)
	t.Logf("decoded and provisioned 10,000 hosts in %v (use the benchmarks for figures; -race slows this)", time.Since(start))
	if h.table.len() != 10000 {
		t.Fatalf("%d hosts indexed", h.table.len())
	}
	if r := do(t, h, "host9999.example.com", "/"); r.body != "host 9999" {
		t.Errorf("got %q", r.body)
	}
}

// manyHostsConfig renders n hosts, hostN.example.com, each answering "host N".
func manyHostsConfig(n int) string {
	var b strings.Builder
	b.WriteString(`{"hosts":{`)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"host%d.example.com":{"routes":[{"handle":[{"handler":"static_response","status_code":200,"body":"host %d"}]}]}`, i, i)
	}
	b.WriteString(`}}`)
	return b.String()
}

// manyProxyHostsConfig renders n hosts each proxying to its own upstream, the
// shape the sidecar renders for a plain HTTP route.
func manyProxyHostsConfig(n int) string {
	var b strings.Builder
	b.WriteString(`{"hosts":{`)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"host%d.example.com":{"routes":[{"handle":[{"handler":"reverse_proxy","upstreams":[{"dial":"10.8.%d.%d:8080"}]}]}]}`, i, i/250, i%250+1)
	}
	b.WriteString(`}}`)
	return b.String()
}

type discardWriter struct{ h http.Header }

func (d *discardWriter) Header() http.Header         { return d.h }
func (d *discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (d *discardWriter) WriteHeader(int)             {}

var _ io.Writer = (*discardWriter)(nil)

// BenchmarkServeHTTP: cost per request to a configured host (exact, wildcard,
// unknown) as the number of hosts grows, with the per-host metrics off and
// on. ns/op should stay flat.
func BenchmarkServeHTTP(b *testing.B) {
	for _, n := range []int{1, 1000, 10000, 100000} {
		for _, metrics := range []bool{false, true} {
			cfg := manyHostsConfig(n)
			if metrics {
				cfg = strings.Replace(cfg, `{"hosts":{`, `{"metrics":true,"hosts":{`, 1)
			}
			// add one wildcard host
			cfg = strings.Replace(cfg, `{"hosts":{`, `{"hosts":{"*.wild.example.com":`+static("wild")+`,`, 1)
			h := mustLoad(b, cfg)
			for _, c := range []struct{ name, host string }{
				{"exact", fmt.Sprintf("host%d.example.com", n/2)},
				{"exact_port_upper", fmt.Sprintf("HOST%d.Example.com:443", n/2)},
				{"wildcard", "abc.wild.example.com"},
				{"unknown", "unknown.example.net"},
			} {
				b.Run(fmt.Sprintf("hosts=%d/metrics=%v/%s", n, metrics, c.name), func(b *testing.B) {
					w := &discardWriter{h: make(http.Header)}
					req := httptest.NewRequest(http.MethodGet, "http://placeholder/", nil)
					req.Host = c.host
					req = prepare(req, w)
					b.ReportAllocs()
					b.ResetTimer()
					for i := 0; i < b.N; i++ {
						if err := h.ServeHTTP(w, req, nextMustNotRun); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
	}
}

// BenchmarkLookup isolates the host lookup as a request pays it (read lock,
// map lookup, reference taken and released; no handler work).
func BenchmarkLookup(b *testing.B) {
	for _, n := range []int{1, 1000, 10000, 100000} {
		h := mustLoad(b, manyHostsConfig(n))
		host := fmt.Sprintf("host%d.example.com:443", n/2)
		b.Run(fmt.Sprintf("hosts=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				e := h.acquire(host)
				if e == nil {
					b.Fatal("not found")
				}
				e.release()
			}
		})
	}
}

// BenchmarkProvision10k: decode + provision + validate of 10,000 hosts with
// one static_response route each, as Caddy does for the handler on every
// config load. (reverse_proxy needs a loaded config to provision: see
// BenchmarkLoadConfig10k.)
func BenchmarkProvision10k(b *testing.B) {
	cfg := manyHostsConfig(10000)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
		if _, err := ctx.LoadModuleByID("http.handlers.gatehouse_hostroute", json.RawMessage(cfg)); err != nil {
			b.Fatal(err)
		}
		cancel()
	}
}
