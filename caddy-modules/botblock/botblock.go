package botblock

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

func init() {
	caddy.RegisterModule(Handler{})
}

// Modes.
const (
	ModeBlock  = "block"
	ModeLog    = "log"
	ModeTarpit = "tarpit"
)

// Defaults and limits.
const (
	DefaultTarpitDelay = 10 * time.Second
	MaxTarpitDelay     = 60 * time.Second
	DefaultMaxTarpit   = 256
	MaxMaxTarpit       = 65536
	MaxCustomPatterns  = 1000
	MaxPatternLen      = 256
)

// Shared state, reference counted by the loaded configs that use it:
//   - matchers: compiled automata keyed by a hash of their rules, so routes
//     with the same lists (the common case: the shipped lists) share one;
//   - routes: per-route counters, kept across config reloads.
var (
	matchers = caddy.NewUsagePool()
	routes   = caddy.NewUsagePool()
)

// Handler blocks, logs or tarpits requests from known scanners, scrapers
// and AI crawlers and requests for exploit paths. See README.md.
type Handler struct {
	// RouteID labels the counters (kept across reloads per id) and logs.
	RouteID string `json:"route_id,omitempty"`

	// Mode: "block" (default) answers 403; "log" lets the request through
	// and logs the match at INFO; "tarpit" waits tarpit_delay, then 403.
	Mode string `json:"mode,omitempty"`

	// TarpitDelay: how long a tarpitted request is held. Default 10s, at
	// most 60s.
	TarpitDelay caddy.Duration `json:"tarpit_delay,omitempty"`

	// MaxTarpit bounds the requests held at once by this handler; beyond
	// it, matches get the 403 at once. Default 256.
	MaxTarpit int `json:"max_tarpit,omitempty"`

	// Categories of the shipped user-agent list that apply: "scanner",
	// "ai_crawler", "scraper". Absent: all three. [] : none.
	Categories []string `json:"categories,omitempty"`

	// CustomUserAgents are additional user-agent patterns:
	// case-insensitive substrings, optional leading ^ / trailing $ anchors.
	CustomUserAgents []string `json:"custom_user_agents,omitempty"`

	// AllowUserAgents: a user agent containing one of these patterns (same
	// syntax) is never matched by user-agent rules (the allow-list wins
	// over the shipped and custom lists). Path rules still apply: a user
	// agent is chosen by the client.
	AllowUserAgents []string `json:"allow_user_agents,omitempty"`

	// BlockEmptyUserAgent matches requests without a User-Agent (or an
	// empty one). Default false.
	BlockEmptyUserAgent bool `json:"block_empty_user_agent,omitempty"`

	// BlockExploitPaths enables the shipped exploit-path, traversal and
	// query rules. Default true.
	BlockExploitPaths *bool `json:"block_exploit_paths,omitempty"`

	// BlockWordPressPaths adds the shipped WordPress paths (/wp-login.php,
	// /wp-admin, /xmlrpc.php...). Default false: they are real pages on a
	// WordPress site.
	BlockWordPressPaths bool `json:"block_wordpress_paths,omitempty"`

	// CustomPaths are additional path patterns (same syntax as user-agent
	// patterns), matched against the decoded path.
	CustomPaths []string `json:"custom_paths,omitempty"`

	// AllowPaths are path prefixes (case-insensitive) that path and query
	// rules never match, e.g. "/.well-known/".
	AllowPaths []string `json:"allow_paths,omitempty"`

	ua, allowUA, path, query *automaton
	matcherKeys              []string
	allowPaths               []string
	stats                    *routeStats
	tarpit                   chan struct{}
	delay                    time.Duration
	emptyUA                  rule
	released                 bool
	logger                   *zap.Logger
}

// CaddyModule returns the Caddy module information.
func (Handler) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.gatehouse_botblock",
		New: func() caddy.Module { return new(Handler) },
	}
}

