package hostroute

import (
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/prometheus/client_golang/prometheus"
)

// scrape reads Caddy's admin /metrics and returns the gatehouse_hostroute_
// lines (without comments).
func (e *env) scrape() []string {
	e.t.Helper()
	res, err := httpClient.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", e.admin))
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	var lines []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "gatehouse_hostroute_") {
			lines = append(lines, l)
		}
	}
	return lines
}

func grep(lines []string, re string) []string {
	r := regexp.MustCompile(re)
	return slices.DeleteFunc(slices.Clone(lines), func(l string) bool { return !r.MatchString(l) })
}

func TestBucketsAreCaddys(t *testing.T) {
	if !slices.Equal(durationBuckets[:], prometheus.DefBuckets) {
		t.Errorf("durationBuckets %v differ from prometheus.DefBuckets %v (what caddy_http_request_duration_seconds used)", durationBuckets, prometheus.DefBuckets)
	}
}

func TestPerHostMetrics(t *testing.T) {
	e := newEnv(t)
	e.https = freePort(t)
	withMetrics := strings.Replace(testMap(), `"handler":"gatehouse_hostroute",`, `"handler":"gatehouse_hostroute","metrics":true,`, 1)
	withMetrics = strings.Replace(withMetrics, `"b.example.com": `+static("b v1"), `"b.example.com": {"routes":[{"handle":[{"handler":"static_response","status_code":503}]}]}`, 1)
	e.load(withMetrics, testMap()) // the TLS server's map does not count
	for i := 0; i < 3; i++ {
		e.get("a.example.com", "/")
	}
	e.get("A.EXAMPLE.COM:8080", "/") // same key
	e.get("b.example.com", "/")
	e.get("x.wild.example.com", "/")
	e.get("y.wild.example.com", "/")
	for i := 0; i < 50; i++ {
		e.get(fmt.Sprintf("unknown-%d.example.net", i), "/") // one label value for all of them
	}
	lines := e.scrape()
	for _, want := range []string{
		`gatehouse_hostroute_requests_total{host="a.example.com",server="srv"} 4`,
		`gatehouse_hostroute_requests_total{host="b.example.com",server="srv"} 1`,
		`gatehouse_hostroute_requests_total{host="*.wild.example.com",server="srv"} 2`,
		`gatehouse_hostroute_requests_total{host="_other",server="srv"} 50`,
		`gatehouse_hostroute_request_duration_seconds_count{code="200",host="a.example.com",server="srv"} 4`,
		`gatehouse_hostroute_request_duration_seconds_bucket{code="200",host="a.example.com",server="srv",le="+Inf"} 4`,
		`gatehouse_hostroute_request_duration_seconds_count{code="503",host="b.example.com",server="srv"} 1`,
		`gatehouse_hostroute_request_duration_seconds_count{code="404",host="_other",server="srv"} 50`,
	} {
		if !slices.Contains(lines, want) {
			t.Errorf("missing %s", want)
		}
	}
	if n := len(grep(lines, `^gatehouse_hostroute_requests_total`)); n != 4 {
		t.Errorf("%d request series, want 4 (hosts without requests have none, unknown hosts one):\n%s", n, strings.Join(lines, "\n"))
	}
	if n := len(grep(lines, `server="tls"`)); n != 0 {
		t.Errorf("the map without metrics has series")
	}
	if n := len(grep(lines, `^gatehouse_hostroute_request_duration_seconds_bucket\{code="200",host="a.example.com"`)); n != len(durationBuckets)+1 {
		t.Errorf("%d buckets", n)
	}

	// a put keeps the key's counters; a delete drops its series
	e.mustAdmin(http.MethodPut, "/gatehouse/hostroute/maps/srv/hosts/a.example.com", static("a v2"))
	e.get("a.example.com", "/")
	e.mustAdmin(http.MethodDelete, "/gatehouse/hostroute/maps/srv/hosts/b.example.com", "")
	e.mustAdmin(http.MethodPut, "/gatehouse/hostroute/maps/srv/hosts/new.example.com", static("new"))
	e.get("new.example.com", "/")
	lines = e.scrape()
	for _, want := range []string{
		`gatehouse_hostroute_requests_total{host="a.example.com",server="srv"} 5`,
		`gatehouse_hostroute_requests_total{host="new.example.com",server="srv"} 1`,
	} {
		if !slices.Contains(lines, want) {
			t.Errorf("after the changes, missing %s", want)
		}
	}
	if n := len(grep(lines, `host="b.example.com"`)); n != 0 {
		t.Errorf("deleted host still has %d series", n)
	}
}

// A host key that is literally "_other" shares its label with the unknown
// hosts: one series, the sum (a duplicate series would fail the scrape).
func TestMetricsHostKeyOther(t *testing.T) {
	e := newEnv(t)
	e.load(`{"handler":"gatehouse_hostroute","metrics":true,"hosts":{"_other":`+static("x")+`}}`, "")
	e.get("_other", "/")
	e.get("unknown.example.com", "/")
	lines := e.scrape()
	if !slices.Contains(lines, `gatehouse_hostroute_requests_total{host="_other",server="srv"} 2`) {
		t.Errorf("series: %s", strings.Join(lines, "\n"))
	}
}

func TestMetricsOnePerServer(t *testing.T) {
	e := newEnv(t)
	m := strings.Replace(testMap(), `"handler":"gatehouse_hostroute",`, `"handler":"gatehouse_hostroute","metrics":true,`, 1)
	two := `{"handler":"subroute","routes":[{"match":[{"path":["/x"]}],"handle":[` + strings.Replace(m, `"metrics":true,`, `"metrics":true,"name":"other",`, 1) + `]},{"handle":[` + m + `]}]}`
	err := caddy.Load(e.config(two, ""), true)
	if err == nil || !strings.Contains(err.Error(), `host maps "other" and "srv" both count metrics; only one host map per server may`) &&
		!strings.Contains(err.Error(), `host maps "srv" and "other" both count metrics; only one host map per server may`) {
		t.Fatalf("two host maps counting metrics in one server: %v", err)
	}
}
