package hostroute

import (
	"fmt"
	"testing"

	"github.com/caddyserver/caddy/v2"
	_ "github.com/caddyserver/caddy/v2/modules/standard"
)

// fullConfig wraps a gatehouse_hostroute handler in a whole Caddy config: one
// server on a free loopback port, no admin endpoint, nothing persisted, no
// trust-store changes, storage in dir.
func fullConfig(handler, dir string) []byte {
	return []byte(fmt.Sprintf(`{
	"admin": {"disabled": true, "config": {"persist": false}},
	"storage": {"module": "file_system", "root": %q},
	"logging": {"logs": {"default": {"level": "WARN"}}},
	"apps": {
		"http": {"servers": {"bench": {
			"listen": ["127.0.0.1:0"],
			"automatic_https": {"disable": true},
			"routes": [{"handle": [%s]}]
		}}},
		"pki": {"certificate_authorities": {"local": {"install_trust": false}}}
	}
}`, dir, handler))
}

// BenchmarkLoadConfig10k: a whole caddy.Load (what POST /load does after
// parsing the body) of a config whose only route is a gatehouse_hostroute of
// 10,000 hosts, each proxying to its own upstream.
func BenchmarkLoadConfig10k(b *testing.B) {
	hosts := manyProxyHostsConfig(10000)
	handler := `{"handler":"gatehouse_hostroute",` + hosts[1:]
	cfg := fullConfig(handler, b.TempDir())
	b.Cleanup(func() { _ = caddy.Stop() })
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := caddy.Load(cfg, true); err != nil {
			b.Fatal(err)
		}
	}
}
