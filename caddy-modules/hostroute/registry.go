package hostroute

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"sync"

	"github.com/caddyserver/caddy/v2"
)

func init() {
	caddy.RegisterModule(new(Registry))
}

// registryID is the app module's ID and its key under "apps".
const registryID = "gatehouse_hostroute"

// Registry is the app `gatehouse_hostroute`: the host maps
// (gatehouse_hostroute handlers) of one loaded configuration, by name. The
// handlers register with it while the configuration is provisioned (they load
// it with ctx.App, so it needs no configuration of its own); the admin API
// reaches the running configuration's registry through caddy.ActiveContext(),
// so after a full load it talks to the new handlers. Changes are serialized
// per registry, and refused once its configuration is being stopped.
type Registry struct {
	ctx caddy.Context

	mu             sync.RWMutex
	maps           map[string]*HostRoute
	metricsServers map[string]string // server -> name of the host map counting metrics in it
	collector      *collector

	changeMu sync.Mutex // one change at a time; guards stopped
	stopped  bool
}

// CaddyModule returns the Caddy module information.
func (*Registry) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  registryID,
		New: func() caddy.Module { return new(Registry) },
	}
}

// Provision sets the registry up.
func (r *Registry) Provision(ctx caddy.Context) error {
	r.ctx = ctx
	r.maps = make(map[string]*HostRoute)
	r.metricsServers = make(map[string]string)
	return nil
}

// Start implements caddy.App.
func (r *Registry) Start() error { return nil }

// Stop implements caddy.App: it runs when a new configuration has replaced
// this one (or Caddy stops). A change in progress finishes first; later ones
// are refused with a retryable error.
func (r *Registry) Stop() error {
	r.changeMu.Lock()
	r.stopped = true
	r.changeMu.Unlock()
	return nil
}

func (r *Registry) register(h *HostRoute) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.maps[h.name]; dup {
		return fmt.Errorf("host map name %q is taken by another gatehouse_hostroute handler of this configuration (two host maps in one server need distinct \"name\" fields)", h.name)
	}
	if h.Metrics {
		if other, dup := r.metricsServers[h.server]; dup {
			return fmt.Errorf("server %q: host maps %q and %q both count metrics; only one host map per server may", h.server, other, h.name)
		}
		r.metricsServers[h.server] = h.name
		if r.collector == nil {
			r.collector = &collector{maps: r.metricsMaps}
			if err := r.ctx.GetMetricsRegistry().Register(r.collector); err != nil {
				return fmt.Errorf("registering metrics: %v", err)
			}
		}
	}
	r.maps[h.name] = h
	return nil
}

// hostMap returns a host map by name.
func (r *Registry) hostMap(name string) *HostRoute {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.maps[name]
}

// all returns every host map, sorted by name.
func (r *Registry) all() []*HostRoute {
	r.mu.RLock()
	maps := make([]*HostRoute, 0, len(r.maps))
	for _, h := range r.maps {
		maps = append(maps, h)
	}
	r.mu.RUnlock()
	sort.Slice(maps, func(i, j int) bool { return maps[i].name < maps[j].name })
	return maps
}

func (r *Registry) metricsMaps() []*HostRoute {
	return slices.DeleteFunc(r.all(), func(h *HostRoute) bool { return !h.Metrics })
}

func (r *Registry) names() []string {
	var names []string
	for _, h := range r.all() {
		names = append(names, h.name)
	}
	return names
}

// ChangeSet is the body of POST /gatehouse/hostroute/changes: per host map,
// hosts to put (create or replace) and hosts to delete. A key may appear once
// per map (after normalization).
type ChangeSet struct {
	Maps map[string]MapChange `json:"maps"`
}

// MapChange is the change of one host map.
type MapChange struct {
	Put    map[string]json.RawMessage `json:"put,omitempty"`
	Delete []string                   `json:"delete,omitempty"`
}

// changeError is an error with the HTTP status the admin API answers it with.
type changeError struct {
	status int
	err    error
}

func (e *changeError) Error() string { return e.err.Error() }
func (e *changeError) Unwrap() error { return e.err }

func badRequest(format string, args ...any) error {
	return &changeError{http.StatusBadRequest, fmt.Errorf(format, args...)}
}

// errReplaced: the configuration this registry belongs to is no longer (or
// is about to be no longer) the running one; the caller may retry.
var errReplaced = &changeError{http.StatusServiceUnavailable, errors.New("the configuration was replaced (a full load) during the change; nothing was applied to the running configuration, retry")}

// op is one host change of one map.
type op struct {
	h    *HostRoute
	raw  string // the key as given
	norm string
	wild bool
	body []byte // nil: delete
	e    *entry // the provisioned new entry of a put
}

