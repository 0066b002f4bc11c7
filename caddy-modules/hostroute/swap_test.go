package hostroute

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
)

// uniq makes probe ids unique per test run (-count runs a test again; the
// probes' state is global).
func uniq(t testing.TB, id string) string {
	n, _ := testRuns.LoadOrStore(t, testRunSeq.Add(1))
	return fmt.Sprintf("%s#%d/%s", t.Name(), n, id)
}

var (
	testRuns   sync.Map // testing.TB -> run number
	testRunSeq atomic.Int64
)

// A host put at run time is swapped in whole under concurrent requests: no
// request is served by a chain that is not fully provisioned or already
// cleaned up (the probe answers 500 then), every answer is one of the
// versions put, and once a put has returned, requests started after it see
// that version or a later one.
func TestPutSwapUnderConcurrentRequests(t *testing.T) {
	e := newEnv(t)
	const hosts = 8
	const versions = 30
	var sb strings.Builder
	sb.WriteString(`{"handler":"gatehouse_hostroute","hosts":{`)
	for i := 0; i < hosts; i++ {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `"h%d.example.com": %s`, i, probeHost(uniq(t, fmt.Sprintf("h%d-v0", i)), fmt.Sprintf("h%d v0", i)))
	}
	sb.WriteString(`}}`)
	e.load(sb.String(), "")

	var committed [hosts]atomic.Int64 // the version whose put has returned
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var served atomic.Int64
	errs := make(chan error, 100)
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 1))
			for {
				select {
				case <-stop:
					return
				default:
				}
				i := rng.IntN(hosts)
				min := committed[i].Load()
				status, body, err := e.tryGet(fmt.Sprintf("h%d.example.com", i), "/")
				if err != nil {
					errs <- err
					return
				}
				var hi int
				var v int64
				if _, err := fmt.Sscanf(body, "h%d v%d", &hi, &v); status != 200 || err != nil || hi != i {
					errs <- fmt.Errorf("h%d: %d %q", i, status, body)
					return
				}
				if v < min {
					errs <- fmt.Errorf("h%d: version %d after the put of version %d returned", i, v, min)
					return
				}
				served.Add(1)
			}
		}(g)
	}
	for v := 1; v <= versions; v++ {
		for i := 0; i < hosts; i++ {
			e.mustAdmin(http.MethodPut, fmt.Sprintf("/gatehouse/hostroute/maps/srv/hosts/h%d.example.com", i),
				probeHost(uniq(t, fmt.Sprintf("h%d-v%d", i, v)), fmt.Sprintf("h%d v%d", i, v)))
			committed[i].Store(int64(v))
		}
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	t.Logf("%d requests served during %d puts", served.Load(), hosts*versions)

	// every replaced runtime chain was cleaned up exactly once; the last
	// versions are live; the chains of the full load are Caddy's to clean up
	// at the next unload (not yet)
	for i := 0; i < hosts; i++ {
		for v := 0; v <= versions; v++ {
			st := probeOf(uniq(t, fmt.Sprintf("h%d-v%d", i, v)))
			want := int64(1)
			if v == 0 || v == versions {
				want = 0
			}
			if want == 1 {
				// its last request may still be running the cleanup
				eventually(t, "cleanup of a replaced chain", func() bool { return st.cleanups.Load() >= 1 })
			}
			if got := st.cleanups.Load(); got != want || st.provisions.Load() != 1 {
				t.Errorf("h%d v%d: provisioned %d, cleaned up %d times, want 1 and %d", i, v, st.provisions.Load(), got, want)
			}
		}
	}
	// unloading the config cleans up the live runtime chains and Caddy the
	// loaded ones, each once
	_ = caddy.Stop()
	for i := 0; i < hosts; i++ {
		for _, v := range []int{0, versions} {
			st := probeOf(uniq(t, fmt.Sprintf("h%d-v%d", i, v)))
			if got := st.cleanups.Load(); got != 1 {
				t.Errorf("h%d v%d after unload: cleaned up %d times", i, v, got)
			}
		}
	}
}