// Provision validates the config and compiles (or shares) the matchers.
func (h *Handler) Provision(ctx caddy.Context) error {
	h.logger = ctx.Logger()
	if h.Mode == "" {
		h.Mode = ModeBlock
	}
	if h.TarpitDelay == 0 {
		h.TarpitDelay = caddy.Duration(DefaultTarpitDelay)
	}
	if h.MaxTarpit == 0 {
		h.MaxTarpit = DefaultMaxTarpit
	}
	if h.BlockExploitPaths == nil {
		t := true
		h.BlockExploitPaths = &t
	}
	if h.Categories == nil {
		h.Categories = userAgentCategories[:]
	}
	if err := h.check(); err != nil {
		return err
	}
	h.delay = time.Duration(h.TarpitDelay)
	h.emptyUA = rule{Category: CatEmptyUserAgent}
	if h.Mode == ModeTarpit {
		h.tarpit = make(chan struct{}, h.MaxTarpit)
	}
	for _, p := range h.AllowPaths {
		h.allowPaths = append(h.allowPaths, strings.ToLower(p))
	}

	// user-agent rules
	uaRules, err := builtin(userAgentsList, h.Categories...)
	if err != nil {
		return err
	}
	for _, p := range h.CustomUserAgents {
		uaRules = append(uaRules, rule{Pattern: p, Category: CatCustomUserAgent})
	}
	var allowRules []rule
	for _, p := range h.AllowUserAgents {
		allowRules = append(allowRules, rule{Pattern: p, Category: "allow"})
	}
	// path and query rules
	var pathRules, queryRules []rule
	if *h.BlockExploitPaths {
		if pathRules, err = builtin(pathsList, CatExploitPath, CatTraversal); err != nil {
			return err
		}
		if queryRules, err = builtin(pathsList, CatQuery); err != nil {
			return err
		}
	}
	if h.BlockWordPressPaths {
		wp, err := builtin(pathsList, CatWordPressPath)
		if err != nil {
			return err
		}
		pathRules = append(pathRules, wp...)
	}
	for _, p := range h.CustomPaths {
		pathRules = append(pathRules, rule{Pattern: p, Category: CatCustomPath})
	}

	for _, m := range []struct {
		dst   **automaton
		rules []rule
	}{{&h.ua, uaRules}, {&h.allowUA, allowRules}, {&h.path, pathRules}, {&h.query, queryRules}} {
		if len(m.rules) == 0 {
			continue
		}
		if *m.dst, err = h.sharedMatcher(m.rules); err != nil {
			return err
		}
	}

	val, _, err := routes.LoadOrNew(h.RouteID, func() (caddy.Destructor, error) { return &routeStats{}, nil })
	if err != nil {
		return err
	}
	h.stats = val.(*routeStats)
	if reg := ctx.GetMetricsRegistry(); reg != nil {
		if err := reg.Register(newCollector(h.RouteID, h.stats)); err != nil {
			h.logger.Debug("bot blocker counters already registered", zap.String("route_id", h.RouteID), zap.Error(err))
		}
	}
	return nil
}

