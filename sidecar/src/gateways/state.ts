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
import type { MessageRef } from '@gatehouse/common/messages/index.js';
import type { HealthDetail, SelfCheckPart, StatusDetail } from '@gatehouse/common/gateway-status.js';

export type { HealthDetail, SelfCheckPart, StatusDetail };

export type GatewayStatus = 'online' | 'offline' | 'unknown';

export interface Verdict {
  healthy: boolean;
  reason: string;
  detail: HealthDetail;
}

export interface StatusInput {
  lastSeenAt: number | null;
  healthy: boolean | null;
  healthReason: string | null;
  /** the last heartbeat's verdict as data, when known (the admin views recompute it from the stored heartbeat) */
  health?: HealthDetail | null;
}

export interface Thresholds {
  /** a heartbeat older than this (ms) means offline */
  offlineAfterMs: number;
}

const SELF_CHECK_NAMES: Record<SelfCheckPart, string> = { http_proxy: 'HTTP proxy', api: 'companion API', dns: 'DNS', tcp_listeners: 'TCP listeners' };

/** The English words for a heartbeat verdict. */
export function describeHealth(d: HealthDetail): string {
  switch (d.code) {
    case 'lan_reachable':
      return `${d.up}/${d.total} LAN targets reachable`;
    case 'lan_unreachable':
      return `none of its ${d.total} LAN target${d.total === 1 ? ' is' : 's are'} reachable`;
    case 'self_check_passed':
      return 'no routes; self-check passed';
    case 'self_check_failed':
      return `no routes; self-check failed${d.failed.length ? ` (${d.failed.map((f) => SELF_CHECK_NAMES[f]).join(', ')})` : ''}`;
  }
}

/** The verdict of one heartbeat: route_reachability first, overall_healthy as the fallback. */
export function healthVerdict(
  hb: Pick<Heartbeat, 'route_reachability' | 'overall_healthy' | 'http_proxy_healthy' | 'api_healthy' | 'dns_resolve_ok' | 'tcp_listeners'>,
): Verdict {
  const rr = hb.route_reachability;
  let detail: HealthDetail;
  if (rr.length) {
    const up = rr.filter((r) => r.reachable).length;
    detail = up > 0 ? { code: 'lan_reachable', up, total: rr.length } : { code: 'lan_unreachable', total: rr.length };
  } else if (hb.overall_healthy) {
    detail = { code: 'self_check_passed' };
  } else {
    const failed: SelfCheckPart[] = [];
    if (!hb.http_proxy_healthy) failed.push('http_proxy');
    if (!hb.api_healthy) failed.push('api');
    if (!hb.dns_resolve_ok) failed.push('dns');
    if (hb.tcp_listeners.some((l) => l.status !== 'listening')) failed.push('tcp_listeners');
    detail = { code: 'self_check_failed', failed };
  }
  const healthy = detail.code === 'lan_reachable' || detail.code === 'self_check_passed';
  return { healthy, reason: describeHealth(detail), detail };
}

/** The English words for a status detail; `healthReason` (the stored verdict) stands in for a health detail not known. */
export function describeStatus(d: StatusDetail, healthReason: string | null = null): string {
  switch (d.code) {
    case 'no_tokens':
      return 'no tokens issued yet';
    case 'no_heartbeat':
      return 'no heartbeat received yet';
    case 'heartbeat_stale':
      return `no heartbeat for ${d.age_s} s (offline after ${d.offline_after_s} s)`;
    case 'unhealthy':
      return `heartbeat received, but ${d.health ? describeHealth(d.health) : (healthReason ?? 'the gateway reports itself unhealthy')}`;
    case 'healthy':
      return d.health ? describeHealth(d.health) : (healthReason ?? 'heartbeat received');
  }
}

/** A heartbeat verdict as a message of the catalogue. */
export function healthMessage(d: HealthDetail): MessageRef {
  const { code, ...params } = d;
  return Object.keys(params).length ? { code: `gateway.health.${code}`, params } : { code: `gateway.health.${code}` };
}

/** A status detail as a message of the catalogue (its English text is describeStatus's). */
export function statusMessage(d: StatusDetail, healthReason: string | null = null): MessageRef {
  switch (d.code) {
    case 'no_tokens':
    case 'no_heartbeat':
      return { code: `gateway.status.${d.code}` };
    case 'heartbeat_stale':
      return { code: 'gateway.status.heartbeat_stale', params: { age_s: d.age_s, offline_after_s: d.offline_after_s } };
    case 'unhealthy':
    case 'healthy':
      return {
        code: `gateway.status.${d.code}`,
        params: { health: d.health ? healthMessage(d.health) : healthReason ? { code: 'gateway.health.reported', params: { detail: healthReason } } : null },
      };
  }
}

/** The status at `now`, why (as data), and the English reason. */
export function deriveStatus(input: StatusInput, now: number, th: Thresholds): { status: GatewayStatus; reason: string; detail: StatusDetail } {
  const health = input.health ?? null;
  let status: GatewayStatus;
  let detail: StatusDetail;
  if (input.lastSeenAt === null) {
    status = 'unknown';
    detail = { code: 'no_heartbeat' };
  } else if (now - input.lastSeenAt > th.offlineAfterMs) {
    status = 'offline';
    detail = { code: 'heartbeat_stale', age_s: Math.floor((now - input.lastSeenAt) / 1000), offline_after_s: Math.round(th.offlineAfterMs / 1000) };
  } else if (input.healthy === false) {
    status = 'offline';
    detail = { code: 'unhealthy', health };
  } else {
    status = 'online';
    detail = { code: 'healthy', health };
  }
  return { status, reason: describeStatus(detail, input.healthReason), detail };
}

/** How often the service re-evaluates every gateway (ms). */
export function tickInterval(th: Thresholds): number {
  return Math.min(10_000, Math.max(1_000, Math.floor(th.offlineAfterMs / 6)));
}
