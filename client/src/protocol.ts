// The shapes of the desktop client API the client reads and sends.
// TODO(clientcli): replaced by type imports of sidecar/src/client-api/schema.ts once it lands.
export interface RegisterInput {
  hostname: string;
  platform: string;
  client_version: string;
}
export interface PingResponse {
  ok: true;
  version: string;
  api: 'v1';
  server_time: number;
  registered: boolean;
}
export type PermissionsResponse = Record<string, unknown> & { ok: true };
export interface RegisterResponse {
  ok: true;
  created: boolean;
  machine: { id: number; peer_id: number | null; hostname: string } & Record<string, unknown>;
  peer: { id: number; name: string; address: string; enabled: boolean };
  config_hash: string;
}
export interface ConfigResponse {
  ok: true;
  peer_id: number;
  filename: string;
  config: string;
  config_hash: string;
  allowed_ips: string[];
}
export interface ConfigCheckResponse {
  ok: true;
  changed: true;
  config_hash: string;
}
export interface HeartbeatInput {
  handshake_age_s: number | null;
  rx_bytes: number;
  tx_bytes: number;
  hostname?: string;
}
export interface HeartbeatResponse {
  ok: true;
  config_hash: string;
  server_time: number;
}
export interface HostnameReportResponse {
  ok: true;
  applied: boolean;
  reason?: string;
  hostname: string | null;
  hostname_source: 'admin' | 'agent' | null;
  fqdn: string | null;
}
export interface ServicesResponse {
  ok: true;
  peer_id: number | null;
  services: Array<{ route_id: number; name: string; description: string | null; route_type: 'http' | 'l4'; protocol: string; url: string | null; host: string; port: number | null; access: string; requires_login: boolean }>;
}

// ---- RDP (sidecar/src/rdp/client-endpoints.ts)
export interface MaintenanceWindow {
  from: string;
  to: string;
  note: string;
}
export interface ClientRdpRoute {
  id: number;
  name: string;
  description: string | null;
  access_mode: 'internal' | 'external' | 'both' | 'gateway';
  has_credentials: boolean;
  rotation_pending: boolean;
  maintenance: MaintenanceWindow | null;
  upcoming_maintenance: MaintenanceWindow[];
  wol_enabled: boolean;
  network_level_auth: boolean;
  resolution: string | null;
  color_depth: number;
  audio_mode: 'local' | 'remote' | 'off';
  clipboard_enabled: boolean;
}
export interface ClientRdpListResponse {
  ok: true;
  routes: ClientRdpRoute[];
}
export interface ConnectAddress {
  host: string;
  port: number;
  mode: 'internal' | 'external' | 'gateway';
}
export interface ClientRdpConnectResponse {
  ok: true;
  rdp_route_id: number;
  name: string;
  access_mode: ClientRdpRoute['access_mode'];
  address: ConnectAddress;
  candidates: Array<ConnectAddress & { rdp_file: string }>;
  rdp_file: string;
  credentials: unknown;
  kid: string;
  credentials_updated_at: string | null;
  session: { path: string; heartbeat_interval_s: number; lost_after_s: number };
}
type EndReason = 'client' | 'lost' | 'disconnected' | 'route_disabled' | 'route_deleted';
export interface ClientRdpSessionResponse {
  ok: true;
  session: { id: number; rdp_route_id: number; status: 'active' | 'ended'; started_at: number; last_heartbeat_at: number; ended_at: number | null; end_reason: EndReason | null; duration_s: number };
}
export interface ClientRdpHeartbeatResponse {
  ok: true;
  session_id: number;
  disconnect: boolean;
  reason: EndReason | null;
  message: string | null;
  status: 'active' | 'ended';
  lost_after_s: number;
}
