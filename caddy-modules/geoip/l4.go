package geoip

import (
	"fmt"
	"net"
	"net/netip"

	"github.com/caddyserver/caddy/v2"
	"github.com/mholt/caddy-l4/layer4"
)

// MatchL4Country matches layer4 connections (TCP, or UDP senders) whose
// source address is in one of the listed countries.
type MatchL4Country struct {
	matcher
}

// CaddyModule returns the Caddy module information.
func (MatchL4Country) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "layer4.matchers.gatehouse_geo",
		New: func() caddy.Module { return new(MatchL4Country) },
	}
}

// Provision opens (or shares) the database and checks the list.
func (m *MatchL4Country) Provision(caddy.Context) error { return m.provision() }

// Cleanup releases the database.
func (m *MatchL4Country) Cleanup() error { return m.cleanup() }

// Match implements layer4.ConnMatcher; it reads nothing from the connection.
func (m *MatchL4Country) Match(cx *layer4.Connection) (bool, error) {
	remote := cx.RemoteAddr().String()
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		host = remote
	}
	addr, err := netip.ParseAddr(host)
	if err != nil {
		return false, fmt.Errorf("remote address %q: %w", remote, err)
	}
	return m.matchAddr(addr)
}

var (
	_ caddy.Provisioner  = (*MatchL4Country)(nil)
	_ caddy.CleanerUpper = (*MatchL4Country)(nil)
	_ layer4.ConnMatcher = (*MatchL4Country)(nil)
)
