package hostroute

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
)

// the host map of the tests: two exact hosts and a wildcard, on server "srv"
func testMap() string {
	return `{"handler":"gatehouse_hostroute","hosts":{
		"a.example.com": ` + static("a v1") + `,
		"b.example.com": ` + static("b v1") + `,
		"*.wild.example.com": ` + static("wild v1") + `
	}}`
}

func TestAdminMapsAndHashes(t *testing.T) {
	e := newEnv(t)
	e.load(testMap(), "")

	out := e.mustAdmin(http.MethodGet, "/gatehouse/hostroute/maps", "")
	want := `{"maps":[{"hosts":3,"metrics":false,"name":"srv","server":"srv","tls":false}]}`
	if got, _ := json.Marshal(out); string(got) != want {
		t.Errorf("maps: got %s, want %s", got, want)
	}

	// hashes of hosts from the full load: the canonical JSON of what was sent
	out = e.mustAdmin(http.MethodGet, "/gatehouse/hostroute/maps/srv/hosts", "")
	hosts := out["hosts"].(map[string]any)
	if len(hosts) != 3 || out["map"] != "srv" {
		t.Fatalf("hosts: %v", out)
	}
	for key, body := range map[string]string{"a.example.com": "a v1", "*.wild.example.com": "wild v1"} {
		want, _ := hostHash([]byte(static(body)))
		if hosts[key] != want {
			t.Errorf("%s: hash %v, want %s", key, hosts[key], want)
		}
	}

	// one host; keys are normalized (case, trailing dot)
	out = e.mustAdmin(http.MethodGet, "/gatehouse/hostroute/maps/srv/hosts/A.Example.com.", "")
	if out["host"] != "a.example.com" || out["hash"] != hosts["a.example.com"] {
		t.Errorf("one host: %v", out)
	}
}

func TestAdminPutDeleteAndHashes(t *testing.T) {
	e := newEnv(t)
	e.load(testMap(), "")

	// put a new host: created, served, its hash is the canonical one of the
	// body (whitespace and key order do not matter)
	body := `{ "routes": [ { "handle": [ { "status_code": 200, "handler": "static_response", "body": "c v1" } ] } ] }`
	out := e.mustAdmin(http.MethodPut, "/gatehouse/hostroute/maps/srv/hosts/c.example.com", body)
	wantHash, _ := hostHash([]byte(static("c v1")))
	if out["created"] != true || out["hash"] != wantHash || out["host"] != "c.example.com" || out["map"] != "srv" {
		t.Errorf("put: %v (want hash %s)", out, wantHash)
	}
	if status, got := e.get("c.example.com", "/"); status != 200 || got != "c v1" {
		t.Errorf("c.example.com: %d %q", status, got)
	}

	// replace an existing host
	out = e.mustAdmin(http.MethodPut, "/gatehouse/hostroute/maps/srv/hosts/a.example.com", static("a v2"))
	if out["created"] != false {
		t.Errorf("replace: %v", out)
	}
	if _, got := e.get("a.example.com", "/"); got != "a v2" {
		t.Errorf("a.example.com after the put: %q", got)
	}
	if _, got := e.get("b.example.com", "/"); got != "b v1" {
		t.Errorf("b.example.com changed: %q", got)
	}

	// delete: existed, then not
	out = e.mustAdmin(http.MethodDelete, "/gatehouse/hostroute/maps/srv/hosts/b.example.com", "")
	if out["deleted"] != true || out["host"] != "b.example.com" {
		t.Errorf("delete: %v", out)
	}
	if status, _ := e.get("b.example.com", "/"); status != 404 {
		t.Errorf("deleted host answers %d", status)
	}
	out = e.mustAdmin(http.MethodDelete, "/gatehouse/hostroute/maps/srv/hosts/b.example.com", "")
	if out["deleted"] != false {
		t.Errorf("second delete: %v", out)
	}

	// a wildcard put and delete
	e.mustAdmin(http.MethodPut, "/gatehouse/hostroute/maps/srv/hosts/*.new.example.com", static("new wild"))
	if _, got := e.get("x.new.example.com", "/"); got != "new wild" {
		t.Errorf("new wildcard: %q", got)
	}
	e.mustAdmin(http.MethodDelete, "/gatehouse/hostroute/maps/srv/hosts/*.wild.example.com", "")
	if status, _ := e.get("x.wild.example.com", "/"); status != 404 {
		t.Errorf("deleted wildcard answers %d", status)
	}

	// the hashes now
	hosts := e.mustAdmin(http.MethodGet, "/gatehouse/hostroute/maps/srv/hosts", "")["hosts"].(map[string]any)
	want := map[string]string{"a.example.com": static("a v2"), "c.example.com": static("c v1"), "*.new.example.com": static("new wild")}
	if len(hosts) != len(want) {
		t.Errorf("hosts: %v", hosts)
	}
	for k, v := range want {
		h, _ := hostHash([]byte(v))
		if hosts[k] != h {
			t.Errorf("%s: hash %v, want %s", k, hosts[k], h)
		}
	}
}

