package mirror

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/textproto"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"
)

func init() {
	caddy.RegisterModule(Handler{})
}

// Defaults and limits.
const (
	DefaultMaxBodyBytes = 64 << 10
	MaxMaxBodyBytes     = 16 << 20
	DefaultTimeout      = 5 * time.Second
	MaxTimeout          = 60 * time.Second
	DefaultMaxInFlight  = 64
	MaxMaxInFlight      = 4096
	MaxTargets          = 16

	// MirrorHeader marks every copy.
	MirrorHeader = "X-Gatehouse-Mirror"

	// drainLimit: how much of a target's response body is read (and
	// discarded) so that the connection can be reused.
	drainLimit = 64 << 10
)

// Handler sends a copy of each request to every target. See README.md.
type Handler struct {
	// RouteID labels the counters (and keys them across reloads). Optional
	// but recommended; handlers with the same id share counters.
	RouteID string `json:"route_id,omitempty"`

	// Targets receive the copies. 1 to 16 entries.
	Targets []Target `json:"targets"`

	// MaxBodyBytes: requests whose body is larger are not mirrored at all
	// (counted as skipped); a truncated body would be a different request.
	// Default 65536, at most 16 MiB.
	MaxBodyBytes int64 `json:"max_body_bytes,omitempty"`

	// Timeout bounds each copy (connect, send, response headers and the
	// drained part of the response). Default 5s, at most 60s.
	Timeout caddy.Duration `json:"timeout,omitempty"`

	// MaxInFlight bounds the copies in flight for this handler (all its
	// targets together). When it is reached, new copies are dropped and
	// counted. Default 64, at most 4096.
	MaxInFlight int `json:"max_in_flight,omitempty"`

	targets  []*target
	client   *http.Client
	sem      chan struct{}
	stats    *routeStats
	poolKey  string
	released bool
	logger   *zap.Logger
}

// Target is one mirror destination.
type Target struct {
	// URL is the target's origin: http:// or https://, host (name or IP)
	// and optional port, no path, query or user info, e.g.
	// "http://10.8.0.5:8080". The request's own path and query are appended.
	URL string `json:"url"`
}

type target struct {
	base  url.URL
	label string
	stats *targetStats
}

// CaddyModule returns the Caddy module information.
func (Handler) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.gatehouse_mirror",
		New: func() caddy.Module { return new(Handler) },
	}
}

