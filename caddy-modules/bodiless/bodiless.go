// Package bodiless provides the Caddy request matcher
// `http.matchers.gatehouse_bodiless`: it matches a request that carries no
// content, so that nothing has to be buffered to send it again.
//
// Gatehouse renders it in front of a route's retrying reverse_proxy (see
// ../RETRY.md): a GET, HEAD, OPTIONS or DELETE without content goes to a
// reverse_proxy without request_buffers, every other request to one that
// buffers small bodies for replay. Stock matchers cannot tell this: the
// request headers say nothing about an HTTP/2 or HTTP/3 body sent without
// Content-Length, and a CEL expression costs far more per request.
package bodiless

import (
	"net/http"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

func init() {
	caddy.RegisterModule(Match{})
}

// Match matches requests without content: Go's server sets ContentLength to
// 0 exactly when the request has no body (HTTP/1 without Content-Length and
// Transfer-Encoding or with Content-Length: 0; HTTP/2 and HTTP/3 when the
// headers end the stream or Content-Length is 0) and to -1 when a body of
// unknown length follows. It has no options:
//
//	{"gatehouse_bodiless": {}}
type Match struct{}

// CaddyModule returns the Caddy module information.
func (Match) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.matchers.gatehouse_bodiless",
		New: func() caddy.Module { return new(Match) },
	}
}

// Match reports whether r carries no content.
func (Match) Match(r *http.Request) bool {
	return r.ContentLength == 0
}

// MatchWithError is Match; it never fails.
func (m Match) MatchWithError(r *http.Request) (bool, error) {
	return m.Match(r), nil
}

// UnmarshalCaddyfile sets up the matcher from Caddyfile tokens. Syntax:
//
//	gatehouse_bodiless
func (Match) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // the matcher name
	if d.NextArg() {
		return d.ArgErr()
	}
	return nil
}

// Interface guards
var (
	_ caddyhttp.RequestMatcherWithError = (*Match)(nil)
	_ caddyfile.Unmarshaler             = (*Match)(nil)
)