// The replaced chain is cleaned up once no request runs on it, and not
// before: a long request in flight on it completes on the old chain.
func TestReplacedChainCleanedUpWhenIdle(t *testing.T) {
	e := newEnv(t)
	e.load(`{"handler":"gatehouse_hostroute","hosts":{"a.example.com":`+static("initial")+`}}`, "")
	v1, v2, v3 := uniq(t, "v1"), uniq(t, "v2"), uniq(t, "v3")
	blocking := func(id, body string) string {
		return fmt.Sprintf(`{"routes":[{"match":[{"path":["/slow"]}],"handle":[{"handler":"gatehouse_test_probe","id":%q,"body":%q,"block":true}]},{"handle":[{"handler":"gatehouse_test_probe","id":%q,"body":%q}]}]}`, id+"-slow", body+" slow", id, body)
	}
	put := func(body string) {
		e.mustAdmin(http.MethodPut, "/gatehouse/hostroute/maps/srv/hosts/a.example.com", body)
	}

	// an idle replaced chain is cleaned up before the put answers
	put(blocking(v1, "v1"))
	put(blocking(v2, "v2"))
	if probeOf(v1).cleanups.Load() != 1 || probeOf(v1+"-slow").cleanups.Load() != 1 {
		t.Fatalf("idle chain v1 not cleaned up by the put that replaced it")
	}

	// a request in flight on v2 holds v2 while v3 serves new requests
	slow := make(chan string, 1)
	go func() {
		status, body, err := e.tryGet("a.example.com", "/slow")
		slow <- fmt.Sprintf("%d %s %v", status, body, err)
	}()
	waitChan(t, probeOf(v2+"-slow").started, "the slow request to start")
	put(blocking(v3, "v3"))
	if _, got := e.get("a.example.com", "/"); got != "v3" {
		t.Errorf("new request after the put: %q", got)
	}
	if n := probeOf(v2).cleanups.Load() + probeOf(v2+"-slow").cleanups.Load(); n != 0 {
		t.Fatalf("v2 cleaned up while a request runs on it (%d cleanups)", n)
	}
	close(probeOf(v2 + "-slow").release)
	if got := <-slow; got != "200 v2 slow <nil>" {
		t.Errorf("the request in flight during the put: %s", got)
	}
	waitChan(t, probeOf(v2).cleanedUp, "cleanup of v2 after its last request")
	waitChan(t, probeOf(v2+"-slow").cleanedUp, "cleanup of v2's slow handler")
	if probeOf(v3).cleanups.Load() != 0 {
		t.Error("the live chain v3 was cleaned up")
	}

	// a deleted host drains the same way
	go func() {
		status, body, err := e.tryGet("a.example.com", "/slow")
		slow <- fmt.Sprintf("%d %s %v", status, body, err)
	}()
	waitChan(t, probeOf(v3+"-slow").started, "the slow request on v3")
	e.mustAdmin(http.MethodDelete, "/gatehouse/hostroute/maps/srv/hosts/a.example.com", "")
	if status, _ := e.get("a.example.com", "/"); status != 404 {
		t.Errorf("deleted host: %d", status)
	}
	if probeOf(v3).cleanups.Load() != 0 {
		t.Fatal("v3 cleaned up while a request runs on it")
	}
	close(probeOf(v3 + "-slow").release)
	if got := <-slow; got != "200 v3 slow <nil>" {
		t.Errorf("the request in flight during the delete: %s", got)
	}
	waitChan(t, probeOf(v3).cleanedUp, "cleanup of v3 after its last request")
}

