// Package hostroute provides the Caddy HTTP handler
// `http.handlers.gatehouse_hostroute`: one handler that dispatches a request to
// the route list configured for its Host, using a hash map instead of a linear
// walk over one Caddy route per domain.
//
// See README.md in this directory for the JSON shape and the exact semantics.
package hostroute

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"sort"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"
)

func init() {
	caddy.RegisterModule(HostRoute{})
}

// maxHostLen is the longest host name (without port and trailing dot) that can
// be configured or matched (RFC 1035: 253 characters in text form).
const maxHostLen = 253

// maxReportedKeyErrors caps how many invalid host keys one error names.
const maxReportedKeyErrors = 10

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
	// accepted (IPv6 with or without brackets).
	Hosts map[string]*Host `json:"hosts,omitempty"`

	// Fallback serves requests whose host is not in Hosts. If unset, such
	// requests get a 404 from this handler.
	Fallback *Host `json:"fallback,omitempty"`

	exact  map[string]*Host // normalized host -> host
	wild   map[string]*Host // "example.com" for the key "*.example.com"
	logger *zap.Logger
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

	chain    caddyhttp.Handler // Routes compiled, ending in unhandled
	errChain caddyhttp.Handler // Errors.Routes compiled, ending in returnError
}

// CaddyModule returns the Caddy module information.
func (HostRoute) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.gatehouse_hostroute",
		New: func() caddy.Module { return new(HostRoute) },
	}
}

// Provision validates the host keys, builds the lookup maps and provisions
// and compiles every host's routes.
func (h *HostRoute) Provision(ctx caddy.Context) error {
	start := time.Now()
	h.logger = ctx.Logger()

	keys, err := h.index()
	if err != nil {
		return err
	}
	for _, k := range keys {
		if err := k.host.provision(ctx); err != nil {
			return fmt.Errorf("host %q: %v", k.raw, err)
		}
	}
	if h.Fallback != nil {
		if err := h.Fallback.provision(ctx); err != nil {
			return fmt.Errorf("fallback: %v", err)
		}
	}

	h.logger.Debug("host routes provisioned",
		zap.Int("exact_hosts", len(h.exact)),
		zap.Int("wildcard_hosts", len(h.wild)),
		zap.Bool("fallback", h.Fallback != nil),
		zap.Duration("duration", time.Since(start)))
	return nil
}

// Validate reports invalid or duplicate host keys (all of them, up to a cap,
// in sorted order). Provision runs the same checks before it provisions any
// route (so a bad key costs no route provisioning); after a successful
// Provision there is nothing left to check.
func (h *HostRoute) Validate() error {
	if h.exact != nil {
		return nil
	}
	_, err := checkKeys(h.Hosts)
	return err
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

// hostKey is one configured key: as written, normalized (for a wildcard, the
// part after "*."), and whether it is a wildcard.
type hostKey struct {
	raw  string
	norm string
	wild bool
	host *Host
}

// index validates the keys and fills h.exact and h.wild. It returns the
// configured hosts sorted by key, so that provisioning errors are stable.
func (h *HostRoute) index() ([]hostKey, error) {
	keys, err := checkKeys(h.Hosts)
	if err != nil {
		return nil, err
	}
	exact, wild := make(map[string]*Host, len(keys)), make(map[string]*Host)
	for _, k := range keys {
		if k.wild {
			wild[k.norm] = k.host
		} else {
			exact[k.norm] = k.host
		}
	}
	h.exact, h.wild = exact, wild
	return keys, nil
}

// checkKeys normalizes every key of hosts and returns them sorted by key, or
// an error naming every invalid, null or duplicate key (up to a cap).
func checkKeys(hosts map[string]*Host) ([]hostKey, error) {
	keys := make([]hostKey, 0, len(hosts))
	for raw, host := range hosts {
		keys = append(keys, hostKey{raw: raw, host: host})
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].raw < keys[j].raw })

	seen := make(map[string]string, len(keys)) // normalized key ("*."-prefixed for wildcards) -> raw
	var errs []error
	for i := range keys {
		k := &keys[i]
		if k.host == nil {
			errs = append(errs, fmt.Errorf("host %q: configuration is null (use {} for a host that answers 404)", k.raw))
			continue
		}
		var err error
		k.norm, k.wild, err = normalizeKey(k.raw)
		if err != nil {
			errs = append(errs, fmt.Errorf("host %q: %v", k.raw, err))
			continue
		}
		full := k.norm
		if k.wild {
			full = "*." + k.norm
		}
		if other, dup := seen[full]; dup {
			errs = append(errs, fmt.Errorf("hosts %q and %q are the same host %q (keys are case-insensitive and a trailing dot is ignored)", other, k.raw, full))
			continue
		}
		seen[full] = k.raw
	}
	if len(errs) > maxReportedKeyErrors {
		more := len(errs) - maxReportedKeyErrors
		errs = append(errs[:maxReportedKeyErrors], fmt.Errorf("and %d more invalid host keys", more))
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("invalid hosts: %w", errors.Join(errs...))
	}
	return keys, nil
}

