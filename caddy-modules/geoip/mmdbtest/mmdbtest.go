// Package mmdbtest writes small MaxMind-format country databases for tests:
// networks mapped to ISO 3166-1 alpha-2 codes, in the layout of
// GeoLite2-Country records ({country: {iso_code}}), reserved and private
// networks allowed (tests use loopback and namespace addresses).
package mmdbtest

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/maxmind/mmdbwriter"
	"github.com/maxmind/mmdbwriter/mmdbtype"
)

// Entry maps a network (CIDR, or a single address) to a country code; an
// empty Country writes a record with only registered_country set to
// Registered (as GeoLite2 does for some networks).
type Entry struct {
	Network    string
	Country    string
	Registered string
}

// Options of the database file.
type Options struct {
	// DatabaseType is the metadata's database_type (default "GeoLite2-Country").
	DatabaseType string
	// BuildEpoch is the metadata's build_epoch (Unix seconds; 0: now).
	BuildEpoch int64
}

// Write writes the database to path (atomically: a temporary file renamed).
func Write(path string, entries []Entry, opts Options) error {
	if opts.DatabaseType == "" {
		opts.DatabaseType = "GeoLite2-Country"
	}
	tree, err := mmdbwriter.New(mmdbwriter.Options{
		DatabaseType:            opts.DatabaseType,
		BuildEpoch:              opts.BuildEpoch,
		Description:             map[string]string{"en": "Gatehouse test country database"},
		IncludeReservedNetworks: true,
		IPVersion:               6,
		RecordSize:              24,
		Languages:               []string{"en"},
	})
	if err != nil {
		return err
	}
	for _, e := range entries {
		cidr := e.Network
		if !strings.Contains(cidr, "/") {
			if strings.Contains(cidr, ":") {
				cidr += "/128"
			} else {
				cidr += "/32"
			}
		}
		_, network, err := net.ParseCIDR(cidr)
		if err != nil {
			return fmt.Errorf("network %q: %w", e.Network, err)
		}
		rec := mmdbtype.Map{}
		if e.Country != "" {
			rec["country"] = mmdbtype.Map{"iso_code": mmdbtype.String(strings.ToUpper(e.Country))}
		}
		if e.Registered != "" {
			rec["registered_country"] = mmdbtype.Map{"iso_code": mmdbtype.String(strings.ToUpper(e.Registered))}
		}
		if err := tree.Insert(network, rec); err != nil {
			return fmt.Errorf("network %q: %w", e.Network, err)
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if _, err := tree.WriteTo(f); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, path)
}
