package hostroute

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

// This file: a real Caddy configuration loaded in the test process
// (caddy.Load, as POST /load does), with its admin listener, an HTTP server on
// loopback, the admin API reached over HTTP, a probe handler module that
// records its lifecycle, and an upstream that upgrades connections and echoes.

func init() {
	caddy.RegisterModule(new(probe))
}

// freePort returns a loopback TCP port that was free a moment ago, below
// Linux's ephemeral range (32768-60999) so that the tests' own outgoing
// connections cannot take it before Caddy listens on it.
func freePort(t testing.TB) int {
	t.Helper()
	for range 1000 {
		port := 20000 + rand.IntN(12000)
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			continue
		}
		ln.Close()
		return port
	}
	t.Fatal("no free port")
	return 0
}

// env is one test's Caddy: its ports and the server JSON it loads.
type env struct {
	t         testing.TB
	admin     int
	http      int
	https     int
	dir       string
	extraApps string // more "apps" members, e.g. "tls": {...}
	named     string // the "named_routes" object of server "srv", if not empty
}

func newEnv(t testing.TB) *env {
	t.Helper()
	e := &env{t: t, admin: freePort(t), http: freePort(t), dir: t.TempDir()}
	t.Cleanup(func() { _ = caddy.Stop() })
	return e
}

// config renders a whole Caddy config whose server "srv" has one route with
// the given handler JSON, and a server "tls" on e.https with a TLS connection
// policy when tlsHandler is not empty.
func (e *env) config(handler, tlsHandler string) []byte {
	named := ""
	if e.named != "" {
		named = `, "named_routes": ` + e.named
	}
	servers := fmt.Sprintf(`"srv": {"listen": ["127.0.0.1:%d"], "automatic_https": {"disable": true}, "routes": [{"handle": [%s]}]%s}`, e.http, handler, named)
	if tlsHandler != "" {
		servers += fmt.Sprintf(`, "tls": {"listen": ["127.0.0.1:%d"], "automatic_https": {"disable": true}, "tls_connection_policies": [{}], "routes": [{"handle": [%s]}]}`, e.https, tlsHandler)
	}
	apps := `"pki": {"certificate_authorities": {"local": {"install_trust": false}}}`
	if e.extraApps != "" {
		apps += "," + e.extraApps
	}
	return []byte(fmt.Sprintf(`{
	"admin": {"listen": "127.0.0.1:%d", "config": {"persist": false}},
	"storage": {"module": "file_system", "root": %q},
	"logging": {"logs": {"default": {"level": "ERROR"}}},
	"apps": {
		"http": {"grace_period": "5s", "servers": {%s}},
		%s
	}
}`, e.admin, e.dir, servers, apps))
}

// load loads a config into the test process's Caddy (a full load).
func (e *env) load(handler, tlsHandler string) {
	e.t.Helper()
	if err := caddy.Load(e.config(handler, tlsHandler), true); err != nil {
		e.t.Fatalf("loading config: %v", err)
	}
	// a kept-alive connection to the old server can still be answered by
	// the old configuration for a moment: requests after a load use new ones
	httpClient.CloseIdleConnections()
}

// hostMap is the running configuration's host map of a name.
func (e *env) hostMap(name string) *HostRoute {
	e.t.Helper()
	reg, err := activeRegistry()
	if err != nil {
		e.t.Fatal(err)
	}
	h := reg.hostMap(name)
	if h == nil {
		e.t.Fatalf("no host map %q", name)
	}
	return h
}

var httpClient = &http.Client{Timeout: 30 * time.Second}

// adminCall sends a request to Caddy's admin API and decodes its JSON answer.
// Caddy replaces its admin server at every full load, so a call right after
// one may meet a connection closed before any answer: it is sent again
// (every call of this API is idempotent), as retryFreshConn says.
func (e *env) adminCall(method, path, body string) (int, map[string]any, http.Header) {
	e.t.Helper()
	var status int
	var raw []byte
	var hdr http.Header
	err := retryFreshConn(func() error {
		var rd io.Reader
		if body != "" {
			rd = strings.NewReader(body)
		}
		req, err := http.NewRequest(method, fmt.Sprintf("http://127.0.0.1:%d%s", e.admin, path), rd)
		if err != nil {
			return err
		}
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		res, err := httpClient.Do(req)
		if err != nil {
			return err
		}
		defer res.Body.Close()
		status, hdr = res.StatusCode, res.Header
		raw, err = io.ReadAll(res.Body)
		return err
	})
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		e.t.Fatalf("%s %s: answer %d is not a JSON object: %q", method, path, status, raw)
	}
	return status, out, hdr
}

// mustAdmin is adminCall that expects a 200.
func (e *env) mustAdmin(method, path, body string) map[string]any {
	e.t.Helper()
	status, out, _ := e.adminCall(method, path, body)
	if status != http.StatusOK {
		e.t.Fatalf("%s %s: %d %v", method, path, status, out)
	}
	return out
}