// A full load cleans up the runtime chains of the old configuration, the
// draining ones too, once, and the admin API then talks to the new one.
func TestFullLoadCleansUpAndSwitches(t *testing.T) {
	e := newEnv(t)
	e.load(`{"handler":"gatehouse_hostroute","hosts":{"a.example.com":`+static("a")+`}}`, "")
	live, draining := uniq(t, "live"), uniq(t, "draining")
	e.mustAdmin(http.MethodPut, "/gatehouse/hostroute/maps/srv/hosts/live.example.com", probeHost(live, "live"))
	e.mustAdmin(http.MethodPut, "/gatehouse/hostroute/maps/srv/hosts/d.example.com",
		fmt.Sprintf(`{"routes":[{"handle":[{"handler":"gatehouse_test_probe","id":%q,"body":"d","block":true}]}]}`, draining))
	done := make(chan string, 1)
	go func() {
		status, body, err := e.tryGet("d.example.com", "/")
		done <- fmt.Sprintf("%d %s %v", status, body, err)
	}()
	waitChan(t, probeOf(draining).started, "the request on d")
	e.mustAdmin(http.MethodDelete, "/gatehouse/hostroute/maps/srv/hosts/d.example.com", "")
	old := e.hostMap("srv")

	e.load(`{"handler":"gatehouse_hostroute","hosts":{"b.example.com":`+static("b")+`}}`, "")
	if probeOf(live).cleanups.Load() != 1 || probeOf(draining).cleanups.Load() != 1 {
		t.Errorf("after the full load: live cleaned up %d times, draining %d times", probeOf(live).cleanups.Load(), probeOf(draining).cleanups.Load())
	}
	close(probeOf(draining).release)
	<-done // answered 500 by the probe (it was cleaned up) or 200: the unload does not wait for it
	if probeOf(draining).cleanups.Load() != 1 {
		t.Error("draining chain cleaned up twice")
	}
	if e.hostMap("srv") == old {
		t.Fatal("the admin API still sees the old host map")
	}
	hosts := e.mustAdmin(http.MethodGet, "/gatehouse/hostroute/maps/srv/hosts", "")["hosts"].(map[string]any)
	if _, ok := hosts["b.example.com"]; !ok || len(hosts) != 1 {
		t.Errorf("hosts after the full load: %v", hosts)
	}
	e.mustAdmin(http.MethodPut, "/gatehouse/hostroute/maps/srv/hosts/c.example.com", static("c"))
	if _, got := e.get("c.example.com", "/"); got != "c" {
		t.Errorf("put after the full load: %q", got)
	}
	if old.hostEntry("c.example.com", false) != nil {
		t.Error("the put landed in the old configuration")
	}
}

// A put that is still provisioning when a full load replaces the
// configuration is answered 503 with Retry-After (it did not land in the
// running configuration), and the new configuration does not have it.
func TestPutRacingFullLoadIsRefused(t *testing.T) {
	e := newEnv(t)
	e.load(`{"handler":"gatehouse_hostroute","hosts":{"a.example.com":`+static("a")+`}}`, "")
	id := uniq(t, "slowprov")
	type answer struct {
		status int
		out    map[string]any
		hdr    http.Header
	}
	putDone := make(chan answer, 1)
	go func() {
		status, out, hdr := e.adminCall(http.MethodPut, "/gatehouse/hostroute/maps/srv/hosts/late.example.com",
			fmt.Sprintf(`{"routes":[{"handle":[{"handler":"gatehouse_test_probe","id":%q,"body":"late","block_provision":true}]}]}`, id))
		putDone <- answer{status, out, hdr}
	}()
	waitChan(t, probeOf(id).provisioning, "the put to provision")
	oldReg, _ := activeRegistry()

	loadDone := make(chan error, 1)
	go func() {
		loadDone <- caddy.Load(e.config(`{"handler":"gatehouse_hostroute","hosts":{"b.example.com":`+static("b")+`}}`, ""), true)
	}()
	// the load swaps the new configuration in, then stops the old one, which
	// waits for the change in progress
	deadline := time.Now().Add(20 * time.Second)
	for {
		if reg, err := activeRegistry(); err == nil && reg != oldReg {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the full load did not swap in")
		}
		time.Sleep(time.Millisecond) // not a condition: polling for the swap above
	}
	close(probeOf(id).releaseProvision)
	a := <-putDone
	if err := <-loadDone; err != nil {
		t.Fatal(err)
	}
	if a.status != http.StatusServiceUnavailable || a.hdr.Get("Retry-After") != "1" || !strings.Contains(a.out["error"].(string), "the configuration was replaced (a full load) during the change; nothing was applied to the running configuration, retry") {
		t.Errorf("put racing the load: %d %v %v", a.status, a.out, a.hdr)
	}
	if status, _ := e.get("late.example.com", "/"); status != 404 {
		t.Errorf("late.example.com answers %d in the new configuration", status)
	}
	// the old registry refuses further changes
	if _, err := oldReg.apply(ChangeSet{Maps: map[string]MapChange{"srv": {Delete: []string{"a.example.com"}}}}); err != errReplaced {
		t.Errorf("change on the stopped registry: %v", err)
	}
}

