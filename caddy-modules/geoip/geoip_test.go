package geoip

import (
	"context"
	"encoding/json"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/gatehouse/caddy-modules/geoip/mmdbtest"
	"github.com/mholt/caddy-l4/layer4"
	"go.uber.org/zap"
)

func writeDB(t *testing.T, entries ...mmdbtest.Entry) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "country.mmdb")
	if err := mmdbtest.Write(path, entries, mmdbtest.Options{BuildEpoch: 1767225600}); err != nil {
		t.Fatal(err)
	}
	return path
}

var testEntries = []mmdbtest.Entry{
	{Network: "127.0.0.1", Country: "DE"},
	{Network: "127.0.0.2", Country: "fr"},
	{Network: "10.20.0.0/16", Country: "US"},
	{Network: "2001:db8::/32", Country: "JP"},
	{Network: "198.51.100.0/24", Registered: "NL"},
}

func newHTTP(t *testing.T, db string, countries ...string) *MatchCountry {
	t.Helper()
	m := &MatchCountry{matcher{DB: db, Countries: countries}}
	if err := m.Provision(caddy.Context{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Cleanup() })
	return m
}

func match(t *testing.T, m *MatchCountry, remote, clientIP string) bool {
	t.Helper()
	r := httptest.NewRequest("GET", "http://example.test/", nil)
	r.RemoteAddr = remote
	if clientIP != "" {
		r = r.WithContext(context.WithValue(r.Context(), caddyhttp.VarsCtxKey, map[string]any{caddyhttp.ClientIPVarKey: clientIP}))
	}
	ok, err := m.MatchWithError(r)
	if err != nil {
		t.Fatalf("match %s/%s: %v", remote, clientIP, err)
	}
	return ok
}

func TestHTTPMatcherCountries(t *testing.T) {
	db := writeDB(t, testEntries...)
	m := newHTTP(t, db, "de", "US", "NL")
	cases := []struct {
		remote, clientIP string
		want             bool
	}{
		{"127.0.0.1:5000", "", true},           // DE by the remote address
		{"127.0.0.2:5000", "", false},          // FR (stored lower case) is not listed
		{"10.20.3.4:1", "", true},              // US network
		{"10.21.0.1:1", "", false},             // unknown: no country matches no list
		{"[2001:db8::5]:443", "", false},       // JP
		{"[::ffff:127.0.0.1]:80", "", true},    // IPv4-mapped IPv6 is the IPv4 address
		{"198.51.100.7:1", "", true},           // only registered_country NL
		{"127.0.0.2:5000", "127.0.0.1", true},  // client_ip (trusted proxy) decides, not the remote
		{"127.0.0.1:5000", "127.0.0.2", false}, // ... in both directions
		{"127.0.0.1:5000", "not-an-ip", true},  // a broken variable falls back to the remote address
	}
	for _, c := range cases {
		if got := match(t, m, c.remote, c.clientIP); got != c.want {
			t.Errorf("remote %s client_ip %q: got %v, want %v", c.remote, c.clientIP, got, c.want)
		}
	}
}

func TestHTTPMatcherJSONAndValidation(t *testing.T) {
	db := writeDB(t, testEntries...)
	var m MatchCountry
	if err := json.Unmarshal([]byte(`{"db":"`+db+`","countries":["FR"]}`), &m); err != nil {
		t.Fatal(err)
	}
	if err := m.Provision(caddy.Context{}); err != nil {
		t.Fatal(err)
	}
	defer m.Cleanup()
	if !match(t, &m, "127.0.0.2:1", "") {
		t.Error("FR address should match [FR]")
	}
	for _, bad := range []MatchCountry{
		{matcher{DB: db}},
		{matcher{DB: db, Countries: []string{"DEU"}}},
		{matcher{DB: db, Countries: []string{"1A"}}},
		{matcher{Countries: []string{"DE"}}},
		{matcher{DB: filepath.Join(t.TempDir(), "missing.mmdb"), Countries: []string{"DE"}}},
	} {
		b := bad
		if err := b.Provision(caddy.Context{}); err == nil {
			b.Cleanup()
			t.Errorf("%+v: provisioned, want an error", bad.matcher)
		}
	}
	notDB := filepath.Join(t.TempDir(), "x.mmdb")
	os.WriteFile(notDB, []byte("not a database"), 0o644)
	b := MatchCountry{matcher{DB: notDB, Countries: []string{"DE"}}}
	if err := b.Provision(caddy.Context{}); err == nil {
		t.Error("a file that is not an MMDB provisioned")
	}
}

