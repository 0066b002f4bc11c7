package botblock

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
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

func load(tb testing.TB, cfg string) (*Handler, caddy.Context) {
	tb.Helper()
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	tb.Cleanup(cancel)
	mod, err := ctx.LoadModuleByID("http.handlers.gatehouse_botblock", json.RawMessage(cfg))
	if err != nil {
		tb.Fatalf("loading %s: %v", cfg, err)
	}
	h := mod.(*Handler)
	tb.Cleanup(func() { _ = h.Cleanup() })
	return h, ctx
}

const (
	chromeUA  = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"
	firefoxUA = "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0"
	safariUA  = "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1"
	edgeUA    = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.2903.70"
	gptbotUA  = "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2; +https://openai.com/gptbot)"
)

func req(method, target, ua string) *http.Request {
	r := httptest.NewRequest(method, target, nil)
	r.RequestURI = r.URL.RequestURI() // as a server sets it
	if ua != "" {
		r.Header.Set("User-Agent", ua)
	}
	return r
}

func matchOf(h *Handler, r *http.Request) string {
	m := h.Match(r)
	if m == nil {
		return ""
	}
	return m.Category
}

func TestDefaultRules(t *testing.T) {
	h, _ := load(t, `{"route_id":"t"}`)
	cases := []struct {
		ua, path, want string
	}{
		// browsers, search engines, generic clients: through
		{chromeUA, "/", ""},
		{firefoxUA, "/app/index.html?x=1", ""},
		{safariUA, "/", ""},
		{edgeUA, "/", ""},
		{"Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", "/", ""},
		{"Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)", "/", ""},
		{"Mozilla/5.0 (compatible; Applebot/0.1; +http://www.apple.com/go/applebot)", "/", ""},
		{"curl/8.5.0", "/", ""},
		{"Wget/1.21.4", "/", ""},
		{"python-requests/2.32.3", "/", ""},
		{"Go-http-client/1.1", "/", ""},
		{"", "/", ""}, // empty user agent: allowed unless block_empty_user_agent
		// the shipped list
		{"sqlmap/1.8#stable (https://sqlmap.org)", "/", CatScanner},
		{"Mozilla/5.00 (Nikto/2.5.0) (Evasions:None) (Test:000001)", "/", CatScanner},
		{"Mozilla/5.0 (compatible; Nmap Scripting Engine; https://nmap.org/book/nse.html)", "/", CatScanner},
		{"Fuzz Faster U Fool v2.1.0", "/", CatScanner},
		{"Mozilla/5.0 zgrab/0.x", "/", CatScanner},
		{"Nuclei - Open-source project (github.com/projectdiscovery/nuclei)", "/", CatScanner},
		{"WPScan v3.8.25 (https://wpscan.com/wordpress-security-scanner)", "/", CatScanner},
		{"${jndi:ldap://x.example/a}", "/", CatScanner},
		{gptbotUA, "/", CatAICrawler},
		{"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; ChatGPT-User/1.0; +https://openai.com/bot", "/", CatAICrawler},
		{"CCBot/2.0 (https://commoncrawl.org/faq/)", "/", CatAICrawler},
		{"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)", "/", CatAICrawler},
		{"anthropic-ai", "/", CatAICrawler},
		{"Mozilla/5.0 (Linux; Android 5.0) AppleWebKit/537.36 (KHTML, like Gecko) Mobile Safari/537.36 (compatible; Bytespider; spider-feedback@bytedance.com)", "/", CatAICrawler},
		{"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; PerplexityBot/1.0; +https://perplexity.ai/perplexitybot)", "/", CatAICrawler},
		{"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/8.0.2 Safari/600.2.5 (Amazonbot/0.1; +https://developer.amazon.com/support/amazonbot)", "/", CatAICrawler},
		{"meta-externalagent/1.1 (+https://developers.facebook.com/docs/sharing/webmasters/crawler)", "/", CatAICrawler},
		{"Mozilla/5.0 (compatible; AhrefsBot/7.0; +http://ahrefs.com/robot/)", "/", CatScraper},
		{"Mozilla/5.0 (compatible; SemrushBot/7~bl; +http://www.semrush.com/bot.html)", "/", CatScraper},
		{"Scrapy/2.11.2 (+https://scrapy.org)", "/", CatScraper},
		// exploit paths, any user agent
		{chromeUA, "/.env", CatExploitPath},
		{chromeUA, "/api/.env.production", CatExploitPath},
		{chromeUA, "/.git/config", CatExploitPath},
		{chromeUA, "/.git", CatExploitPath},
		{chromeUA, "/.GIT/HEAD", CatExploitPath},
		{chromeUA, "/phpMyAdmin/index.php", CatExploitPath},
		{chromeUA, "/cgi-bin/luci", CatExploitPath},
		{chromeUA, "/vendor/phpunit/phpunit/src/Util/PHP/eval-stdin.php", CatExploitPath},
		{chromeUA, "/.aws/credentials", CatExploitPath},
		{chromeUA, "/actuator/env", CatExploitPath},
		{chromeUA, "/wp-config.php.bak", CatExploitPath},
		{chromeUA, "/static/../../etc/passwd", CatTraversal},
		{chromeUA, "/a/..", CatTraversal},
		{chromeUA, "/download?file=../../etc/passwd", CatQuery},
		{chromeUA, "/download?file=..%2F..%2Fetc%2Fpasswd", CatQuery},
		{chromeUA, "/search?q=%24%7Bjndi%3Aldap%3A%2F%2Fx%7D", CatQuery},
		{chromeUA, "/.gitignore.html", ""}, // not /.git/ nor /.git at the end
		{chromeUA, "/github/.github-pages", ""},
		{chromeUA, "/actuator/health", ""},
		{chromeUA, "/my-environment/x", ""},
		{chromeUA, "/a..b/file..txt", ""},
		// WordPress paths are off by default
		{chromeUA, "/wp-login.php", ""},
		{chromeUA, "/xmlrpc.php", ""},
	}
	for _, c := range cases {
		r := req("GET", "http://app.example.com"+c.path, c.ua)
		if got := matchOf(h, r); got != c.want {
			t.Errorf("UA %q path %q: matched %q, want %q", c.ua, c.path, got, c.want)
		}
	}
}

