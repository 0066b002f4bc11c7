package pgstorage

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	// The Caddy children (this test binary, GATEHOUSE_PGSTORAGE_CHILD=caddy)
	// need the http, tls and pki apps.
	_ "github.com/caddyserver/caddy/v2/modules/standard"
)

const sharedHost = "shared.gatehouse.test"

// syncBuffer collects a child's output for the failure message.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// caddyNode is one Caddy process on the shared storage, serving sharedHost
// over HTTPS with a certificate from Caddy's internal CA.
type caddyNode struct {
	name    string
	port    int
	dataDir string
	out     *syncBuffer
	exited  chan struct{}
}

func startCaddyNode(t *testing.T, name, table string) *caddyNode {
	t.Helper()
	dir := t.TempDir()
	n := &caddyNode{name: name, port: freePort(t), dataDir: filepath.Join(dir, "data"), out: &syncBuffer{}, exited: make(chan struct{})}
	cfg := map[string]any{
		"admin":   map[string]any{"disabled": true, "config": map[string]any{"persist": false}},
		"storage": map[string]any{"module": "gatehouse_postgres", "dsn": "{env.PGS_DSN}", "table": table},
		"apps": map[string]any{
			"pki": map[string]any{"certificate_authorities": map[string]any{"local": map[string]any{"install_trust": false}}},
			"tls": map[string]any{"automation": map[string]any{"policies": []any{
				map[string]any{"subjects": []string{sharedHost}, "issuers": []any{map[string]any{"module": "internal"}}},
			}}},
			"http": map[string]any{
				"http_port":  freePort(t),
				"https_port": n.port,
				"servers": map[string]any{"s": map[string]any{
					"listen":          []string{fmt.Sprintf("127.0.0.1:%d", n.port)},
					"automatic_https": map[string]any{"disable_redirects": true},
					"routes": []any{map[string]any{
						"match":  []any{map[string]any{"host": []string{sharedHost}}},
						"handle": []any{map[string]any{"handler": "static_response", "body": "served by " + name}},
					}},
				}},
			},
		},
	}
	raw, _ := json.Marshal(cfg)
	cfgPath := filepath.Join(dir, "caddy.json")
	if err := os.WriteFile(cfgPath, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "run", "--config", cfgPath)
	cmd.Env = append(os.Environ(), "GATEHOUSE_PGSTORAGE_CHILD=caddy", "PGS_DSN="+testDSN(t),
		"XDG_DATA_HOME="+n.dataDir, "XDG_CONFIG_HOME="+filepath.Join(dir, "config"), "HOME="+dir)
	cmd.Stdout, cmd.Stderr = n.out, n.out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = cmd.Wait(); close(n.exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-n.exited
		if t.Failed() {
			t.Logf("caddy %s output:\n%s", name, n.out)
		}
	})
	return n
}

// leaf waits until the node answers for sharedHost over HTTPS and returns
// the certificate it served and the body.
func (n *caddyNode) leaf(t *testing.T) ([]byte, string) {
	t.Helper()
	var served []byte
	client := &http.Client{Timeout: 3 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{
			ServerName:         sharedHost,
			InsecureSkipVerify: true, // the test compares the served certificates byte for byte
			VerifyConnection: func(cs tls.ConnectionState) error {
				served = cs.PeerCertificates[0].Raw
				return nil
			},
		},
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, fmt.Sprintf("127.0.0.1:%d", n.port))
		},
	}}
	defer client.CloseIdleConnections()
	deadline := time.Now().Add(45 * time.Second)
	var lastErr error
	for time.Now().Before(deadline) {
		resp, err := client.Get("https://" + sharedHost + "/")
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return served, string(body)
			}
			err = fmt.Errorf("status %d", resp.StatusCode)
		}
		lastErr = err
		select { // polling a starting process: its listener gives no event to wait on
		case <-n.exited:
			t.Fatalf("caddy %s exited before serving %s", n.name, sharedHost)
		case <-time.After(100 * time.Millisecond):
		}
	}
	t.Fatalf("caddy %s never served %s: %v", n.name, sharedHost, lastErr)
	return nil, ""
}

// Two Caddy processes on one PostgreSQL storage: the first issues the
// certificate for the domain (internal CA, also kept in the storage) and
// stores it; the second, started after, serves that same certificate and
// issues none of its own. Neither keeps certificates on its disk.
func TestTwoCaddiesShareCertificates(t *testing.T) {
	table := newTable(t)
	b := open(t, table, 0)
	ctx := context.Background()
	certKey := "certificates/local/" + sharedHost + "/" + sharedHost + ".crt"

	nodeA := startCaddyNode(t, "A", table)
	certA, body := nodeA.leaf(t)
	if body != "served by A" {
		t.Fatalf("node A answered %q", body)
	}
	stored, err := b.Stat(ctx, certKey)
	if err != nil {
		t.Fatalf("node A's certificate is not in the storage: %v", err)
	}
	if !b.Exists(ctx, "pki/authorities/local/root.crt") {
		t.Fatal("the internal CA is not in the storage")
	}

	nodeB := startCaddyNode(t, "B", table)
	certB, body := nodeB.leaf(t)
	if body != "served by B" {
		t.Fatalf("node B answered %q", body)
	}
	if !bytes.Equal(certA, certB) {
		t.Fatal("node B serves a different certificate from node A's (it issued its own)")
	}
	again, err := b.Stat(ctx, certKey)
	if err != nil || !again.Modified.Equal(stored.Modified) {
		t.Fatalf("node B rewrote the stored certificate: %v -> %v (%v)", stored.Modified, again.Modified, err)
	}
	for _, n := range []*caddyNode{nodeA, nodeB} {
		matches, _ := filepath.Glob(filepath.Join(n.dataDir, "caddy", "certificates", "*"))
		if len(matches) > 0 {
			t.Errorf("caddy %s kept certificates on disk: %v", n.name, matches)
		}
	}
}