// get sends a GET for host to the HTTP server.
func (e *env) get(host, path string) (int, string) {
	e.t.Helper()
	status, body, err := e.tryGet(host, path)
	if err != nil {
		e.t.Fatal(err)
	}
	return status, body
}

func (e *env) tryGet(host, path string) (int, string, error) {
	var status int
	var body string
	err := retryFreshConn(func() error {
		req, err := http.NewRequest(http.MethodGet, fmt.Sprintf("http://127.0.0.1:%d%s", e.http, path), nil)
		if err != nil {
			return err
		}
		req.Host = host
		res, err := httpClient.Do(req)
		if err != nil {
			return err
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		status, body = res.StatusCode, string(b)
		return err
	})
	return status, body, err
}

// retryFreshConn runs try again (twice at most) when the server closed the
// connection before answering anything. Stock Caddy does that to a few
// connections opened right after a full load (measured here with a plain
// static_response config, no module of ours: 1 to 8 of 200 fresh
// connections dialed right after caddy.Load returned got EOF before any
// response); a client retries. Anything else fails at once.
func retryFreshConn(try func() error) error {
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		if err = try(); err == nil || !closedBeforeAnswer(err) {
			return err
		}
	}
	return err
}

func closedBeforeAnswer(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || strings.Contains(err.Error(), "connection reset by peer")
}

// ---- probe: a handler that records its lifecycle -------------------------

// probe is the test handler `http.handlers.gatehouse_test_probe`. It answers
// its body; it answers 500 if it runs before its Provision finished or after
// its Cleanup (a half-built or cleaned-up chain serving a request).
type probe struct {
	ID    string `json:"id"`
	Body  string `json:"body,omitempty"`
	Block bool   `json:"block,omitempty"` // wait for release(ID) before answering
	Fail  string `json:"fail,omitempty"`  // Provision fails with this
	// BlockProvision: Provision waits for releaseProvision(ID)
	BlockProvision bool `json:"block_provision,omitempty"`

	provisioned atomic.Bool
	cleaned     atomic.Bool
}

func (*probe) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{ID: "http.handlers.gatehouse_test_probe", New: func() caddy.Module { return new(probe) }}
}

// probeState is what the tests read about the probes of one id.
type probeState struct {
	provisions, cleanups atomic.Int64
	started              chan struct{} // a blocking request started
	release              chan struct{} // closed: blocking requests answer
	provisioning         chan struct{} // a blocking Provision started
	releaseProvision     chan struct{}
	cleanedUp            chan struct{} // one value per Cleanup
}

var (
	probesMu sync.Mutex
	probes   = map[string]*probeState{}
)

func probeOf(id string) *probeState {
	probesMu.Lock()
	defer probesMu.Unlock()
	p := probes[id]
	if p == nil {
		p = &probeState{
			started: make(chan struct{}, 100), release: make(chan struct{}),
			provisioning: make(chan struct{}, 100), releaseProvision: make(chan struct{}),
			cleanedUp: make(chan struct{}, 1000),
		}
		probes[id] = p
	}
	return p
}

func (p *probe) Provision(caddy.Context) error {
	st := probeOf(p.ID)
	st.provisions.Add(1)
	if p.BlockProvision {
		st.provisioning <- struct{}{}
		<-st.releaseProvision
	}
	if p.Fail != "" {
		return errors.New(p.Fail)
	}
	p.provisioned.Store(true)
	return nil
}

func (p *probe) Cleanup() error {
	p.cleaned.Store(true)
	st := probeOf(p.ID)
	st.cleanups.Add(1)
	st.cleanedUp <- struct{}{}
	return nil
}

func (p *probe) ServeHTTP(w http.ResponseWriter, r *http.Request, _ caddyhttp.Handler) error {
	if !p.provisioned.Load() || p.cleaned.Load() {
		http.Error(w, fmt.Sprintf("probe %s: provisioned=%v cleaned=%v", p.ID, p.provisioned.Load(), p.cleaned.Load()), http.StatusInternalServerError)
		return nil
	}
	if p.Block {
		st := probeOf(p.ID)
		st.started <- struct{}{}
		<-st.release
		if p.cleaned.Load() {
			http.Error(w, "probe "+p.ID+": cleaned up while a request ran on it", http.StatusInternalServerError)
			return nil
		}
	}
	_, err := io.WriteString(w, p.Body)
	return err
}

// probeHost is a host whose one route is a probe.
func probeHost(id, body string) string {
	return fmt.Sprintf(`{"routes":[{"handle":[{"handler":"gatehouse_test_probe","id":%q,"body":%q}]}]}`, id, body)
}

// waitChan waits for one value of ch, failing the test after a generous bound.
func waitChan(t testing.TB, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(20 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
}

// eventually polls cond until it holds, failing the test after a generous bound.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond) // not a condition: the poll interval of cond
	}
}

// ---- an upstream that upgrades connections and echoes --------------------