// The path is matched decoded: percent-encoded probes do not slip through.
func TestEncodedPaths(t *testing.T) {
	h, _ := load(t, `{}`)
	for _, raw := range []string{"/%2Eenv", "/%2egit/config", "/static/%2e%2e/%2e%2e/etc/passwd", "/x/%252e%252e/y"} {
		r := req("GET", "http://app.example.com"+raw, chromeUA)
		if matchOf(h, r) == "" {
			t.Errorf("%s (decoded %q) not matched", raw, r.URL.Path)
		}
	}
}

func TestOptions(t *testing.T) {
	cases := []struct {
		cfg, ua, path, want string
	}{
		// custom user agents with anchors; allow-list wins over them and the shipped list
		{`{"custom_user_agents":["^curl/","EvilBot"]}`, "curl/8.5.0", "/", CatCustomUserAgent},
		{`{"custom_user_agents":["^curl/","EvilBot"]}`, "not-curl/8", "/", ""},
		{`{"custom_user_agents":["^curl/","EvilBot"]}`, "my evilbot 1.0", "/", CatCustomUserAgent},
		{`{"allow_user_agents":["GPTBot"]}`, gptbotUA, "/", ""},
		{`{"allow_user_agents":["GPTBot"]}`, "CCBot/2.0", "/", CatAICrawler},
		{`{"custom_user_agents":["evil"],"allow_user_agents":["evil-but-ok"]}`, "evil-but-ok/1", "/", ""},
		// the allow-list does not exempt from path rules (a user agent is client-chosen)
		{`{"allow_user_agents":["GPTBot"]}`, gptbotUA, "/.env", CatExploitPath},
		// categories
		{`{"categories":["scanner"]}`, gptbotUA, "/", ""},
		{`{"categories":["scanner"]}`, "sqlmap/1.8", "/", CatScanner},
		{`{"categories":[]}`, "sqlmap/1.8", "/", ""},
		{`{"categories":[],"custom_user_agents":["sqlmap"]}`, "sqlmap/1.8", "/", CatCustomUserAgent},
		// empty user agent
		{`{"block_empty_user_agent":true}`, "", "/", CatEmptyUserAgent},
		{`{"block_empty_user_agent":true}`, "   ", "/", CatEmptyUserAgent},
		{`{"block_empty_user_agent":true}`, chromeUA, "/", ""},
		// exploit paths off; custom paths still apply
		{`{"block_exploit_paths":false}`, chromeUA, "/.env", ""},
		{`{"block_exploit_paths":false}`, chromeUA, "/x?f=../../etc/passwd", ""},
		{`{"block_exploit_paths":false,"custom_paths":["^/internal/","/debug$"]}`, chromeUA, "/internal/metrics", CatCustomPath},
		{`{"block_exploit_paths":false,"custom_paths":["^/internal/","/debug$"]}`, chromeUA, "/public/internal/x", ""},
		{`{"block_exploit_paths":false,"custom_paths":["^/internal/","/debug$"]}`, chromeUA, "/app/DEBUG", CatCustomPath},
		{`{"block_exploit_paths":false,"custom_paths":["^/internal/","/debug$"]}`, chromeUA, "/app/debug/x", ""},
		// WordPress paths on
		{`{"block_wordpress_paths":true}`, chromeUA, "/wp-login.php", CatWordPressPath},
		{`{"block_wordpress_paths":true}`, chromeUA, "/blog/wp-admin/", CatWordPressPath},
		// allow_paths exempt path and query rules, case-insensitively, by prefix
		{`{"allow_paths":["/.well-known/"],"custom_paths":["/.well-known/secret"]}`, chromeUA, "/.Well-Known/secret", ""},
		{`{"allow_paths":["/files/"]}`, chromeUA, "/files/x?f=../y", ""},
		{`{"allow_paths":["/files/"]}`, chromeUA, "/other?f=../y", CatQuery},
		{`{"allow_paths":["/files/"]}`, "sqlmap/1.8", "/files/x", CatScanner},
	}
	for _, c := range cases {
		h, _ := load(t, c.cfg)
		r := req("GET", "http://app.example.com"+c.path, c.ua)
		if c.ua == "   " {
			r.Header.Set("User-Agent", "   ")
		}
		if got := matchOf(h, r); got != c.want {
			t.Errorf("%s UA %q path %q: matched %q, want %q", c.cfg, c.ua, c.path, got, c.want)
		}
	}
}