func TestAdminChangeSet(t *testing.T) {
	e := newEnv(t)
	e.https = freePort(t)
	e.load(testMap(), testMap())

	// a domain rename touches two maps: all at once
	out := e.mustAdmin(http.MethodPost, "/gatehouse/hostroute/changes", `{"maps":{
		"srv": {"put": {"renamed.example.com": `+static("renamed")+`}, "delete": ["a.example.com"]},
		"tls": {"put": {"renamed.example.com": `+static("renamed tls")+`}, "delete": ["a.example.com", "absent.example.com"]}
	}}`)
	h1, _ := hostHash([]byte(static("renamed")))
	h2, _ := hostHash([]byte(static("renamed tls")))
	want := fmt.Sprintf(`{"maps":{"srv":{"a.example.com":null,"renamed.example.com":%q},"tls":{"a.example.com":null,"absent.example.com":null,"renamed.example.com":%q}}}`, h1, h2)
	if got, _ := json.Marshal(out); string(got) != want {
		t.Errorf("change set:\n got %s\nwant %s", got, want)
	}
	if _, got := e.get("renamed.example.com", "/"); got != "renamed" {
		t.Errorf("renamed: %q", got)
	}
	if status, _ := e.get("a.example.com", "/"); status != 404 {
		t.Errorf("old name answers %d", status)
	}
	if n := e.hostMap("tls").table.len(); n != 3 {
		t.Errorf("tls map has %d hosts", n)
	}

	// an empty change set is a no-op
	if got, _ := json.Marshal(e.mustAdmin(http.MethodPost, "/gatehouse/hostroute/changes", `{"maps":{}}`)); string(got) != `{"maps":{}}` {
		t.Errorf("empty change set: %s", got)
	}
}

