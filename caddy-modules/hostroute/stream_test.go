package hostroute

import (
	"bytes"
	"fmt"
	"net/http"
	"testing"
	"time"
)

// What a full load (POST /load) does to an upgraded connection through
// reverse_proxy, with and without stream_close_delay (Caddy 2.11.9): the new
// configuration takes over the listeners; the old http app's Stop shuts its
// servers down gracefully, which does not track hijacked connections (so
// grace_period does not matter to them); then the old configuration's
// context is cancelled and every reverse_proxy of it runs Cleanup:
//   - without stream_close_delay it closes every upgraded connection it
//     holds at once: for a WebSocket (Upgrade: websocket) it first writes a
//     close frame with status 1001 "going away" to the client (unmasked) and
//     to the upstream (masked), then closes both sockets; another upgrade
//     protocol is just closed;
//   - with stream_close_delay D it starts a timer instead: the connection
//     goes on (both directions) through the old handler for D after the load,
//     then is closed exactly as above. The timer is stopped if the
//     connections end by themselves first.
//
// The same holds for a reverse_proxy in a server's named route (the
// sidecar's shared gatehouse_proxy, reached with invoke), in a host of the
// loaded configuration, and in a host put at run time (its own context is
// cancelled when the configuration is unloaded).
func TestStreamCloseDelayOnFullLoad(t *testing.T) {
	closeFrame := []byte{0x88, 0x02, 0x03, 0xe9} // FIN + close, 2 bytes: 1001
	for _, c := range []struct {
		name     string
		delay    string // stream_close_delay, "" for none
		protocol string
		via      string // "host": reverse_proxy in the host; "named": invoke of a named route; "put": a host put at run time
	}{
		{"websocket, no delay", "", "websocket", "host"},
		{"other upgrade, no delay", "", "tcp-echo", "host"},
		{"websocket, no delay, shared named route", "", "websocket", "named"},
		{"websocket, delay", "1500ms", "websocket", "host"},
		{"websocket, delay, shared named route", "1500ms", "websocket", "named"},
		{"websocket, delay, host put at run time", "1500ms", "websocket", "put"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			up := newEchoUpstream(t)
			delay := ""
			if c.delay != "" {
				delay = fmt.Sprintf(`,"stream_close_delay":%q`, c.delay)
			}
			proxy := fmt.Sprintf(`{"routes":[{"handle":[{"handler":"reverse_proxy","upstreams":[{"dial":%q}]%s}]}]}`, up.addr, delay)
			if c.via == "named" {
				e.named = fmt.Sprintf(`{"shared": {"handle": [{"handler":"reverse_proxy","upstreams":[{"dial":"{http.vars.upstream}"}]%s}]}}`, delay)
				proxy = fmt.Sprintf(`{"routes":[{"handle":[{"handler":"vars","upstream":%q},{"handler":"invoke","name":"shared"}]}]}`, up.addr)
			}
			initial := proxy
			if c.via == "put" {
				initial = static("not yet")
			}
			e.load(`{"handler":"gatehouse_hostroute","hosts":{"ws.example.com":`+initial+`}}`, "")
			if c.via == "put" {
				e.mustAdmin(http.MethodPut, "/gatehouse/hostroute/maps/srv/hosts/ws.example.com", proxy)
			}
			ws := e.dialUpgrade("ws.example.com", c.protocol)
			ws.mustEcho("before the load")

			// a full load of a changed configuration (one more host)
			loaded := time.Now()
			e.load(`{"handler":"gatehouse_hostroute","hosts":{"ws.example.com":`+proxy+`,"other.example.com":`+static("o")+`}}`, "")

			if c.delay != "" {
				ws.mustEcho("during the delay")
			}
			rest, closedAt, err := ws.readUntilClosed(15 * time.Second)
			if err != nil {
				t.Fatalf("the connection was not closed: %v (read %x)", err, rest)
			}
			after := closedAt.Sub(loaded)
			t.Logf("closed %v after the load; read %x", after.Round(time.Millisecond), rest)
			if c.protocol == "websocket" {
				// the test's upstream echoes everything, so the masked close
				// frame Caddy sends it may come back first
				if len(rest) == 12 && rest[0] == 0x88 && rest[1] == 0x82 {
					rest = rest[8:]
				}
				if !bytes.Equal(rest, closeFrame) {
					t.Errorf("client got %x before the close, want the close frame %x (1001 going away)", rest, closeFrame)
				}
			} else if len(rest) != 0 {
				t.Errorf("client got %x before the close, want nothing", rest)
			}
			if c.delay == "" && after > time.Second {
				t.Errorf("closed %v after the load, want at once", after)
			}
			if c.delay != "" && (after < 1400*time.Millisecond || after > 6*time.Second) {
				t.Errorf("closed %v after the load, want about the stream_close_delay of 1.5s", after)
			}

			// the upstream side got a masked close frame (WebSocket) and EOF
			uc := up.conn(0)
			waitChan(t, uc.closed, "the upstream connection to close")
			got := uc.received()
			tail := bytes.TrimPrefix(got, []byte("before the load"))
			tail = bytes.TrimPrefix(tail, []byte("during the delay"))
			if c.protocol == "websocket" {
				// 0x88, 0x82 (masked, length 2), 4 mask bytes, 2 masked status bytes
				if len(tail) != 8 || tail[0] != 0x88 || tail[1] != 0x82 || (tail[6]^tail[2]) != 0x03 || (tail[7]^tail[3]) != 0xe9 {
					t.Errorf("upstream got %x after the messages, want a masked close frame 1001", tail)
				}
			} else if len(tail) != 0 {
				t.Errorf("upstream got %x after the messages", tail)
			}

			// a new connection goes through the new configuration
			ws2 := e.dialUpgrade("ws.example.com", c.protocol)
			ws2.mustEcho("after the load")
		})
	}
}
