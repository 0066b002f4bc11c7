// Circuit-breaker seeds as rendered into Caddy (gatehouse_circuit_breaker failure_count, opened_at,
// reset_at), kept in memory by ProxyService.
//
// The breaker's live state is in Caddy; it reports every change to POST /internal/circuit-breaker,
// which stores cb_failure_count / cb_opened_at on the route WITHOUT a proxy reload. Those stored
// values only matter as seeds when Caddy has no live state (Caddy restarted, route (re)added). If
// the renderer read them on every render, each report would change the rendered configuration and
// the reconcile loop would reload Caddy for nothing. So a route's seed is pinned when first rendered
// and re-read from the database only when Caddy starts empty (ProxyService.invalidate, first load)
// or the route's breaker comes back after being absent. A reset pins {0, 0, now}: reset_at greater
// than any seen makes the module replace its live state (applied once; later renders keep it).
import type { Route } from '../routes/model.js';
import type { BreakerSeed } from './render-context.js';

export class BreakerMemory {
  private pins = new Map<number, BreakerSeed>();

  /** Seeds for this render; `fresh`: Caddy holds no live state, take the stored values. */
  seeds(routes: Route[], fresh: boolean): Map<number, BreakerSeed> {
    const next = new Map<number, BreakerSeed>();
    for (const r of routes) {
      if (!r.enabled || r.route_type !== 'http' || !r.circuit_breaker_enabled) continue;
      const pin = this.pins.get(r.id);
      next.set(r.id, pin && !fresh ? pin : { failure_count: r.cb_failure_count ?? 0, opened_at: r.cb_opened_at ?? 0, reset_at: pin?.reset_at ?? 0 });
    }
    this.pins = next;
    return next;
  }

  /** seeds() for a render of only these routes (`ids`: every route the render covers, present or not). */
  seedsFor(routes: Route[], ids: Iterable<number>): Map<number, BreakerSeed> {
    for (const id of ids) {
      const r = routes.find((x) => x.id === id);
      if (!r || !r.enabled || r.route_type !== 'http' || !r.circuit_breaker_enabled) {
        this.pins.delete(id);
        continue;
      }
      const pin = this.pins.get(id);
      this.pins.set(id, pin ?? { failure_count: r.cb_failure_count ?? 0, opened_at: r.cb_opened_at ?? 0, reset_at: 0 });
    }
    return new Map(this.pins);
  }

  /** The next render carries a zeroed state and reset_at = now for this route. */
  reset(routeId: number, now: number): void {
    this.pins.set(routeId, { failure_count: 0, opened_at: 0, reset_at: now });
  }
}
