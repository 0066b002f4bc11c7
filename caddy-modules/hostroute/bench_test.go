package hostroute

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
)

// plainHost is the host entry the sidecar renders for a plain route: the
// upstream in a variable, then the server's shared reverse_proxy.
func plainHost(i int) string {
	return fmt.Sprintf(`{"routes":[{"handle":[{"handler":"vars","gatehouse_upstream":"10.8.%d.%d:8080"},{"handler":"invoke","name":"gatehouse_proxy"}]}]}`, i/250%250, i%250+1)
}

// proxyHost is a host with a reverse_proxy of its own (what a route with
// options, forward auth or a circuit breaker gets).
func proxyHost(i int) string {
	return fmt.Sprintf(`{"routes":[{"handle":[{"handler":"reverse_proxy","upstreams":[{"dial":"10.8.%d.%d:8080"}]}]}]}`, i/250%250, i%250+1)
}

func plainHostsMap(n int) string {
	var b strings.Builder
	b.WriteString(`{"handler":"gatehouse_hostroute","metrics":true,"hosts":{`)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"host%d.example.com":%s`, i, plainHost(i))
	}
	b.WriteString(`}}`)
	return b.String()
}

// BenchmarkPut: one host changed at run time in a loaded configuration of n
// hosts, through Registry.apply (what the admin API does once the body is
// decoded): replace an existing host (the sidecar's plain shape, or with a
// reverse_proxy of its own), create a new one and delete it, and a PUT over
// HTTP through Caddy's admin listener. ns/op should not grow with n.
// retained-B/host: heap kept per host after 2,000 puts of new hosts.
func BenchmarkPut(b *testing.B) {
	for _, n := range []int{1000, 10000, 100000} {
		e := newEnv(b)
		e.named = `{"gatehouse_proxy": {"handle": [{"handler":"reverse_proxy","upstreams":[{"dial":"{http.vars.gatehouse_upstream}"}]}]}}`
		e.load(plainHostsMap(n), "")
		reg, err := activeRegistry()
		if err != nil {
			b.Fatal(err)
		}
		put := func(key, body string) {
			if _, err := reg.apply(ChangeSet{Maps: map[string]MapChange{"srv": {Put: map[string]json.RawMessage{key: json.RawMessage(body)}}}}); err != nil {
				b.Fatal(err)
			}
		}
		b.Run(fmt.Sprintf("hosts=%d/replace_plain", n), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				put(fmt.Sprintf("host%d.example.com", i%n), plainHost(i+1))
			}
		})
		b.Run(fmt.Sprintf("hosts=%d/replace_reverse_proxy", n), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				put(fmt.Sprintf("host%d.example.com", i%n), proxyHost(i+1))
			}
		})
		b.Run(fmt.Sprintf("hosts=%d/create_and_delete", n), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				key := fmt.Sprintf("new%d.example.com", i)
				put(key, plainHost(i))
				if _, err := reg.apply(ChangeSet{Maps: map[string]MapChange{"srv": {Delete: []string{key}}}}); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("hosts=%d/admin_http_put", n), func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				e.mustAdmin(http.MethodPut, fmt.Sprintf("/gatehouse/hostroute/maps/srv/hosts/host%d.example.com", i%n), plainHost(i+2))
			}
		})
		if n == 1000 {
			b.Run("retained_per_runtime_host", func(b *testing.B) {
				for b.Loop() {
					var m0, m1 runtime.MemStats
					runtime.GC()
					runtime.ReadMemStats(&m0)
					for i := 0; i < 2000; i++ {
						put(fmt.Sprintf("extra%d.example.com", i), proxyHost(i))
					}
					runtime.GC()
					runtime.ReadMemStats(&m1)
					b.ReportMetric(float64(m1.HeapInuse-m0.HeapInuse)/2000, "retained-B/host")
					for i := 0; i < 2000; i++ {
						if _, err := reg.apply(ChangeSet{Maps: map[string]MapChange{"srv": {Delete: []string{fmt.Sprintf("extra%d.example.com", i)}}}}); err != nil {
							b.Fatal(err)
						}
					}
				}
			})
		}
	}
}

// BenchmarkServeWhilePutting: requests to one host (parallel, through the
// handler) while another goroutine puts other hosts without pause, at
// 100,000 hosts: what a stream of changes costs the requests.
func BenchmarkServeWhilePutting(b *testing.B) {
	const n = 100000
	e := newEnv(b)
	e.named = `{"gatehouse_proxy": {"handle": [{"handler":"static_response","body":"ok"}]}}`
	e.load(plainHostsMap(n), "")
	reg, _ := activeRegistry()
	h := reg.hostMap("srv")
	for _, putting := range []bool{false, true} {
		b.Run(fmt.Sprintf("putting=%v", putting), func(b *testing.B) {
			var stop atomic.Bool
			done := make(chan int)
			go func() {
				puts := 0
				for putting && !stop.Load() {
					if _, err := reg.apply(ChangeSet{Maps: map[string]MapChange{"srv": {Put: map[string]json.RawMessage{fmt.Sprintf("host%d.example.com", 1+puts%(n-1)): json.RawMessage(plainHost(puts))}}}}); err != nil {
						panic(err)
					}
					puts++
				}
				done <- puts
			}()
			b.RunParallel(func(pb *testing.PB) {
				w := &discardWriter{h: make(http.Header)}
				req := httptest.NewRequest(http.MethodGet, "http://placeholder/", nil)
				req.Host = "host0.example.com"
				req = prepare(req, w)
				for pb.Next() {
					// the host's chain ends in invoke, which needs the server:
					// measure the lookup and reference instead of the chain
					en := h.acquire(req.Host)
					if en == nil {
						b.Fatal("not found")
					}
					en.release()
				}
			})
			stop.Store(true)
			b.ReportMetric(float64(<-done), "puts")
		})
	}
}

// BenchmarkServeLoaded: requests to one host through Caddy's real listener
// (keep-alive clients in parallel, a static answer at the end of the shared
// route), with 1 and with 100,000 hosts loaded and metrics on: what the size
// of the host map costs a request, Go's garbage collector included (the heap
// of a big configuration is marked on every cycle). ns/op should not grow
// with n; heap-MB is the live heap after the load.
func BenchmarkServeLoaded(b *testing.B) {
	for _, n := range []int{1, 100000} {
		e := newEnv(b)
		e.named = `{"gatehouse_proxy": {"handle": [{"handler":"static_response","body":"ok"}]}}`
		e.load(plainHostsMap(n), "")
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		url := fmt.Sprintf("http://127.0.0.1:%d/", e.http)
		tr := &http.Transport{MaxIdleConnsPerHost: 64}
		client := &http.Client{Transport: tr}
		b.Run(fmt.Sprintf("hosts=%d", n), func(b *testing.B) {
			b.SetParallelism(16)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					req, _ := http.NewRequest(http.MethodGet, url, nil)
					req.Host = "host0.example.com"
					res, err := client.Do(req)
					if err != nil {
						b.Fatal(err)
					}
					_, _ = io.Copy(io.Discard, res.Body)
					res.Body.Close()
					if res.StatusCode != 200 {
						b.Fatalf("status %d", res.StatusCode)
					}
				}
			})
			b.ReportMetric(float64(ms.HeapAlloc)/1e6, "heap-MB")
		})
		tr.CloseIdleConnections()
	}
}
