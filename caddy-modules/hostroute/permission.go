package hostroute

import (
	"context"
	"fmt"
	"slices"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddytls"
)

func init() {
	caddy.RegisterModule(Permission{})
}

// Permission is the on-demand TLS permission module
// `tls.permission.gatehouse_hostroute`: a certificate may be obtained (or
// loaded from storage) for a name only if the name is an exact host key of a
// host map of the same configuration, in memory, at the moment of the
// handshake. So a host put through the admin API gets its certificate at its
// first handshake, a deleted host cannot get one any more, and no Host or SNI
// a client makes up can make Caddy ask a CA for anything.
//
// Wildcard keys do not allow anything: "a.example.com" is not allowed because
// of "*.example.com" (that would let clients pick unbounded names); a wildcard
// host's certificate ("*.example.com") belongs in the tls app's
// `certificates.automate`.
type Permission struct {
	// Maps are the names of the host maps whose keys allow a certificate.
	// Default: every host map in a server with TLS connection policies.
	Maps []string `json:"maps,omitempty"`

	registry *Registry
}

// CaddyModule returns the Caddy module information.
func (Permission) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "tls.permission.gatehouse_hostroute",
		New: func() caddy.Module { return new(Permission) },
	}
}

// Provision finds this configuration's registry of host maps.
func (p *Permission) Provision(ctx caddy.Context) error {
	app, err := ctx.App(registryID)
	if err != nil {
		return fmt.Errorf("loading the %s app: %v", registryID, err)
	}
	p.registry = app.(*Registry)
	return nil
}

// CertificateAllowed allows name if it is an exact key of an eligible host map.
func (p *Permission) CertificateAllowed(_ context.Context, name string) error {
	norm, wild, err := normalizeKey(name)
	if err != nil || wild {
		return fmt.Errorf("%w: %q is not a host name this server serves", caddytls.ErrPermissionDenied, name)
	}
	for _, h := range p.registry.all() {
		if len(p.Maps) > 0 {
			if !slices.Contains(p.Maps, h.name) {
				continue
			}
		} else if !h.tls {
			continue
		}
		if h.hostEntry(norm, false) != nil {
			return nil
		}
	}
	return fmt.Errorf("%w: %q is not a host of a host map serving TLS", caddytls.ErrPermissionDenied, name)
}

// Interface guards
var (
	_ caddy.Provisioner           = (*Permission)(nil)
	_ caddytls.OnDemandPermission = (*Permission)(nil)
)
