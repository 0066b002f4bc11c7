// Package hostroute provides the Caddy HTTP handler
// `http.handlers.gatehouse_hostroute`: one handler that dispatches a request to
// the route list configured for its Host, using a hash map instead of a linear
// walk over one Caddy route per domain. Its hosts can be changed one by one at
// run time through the admin API module `admin.api.gatehouse_hostroute`,
// without a config reload; the app `gatehouse_hostroute` is where the handlers
// of a loaded config register so that the admin API and the on-demand TLS
// permission module `tls.permission.gatehouse_hostroute` find them.
//
// See README.md in this directory for the JSON shapes, the admin API and the
// exact semantics.
package hostroute

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"
)

func init() {
	caddy.RegisterModule(new(HostRoute))
}

// HostRoute dispatches each request to the routes of its host.
//
// Lookup order: the exact host, then a one-label wildcard (`*.example.com`
// matches `a.example.com`, not `a.b.example.com` and not `example.com`), then
// Fallback. A request whose host matches nothing and with no Fallback gets a
// 404 with a short plain-text body from this handler.
//
// The handler never calls the next handler of the enclosing route: every
// request is answered by a host's routes, the fallback or the built-in 404.
type HostRoute struct {
	// Hosts maps a host name to the routes that serve it. Keys are
	// case-insensitive, must not carry a port, may end in a dot, and may start
	// with "*." to match exactly one extra leading label. IP addresses are
	// accepted (IPv6 with or without brackets). After provisioning, the live
	// hosts are in the handler's table (changed through the admin API), not
	// in this field.
	Hosts map[string]*Host `json:"hosts,omitempty"`

	// Fallback serves requests whose host is not in Hosts. If unset, such
	// requests get a 404 from this handler. Not changeable at run time.
	Fallback *Host `json:"fallback,omitempty"`

	// Name is the name under which the admin API addresses this host map.
	// Default: the name of the HTTP server the handler is in. Two host maps
	// of one configuration must not have the same name.
	Name string `json:"name,omitempty"`

	// Metrics counts requests and their duration per host key in this
	// handler (gatehouse_hostroute_requests_total and
	// gatehouse_hostroute_request_duration_seconds on Caddy's metrics
	// registry, i.e. the admin API's /metrics). At most one host map per
	// server may count.
	Metrics bool `json:"metrics,omitempty"`

	ctx      caddy.Context // the context the handler was provisioned in; runtime hosts get a child of it
	logger   *zap.Logger
	name     string // Name, or the server's name ("" outside a server: not reachable by the admin API)
	server   string // the HTTP server the handler is in
	tls      bool   // the server has TLS connection policies
	registry *Registry

	table       table
	provisioned bool
	other       *hostStats // metrics of requests for hosts not in the table (label "_other")

	// entries provisioned at run time (in their own context) that are not
	// cleaned up yet: live ones and replaced ones still draining
	rtMu    sync.Mutex
	runtime map[*entry]struct{}
	closed  bool // Cleanup ran (the configuration was unloaded)
}

// Host is the configuration of one host: a Caddy route list, like the body of
// Caddy's own `subroute` handler.
type Host struct {
	// Routes are evaluated in order, exactly like a server's routes. If the
	// chain ends without any handler writing a response (no route matched,
	// or only non-terminating handlers ran), the request gets a 404.
	Routes caddyhttp.RouteList `json:"routes,omitempty"`

	// Errors, if set, are evaluated when Routes return an error, with the
	// `{http.error.*}` placeholders available. If they also end without a
	// response, the original error goes on to the server's error handling.
	Errors *caddyhttp.HTTPErrorConfig `json:"errors,omitempty"`

	raw      []byte            // the JSON this host was decoded from, until its hash is computed
	chain    caddyhttp.Handler // Routes compiled, ending in unhandled
	errChain caddyhttp.Handler // Errors.Routes compiled, ending in returnError
}

// UnmarshalJSON decodes a host strictly (unknown fields are an error, as
// Caddy's own decoding is) and keeps a copy of the JSON for the host's hash.
func (host *Host) UnmarshalJSON(b []byte) error {
	if t := bytes.TrimSpace(b); len(t) == 0 || t[0] != '{' {
		return fmt.Errorf("a host must be a JSON object, not %.20s", t)
	}
	type plain Host // without this method
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var p plain
	if err := dec.Decode(&p); err != nil {
		return err
	}
	*host = Host(p)
	host.raw = bytes.Clone(b)
	return nil
}

