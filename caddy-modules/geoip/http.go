package geoip

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

func init() {
	caddy.RegisterModule(MatchCountry{})
	caddy.RegisterModule(MatchL4Country{})
}

// MatchCountry matches HTTP requests whose client IP (Caddy's client_ip:
// trusted_proxies applied) is in one of the listed countries.
type MatchCountry struct {
	matcher
}

// CaddyModule returns the Caddy module information.
func (MatchCountry) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.matchers.gatehouse_geo",
		New: func() caddy.Module { return new(MatchCountry) },
	}
}

// Provision opens (or shares) the database and checks the list.
func (m *MatchCountry) Provision(caddy.Context) error { return m.provision() }

// Cleanup releases the database.
func (m *MatchCountry) Cleanup() error { return m.cleanup() }

// Match implements caddyhttp.RequestMatcher (errors count as no match).
func (m *MatchCountry) Match(r *http.Request) bool {
	ok, _ := m.MatchWithError(r)
	return ok
}

// MatchWithError implements caddyhttp.RequestMatcherWithError.
func (m *MatchCountry) MatchWithError(r *http.Request) (bool, error) {
	addr, err := clientIP(r)
	if err != nil {
		return false, err
	}
	return m.matchAddr(addr)
}

// clientIP is the client_ip variable the server set (remote address, or
// the forwarded one from a trusted proxy), as caddyhttp's client_ip matcher
// reads it; the remote address when the variable is absent.
func clientIP(r *http.Request) (netip.Addr, error) {
	if s, ok := caddyhttp.GetVar(r.Context(), caddyhttp.ClientIPVarKey).(string); ok && s != "" {
		if a, err := netip.ParseAddr(s); err == nil {
			return a, nil
		}
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("client address %q: %w", r.RemoteAddr, err)
	}
	return a, nil
}

var (
	_ caddy.Provisioner                 = (*MatchCountry)(nil)
	_ caddy.CleanerUpper                = (*MatchCountry)(nil)
	_ caddyhttp.RequestMatcherWithError = (*MatchCountry)(nil)
)