func (h *Handler) check() error {
	var errs []error
	switch h.Mode {
	case ModeBlock, ModeLog, ModeTarpit:
	default:
		errs = append(errs, fmt.Errorf("mode %q: must be block, log or tarpit", h.Mode))
	}
	if d := time.Duration(h.TarpitDelay); d < 0 || d > MaxTarpitDelay {
		errs = append(errs, fmt.Errorf("tarpit_delay %v: must be between 1ns and %v", d, MaxTarpitDelay))
	}
	if h.MaxTarpit < 1 || h.MaxTarpit > MaxMaxTarpit {
		errs = append(errs, fmt.Errorf("max_tarpit %d: must be between 1 and %d", h.MaxTarpit, MaxMaxTarpit))
	}
	for _, c := range h.Categories {
		ok := false
		for _, x := range userAgentCategories {
			ok = ok || c == x
		}
		if !ok {
			errs = append(errs, fmt.Errorf("categories: unknown category %q (known: scanner, ai_crawler, scraper)", c))
		}
	}
	for _, l := range []struct {
		name string
		list []string
	}{{"custom_user_agents", h.CustomUserAgents}, {"allow_user_agents", h.AllowUserAgents}, {"custom_paths", h.CustomPaths}, {"allow_paths", h.AllowPaths}} {
		if len(l.list) > MaxCustomPatterns {
			errs = append(errs, fmt.Errorf("%s: at most %d entries", l.name, MaxCustomPatterns))
			continue
		}
		for i, p := range l.list {
			if len(p) > MaxPatternLen {
				errs = append(errs, fmt.Errorf("%s[%d]: longer than %d characters", l.name, i, MaxPatternLen))
				continue
			}
			if l.name == "allow_paths" {
				if !strings.HasPrefix(p, "/") {
					errs = append(errs, fmt.Errorf("allow_paths[%d] %q: must start with /", i, p))
				}
				continue
			}
			if err := checkPattern(p); err != nil {
				errs = append(errs, fmt.Errorf("%s[%d] %q: %v", l.name, i, p, err))
			}
		}
	}
	return errors.Join(errs...)
}

// sharedMatcher compiles rules, or reuses the automaton another handler
// compiled from the same rules.
func (h *Handler) sharedMatcher(rules []rule) (*automaton, error) {
	sum := sha256.New()
	for _, r := range rules {
		fmt.Fprintf(sum, "%s\x00%s\x00", r.Category, lowerString(r.Pattern))
	}
	key := hex.EncodeToString(sum.Sum(nil))
	val, _, err := matchers.LoadOrNew(key, func() (caddy.Destructor, error) {
		a, err := compile(rules)
		if err != nil {
			return nil, err
		}
		return &sharedAutomaton{a}, nil
	})
	if err != nil {
		return nil, err
	}
	h.matcherKeys = append(h.matcherKeys, key)
	return val.(*sharedAutomaton).a, nil
}

type sharedAutomaton struct{ a *automaton }

func (*sharedAutomaton) Destruct() error { return nil }