// CaddyModule returns the Caddy module information.
func (*HostRoute) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.gatehouse_hostroute",
		New: func() caddy.Module { return new(HostRoute) },
	}
}

// Provision validates the host keys, provisions and compiles every host's
// routes, builds the lookup table and registers the handler with the
// configuration's gatehouse_hostroute app (when it is inside an HTTP server).
func (h *HostRoute) Provision(ctx caddy.Context) error {
	start := time.Now()
	h.ctx = ctx
	h.logger = ctx.Logger()
	if srv, ok := ctx.Value(caddyhttp.ServerCtxKey).(*caddyhttp.Server); ok && srv != nil {
		h.server = srv.Name()
		h.tls = len(srv.TLSConnPolicies) > 0
	}
	h.name = h.Name
	if h.name == "" {
		h.name = h.server
	}

	keys, err := checkKeys(h.Hosts)
	if err != nil {
		return err
	}
	if h.Metrics {
		h.other = new(hostStats)
	}
	h.table.init(len(keys))
	for _, k := range keys {
		if err := k.host.provision(ctx); err != nil {
			return fmt.Errorf("host %q: %v", k.raw, err)
		}
		e := h.newEntry(fullKey(k.norm, k.wild), k.host, nil)
		h.table.put(k.norm, k.wild, e)
	}
	if h.Fallback != nil {
		if err := h.Fallback.provision(ctx); err != nil {
			return fmt.Errorf("fallback: %v", err)
		}
		h.Fallback.raw = nil
	}
	h.Hosts = nil // the table is the truth from here on
	h.provisioned = true

	// register with this configuration's app, so that the admin API and the
	// TLS permission module find the handler (only inside a server: outside
	// one there is no loaded configuration to belong to)
	if h.server != "" {
		app, err := ctx.App(registryID)
		if err != nil {
			return fmt.Errorf("loading the %s app: %v", registryID, err)
		}
		h.registry = app.(*Registry)
		if err := h.registry.register(h); err != nil {
			return err
		}
	} else if h.Metrics {
		// no configuration to share a collector with (e.g. a test context)
		if err := ctx.GetMetricsRegistry().Register(&collector{maps: func() []*HostRoute { return []*HostRoute{h} }}); err != nil {
			return fmt.Errorf("registering metrics: %v", err)
		}
	}

	h.logger.Debug("host routes provisioned",
		zap.String("name", h.name),
		zap.Int("hosts", len(keys)),
		zap.Bool("fallback", h.Fallback != nil),
		zap.Duration("duration", time.Since(start)))
	return nil
}

// Validate reports invalid or duplicate host keys (all of them, up to a cap,
// in sorted order). Provision runs the same checks before it provisions any
// route (so a bad key costs no route provisioning); after a successful
// Provision there is nothing left to check.
func (h *HostRoute) Validate() error {
	if h.provisioned {
		return nil
	}
	_, err := checkKeys(h.Hosts)
	return err
}

// Cleanup runs when the configuration is unloaded: the hosts provisioned at
// run time (live, or replaced and still draining) are cleaned up now, as
// Caddy cleans up the modules of the configuration itself at this moment.
func (h *HostRoute) Cleanup() error {
	h.rtMu.Lock()
	h.closed = true
	live := h.runtime
	h.runtime = nil
	h.rtMu.Unlock()
	for e := range live {
		e.cleanup()
	}
	return nil
}

func (host *Host) provision(ctx caddy.Context) error {
	if err := host.Routes.Provision(ctx); err != nil {
		return fmt.Errorf("setting up routes: %v", err)
	}
	// The chain's tail does not depend on the request, so the chain is
	// compiled once here instead of on every request (as subroute must).
	host.chain = host.Routes.Compile(unhandled)
	if host.Errors != nil {
		if err := host.Errors.Routes.Provision(ctx); err != nil {
			return fmt.Errorf("setting up error routes: %v", err)
		}
		host.errChain = host.Errors.Routes.Compile(returnError)
	}
	return nil
}