type nextRecorder struct{ calls atomic.Int32 }

func (n *nextRecorder) ServeHTTP(w http.ResponseWriter, _ *http.Request) error {
	n.calls.Add(1)
	w.WriteHeader(200)
	_, _ = io.WriteString(w, "app")
	return nil
}

func serve(h *Handler, r *http.Request, next caddyhttp.Handler) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	r = caddyhttp.PrepareRequest(r, caddy.NewReplacer(), rec, nil)
	if err := h.ServeHTTP(rec, r, next); err != nil {
		panic(err)
	}
	return rec
}

func TestModeBlock(t *testing.T) {
	h, _ := load(t, `{"route_id":"block-test"}`)
	next := &nextRecorder{}
	rec := serve(h, req("GET", "http://app.example.com/", "sqlmap/1.8"), next)
	if rec.Code != 403 || rec.Body.String() != forbiddenBody || rec.Header().Get("Content-Type") != "text/plain; charset=utf-8" {
		t.Fatalf("got %d %q", rec.Code, rec.Body.String())
	}
	if next.calls.Load() != 0 {
		t.Fatal("next called for a blocked request")
	}
	rec = serve(h, req("GET", "http://app.example.com/", chromeUA), next)
	if rec.Code != 200 || rec.Body.String() != "app" || next.calls.Load() != 1 {
		t.Fatalf("browser: %d %q", rec.Code, rec.Body.String())
	}
	if n := h.stats.Count(CatScanner, actBlocked); n != 1 {
		t.Fatalf("blocked count %d", n)
	}
}

