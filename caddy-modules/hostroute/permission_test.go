package hostroute

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2/modules/caddytls"
)

// handshake does a TLS handshake with the HTTPS server for a server name and
// returns the names of the certificate it got.
func (e *env) handshake(name string) ([]string, error) {
	d := &tls.Dialer{Config: &tls.Config{ServerName: name, InsecureSkipVerify: true}} //nolint:gosec // the test's own internal CA
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	conn, err := d.DialContext(ctx, "tcp", fmt.Sprintf("127.0.0.1:%d", e.https))
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	return conn.(*tls.Conn).ConnectionState().PeerCertificates[0].DNSNames, nil
}

// On-demand TLS answered by the host maps: a certificate (from Caddy's
// internal CA here) for exact keys of the TLS server's map only, including
// hosts put at run time, not for deleted ones, not for names matched only by
// a wildcard, not for the plain HTTP server's hosts.
func TestOnDemandPermissionFromHostMap(t *testing.T) {
	e := newEnv(t)
	e.https = freePort(t)
	e.extraApps = `"tls": {"automation": {
		"policies": [{"issuers": [{"module": "internal"}], "on_demand": true}],
		"on_demand": {"permission": {"module": "gatehouse_hostroute"}}
	}}`
	plain := `{"handler":"gatehouse_hostroute","hosts":{"plain.example.com":` + static("plain") + `}}`
	e.load(plain, testMap())

	if names, err := e.handshake("a.example.com"); err != nil || !slices.Contains(names, "a.example.com") {
		t.Errorf("a.example.com (a key of the TLS map): %v %v", names, err)
	}
	for _, name := range []string{"unknown.example.com", "x.wild.example.com", "plain.example.com"} {
		if names, err := e.handshake(name); err == nil {
			t.Errorf("%s: got a certificate for %v", name, names)
		}
	}

	e.mustAdmin(http.MethodPut, "/gatehouse/hostroute/maps/tls/hosts/new.example.com", static("new"))
	if names, err := e.handshake("new.example.com"); err != nil || !slices.Contains(names, "new.example.com") {
		t.Errorf("new.example.com put at run time: %v %v", names, err)
	}
	e.mustAdmin(http.MethodPut, "/gatehouse/hostroute/maps/tls/hosts/gone.example.com", static("gone"))
	e.mustAdmin(http.MethodDelete, "/gatehouse/hostroute/maps/tls/hosts/gone.example.com", "")
	if names, err := e.handshake("gone.example.com"); err == nil {
		t.Errorf("gone.example.com (deleted before its first handshake): got %v", names)
	}
}

func TestPermissionDecisions(t *testing.T) {
	e := newEnv(t)
	e.https = freePort(t)
	e.load(`{"handler":"gatehouse_hostroute","hosts":{"plain.example.com":`+static("plain")+`}}`, testMap())
	reg, err := activeRegistry()
	if err != nil {
		t.Fatal(err)
	}
	byDefault := &Permission{registry: reg}
	onlySrv := &Permission{registry: reg, Maps: []string{"srv"}}
	for _, c := range []struct {
		p     *Permission
		name  string
		allow bool
	}{
		{byDefault, "a.example.com", true},
		{byDefault, "A.Example.COM.", true},
		{byDefault, "x.wild.example.com", false},
		{byDefault, "*.wild.example.com", false},
		{byDefault, "plain.example.com", false}, // not a TLS server's map
		{byDefault, "nope.example.com", false},
		{byDefault, "", false},
		{onlySrv, "plain.example.com", true},
		{onlySrv, "a.example.com", false},
	} {
		err := c.p.CertificateAllowed(context.Background(), c.name)
		if (err == nil) != c.allow {
			t.Errorf("maps %v, %q: %v, want allowed=%v", c.p.Maps, c.name, err, c.allow)
		}
		if err != nil && !errors.Is(err, caddytls.ErrPermissionDenied) {
			t.Errorf("%q: denial is not ErrPermissionDenied: %v", c.name, err)
		}
	}
}
