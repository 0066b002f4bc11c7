// The Peer JSON of the API, built from a database row.
import type { PeerRow } from './model.js';
import { isoOrNull as iso } from '../util/dates.js';
import { asBool } from '../db/define.js';
import type { PeerView } from './schema.js';
import { isFullTunnel, parseClientAllowedIps } from './cidr.js';
import { parseSpeedLimit } from '../shaping/schema.js';
import { accessStateOf, isOpenAt, parseSchedule } from '../access-windows/schedule.js';
import { parseQuota, QUOTA_VIEW_ATTRS, quotaStateOf } from '../quotas/schema.js';

/** A peer counts as online when its latest handshake is at most this old (WireGuard re-handshakes every 2 minutes while traffic flows; 180 s leaves room for one missed rekey). */
export const ONLINE_WINDOW_MS = 180_000;

/** The columns the Peer JSON is built from (never the sealed keys or raw counters). */
export const VIEW_ATTRS = [
  'id',
  'name',
  'description',
  'peer_type',
  'enabled',
  'public_key',
  'address',
  'allowed_ips',
  'dns',
  'persistent_keepalive',
  'tags',
  'group_id',
  'hostname',
  'hostname_source',
  'expires_at',
  'api_port',
  'total_rx',
  'total_tx',
  'latest_handshake',
  'endpoint',
  'config_endpoint',
  'client_allowed_ips',
  'config_client_allowed_ips',
  'speed_limit',
  'access_schedule',
  ...QUOTA_VIEW_ATTRS,
  'created_at',
  'updated_at',
] as const;
/** A peer row with the columns the Peer JSON is built from. */
export type PeerViewRow = Pick<PeerRow, (typeof VIEW_ATTRS)[number]>;

const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

export function isExpired(row: Pick<PeerRow, 'expires_at'>, now: number): boolean {
  return row.expires_at !== null && row.expires_at !== undefined && Number(row.expires_at) <= now;
}

/**
 * Whether the peer belongs on the interface: enabled, not expired and inside its access window (a
 * row read without access_schedule counts as open).
 */
export function isActive(row: Pick<PeerRow, 'enabled' | 'expires_at'> & { access_schedule?: string | null }, now: number): boolean {
  return asBool(row.enabled) && !isExpired(row, now) && isOpenAt(parseSchedule(row.access_schedule), now);
}

export function isOnline(row: Pick<PeerRow, 'enabled' | 'expires_at' | 'latest_handshake'>, now: number): boolean {
  const hs = num(row.latest_handshake);
  return isActive(row, now) && hs !== null && hs > 0 && now - hs <= ONLINE_WINDOW_MS;
}

/** The API's hostname_source: `admin` while an admin hostname holds the peer, otherwise `agent` (also with no hostname). */
export function hostnameSource(r: Pick<PeerRow, 'hostname' | 'hostname_source'>): 'admin' | 'agent' {
  return r.hostname && r.hostname_source === 'admin' ? 'admin' : 'agent';
}

/**
 * `serverEndpoint`: what peers dial now (WireGuardService.endpoint). A peer whose last handed-out
 * config carries another endpoint has config_outdated (db/migrations/064_peer_config_endpoint.ts),
 * and so has one whose config was made before its client_allowed_ips changed (070).
 */
export function toPeerView(r: PeerViewRow, now: number, serverEndpoint: string): PeerView {
  const hs = num(r.latest_handshake);
  const client = parseClientAllowedIps(r.client_allowed_ips);
  return {
    id: r.id,
    name: r.name,
    description: r.description ?? null,
    peer_type: r.peer_type === 'gateway' ? 'gateway' : 'regular',
    is_gateway: r.peer_type === 'gateway',
    enabled: asBool(r.enabled) ? 1 : 0,
    allowed_ips: r.allowed_ips,
    client_allowed_ips: client,
    full_tunnel: isFullTunnel(client),
    address: r.address,
    public_key: r.public_key,
    dns: r.dns ?? null,
    persistent_keepalive: num(r.persistent_keepalive),
    tags: r.tags ?? '',
    group_id: num(r.group_id),
    hostname: r.hostname ?? null,
    hostname_source: hostnameSource(r),
    expires_at: iso(r.expires_at),
    expired: isExpired(r, now),
    api_port: num(r.api_port),
    total_rx: Number(r.total_rx ?? 0),
    total_tx: Number(r.total_tx ?? 0),
    latestHandshake: hs && hs > 0 ? hs : null,
    isOnline: isOnline(r, now),
    endpoint: r.endpoint ?? null,
    config_endpoint: r.config_endpoint ?? null,
    access_schedule: parseSchedule(r.access_schedule),
    access_state: accessStateOf(parseSchedule(r.access_schedule), now),
    config_outdated: !!r.config_endpoint && (r.config_endpoint !== serverEndpoint || (r.config_client_allowed_ips || null) !== (r.client_allowed_ips || null)),
    speed_limit: parseSpeedLimit(r.speed_limit),
    quota: parseQuota(r.quota),
    quota_state: quotaStateOf(r),
    created_at: iso(r.created_at)!,
    updated_at: iso(r.updated_at)!,
  };
}
