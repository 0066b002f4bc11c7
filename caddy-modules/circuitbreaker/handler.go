package circuitbreaker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"
)

func init() {
	caddy.RegisterModule(Handler{})
}

// Defaults for a config that leaves them out.
const (
	DefaultThreshold = 5
	DefaultTimeout   = 30 // seconds
)

// breakers holds one breaker per route id. Entries are reference counted by
// the loaded configs that use them, so a reload that keeps the route keeps
// its live state; an entry disappears when no loaded config uses its route
// id any more (route removed, breaker disabled).
var breakers = caddy.NewUsagePool()

// poolEntry is what the pool holds for a route.
type poolEntry struct {
	b   *breaker
	rep *reporter
}

// Destruct stops the route's reporter (after one last attempt at sending
// what is queued).
func (e *poolEntry) Destruct() error {
	e.rep.close()
	return nil
}

// Handler is the circuit breaker handler. It wraps the rest of the route's
// chain (put it directly before reverse_proxy). See README.md.
type Handler struct {
	// RouteID identifies the route: the key of the breaker state (shared
	// by every handler with the same id, kept across config reloads) and
	// the route_id of reports. Required.
	RouteID string `json:"route_id"`

	// Threshold is the number of consecutive failures (5xx responses or
	// errors such as an unreachable backend) that opens the breaker.
	// Default 5.
	Threshold int `json:"threshold,omitempty"`

	// Timeout is how many seconds the breaker stays open before it lets one
	// trial request through (half-open). Default 30.
	Timeout int `json:"timeout,omitempty"`

	// FailureCount and OpenedAt (unix ms, 0 = not open) seed the state of
	// a breaker that does not exist yet in this Caddy process (first load
	// after a start). They are ignored while the route's breaker is live,
	// unless ResetAt asks for a reset.
	FailureCount int   `json:"failure_count,omitempty"`
	OpenedAt     int64 `json:"opened_at,omitempty"`

	// ResetAt (unix ms) forces the live state back to FailureCount and
	// OpenedAt when it is greater than any reset_at this breaker has seen.
	// The sidecar's reset endpoint renders failure_count 0, opened_at 0 and
	// reset_at = the time of the reset.
	ResetAt int64 `json:"reset_at,omitempty"`

	// ReportURL receives a POST with a JSON body on every state change
	// (asynchronously; see README.md). Empty: no reports. Placeholders
	// known at load time ({env.*}, {file.*}) are replaced.
	ReportURL string `json:"report_url,omitempty"`

	// ReportSecret is sent as the X-Gatehouse-Secret header of every
	// report. Use {file./path/to/secret} to keep it out of the config.
	ReportSecret string `json:"report_secret,omitempty"`

	// OpenAsError: while open, set the same headers (Retry-After, no-store)
	// and return a 503 HandlerError whose message is ErrOpen's instead of
	// writing the plain-text 503, so the server's or host's error routes
	// answer it (a branded page; `{http.error.message}` tells it apart).
	OpenAsError bool `json:"open_as_error,omitempty"`

	p        params
	entry    *poolEntry
	released bool
	logger   *zap.Logger
	now      func() time.Time
}

// CaddyModule returns the Caddy module information.
func (Handler) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.gatehouse_circuit_breaker",
		New: func() caddy.Module { return new(Handler) },
	}
}

// Provision validates the config and attaches the handler to the route's
// breaker (creating it from the configured state if this process has none).
func (h *Handler) Provision(ctx caddy.Context) error {
	h.logger = ctx.Logger()
	if h.now == nil {
		h.now = time.Now
	}
	if h.Threshold == 0 {
		h.Threshold = DefaultThreshold
	}
	if h.Timeout == 0 {
		h.Timeout = DefaultTimeout
	}
	if err := h.check(); err != nil {
		return err
	}
	h.p = params{threshold: h.Threshold, timeout: time.Duration(h.Timeout) * time.Second}

	repl := caddy.NewReplacer()
	reportURL := repl.ReplaceKnown(h.ReportURL, "")
	if reportURL != "" {
		u, err := url.Parse(reportURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("report_url %q: must be an absolute http or https URL", reportURL)
		}
	}
	t := target{url: reportURL, secret: repl.ReplaceKnown(h.ReportSecret, "")}

	val, loaded, err := breakers.LoadOrNew(h.RouteID, func() (caddy.Destructor, error) {
		e := &poolEntry{rep: newReporter(h.RouteID, h.logger)}
		e.b = &breaker{resetAt: h.ResetAt}
		e.b.seed(h.FailureCount, h.OpenedAt)
		routeID, now := h.RouteID, h.now
		e.b.onChange = func(s snapshot) {
			e.rep.enqueue(report{RouteID: routeID, State: s.State, FailureCount: s.FailureCount, OpenedAt: s.OpenedAt, At: now().UnixMilli()})
		}
		return e, nil
	})
	if err != nil {
		return err
	}
	h.entry = val.(*poolEntry)
	h.entry.rep.configure(t, h.logger)
	if loaded && h.entry.b.applyReset(h.ResetAt, h.FailureCount, h.OpenedAt) {
		h.logger.Info("circuit breaker reset by config", zap.String("route_id", h.RouteID), zap.Int64("reset_at", h.ResetAt))
	}
	s := h.entry.b.Snapshot()
	h.logger.Debug("circuit breaker provisioned",
		zap.String("route_id", h.RouteID), zap.Bool("kept_live_state", loaded),
		zap.String("state", string(s.State)), zap.Int("failure_count", s.FailureCount), zap.Int64("opened_at", s.OpenedAt))
	return nil
}

