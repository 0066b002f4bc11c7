package geoip

import (
	"fmt"
	"net/netip"
	"os"
	"strings"

	"github.com/caddyserver/caddy/v2"
	"github.com/oschwald/maxminddb-golang/v2"
)

// readers holds one open database per file version (path, size, mtime),
// shared by every matcher of every loaded configuration that names it.
var readers = caddy.NewUsagePool()

// database is an open MMDB file.
type database struct {
	r *maxminddb.Reader
}

// Destruct closes the file when the last matcher that uses it is cleaned up.
func (d *database) Destruct() error { return d.r.Close() }

// openDatabase returns the shared reader of path (opening it on first use)
// and the key to release it with.
func openDatabase(path string) (*database, string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, "", fmt.Errorf("geoip database: %w", err)
	}
	key := fmt.Sprintf("%s|%d|%d", path, st.Size(), st.ModTime().UnixNano())
	v, _, err := readers.LoadOrNew(key, func() (caddy.Destructor, error) {
		r, err := maxminddb.Open(path)
		if err != nil {
			return nil, fmt.Errorf("geoip database %s: %w", path, err)
		}
		return &database{r: r}, nil
	})
	if err != nil {
		return nil, "", err
	}
	return v.(*database), key, nil
}

func releaseDatabase(key string) error {
	if key == "" {
		return nil
	}
	_, err := readers.Delete(key)
	return err
}

// country is the ISO 3166-1 alpha-2 code (upper case) of addr's country, or
// "" when the database has none for it: country.iso_code, else
// registered_country.iso_code (GeoLite2 gives some networks, anycast ones
// for instance, only the registered country).
func (d *database) country(addr netip.Addr) (string, error) {
	res := d.r.Lookup(addr.Unmap())
	if err := res.Err(); err != nil {
		return "", err
	}
	if !res.Found() {
		return "", nil
	}
	var iso string
	if err := res.DecodePath(&iso, "country", "iso_code"); err != nil {
		return "", err
	}
	if iso == "" {
		if err := res.DecodePath(&iso, "registered_country", "iso_code"); err != nil {
			return "", err
		}
	}
	return strings.ToUpper(iso), nil
}

// countrySet is the configured list, checked and upper-cased.
type countrySet map[string]struct{}

func newCountrySet(codes []string) (countrySet, error) {
	if len(codes) == 0 {
		return nil, fmt.Errorf("countries: at least one ISO 3166-1 alpha-2 code is required")
	}
	s := make(countrySet, len(codes))
	for _, c := range codes {
		u := strings.ToUpper(strings.TrimSpace(c))
		if len(u) != 2 || u[0] < 'A' || u[0] > 'Z' || u[1] < 'A' || u[1] > 'Z' {
			return nil, fmt.Errorf("countries: %q is not an ISO 3166-1 alpha-2 code", c)
		}
		s[u] = struct{}{}
	}
	return s, nil
}

// matcher is what the HTTP and layer4 matchers share.
type matcher struct {
	// DB is the path of the MaxMind-format country database.
	DB string `json:"db"`
	// Countries are ISO 3166-1 alpha-2 codes; the matcher matches a client
	// whose country is one of them.
	Countries []string `json:"countries"`
	// Version is not read: the sidecar sets it from the file's size and
	// modification time, so a replaced file changes the configuration and
	// the next load opens it (an unchanged configuration is not reloaded).
	Version string `json:"version,omitempty"`

	set countrySet
	db  *database
	key string
}

func (m *matcher) provision() error {
	if m.DB == "" {
		return fmt.Errorf("db: the path of a MaxMind-format country database is required")
	}
	set, err := newCountrySet(m.Countries)
	if err != nil {
		return err
	}
	db, key, err := openDatabase(m.DB)
	if err != nil {
		return err
	}
	m.set, m.db, m.key = set, db, key
	return nil
}

func (m *matcher) cleanup() error {
	key := m.key
	m.key, m.db = "", nil
	return releaseDatabase(key)
}

// matchAddr reports whether addr's country is in the list.
func (m *matcher) matchAddr(addr netip.Addr) (bool, error) {
	iso, err := m.db.country(addr)
	if err != nil {
		return false, fmt.Errorf("geoip lookup of %s: %w", addr, err)
	}
	if iso == "" {
		return false, nil
	}
	_, ok := m.set[iso]
	return ok, nil
}