// provisionRuntimeHost decodes and provisions one host for a change at run
// time, in a context of its own (a child of the handler's), so that its
// modules can be cleaned up on their own once the host is replaced and
// drained. raw must not be JSON null.
func (h *HostRoute) provisionRuntimeHost(key string, raw []byte) (*entry, error) {
	var host Host
	if err := json.Unmarshal(raw, &host); err != nil {
		return nil, err
	}
	hash, err := hostHash(raw)
	if err != nil {
		return nil, err
	}
	host.raw = nil
	hctx, cancel := newHostContext(h.ctx, h.logger)
	if err := host.provision(hctx); err != nil {
		cancel()
		return nil, err
	}
	e := h.newEntry(key, &host, cancel)
	e.hashOnce.Do(func() { e.hash = hash })
	return e, nil
}

// ServeHTTP runs the routes of the request's host. It never calls next.
func (h *HostRoute) ServeHTTP(w http.ResponseWriter, r *http.Request, _ caddyhttp.Handler) error {
	e := h.acquire(r.Host)
	if e == nil {
		if h.other != nil {
			return observe(h.other, w, r, h.serveUnknown)
		}
		return h.serveUnknown(w, r)
	}
	defer e.release()
	if e.stats != nil {
		return observe(e.stats, w, r, e.host.serve)
	}
	return e.host.serve(w, r)
}

func (host *Host) serve(w http.ResponseWriter, r *http.Request) error {
	err := host.chain.ServeHTTP(w, r)
	if err != nil && host.errChain != nil {
		r = host.Errors.WithError(r, err)
		return host.errChain.ServeHTTP(w, r)
	}
	return err
}

func (h *HostRoute) serveUnknown(w http.ResponseWriter, r *http.Request) error {
	if h.Fallback != nil {
		return h.Fallback.serve(w, r)
	}
	return unknownHost.ServeHTTP(w, r)
}

// lookup finds the entry serving a Host header value (for tests and
// benchmarks; requests go through acquire).
func (h *HostRoute) lookup(hostport string) *entry {
	h.table.mu.RLock()
	defer h.table.mu.RUnlock()
	return h.table.lookup(hostport)
}

// unknownHost answers a request whose host is not configured and for which no
// fallback exists.
var unknownHost caddyhttp.Handler = caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
	return endOfChain(w, r, "404 not found: no site is configured for this host name\n")
})

// unhandled ends every host's (and the fallback's) compiled route chain: it
// runs only if no handler in the chain wrote a response.
var unhandled caddyhttp.Handler = caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
	return endOfChain(w, r, "404 not found\n")
})

// endOfChain writes a plain-text 404. Inside a server's error routes (the
// request carries an error) it writes the error's status instead, with no
// body, like Caddy's own end of an error chain, so that an error page that
// does not exist for a host does not turn a 502 into a 404.
func endOfChain(w http.ResponseWriter, r *http.Request, body string) error {
	if herr, inErrorRoute := r.Context().Value(caddyhttp.ErrorCtxKey).(error); inErrorRoute {
		var he caddyhttp.HandlerError
		if errors.As(herr, &he) && he.StatusCode != 0 {
			w.WriteHeader(he.StatusCode)
		} else {
			w.WriteHeader(http.StatusInternalServerError)
		}
		return nil
	}
	hdr := w.Header()
	hdr.Set("Content-Type", "text/plain; charset=utf-8")
	hdr.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusNotFound)
	_, err := io.WriteString(w, body)
	return err
}

// returnError ends a host's error-route chain: when no error route wrote a
// response, the original error goes back to the server's error handling.
var returnError caddyhttp.Handler = caddyhttp.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) error {
	if err, ok := r.Context().Value(caddyhttp.ErrorCtxKey).(error); ok {
		return err
	}
	return nil
})

// Interface guards
var (
	_ caddy.Provisioner           = (*HostRoute)(nil)
	_ caddy.Validator             = (*HostRoute)(nil)
	_ caddy.CleanerUpper          = (*HostRoute)(nil)
	_ caddyhttp.MiddlewareHandler = (*HostRoute)(nil)
	_ json.Unmarshaler            = (*Host)(nil)
)
