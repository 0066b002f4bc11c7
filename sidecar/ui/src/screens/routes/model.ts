// The route object of the API (GET /routes/:id; field names as in sidecar/src/routes/schema.ts) and
// what the screens derive from it.
export interface MirrorTarget { url?: string; peer_id?: number; port?: number }
export interface Route {
  id: number;
  domain: string;
  description: string | null;
  /** the RDP route that owns this route (gateway-mode linked L4 route): edited there only */
  rdp_route_id: number | null;
  route_type: 'http' | 'l4';
  target_kind: 'peer' | 'gateway';
  enabled: boolean;
  peer_id: number | null;
  target_port: string | null;
  target_peer_id: number | null;
  target_lan_host: string | null;
  target_lan_port: number | null;
  wol_enabled: boolean;
  wol_mac: string | null;
  l4_protocol: 'tcp' | 'udp' | null;
  l4_listen_port: number | null;
  l4_tls_mode: 'none' | 'passthrough' | 'terminate' | null;
  https_enabled: boolean;
  backend_https: boolean;
  compress_enabled: boolean;
  bot_blocker_enabled: boolean;
  bot_blocker_mode: 'block' | 'log' | 'tarpit' | null;
  bot_blocker_config: Record<string, any> | null;
  monitoring_enabled: boolean;
  ip_filter_enabled: boolean;
  ip_filter_mode: 'whitelist' | 'blacklist' | null;
  ip_filter_rules: string[];
  acl_enabled: boolean;
  acl_peer_ids: number[];
  rate_limit_enabled: boolean;
  rate_limit_requests: number | null;
  rate_limit_window: string | null;
  retry_enabled: boolean;
  retry_count: number | null;
  retry_status_codes: string | null;
  circuit_breaker_enabled: boolean;
  circuit_breaker_threshold: number | null;
  circuit_breaker_timeout: number | null;
  cb_failure_count: number;
  cb_opened_at: number | null;
  mirror_enabled: boolean;
  mirror_targets: MirrorTarget[];
  debug_enabled: boolean;
  basic_auth_user: string | null;
  basic_auth_password_set: boolean;
  user_ids: number[];
  created_at: string;
  updated_at: string;
}

export interface WizardPeer { id: number; name: string; peer_type: 'regular' | 'gateway'; ip: string; isOnline: boolean; enabled: number }

export interface Check { route_id: number; checked_at: string; up: boolean; status: number | null; response_ms: number | null; error: string | null }

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

export const ROUTE_EVENTS = ['route_created', 'route_updated', 'route_enabled', 'route_disabled', 'route_deleted', 'routes_batch', 'route_up', 'route_down', 'circuit_open', 'circuit_closed', 'route_auth_created', 'route_auth_deleted'];