// Provision validates the config, sets up the shared client and the
// counters.
func (h *Handler) Provision(ctx caddy.Context) error {
	h.logger = ctx.Logger()
	if h.MaxBodyBytes == 0 {
		h.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if h.Timeout == 0 {
		h.Timeout = caddy.Duration(DefaultTimeout)
	}
	if h.MaxInFlight == 0 {
		h.MaxInFlight = DefaultMaxInFlight
	}
	targets, err := h.check()
	if err != nil {
		return err
	}

	h.poolKey = h.RouteID
	val, _, err := routes.LoadOrNew(h.poolKey, func() (caddy.Destructor, error) {
		return &routeStats{targets: map[string]*targetStats{}}, nil
	})
	if err != nil {
		return err
	}
	h.stats = val.(*routeStats)
	for _, t := range targets {
		t.stats = h.stats.target(t.label)
	}
	h.targets = targets

	timeout := time.Duration(h.Timeout)
	dialer := &net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}
	h.client = &http.Client{
		Transport: &http.Transport{
			Proxy:                 nil,
			DialContext:           dialer.DialContext,
			MaxIdleConns:          h.MaxInFlight,
			MaxIdleConnsPerHost:   h.MaxInFlight,
			IdleConnTimeout:       60 * time.Second,
			TLSHandshakeTimeout:   timeout,
			ResponseHeaderTimeout: timeout,
			DisableCompression:    true, // pass the client's Accept-Encoding as it was
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	h.sem = make(chan struct{}, h.MaxInFlight)

	if reg := ctx.GetMetricsRegistry(); reg != nil {
		if err := reg.Register(newCollector(h.RouteID, targets)); err != nil {
			// another handler of the same route id in this config already
			// exports the same (shared) counters
			h.logger.Debug("mirror counters already registered", zap.String("route_id", h.RouteID), zap.Error(err))
		}
	}
	return nil
}

func (h *Handler) check() ([]*target, error) {
	var errs []error
	if len(h.Targets) == 0 {
		errs = append(errs, errors.New("targets: at least one target is required"))
	}
	if len(h.Targets) > MaxTargets {
		errs = append(errs, fmt.Errorf("targets: at most %d", MaxTargets))
	}
	if h.MaxBodyBytes < 0 || h.MaxBodyBytes > MaxMaxBodyBytes {
		errs = append(errs, fmt.Errorf("max_body_bytes %d: must be between 1 and %d", h.MaxBodyBytes, MaxMaxBodyBytes))
	}
	if t := time.Duration(h.Timeout); t < 0 || t > MaxTimeout {
		errs = append(errs, fmt.Errorf("timeout %v: must be between 1ns and %v", t, MaxTimeout))
	}
	if h.MaxInFlight < 0 || h.MaxInFlight > MaxMaxInFlight {
		errs = append(errs, fmt.Errorf("max_in_flight %d: must be between 1 and %d", h.MaxInFlight, MaxMaxInFlight))
	}
	var targets []*target
	seen := map[string]bool{}
	for i, t := range h.Targets {
		u, err := parseTarget(t.URL)
		if err != nil {
			errs = append(errs, fmt.Errorf("targets[%d] %q: %v", i, t.URL, err))
			continue
		}
		label := u.String()
		if seen[label] {
			errs = append(errs, fmt.Errorf("targets[%d] %q: duplicate target", i, t.URL))
			continue
		}
		seen[label] = true
		targets = append(targets, &target{base: *u, label: label})
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return targets, nil
}

func parseTarget(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("not an absolute URL with scheme http or https: %v", err)
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, errors.New("scheme must be http or https")
	case u.Host == "" || u.Hostname() == "":
		return nil, errors.New("host is missing")
	case u.User != nil:
		return nil, errors.New("user info is not allowed")
	case u.Path != "" && u.Path != "/", u.RawQuery != "", u.ForceQuery, u.Fragment != "":
		return nil, errors.New("must be an origin only (scheme, host, port): the request's path and query are appended")
	}
	if p := u.Port(); p != "" {
		if _, err := net.LookupPort("tcp", p); err != nil || strings.HasPrefix(p, "0") {
			return nil, fmt.Errorf("invalid port %q", p)
		}
	}
	return &url.URL{Scheme: u.Scheme, Host: strings.ToLower(u.Host)}, nil
}

// Cleanup releases the counters' pool entry and idle connections. Copies in
// flight finish on their own (each is bounded by the timeout).
func (h *Handler) Cleanup() error {
	if h.stats == nil || h.released {
		return nil
	}
	h.released = true
	if h.client != nil {
		h.client.CloseIdleConnections()
	}
	_, err := routes.Delete(h.poolKey)
	return err
}

// ServeHTTP dispatches copies of r and runs the rest of the chain with r
// unchanged (the body is observed as the chain reads it).
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	if r.Method == http.MethodConnect || isUpgrade(r.Header) {
		h.count(func(s *targetStats) { s.skipped.Add(1) })
		return next.ServeHTTP(w, r)
	}
	if r.ContentLength > h.MaxBodyBytes {
		h.count(func(s *targetStats) { s.skipped.Add(1) })
		return next.ServeHTTP(w, r)
	}
	tmpl := h.template(r)

	if r.Body == nil || r.Body == http.NoBody || (r.ContentLength == 0 && len(r.TransferEncoding) == 0) {
		h.dispatch(tmpl, nil)
		return next.ServeHTTP(w, r)
	}

	// The body is copied as the chain reads it; the copies go out once it
	// has been read to the end (after the chain returns), so the primary
	// request is never held back waiting for our buffering.
	tee := &teeBody{ReadCloser: r.Body, max: h.MaxBodyBytes}
	if r.ContentLength > 0 {
		tee.buf.Grow(int(r.ContentLength))
	}
	orig := r.Body
	r.Body = tee
	err := next.ServeHTTP(w, r)
	r.Body = orig

	if body, ok := tee.complete(); ok {
		h.dispatch(tmpl, body)
	} else {
		// larger than max_body_bytes (chunked), or the chain did not read
		// the whole body (e.g. it answered without reading it)
		h.count(func(s *targetStats) { s.skipped.Add(1) })
	}
	return err
}

// reqTemplate is what every copy of one request shares (read-only).
type reqTemplate struct {
	method string
	path   string
	raw    string
	query  string
	host   string
	header http.Header
}

func (h *Handler) template(r *http.Request) *reqTemplate {
	hdr := r.Header.Clone()
	if hdr == nil {
		hdr = http.Header{}
	}
	removeHopByHop(hdr)
	hdr.Del("Expect") // the copy has its whole body: nothing to wait for
	hdr.Set(MirrorHeader, "1")
	if ip, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		hdr.Set("X-Forwarded-For", ip)
	}
	proto := "http"
	if r.TLS != nil {
		proto = "https"
	}
	hdr.Set("X-Forwarded-Proto", proto)
	hdr.Set("X-Forwarded-Host", r.Host)
	if _, ok := hdr["User-Agent"]; !ok {
		hdr["User-Agent"] = []string{""} // keep Go from adding its own
	}
	return &reqTemplate{method: r.Method, path: r.URL.Path, raw: r.URL.RawPath, query: r.URL.RawQuery, host: r.Host, header: hdr}
}

