// The route object of the API (GET /routes/:id: routeView in sidecar/src/routes/schema.ts, through
// src/protocol.ts) and what the screens derive from it.
import type { Route } from '../../protocol';

export type { MirrorTarget, Route, RouteCheck as Check, WizardPeer } from '../../protocol';

export type BreakerState = 'off' | 'closed' | 'open' | 'half_open';

/**
 * The breaker's state from the stored report (cb_opened_at, set while Caddy's module reports it
 * open): open until the timeout has passed, then half-open (the next request is the trial).
 */
export function breakerState(r: Pick<Route, 'circuit_breaker_enabled' | 'cb_opened_at' | 'circuit_breaker_timeout'>, now = Date.now()): BreakerState {
  if (!r.circuit_breaker_enabled) return 'off';
  if (r.cb_opened_at === null || r.cb_opened_at === undefined) return 'closed';
  return now < r.cb_opened_at + (r.circuit_breaker_timeout ?? 30) * 1000 ? 'open' : 'half_open';
}

/** Uptime checks work for HTTP and TCP routes (a UDP service cannot be told up). */
export const monitorable = (r: Pick<Route, 'route_type' | 'l4_protocol'>) => r.route_type === 'http' || r.l4_protocol === 'tcp';

export const ROUTE_EVENTS = [
  'route_created',
  'route_updated',
  'route_enabled',
  'route_disabled',
  'route_deleted',
  'routes_batch',
  'route_up',
  'route_down',
  'circuit_open',
  'circuit_closed',
  'route_auth_created',
  'route_auth_updated',
  'route_auth_deleted',
  'route_access_closed',
  'route_access_opened',
];
