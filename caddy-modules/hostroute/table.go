package hostroute

import (
	"context"
	"net"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
)

// table is the live host map of one handler: exact keys and one-label
// wildcards, each mapped to the entry serving it. Requests read it under the
// read lock (a lookup and a reference count increment, nothing else); changes
// take the write lock only to swap entries in and out, after the new entries
// are fully provisioned. Neither side's cost depends on the number of hosts.
type table struct {
	mu    sync.RWMutex
	exact map[string]*entry // normalized host -> entry
	wild  map[string]*entry // "example.com" for the key "*.example.com"
}

// entry is one provisioned host: its compiled chain, its hash, and a
// reference count: 1 while the table holds it, plus 1 per request running on
// it. When a change replaces or deletes it and the count reaches 0, the
// entry is cleaned up (the Cleanup of its modules), if it has a context of
// its own.
type entry struct {
	key   string // normalized, "*." prefix for wildcards: what the admin API and the metrics show
	host  *Host
	owner *HostRoute
	refs  atomic.Int64
	stats *hostStats // nil unless the handler counts metrics; kept across puts of the same key

	hashOnce sync.Once
	hash     string

	// cancel ends the entry's own context (Caddy then calls Cleanup on every
	// module provisioned in it); nil for hosts of the loaded configuration,
	// whose modules are Caddy's to clean up when that configuration is
	// unloaded.
	cancel  context.CancelFunc
	cleaned atomic.Bool
}

func (h *HostRoute) newEntry(key string, host *Host, cancel context.CancelFunc) *entry {
	e := &entry{key: key, host: host, owner: h, cancel: cancel}
	e.refs.Store(1)
	if h.Metrics {
		e.stats = new(hostStats)
	}
	return e
}

// Hash returns the entry's host hash (hostHash of the JSON it was made from),
// computing it on first use for hosts of the loaded configuration.
func (e *entry) Hash() string {
	e.hashOnce.Do(func() {
		hash, err := hostHash(e.host.raw)
		if err != nil {
			// cannot happen: the same bytes decoded into the host
			hash = "error: " + err.Error()
		}
		e.hash = hash
		e.host.raw = nil
	})
	return e.hash
}

// release ends one request's use of the entry.
func (e *entry) release() {
	if e.refs.Add(-1) == 0 {
		// the entry was replaced and this was its last request: clean up
		// without holding up this request's answer
		go e.cleanup()
	}
}

// retire drops the table's reference after the entry was swapped out; it is
// cleaned up now if no request runs on it, else by its last request.
func (e *entry) retire() {
	if e.refs.Add(-1) == 0 {
		e.cleanup()
	}
}

// cleanup cancels the entry's own context, once. Entries of the loaded
// configuration have none and are left to Caddy.
func (e *entry) cleanup() {
	if e.cancel == nil || !e.cleaned.CompareAndSwap(false, true) {
		return
	}
	e.cancel()
	h := e.owner
	h.rtMu.Lock()
	delete(h.runtime, e)
	h.rtMu.Unlock()
}

func (t *table) init(n int) {
	t.exact = make(map[string]*entry, n)
	t.wild = make(map[string]*entry)
}

// put sets the entry of a normalized key and returns the entry it replaced.
// The caller holds the write lock, or is still provisioning.
func (t *table) put(norm string, wild bool, e *entry) *entry {
	m := t.exact
	if wild {
		m = t.wild
	}
	old := m[norm]
	m[norm] = e
	return old
}

// remove deletes a normalized key and returns the entry it held. The caller
// holds the write lock.
func (t *table) remove(norm string, wild bool) *entry {
	m := t.exact
	if wild {
		m = t.wild
	}
	old := m[norm]
	delete(m, norm)
	return old
}

// get returns the entry of a normalized key (exactly that key, no wildcard
// matching). The caller holds a lock.
func (t *table) get(norm string, wild bool) *entry {
	if wild {
		return t.wild[norm]
	}
	return t.exact[norm]
}

func (t *table) len() int { return len(t.exact) + len(t.wild) }

// acquire finds the entry serving a Host header value and takes a reference
// on it, so that it cannot be cleaned up while the request runs. Nil for an
// unknown host.
func (h *HostRoute) acquire(hostport string) *entry {
	h.table.mu.RLock()
	e := h.table.lookup(hostport)
	if e != nil {
		e.refs.Add(1)
	}
	h.table.mu.RUnlock()
	return e
}

// lookup finds the entry for a Host header value (which may carry a port).
// It does not allocate for host names; cost does not depend on the number of
// configured hosts (at most two map lookups). The caller holds a lock.
func (t *table) lookup(hostport string) *entry {
	if strings.HasPrefix(hostport, "[") {
		return t.lookupIPv6(hostport)
	}
	s := hostport
	if i := strings.IndexByte(s, ':'); i >= 0 {
		s = s[:i]
	}
	if n := len(s); n > 0 && s[n-1] == '.' {
		s = s[:n-1]
	}
	if s == "" || len(s) > maxHostLen {
		return nil
	}

	var buf [maxHostLen]byte
	b := buf[:len(s)]
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		b[i] = c
	}

	if e, ok := t.exact[string(b)]; ok {
		return e
	}
	if len(t.wild) > 0 {
		for i := 0; i < len(b)-1; i++ {
			if b[i] == '.' {
				if i > 0 {
					if e, ok := t.wild[string(b[i+1:])]; ok {
						return e
					}
				}
				break
			}
		}
	}
	return nil
}

// lookupIPv6 handles "[2001:db8::1]" and "[2001:db8::1]:443" (rare; may allocate).
func (t *table) lookupIPv6(hostport string) *entry {
	ipText := strings.TrimSuffix(strings.TrimPrefix(hostport, "["), "]")
	if host, _, err := net.SplitHostPort(hostport); err == nil {
		ipText = host
	}
	addr, err := netip.ParseAddr(ipText)
	if err != nil || addr.Zone() != "" {
		return nil
	}
	return t.exact[addr.String()]
}

// fullKey is the key as the admin API and the metrics show it.
func fullKey(norm string, wild bool) string {
	if wild {
		return "*." + norm
	}
	return norm
}