func (h *Handler) check() error {
	var errs []error
	if h.RouteID == "" {
		errs = append(errs, errors.New("route_id is required"))
	}
	if h.Threshold < 1 || h.Threshold > 1_000_000 {
		errs = append(errs, fmt.Errorf("threshold %d: must be between 1 and 1000000", h.Threshold))
	}
	if h.Timeout < 1 || h.Timeout > 86_400*7 {
		errs = append(errs, fmt.Errorf("timeout %d: must be between 1 and 604800 seconds", h.Timeout))
	}
	if h.FailureCount < 0 {
		errs = append(errs, fmt.Errorf("failure_count %d: must not be negative", h.FailureCount))
	}
	if h.OpenedAt < 0 {
		errs = append(errs, fmt.Errorf("opened_at %d: must be unix milliseconds or 0", h.OpenedAt))
	}
	if h.ResetAt < 0 {
		errs = append(errs, fmt.Errorf("reset_at %d: must be unix milliseconds or 0", h.ResetAt))
	}
	return errors.Join(errs...)
}

// Cleanup releases this config's reference to the route's breaker.
func (h *Handler) Cleanup() error {
	if h.entry == nil || h.released {
		return nil
	}
	h.released = true // h.entry stays set: requests still in flight use it
	_, err := breakers.Delete(h.RouteID)
	return err
}

// ServeHTTP answers 503 while the breaker is open (or a half-open trial is
// in flight); otherwise it runs the rest of the chain and records whether
// the response was a failure.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	b := h.entry.b
	t, ok, retryAfter := b.admit(h.now, h.p)
	if !ok {
		if h.OpenAsError {
			openHeaders(w, retryAfter)
			return caddyhttp.Error(http.StatusServiceUnavailable, ErrOpen)
		}
		return writeOpen(w, retryAfter)
	}
	sw := &statusWriter{ResponseWriterWrapper: caddyhttp.ResponseWriterWrapper{ResponseWriter: w}, h: h, b: b, t: t}
	defer func() {
		if !sw.recorded {
			// only reached without a recorded outcome when next panicked
			sw.record(failure)
		}
	}()
	err := next.ServeHTTP(sw, r)
	if !sw.recorded {
		sw.record(classifyEnd(r, err))
	}
	return err
}

// classifyEnd decides the outcome of a request whose chain wrote no final
// response header.
func classifyEnd(r *http.Request, err error) outcome {
	if err == nil {
		return success // nothing written: Caddy answers an empty 200
	}
	if errors.Is(err, context.Canceled) && r.Context().Err() != nil {
		return neutral
	}
	var he caddyhttp.HandlerError
	if errors.As(err, &he) && he.StatusCode != 0 {
		return classifyStatus(he.StatusCode)
	}
	return failure
}

func classifyStatus(code int) outcome {
	switch {
	case code == 499: // client closed the request (reverse_proxy's marker)
		return neutral
	case code >= 500:
		return failure
	default:
		return success
	}
}

// openBody is the body of the 503 answered while the breaker is open.
const openBody = "503 service unavailable: circuit breaker open, retry later\n"

// ErrOpen is the error returned while the breaker is open (with OpenAsError).
var ErrOpen = errors.New("circuit breaker open")

// openHeaders sets the headers of every answer while open.
func openHeaders(w http.ResponseWriter, retryAfter int) {
	hdr := w.Header()
	hdr.Set("Retry-After", strconv.Itoa(retryAfter))
	hdr.Set("Cache-Control", "no-store")
}

func writeOpen(w http.ResponseWriter, retryAfter int) error {
	openHeaders(w, retryAfter)
	hdr := w.Header()
	hdr.Set("Content-Type", "text/plain; charset=utf-8")
	hdr.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusServiceUnavailable)
	_, err := io.WriteString(w, openBody)
	return err
}

// statusWriter records the outcome as soon as the final response header is
// written, so a long response (streaming, websocket) does not hold a
// half-open trial open.
type statusWriter struct {
	caddyhttp.ResponseWriterWrapper
	h        *Handler
	b        *breaker
	t        ticket
	recorded bool
}

func (sw *statusWriter) record(o outcome) {
	sw.recorded = true
	sw.b.record(sw.t, o, sw.h.now, sw.h.p)
}

func (sw *statusWriter) WriteHeader(code int) {
	if !sw.recorded && (code >= 200 || code == http.StatusSwitchingProtocols) {
		sw.record(classifyStatus(code))
	}
	sw.ResponseWriterWrapper.WriteHeader(code)
}

func (sw *statusWriter) Write(p []byte) (int, error) {
	if !sw.recorded {
		sw.record(success)
	}
	return sw.ResponseWriterWrapper.Write(p)
}

func (sw *statusWriter) ReadFrom(r io.Reader) (int64, error) {
	if !sw.recorded {
		sw.record(success)
	}
	return sw.ResponseWriterWrapper.ReadFrom(r)
}

// Interface guards
var (
	_ caddy.Provisioner           = (*Handler)(nil)
	_ caddy.CleanerUpper          = (*Handler)(nil)
	_ caddyhttp.MiddlewareHandler = (*Handler)(nil)
	_ caddy.Destructor            = (*poolEntry)(nil)
)
