// The RDP route object of the API (rdpRouteView in sidecar/src/rdp/schema.ts; the field names of the
// SESSION7 data contract) and what the screens derive from it.
export type AccessMode = 'internal' | 'external' | 'both' | 'gateway';
export const ACCESS_MODES: AccessMode[] = ['internal', 'external', 'both', 'gateway'];
export interface MaintenanceWindow { from: string; to: string; note: string }

export interface RdpRoute {
  id: number;
  name: string;
  description: string | null;
  enabled: boolean;
  access_mode: AccessMode;
  target_host: string | null;
  target_port: number;
  target_peer_id: number | null;
  external_host: string | null;
  listen_port: number | null;
  gateway_peer_id: number | null;
  gateway_listen_port: number | null;
  gateway_host: string | null;
  gateway_port: number | null;
  has_credentials: boolean;
  credentials_updated_at: string | null;
  credentials_kid: string | null;
  rotation_state: 'none' | 'pending';
  rotation_pending_since: string | null;
  wol_enabled: boolean;
  wol_mac: string | null;
  network_level_auth: boolean;
  audio_mode: 'local' | 'remote' | 'off';
  clipboard_enabled: boolean;
  resolution: string | null;
  color_depth: 15 | 16 | 24 | 32;
  maintenance_windows: MaintenanceWindow[];
  allowed_user_ids: number[] | null;
  gateway_l4_route_id: number | null;
  created_at: string;
  updated_at: string;
}

/** One path's TCP check (internal: from the server through the tunnel; external; gateway: the companion's report). */
export interface PathCheck { path: 'internal' | 'external' | 'gateway'; host: string | null; port: number | null; reachable: boolean; latency_ms: number | null; error: string | null }
/** One route's reachability (rdpops' RdpRouteStatus, sidecar/src/rdp/status.ts). */
export interface RdpStatus {
  rdp_route_id: number;
  enabled: boolean;
  reachable: boolean;
  latency_ms: number | null;
  /** epoch ms */
  checked_at: number | string | null;
  paths: PathCheck[];
  gateway: { name: string; status: 'online' | 'offline' | 'unknown'; status_reason: string } | null;
  maintenance: MaintenanceWindow | null;
  error: string | null;
}

export const RDP_EVENTS = ['rdp_route_created', 'rdp_route_updated', 'rdp_route_deleted', 'rdp_route_toggled'];
export const RDP_STATUS_EVENTS = ['rdp_status_changed'];
export const RDP_SESSION_EVENTS = ['rdp_session_started', 'rdp_session_ended'];

/** The window in force at `now`, if any. */
export function activeWindow(windows: MaintenanceWindow[], now = Date.now()): MaintenanceWindow | null {
  return windows.find((w) => Date.parse(w.from) <= now && now < Date.parse(w.to)) ?? null;
}