// A host whose new routes fail to provision is refused whole; the old routes
// keep serving; in a change set, nothing is applied and what was provisioned
// for it is cleaned up.
func TestFailingHostRefused(t *testing.T) {
	e := newEnv(t)
	e.load(`{"handler":"gatehouse_hostroute","hosts":{"a.example.com":`+static("a v1")+`,"b.example.com":`+static("b v1")+`}}`, "")
	ok1, ok2, bad := uniq(t, "ok1"), uniq(t, "ok2"), uniq(t, "bad")
	failing := fmt.Sprintf(`{"routes":[{"handle":[{"handler":"gatehouse_test_probe","id":%q,"body":"fine"}]},{"handle":[{"handler":"gatehouse_test_probe","id":%q,"fail":"upstream address is not allowed"}]}]}`, ok1, bad)

	status, out, _ := e.adminCall(http.MethodPut, "/gatehouse/hostroute/maps/srv/hosts/a.example.com", failing)
	if status != 400 || !strings.Contains(out["error"].(string), `host map "srv", host "a.example.com": setting up routes: route 1: loading handler modules: position 0: loading module 'gatehouse_test_probe': provision http.handlers.gatehouse_test_probe: upstream address is not allowed`) {
		t.Errorf("failing put: %d %v", status, out)
	}
	if _, got := e.get("a.example.com", "/"); got != "a v1" {
		t.Errorf("old routes after the refused put: %q", got)
	}
	if probeOf(ok1).cleanups.Load() != 1 {
		t.Errorf("the provisioned part of the refused host was cleaned up %d times", probeOf(ok1).cleanups.Load())
	}

	// a change set with one good and one failing host: nothing changes
	status, out, _ = e.adminCall(http.MethodPost, "/gatehouse/hostroute/changes", fmt.Sprintf(`{"maps":{"srv":{"put":{"b.example.com":%s,"c.example.com":%s},"delete":["a.example.com"]}}}`,
		probeHost(ok2, "b v2"), strings.ReplaceAll(failing, ok1, ok1+"-again")))
	if status != 400 || !strings.Contains(out["error"].(string), `host "c.example.com"`) {
		t.Errorf("failing change set: %d %v", status, out)
	}
	for host, want := range map[string]string{"a.example.com": "a v1", "b.example.com": "b v1"} {
		if _, got := e.get(host, "/"); got != want {
			t.Errorf("%s after the refused change set: %q", host, got)
		}
	}
	if status, _ := e.get("c.example.com", "/"); status != 404 {
		t.Errorf("c.example.com answers %d", status)
	}
	if probeOf(ok2).provisions.Load() != 1 || probeOf(ok2).cleanups.Load() != 1 {
		t.Errorf("the good host of the refused change set: provisioned %d, cleaned up %d", probeOf(ok2).provisions.Load(), probeOf(ok2).cleanups.Load())
	}
}