func TestModeLog(t *testing.T) {
	h, _ := load(t, `{"route_id":"log-test","mode":"log"}`)
	core, logs := observer.New(zap.InfoLevel)
	h.logger = zap.New(core)
	next := &nextRecorder{}
	rec := serve(h, req("GET", "http://app.example.com/.env", gptbotUA), next)
	if rec.Code != 200 || next.calls.Load() != 1 {
		t.Fatalf("log mode did not let the request through: %d", rec.Code)
	}
	entries := logs.FilterMessage("bot blocker match").All()
	if len(entries) != 1 {
		t.Fatalf("%d log entries", len(entries))
	}
	f := entries[0].ContextMap()
	if f["rule"] != "/.env" || f["category"] != CatExploitPath || f["route_id"] != "log-test" || f["uri"] != "/.env" {
		t.Fatalf("log fields %v", f)
	}
	// a clean request logs nothing
	serve(h, req("GET", "http://app.example.com/", chromeUA), next)
	if logs.Len() != 1 {
		t.Fatalf("%d entries after a clean request", logs.Len())
	}
	if h.stats.Count(CatExploitPath, actLogged) != 1 {
		t.Fatal("not counted")
	}
}

func TestModeTarpit(t *testing.T) {
	h, _ := load(t, `{"route_id":"tarpit-test","mode":"tarpit","tarpit_delay":"1s","max_tarpit":2}`)
	next := &nextRecorder{}

	// held for the delay, then 403
	start := time.Now()
	rec := serve(h, req("GET", "http://app.example.com/", "nikto"), next)
	if el := time.Since(start); rec.Code != 403 || el < time.Second || el > 3*time.Second {
		t.Fatalf("tarpit: %d after %v", rec.Code, el)
	}

	// a client that goes away is released at once
	ctx, cancel := context.WithCancel(context.Background())
	r := req("GET", "http://app.example.com/", "nikto").WithContext(ctx)
	done := make(chan *httptest.ResponseRecorder)
	go func() { done <- serve(h, r, next) }()
	time.Sleep(50 * time.Millisecond)
	start = time.Now()
	cancel()
	select {
	case rec := <-done:
		if rec.Code != 499 || time.Since(start) > 500*time.Millisecond {
			t.Fatalf("canceled tarpit: %d after %v", rec.Code, time.Since(start))
		}
	case <-time.After(2 * time.Second):
		t.Fatal("a canceled request stayed in the tarpit")
	}

	// beyond max_tarpit held requests, matches get the 403 at once
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() { defer wg.Done(); serve(h, req("GET", "http://app.example.com/", "nikto"), next) }()
	}
	time.Sleep(50 * time.Millisecond)
	start = time.Now()
	rec = serve(h, req("GET", "http://app.example.com/", "nikto"), next)
	if rec.Code != 403 || time.Since(start) > 500*time.Millisecond {
		t.Fatalf("overflow: %d after %v", rec.Code, time.Since(start))
	}
	wg.Wait()
	if next.calls.Load() != 0 {
		t.Fatal("next called")
	}
	if got := h.stats.Count(CatScanner, actTarpitted); got != 4 {
		t.Fatalf("tarpitted %d, want 4", got)
	}
	if got := h.stats.Count(CatScanner, actBlocked); got != 1 {
		t.Fatalf("blocked (overflow) %d, want 1", got)
	}
	// browsers are never delayed
	start = time.Now()
	if rec := serve(h, req("GET", "http://app.example.com/", chromeUA), next); rec.Code != 200 || time.Since(start) > 500*time.Millisecond {
		t.Fatal("browser delayed")
	}
}