// dispatch starts one copy per target, or counts it dropped when
// max_in_flight copies are already running. It never blocks.
func (h *Handler) dispatch(tmpl *reqTemplate, body []byte) {
	for i, t := range h.targets {
		select {
		case h.sem <- struct{}{}:
			hdr := tmpl.header
			if i < len(h.targets)-1 {
				hdr = hdr.Clone() // each copy owns its header map
			}
			go h.send(t, tmpl, hdr, body)
		default:
			t.stats.dropped.Add(1)
		}
	}
}

func (h *Handler) send(t *target, tmpl *reqTemplate, hdr http.Header, body []byte) {
	defer func() { <-h.sem }()
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(h.Timeout))
	defer cancel()

	u := t.base
	u.Path, u.RawPath, u.RawQuery = tmpl.path, tmpl.raw, tmpl.query
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, tmpl.method, u.String(), rd)
	if err != nil {
		t.stats.failed.Add(1)
		h.logger.Debug("mirror request not built", zap.String("target", t.label), zap.Error(err))
		return
	}
	req.Header = hdr
	req.Host = tmpl.host
	if body == nil {
		req.ContentLength = 0
	}
	resp, err := h.client.Do(req)
	if err != nil {
		t.stats.failed.Add(1)
		h.logger.Debug("mirror failed", zap.String("route_id", h.RouteID), zap.String("target", t.label), zap.Error(err))
		return
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, drainLimit))
	_ = resp.Body.Close()
	t.stats.mirrored.Add(1)
}

func (h *Handler) count(f func(*targetStats)) {
	for _, t := range h.targets {
		f(t.stats)
	}
}

// teeBody copies what the chain reads from the request body, up to max
// bytes. It may be read from another goroutine (reverse_proxy's transport
// writes request bodies from its own), hence the lock.
type teeBody struct {
	io.ReadCloser
	mu   sync.Mutex
	buf  bytes.Buffer
	max  int64
	over bool
	eof  bool
}

func (t *teeBody) Read(p []byte) (int, error) {
	n, err := t.ReadCloser.Read(p)
	t.mu.Lock()
	if n > 0 && !t.over {
		if int64(t.buf.Len()+n) > t.max {
			t.over = true
			t.buf = bytes.Buffer{} // let it go
		} else {
			t.buf.Write(p[:n])
		}
	}
	if err == io.EOF {
		t.eof = true
	}
	t.mu.Unlock()
	return n, err
}

// complete returns the whole body if it was read to the end within max.
// After EOF nothing is appended any more, so the slice is stable.
func (t *teeBody) complete() ([]byte, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.eof || t.over {
		return nil, false
	}
	return t.buf.Bytes(), true
}

// hopByHop are the header fields that apply to one connection only
// (RFC 9110 section 7.6.1), never forwarded.
var hopByHop = [...]string{
	"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate",
	"Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade",
}

func removeHopByHop(h http.Header) {
	for _, v := range h["Connection"] {
		for f := range strings.SplitSeq(v, ",") {
			if f = textproto.TrimString(f); f != "" {
				h.Del(f)
			}
		}
	}
	for _, f := range hopByHop {
		delete(h, f)
	}
}

func isUpgrade(h http.Header) bool {
	if _, ok := h["Upgrade"]; !ok {
		return false
	}
	for _, v := range h["Connection"] {
		for f := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(textproto.TrimString(f), "upgrade") {
				return true
			}
		}
	}
	return false
}

// Interface guards
var (
	_ caddy.Provisioner           = (*Handler)(nil)
	_ caddy.CleanerUpper          = (*Handler)(nil)
	_ caddyhttp.MiddlewareHandler = (*Handler)(nil)
)