// Cleanup releases the shared matchers and counters.
func (h *Handler) Cleanup() error {
	if h.released {
		return nil
	}
	h.released = true
	var errs []error
	for _, k := range h.matcherKeys {
		if _, err := matchers.Delete(k); err != nil {
			errs = append(errs, err)
		}
	}
	if h.stats != nil {
		if _, err := routes.Delete(h.RouteID); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Match returns the rule a request matches, or nil. Path rules come first
// (allow_paths exempt a path from path and query rules), then user-agent
// rules (allow_user_agents exempt a user agent from those).
func (h *Handler) Match(r *http.Request) *rule {
	if h.path != nil || h.query != nil {
		path := r.URL.Path
		if m := h.path.match(path); m != nil && !h.pathAllowed(path) {
			return m
		}
		if r.URL.RawQuery != "" {
			if m := h.query.match(r.URL.RawQuery); m != nil && !h.pathAllowed(path) {
				return m
			}
		}
	}
	uas := r.Header["User-Agent"]
	empty := true
	for _, ua := range uas {
		if strings.TrimSpace(ua) == "" {
			continue
		}
		empty = false
		if m := h.ua.match(ua); m != nil && h.allowUA.match(ua) == nil {
			return m
		}
	}
	if empty && h.BlockEmptyUserAgent {
		return &h.emptyUA
	}
	return nil
}

func (h *Handler) pathAllowed(path string) bool {
	for _, p := range h.allowPaths {
		if len(path) >= len(p) && strings.EqualFold(path[:len(p)], p) {
			return true
		}
	}
	return false
}

// ServeHTTP answers matched requests according to the mode; everything
// else goes on unchanged.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	m := h.Match(r)
	if m == nil {
		return next.ServeHTTP(w, r)
	}
	switch h.Mode {
	case ModeLog:
		h.stats.add(m.Category, actLogged)
		h.logMatch(zap.InfoLevel, r, m)
		return next.ServeHTTP(w, r)
	case ModeTarpit:
		select {
		case h.tarpit <- struct{}{}:
		default:
			// too many held already: answer at once
			h.stats.add(m.Category, actBlocked)
			h.logMatch(zap.DebugLevel, r, m)
			return forbidden(w)
		}
		h.stats.add(m.Category, actTarpitted)
		h.logMatch(zap.DebugLevel, r, m)
		t := time.NewTimer(h.delay)
		select {
		case <-t.C:
			<-h.tarpit
			return forbidden(w)
		case <-r.Context().Done():
			t.Stop()
			<-h.tarpit
			// the client gave up: nothing to send; mark it like
			// reverse_proxy does for the access log
			w.WriteHeader(499)
			return nil
		}
	default:
		h.stats.add(m.Category, actBlocked)
		h.logMatch(zap.DebugLevel, r, m)
		return forbidden(w)
	}
}

func (h *Handler) logMatch(level zapcore.Level, r *http.Request, m *rule) {
	if c := h.logger.Check(level, "bot blocker match"); c != nil {
		c.Write(
			zap.String("route_id", h.RouteID),
			zap.String("mode", h.Mode),
			zap.String("category", m.Category),
			zap.String("rule", m.Pattern),
			zap.String("remote_addr", r.RemoteAddr),
			zap.String("method", r.Method),
			zap.String("host", r.Host),
			zap.String("uri", truncate(r.RequestURI, 512)),
			zap.String("user_agent", truncate(r.Header.Get("User-Agent"), 256)),
		)
	}
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

const forbiddenBody = "403 forbidden\n"

func forbidden(w http.ResponseWriter) error {
	hdr := w.Header()
	hdr.Set("Content-Type", "text/plain; charset=utf-8")
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusForbidden)
	_, err := io.WriteString(w, forbiddenBody)
	return err
}

// Counters.

const (
	actBlocked = iota
	actLogged
	actTarpitted
	numActions
)

var actionNames = [numActions]string{"blocked", "logged", "tarpitted"}

// routeStats counts matches per category and action for one route id.
type routeStats struct {
	counts [len(allCategories)][numActions]atomic.Uint64
}

func (*routeStats) Destruct() error { return nil }

func (s *routeStats) add(category string, action int) {
	if i := categoryIndex(category); i >= 0 {
		s.counts[i][action].Add(1)
	}
}

// Count returns a counter (for tests).
func (s *routeStats) Count(category string, action int) uint64 {
	i := categoryIndex(category)
	if i < 0 {
		return 0
	}
	return s.counts[i][action].Load()
}

// collector exports gatehouse_botblock_requests_total{route_id, category,
// action} (series appear once they are non-zero).
type collector struct {
	desc  *prometheus.Desc
	stats *routeStats
}

func newCollector(routeID string, s *routeStats) *collector {
	return &collector{
		desc: prometheus.NewDesc("gatehouse_botblock_requests_total",
			"Requests matched by the bot blocker, by rule category and action (blocked, logged, tarpitted).",
			[]string{"category", "action"}, prometheus.Labels{"route_id": routeID}),
		stats: s,
	}
}

func (c *collector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	for i, cat := range allCategories {
		for a := 0; a < numActions; a++ {
			if n := c.stats.counts[i][a].Load(); n > 0 {
				ch <- prometheus.MustNewConstMetric(c.desc, prometheus.CounterValue, float64(n), cat, actionNames[a])
			}
		}
	}
}

// Interface guards
var (
	_ caddy.Provisioner           = (*Handler)(nil)
	_ caddy.CleanerUpper          = (*Handler)(nil)
	_ caddyhttp.MiddlewareHandler = (*Handler)(nil)
)