// Handlers with the same rules share one compiled matcher; it is released
// when the last one is cleaned up. Counters survive a reload and are
// exported to the config's metrics registry.
func TestSharingCountersMetrics(t *testing.T) {
	a, _ := load(t, `{"route_id":"share-1"}`)
	b, ctx := load(t, `{"route_id":"share-1"}`)
	c, _ := load(t, `{"route_id":"share-2","categories":["scanner"]}`)
	if a.ua != b.ua || a.path != b.path {
		t.Fatal("same rules, different automata")
	}
	if a.ua == c.ua {
		t.Fatal("different rules, same automaton")
	}
	key := a.matcherKeys[0]
	if n, _ := matchers.References(key); n < 2 {
		t.Fatalf("references %d", n)
	}
	serve(a, req("GET", "http://x/", "sqlmap"), &nextRecorder{})
	_ = a.Cleanup() // the "old config" goes away
	serve(b, req("GET", "http://x/.env", chromeUA), &nextRecorder{})
	serve(b, req("GET", "http://x/", "sqlmap"), &nextRecorder{})

	families, err := ctx.GetMetricsRegistry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range families {
		if f.GetName() != "gatehouse_botblock_requests_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			var l []string
			for _, p := range m.GetLabel() {
				l = append(l, p.GetName()+"="+p.GetValue())
			}
			got[strings.Join(l, ",")] = m.GetCounter().GetValue()
		}
	}
	want := map[string]float64{
		"action=blocked,category=scanner,route_id=share-1":      2,
		"action=blocked,category=exploit_path,route_id=share-1": 1,
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("metrics %v, want %v", got, want)
	}
}

func TestValidation(t *testing.T) {
	for cfg, want := range map[string]string{
		`{"mode":"challenge"}`:                                  "mode",
		`{"mode":"tarpit","tarpit_delay":"5m"}`:                 "tarpit_delay",
		`{"max_tarpit":-1}`:                                     "max_tarpit",
		`{"categories":["search_engine"]}`:                      "unknown category",
		`{"custom_user_agents":[""]}`:                           "empty pattern",
		`{"custom_user_agents":["^"]}`:                          "empty pattern",
		`{"custom_user_agents":["bot\u00e9"]}`:                  "printable ASCII",
		`{"allow_user_agents":["a\tb"]}`:                        "printable ASCII",
		`{"custom_paths":["$"]}`:                                "empty pattern",
		`{"allow_paths":["wp-admin"]}`:                          "must start with /",
		`{"custom_paths":["` + strings.Repeat("a", 300) + `"]}`: "longer than",
		`{"block_exploit_paths":"yes"}`:                         "cannot unmarshal",
		`{"blocklist":["x"]}`:                                   "unknown field",
	} {
		ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
		_, err := ctx.LoadModuleByID("http.handlers.gatehouse_botblock", json.RawMessage(cfg))
		cancel()
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want it to mention %q", cfg, err, want)
		}
	}
	h, _ := load(t, `{}`)
	if h.Mode != ModeBlock || time.Duration(h.TarpitDelay) != DefaultTarpitDelay || h.MaxTarpit != DefaultMaxTarpit || !*h.BlockExploitPaths || len(h.Categories) != 3 {
		t.Fatalf("defaults: %+v", h)
	}
}

// Concurrent requests through one handler in every mode (run with -race).
func TestConcurrent(t *testing.T) {
	for _, mode := range []string{"block", "log", "tarpit"} {
		h, _ := load(t, `{"route_id":"conc-`+mode+`","mode":"`+mode+`","tarpit_delay":"1ms"}`)
		h.logger = zap.NewNop()
		next := &nextRecorder{}
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 200 {
					ua := chromeUA
					if (g+i)%2 == 0 {
						ua = "sqlmap"
					}
					serve(h, req("GET", "http://x/", ua), next)
				}
			}()
		}
		wg.Wait()
		total := h.stats.Count(CatScanner, actBlocked) + h.stats.Count(CatScanner, actLogged) + h.stats.Count(CatScanner, actTarpitted)
		if total != 800 {
			t.Fatalf("%s: %d matches counted, want 800", mode, total)
		}
	}
}

