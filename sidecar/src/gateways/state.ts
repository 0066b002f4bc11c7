// The gateway status state machine (pure: no I/O, no clock of its own).
//
// Inputs: the time of the last heartbeat and that heartbeat's verdict. The verdict takes
// `route_reachability` as the ground truth: when the gateway reports at least one route, it is
// healthy when at least one of its LAN targets answered. Only a gateway without routes falls back
// to its own self-check, `overall_healthy`.
//
//   status   | condition (evaluated in this order)
//   ---------+-------------------------------------------------------------------------------
//   unknown  | no heartbeat was ever received
//   offline  | the last heartbeat is older than offline_after (default 60 s = 4 missed beats at 15 s)
//   offline  | a fresh heartbeat whose verdict is unhealthy (no LAN target reachable, or, without
//            | routes, overall_healthy false): the gateway talks to us but cannot serve
//   online   | a fresh heartbeat whose verdict is healthy
//
// Transitions: unknown → online | offline (first heartbeat); online ⇄ offline (heartbeat stops or
// resumes, verdict flips). Nothing returns to unknown (a rotated gateway that never reports again
// goes offline, which is what it is). The service re-evaluates on every heartbeat and on a timer
// (every offline_after / 6, between 1 s and 10 s), so an offline transition is noticed at most one
// timer period after offline_after has passed; each transition is logged once (GatewaysService.emit).
import type { Heartbeat } from '@gatehouse/common/gateway-protocol.js';

export type GatewayStatus = 'online' | 'offline' | 'unknown';

export interface Verdict {
  healthy: boolean;
  reason: string;
}

export interface StatusInput {
  lastSeenAt: number | null;
  healthy: boolean | null;
  healthReason: string | null;
}

export interface Thresholds {
  /** a heartbeat older than this (ms) means offline */
  offlineAfterMs: number;
}

/** The verdict of one heartbeat: route_reachability first, overall_healthy as the fallback. */
export function healthVerdict(hb: Pick<Heartbeat, 'route_reachability' | 'overall_healthy' | 'http_proxy_healthy' | 'api_healthy' | 'dns_resolve_ok' | 'tcp_listeners'>): Verdict {
  const rr = hb.route_reachability;
  if (rr.length) {
    const up = rr.filter((r) => r.reachable).length;
    return up > 0
      ? { healthy: true, reason: `${up}/${rr.length} LAN targets reachable` }
      : { healthy: false, reason: `none of its ${rr.length} LAN target${rr.length === 1 ? ' is' : 's are'} reachable` };
  }
  if (hb.overall_healthy) return { healthy: true, reason: 'no routes; self-check passed' };
  const failed = [
    !hb.http_proxy_healthy && 'HTTP proxy',
    !hb.api_healthy && 'companion API',
    !hb.dns_resolve_ok && 'DNS',
    hb.tcp_listeners.some((l) => l.status !== 'listening') && 'TCP listeners',
  ].filter(Boolean);
  return { healthy: false, reason: `no routes; self-check failed${failed.length ? ` (${failed.join(', ')})` : ''}` };
}

/** The status at `now`. */
export function deriveStatus(input: StatusInput, now: number, th: Thresholds): { status: GatewayStatus; reason: string } {
  if (input.lastSeenAt === null) return { status: 'unknown', reason: 'no heartbeat received yet' };
  const age = now - input.lastSeenAt;
  if (age > th.offlineAfterMs) {
    return { status: 'offline', reason: `no heartbeat for ${Math.floor(age / 1000)} s (offline after ${Math.round(th.offlineAfterMs / 1000)} s)` };
  }
  if (input.healthy === false) return { status: 'offline', reason: `heartbeat received, but ${input.healthReason ?? 'the gateway reports itself unhealthy'}` };
  return { status: 'online', reason: input.healthReason ?? 'heartbeat received' };
}

/** How often the service re-evaluates every gateway (ms). */
export function tickInterval(th: Thresholds): number {
  return Math.min(10_000, Math.max(1_000, Math.floor(th.offlineAfterMs / 6)));
}