// apply applies a change set all or nothing: every put is provisioned first
// (each host in a context of its own); if one fails, none is applied, the
// provisioned ones are cleaned up and the error names the host. Then all
// entries are swapped in under the tables' write locks (taken in map name
// order), and the replaced entries are retired. The result gives each
// changed key's new hash (nil for a deleted key) and whether the key was in
// the map before, in map name order, then puts before deletes.
//
// If the configuration stopped being the running one before the swap was
// complete, the change is reported as not applied (errReplaced).
func (r *Registry) apply(cs ChangeSet) ([]changeResult, error) {
	r.changeMu.Lock()
	defer r.changeMu.Unlock()
	if r.stopped {
		return nil, errReplaced
	}

	// resolve maps and keys; refuse duplicates
	names := make([]string, 0, len(cs.Maps))
	for name := range cs.Maps {
		names = append(names, name)
	}
	sort.Strings(names)
	var ops []*op
	for _, name := range names {
		h := r.hostMap(name)
		if h == nil {
			return nil, &changeError{http.StatusNotFound, fmt.Errorf("no host map %q in the running configuration (host maps: %v)", name, r.names())}
		}
		mc := cs.Maps[name]
		seen := make(map[string]string, len(mc.Put)+len(mc.Delete))
		add := func(raw string, body []byte) error {
			norm, wild, err := normalizeKey(raw)
			if err != nil {
				return badRequest("host map %q, host %q: %v", name, raw, err)
			}
			full := fullKey(norm, wild)
			if other, dup := seen[full]; dup {
				return badRequest("host map %q: %q and %q are the same host %q (put or deleted twice)", name, other, raw, full)
			}
			seen[full] = raw
			ops = append(ops, &op{h: h, raw: raw, norm: norm, wild: wild, body: body})
			return nil
		}
		putKeys := make([]string, 0, len(mc.Put))
		for k := range mc.Put {
			putKeys = append(putKeys, k)
		}
		sort.Strings(putKeys)
		for _, k := range putKeys {
			body := mc.Put[k]
			if t := bytes.TrimSpace(body); len(t) == 0 || bytes.Equal(t, []byte("null")) {
				return nil, badRequest("host map %q, host %q: configuration is null (use {} for a host that answers 404)", name, k)
			}
			if err := add(k, body); err != nil {
				return nil, err
			}
		}
		for _, k := range mc.Delete {
			if err := add(k, nil); err != nil {
				return nil, err
			}
		}
	}

	// provision every put before touching any table
	discard := func() {
		for _, o := range ops {
			if o.e != nil {
				o.e.cleanup()
			}
		}
	}
	for _, o := range ops {
		if o.body == nil {
			continue
		}
		e, err := o.h.provisionRuntimeHost(fullKey(o.norm, o.wild), o.body)
		if err != nil {
			discard()
			return nil, badRequest("host map %q, host %q: %v", o.h.name, o.raw, err)
		}
		o.e = e
	}

	// swap in, all maps at once
	var maps []*HostRoute
	for _, o := range ops {
		if !slices.Contains(maps, o.h) {
			maps = append(maps, o.h) // ops are in map name order
		}
	}
	for _, h := range maps {
		h.table.mu.Lock()
	}
	retired := make([]*entry, 0, len(ops))
	existed := make([]bool, len(ops))
	for i, o := range ops {
		var old *entry
		if o.e != nil {
			if prev := o.h.table.get(o.norm, o.wild); prev != nil && prev.stats != nil {
				o.e.stats = prev.stats // the key's counters go on across puts
			}
			old = o.h.table.put(o.norm, o.wild, o.e)
		} else {
			old = o.h.table.remove(o.norm, o.wild)
		}
		if old != nil {
			retired = append(retired, old)
			existed[i] = true
		}
	}
	for i := len(maps) - 1; i >= 0; i-- {
		maps[i].table.mu.Unlock()
	}
	for _, o := range ops {
		if o.e != nil {
			o.h.trackRuntime(o.e)
		}
	}
	for _, old := range retired {
		old.retire()
	}

	// the change counts only if it landed in the running configuration
	if !r.isActive() {
		return nil, errReplaced
	}

	result := make([]changeResult, len(ops))
	for i, o := range ops {
		result[i] = changeResult{Map: o.h.name, Host: fullKey(o.norm, o.wild), Existed: existed[i]}
		if o.e != nil {
			hash := o.e.Hash()
			result[i].Hash = &hash
		}
	}
	return result, nil
}

// changeResult is the outcome of one host change.
type changeResult struct {
	Map, Host string
	Hash      *string // nil: deleted
	Existed   bool    // the key was in the map before the change
}

// trackRuntime records an entry provisioned at run time, for cleanup when the
// configuration is unloaded.
func (h *HostRoute) trackRuntime(e *entry) {
	h.rtMu.Lock()
	if h.closed {
		h.rtMu.Unlock()
		e.cleanup()
		return
	}
	if h.runtime == nil {
		h.runtime = make(map[*entry]struct{})
	}
	h.runtime[e] = struct{}{}
	h.rtMu.Unlock()
}

// isActive reports whether this registry belongs to the running configuration.
func (r *Registry) isActive() bool {
	active, err := activeRegistry()
	return err == nil && active == r
}

// activeRegistry returns the registry of the running configuration.
func activeRegistry() (*Registry, error) {
	ctx := caddy.ActiveContext()
	app, err := ctx.AppIfConfigured(registryID)
	if err != nil {
		return nil, err
	}
	return app.(*Registry), nil
}

// hashes returns the hash of every host of a map, by key.
func (h *HostRoute) hashes() map[string]string {
	h.table.mu.RLock()
	entries := make([]*entry, 0, h.table.len())
	for _, e := range h.table.exact {
		entries = append(entries, e)
	}
	for _, e := range h.table.wild {
		entries = append(entries, e)
	}
	h.table.mu.RUnlock()
	out := make(map[string]string, len(entries))
	for _, e := range entries {
		out[e.key] = e.Hash()
	}
	return out
}

// hostEntry returns the entry of one key (exactly that key), or nil.
func (h *HostRoute) hostEntry(norm string, wild bool) *entry {
	h.table.mu.RLock()
	defer h.table.mu.RUnlock()
	return h.table.get(norm, wild)
}

// Interface guards
var (
	_ caddy.App         = (*Registry)(nil)
	_ caddy.Provisioner = (*Registry)(nil)
)