// normalizeKey turns a configured host key into its lookup form: lowercase,
// no trailing dot, IP addresses in canonical form without brackets. For a
// wildcard key ("*.example.com") it returns the part after "*." and true.
func normalizeKey(raw string) (string, bool, error) {
	if raw == "" {
		return "", false, errors.New("empty host name")
	}
	s := strings.ToLower(raw)

	// IP literals: "192.0.2.1", "2001:db8::1", "[2001:db8::1]".
	ipText := s
	if strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]") {
		ipText = s[1 : len(s)-1]
	}
	if addr, err := netip.ParseAddr(ipText); err == nil {
		if addr.Zone() != "" {
			return "", false, errors.New("IPv6 zones are not supported")
		}
		return addr.String(), false, nil
	}

	switch {
	case strings.Contains(s, "://"):
		return "", false, errors.New("must be a bare host name, not a URL")
	case strings.ContainsAny(s, "/?#@"):
		return "", false, errors.New("must be a bare host name without path, query or user info")
	case strings.Contains(s, ":") || strings.HasPrefix(s, "["):
		return "", false, errors.New("must not include a port (ports are ignored when matching)")
	}

	s = strings.TrimSuffix(s, ".")
	if s == "*" || s == "" {
		return "", false, errors.New(`not a host name (use "fallback" for a catch-all)`)
	}
	if len(s) > maxHostLen {
		return "", false, fmt.Errorf("longer than %d characters", maxHostLen)
	}
	isWild := strings.HasPrefix(s, "*.")
	if isWild {
		s = s[2:]
	}
	for label := range strings.SplitSeq(s, ".") {
		if label == "" {
			return "", false, errors.New("empty label (two dots in a row, or a leading dot)")
		}
		if len(label) > 63 {
			return "", false, errors.New("a label is longer than 63 characters")
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			switch {
			case 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '-', c == '_':
			case c == '*':
				return "", false, errors.New(`a wildcard is only allowed as the whole first label, as in "*.example.com"`)
			case c >= 0x80:
				return "", false, errors.New("non-ASCII host name: use its ASCII (punycode, xn--) form")
			default:
				return "", false, fmt.Errorf("invalid character %q", c)
			}
		}
	}
	return s, isWild, nil
}

// ServeHTTP runs the routes of the request's host. It never calls next.
func (h *HostRoute) ServeHTTP(w http.ResponseWriter, r *http.Request, _ caddyhttp.Handler) error {
	host := h.lookup(r.Host)
	if host == nil {
		return unknownHost.ServeHTTP(w, r)
	}
	err := host.chain.ServeHTTP(w, r)
	if err != nil && host.errChain != nil {
		r = host.Errors.WithError(r, err)
		return host.errChain.ServeHTTP(w, r)
	}
	return err
}

// lookup finds the host for a Host header value (which may carry a port). It
// does not allocate for host names; cost does not depend on the number of
// configured hosts (at most two map lookups).
func (h *HostRoute) lookup(hostport string) *Host {
	if strings.HasPrefix(hostport, "[") {
		return h.lookupIPv6(hostport)
	}
	s := hostport
	if i := strings.IndexByte(s, ':'); i >= 0 {
		s = s[:i]
	}
	if n := len(s); n > 0 && s[n-1] == '.' {
		s = s[:n-1]
	}
	if s == "" || len(s) > maxHostLen {
		return h.Fallback
	}

	var buf [maxHostLen]byte
	b := buf[:len(s)]
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		b[i] = c
	}

	if host, ok := h.exact[string(b)]; ok {
		return host
	}
	if len(h.wild) > 0 {
		for i := 0; i < len(b)-1; i++ {
			if b[i] == '.' {
				if i > 0 {
					if host, ok := h.wild[string(b[i+1:])]; ok {
						return host
					}
				}
				break
			}
		}
	}
	return h.Fallback
}

// lookupIPv6 handles "[2001:db8::1]" and "[2001:db8::1]:443" (rare; may allocate).
func (h *HostRoute) lookupIPv6(hostport string) *Host {
	ipText := strings.TrimSuffix(strings.TrimPrefix(hostport, "["), "]")
	if host, _, err := net.SplitHostPort(hostport); err == nil {
		ipText = host
	}
	addr, err := netip.ParseAddr(ipText)
	if err != nil || addr.Zone() != "" {
		return h.Fallback
	}
	if host, ok := h.exact[addr.String()]; ok {
		return host
	}
	return h.Fallback
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
	_ caddyhttp.MiddlewareHandler = (*HostRoute)(nil)
)
