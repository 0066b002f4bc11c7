package hostroute

import (
	"context"
	"reflect"
	"slices"
	"unsafe"

	"github.com/caddyserver/caddy/v2"
	"go.uber.org/zap"
)

// A host put at run time is provisioned in a context of its own, so that its
// modules (and only they) can be cleaned up once it is replaced and drained:
// the context's cancellation runs Cleanup on exactly the modules loaded in
// it, as Caddy does for a configuration.
//
// caddy.NewContext makes such a context, but each one also gets a metrics
// registry of its own with Go, process and build collectors: measured here,
// ~150 µs and ~22 KB kept per host, which at 100,000 hosts put at run time
// would be over 2 GB. So the context is made as a copy of the handler's own
// context (same configuration, same metrics registry, same values such as
// the server) with a fresh module list and its own cancellation. Caddy has no
// exported way to give a copy its own module list; the field is set through
// reflection, after checking at start-up that caddy.Context still has the
// fields this relies on, with their types. If it does not (another Caddy
// version), caddy.NewContext is used instead: correct, only heavier
// (TestHostContextIsLight fails then, so that it is noticed).

var (
	ctxType          = reflect.TypeFor[caddy.Context]()
	lightHostContext = hasField("moduleInstances", reflect.TypeFor[map[string][]caddy.Module]()) &&
		hasField("cleanupFuncs", reflect.TypeFor[[]func()]()) &&
		hasField("ancestry", reflect.TypeFor[[]caddy.Module]())
)

func hasField(name string, typ reflect.Type) bool {
	f, ok := ctxType.FieldByName(name)
	return ok && f.Type == typ
}

// setField sets an unexported field of c (checked by hasField).
func setField(c *caddy.Context, name string, value any) {
	f := reflect.ValueOf(c).Elem().FieldByName(name)
	reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem().Set(reflect.ValueOf(value))
}

// newHostContext returns a context for one runtime host and the function
// that ends it: it cancels the context and runs Cleanup on every module
// provisioned in it, once.
func newHostContext(parent caddy.Context, logger *zap.Logger) (caddy.Context, context.CancelFunc) {
	if !lightHostContext {
		return caddy.NewContext(parent)
	}
	c := parent
	inner, cancel := context.WithCancel(parent.Context)
	c.Context = inner
	mods := make(map[string][]caddy.Module)
	setField(&c, "moduleInstances", mods)
	// no cleanup functions of the parent's (they are not ours to run), and an
	// ancestry of our own so that appends never write into the parent's
	setField(&c, "cleanupFuncs", []func(){})
	setField(&c, "ancestry", slices.Clip(c.Modules()))
	return c, func() {
		cancel()
		for name, insts := range mods {
			for _, m := range insts {
				if cu, ok := m.(caddy.CleanerUpper); ok {
					if err := cu.Cleanup(); err != nil {
						logger.Error("cleanup of a replaced host's module", zap.String("module", name), zap.Error(err))
					}
				}
			}
		}
	}
}