// echoUpstream answers an Upgrade request with 101 and then echoes every byte
// on the connection; it records what it read after the upgrade.
type echoUpstream struct {
	addr  string
	srv   *http.Server
	mu    sync.Mutex
	conns []*upstreamConn
}

type upstreamConn struct {
	mu     sync.Mutex
	got    bytes.Buffer
	closed chan struct{}
}

func (u *upstreamConn) received() []byte {
	u.mu.Lock()
	defer u.mu.Unlock()
	return bytes.Clone(u.got.Bytes())
}

func newEchoUpstream(t testing.TB) *echoUpstream {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u := &echoUpstream{addr: ln.Addr().String()}
	u.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Upgrade") == "" {
			_, _ = io.WriteString(w, "plain answer")
			return
		}
		conn, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		uc := &upstreamConn{closed: make(chan struct{})}
		u.mu.Lock()
		u.conns = append(u.conns, uc)
		u.mu.Unlock()
		_, _ = fmt.Fprintf(brw, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: %s\r\nConnection: Upgrade\r\n\r\n", r.Header.Get("Upgrade"))
		_ = brw.Flush()
		go func() {
			defer close(uc.closed)
			defer conn.Close()
			buf := make([]byte, 4096)
			for {
				n, err := brw.Read(buf)
				if n > 0 {
					uc.mu.Lock()
					uc.got.Write(buf[:n])
					uc.mu.Unlock()
					if _, werr := conn.Write(buf[:n]); werr != nil {
						return
					}
				}
				if err != nil {
					return
				}
			}
		}()
	})}
	go func() { _ = u.srv.Serve(ln) }()
	t.Cleanup(func() { _ = u.srv.Close() })
	return u
}

func (u *echoUpstream) conn(i int) *upstreamConn {
	u.mu.Lock()
	defer u.mu.Unlock()
	if i >= len(u.conns) {
		return nil
	}
	return u.conns[i]
}

// upgraded is a client connection upgraded through Caddy.
type upgraded struct {
	t    testing.TB
	conn net.Conn
	br   *bufio.Reader
}

// dialUpgrade opens a connection to the HTTP server and upgrades it
// (protocol "websocket" or another token) for host.
func (e *env) dialUpgrade(host, protocol string) *upgraded {
	e.t.Helper()
	var u *upgraded
	err := retryFreshConn(func() error {
		var err error
		u, err = e.tryDialUpgrade(host, protocol)
		return err
	})
	if err != nil {
		e.t.Fatalf("upgrade through %s: %v", host, err)
	}
	return u
}

func (e *env) tryDialUpgrade(host, protocol string) (*upgraded, error) {
	conn, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", e.http))
	if err != nil {
		return nil, err
	}
	extra := ""
	if protocol == "websocket" {
		extra = "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
	}
	if _, err := fmt.Fprintf(conn, "GET /stream HTTP/1.1\r\nHost: %s\r\nConnection: Upgrade\r\nUpgrade: %s\r\n%s\r\n", host, protocol, extra); err != nil {
		conn.Close()
		return nil, err
	}
	br := bufio.NewReader(conn)
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		conn.Close()
		return nil, err
	}
	if res.StatusCode != http.StatusSwitchingProtocols {
		b, _ := io.ReadAll(res.Body)
		conn.Close()
		return nil, fmt.Errorf("status %d %q", res.StatusCode, b)
	}
	e.t.Cleanup(func() { conn.Close() })
	return &upgraded{t: e.t, conn: conn, br: br}, nil
}

// echo sends msg and reads it back; it returns an error if the connection
// does not echo within a generous bound.
func (u *upgraded) echo(msg string) error {
	_ = u.conn.SetDeadline(time.Now().Add(10 * time.Second))
	defer func() { _ = u.conn.SetDeadline(time.Time{}) }()
	if _, err := io.WriteString(u.conn, msg); err != nil {
		return err
	}
	buf := make([]byte, len(msg))
	if _, err := io.ReadFull(u.br, buf); err != nil {
		return err
	}
	if string(buf) != msg {
		return fmt.Errorf("echo: got %q, want %q", buf, msg)
	}
	return nil
}

func (u *upgraded) mustEcho(msg string) {
	u.t.Helper()
	if err := u.echo(msg); err != nil {
		u.t.Fatalf("upgraded connection: %v", err)
	}
}

// readUntilClosed reads what is left on the connection until it is closed,
// within a bound; it returns the bytes and when the close was seen.
func (u *upgraded) readUntilClosed(bound time.Duration) ([]byte, time.Time, error) {
	_ = u.conn.SetReadDeadline(time.Now().Add(bound))
	var got bytes.Buffer
	buf := make([]byte, 1024)
	for {
		n, err := u.br.Read(buf)
		got.Write(buf[:n])
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) || strings.Contains(err.Error(), "reset") {
				return got.Bytes(), time.Now(), nil
			}
			return got.Bytes(), time.Now(), err
		}
	}
}