func TestReaderSharedAndReleased(t *testing.T) {
	db := writeDB(t, testEntries...)
	a := &MatchCountry{matcher{DB: db, Countries: []string{"DE"}}}
	b := &MatchL4Country{matcher{DB: db, Countries: []string{"FR"}}}
	if err := a.Provision(caddy.Context{}); err != nil {
		t.Fatal(err)
	}
	if err := b.Provision(caddy.Context{}); err != nil {
		t.Fatal(err)
	}
	if a.db != b.db {
		t.Fatal("two matchers on one file opened it twice")
	}
	if refs, _ := readers.References(a.key); refs != 2 {
		t.Fatalf("references %d, want 2", refs)
	}
	// a replaced file (new mtime) is a new reader; the old one stays for its users
	time.Sleep(10 * time.Millisecond)
	if err := mmdbtest.Write(db, []mmdbtest.Entry{{Network: "127.0.0.1", Country: "AT"}}, mmdbtest.Options{}); err != nil {
		t.Fatal(err)
	}
	c := &MatchCountry{matcher{DB: db, Countries: []string{"AT"}}}
	if err := c.Provision(caddy.Context{}); err != nil {
		t.Fatal(err)
	}
	if c.db == a.db {
		t.Fatal("a replaced file was served from the old reader")
	}
	if !match(t, c, "127.0.0.1:1", "") || !match(t, a, "127.0.0.1:1", "") {
		t.Fatal("old and new readers should both answer")
	}
	key := a.key
	a.Cleanup()
	if refs, ok := readers.References(key); !ok || refs != 1 {
		t.Fatalf("after one cleanup: refs %d (present %v), want 1", refs, ok)
	}
	b.Cleanup()
	if _, ok := readers.References(key); ok {
		t.Fatal("the reader outlived its last matcher")
	}
	c.Cleanup()
}

func TestConcurrentMatching(t *testing.T) {
	db := writeDB(t, testEntries...)
	m := newHTTP(t, db, "DE")
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 500; j++ {
				if !match(t, m, "127.0.0.1:1", "") || match(t, m, "127.0.0.2:1", "") {
					t.Error("wrong answer under concurrency")
					return
				}
			}
		}()
	}
	wg.Wait()
}

// TestL4Matcher matches real TCP connections from 127.0.0.1 (DE) and
// 127.0.0.2 (FR) by their source address.
func TestL4Matcher(t *testing.T) {
	db := writeDB(t, testEntries...)
	m := &MatchL4Country{matcher{DB: db, Countries: []string{"DE"}}}
	if err := m.Provision(caddy.Context{}); err != nil {
		t.Fatal(err)
	}
	defer m.Cleanup()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	for _, c := range []struct {
		src  string
		want bool
	}{{"127.0.0.1", true}, {"127.0.0.2", false}} {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(c.src)}}
		client, err := d.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Skipf("dial from %s: %v", c.src, err)
		}
		server, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		cx := layer4.WrapConnection(server, nil, zap.NewNop())
		got, err := m.Match(cx)
		if err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("connection from %s: got %v, want %v", c.src, got, c.want)
		}
		client.Close()
		server.Close()
	}
}

func BenchmarkHTTPMatch(b *testing.B) {
	dir := b.TempDir()
	path := filepath.Join(dir, "c.mmdb")
	if err := mmdbtest.Write(path, testEntries, mmdbtest.Options{}); err != nil {
		b.Fatal(err)
	}
	m := &MatchCountry{matcher{DB: path, Countries: []string{"DE"}}}
	if err := m.Provision(caddy.Context{}); err != nil {
		b.Fatal(err)
	}
	defer m.Cleanup()
	r := httptest.NewRequest("GET", "/", nil)
	r.RemoteAddr = "127.0.0.1:1"
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		m.Match(r)
	}
}
