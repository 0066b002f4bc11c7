// Command caddy is Gatehouse's custom Caddy build: stock Caddy with its
// standard modules, the layer4 app (mholt/caddy-l4, with all of its standard
// modules), the rate_limit handler (mholt/caddy-ratelimit) and Gatehouse's own
// modules. Versions are pinned in ../../go.mod; build it with
// scripts/build-caddy.sh (bin/caddy) or xcaddy.Dockerfile.
package main

import (
	caddycmd "github.com/caddyserver/caddy/v2/cmd"

	// Caddy's standard modules (http app, reverse_proxy, tls, pki, ...).
	_ "github.com/caddyserver/caddy/v2/modules/standard"

	// The layer4 app and all of caddy-l4's standard modules (the package
	// root imports every module, as `xcaddy --with github.com/mholt/caddy-l4` does).
	_ "github.com/mholt/caddy-l4"

	// http.handlers.rate_limit
	_ "github.com/mholt/caddy-ratelimit"

	// Gatehouse modules.
	_ "github.com/gatehouse/caddy-modules/bodiless"
	_ "github.com/gatehouse/caddy-modules/botblock"
	_ "github.com/gatehouse/caddy-modules/circuitbreaker"
	_ "github.com/gatehouse/caddy-modules/geoip"
	_ "github.com/gatehouse/caddy-modules/hostroute"
	_ "github.com/gatehouse/caddy-modules/mirror"
	_ "github.com/gatehouse/caddy-modules/pgstorage"
)

func main() {
	caddycmd.Main()
}