// Concurrent puts and deletes through the admin API: each writer owns some
// keys; at the end the table, the hashes and the answers are exactly the
// last change of each key, and every runtime chain that is not live was
// cleaned up once.
func TestConcurrentPutsAndDeletes(t *testing.T) {
	e := newEnv(t)
	e.load(`{"handler":"gatehouse_hostroute","hosts":{}}`, "")
	const writers, keysEach, rounds = 4, 5, 25
	type last struct {
		body    string
		deleted bool
		id      string
	}
	final := make([]map[string]last, writers)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var ids []string
	for w := 0; w < writers; w++ {
		final[w] = map[string]last{}
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			for r := 0; r < rounds; r++ {
				// a change set of 1-3 of this writer's keys, puts and deletes
				cs := map[string]any{}
				put := map[string]json.RawMessage{}
				var del []string
				changed := map[string]last{}
				for _, k := range rng.Perm(keysEach)[:1+rng.IntN(3)] {
					key := fmt.Sprintf("w%d-k%d.example.com", w, k)
					if rng.IntN(3) == 0 {
						del = append(del, key)
						changed[key] = last{deleted: true}
						continue
					}
					id := uniq(t, fmt.Sprintf("w%d-r%d-k%d", w, r, k))
					body := fmt.Sprintf("%s r%d", key, r)
					put[key] = json.RawMessage(probeHost(id, body))
					changed[key] = last{body: body, id: id}
					mu.Lock()
					ids = append(ids, id)
					mu.Unlock()
				}
				cs["srv"] = map[string]any{"put": put, "delete": del}
				b, _ := json.Marshal(map[string]any{"maps": cs})
				status, out, _ := e.adminCall(http.MethodPost, "/gatehouse/hostroute/changes", string(b))
				if status != 200 {
					t.Errorf("writer %d round %d: %d %v", w, r, status, out)
					return
				}
				for k, v := range changed {
					final[w][k] = v
				}
			}
		}(w)
	}
	wg.Wait()

	hosts := e.mustAdmin(http.MethodGet, "/gatehouse/hostroute/maps/srv/hosts", "")["hosts"].(map[string]any)
	liveIDs := map[string]bool{}
	want := 0
	for w := range final {
		for key, l := range final[w] {
			status, body := e.get(key, "/")
			if l.deleted {
				if status != 404 || hosts[key] != nil {
					t.Errorf("%s deleted last: %d %q, hash %v", key, status, body, hosts[key])
				}
				continue
			}
			want++
			liveIDs[l.id] = true
			h, _ := hostHash([]byte(probeHost(l.id, l.body)))
			if status != 200 || body != l.body || hosts[key] != h {
				t.Errorf("%s: %d %q hash %v, want %q %s", key, status, body, hosts[key], l.body, h)
			}
		}
	}
	if len(hosts) != want {
		t.Errorf("%d hosts in the map, want %d", len(hosts), want)
	}
	for _, id := range ids {
		st := probeOf(id)
		wantCleanups := int64(1)
		if liveIDs[id] {
			wantCleanups = 0
		}
		if st.provisions.Load() != 1 || st.cleanups.Load() != wantCleanups {
			t.Errorf("%s: provisioned %d, cleaned up %d, want 1 and %d", id, st.provisions.Load(), st.cleanups.Load(), wantCleanups)
		}
	}
}

