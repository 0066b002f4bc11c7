// Command gatehouse-test-mmdb writes a small MaxMind-format country database
// for Gatehouse's tests (test/lib/geoip.ts runs it with `go run`):
//
//	gatehouse-test-mmdb [-type GeoLite2-Country] [-epoch 1767225600] -o out.mmdb 10.0.0.1=DE 10.9.0.0/16=FR ...
//
// Each argument maps a network (CIDR or one address) to an ISO 3166-1
// alpha-2 code. It is a test tool, not part of the Caddy build.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/gatehouse/caddy-modules/geoip/mmdbtest"
)

func main() {
	out := flag.String("o", "", "output file")
	dbType := flag.String("type", "GeoLite2-Country", "metadata database_type")
	epoch := flag.Int64("epoch", 0, "metadata build_epoch (Unix seconds; 0: now)")
	flag.Parse()
	if *out == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: gatehouse-test-mmdb [-type T] [-epoch N] -o out.mmdb NETWORK=CC ...")
		os.Exit(2)
	}
	var entries []mmdbtest.Entry
	for _, a := range flag.Args() {
		network, cc, ok := strings.Cut(a, "=")
		if !ok {
			fmt.Fprintf(os.Stderr, "gatehouse-test-mmdb: %q is not NETWORK=CC\n", a)
			os.Exit(2)
		}
		entries = append(entries, mmdbtest.Entry{Network: network, Country: cc})
	}
	if err := mmdbtest.Write(*out, entries, mmdbtest.Options{DatabaseType: *dbType, BuildEpoch: *epoch}); err != nil {
		fmt.Fprintln(os.Stderr, "gatehouse-test-mmdb:", err)
		os.Exit(1)
	}
}