func TestAdminErrors(t *testing.T) {
	e := newEnv(t)
	e.https = freePort(t)
	e.load(testMap(), testMap())
	before := e.mustAdmin(http.MethodGet, "/gatehouse/hostroute/maps/srv/hosts", "")

	for _, c := range []struct {
		method, path, body string
		status             int
		msg                string
	}{
		{"GET", "/gatehouse/hostroute/maps/nope/hosts", "", 404, `no host map "nope" in the running configuration (host maps: [srv tls])`},
		{"PUT", "/gatehouse/hostroute/maps/nope/hosts/a.example.com", static("x"), 404, `no host map "nope"`},
		{"GET", "/gatehouse/hostroute/maps/srv/hosts/zzz.example.com", "", 404, `host "zzz.example.com" is not in host map "srv"`},
		{"GET", "/gatehouse/hostroute/other", "", 404, "not found: /gatehouse/hostroute/other"},
		{"POST", "/gatehouse/hostroute/maps/srv/hosts/a.example.com", static("x"), 405, "method POST not allowed here (allowed: GET, PUT, DELETE)"},
		{"GET", "/gatehouse/hostroute/changes", "", 405, "method GET not allowed here (allowed: POST)"},
		{"PUT", "/gatehouse/hostroute/maps/srv/hosts/a.example.com:443", static("x"), 400, `host "a.example.com:443": must not include a port`},
		{"PUT", "/gatehouse/hostroute/maps/srv/hosts/a.*.example.com", static("x"), 400, `a wildcard is only allowed as the whole first label`},
		{"PUT", "/gatehouse/hostroute/maps/srv/hosts/a.example.com", `{"routes": [`, 400, "the body is not valid JSON"},
		{"PUT", "/gatehouse/hostroute/maps/srv/hosts/a.example.com", `null`, 400, "configuration is null (use {} for a host that answers 404)"},
		{"PUT", "/gatehouse/hostroute/maps/srv/hosts/a.example.com", `{"rouets": []}`, 400, `json: unknown field "rouets"`},
		{"PUT", "/gatehouse/hostroute/maps/srv/hosts/a.example.com", `["routes"]`, 400, `a host must be a JSON object, not ["routes"]`},
		{"PUT", "/gatehouse/hostroute/maps/srv/hosts/a.example.com", `{"routes": [{"handle": [{"handler": "no_such_handler"}]}]}`, 400, `host map "srv", host "a.example.com": setting up routes: route 0: loading handler modules: position 0: loading module 'no_such_handler': unknown module: http.handlers.no_such_handler`},
		{"POST", "/gatehouse/hostroute/changes", `{"maps": {"srv": {"put": {"A.example.com": {}}, "delete": ["a.example.com."]}}}`, 400, `host map "srv": "A.example.com" and "a.example.com." are the same host "a.example.com" (put or deleted twice)`},
		{"POST", "/gatehouse/hostroute/changes", `{"maps": {"srv": {"upsert": {}}}}`, 400, `decoding the change set: json: unknown field "upsert"`},
		{"POST", "/gatehouse/hostroute/changes", `{"maps": {}} {}`, 400, "the body is not valid JSON"},
		{"POST", "/gatehouse/hostroute/changes", `{"maps": {"srv": {"put": {"ok.example.com": {}}}, "nope": {"delete": ["a.example.com"]}}}`, 404, `no host map "nope"`},
	} {
		status, out, hdr := e.adminCall(c.method, c.path, c.body)
		msg, _ := out["error"].(string)
		if status != c.status || !strings.Contains(msg, c.msg) || len(out) != 1 {
			t.Errorf("%s %s %s: got %d %v, want %d with %q", c.method, c.path, c.body, status, out, c.status, c.msg)
		}
		if ct := hdr.Get("Content-Type"); ct != "application/json" {
			t.Errorf("%s %s: Content-Type %q", c.method, c.path, ct)
		}
	}
	// nothing changed, in either map
	after := e.mustAdmin(http.MethodGet, "/gatehouse/hostroute/maps/srv/hosts", "")
	if b, a := fmt.Sprint(before), fmt.Sprint(after); b != a {
		t.Errorf("hosts changed by refused requests:\n%s\n%s", b, a)
	}
	if n := e.hostMap("tls").table.len(); n != 3 {
		t.Errorf("tls map has %d hosts", n)
	}
}

func TestAdminWithoutHostMaps(t *testing.T) {
	e := newEnv(t)
	e.load(`{"handler":"static_response","body":"no host map here"}`, "")
	if got, _ := json.Marshal(e.mustAdmin(http.MethodGet, "/gatehouse/hostroute/maps", "")); string(got) != `{"maps":[]}` {
		t.Errorf("maps: %s", got)
	}
	status, out, _ := e.adminCall(http.MethodPut, "/gatehouse/hostroute/maps/srv/hosts/a.example.com", static("x"))
	if status != 404 || !strings.Contains(out["error"].(string), "the running configuration has no gatehouse_hostroute handler") {
		t.Errorf("put without host maps: %d %v", status, out)
	}
}

func TestTwoHostMapsInOneServerNeedNames(t *testing.T) {
	e := newEnv(t)
	two := `{"handler":"subroute","routes":[{"match":[{"path":["/x"]}],"handle":[` + testMap() + `]},{"handle":[` + testMap() + `]}]}`
	err := caddy.Load(e.config(two, ""), true)
	if err == nil || !strings.Contains(err.Error(), `host map name "srv" is taken by another gatehouse_hostroute handler of this configuration`) {
		t.Fatalf("two unnamed host maps in one server: %v", err)
	}
	named := strings.Replace(two, `{"handler":"gatehouse_hostroute",`, `{"handler":"gatehouse_hostroute","name":"first",`, 1)
	e.load(named, "")
	out := e.mustAdmin(http.MethodGet, "/gatehouse/hostroute/maps", "")
	if got, _ := json.Marshal(out); !strings.Contains(string(got), `"name":"first","server":"srv"`) || !strings.Contains(string(got), `"name":"srv","server":"srv"`) {
		t.Errorf("maps: %s", got)
	}
}
