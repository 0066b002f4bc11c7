// A gateway's status reason as data (GatewayView.status_detail): types only, shared by the sidecar,
// which derives it (sidecar/src/gateways/state.ts), and the admin app, which words it per language.

/**
 * Why a heartbeat is healthy or not, as data: the admin UI words it in the reader's language, the
 * English `reason` strings (activity log, API) are made from it by describeHealth().
 */
export type HealthDetail =
  | { code: 'lan_reachable'; up: number; total: number }
  | { code: 'lan_unreachable'; total: number }
  | { code: 'self_check_passed' }
  | { code: 'self_check_failed'; failed: SelfCheckPart[] };
export type SelfCheckPart = 'http_proxy' | 'api' | 'dns' | 'tcp_listeners';

/** Why a gateway has its status, as data (GatewayView.status_detail); describeStatus() words it in English (sidecar/src/gateways/state.ts). */
export type StatusDetail =
  | { code: 'no_tokens' }
  | { code: 'no_heartbeat' }
  | { code: 'heartbeat_stale'; age_s: number; offline_after_s: number }
  /** a fresh heartbeat that says the gateway cannot serve; health null when the stored verdict predates status_detail */
  | { code: 'unhealthy'; health: HealthDetail | null }
  | { code: 'healthy'; health: HealthDetail | null };