// An upgraded (WebSocket) connection through a host survives puts and
// deletes of other hosts, and a put of its own host too (it drains on the
// old chain); the replaced chain is cleaned up when the connection ends.
func TestUpgradedConnectionSurvivesPuts(t *testing.T) {
	e := newEnv(t)
	up := newEchoUpstream(t)
	proxy := fmt.Sprintf(`{"routes":[{"handle":[{"handler":"reverse_proxy","upstreams":[{"dial":%q}]}]}]}`, up.addr)
	e.load(`{"handler":"gatehouse_hostroute","hosts":{"ws.example.com":`+proxy+`,"b.example.com":`+static("b")+`}}`, "")

	ws := e.dialUpgrade("ws.example.com", "websocket")
	ws.mustEcho("hello")
	for i, c := range []struct{ method, path, body string }{
		{"PUT", "/gatehouse/hostroute/maps/srv/hosts/b.example.com", static("b v2")},
		{"PUT", "/gatehouse/hostroute/maps/srv/hosts/c.example.com", proxy},
		{"PUT", "/gatehouse/hostroute/maps/srv/hosts/b.example.com", proxy},
		{"DELETE", "/gatehouse/hostroute/maps/srv/hosts/b.example.com", ""},
		{"POST", "/gatehouse/hostroute/changes", `{"maps":{"srv":{"put":{"d.example.com":` + proxy + `},"delete":["c.example.com"]}}}`},
	} {
		e.mustAdmin(c.method, c.path, c.body)
		ws.mustEcho(fmt.Sprintf("after change %d", i))
	}

	// its own host changes: the connection goes on on the old chain; new
	// connections use the new one
	probeID := uniq(t, "ws-v2")
	e.mustAdmin(http.MethodPut, "/gatehouse/hostroute/maps/srv/hosts/ws.example.com",
		fmt.Sprintf(`{"routes":[{"match":[{"path":["/"]}],"handle":[{"handler":"gatehouse_test_probe","id":%q,"body":"marker"}]},{"handle":[{"handler":"reverse_proxy","upstreams":[{"dial":%q}]}]}]}`, probeID, up.addr))
	ws.mustEcho("after a put of its own host")
	if _, got := e.get("ws.example.com", "/"); got != "marker" {
		t.Errorf("new request after the put: %q", got)
	}
	ws2 := e.dialUpgrade("ws.example.com", "websocket")
	ws2.mustEcho("second connection")

	// a third version: the second (runtime) chain is replaced while ws2
	// runs on it, and cleaned up when ws2 ends
	e.mustAdmin(http.MethodPut, "/gatehouse/hostroute/maps/srv/hosts/ws.example.com", proxy)
	ws2.mustEcho("still open")
	if probeOf(probeID).cleanups.Load() != 0 {
		t.Fatal("the chain of ws2 was cleaned up while ws2 is open")
	}
	ws2.conn.Close()
	waitChan(t, probeOf(probeID).cleanedUp, "cleanup of the chain after its upgraded connection ended")
	ws.mustEcho("the first connection still echoes")
}

// The assumption provisionRuntimeHost relies on: caddy.NewContext runs the
// parent context's cleanup functions whenever the child is cancelled (Caddy
// 2.11, context.go). The handler's context must have none, or every runtime
// host's cleanup would run them again.
func TestHandlerContextHasNoCleanupFuncs(t *testing.T) {
	e := newEnv(t)
	e.https = freePort(t)
	e.load(testMap(), testMap())
	for _, name := range []string{"srv", "tls"} {
		f := reflect.ValueOf(e.hostMap(name).ctx).FieldByName("cleanupFuncs")
		if !f.IsValid() {
			t.Fatal("caddy.Context has no field cleanupFuncs any more: re-check how NewContext cleans up")
		}
		if f.Len() != 0 {
			t.Errorf("%s: the handler's context has %d cleanup funcs", name, f.Len())
		}
	}
}

// Runtime hosts get the light context (see hostctx.go), not caddy.NewContext
// with its own metrics registry: if this fails, caddy.Context changed shape.
func TestHostContextIsLight(t *testing.T) {
	if !lightHostContext {
		t.Fatal("caddy.Context no longer has the fields newHostContext sets (moduleInstances, cleanupFuncs, ancestry): runtime hosts fall back to caddy.NewContext (~22 KB each)")
	}
}
