package bodiless

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
)

// server records the matcher's verdict for each request it parses.
func server(t *testing.T, h2 bool) (*httptest.Server, *[]string) {
	t.Helper()
	var got []string
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ok, err := Match{}.MatchWithError(r)
		if err != nil {
			t.Error(err)
		}
		body, _ := io.ReadAll(r.Body)
		got = append(got, fmt.Sprintf("%s %v %d", r.Method, ok, len(body)))
	}))
	if h2 {
		srv.EnableHTTP2 = true
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	return srv, &got
}

// raw sends one HTTP/1.1 request as written and reads the answer's status line.
func raw(t *testing.T, addr, req string) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	n, _ := c.Read(buf)
	if !strings.HasPrefix(string(buf[:n]), "HTTP/1.1 200") {
		t.Fatalf("answer %q", buf[:n])
	}
}

func TestHTTP1(t *testing.T) {
	srv, got := server(t, false)
	addr := srv.Listener.Addr().String()
	raw(t, addr, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	raw(t, addr, "DELETE / HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
	raw(t, addr, "DELETE / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello")
	raw(t, addr, "GET / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n0\r\n\r\n")
	raw(t, addr, "PUT / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n3\r\nabc\r\n0\r\n\r\n")
	want := []string{"GET true 0", "DELETE true 0", "DELETE false 5", "GET false 0", "PUT false 3"}
	if fmt.Sprint(*got) != fmt.Sprint(want) {
		t.Fatalf("got %q, want %q", *got, want)
	}
}

// HTTP/2 has no Content-Length to look at when a body is streamed: the
// headers frame ending the stream is what says "no content".
func TestHTTP2(t *testing.T) {
	srv, got := server(t, true)
	c := srv.Client()
	do := func(method string, body io.Reader) {
		req, _ := http.NewRequest(method, srv.URL, body)
		res, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.ProtoMajor != 2 {
			t.Fatalf("protocol %s", res.Proto)
		}
	}
	do("GET", nil)
	do("OPTIONS", http.NoBody)
	do("DELETE", bytes.NewReader([]byte("abc"))) // Content-Length: 3
	pr, pw := io.Pipe()
	go func() { pw.Write([]byte("streamed")); pw.Close() }()
	do("GET", pr) // a body of unknown length: no Content-Length
	want := []string{"GET true 0", "OPTIONS true 0", "DELETE false 3", "GET false 8"}
	if fmt.Sprint(*got) != fmt.Sprint(want) {
		t.Fatalf("got %q, want %q", *got, want)
	}
}

func TestCaddyfile(t *testing.T) {
	var m Match
	if err := m.UnmarshalCaddyfile(caddyfile.NewTestDispenser("gatehouse_bodiless")); err != nil {
		t.Fatal(err)
	}
	if err := m.UnmarshalCaddyfile(caddyfile.NewTestDispenser("gatehouse_bodiless extra")); err == nil {
		t.Fatal("an argument was accepted")
	}
}

func BenchmarkBodiless(b *testing.B) {
	r := httptest.NewRequest("GET", "/", nil)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if !(Match{}).Match(r) {
			b.Fatal("no match")
		}
	}
}