// The handler inside a real Caddy server in front of reverse_proxy.
func TestInCaddyChain(t *testing.T) {
	var hits atomic.Int32
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		_, _ = io.WriteString(w, "backend")
	}))
	defer backend.Close()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cfg := fmt.Sprintf(`{
	"admin": {"disabled": true, "config": {"persist": false}},
	"logging": {"logs": {"default": {"level": "WARN"}}},
	"storage": {"module": "file_system", "root": %q},
	"apps": {"http": {"servers": {"t": {
		"listen": ["127.0.0.1:%d"], "automatic_https": {"disable": true},
		"routes": [{"handle": [
			{"handler": "gatehouse_botblock", "route_id": "chain", "mode": "block"},
			{"handler": "reverse_proxy", "upstreams": [{"dial": %q}]}
		]}]}}},
		"pki": {"certificate_authorities": {"local": {"install_trust": false}}}}}`,
		t.TempDir(), port, backend.Listener.Addr().String())
	if err := caddy.Load([]byte(cfg), true); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = caddy.Stop() }()
	get := func(path, ua string) (int, string) {
		r, _ := http.NewRequest("GET", fmt.Sprintf("http://127.0.0.1:%d%s", port, path), nil)
		r.Header.Set("User-Agent", ua)
		res, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	if code, body := get("/", chromeUA); code != 200 || body != "backend" {
		t.Fatalf("browser: %d %q", code, body)
	}
	if code, body := get("/", gptbotUA); code != 403 || body != forbiddenBody {
		t.Fatalf("GPTBot: %d %q", code, body)
	}
	if code, _ := get("/.git/config", chromeUA); code != 403 {
		t.Fatalf("exploit path: %d", code)
	}
	if hits.Load() != 1 {
		t.Fatalf("backend hits %d, want 1", hits.Load())
	}
}

var sink *rule

// BenchmarkMatch: the per-request matching cost (path, query, user agent).
func BenchmarkMatch(b *testing.B) {
	h, _ := load(b, `{"route_id":"bench","custom_user_agents":["evilbot"],"allow_user_agents":["friendlybot"]}`)
	for _, c := range []struct{ name, target, ua string }{
		{"browser_chrome", "http://app.example.com/app/dashboard?tab=1", chromeUA},
		{"browser_safari", "http://app.example.com/", safariUA},
		{"bot_gptbot", "http://app.example.com/", gptbotUA},
		{"bot_sqlmap", "http://app.example.com/", "sqlmap/1.8#stable (https://sqlmap.org)"},
		{"exploit_path", "http://app.example.com/.git/config", chromeUA},
	} {
		r := req("GET", c.target, c.ua)
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				sink = h.Match(r)
			}
		})
	}
}

// BenchmarkServeHTTP: the whole handler for a browser request (passes to
// next) and a bot request (403).
func BenchmarkServeHTTP(b *testing.B) {
	h, _ := load(b, `{"route_id":"bench"}`)
	h.logger = zap.NewNop() // production logs matches in block mode at DEBUG, normally off
	next := caddyhttp.HandlerFunc(func(http.ResponseWriter, *http.Request) error { return nil })
	for _, c := range []struct{ name, ua string }{{"browser", chromeUA}, {"bot", gptbotUA}} {
		r := req("GET", "http://app.example.com/app/dashboard?tab=1", c.ua)
		b.Run(c.name, func(b *testing.B) {
			w := &discardWriter{h: http.Header{}}
			b.ReportAllocs()
			for range b.N {
				_ = h.ServeHTTP(w, r, next)
			}
		})
	}
}

type discardWriter struct{ h http.Header }

func (d *discardWriter) Header() http.Header         { return d.h }
func (d *discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (d *discardWriter) WriteHeader(int)             {}
