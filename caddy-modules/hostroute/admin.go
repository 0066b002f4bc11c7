package hostroute

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/caddyserver/caddy/v2"
)

func init() {
	caddy.RegisterModule(AdminAPI{})
}

// adminPrefix is where the admin API module's endpoints live on Caddy's
// admin listener.
const adminPrefix = "/gatehouse/hostroute/"

// maxChangeBody caps the body of a put or a change set.
const maxChangeBody = 256 << 20

// AdminAPI is the admin API module `admin.api.gatehouse_hostroute`: it
// changes the hosts of the running configuration's host maps one by one, and
// reads their hashes. Caddy mounts it on its admin listener (loopback only in
// Gatehouse), behind the same host and origin checks as /load. See README.md
// for the endpoints.
type AdminAPI struct{}

// CaddyModule returns the Caddy module information.
func (AdminAPI) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "admin.api.gatehouse_hostroute",
		New: func() caddy.Module { return new(AdminAPI) },
	}
}

// Routes returns the module's one route; it dispatches on the path itself.
func (a *AdminAPI) Routes() []caddy.AdminRoute {
	return []caddy.AdminRoute{{Pattern: adminPrefix, Handler: caddy.AdminHandlerFunc(a.serve)}}
}

// MapInfo is one host map of GET /gatehouse/hostroute/maps.
type MapInfo struct {
	Name    string `json:"name"`
	Server  string `json:"server"`
	TLS     bool   `json:"tls"`
	Hosts   int    `json:"hosts"`
	Metrics bool   `json:"metrics"`
}

func apiError(status int, format string, args ...any) error {
	return caddy.APIError{HTTPStatus: status, Err: fmt.Errorf(format, args...)}
}

func (a *AdminAPI) serve(w http.ResponseWriter, r *http.Request) error {
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, adminPrefix), "/")
	switch {
	case len(parts) == 1 && parts[0] == "maps":
		return a.listMaps(w, r)
	case len(parts) == 1 && parts[0] == "changes":
		return a.changes(w, r)
	case len(parts) == 3 && parts[0] == "maps" && parts[2] == "hosts":
		return a.listHosts(w, r, parts[1])
	case len(parts) == 4 && parts[0] == "maps" && parts[2] == "hosts":
		return a.oneHost(w, r, parts[1], parts[3])
	}
	return apiError(http.StatusNotFound, "not found: %s (endpoints: %smaps, %smaps/<map>/hosts, %smaps/<map>/hosts/<host>, %schanges)", r.URL.Path, adminPrefix, adminPrefix, adminPrefix, adminPrefix)
}

func allow(r *http.Request, w http.ResponseWriter, methods ...string) error {
	for _, m := range methods {
		if r.Method == m {
			return nil
		}
	}
	w.Header().Set("Allow", strings.Join(methods, ", "))
	return apiError(http.StatusMethodNotAllowed, "method %s not allowed here (allowed: %s)", r.Method, strings.Join(methods, ", "))
}

// registry returns the running configuration's registry.
func registry(w http.ResponseWriter) (*Registry, error) {
	reg, err := activeRegistry()
	if err != nil {
		if errors.Is(err, caddy.ErrNotConfigured) {
			// no configuration at all, or one without any host map
			return nil, nil
		}
		return nil, apiError(http.StatusInternalServerError, "%v", err)
	}
	return reg, nil
}

func writeJSON(w http.ResponseWriter, v any) error {
	w.Header().Set("Content-Type", "application/json")
	return json.NewEncoder(w).Encode(v)
}

func (a *AdminAPI) listMaps(w http.ResponseWriter, r *http.Request) error {
	if err := allow(r, w, http.MethodGet); err != nil {
		return err
	}
	reg, err := registry(w)
	if err != nil {
		return err
	}
	maps := []MapInfo{}
	if reg != nil {
		for _, h := range reg.all() {
			h.table.mu.RLock()
			n := h.table.len()
			h.table.mu.RUnlock()
			maps = append(maps, MapInfo{Name: h.name, Server: h.server, TLS: h.tls, Hosts: n, Metrics: h.Metrics})
		}
	}
	return writeJSON(w, map[string]any{"maps": maps})
}

// hostMapOf resolves a map name in the running configuration.
func hostMapOf(w http.ResponseWriter, name string) (*HostRoute, error) {
	reg, err := registry(w)
	if err != nil {
		return nil, err
	}
	if reg == nil {
		return nil, apiError(http.StatusNotFound, "no host map %q: the running configuration has no gatehouse_hostroute handler", name)
	}
	h := reg.hostMap(name)
	if h == nil {
		return nil, apiError(http.StatusNotFound, "no host map %q in the running configuration (host maps: %v)", name, reg.names())
	}
	return h, nil
}

func (a *AdminAPI) listHosts(w http.ResponseWriter, r *http.Request, name string) error {
	if err := allow(r, w, http.MethodGet); err != nil {
		return err
	}
	h, err := hostMapOf(w, name)
	if err != nil {
		return err
	}
	return writeJSON(w, map[string]any{"map": h.name, "hosts": h.hashes()})
}

func (a *AdminAPI) oneHost(w http.ResponseWriter, r *http.Request, name, key string) error {
	if err := allow(r, w, http.MethodGet, http.MethodPut, http.MethodDelete); err != nil {
		return err
	}
	if r.Method == http.MethodGet {
		h, err := hostMapOf(w, name)
		if err != nil {
			return err
		}
		norm, wild, err := normalizeKey(key)
		if err != nil {
			return apiError(http.StatusBadRequest, "host %q: %v", key, err)
		}
		e := h.hostEntry(norm, wild)
		if e == nil {
			return apiError(http.StatusNotFound, "host %q is not in host map %q", fullKey(norm, wild), h.name)
		}
		return writeJSON(w, map[string]any{"map": h.name, "host": e.key, "hash": e.Hash()})
	}

	mc := MapChange{}
	if r.Method == http.MethodPut {
		body, err := readBody(w, r)
		if err != nil {
			return err
		}
		mc.Put = map[string]json.RawMessage{key: body}
	} else {
		mc.Delete = []string{key}
	}
	result, err := applyChanges(w, ChangeSet{Maps: map[string]MapChange{name: mc}})
	if err != nil {
		return err
	}
	if len(result) != 1 {
		return apiError(http.StatusInternalServerError, "change applied but %d results for %q", len(result), key)
	}
	res := result[0]
	if res.Hash == nil {
		return writeJSON(w, map[string]any{"map": res.Map, "host": res.Host, "deleted": res.Existed})
	}
	return writeJSON(w, map[string]any{"map": res.Map, "host": res.Host, "hash": *res.Hash, "created": !res.Existed})
}

func (a *AdminAPI) changes(w http.ResponseWriter, r *http.Request) error {
	if err := allow(r, w, http.MethodPost); err != nil {
		return err
	}
	body, err := readBody(w, r)
	if err != nil {
		return err
	}
	var cs ChangeSet
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cs); err != nil {
		return apiError(http.StatusBadRequest, "decoding the change set: %v", err)
	}
	if dec.More() {
		return apiError(http.StatusBadRequest, "decoding the change set: data after the JSON object")
	}
	result, err := applyChanges(w, cs)
	if err != nil {
		return err
	}
	maps := make(map[string]map[string]*string)
	for name := range cs.Maps {
		maps[name] = map[string]*string{}
	}
	for _, res := range result {
		maps[res.Map][res.Host] = res.Hash
	}
	return writeJSON(w, map[string]any{"maps": maps})
}

func readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxChangeBody))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, apiError(http.StatusRequestEntityTooLarge, "body larger than %d bytes", maxChangeBody)
		}
		return nil, apiError(http.StatusBadRequest, "reading the body: %v", err)
	}
	if !json.Valid(body) {
		return nil, apiError(http.StatusBadRequest, "the body is not valid JSON")
	}
	return body, nil
}

// applyChanges applies a change set to the running configuration.
func applyChanges(w http.ResponseWriter, cs ChangeSet) ([]changeResult, error) {
	reg, err := registry(w)
	if err != nil {
		return nil, err
	}
	if reg == nil {
		names := make([]string, 0, len(cs.Maps))
		for n := range cs.Maps {
			names = append(names, n)
		}
		if len(names) == 0 {
			return nil, nil
		}
		return nil, apiError(http.StatusNotFound, "no host map %q: the running configuration has no gatehouse_hostroute handler", names[0])
	}
	result, err := reg.apply(cs)
	if err != nil {
		var ce *changeError
		if errors.As(err, &ce) {
			if ce.status == http.StatusServiceUnavailable {
				w.Header().Set("Retry-After", "1")
			}
			return nil, caddy.APIError{HTTPStatus: ce.status, Err: ce.err}
		}
		return nil, apiError(http.StatusInternalServerError, "%v", err)
	}
	return result, nil
}

// Interface guards
var _ caddy.AdminRouter = (*AdminAPI)(nil)
